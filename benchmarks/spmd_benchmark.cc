// The emulated pod's overhead: an MLP train step partitioned (SPMD) over emulated cores against the same program
// unpartitioned, on the same host threads. The step is y = relu(x @ w1) @ w2, the mean squared error against t, its
// gradients and an SGD update of w1 and w2 (10*B*D*H FLOP), run `trips` times in a while loop (the trip count is a
// parameter, so one compiled program serves every trip count):
//
//   spmd/train_B1024_D512_H2048/1dev        the module unpartitioned (its shardings ignored): the baseline of
//   spmd/train_B1024_D512_H2048/dp8         data parallel on 8 cores: x, t and every activation sharded on the batch,
//                                           weights replicated (an all-reduce per weight gradient and one for the loss)
//   spmd/train_B1024_D512_H2048/megatron4   Megatron on 4 cores: w1 column-, w2 row-sharded, the hidden activations
//                                           sharded on H, x, t and y replicated (an all-reduce of y per step)
//   spmd/train_B32768_D64_H256/1dev         the baseline of
//   spmd/train_B32768_D64_H256/fsdp8        FSDP on 8 cores (its compile time is the yardstick of the pod's)
//   spmd/train_B32768_D64_H256/fsdp256      FSDP on a v5e 16x16 pod's 256 cores: the batch and both weights sharded
//                                           over 256 (each weight on its largest dimension), the weights all-gathered
//                                           before each use and the weight gradients reduce-scattered
//
// Every case goes through the compile pipeline every front door uses (compiler.h: LoadModule, PartitionModule,
// then codegen::JitExecutable::Compile with CompileOptions::partitioned) and the argument sharding of xla-run and
// the JIT API (spmd::ShardLiteral). All cases run on the same host threads: JitOptions::threads = the process's CPUs
// (the unpartitioned program's parallel loops use them all; D devices get max(1, threads / D) each).
//
// The time of a step is (time at 1 + kExtraTrips trips - time at 1 trip) / kExtraTrips: what the devices spend per
// step, without the copies of arguments and results around a run. Counters:
//   best_ms        the fastest step (the time is the mean; on a busy machine the best is steadier)
//   cpu_ms         CPU time per step summed over all threads (work, whatever the machine's load)
//   run_ms         one whole RunPerDevice at 1 trip (one step plus argument and result copies)
//   run_faults     minor page faults in such a run after the first (pages the run touches for the first time)
//   compile_ms     LoadModule + PartitionModule + JitExecutable::Compile (no compilation cache)
//   partition_ms   the PartitionModule part of it (optimization before partitioning, propagation, partitioner)
//   peak_rss_mb    the process's peak resident memory during the case (reset before it: /proc/self/clear_refs)
//   case_rss_mb    the same minus the resident memory before the case (what the case itself added)
//   os_threads     the process's threads seen during the run (sampled): device threads plus pool workers
//   rel_diff       max |partitioned - unpartitioned| / max |unpartitioned| over the 1-trip results (0 for 1dev)
//   collectives    collectives the partitioner inserted, collective_bytes_per_core what each core sends per step
// Not a test: run build/bin/spmd_benchmark by hand (--benchmark_filter=dp8 and so on).
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/jit.h"
#include "compiler/compiler.h"
#include "fmt/format.h"
#include "ir/status_macros.h"
#include "passes/spmd/literal_sharding.h"
#include "runtime/cpu/xlac_runtime.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kExtraTrips = 4;

enum class Plan { kUnpartitioned, kDataParallel, kMegatron, kFsdp };

struct Dims {
  int64_t batch, model, hidden;
};

// The shardings of the plan's values on `cores` partitions. Activations are annotated like JAX's
// with_sharding_constraint, so that the partitioner implements the plan rather than whatever propagation prefers.
struct Shardings {
  std::string bd, bh, w1, w2, w1_use, w2_use;  // [B,D] and [B,H] activations, weights, weights where a dot reads them
};

Shardings ShardingsFor(Plan plan, int64_t cores, Dims dims) {
  const std::string rows = fmt::format("{{devices=[{0},1]<=[{0}]}}", cores);
  const std::string cols = fmt::format("{{devices=[1,{0}]<=[{0}]}}", cores);
  const std::string replicated = "{replicated}";
  switch (plan) {
    case Plan::kUnpartitioned:
      return {replicated, replicated, replicated, replicated, replicated, replicated};
    case Plan::kDataParallel:
      return {rows, rows, replicated, replicated, replicated, replicated};
    case Plan::kMegatron:
      return {replicated, cols, cols, rows, cols, rows};
    case Plan::kFsdp:
      // compiler/auto_shard.cc's fsdp plan: each weight on its largest dimension, gathered where it is used.
      return {rows,       rows,      dims.hidden >= dims.model ? cols : rows, dims.hidden >= dims.model ? rows : cols,
              replicated, replicated};
  }
  return {};
}

