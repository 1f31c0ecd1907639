// dot (batch/contracting dims, mixed precision, integer wrap) and convolution (stride, padding, lhs/rhs dilation,
// window reversal, feature/batch groups, permuted dim_labels) against hand-computed results.
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType BF16 = PrimitiveType::kBF16;
constexpr PrimitiveType S8 = PrimitiveType::kS8;
constexpr PrimitiveType S32 = PrimitiveType::kS32;

std::vector<double> Eval(const std::string& body, std::vector<Literal> args) {
  absl::StatusOr<Literal> r = RunHlo("HloModule m\nENTRY e {\n" + body + "\n}\n", std::move(args));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? Doubles(*r) : std::vector<double>{};
}

TEST(InterpreterDot, MatrixProduct) {
  EXPECT_EQ(Eval("  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                 "  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                 {Arr(F32, {2, 3}, {1, 2, 3, 4, 5, 6}), Arr(F32, {3, 2}, {7, 8, 9, 10, 11, 12})}),
            (std::vector<double>{58, 64, 139, 154}));
  // Contracting the rhs's dim 1 (a . b^T).
  EXPECT_EQ(Eval("  a = f32[2,3] parameter(0)\n  b = f32[2,3] parameter(1)\n"
                 "  ROOT d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}",
                 {Arr(F32, {2, 3}, {1, 2, 3, 4, 5, 6}), Arr(F32, {2, 3}, {1, 0, 0, 0, 1, 1})}),
            (std::vector<double>{1, 5, 4, 11}));
  EXPECT_EQ(Eval("  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n"
                 "  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                 {Vec(F32, {1, 2, 3}), Vec(F32, {4, 5, 6})}),
            (std::vector<double>{32}));
  // No contracting dims: outer product.
  EXPECT_EQ(Eval("  a = f32[2] parameter(0)\n  b = f32[3] parameter(1)\n  ROOT d = f32[2,3] dot(a, b)",
                 {Vec(F32, {1, 2}), Vec(F32, {1, 10, 100})}),
            (std::vector<double>{1, 10, 100, 2, 20, 200}));
}

TEST(InterpreterDot, BatchAndMultipleContractingDims) {
  // Batch dim 0: two independent [1,2]x[2,1] products.
  EXPECT_EQ(Eval("  a = f32[2,1,2] parameter(0)\n  b = f32[2,2,1] parameter(1)\n"
                 "  ROOT d = f32[2,1,1] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                 "lhs_contracting_dims={2}, rhs_contracting_dims={1}",
                 {Arr(F32, {2, 1, 2}, {1, 2, 3, 4}), Arr(F32, {2, 2, 1}, {5, 6, 7, 8})}),
            (std::vector<double>{17, 53}));
  // Batch dim in the middle of the rhs; result is [batch, lhs free, rhs free].
  EXPECT_EQ(Eval("  a = f32[2,3] parameter(0)\n  b = f32[3,2,2] parameter(1)\n"
                 "  ROOT d = f32[2,2] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, "
                 "lhs_contracting_dims={1}, rhs_contracting_dims={0}",
                 {Arr(F32, {2, 3}, {1, 1, 1, 1, 2, 3}), Arr(F32, {3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}),
            // batch 0: sum_k a[0][k]*b[k][0][j] = (1+5+9, 2+6+10); batch 1: (3+2*7+3*11, 4+2*8+3*12)
            (std::vector<double>{15, 18, 50, 56}));
  // Two contracting dims: sum over (i, j) of a[i][j] * b[j][i].
  EXPECT_EQ(Eval("  a = f32[2,3] parameter(0)\n  b = f32[3,2] parameter(1)\n"
                 "  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0,1}, rhs_contracting_dims={1,0}",
                 {Arr(F32, {2, 3}, {1, 2, 3, 4, 5, 6}), Arr(F32, {3, 2}, {1, 1, 1, 1, 1, 1})}),
            (std::vector<double>{21}));
}

TEST(InterpreterDot, MixedPrecisionAndIntegerWrap) {
  EXPECT_EQ(Eval("  a = s8[2] parameter(0)\n  b = s8[2] parameter(1)\n"
                 "  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                 {Ints(S8, {2}, {100, -128}), Ints(S8, {2}, {100, -128})}),
            (std::vector<double>{26384}));
  EXPECT_EQ(Eval("  a = s32[2] parameter(0)\n  b = s32[2] parameter(1)\n"
                 "  ROOT d = s32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                 {Ints(S32, {2}, {65536, 1}), Ints(S32, {2}, {32768, 5})}),
            (std::vector<double>{-2147483643.0}));  // 2^31 + 5 wraps
  // bf16 x bf16 -> f32 accumulates in f32: 256 + 1 is exact.
  EXPECT_EQ(Eval("  a = bf16[2] parameter(0)\n  b = bf16[2] parameter(1)\n"
                 "  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                 {Vec(BF16, {256, 1}), Vec(BF16, {1, 1})}),
            (std::vector<double>{257}));
  // bf16 result: accumulate in f32, round once at the end (256 + 1 + 1 = 258, representable).
  EXPECT_EQ(Eval("  a = bf16[3] parameter(0)\n  b = bf16[3] parameter(1)\n"
                 "  ROOT d = bf16[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}",
                 {Vec(BF16, {256, 1, 1}), Vec(BF16, {1, 1, 1})}),
            (std::vector<double>{258}));
}

// 1-D convolutions over x = [1,2,3,4,5] with kernel [1,10,100], layout b0f / 0io / b0f.
constexpr char kConv1d[] = R"(
  x = f32[1,5,1] parameter(0)
  w = f32[3,1,1] parameter(1)
  ROOT c = f32[1,%d,1] convolution(x, w), window={%s}, dim_labels=b0f_0io->b0f)";

std::vector<double> Conv1d(int out, const std::string& window) {
  char body[512];
  std::snprintf(body, sizeof(body), kConv1d, out, window.c_str());
  return Eval(body, {Arr(F32, {1, 5, 1}, {1, 2, 3, 4, 5}), Arr(F32, {3, 1, 1}, {1, 10, 100})});
}

TEST(InterpreterConvolution, WindowAttributes) {
  EXPECT_EQ(Conv1d(3, "size=3"), (std::vector<double>{321, 432, 543}));
  EXPECT_EQ(Conv1d(3, "size=3 stride=2 pad=1_1"), (std::vector<double>{210, 432, 54}));
  EXPECT_EQ(Conv1d(1, "size=3 rhs_dilate=2"), (std::vector<double>{531}));
  EXPECT_EQ(Conv1d(7, "size=3 lhs_dilate=2"), (std::vector<double>{201, 20, 302, 30, 403, 40, 504}));
  EXPECT_EQ(Conv1d(3, "size=3 rhs_reversal=1"), (std::vector<double>{123, 234, 345}));
  EXPECT_EQ(Conv1d(4, "size=3 pad=-1_2"), (std::vector<double>{432, 543, 54, 5}));
}

TEST(InterpreterConvolution, PermutedDimLabels) {
  EXPECT_EQ(Eval("  x = f32[1,1,5] parameter(0)\n  w = f32[1,3,1] parameter(1)\n"
                 "  ROOT c = f32[3,1,1] convolution(x, w), window={size=3}, dim_labels=fb0_o0i->0fb",
                 {Arr(F32, {1, 1, 5}, {1, 2, 3, 4, 5}), Arr(F32, {1, 3, 1}, {1, 10, 100})}),
            (std::vector<double>{321, 432, 543}));
}

TEST(InterpreterConvolution, FeatureAndBatchGroups) {
  // Depthwise: output feature o reads input feature o only.
  EXPECT_EQ(Eval("  x = f32[1,2,2] parameter(0)\n  w = f32[2,1,2] parameter(1)\n"
                 "  ROOT c = f32[1,1,2] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f, "
                 "feature_group_count=2",
                 {Arr(F32, {1, 2, 2}, {1, 10, 2, 20}), Arr(F32, {2, 1, 2}, {1, 3, 2, 4})}),
            (std::vector<double>{5, 110}));
  // Batch groups: output feature o reduces over batch group o.
  EXPECT_EQ(Eval("  x = f32[2,2,1] parameter(0)\n  w = f32[2,1,2] parameter(1)\n"
                 "  ROOT c = f32[1,1,2] convolution(x, w), window={size=2}, dim_labels=b0f_0io->b0f, "
                 "batch_group_count=2",
                 {Arr(F32, {2, 2, 1}, {1, 2, 3, 4}), Arr(F32, {2, 1, 2}, {1, 1, 1, 1})}),
            (std::vector<double>{3, 7}));
  // 2-D, 2 input features summed.
  EXPECT_EQ(Eval("  x = f32[1,2,2,2] parameter(0)\n  w = f32[2,2,2,1] parameter(1)\n"
                 "  ROOT c = f32[1,1,1,1] convolution(x, w), window={size=2x2}, dim_labels=b01f_01io->b01f",
                 {Arr(F32, {1, 2, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8}), Arr(F32, {2, 2, 2, 1}, {1, 1, 1, 1, 1, 1, 1, 1})}),
            (std::vector<double>{36}));
}

TEST(InterpreterConvolution, IntegerConvolutionWraps) {
  EXPECT_EQ(Eval("  x = s32[1,1,1] parameter(0)\n  w = s32[1,1,1] parameter(1)\n"
                 "  ROOT c = s32[1,1,1] convolution(x, w), window={size=1}, dim_labels=b0f_0io->b0f",
                 {Ints(S32, {1, 1, 1}, {65536}), Ints(S32, {1, 1, 1}, {65537})}),
            (std::vector<double>{65536}));
}

}  // namespace
}  // namespace xlac::interp::testing
