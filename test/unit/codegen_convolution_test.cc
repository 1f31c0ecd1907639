// convolution compiled with the JIT against the interpreter, bit for bit: dim_labels, strides, padding (negative
// too), lhs/rhs dilation, window reversal, feature/batch groups, layouts, mixed operand/result types.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kTypes = {"f32", "f64", "bf16", "f16", "s32", "s8", "u8", "s64"};

void ExpectBothOptLevels(const std::string& text) {
  ExpectMatchesInterpreter(text, {}, 7, /*opt_level=*/2);
  ExpectMatchesInterpreter(text, {}, 11, /*opt_level=*/0);
}

TEST(CodegenConvolution, NhwcStridePadding) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,5,6,3] parameter(0)
  k = $T[3,2,3,4] parameter(1)
  ROOT c = $T[2,3,6,4] convolution(a, k), window={size=3x2 stride=2x1 pad=1_1x0_1}, dim_labels=b01f_01io->b01f
})",
                                 t));
  }
}

TEST(CodegenConvolution, NchwDilationReversalNegativePadding) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,3,5,6] parameter(0)
  k = $T[4,3,3,2] parameter(1)
  ROOT c = $T[2,4,8,3] convolution(a, k),
      window={size=3x2 stride=1x2 pad=2_-1x1_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0},
      dim_labels=bf01_oi01->bf01
})",
                                 t));
  }
}

TEST(CodegenConvolution, FeatureGroupsAndDepthwise) {
  for (const std::string& t : {"f32", "bf16", "s32", "f64"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,4,4,6] parameter(0)
  k = $T[2,2,3,6] parameter(1)
  ROOT c = $T[1,4,4,6] convolution(a, k), window={size=2x2 pad=1_0x0_1}, dim_labels=b01f_01io->b01f,
      feature_group_count=2
})",
                                 t));
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,6,5,5] parameter(0)
  k = $T[12,1,3,3] parameter(1)
  ROOT c = $T[2,12,5,5] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01,
      feature_group_count=6
})",
                                 t));
  }
}

TEST(CodegenConvolution, BatchGroups) {
  for (const std::string& t : {"f32", "f16", "s8", "f64"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[4,5,5,2] parameter(0)
  k = $T[3,3,2,6] parameter(1)
  ROOT c = $T[2,3,3,6] convolution(a, k), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2
})",
                                 t));
  }
}

TEST(CodegenConvolution, NonDefaultLayoutsAndPermutedLabels) {
  for (const std::string& t : {"f32", "bf16", "s32", "f16"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,5,6,3]{1,3,2,0} parameter(0)
  k = $T[3,2,3,4]{0,1,2,3} parameter(1)
  ROOT c = $T[2,3,6,4]{2,3,0,1} convolution(a, k), window={size=3x2 stride=2x1 pad=1_1x0_1},
      dim_labels=b01f_01io->b01f
})",
                                 t));
    // Output feature dimension first and the spatial dimension 0 most minor.
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[5,6,2,3] parameter(0)
  k = $T[4,3,2,3] parameter(1)
  ROOT c = $T[4,5,7,2]{3,2,0,1} convolution(a, k), window={size=3x2 pad=1_1x1_1 rhs_reversal=0x1},
      dim_labels=01bf_o01i->f01b
})",
                                 t));
  }
}

TEST(CodegenConvolution, OneAndThreeAndZeroSpatialDims) {
  for (const std::string& t : {"f32", "bf16", "s32"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,3,10] parameter(0)
  k = $T[4,3,3] parameter(1)
  ROOT c = $T[2,4,4] convolution(a, k), window={size=3 stride=3 pad=2_1}, dim_labels=bf0_oi0->bf0
})",
                                 t));
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,4,3,5,2] parameter(0)
  k = $T[2,2,2,2,3] parameter(1)
  ROOT c = $T[1,5,4,6,3] convolution(a, k), window={size=2x2x2 pad=1_1x1_1x1_1}, dim_labels=b012f_012io->b012f
})",
                                 t));
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[3,4] parameter(0)
  k = $T[4,5] parameter(1)
  ROOT c = $T[3,5] convolution(a, k), dim_labels=bf_io->bf
})",
                                 t));
  }
}

