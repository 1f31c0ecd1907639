// The tiled f32/f64 convolution (implicit im2col into the packed GEMM, codegen/ir_emitter_convolution_tiled.cc):
// taken where it should be, bit for bit the interpreter in exact mode (within the fused multiply-add bound in the
// default mode) across layouts, strides, padding, dilations, reversal, feature groups and GEMM block edges, and
// exact around the zero-packed padding taps (non-finite weights fall back to the loop nest at run time).
#include <cmath>
#include <limits>
#include <random>

#include "absl/strings/str_join.h"
#include "codegen_test_util.h"
#include "fmt/format.h"
#include "gemm_numerics_test_util.h"

namespace xlac::codegen::testing {
namespace {

// Products per output element of the root convolution (window positions times input features per group).
int64_t ContractionSize(const Module& module) {
  const Instruction* conv = module.entry_computation()->root();
  const ConvolutionDimensionNumbers& dn = conv->FindAttr("dim_labels")->get<ConvolutionDimensionNumbers>();
  const Shape& kernel = conv->operand(1)->shape();
  int64_t elements = 1;
  for (int64_t d : kernel.dimensions) elements *= d;
  return elements / std::max<int64_t>(1, kernel.dimensions[dn.kernel_output_feature_dimension]);
}

// Compiles `text` (tiled or not) in both numerics modes, checks whether the conv GEMM was emitted (with fused
// multiply-adds in the default mode only), and compares the output with the interpreter on `args` (random when
// empty): bit for bit in exact mode, within the default mode's bound (gemm_numerics_test_util.h) otherwise.
void Check(const std::string& text, bool tiled, bool expect_gemm, std::vector<Literal> args = {}, uint64_t seed = 3) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  const Computation* entry = module->entry_computation();
  if (args.empty()) {
    for (int64_t i = 0; i < entry->parameter_count(); ++i) {
      args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), seed + static_cast<uint64_t>(i)));
    }
  }
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  for (bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "exact mode" : "default mode");
    JitOptions options;
    options.keep_llvm_ir = true;
    options.compile.prebuilt_gemms = false;  // the GEMM functions' IR is inspected
    options.compile.tiled_convolution = tiled;
    options.compile.exact = exact;
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    ASSERT_TRUE(exe.ok()) << exe.status().ToString() << "\n" << text;
    const std::string& ir = (*exe)->llvm_ir();
    EXPECT_EQ(ir.find("xlac.gemm.kernel") != std::string::npos, expect_gemm) << text;
    // bf16 in the default mode on AVX512_BF16: vdpbf16ps on pairs repacked from the f32 panels instead of FMAs.
    const bool pairs = expect_gemm && !exact && HostHasAvx512Bf16() &&
                       entry->root()->operand(0)->shape().element_type == PrimitiveType::kBF16;
    EXPECT_EQ(ir.find("llvm.x86.avx512bf16.dpbf16ps") != std::string::npos, pairs) << text;
    if (exact) EXPECT_EQ(ir.find("llvm.fma"), std::string::npos);
    if (expect_gemm && !exact && !pairs) EXPECT_NE(ir.find("llvm.fma"), std::string::npos);
    absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    if (exact) {
      std::string difference = DescribeDifference((*expected)[0], (*actual)[0]);
      EXPECT_TRUE(difference.empty()) << difference << "\n" << text;
      continue;
    }
    std::vector<Literal> magnitude_args;
    for (const Literal& a : args) magnitude_args.push_back(Magnitudes(a));
    absl::StatusOr<std::vector<Literal>> magnitudes = interp::Evaluate(*module, {magnitude_args});
    ASSERT_TRUE(magnitudes.ok());
    std::string outside = OutsideBound((*expected)[0], (*magnitudes)[0], (*actual)[0], ContractionSize(*module));
    EXPECT_TRUE(outside.empty()) << outside << "\n" << text;
  }
}

constexpr char kNhwc[] = R"(
HloModule m
ENTRY e {
  a = $T[2,9,7,12] parameter(0)
  k = $T[3,3,12,16] parameter(1)
  ROOT c = $T[2,9,7,16] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})";

TEST(CodegenConvolutionTiled, PathIsTakenAndCanBeTurnedOff) {
  for (const char* type : {"f32", "f64", "bf16", "f16", "s32", "s8"}) {
    for (bool tiled : {true, false}) {
      SCOPED_TRACE(fmt::format("{} tiled={}", type, tiled));
      bool is_float = std::string(type)[0] == 'f' || std::string(type) == "bf16";
      Check(WithType(kNhwc, type), tiled, tiled && is_float);
    }
  }
}

