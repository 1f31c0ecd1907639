// The peer workloads (/work/shared/peers/hlo, see its MANIFEST.md) through the public JIT API (xlac/jit.h), the
// way a user runs them: compile once, then Run on the same caller-owned buffers (random inputs, 64-byte aligned,
// result buffers allocated once; results aliased to a parameter by input_output_alias donate its buffer). One Google
// Benchmark per module. Counters:
//   compile_ms   Executable::Compile, wall time
//   median_ms    median Run time over the timed iterations (after --warmup runs), min_ms the fastest
//   flop         2*M*N*K of every dot plus 2 * output elements * window * input features of every convolution
//   bytes        minimal traffic: every parameter read once and every result written once
// scripts/bench turns these into GFLOP/s or GB/s and fractions of this machine's peaks.
//
//   peer_workloads_benchmark [--hlo_dir=DIR] [--runs=N] [--warmup=N] [--min_seconds=S] [--benchmark_filter=RE]
//                            [--benchmark_format=json]
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "frontend/module_input.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "xlac/jit.h"

namespace xlac {
namespace {

using Clock = std::chrono::steady_clock;

struct Settings {
  std::string hlo_dir = "/work/shared/peers/hlo";
  int runs = 10;             // timed runs at least
  int warmup = 2;            // untimed runs first (first-touch, caches)
  double min_seconds = 1.0;  // keep timing until this much time has passed (at most 200 runs)
};

struct Work {
  double flop = 0;
  double bytes = 0;
};

double Elements(const Shape& shape) {
  double n = 1;
  for (int64_t d : shape.dimensions) n *= static_cast<double>(d);
  return n;
}

double LeafBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    double sum = 0;
    for (const Shape& s : shape.tuple_shapes) sum += LeafBytes(s);
    return sum;
  }
  return shape.IsArray() ? Elements(shape) * static_cast<double>(ByteWidth(shape.element_type)) : 0;
}

// The work the peers' README counts: FLOPs of dots and convolutions (elementwise work is not counted), and the
// minimal bytes in + out.
Work CountWork(const Module& module) {
  Work work;
  const Computation* entry = module.entry_computation();
  for (const Instruction* p : entry->parameters()) work.bytes += LeafBytes(p->shape());
  work.bytes += LeafBytes(entry->root()->shape());
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kDot) {
        double contracted = 1;
        for (int64_t d : inst->IntListAttr("lhs_contracting_dims")) {
          contracted *= static_cast<double>(inst->operand(0)->shape().dimensions[static_cast<size_t>(d)]);
        }
        work.flop += 2 * Elements(inst->shape()) * contracted;
      } else if (inst->opcode() == Opcode::kConvolution) {
        // Each output element sums over the kernel's spatial window and its input features (the kernel's input
        // feature dimension already counts one feature group).
        const Shape& kernel = inst->operand(1)->shape();
        const AttrValue* labels = inst->FindAttr("dim_labels");
        if (labels == nullptr) continue;
        const auto& dnums = labels->get<ConvolutionDimensionNumbers>();
        double per_output =
            static_cast<double>(kernel.dimensions[static_cast<size_t>(dnums.kernel_input_feature_dimension)]);
        for (int64_t d : dnums.kernel_spatial_dimensions) {
          per_output *= static_cast<double>(kernel.dimensions[static_cast<size_t>(d)]);
        }
        work.flop += 2 * Elements(inst->shape()) * per_output;
      }
    }
  }
  return work;
}

