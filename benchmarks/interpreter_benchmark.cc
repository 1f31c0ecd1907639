// The reference interpreter's speed on its heavy paths (dot, convolution in the shapes of a MobileNet training
// step, reduce, elementwise) and on whole models, at 1 and 2 threads (the benchmark argument is
// InterpreterOptions::threads; results do not depend on it). Not a test: run build/bin/interpreter_benchmark by
// hand; docs/interpreter.md has the numbers.
//
// Models: the peers' workloads (../shared/peers/hlo/*.hlo relative to the source directory) and the shared corpus's
// hlo/models/*.hlo, skipped when absent; inputs are seeded random values, elided constants get seeded values.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "frontend/module_input.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;

struct Loaded {
  std::string text;  // the module keeps views of it
  std::unique_ptr<Module> module;
  std::vector<Literal> args;
};

std::unique_ptr<Loaded> Load(std::string text, const std::string& name) {
  auto loaded = std::make_unique<Loaded>();
  loaded->text = std::move(text);
  SourceFile file(name, loaded->text);
  DiagnosticEngine diags;
  loaded->module = ParseModuleAnyFormat(file, diags);
  if (loaded->module == nullptr || !VerifyModule(*loaded->module, diags)) {
    fprintf(stderr, "%s: %s\n", name.c_str(), diags.Render(file).c_str());
    return nullptr;
  }
  uint64_t seed = 1;
  for (const auto& comp : loaded->module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kConstant && inst->has_literal() && inst->literal().is_unknown()) {
        inst->set_literal(interp::MakeRandomLiteral(inst->shape(), 0x5EED + seed++));
      }
    }
  }
  const Computation* entry = loaded->module->entry_computation();
  for (const auto& inst : entry->instructions()) {
    if (inst->opcode() != Opcode::kParameter) continue;
    loaded->args.push_back(interp::MakeRandomLiteral(inst->shape(), seed++));
  }
  return loaded;
}

// Modules are loaded on first use (random inputs of the large models take a while) and kept.
std::map<std::string, std::unique_ptr<Loaded>>& Cache() {
  static std::map<std::string, std::unique_ptr<Loaded>> cache;
  return cache;
}

const Loaded* Get(const std::string& name, const std::function<std::string()>& text) {
  auto it = Cache().find(name);
  if (it == Cache().end()) it = Cache().emplace(name, Load(text(), name)).first;
  return it->second.get();
}

void RunInterpreter(benchmark::State& state, const Loaded* loaded) {
  if (loaded == nullptr) {
    state.SkipWithError("module did not load");
    return;
  }
  interp::InterpreterOptions options;
  options.threads = state.range(0);
  const std::vector<std::vector<Literal>> args{loaded->args};
  for (auto _ : state) {
    absl::StatusOr<std::vector<Literal>> r = interp::Evaluate(*loaded->module, args, options);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(r->data());
  }
}

// One-op modules: name, HLO text, multiply-adds (or elements) per run for the rate counter.
struct OpCase {
  const char* name;
  const char* hlo;
  double ops;
};

