// topk (ties by lower index, NaNs and signed zeros by the total order, smallest-k, layouts, every compute type),
// get-dimension-size / set-dimension-size and batch-norm-{training,inference,grad} compiled with the JIT against
// the interpreter.
#include <cmath>
#include <limits>

#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

std::vector<Literal> One(Literal a) {
  std::vector<Literal> args;
  args.push_back(std::move(a));
  return args;
}

TEST(CodegenTopK, TypesAndShapes) {
  for (const std::string t : {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32", "u64", "pred"}) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[5,7] parameter(0)
  b = $T[2,3,40]{1,2,0} parameter(1)
  c = $T[9] parameter(2)
  x = ($T[5,3], s32[5,3]) topk(a), k=3, largest=true
  y = ($T[2,3,40]{0,1,2}, s32[2,3,40]) topk(b), k=40, largest=false
  z = ($T[9], s32[9]) topk(c), k=9
  w = ($T[1], s32[1]) topk(c), k=1, largest=false
  ROOT t = (($T[5,3], s32[5,3]), ($T[2,3,40]{0,1,2}, s32[2,3,40]), ($T[9], s32[9]), ($T[1], s32[1])) tuple(x, y, z, w)
})",
                                      t));
  }
}

TEST(CodegenTopK, TiesNaNsAndSignedZeros) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values = {1.5f, -0.0f, nan, 0.0f, -inf, -nan, 3.0f, inf, -1.0f, 0.0f, -0.0f, nan, 1.5f, 3.0f};
  for (const std::string largest : {"true", "false"}) {
    Literal x(Shape::Array(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
    for (size_t i = 0; i < values.size(); ++i) x.Set<float>(static_cast<int64_t>(i), values[i]);
    ExpectMatchesInterpreter(absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  a = f32[14] parameter(0)
  ROOT t = (f32[10], s32[10]) topk(a), k=10, largest=$L
})",
                                                 {{"$L", largest}}),
                             One(std::move(x)));
  }
  // Many equal integers: ties keep index order.
  Literal y(Shape::Array(PrimitiveType::kS32, {3, 50}));
  for (int64_t i = 0; i < 150; ++i) y.Set<int32_t>(i, static_cast<int32_t>((i * 7) % 3));
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = s32[3,50] parameter(0)
  ROOT t = (s32[3,20], s32[3,20]) topk(a), k=20, largest=true
})",
                           One(std::move(y)));
}

TEST(CodegenMiscOps, DimensionSizes) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[6,4] parameter(0)
  n = s32[] constant(3)
  d = f32[<=6,4] set-dimension-size(a, n), dimensions={0}
  g0 = s32[] get-dimension-size(d), dimensions={0}
  g1 = s32[] get-dimension-size(a), dimensions={1}
  c = f32[6,4]{0,1} copy(a)
  d2 = f32[6,<=4]{1,0} set-dimension-size(c, n), dimensions={1}
  ROOT t = (f32[<=6,4], s32[], s32[], f32[6,<=4]{1,0}) tuple(d, g0, g1, d2)
})");
}

TEST(CodegenBatchNorm, TrainingInferenceGrad) {
  for (const std::string t : {"f32", "f64"}) {
    for (int feature : {0, 1, 3}) {
      SCOPED_TRACE(t + " feature " + std::to_string(feature));
      std::vector<int64_t> dims = {3, 5, 2, 4};
      std::string x = t + "[3,5,2,4]";
      std::string f = t + "[" + std::to_string(dims[feature]) + "]";
      ExpectMatchesInterpreter(absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  x = $X parameter(0)
  scale = $F parameter(1)
  offset = $F parameter(2)
  mean = $F parameter(3)
  var0 = $F parameter(4)
  var = $F abs(var0)
  dy = $X parameter(5)
  tr = ($X, $F, $F) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=$I
  infer = $X batch-norm-inference(x, scale, offset, mean, var), epsilon=0.01, feature_index=$I
  gr = ($X, $F, $F) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=$I
  ROOT t = (($X, $F, $F), $X, ($X, $F, $F)) tuple(tr, infer, gr)
})",
                                                   {{"$X", x}, {"$F", f}, {"$I", std::to_string(feature)}}));
    }
  }
}

TEST(CodegenBatchNorm, Layout) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,3,5]{0,2,1} parameter(0)
  scale = f32[3] parameter(1)
  offset = f32[3] parameter(2)
  ROOT tr = (f32[4,3,5]{1,0,2}, f32[3], f32[3]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
})");
}

// Large enough for the features to run on the device's threads (and for each feature's sums to be long).
TEST(CodegenBatchNorm, ParallelFeatures) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[6,24,20,30] parameter(0)
  scale = f32[24] parameter(1)
  offset = f32[24] parameter(2)
  var0 = f32[24] parameter(3)
  var = f32[24] abs(var0)
  dy = f32[6,24,20,30] parameter(4)
  tr = (f32[6,24,20,30], f32[24], f32[24]) batch-norm-training(x, scale, offset), epsilon=0.001, feature_index=1
  mean = f32[24] get-tuple-element(tr), index=1
  gr = (f32[6,24,20,30], f32[24], f32[24]) batch-norm-grad(x, scale, mean, var, dy), epsilon=0.001, feature_index=1
  infer = f32[6,24,20,30]{1,3,2,0} batch-norm-inference(x, scale, offset, mean, var), epsilon=0.01, feature_index=1
  ROOT t = ((f32[6,24,20,30], f32[24], f32[24]), (f32[6,24,20,30], f32[24], f32[24]), f32[6,24,20,30]{1,3,2,0}) tuple(tr, gr, infer)
})");
}