std::string TrainStepText(Plan plan, int64_t cores, Dims dims) {
  const Shardings s = ShardingsFor(plan, cores, dims);
  const double scale = 1.0 / static_cast<double>(dims.batch * dims.model);
  return fmt::format(R"(
HloModule mlp_train, num_partitions={cores}

add {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}}

cond {{
  p = (s32[], s32[], f32[{b},{d}], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  ROOT lt = pred[] compare(i, n), direction=LT
}}

body {{
  p = (s32[], s32[], f32[{b},{d}], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] get-tuple-element(p), index=1
  x = f32[{b},{d}] get-tuple-element(p), index=2, sharding={bd}
  t = f32[{b},{d}] get-tuple-element(p), index=3, sharding={bd}
  w1 = f32[{d},{h}] get-tuple-element(p), index=4, sharding={w1}
  w2 = f32[{h},{d}] get-tuple-element(p), index=5, sharding={w2}
  w1.use = f32[{d},{h}] copy(w1), sharding={w1u}
  w2.use = f32[{h},{d}] copy(w2), sharding={w2u}
  h = f32[{b},{h}] dot(x, w1.use), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, sharding={bh}
  zero = f32[] constant(0)
  zeros = f32[{b},{h}] broadcast(zero), dimensions={{}}
  r = f32[{b},{h}] maximum(h, zeros), sharding={bh}
  y = f32[{b},{d}] dot(r, w2.use), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, sharding={bd}
  diff = f32[{b},{d}] subtract(y, t), sharding={bd}
  sq = f32[{b},{d}] multiply(diff, diff), sharding={bd}
  sum = f32[] reduce(sq, zero), dimensions={{0,1}}, to_apply=add
  inv = f32[] constant({scale})
  loss = f32[] multiply(sum, inv), sharding={{replicated}}
  two = f32[] constant({scale2})
  twos = f32[{b},{d}] broadcast(two), dimensions={{}}
  dy = f32[{b},{d}] multiply(diff, twos), sharding={bd}
  dw2 = f32[{h},{d}] dot(r, dy), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}, sharding={w2}
  dr = f32[{b},{h}] dot(dy, w2.use), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}, sharding={bh}
  pos = pred[{b},{h}] compare(h, zeros), direction=GT, sharding={bh}
  dh = f32[{b},{h}] select(pos, dr, zeros), sharding={bh}
  dw1 = f32[{d},{h}] dot(x, dh), lhs_contracting_dims={{0}}, rhs_contracting_dims={{0}}, sharding={w1}
  lr = f32[] constant(0.001)
  lr1 = f32[{d},{h}] broadcast(lr), dimensions={{}}
  step1 = f32[{d},{h}] multiply(lr1, dw1), sharding={w1}
  w1.new = f32[{d},{h}] subtract(w1, step1), sharding={w1}
  lr2 = f32[{h},{d}] broadcast(lr), dimensions={{}}
  step2 = f32[{h},{d}] multiply(lr2, dw2), sharding={w2}
  w2.new = f32[{h},{d}] subtract(w2, step2), sharding={w2}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT next = (s32[], s32[], f32[{b},{d}], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[]) tuple(i1, n, x, t, w1.new, w2.new, loss)
}}

ENTRY train {{
  x = f32[{b},{d}] parameter(0), sharding={bd}
  t = f32[{b},{d}] parameter(1), sharding={bd}
  w1 = f32[{d},{h}] parameter(2), sharding={w1}
  w2 = f32[{h},{d}] parameter(3), sharding={w2}
  trips = s32[] parameter(4), sharding={{replicated}}
  i0 = s32[] constant(0)
  loss0 = f32[] constant(0)
  init = (s32[], s32[], f32[{b},{d}], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[]) tuple(i0, trips, x, t, w1, w2, loss0)
  loop = (s32[], s32[], f32[{b},{d}], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[]) while(init), condition=cond, body=body
  loss = f32[] get-tuple-element(loop), index=6, sharding={{replicated}}
  w1.out = f32[{d},{h}] get-tuple-element(loop), index=4, sharding={w1}
  w2.out = f32[{h},{d}] get-tuple-element(loop), index=5, sharding={w2}
  ROOT out = (f32[], f32[{d},{h}], f32[{h},{d}]) tuple(loss, w1.out, w2.out), sharding={{{{replicated}}, {w1}, {w2}}}
}}
)",
                     fmt::arg("cores", cores), fmt::arg("b", dims.batch), fmt::arg("d", dims.model),
                     fmt::arg("h", dims.hidden), fmt::arg("scale", scale), fmt::arg("scale2", 2 * scale),
                     fmt::arg("bd", s.bd), fmt::arg("bh", s.bh), fmt::arg("w1", s.w1), fmt::arg("w2", s.w2),
                     fmt::arg("w1u", s.w1_use), fmt::arg("w2u", s.w2_use));
}

