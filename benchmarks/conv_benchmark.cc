// JIT-compiled f32 (and one bf16) convolution: the tiled path (implicit im2col into the packed GEMM,
// codegen/ir_emitter_convolution_tiled.cc) against the loop nest (CompileOptions::tiled_convolution = false), both
// compiled in the same run, on ResNet-like layers in NHWC and NCHW.
//
// As in gemm_benchmark, the convolution runs inside a while loop and each variant is timed at two trip counts, so
// the difference per extra trip is the generated convolution alone. Counters:
//   GFLOPs        2 * output elements * window positions * input features per group, per tiled convolution
//   loop_GFLOPs   the same for the loop nest
//   speedup       loop-nest time / tiled time
// Single thread; products are rounded before they are added (bit-exact with the interpreter), as in the GEMM.
#include <algorithm>
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

struct ConvCase {
  std::string input, kernel, output, window, dim_labels;
  double flops;
  std::string type = "f32";
};

// y = convolution(x, w) `trips` times in a while loop (x and w are loop-invariant; nothing hoists them).
std::unique_ptr<codegen::JitExecutable> CompileConvLoop(const ConvCase& c, int trips, bool tiled,
                                                        benchmark::State& state) {
  std::string tuple = fmt::format("(s32[], {0}[{1}], {0}[{2}], {0}[{3}])", c.type, c.input, c.kernel, c.output);
  std::string text = fmt::format(R"(
HloModule conv
cond {{
  p = {0} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  trips = s32[] constant({6})
  ROOT lt = pred[] compare(i, trips), direction=LT
}}
body {{
  p = {0} parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = {7}[{1}] get-tuple-element(p), index=1
  w = {7}[{2}] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = {7}[{3}] convolution(x, w), window={{{4}}}, dim_labels={5}
  ROOT t = {0} tuple(i1, x, w, y)
}}
ENTRY e {{
  a = {7}[{1}] parameter(0)
  b = {7}[{2}] parameter(1)
  zero = s32[] constant(0)
  z = {7}[] constant(0)
  y0 = {7}[{3}] broadcast(z), dimensions={{}}
  t = {0} tuple(zero, a, b, y0)
  loop = {0} while(t), condition=cond, body=body
  ROOT y = {7}[{3}] get-tuple-element(loop), index=3
}})",
                                 tuple, c.input, c.kernel, c.output, c.window, c.dim_labels, trips, c.type);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<conv>");
  if (!module.ok()) {
    state.SkipWithError(module.status().ToString().c_str());
    return nullptr;
  }
  codegen::JitOptions options;
  options.compile.tiled_convolution = tiled;
  options.threads = 1;  // kernel against kernel, one thread each
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(**module, options);
  if (!exe.ok()) {
    state.SkipWithError(exe.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(exe);
}

void BM_Conv(benchmark::State& state, ConvCase c) {
  int extra_trips = static_cast<int>(std::clamp(2e9 / c.flops, 2.0, 1000.0));
  TimeTiledAgainstLoops(state, c.flops, extra_trips,
                        [&](int trips, bool tiled) { return CompileConvLoop(c, trips, tiled, state); });
}

// flops = 2 * output elements * window positions * input features per group.
BENCHMARK_CAPTURE(BM_Conv, resnet_3x3_nhwc,
                  ConvCase{"1,56,56,64", "3,3,64,64", "1,56,56,64", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
                           2.0 * 56 * 56 * 64 * 9 * 64})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv, resnet_3x3_nchw,
                  ConvCase{"1,64,56,56", "64,64,3,3", "1,64,56,56", "size=3x3 pad=1_1x1_1", "bf01_oi01->bf01",
                           2.0 * 56 * 56 * 64 * 9 * 64})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv, resnet_3x3_nhwc_bf16,
                  ConvCase{"1,56,56,64", "3,3,64,64", "1,56,56,64", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
                           2.0 * 56 * 56 * 64 * 9 * 64, "bf16"})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv, resnet_1x1_nhwc,
                  ConvCase{"4,28,28,256", "1,1,256,128", "4,28,28,128", "size=1x1", "b01f_01io->b01f",
                           2.0 * 4 * 28 * 28 * 128 * 256})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv, stem_7x7_stride2_nhwc,
                  ConvCase{"1,224,224,3", "7,7,3,64", "1,112,112,64", "size=7x7 stride=2x2 pad=3_3x3_3",
                           "b01f_01io->b01f", 2.0 * 112 * 112 * 64 * 49 * 3})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Conv, conv1d_nwc,
                  ConvCase{"8,512,128", "5,128,128", "8,512,128", "size=5 pad=2_2", "b0f_0io->b0f",
                           2.0 * 8 * 512 * 128 * 5 * 128})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xlac

BENCHMARK_MAIN();