// Batch norms of different sizes share one parallel loop (its sizes and strides are values of the kernel, so LLVM
// merges the loops before optimizing them); a layout whose spatial dimensions are not contiguous keeps the loop nest
// of its own.
TEST(CodegenBatchNorm, SizesShareOneLoop) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[6,24,20,30] parameter(0)
  s = f32[24] parameter(1)
  o = f32[24] parameter(2)
  y = f32[8,32,16,16] parameter(3)
  t = f32[32] parameter(4)
  p = f32[32] parameter(5)
  z = f32[6,24,20,30]{2,1,3,0} parameter(6)
  a = (f32[6,24,20,30], f32[24], f32[24]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
  b = (f32[8,32,16,16], f32[32], f32[32]) batch-norm-training(y, t, p), epsilon=0.001, feature_index=1
  c = (f32[6,24,20,30]{2,1,3,0}, f32[24], f32[24]) batch-norm-training(z, s, o), epsilon=0.001, feature_index=1
  ROOT r = ((f32[6,24,20,30], f32[24], f32[24]), (f32[8,32,16,16], f32[32], f32[32]), (f32[6,24,20,30]{2,1,3,0}, f32[24], f32[24])) tuple(a, b, c)
})";
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.keep_llvm_ir = true;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  const std::string& ir = (*exe)->llvm_ir();
  EXPECT_EQ(CountDefinitions(ir, "xlac\\.par\\.batchnorm"), 2) << ir;
  ExpectMatchesInterpreter(text);
}

Literal Sizes(std::vector<int64_t> dims, std::vector<int32_t> values) {
  Literal s(Shape::Array(PrimitiveType::kS32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) s.Set<int32_t>(static_cast<int64_t>(i), values[i]);
  return s;
}

void ExpectRaggedDot(const std::string& text, const Shape& lhs, const Shape& rhs, Literal sizes) {
  std::vector<Literal> args;
  args.push_back(interp::MakeRandomLiteral(lhs, 3));
  args.push_back(interp::MakeRandomLiteral(rhs, 4));
  args.push_back(std::move(sizes));
  ExpectMatchesInterpreter(text, std::move(args));
}

TEST(CodegenRaggedDot, NonContractingRows) {
  for (const std::vector<int32_t>& sizes : std::vector<std::vector<int32_t>>{{4, 0, 5}, {-2, 20, 1}, {0, 0, 0}}) {
    ExpectRaggedDot(R"(
HloModule m
ENTRY e {
  a = f32[11,5] parameter(0)
  b = f32[3,5,7] parameter(1)
  c = s32[3] parameter(2)
  ROOT d = f32[11,7] ragged-dot(a, b, c), lhs_contracting_dims={1}, rhs_contracting_dims={1}, lhs_ragged_dims={0}, rhs_group_dims={0}
})",
                    Shape::Array(PrimitiveType::kF32, {11, 5}), Shape::Array(PrimitiveType::kF32, {3, 5, 7}),
                    Sizes({3}, sizes));
  }
}

TEST(CodegenRaggedDot, PerBatchGroups) {
  ExpectRaggedDot(R"(
HloModule m
ENTRY e {
  a = s32[2,8,5] parameter(0)
  b = s32[2,3,5,4] parameter(1)
  c = s32[2,3] parameter(2)
  ROOT d = s32[2,8,4] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, rhs_group_dims={1}
})",
                  Shape::Array(PrimitiveType::kS32, {2, 8, 5}), Shape::Array(PrimitiveType::kS32, {2, 3, 5, 4}),
                  Sizes({2, 3}, {2, 3, 1, 0, 7, 5}));
}

TEST(CodegenRaggedDot, ContractingAndBatch) {
  ExpectRaggedDot(R"(
HloModule m
ENTRY e {
  a = f32[4,10] parameter(0)
  b = f32[10,6] parameter(1)
  c = s32[3] parameter(2)
  ROOT d = f32[3,4,6] ragged-dot(a, b, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}, lhs_ragged_dims={1}
})",
                  Shape::Array(PrimitiveType::kF32, {4, 10}), Shape::Array(PrimitiveType::kF32, {10, 6}),
                  Sizes({3}, {3, 5, 1}));
  ExpectRaggedDot(R"(
HloModule m
ENTRY e {
  a = f64[2,4,5] parameter(0)
  b = f64[2,5,3] parameter(1)
  c = s32[2] parameter(2)
  ROOT d = f64[2,4,3] ragged-dot(a, b, c), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}, lhs_ragged_dims={0}
})",
                  Shape::Array(PrimitiveType::kF64, {2, 4, 5}), Shape::Array(PrimitiveType::kF64, {2, 5, 3}),
                  Sizes({2}, {1, 1}));
}

}  // namespace
}  // namespace xlac::codegen::testing