// A compiled program and its arguments (per device when partitioned).
struct Program {
  std::unique_ptr<codegen::JitExecutable> exe;
  bool partitioned = false;
  int64_t cores = 1;
  SpmdReport report;
  Shape result_shape;                             // global
  std::vector<std::vector<Literal>> device_args;  // one list per device
  double compile_seconds = 0, partition_seconds = 0;
};

double Since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

int HostThreads() { return xlac_rt_available_cpus(); }

// Inputs, targets and weights: uniform in [-1, 1), weights scaled by 1/sqrt(fan-in) so that activations and
// gradients stay of order 1 over the trips.
std::vector<Literal> GlobalArguments(const Module& module) {
  const Computation* entry = module.entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    const Shape& shape = entry->parameter(i)->shape();
    Literal arg = interp::MakeRandomLiteral(shape, 100 + static_cast<uint64_t>(i));
    if (i == 2 || i == 3) {
      const float scale = 1.0f / std::sqrt(static_cast<float>(shape.dimensions[0]));
      for (int64_t k = 0; k < arg.element_count(); ++k) arg.Set<float>(k, arg.Get<float>(k) * scale);
    }
    args.push_back(std::move(arg));
  }
  return args;
}

absl::StatusOr<Program> Build(Plan plan, int64_t cores, Dims dims) {
  const std::string text = TrainStepText(plan, cores, dims);
  Clock::time_point start = Clock::now();
  SourceFile file("<spmd_benchmark>", text);
  CompilerOptions compiler;
  compiler.num_partitions = plan == Plan::kUnpartitioned ? 1 : cores;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags);
  if (module == nullptr) return absl::InvalidArgumentError(diags.Render(file));
  Program program;
  program.cores = compiler.num_partitions;
  std::vector<Literal> args = GlobalArguments(*module);
  args[4].Set<int32_t>(0, 1);
  program.result_shape = module->entry_computation()->root()->shape();
  program.result_shape.ClearLayout();
  Clock::time_point partition_start = Clock::now();
  absl::StatusOr<bool> partitioned = PartitionModule(*module, compiler, program.report, diags);
  if (!partitioned.ok()) return absl::Status(partitioned.status().code(), diags.Render(file));
  program.partition_seconds = Since(partition_start);
  program.partitioned = *partitioned;
  codegen::JitOptions options;
  options.compile.partitioned = program.partitioned;
  options.num_partitions = program.cores;
  options.threads = HostThreads();
  XLAC_ASSIGN_OR_RETURN(program.exe, codegen::JitExecutable::Compile(*module, options));
  program.compile_seconds = Since(start);
  if (!program.partitioned) {
    program.device_args.push_back(std::move(args));
    return program;
  }
  for (int64_t p = 0; p < program.cores; ++p) {
    std::vector<Literal> shards;
    for (size_t i = 0; i < args.size(); ++i) {
      XLAC_ASSIGN_OR_RETURN(Literal shard,
                            spmd::ShardLiteral(args[i], program.report.parameter_shardings[i], p, program.cores));
      shards.push_back(std::move(shard));
    }
    program.device_args.push_back(std::move(shards));
  }
  return program;
}

void SetTrips(Program& program, int32_t trips) {
  for (std::vector<Literal>& args : program.device_args) args.back().Set<int32_t>(0, trips);
}

// CPU seconds of the whole process so far, every thread (device threads included).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A field of /proc/self/status in kB ("VmHWM", "VmRSS", "Threads"), -1 if absent.
int64_t ProcStatus(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoll(line.substr(field.size() + 1));
  }
  return -1;
}

