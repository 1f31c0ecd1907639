// C++ custom-call kernels against the same function written as HLO ops (issue 25: a scalar kernel in a loop fusion
// runs at >= 0.9x the HLO version's speed, because it is inlined and vectorized), and what compiling a kernel file
// costs (cold: Clang; cached: nothing).
//
// Each pair (BM_Activation/<name>/hlo and /kernel) runs y = act(x) + b on f32[1024,1024] through RunBuffers (in
// place, no copies): the kernel variant binds a custom call to the C++ function, the HLO variant spells it with ops.
// The kernel variant reports `ratio_to_hlo` (HLO time / kernel time, measured side by side; >= 0.9 is the target).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "codegen/clang/kernel_cache.h"
#include "codegen/clang/kernel_compiler.h"
#include "codegen/jit.h"
#include "fmt/format.h"
#include "frontend/hlo/parser.h"
#include "passes/custom_kernels.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kKernels[] = R"(#include <xlac/custom_call.h>
#include <cmath>

XLAC_ELEMENTWISE("bench.gelu_tanh")
float GeluTanh(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }

XLAC_ELEMENTWISE("bench.swish")
float Swish(float x) { return x / (1.0f + std::exp(-x)); }

XLAC_ELEMENTWISE("bench.softplus")
float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
)";

struct Activation {
  const char* name;
  const char* target;
  const char* hlo_body;  // computes %act from %x (f32[N,N]) with ops
};

// N = 1024; constants as broadcasts.
constexpr Activation kActivations[] = {
    {"gelu_tanh", "bench.gelu_tanh", R"(
  half = f32[] constant(0.5)
  one = f32[] constant(1)
  k0 = f32[] constant(0.7978845608)
  k1 = f32[] constant(0.044715)
  halfb = f32[1024,1024] broadcast(half), dimensions={}
  oneb = f32[1024,1024] broadcast(one), dimensions={}
  k0b = f32[1024,1024] broadcast(k0), dimensions={}
  k1b = f32[1024,1024] broadcast(k1), dimensions={}
  x2 = f32[1024,1024] multiply(x, x)
  x3 = f32[1024,1024] multiply(x2, x)
  t0 = f32[1024,1024] multiply(k1b, x3)
  t1 = f32[1024,1024] add(x, t0)
  t2 = f32[1024,1024] multiply(k0b, t1)
  t3 = f32[1024,1024] tanh(t2)
  t4 = f32[1024,1024] add(oneb, t3)
  t5 = f32[1024,1024] multiply(halfb, x)
  act = f32[1024,1024] multiply(t5, t4))"},
    {"swish", "bench.swish", R"(
  one = f32[] constant(1)
  oneb = f32[1024,1024] broadcast(one), dimensions={}
  nx = f32[1024,1024] negate(x)
  e = f32[1024,1024] exponential(nx)
  d = f32[1024,1024] add(oneb, e)
  act = f32[1024,1024] divide(x, d))"},
    {"softplus", "bench.softplus", R"(
  twenty = f32[] constant(20)
  tb = f32[1024,1024] broadcast(twenty), dimensions={}
  big = pred[1024,1024] compare(x, tb), direction=GT
  e = f32[1024,1024] exponential(x)
  l = f32[1024,1024] log-plus-one(e)
  act = f32[1024,1024] select(big, x, l))"},
};

std::string Program(const Activation& a, bool kernel) {
  std::string body = kernel
                         ? fmt::format("\n  act = f32[1024,1024] custom-call(x), custom_call_target=\"{}\"", a.target)
                         : std::string(a.hlo_body);
  return fmt::format(R"(HloModule {}
ENTRY main {{
  x = f32[1024,1024] parameter(0)
  b = f32[1024,1024] parameter(1){}
  ROOT y = f32[1024,1024] add(act, b)
}})",
                     a.name, body);
}

const codegen::KernelLibrary* Library() {
  static const codegen::KernelLibrary* library = []() -> const codegen::KernelLibrary* {
    std::string path = (std::filesystem::temp_directory_path() / "xlac_bench_kernels.cc").string();
    std::ofstream(path) << kKernels;
    absl::StatusOr<codegen::TargetInfo> target = codegen::ResolveTarget({});
    if (!target.ok()) return nullptr;
    absl::StatusOr<codegen::KernelLibrary> compiled = codegen::CompileKernelSources({path}, *target);
    if (!compiled.ok()) {
      std::fprintf(stderr, "%s\n", std::string(compiled.status().message()).c_str());
      return nullptr;
    }
    return new codegen::KernelLibrary(*std::move(compiled));
  }();
  return library;
}