TEST(CodegenConvolutionTiled, NchwAndFeatureMajorOutputsUseTheTransposedProduct) {
  Check(R"(
HloModule m
ENTRY e {
  a = f32[3,10,11,12] parameter(0)
  k = f32[12,10,3,2] parameter(1)
  ROOT c = f32[3,12,5,12] convolution(a, k), window={size=3x2 stride=2x1 pad=0_1x1_0}, dim_labels=bf01_oi01->bf01
})",
        true, true);
  Check(R"(
HloModule m
ENTRY e {
  a = f32[2,8,8,5] parameter(0)
  k = f32[5,2,2,6] parameter(1)
  ROOT c = f32[6,2,7,7] convolution(a, k), window={size=2x2}, dim_labels=b01f_i01o->fb01
})",
        true, true);
}

// Filter gradients as PyTorch/XLA exports them (NCHW activations, output feature most minor): layout assignment
// gives them operand copies in the layouts their kernels stream (passes/layout_assignment.h). Depthwise ones
// (batch groups) take the loop nest, ungrouped ones the tiled GEMM; forward strides show up as window dilation.
TEST(CodegenConvolutionTiled, FilterGradientsOfNchwActivations) {
  Check(R"(
HloModule m
ENTRY e {
  x = f32[3,40,18,18] parameter(0)
  dy = f32[3,40,18,18] parameter(1)
  ROOT dw = f32[3,3,1,40] convolution(x, dy), window={size=18x18 pad=1_1x1_1}, dim_labels=fb01_io01->01bf, batch_group_count=40
})",
        true, false);
  Check(R"(
HloModule m
ENTRY e {
  x = f32[3,40,18,18] parameter(0)
  dy = f32[3,40,9,9] parameter(1)
  ROOT dw = f32[3,3,1,40] convolution(x, dy), window={size=9x9 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=fb01_io01->01bf, batch_group_count=40
})",
        true, false);
  Check(R"(
HloModule m
ENTRY e {
  x = f32[3,20,18,18] parameter(0)
  dy = f32[3,24,18,18] parameter(1)
  ROOT dw = f32[1,1,20,24] convolution(x, dy), window={size=18x18}, dim_labels=fb01_io01->01bf
})",
        true, true);
  Check(R"(
HloModule m
ENTRY e {
  x = f32[3,20,18,18] parameter(0)
  dy = f32[3,24,9,9] parameter(1)
  ROOT dw = f32[3,3,20,24] convolution(x, dy), window={size=9x9 pad=1_0x1_0 rhs_dilate=2x2}, dim_labels=fb01_io01->01bf
})",
        true, true);
}

TEST(CodegenConvolutionTiled, UnsuitedShapesKeepTheLoopNest) {
  // Depthwise (one output feature per group), a feature dimension between spatial ones, batch groups, operands of
  // another type than the result.
  Check(R"(
HloModule m
ENTRY e {
  a = f32[1,6,6,8] parameter(0)
  k = f32[3,3,1,8] parameter(1)
  ROOT c = f32[1,6,6,8] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f,
      feature_group_count=8
})",
        true, false);
  Check(R"(
HloModule m
ENTRY e {
  a = f32[2,6,6,3] parameter(0)
  k = f32[2,2,3,16] parameter(1)
  ROOT c = f32[2,5,16,5] convolution(a, k), window={size=2x2}, dim_labels=b01f_01io->b0f1
})",
        true, false);
  Check(R"(
HloModule m
ENTRY e {
  a = f32[4,5,5,2] parameter(0)
  k = f32[3,3,2,16] parameter(1)
  ROOT c = f32[2,3,3,16] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
})",
        true, false);
  Check(R"(
HloModule m
ENTRY e {
  a = bf16[1,6,6,8] parameter(0)
  k = bf16[3,3,8,16] parameter(1)
  ROOT c = f32[1,4,4,16] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f
})",
        true, false);
}