// Resets the peak RSS (VmHWM) to the current RSS (Linux's clear_refs "5").
void ResetPeakRss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Samples the process's thread count while a run is on.
class ThreadSampler {
 public:
  ThreadSampler()
      : thread_([this] {
          while (!stop_.load()) {
            max_ = std::max<int64_t>(max_, ProcStatus("Threads"));
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
          }
        }) {}
  int64_t Stop() {
    stop_.store(true);
    thread_.join();
    return max_ - 1;  // not the sampler
  }

 private:
  std::atomic<bool> stop_{false};
  int64_t max_ = 0;
  std::thread thread_;
};

struct Timing {
  double wall = -1, cpu = 0;  // seconds; wall < 0 on error
  int64_t page_faults = 0;    // minor page faults of the process during the run
};

int64_t MinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

absl::StatusOr<std::vector<Literal>> RunOnce(Program& program, Timing& timing) {
  Clock::time_point start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  const int64_t faults_start = MinorFaults();
  absl::StatusOr<std::vector<Literal>> result = program.exe->RunPerDevice(program.device_args);
  timing.cpu = ProcessCpuSeconds() - cpu_start;
  timing.page_faults = MinorFaults() - faults_start;
  timing.wall = result.ok() ? Since(start) : -1;
  return result;
}

// The global result of a run.
absl::StatusOr<Literal> Assemble(const Program& program, const std::vector<Literal>& results) {
  if (!program.partitioned) return results.at(0);
  std::vector<const Literal*> parts;
  for (const Literal& r : results) parts.push_back(&r);
  return spmd::AssembleLiteral(parts, program.report.result_sharding, program.result_shape);
}

// max |a - b| / max |b| over every f32 leaf.
double RelativeDifference(const Literal& a, const Literal& b) {
  double diff = 0, norm = 0;
  std::vector<std::pair<const Literal*, const Literal*>> leaves{{&a, &b}};
  while (!leaves.empty()) {
    auto [x, y] = leaves.back();
    leaves.pop_back();
    if (x->is_tuple()) {
      for (size_t i = 0; i < x->tuple_elements().size(); ++i) {
        leaves.push_back({&x->tuple_elements()[i], &y->tuple_elements()[i]});
      }
      continue;
    }
    for (int64_t k = 0; k < y->element_count(); ++k) {
      diff = std::max(diff, std::abs(x->GetAsDouble(k) - y->GetAsDouble(k)));
      norm = std::max(norm, std::abs(y->GetAsDouble(k)));
    }
  }
  return norm > 0 ? diff / norm : diff;
}

// The unpartitioned 1-trip result per shape, for the partitioned cases to compare with.
std::map<std::string, Literal>& Baselines() {
  static auto* baselines = new std::map<std::string, Literal>;
  return *baselines;
}

