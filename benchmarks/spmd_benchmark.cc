// SPMD-partitioned programs on emulated cores against the unpartitioned program on one device: a two-layer MLP
// y = relu(x @ w1) @ w2 with x f32[256,1024], w1 f32[1024,4096], w2 f32[4096,1024] (4.3 GFLOP per step).
//
//   spmd/data_parallel_mlp/1dev     the module run unpartitioned on one device (its shardings ignored)
//   spmd/data_parallel_mlp/8cores   x and y sharded on the batch over 8 partitions, weights replicated
//   spmd/megatron_mlp/8cores        w1 column-sharded, w2 row-sharded (the hidden activation stays sharded), x and y
//                                   replicated: one all-reduce of y's partial sums per step
//
// Partitioning is what xla-run and the JIT API do (sharding-propagation, spmd-partitioner, verify; the global
// arguments split with spmd::ShardLiteral). Every emulated core is one thread; the unpartitioned program on one
// device runs its GEMMs on all C CPUs (JitOptions::threads), and 8 cores on C <= 8 CPUs get one thread each, so the
// partitioned programs measure the partitioning's overhead rather than a speedup.
//
// JitExecutable::RunPerDevice copies every argument into fresh device buffers (with replicated weights, 32 MiB per
// core), which would hide the computation; so the MLP runs inside a while loop and each program is compiled at two
// trip counts: the benchmark's time is (time at 1 + kExtraTrips trips - time at 1 trip) / kExtraTrips, the time per
// step on the devices. Counters:
//   best_ms                     the fastest step (the time is the mean; on a busy machine the best is steadier)
//   cpu_ms                      CPU time per step summed over all threads (work, whatever the machine's load)
//   run_ms                      one whole RunPerDevice of the 1-trip program (one step plus argument/result copies)
//   shard_ms                    splitting the global arguments into shards and assembling the result (host side)
//   collective_bytes_per_core   bytes each core sends in collectives per step (from the SpmdReport)
//   collectives                 collectives the partitioner inserted
//   GFLOPs                      2*B*D*H*2 per step / time per step, all cores together
// Not a test: run build/bin/spmd_benchmark by hand.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/jit.h"
#include "fmt/format.h"
#include "frontend/hlo/parser.h"
#include "ir/status_macros.h"
#include "passes/spmd/literal_sharding.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kBatch = 256, kModel = 1024, kHidden = 4096, kCores = 8;
constexpr int kExtraTrips = 8;

enum class Model { kDataParallel, kMegatron };

// The MLP `trips` times in a while loop over (i, x, w1, w2, y); nothing hoists the loop-invariant dots.
std::string MlpText(Model model, int trips) {
  std::string x_sharding, w1_sharding, w2_sharding;
  if (model == Model::kDataParallel) {
    x_sharding = fmt::format("{{devices=[{0},1]<=[{0}]}}", kCores);
    w1_sharding = w2_sharding = "{replicated}";
  } else {
    x_sharding = "{replicated}";
    w1_sharding = fmt::format("{{devices=[1,{0}]<=[{0}]}}", kCores);
    w2_sharding = fmt::format("{{devices=[{0},1]<=[{0}]}}", kCores);
  }
  return fmt::format(R"(
HloModule mlp, num_partitions={cores}

cond {{
  p = (s32[], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[{b},{d}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant({trips})
  ROOT lt = pred[] compare(i, n), direction=LT
}}

body {{
  p = (s32[], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[{b},{d}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[{b},{d}] get-tuple-element(p), index=1
  w1 = f32[{d},{h}] get-tuple-element(p), index=2
  w2 = f32[{h},{d}] get-tuple-element(p), index=3
  hidden = f32[{b},{h}] dot(x, w1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  zero = f32[] constant(0)
  zeros = f32[{b},{h}] broadcast(zero), dimensions={{}}
  relu = f32[{b},{h}] maximum(hidden, zeros)
  y = f32[{b},{d}] dot(relu, w2), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  ROOT t = (s32[], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[{b},{d}]) tuple(i1, x, w1, w2, y)
}}

ENTRY e {{
  x = f32[{b},{d}] parameter(0), sharding={xs}
  w1 = f32[{d},{h}] parameter(1), sharding={w1s}
  w2 = f32[{h},{d}] parameter(2), sharding={w2s}
  i0 = s32[] constant(0)
  z = f32[] constant(0)
  y0 = f32[{b},{d}] broadcast(z), dimensions={{}}
  t = (s32[], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[{b},{d}]) tuple(i0, x, w1, w2, y0)
  loop = (s32[], f32[{b},{d}], f32[{d},{h}], f32[{h},{d}], f32[{b},{d}]) while(t), condition=cond, body=body
  ROOT y = f32[{b},{d}] get-tuple-element(loop), index=4, sharding={xs}
}}
)",
                     fmt::arg("cores", kCores), fmt::arg("b", kBatch), fmt::arg("d", kModel), fmt::arg("h", kHidden),
                     fmt::arg("trips", trips), fmt::arg("xs", x_sharding), fmt::arg("w1s", w1_sharding),
                     fmt::arg("w2s", w2_sharding));
}

// A compiled program and its global arguments; partitioned programs also their per-device shards.
struct Program {
  std::unique_ptr<codegen::JitExecutable> exe;
  bool partitioned = false;
  SpmdReport report;
  Shape result_shape;                             // global
  std::vector<Literal> args;                      // global
  std::vector<std::vector<Literal>> device_args;  // one list per device, or {args}
};

absl::StatusOr<Program> Build(Model model, int trips, bool partition) {
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(MlpText(model, trips), "<spmd_benchmark>"));
  Program program;
  const Computation* entry = module->entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    program.args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), 100 + static_cast<uint64_t>(i)));
  }
  program.result_shape = entry->root()->shape();
  codegen::JitOptions options;
  options.num_partitions = 1;
  if (partition) {
    XLAC_RETURN_IF_ERROR(RunShardingPropagation(*module).status());
    XLAC_RETURN_IF_ERROR(RunSpmdPartitioner(*module, SpmdOptions{}, &program.report).status());
    DiagnosticEngine diags;
    if (!VerifyModule(*module, diags)) return absl::InternalError("the partitioned module does not verify");
    program.partitioned = true;
    options.num_partitions = kCores;
  }
  XLAC_ASSIGN_OR_RETURN(program.exe, codegen::JitExecutable::Compile(*module, options));
  if (!partition) {
    program.device_args.push_back(program.args);
    return program;
  }
  for (int64_t p = 0; p < kCores; ++p) {
    std::vector<Literal> shards;
    for (size_t i = 0; i < program.args.size(); ++i) {
      XLAC_ASSIGN_OR_RETURN(Literal shard,
                            spmd::ShardLiteral(program.args[i], program.report.parameter_shardings[i], p, kCores));
      shards.push_back(std::move(shard));
    }
    program.device_args.push_back(std::move(shards));
  }
  return program;
}