std::unique_ptr<codegen::JitExecutable> Compile(const Activation& a, bool kernel) {
  const std::string text = Program(a, kernel);  // SourceFile only views it
  SourceFile file("bench.hlo", text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = ParseHloModule(file, diags);
  if (module == nullptr) {
    std::fprintf(stderr, "%s", diags.Render(file).c_str());
    return nullptr;
  }
  codegen::JitOptions options;
  options.threads = 1;
  if (kernel) {
    const codegen::KernelLibrary* library = Library();
    if (library == nullptr || !BindCustomKernels(*module, library->kernels, diags).ok()) return nullptr;
    options.compile.kernel_bitcode = std::make_shared<const std::string>(library->bitcode);
    options.compile.kernel_fingerprint = library->fingerprint;
  }
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(*module, options);
  if (!exe.ok()) std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
  return exe.ok() ? *std::move(exe) : nullptr;
}

// Fastest of `runs` in-place runs, in seconds.
double Fastest(codegen::JitExecutable& exe, const std::vector<Literal>& args, Literal& out, int runs) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    Clock::time_point start = Clock::now();
    if (!exe.RunBuffers({args[0].raw_data(), args[1].raw_data()}, {out.mutable_raw_data()}).ok()) return -1;
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
  }
  return best;
}

void BM_Activation(benchmark::State& state, const Activation* a, bool kernel) {
  std::unique_ptr<codegen::JitExecutable> exe = Compile(*a, kernel);
  std::unique_ptr<codegen::JitExecutable> other = kernel ? Compile(*a, false) : nullptr;
  if (exe == nullptr || (kernel && other == nullptr)) {
    state.SkipWithError("compile failed");
    return;
  }
  std::vector<Literal> args;
  for (size_t i = 0; i < exe->parameter_shapes().size(); ++i) {
    args.push_back(interp::MakeRandomLiteral(exe->parameter_shapes()[i], i + 1));
  }
  Literal out(exe->parameter_shapes()[0]);
  for (auto _ : state) {
    if (!exe->RunBuffers({args[0].raw_data(), args[1].raw_data()}, {out.mutable_raw_data()}).ok()) {
      state.SkipWithError("run failed");
      return;
    }
  }
  state.SetItemsProcessed(state.iterations() * args[0].element_count());
  if (kernel) {
    // Side by side, alternating, fastest of each: robust against the machine's noise.
    double hlo = 1e30, mine = 1e30;
    for (int round = 0; round < 5; ++round) {
      hlo = std::min(hlo, Fastest(*other, args, out, 5));
      mine = std::min(mine, Fastest(*exe, args, out, 5));
    }
    state.counters["ratio_to_hlo"] = hlo / mine;
  }
}

// Cold: Clang compiles the kernel file. Cached: the library comes from the compilation cache (no Clang).
void BM_KernelCompile(benchmark::State& state, bool cached) {
  std::string dir = (std::filesystem::temp_directory_path() / "xlac_bench_kernel_cache").string();
  std::filesystem::remove_all(dir);
  std::string path = (std::filesystem::temp_directory_path() / "xlac_bench_kernels_100.cc").string();
  // A 100-line kernel file: the three activations, repeated under other names.
  std::string text = "#include <xlac/custom_call.h>\n#include <cmath>\n";
  for (int i = 0; std::count(text.begin(), text.end(), '\n') < 100; ++i) {
    text += fmt::format(
        "XLAC_ELEMENTWISE(\"bench.k{0}\")\nfloat K{0}(float x) {{\n  float t = std::tanh(0.79f * (x + 0.044f * x * "
        "x * x));\n  return 0.5f * x * (1.0f + t) + {0}.0f;\n}}\n\n",
        i);
  }
  std::ofstream(path) << text;
  absl::StatusOr<codegen::TargetInfo> target = codegen::ResolveTarget({});
  codegen::CacheOptions cache{cached ? dir : ""};
  std::string log;
  if (cached && !codegen::CompileKernelSourcesCached({path}, *target, {}, cache, log).ok()) {
    state.SkipWithError("compile failed");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<codegen::KernelLibrary> library =
        codegen::CompileKernelSourcesCached({path}, *target, {}, cache, log);
    if (!library.ok()) {
      state.SkipWithError("compile failed");
      return;
    }
  }
  state.counters["lines"] = static_cast<double>(std::count(text.begin(), text.end(), '\n'));
}

void Register() {
  for (const Activation& a : kActivations) {
    for (bool kernel : {false, true}) {
      std::string name = fmt::format("BM_Activation/{}/{}", a.name, kernel ? "kernel" : "hlo");
      benchmark::RegisterBenchmark(name.c_str(), BM_Activation, &a, kernel)->Unit(benchmark::kMillisecond);
    }
  }
  benchmark::RegisterBenchmark("BM_KernelCompile/cold", BM_KernelCompile, false)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("BM_KernelCompile/cached", BM_KernelCompile, true)->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  xlac::Register();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