// Non-finite weights next to padding: the interpreter skips the padded taps (no inf * 0 = NaN), so the compiled
// code must take the loop nest; without padding the GEMM handles them itself. Non-finite inputs and -0 are exact
// either way.
TEST(CodegenConvolutionTiled, NonFiniteWeightsAndInputs) {
  for (bool padded : {true, false}) {
    SCOPED_TRACE(padded ? "padded" : "unpadded");
    std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  a = f32[1,6,6,9] parameter(0)
  k = f32[3,3,9,8] parameter(1)
  ROOT c = f32[1,$O,$O,8] convolution(a, k), window={size=3x3 $P}, dim_labels=b01f_01io->b01f
})",
                                           {{"$O", padded ? "6" : "4"}, {"$P", padded ? "pad=1_1x1_1" : ""}});
    std::unique_ptr<Module> module = ParseAndVerify(text);
    ASSERT_NE(module, nullptr);
    const Computation* entry = module->entry_computation();
    const float inf = std::numeric_limits<float>::infinity();
    for (float special : {inf, -inf, std::numeric_limits<float>::quiet_NaN(), -0.0f}) {
      SCOPED_TRACE(special);
      std::vector<Literal> args = {interp::MakeRandomLiteral(entry->parameter(0)->shape(), 1),
                                   interp::MakeRandomLiteral(entry->parameter(1)->shape(), 2)};
      args[1].Set<float>(0, special);  // a corner tap, which pads at the borders
      args[1].Set<float>(300, special);
      Check(text, true, true, args);
      args[1] = interp::MakeRandomLiteral(entry->parameter(1)->shape(), 2);
      args[0].Set<float>(0, special);
      args[0].Set<float>(100, -0.0f);
      Check(text, true, true, args);
    }
  }
}

TEST(CodegenConvolutionTiled, NonFiniteNarrowWeightsNextToPadding) {
  for (const char* type : {"bf16", "f16"}) {
    SCOPED_TRACE(type);
    std::string text = WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,5,5,9] parameter(0)
  k = $T[3,3,9,8] parameter(1)
  ROOT c = $T[1,5,5,8] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})",
                                type);
    std::unique_ptr<Module> module = ParseAndVerify(text);
    ASSERT_NE(module, nullptr);
    const Computation* entry = module->entry_computation();
    bool bf16 = std::string(type) == "bf16";
    for (uint16_t bits :
         {static_cast<uint16_t>(bf16 ? 0x7f80 : 0x7c00), static_cast<uint16_t>(bf16 ? 0xffc1 : 0xfe01)}) {
      std::vector<Literal> args = {interp::MakeRandomLiteral(entry->parameter(0)->shape(), 1),
                                   interp::MakeRandomLiteral(entry->parameter(1)->shape(), 2)};
      args[1].Set<uint16_t>(0, bits);  // inf, then a NaN with a payload
      Check(text, true, true, args);
    }
  }
}

// Random convolutions (rank 1-3, layouts, strides, padding including negative, dilations, reversal, feature
// groups), some larger than the GEMM's cache blocks so k, m and n blocks have edges.
TEST(CodegenConvolutionTiled, RandomConfigurationsMatchTheInterpreter) {
  std::mt19937 rng(20261125);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  int tiled_count = 0;
  const char* types[] = {"f32", "f32", "bf16", "f16", "f64"};
  for (int trial = 0; trial < 40; ++trial) {
    const char* type = types[trial % 5];
    int rank = pick(1, 3);
    bool nchw = pick(0, 1) == 1;
    bool big = trial % 8 == 0;
    int groups = pick(1, 3) == 3 ? 2 : 1;
    int batch = pick(1, 3);
    int in_group = big ? pick(60, 140) : pick(1, 20);
    int out_group = big ? pick(30, 70) : pick(4, 24);
    std::string spatial_labels = std::string("012").substr(0, static_cast<size_t>(rank));
    std::vector<int> in(static_cast<size_t>(rank)), win(in.size()), out(in.size());
    std::vector<std::string> window_parts = {"size=", "stride=", "pad=", "lhs_dilate=", "rhs_dilate=", "rhs_reversal="};
    for (size_t s = 0; s < in.size(); ++s) {
      in[s] = pick(rank == 3 ? 2 : 3, rank == 1 ? 40 : (rank == 2 ? (big ? 12 : 9) : 5));
      win[s] = pick(1, std::min(in[s], 3));
      int stride = pick(1, 2), lhs_dilate = pick(1, 4) == 4 ? 2 : 1, rhs_dilate = pick(1, 4) == 4 ? 2 : 1;
      int lo = pick(-1, 2), hi = pick(-1, 2);
      int padded = (in[s] - 1) * lhs_dilate + 1 + lo + hi;
      int dilated_window = (win[s] - 1) * rhs_dilate + 1;
      if (padded < dilated_window) {
        lo = hi = 0;
        lhs_dilate = 1;
        rhs_dilate = 1;
        padded = in[s];
        dilated_window = win[s];
      }
      out[s] = (padded - dilated_window) / stride + 1;
      const char* sep = s == 0 ? "" : "x";
      window_parts[0] += fmt::format("{}{}", sep, win[s]);
      window_parts[1] += fmt::format("{}{}", sep, stride);
      window_parts[2] += fmt::format("{}{}_{}", sep, lo, hi);
      window_parts[3] += fmt::format("{}{}", sep, lhs_dilate);
      window_parts[4] += fmt::format("{}{}", sep, rhs_dilate);
      window_parts[5] += fmt::format("{}{}", sep, pick(0, 1));
    }
    auto dims = [&](const std::string& labels, int b, int f, const std::vector<int>& sp, char bc, char fc) {
      std::string result;
      for (char c : labels) {
        int d = c == bc ? b : c == fc ? f : sp[static_cast<size_t>(c - '0')];
        result += fmt::format("{}{}", result.empty() ? "" : ",", d);
      }
      return result;
    };
    std::string in_labels = nchw ? "bf" + spatial_labels : "b" + spatial_labels + "f";
    std::string kernel_labels = nchw ? "oi" + spatial_labels : spatial_labels + "io";
    std::string out_labels = nchw ? "bf" + spatial_labels : "b" + spatial_labels + "f";
    std::string text = fmt::format(R"(
HloModule m
ENTRY e {{
  a = {0}[{1}] parameter(0)
  k = {0}[{2}] parameter(1)
  ROOT c = {0}[{3}] convolution(a, k), window={{{4}}}, dim_labels={5}_{6}->{7}, feature_group_count={8}
}})",
                                   type, dims(in_labels, batch, in_group * groups, in, 'b', 'f'),
                                   dims(kernel_labels, out_group * groups, in_group, win, 'o', 'i'),
                                   dims(out_labels, batch, out_group * groups, out, 'b', 'f'),
                                   absl::StrJoin(window_parts, " "), in_labels, kernel_labels, out_labels, groups);
    SCOPED_TRACE(text);
    bool expect_gemm = nchw ? out_group >= 4 : out_group >= 8;
    tiled_count += expect_gemm ? 1 : 0;
    Check(text, true, expect_gemm, {}, static_cast<uint64_t>(trial));
  }
  EXPECT_GE(tiled_count, 30);
}