// CPU seconds of the whole process so far, every thread (device threads included).
double ProcessCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timing {
  double wall = -1, cpu = 0;  // seconds; wall < 0 on error
};

// One RunPerDevice.
Timing RunOnce(Program& program) {
  Clock::time_point start = Clock::now();
  const double cpu_start = ProcessCpuSeconds();
  absl::StatusOr<std::vector<Literal>> result = program.exe->RunPerDevice(program.device_args);
  Timing timing;
  timing.cpu = ProcessCpuSeconds() - cpu_start;
  timing.wall = std::chrono::duration<double>(Clock::now() - start).count();
  if (!result.ok()) timing.wall = -1;
  benchmark::DoNotOptimize(result);
  return timing;
}

// Seconds to shard the global arguments and assemble a result from the shards, the host side of a partitioned
// Run in the JIT API (0 unpartitioned).
double ShardAndAssemble(Program& program) {
  if (!program.partitioned) return 0;
  absl::StatusOr<std::vector<Literal>> shards = program.exe->RunPerDevice(program.device_args);
  if (!shards.ok()) return -1;
  double best = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    Clock::time_point start = Clock::now();
    for (int64_t p = 0; p < kCores; ++p) {
      for (size_t i = 0; i < program.args.size(); ++i) {
        absl::StatusOr<Literal> shard =
            spmd::ShardLiteral(program.args[i], program.report.parameter_shardings[i], p, kCores);
        benchmark::DoNotOptimize(shard);
      }
    }
    std::vector<const Literal*> parts;
    for (const Literal& s : *shards) parts.push_back(&s);
    absl::StatusOr<Literal> global = spmd::AssembleLiteral(parts, program.report.result_sharding, program.result_shape);
    if (!global.ok()) return -1;
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

void BM_Mlp(benchmark::State& state, Model model, bool partition) {
  absl::StatusOr<Program> one = Build(model, 1, partition);
  absl::StatusOr<Program> more = Build(model, 1 + kExtraTrips, partition);
  if (!one.ok() || !more.ok()) {
    state.SkipWithError((one.ok() ? more.status() : one.status()).ToString().c_str());
    return;
  }
  double base = 1e30, base_cpu = 1e30;
  for (int rep = 0; rep < 3; ++rep) {
    Timing t = RunOnce(*one);
    if (t.wall < 0) {
      state.SkipWithError("the 1-trip program failed");
      return;
    }
    base = std::min(base, t.wall);
    base_cpu = std::min(base_cpu, t.cpu);
  }
  double total_step = 0, best_step = 1e30, total_cpu = 0;
  int64_t steps = 0;
  for (auto _ : state) {
    Timing t = RunOnce(*more);
    if (t.wall < 0) {
      state.SkipWithError("the program failed");
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
  for (const SpmdReport::Collective& c : one->report.collectives) bytes += c.bytes_per_core;
  const double flops = 2.0 * 2.0 * kBatch * kModel * kHidden;
  state.counters["best_ms"] = steps > 0 ? best_step * 1e3 : 0;
  state.counters["cpu_ms"] = steps > 0 ? total_cpu / static_cast<double>(steps) * 1e3 : 0;
  state.counters["run_ms"] = base * 1e3;
  state.counters["shard_ms"] = ShardAndAssemble(*one) * 1e3;
  state.counters["collective_bytes_per_core"] = static_cast<double>(bytes);
  state.counters["collectives"] = static_cast<double>(one->report.collectives.size());
  state.counters["GFLOPs"] = steps > 0 ? flops * 1e-9 / (total_step / static_cast<double>(steps)) : 0;
}

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  using xlac::Model;
  struct Case {
    const char* name;
    Model model;
    bool partition;
  };
  for (const Case& c : {Case{"spmd/data_parallel_mlp/1dev", Model::kDataParallel, false},
                        Case{"spmd/data_parallel_mlp/8cores", Model::kDataParallel, true},
                        Case{"spmd/megatron_mlp/8cores", Model::kMegatron, true}}) {
    benchmark::RegisterBenchmark(c.name, [c](benchmark::State& state) { xlac::BM_Mlp(state, c.model, c.partition); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
