// JIT-compiled f32/f64 dot: the tiled GEMM (codegen/ir_emitter_gemm.cc) against the plain loop nest
// (CompileOptions::tiled_dot = false), both compiled in the same run.
//
// JitExecutable::Run copies arguments and results through literals, which costs as much as a whole 512^3 GEMM; so
// the dot runs inside a while loop and each variant is timed at two trip counts: the difference per extra trip is
// the generated dot alone (plus a buffer copy of the loop state, small next to the dot). Counters:
//   GFLOPs        2*m*n*k per tiled dot (the benchmark's iterations run the module with ~2 GFLOP of extra trips)
//   loop_GFLOPs   the same for the loop-nest dot
//   speedup       loop-nest dot time / tiled dot time
// Single thread. The kernel multiplies and adds separately (bit-exact with the interpreter), so its bound is half
// the FMA peak: two vector ops per multiply-accumulate on the two 512-bit ports.
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/jit_timing.h"
#include "codegen/jit.h"
#include "fmt/format.h"
#include "frontend/hlo/parser.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

// y = dot(x, w) `trips` times in a while loop (x and w are loop-invariant; nothing hoists them).
std::unique_ptr<codegen::JitExecutable> CompileDotLoop(const std::string& type, int64_t m, int64_t k, int64_t n,
                                                       int trips, bool tiled, benchmark::State& state) {
  std::string text = fmt::format(R"(
HloModule gemm
cond {{
  p = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  trips = s32[] constant({4})
  ROOT lt = pred[] compare(i, trips), direction=LT
}}
body {{
  p = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = {0}[{1},{2}] get-tuple-element(p), index=1
  w = {0}[{2},{3}] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = {0}[{1},{3}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT t = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) tuple(i1, x, w, y)
}}
ENTRY e {{
  a = {0}[{1},{2}] parameter(0)
  b = {0}[{2},{3}] parameter(1)
  zero = s32[] constant(0)
  z = {0}[] constant(0)
  y0 = {0}[{1},{3}] broadcast(z), dimensions={{}}
  t = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) tuple(zero, a, b, y0)
  loop = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) while(t), condition=cond, body=body
  ROOT y = {0}[{1},{3}] get-tuple-element(loop), index=3
}})",
                                 type, m, k, n, trips);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<gemm>");
  if (!module.ok()) {
    state.SkipWithError(module.status().ToString().c_str());
    return nullptr;
  }
  codegen::JitOptions options;
  options.compile.tiled_dot = tiled;
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(**module, options);
  if (!exe.ok()) {
    state.SkipWithError(exe.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(exe);
}

void BM_Dot(benchmark::State& state, std::string type) {
  int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  // Enough extra trips (~2 GFLOP) that the Run overhead's jitter on a shared machine stays small next to them.
  int extra_trips = static_cast<int>(std::clamp(2e9 / flops, 4.0, 4000.0));
  TimeTiledAgainstLoops(state, flops, extra_trips,
                        [&](int trips, bool tiled) { return CompileDotLoop(type, m, k, n, trips, tiled, state); });
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {64, 256, 512, 1024}) b->Args({s, s, s});
  b->Args({128, 1024, 4096});  // a dense layer: batch 128, 1024 -> 4096
  b->Args({1000, 64, 1000});   // short k
  b->Args({7, 512, 1031});     // thin m, prime n (edge tiles)
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Dot, f32, std::string("f32"))->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Dot, bf16, std::string("bf16"))->Args({512, 512, 512})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dot, f64, std::string("f64"))
    ->Args({256, 256, 256})
    ->Args({512, 512, 512})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xlac

BENCHMARK_MAIN();