// Rows of output positions wider than a B panel (NCHW-like, stride 1 along the row): whole panels pack one masked
// vector load per k, with the padding, window dilation, negative padding and feature groups in the mask and
// offsets; panels that cross a row or the end keep the scalar packer.
TEST(CodegenConvolutionTiled, WideRowsPackWholeVectors) {
  const char* convs[] = {
      "a = $T[2,6,9,70] parameter(0)\n k = $T[16,6,3,3] parameter(1)\n"
      " ROOT c = $T[2,16,9,70] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01",
      "a = $T[1,8,5,50] parameter(0)\n k = $T[12,4,2,3] parameter(1)\n"
      " ROOT c = $T[1,12,5,50] convolution(a, k), window={size=2x3 pad=0_1x2_2 rhs_dilate=1x2},"
      " dim_labels=bf01_oi01->bf01, feature_group_count=2",
      "a = $T[3,4,100] parameter(0)\n k = $T[8,4,5] parameter(1)\n"
      " ROOT c = $T[3,8,101] convolution(a, k), window={size=5 pad=2_3}, dim_labels=bf0_oi0->bf0",
      "a = $T[1,3,4,40] parameter(0)\n k = $T[8,3,1,3] parameter(1)\n"
      " ROOT c = $T[1,8,4,36] convolution(a, k), window={size=1x3 pad=0_0x-1_-1}, dim_labels=bf01_oi01->bf01",
      // NCHW input, NHWC output: positions are the GEMM's rows, packed mr lanes at a time.
      "a = $T[2,6,9,70] parameter(0)\n k = $T[3,3,6,16] parameter(1)\n"
      " ROOT c = $T[2,9,70,16] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_01io->b01f",
  };
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (const char* conv : convs) {
      std::string text = WithType(std::string("HloModule m\nENTRY e {\n ") + conv + "\n}", type);
      SCOPED_TRACE(text);
      Check(text, true, true, {}, 11);
      std::unique_ptr<Module> module = ParseAndVerify(text);
      ASSERT_NE(module, nullptr);
      JitOptions options;
      options.keep_llvm_ir = true;
      options.compile.prebuilt_gemms = false;  // the GEMM functions' IR is inspected
      absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
      ASSERT_TRUE(exe.ok()) << exe.status().ToString();
      EXPECT_NE((*exe)->llvm_ir().find("llvm.masked.load"), std::string::npos);
    }
  }
}

TEST(CodegenConvolutionTiled, F64AndNonDefaultLayouts) {
  Check(R"(
HloModule m
ENTRY e {
  a = f64[2,7,7,20]{2,1,3,0} parameter(0)
  k = f64[3,3,20,24]{0,1,2,3} parameter(1)
  ROOT c = f64[2,4,4,24] convolution(a, k), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_reversal=0x1},
      dim_labels=b01f_01io->b01f
})",
        true, true);
}

}  // namespace
}  // namespace xlac::codegen::testing