struct AlignedFree {
  void operator()(uint8_t* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<uint8_t, AlignedFree>;

Buffer Allocate(int64_t bytes) {
  size_t rounded = (static_cast<size_t>(std::max<int64_t>(bytes, 1)) + 63) / 64 * 64;
  return Buffer(static_cast<uint8_t*>(std::aligned_alloc(64, rounded)));
}

// Uniform [-1, 1) for floats, small values for integers, 0/1 for pred: what the peers feed (randn-like ranges).
void FillRandom(const ArrayInfo& info, uint8_t* data, std::mt19937& rng) {
  int64_t n = info.byte_size() / std::max<int64_t>(info.element_bytes, 1);
  // 24 random bits scaled to [-1, 1): std::uniform_real_distribution costs a long-double log per value, which makes
  // filling 300 MB of inputs take many seconds.
  auto uniform = [&](std::mt19937& g) { return static_cast<float>(g() >> 8) * 0x1p-23f - 1.0f; };
  if (info.element_type == "f32") {
    auto* p = reinterpret_cast<float*>(data);
    for (int64_t i = 0; i < n; ++i) p[i] = uniform(rng);
  } else if (info.element_type == "f64") {
    auto* p = reinterpret_cast<double*>(data);
    for (int64_t i = 0; i < n; ++i) p[i] = uniform(rng);
  } else if (info.element_type == "pred") {
    for (int64_t i = 0; i < n; ++i) data[i] = static_cast<uint8_t>(rng() & 1);
  } else {
    // Integers and narrow floats: small non-negative byte patterns keep indices and values in range.
    std::memset(data, 0, static_cast<size_t>(info.byte_size()));
    for (int64_t i = 0; i < n; ++i) data[i * info.element_bytes] = static_cast<uint8_t>(rng() % 8);
  }
}

void RunWorkload(benchmark::State& state, const std::string& path, const Settings& settings) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  if (!in) {
    state.SkipWithError(("cannot read " + path).c_str());
    return;
  }
  const std::string source = text.str();
  SourceFile file(path, source);  // keeps a view of `source`
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = ParseModuleAnyFormat(file, diags);
  if (module == nullptr) {
    state.SkipWithError(diags.Render(file).c_str());
    return;
  }
  Work work = CountWork(*module);

  CompileOptions options;
  options.source_name = path;
  Clock::time_point start = Clock::now();
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Compile(source, options);
  double compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  std::mt19937 rng(42);
  std::vector<Buffer> owned;
  std::vector<const void*> params;
  std::vector<void*> results;
  for (const ArrayInfo& info : (*exe)->parameters()) {
    owned.push_back(Allocate(info.byte_size()));
    FillRandom(info, owned.back().get(), rng);
    params.push_back(owned.back().get());
  }
  // A result the module aliases to a parameter (input_output_alias) is written over that parameter's buffer, as a
  // JAX training loop with donated weights runs: the step updates the weights in place.
  for (size_t j = 0; j < (*exe)->results().size(); ++j) {
    const int64_t donor = (*exe)->result_donors()[j];
    if (donor >= 0) {
      results.push_back(const_cast<void*>(params[static_cast<size_t>(donor)]));
      continue;
    }
    owned.push_back(Allocate((*exe)->results()[j].byte_size()));
    results.push_back(owned.back().get());
  }
  for (int i = 0; i < settings.warmup; ++i) {
    absl::Status status = (*exe)->Run(params, results);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  // The timed runs happen here, not as benchmark iterations: Google Benchmark would call this function again (and
  // recompile) while it searches for an iteration count. Its single iteration reports the median.
  std::vector<double> times;
  Clock::time_point begin = Clock::now();
  while (times.size() < 200 && (static_cast<int>(times.size()) < settings.runs ||
                                std::chrono::duration<double>(Clock::now() - begin).count() < settings.min_seconds)) {
    Clock::time_point t0 = Clock::now();
    absl::Status status = (*exe)->Run(params, results);
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
  }
  std::sort(times.begin(), times.end());
  double median = times.empty()      ? 0
                  : times.size() % 2 ? times[times.size() / 2]
                                     : 0.5 * (times[times.size() / 2 - 1] + times[times.size() / 2]);
  for (auto _ : state) state.SetIterationTime(median);
  state.counters["compile_ms"] = compile_ms;
  state.counters["median_ms"] = median * 1e3;
  state.counters["min_ms"] = times.empty() ? 0 : times.front() * 1e3;
  state.counters["runs"] = static_cast<double>(times.size());
  state.counters["flop"] = work.flop;
  state.counters["bytes"] = work.bytes;
  if (median > 0) {
    if (work.flop > 0) {
      state.counters["GFLOP/s"] = work.flop / median / 1e9;
    } else {
      state.counters["GB/s"] = work.bytes / median / 1e9;
    }
  }
}

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  xlac::Settings settings;
  std::vector<std::filesystem::path> extra;  // modules to time beside the directory's
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char* flag) -> const char* {
      size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    if (const char* v = value("--hlo_dir=")) {
      settings.hlo_dir = v;
    } else if (const char* v = value("--extra_hlo=")) {
      extra.emplace_back(v);
    } else if (const char* v = value("--runs=")) {
      settings.runs = std::max(1, std::atoi(v));
    } else if (const char* v = value("--warmup=")) {
      settings.warmup = std::max(0, std::atoi(v));
    } else if (const char* v = value("--min_seconds=")) {
      settings.min_seconds = std::atof(v);
    } else {
      std::fprintf(stderr, "unknown argument %s\n", argv[i]);
      return 2;
    }
  }
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(settings.hlo_dir, error)) {
    if (entry.path().extension() == ".hlo") files.push_back(entry.path());
  }
  if (error || files.empty()) {
    std::fprintf(stderr, "no .hlo modules in %s\n", settings.hlo_dir.c_str());
    return 1;
  }
  std::sort(files.begin(), files.end());
  files.insert(files.end(), extra.begin(), extra.end());
  for (const std::filesystem::path& file : files) {
    benchmark::RegisterBenchmark(
        file.stem().c_str(),
        [path = file.string(), settings](benchmark::State& state) { xlac::RunWorkload(state, path, settings); })
        ->UseManualTime()
        ->Iterations(1)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