TEST(CodegenConvolution, MixedOperandAndResultTypes) {
  for (const char* types : {"bf16,bf16,f32", "s8,s8,s32", "f32,f32,bf16", "f16,f16,f32", "s32,s32,f32"}) {
    SCOPED_TRACE(types);
    std::string s(types);
    size_t c1 = s.find(','), c2 = s.rfind(',');
    std::string text =
        absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  a = $A[2,5,6,3] parameter(0)
  k = $B[3,2,3,4] parameter(1)
  ROOT c = $R[2,3,6,4] convolution(a, k), window={size=3x2 stride=2x1 pad=1_1x0_1}, dim_labels=b01f_01io->b01f
})",
                            {{"$A", s.substr(0, c1)}, {"$B", s.substr(c1 + 1, c2 - c1 - 1)}, {"$R", s.substr(c2 + 1)}});
    ExpectBothOptLevels(text);
  }
}

TEST(CodegenConvolution, AllPaddingAndEmptyOutputs) {
  for (const std::string& t : {"f32", "bf16", "s32"}) {
    SCOPED_TRACE(t);
    // Most outputs see only padding (zero); the window exceeds the input.
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,2,2,1] parameter(0)
  k = $T[3,3,1,2] parameter(1)
  ROOT c = $T[1,6,6,2] convolution(a, k), window={size=3x3 pad=3_3x3_3}, dim_labels=b01f_01io->b01f
})",
                                 t));
    // Negative padding removes the whole spatial extent: an empty result.
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,2,2,1] parameter(0)
  k = $T[1,1,1,2] parameter(1)
  ROOT c = $T[1,0,2,2] convolution(a, k), window={size=1x1 pad=-1_-1x0_0}, dim_labels=b01f_01io->b01f
})",
                                 t));
    // Zero input features: every output is zero.
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,3,3,0] parameter(0)
  k = $T[2,2,0,2] parameter(1)
  ROOT c = $T[1,2,2,2] convolution(a, k), window={size=2x2}, dim_labels=b01f_01io->b01f
})",
                                 t));
  }
}

TEST(CodegenConvolution, LargerVectorizedF32) {
  // Big enough for the vectorized inner loop (and its remainder) to run; the innermost output dimension is the
  // feature dimension in the first case and a spatial dimension (with padding selects) in the second.
  ExpectBothOptLevels(R"(
HloModule m
ENTRY e {
  a = f32[2,9,9,16] parameter(0)
  k = f32[3,3,16,37] parameter(1)
  ROOT c = f32[2,9,9,37] convolution(a, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  ExpectBothOptLevels(R"(
HloModule m
ENTRY e {
  a = f32[2,5,20,21] parameter(0)
  k = f32[7,5,3,3] parameter(1)
  ROOT c = f32[2,7,10,11] convolution(a, k), window={size=3x3 stride=2x2 pad=1_1x1_2}, dim_labels=bf01_oi01->bf01
})");
}

TEST(CodegenConvolution, InnermostSpatialRanges) {
  // The most minor output dimension is spatial: its loop runs over the in-bounds range of each window position
  // (negative and large padding, strides, window dilation and reversal move the range's ends).
  for (const std::string& t : {"f32", "bf16", "s32", "f64"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,3,6,17] parameter(0)
  k = $T[4,3,2,4] parameter(1)
  ROOT c = $T[2,4,6,4] convolution(a, k), window={size=2x4 stride=1x3 pad=1_0x-2_3 rhs_dilate=1x2 rhs_reversal=0x1},
      dim_labels=bf01_oi01->bf01
})",
                                 t));
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[1,2,4,3] parameter(0)
  k = $T[2,2,3,3] parameter(1)
  ROOT c = $T[1,2,7,6] convolution(a, k), window={size=3x3 stride=1x2 pad=2_3x5_5}, dim_labels=bf01_oi01->bf01
})",
                                 t));
  }
}

TEST(CodegenConvolution, PredAndU32) {
  for (const std::string& t : {"pred", "u32"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
ENTRY e {
  a = $T[2,3,5,6] parameter(0)
  k = $T[4,3,3,2] parameter(1)
  ROOT c = $T[2,4,8,3] convolution(a, k),
      window={size=3x2 stride=1x2 pad=2_-1x1_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0},
      dim_labels=bf01_oi01->bf01
})",
                                 t));
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