const OpCase kOps[] = {
    {"dot_f32_256x1024x1024",
     "HloModule m\nENTRY e {\n  a = f32[256,1024] parameter(0)\n  b = f32[1024,1024] parameter(1)\n"
     "  ROOT d = f32[256,1024] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n",
     256.0 * 1024 * 1024},
    {"dot_f32_transposed_grad_1024x256x1024",  // a weight gradient: both operands contract their rows
     "HloModule m\nENTRY e {\n  a = f32[256,1024] parameter(0)\n  b = f32[256,1024] parameter(1)\n"
     "  ROOT d = f32[1024,1024] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n",
     256.0 * 1024 * 1024},
    {"conv_f32_3x3_nhwc_8x28x28x64",
     "HloModule m\nENTRY e {\n  a = f32[8,28,28,64] parameter(0)\n  k = f32[3,3,64,64] parameter(1)\n"
     "  ROOT c = f32[8,28,28,64] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n",
     8.0 * 28 * 28 * 64 * 9 * 64},
    {"conv_f32_1x1_pointwise_8x56x56x32to96",
     "HloModule m\nENTRY e {\n  a = f32[8,56,56,32] parameter(0)\n  k = f32[1,1,32,96] parameter(1)\n"
     "  ROOT c = f32[8,56,56,96] convolution(a, k), window={size=1x1}, dim_labels=b01f_01io->b01f\n}\n",
     8.0 * 56 * 56 * 96 * 32},
    {"conv_f32_depthwise_3x3_8x56x56x96",
     "HloModule m\nENTRY e {\n  a = f32[8,56,56,96] parameter(0)\n  k = f32[3,3,1,96] parameter(1)\n"
     "  ROOT c = f32[8,56,56,96] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, "
     "feature_group_count=96\n}\n",
     8.0 * 56 * 56 * 96 * 9},
    {"conv_f32_depthwise_filter_grad_batch_groups_96",  // d(loss)/d(depthwise kernel), as XLA expresses it
     "HloModule m\nENTRY e {\n  a = f32[8,56,56,96] parameter(0)\n  g = f32[8,56,56,96] parameter(1)\n"
     "  ROOT c = f32[3,3,1,96] convolution(a, g), window={size=56x56 pad=1_1x1_1}, dim_labels=f01b_i01o->01bf, "
     "batch_group_count=96\n}\n",
     8.0 * 56 * 56 * 96 * 9},
    {"conv_f32_input_grad_stride2_8x28x28x64",  // a strided convolution's input gradient: lhs dilation
     "HloModule m\nENTRY e {\n  g = f32[8,14,14,64] parameter(0)\n  k = f32[3,3,64,64] parameter(1)\n"
     "  ROOT c = f32[8,28,28,64] convolution(g, k), window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 "
     "rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f\n}\n",
     8.0 * 28 * 28 * 64 * 64 * 9 / 4},
    {"reduce_f32_rows_4096x1024",
     "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
     "ENTRY e {\n  a = f32[4096,1024] parameter(0)\n  z = f32[] constant(0)\n"
     "  ROOT r = f32[4096] reduce(a, z), dimensions={1}, to_apply=add\n}\n",
     4096.0 * 1024},
    {"reduce_f32_columns_4096x1024",
     "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
     "ENTRY e {\n  a = f32[4096,1024] parameter(0)\n  z = f32[] constant(0)\n"
     "  ROOT r = f32[1024] reduce(a, z), dimensions={0}, to_apply=add\n}\n",
     4096.0 * 1024},
    {"elementwise_f32_mul_add_4M",
     "HloModule m\nENTRY e {\n  a = f32[4096,1024] parameter(0)\n  b = f32[4096,1024] parameter(1)\n"
     "  m = f32[4096,1024] multiply(a, b)\n  ROOT s = f32[4096,1024] add(m, a)\n}\n",
     2.0 * 4096 * 1024},
};

void RegisterAll() {
  for (const OpCase& op : kOps) {
    std::string name = op.name, hlo = op.hlo;
    double ops = op.ops;
    benchmark::RegisterBenchmark(("op/" + name).c_str(),
                                 [name, hlo, ops](benchmark::State& state) {
                                   RunInterpreter(state, Get(name, [&] { return hlo; }));
                                   state.counters["Gop/s"] =
                                       benchmark::Counter(ops * static_cast<double>(state.iterations()) / 1e9,
                                                          benchmark::Counter::kIsRate);
                                 })
        ->Arg(1)
        ->Arg(2)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  }
  fs::path source(XLAC_SOURCE_DIR);
  for (const fs::path& dir : {source.parent_path() / "shared" / "peers" / "hlo",
                              source.parent_path() / "shared" / "corpus" / "hlo" / "models"}) {
    if (!fs::is_directory(dir)) continue;
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& path : files) {
      auto read = [path] {
        std::ifstream in(path, std::ios::binary);
        std::stringstream buffer;
        buffer << in.rdbuf();
        return buffer.str();
      };
      std::string key = path.string();
      benchmark::RegisterBenchmark(("model/" + path.stem().string()).c_str(),
                                   [key, read](benchmark::State& state) { RunInterpreter(state, Get(key, read)); })
          ->Arg(1)
          ->Arg(2)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime()
          ->Iterations(1);
    }
  }
}

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  xlac::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