void BM_Train(benchmark::State& state, Plan plan, int64_t cores, Dims dims) {
  const int64_t rss_before = ProcStatus("VmRSS");
  ResetPeakRss();
  absl::StatusOr<Program> built = Build(plan, cores, dims);
  if (!built.ok()) {
    state.SkipWithError(built.status().ToString().c_str());
    return;
  }
  Program& program = *built;
  SetTrips(program, 1);
  double base = 1e30, base_cpu = 1e30;
  int64_t run_faults = 0;  // the last 1-trip run's: the first run faults in every buffer
  double rel_diff = 0;
  int64_t os_threads = 0;
  for (int rep = 0; rep < 3; ++rep) {
    Timing t;
    ThreadSampler sampler;
    absl::StatusOr<std::vector<Literal>> results = RunOnce(program, t);
    os_threads = std::max(os_threads, sampler.Stop());
    if (!results.ok()) {
      state.SkipWithError(results.status().ToString().c_str());
      return;
    }
    base = std::min(base, t.wall);
    base_cpu = std::min(base_cpu, t.cpu);
    run_faults = t.page_faults;
    if (rep > 0) continue;
    absl::StatusOr<Literal> global = Assemble(program, *results);
    if (!global.ok()) {
      state.SkipWithError(global.status().ToString().c_str());
      return;
    }
    const std::string key = fmt::format("{}x{}x{}", dims.batch, dims.model, dims.hidden);
    if (!program.partitioned) {
      Baselines()[key] = *std::move(global);
    } else if (auto found = Baselines().find(key); found != Baselines().end()) {
      rel_diff = RelativeDifference(*global, found->second);
    } else {
      rel_diff = -1;  // the baseline was filtered out
    }
  }
  SetTrips(program, 1 + kExtraTrips);
  double total_step = 0, best_step = 1e30, total_cpu = 0;
  int64_t steps = 0;
  for (auto _ : state) {
    Timing t;
    absl::StatusOr<std::vector<Literal>> results = RunOnce(program, t);
    if (!results.ok()) {
      state.SkipWithError(results.status().ToString().c_str());
      return;
    }
    double step = std::max(t.wall - base, 1e-9) / kExtraTrips;
    state.SetIterationTime(step);
    total_step += step;
    best_step = std::min(best_step, step);
    total_cpu += (t.cpu - base_cpu) / kExtraTrips;
    ++steps;
  }
  int64_t bytes = 0;
  for (const SpmdReport::Collective& c : program.report.collectives) bytes += c.bytes_per_core;
  const int64_t peak = ProcStatus("VmHWM");
  const double flops = 10.0 * static_cast<double>(dims.batch * dims.model * dims.hidden);
  const double mean = steps > 0 ? total_step / static_cast<double>(steps) : 0;
  state.counters["best_ms"] = steps > 0 ? best_step * 1e3 : 0;
  state.counters["cpu_ms"] = steps > 0 ? total_cpu / static_cast<double>(steps) * 1e3 : 0;
  state.counters["run_ms"] = base * 1e3;
  state.counters["run_faults"] = static_cast<double>(run_faults);
  state.counters["compile_ms"] = program.compile_seconds * 1e3;
  state.counters["partition_ms"] = program.partition_seconds * 1e3;
  state.counters["peak_rss_mb"] = static_cast<double>(peak) / 1024;
  state.counters["case_rss_mb"] = static_cast<double>(peak - rss_before) / 1024;
  state.counters["os_threads"] = static_cast<double>(os_threads);
  state.counters["rel_diff"] = rel_diff;
  state.counters["collectives"] = static_cast<double>(program.report.collectives.size());
  state.counters["collective_bytes_per_core"] = static_cast<double>(bytes);
  state.counters["GFLOPs"] = mean > 0 ? flops * 1e-9 / mean : 0;
}

// ---- collectives between the threads of one process, against memcpy ----

enum class Collective { kAllReduce, kAllGather, kReduceScatter };

using DeviceBody = std::function<void(XlacRtDevice*, int64_t)>;

void RunBody(void* const* buffers, XlacRtDevice* dev) {
  (*static_cast<const DeviceBody*>(buffers[0]))(dev, xlac_rt_device_id(dev));
}

void AddF32(void* acc, const void* in, int64_t count, void*) {
  auto* a = static_cast<float*>(acc);
  const auto* b = static_cast<const float*>(in);
  for (int64_t i = 0; i < count; ++i) a[i] += b[i];
}

