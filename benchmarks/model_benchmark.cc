// Compile and run time of whole models on the JIT versus the reference interpreter, one benchmark per model.
//
// Models: XLAC_SOURCE_DIR/examples/*.hlo and the shared corpus's hlo/models/*.hlo (../shared/corpus relative to the
// source directory; skipped when absent). Each benchmark iteration is one JIT run; the counters put the two backends
// side by side:
//   compile_ms   JitExecutable::Compile (parse and verify excluded), measured once
//   jit_ms       one compiled run (the benchmark's own time, repeated as Google Benchmark decides)
//   interp_ms    one interpreter run (the fastest of a few)
//   speedup      interp_ms / jit_ms
// Elided `{...}` constants (common in published models) are given seeded values first, so both backends run the
// same fully-specified module. Not a test: run build/bin/model_benchmark by hand.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/jit.h"
#include "frontend/module_input.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::unique_ptr<Module> LoadModule(const fs::path& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();  // SourceFile keeps a view of it
  SourceFile file(path.string(), text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = ParseModuleAnyFormat(file, diags);
  if (module == nullptr || !VerifyModule(*module, diags)) {
    error = diags.Render(file);
    return nullptr;
  }
  uint64_t salt = 0;
  for (const auto& comp : module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kConstant && inst->has_literal() && inst->literal().is_unknown()) {
        inst->set_literal(interp::MakeRandomLiteral(inst->shape(), 0x5EED + ++salt));
      }
    }
  }
  return module;
}

void BenchmarkModel(benchmark::State& state, const fs::path& path) {
  std::string error;
  std::unique_ptr<Module> module = LoadModule(path, error);
  if (module == nullptr) {
    state.SkipWithError(("cannot load the module: " + error).c_str());
    return;
  }
  const Computation& entry = *module->entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry.parameter(i)->shape(), 1000 + static_cast<uint64_t>(i)));
  }

  Clock::time_point start = Clock::now();
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> executable = codegen::JitExecutable::Compile(*module);
  const double compile_ms = MillisecondsSince(start);
  if (!executable.ok()) {
    state.SkipWithError(("JIT: " + std::string(executable.status().message())).c_str());
    return;
  }

  interp::InterpreterOptions interp_options;
  double interp_ms = 1e300;
  for (int rep = 0; rep < 3; ++rep) {
    start = Clock::now();
    absl::StatusOr<std::vector<Literal>> result = interp::Evaluate(*module, {args}, interp_options);
    interp_ms = std::min(interp_ms, MillisecondsSince(start));
    if (!result.ok()) {
      state.SkipWithError(("interpreter: " + std::string(result.status().message())).c_str());
      return;
    }
    if (interp_ms > 1000) break;  // slow models: one run is precise enough
  }

  double jit_total_ms = 0;
  int64_t runs = 0;
  for (auto _ : state) {
    start = Clock::now();
    absl::StatusOr<std::vector<Literal>> result = (*executable)->Run(args);
    jit_total_ms += MillisecondsSince(start);
    ++runs;
    if (!result.ok()) {
      state.SkipWithError(("JIT run: " + std::string(result.status().message())).c_str());
      return;
    }
    benchmark::DoNotOptimize(result);
  }
  const double jit_ms = runs > 0 ? jit_total_ms / static_cast<double>(runs) : 0;
  state.counters["compile_ms"] = compile_ms;
  state.counters["jit_ms"] = jit_ms;
  state.counters["interp_ms"] = interp_ms;
  state.counters["speedup"] = jit_ms > 0 ? interp_ms / jit_ms : 0;
}

std::vector<fs::path> ModelFiles() {
  std::vector<fs::path> files;
  const fs::path source = XLAC_SOURCE_DIR;
  for (const fs::path& dir : {source / "examples", source / ".." / "shared" / "corpus" / "hlo" / "models"}) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) continue;
    std::vector<fs::path> found;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      if (entry.is_regular_file() && entry.path().extension() == ".hlo") found.push_back(entry.path());
    }
    std::sort(found.begin(), found.end());
    files.insert(files.end(), found.begin(), found.end());
  }
  return files;
}

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  for (const std::filesystem::path& path : xlac::ModelFiles()) {
    benchmark::RegisterBenchmark(("model/" + path.stem().string()).c_str(),
                                 [path](benchmark::State& state) { xlac::BenchmarkModel(state, path); })
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