// One collective over `devices` devices of one process, `bytes` per device and call (the all-gather's shard, the
// all-reduce's array, the reduce-scatter's input), against the floor of the same run: each device copying the bytes
// the collective gives it (all-reduce: the array, all-gather: every shard, reduce-scatter: its chunk from every
// device) with memcpy. The devices run as JitExecutable runs them: on the process's CPUs (multiplexed when there are
// more devices than CPUs). vs_memcpy is the ratio of the two times: 1 would be memcpy speed.
void BM_Collective(benchmark::State& state, Collective kind, int64_t devices, int64_t bytes) {
  constexpr int kCalls = 20;
  XlacRtStatus status;
  XlacRtGroup* group = xlac_rt_group_create(1, devices, 60000, &status);
  if (group == nullptr) {
    state.SkipWithError(status.message);
    return;
  }
  xlac_rt_group_set_os_threads(group, HostThreads());
  const int64_t received = kind == Collective::kAllGather ? bytes * devices : bytes;
  std::vector<std::vector<float>> src(static_cast<size_t>(devices)), dst(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) {
    src[d].assign(static_cast<size_t>(bytes / 4), 1.0f + static_cast<float>(d));
    dst[d].assign(static_cast<size_t>(received / 4), 0.0f);
  }
  std::vector<int64_t> all(static_cast<size_t>(devices));
  for (int64_t d = 0; d < devices; ++d) all[d] = d;
  const DeviceBody collective = [&](XlacRtDevice* dev, int64_t d) {
    for (int call = 0; call < kCalls; ++call) {
      if (kind == Collective::kAllReduce) {
        xlac_rt_all_reduce(dev, 1, "all-reduce", all.data(), 1, devices, src[d].data(), dst[d].data(), bytes / 4, 4,
                           AddF32, nullptr);
      } else if (kind == Collective::kAllGather) {
        xlac_rt_all_gather(dev, 2, "all-gather", all.data(), 1, devices, src[d].data(), dst[d].data(), bytes);
      } else {
        xlac_rt_reduce_scatter(dev, 3, "reduce-scatter", all.data(), 1, devices, src[d].data(), dst[d].data(),
                               bytes / 4 / devices, 4, AddF32, nullptr);
      }
    }
  };
  // The floor: the same bytes copied from peers' sources, one barrier per call (the copies need nothing else).
  const DeviceBody copies = [&](XlacRtDevice* dev, int64_t d) {
    for (int call = 0; call < kCalls; ++call) {
      auto* out = reinterpret_cast<unsigned char*>(dst[d].data());
      if (kind == Collective::kAllGather) {
        for (int64_t p = 0; p < devices; ++p) std::memcpy(out + p * bytes, src[p].data(), static_cast<size_t>(bytes));
      } else if (kind == Collective::kAllReduce) {
        std::memcpy(out, src[(d + call) % devices].data(), static_cast<size_t>(bytes));
      } else {
        const int64_t chunk = bytes / devices;
        for (int64_t p = 0; p < devices; ++p) {
          std::memcpy(out, reinterpret_cast<const unsigned char*>(src[p].data()) + d * chunk,
                      static_cast<size_t>(chunk));
        }
      }
      xlac_rt_barrier(dev, 4, "barrier", all.data(), 1, devices);
    }
  };
  auto run = [&](const DeviceBody& body) {
    void* table[1] = {const_cast<DeviceBody*>(&body)};
    std::vector<void* const*> per_device(static_cast<size_t>(devices), table);
    Clock::time_point start = Clock::now();
    int code = xlac_rt_group_run(group, RunBody, per_device.data(), &status);
    return code == XLAC_RT_OK ? Since(start) / kCalls : -1.0;
  };
  run(collective);  // first touch of every buffer
  run(copies);
  double total = 0, floor_total = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    const double t = run(collective), floor = run(copies);
    if (t < 0 || floor < 0) {
      state.SkipWithError(status.message);
      break;
    }
    state.SetIterationTime(t);
    total += t;
    floor_total += floor;
    ++runs;
  }
  xlac_rt_group_destroy(group);
  if (runs == 0) return;
  state.counters["memcpy_ms"] = floor_total / static_cast<double>(runs) * 1e3;
  state.counters["vs_memcpy"] = total / floor_total;
  state.counters["received_MiB"] = static_cast<double>(received * devices) / (1 << 20);
}

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  using xlac::Dims;
  using xlac::Plan;
  struct Case {
    const char* name;
    Plan plan;
    int64_t cores;
    Dims dims;
  };
  const Dims small_batch{1024, 512, 2048}, pod{32768, 64, 256};
  for (const Case& c : {Case{"spmd/train_B1024_D512_H2048/1dev", Plan::kUnpartitioned, 1, small_batch},
                        Case{"spmd/train_B1024_D512_H2048/dp8", Plan::kDataParallel, 8, small_batch},
                        Case{"spmd/train_B1024_D512_H2048/megatron4", Plan::kMegatron, 4, small_batch},
                        Case{"spmd/train_B32768_D64_H256/1dev", Plan::kUnpartitioned, 1, pod},
                        Case{"spmd/train_B32768_D64_H256/fsdp8", Plan::kFsdp, 8, pod},
                        Case{"spmd/train_B32768_D64_H256/fsdp256", Plan::kFsdp, 256, pod}}) {
    benchmark::RegisterBenchmark(c.name,
                                 [c](benchmark::State& state) { xlac::BM_Train(state, c.plan, c.cores, c.dims); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  struct CollectiveCase {
    const char* name;
    xlac::Collective kind;
    int64_t devices, bytes;
  };
  for (const CollectiveCase& c :
       {CollectiveCase{"collective/all_reduce_4MiB/8", xlac::Collective::kAllReduce, 8, 4 << 20},
        CollectiveCase{"collective/all_gather_64KiB/256", xlac::Collective::kAllGather, 256, 256},
        CollectiveCase{"collective/reduce_scatter_64KiB/256", xlac::Collective::kReduceScatter, 256, 64 << 10},
        CollectiveCase{"collective/all_reduce_4B/256", xlac::Collective::kAllReduce, 256, 4}}) {
    benchmark::RegisterBenchmark(
        c.name, [c](benchmark::State& state) { xlac::BM_Collective(state, c.kind, c.devices, c.bytes); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
