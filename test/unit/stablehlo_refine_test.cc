// Shape refinement of shape-polymorphic StableHLO (frontend/stablehlo/lower_refine.cc): the integer semantics of the
// shape arithmetic folded while lowering, per-call specialization, and the shape_assertion message format. The
// end-to-end runs (values against numpy) are the lit tests test/lit/stablehlo/shape-poly-*.mlir.
#include <string>
#include <vector>

#include "frontend/stablehlo/lower_impl.h"
#include "frontend/stablehlo/parser.h"
#include "gtest/gtest.h"
#include "ir/module.h"
#include "passes/verifier.h"
#include "stablehlo_test_util.h"

namespace xlac {
namespace {

using stablehlo_testing::CountOp;

struct Refined {
  std::unique_ptr<Module> module;
  std::string errors;
};

Refined Refine(std::string_view text, std::vector<Shape> shapes) {
  SourceFile file("test.mlir", text);
  DiagnosticEngine diags;
  StableHloParseOptions options;
  options.entry_argument_shapes = std::move(shapes);
  Refined out;
  out.module = ParseStableHloModule(file, diags, options);
  if (out.module != nullptr && !VerifyModule(*out.module, diags)) out.module.reset();
  out.errors = diags.Render(file);
  return out;
}

int CountComputations(const Module& m, std::string_view prefix) {
  int n = 0;
  for (const auto& comp : m.computations()) n += comp->name().starts_with(prefix) ? 1 : 0;
  return n;
}

TEST(StableHloRefineTest, AssertionMessagePlaceholders) {
  using shlo::FormatShapeAssertionMessage;
  EXPECT_EQ(FormatShapeAssertionMessage("'b' = {0} (= {1}), again {0}", {3, 7}), "'b' = 3 (= 7), again 3");
  // llvm::formatv: `{{` is a brace, options after the index are ignored, unknown indices stay as written.
  EXPECT_EQ(FormatShapeAssertionMessage("{{0} {0:x} {0,5} {2} {x}", {4}), "{0} 4 4 {2} {x}");
  EXPECT_EQ(FormatShapeAssertionMessage("value {0}", {std::nullopt}), "value ?");
  EXPECT_EQ(FormatShapeAssertionMessage("unterminated {0", {1}), "unterminated {0");
}

// Each size is computed the way HLO defines the integer ops (checked against numpy: np.trunc(-7 / 2) + 5,
// np.fmod(-7, 3) + 2, np.int32(300).astype(np.int8), np.uint32(-1) > 5), and x / 0 = -1 as HLO specifies.
TEST(StableHloRefineTest, ShapeArithmeticFollowsHloIntegerSemantics) {
  Refined r = Refine(R"(
    func.func @main(%a: tensor<?xf32>) -> tensor<?x?x?x?x?xf32> {
      %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?xf32>) -> tensor<i32>
      %m7 = stablehlo.constant dense<-7> : tensor<i32>
      %m1 = stablehlo.constant dense<-1> : tensor<i32>
      %c0 = stablehlo.constant dense<0> : tensor<i32>
      %c2 = stablehlo.constant dense<2> : tensor<i32>
      %c3 = stablehlo.constant dense<3> : tensor<i32>
      %c5 = stablehlo.constant dense<5> : tensor<i32>
      %c7 = stablehlo.constant dense<7> : tensor<i32>
      %c9 = stablehlo.constant dense<9> : tensor<i32>
      %c100 = stablehlo.constant dense<100> : tensor<i32>
      %q = stablehlo.divide %m7, %c2 : tensor<i32>
      %d0 = stablehlo.add %q, %c5 : tensor<i32>
      %r = stablehlo.remainder %m7, %c3 : tensor<i32>
      %d1 = stablehlo.add %r, %c2 : tensor<i32>
      %big = stablehlo.multiply %n, %c100 : tensor<i32>
      %w = stablehlo.convert %big : (tensor<i32>) -> tensor<i8>
      %d2 = stablehlo.convert %w : (tensor<i8>) -> tensor<i32>
      %u = stablehlo.convert %m1 : (tensor<i32>) -> tensor<ui32>
      %u5 = stablehlo.constant dense<5> : tensor<ui32>
      %gt = stablehlo.compare  GT, %u, %u5,  UNSIGNED : (tensor<ui32>, tensor<ui32>) -> tensor<i1>
      %d3 = stablehlo.select %gt, %c3, %c9 : tensor<i1>, tensor<i32>
      %z = stablehlo.divide %c7, %c0 : tensor<i32>
      %d4 = stablehlo.add %z, %c3 : tensor<i32>
      %e0 = stablehlo.reshape %d0 : (tensor<i32>) -> tensor<1xi32>
      %e1 = stablehlo.reshape %d1 : (tensor<i32>) -> tensor<1xi32>
      %e2 = stablehlo.reshape %d2 : (tensor<i32>) -> tensor<1xi32>
      %e3 = stablehlo.reshape %d3 : (tensor<i32>) -> tensor<1xi32>
      %e4 = stablehlo.reshape %d4 : (tensor<i32>) -> tensor<1xi32>
      %s = stablehlo.concatenate %e0, %e1, %e2, %e3, %e4, dim = 0 : (tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<5xi32>
      %i = stablehlo.dynamic_iota %s, dim = 0 : (tensor<5xi32>) -> tensor<?x?x?x?x?xf32>
      return %i : tensor<?x?x?x?x?xf32>
    })",
                     {Shape(PrimitiveType::kF32, {3})});
  ASSERT_NE(r.module, nullptr) << r.errors;
  EXPECT_EQ(ShapeToString(r.module->entry_computation()->root()->shape(), false), "f32[2,1,44,3,2]");
  EXPECT_EQ(CountOp(*r.module, Opcode::kGetDimensionSize), 0);
}

constexpr char kTwoCalls[] = R"(
  func.func @main(%u: tensor<?xf32>, %v: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
    %du = stablehlo.get_dimension_size %u, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %dv = stablehlo.get_dimension_size %v, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %0 = call @f(%du, %u) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
    %1 = call @f(%dv, %v) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
    return %0, %1 : tensor<?xf32>, tensor<?xf32>
  }
  func.func private @f(%d: tensor<i32>, %x: tensor<?xf32>) -> tensor<?xf32> {
    %s = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>
    %iota = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
    %r = stablehlo.add %x, %iota : tensor<?xf32>
    return %r : tensor<?xf32>
  })";

TEST(StableHloRefineTest, OneSpecializationPerDistinctCall) {
  Refined same = Refine(kTwoCalls, {Shape(PrimitiveType::kF32, {4}), Shape(PrimitiveType::kF32, {4})});
  ASSERT_NE(same.module, nullptr) << same.errors;
  EXPECT_EQ(CountComputations(*same.module, "f"), 1);
  Refined different = Refine(kTwoCalls, {Shape(PrimitiveType::kF32, {3}), Shape(PrimitiveType::kF32, {5})});
  ASSERT_NE(different.module, nullptr) << different.errors;
  EXPECT_EQ(CountComputations(*different.module, "f"), 2);
  EXPECT_EQ(ShapeToString(different.module->entry_computation()->root()->shape(), false), "(f32[3], f32[5])");
}

TEST(StableHloRefineTest, StaticModulesIgnoreTheShapes) {
  // xla-run passes its inputs' shapes for every module; a static one keeps its own (BuildArguments checks them).
  Refined r = Refine(R"(
    func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      return %a : tensor<2xf32>
    })",
                     {Shape(PrimitiveType::kF32, {7, 7}), Shape(PrimitiveType::kF32, {1})});
  ASSERT_NE(r.module, nullptr) << r.errors;
  EXPECT_EQ(ShapeToString(r.module->entry_computation()->parameter(0)->shape(), false), "f32[2]");
}

TEST(StableHloRefineTest, ElementTypeOfGivenShapeIsOptional) {
  // xla-run does not know how a .npy file's dtype maps to the parameter's type before parsing: it gives kInvalid.
  Shape dims;
  dims.dimensions = {2, 3};
  dims.dynamic_dimensions = {false, false};
  Refined r = Refine(R"(
    func.func @main(%a: tensor<?x3xbf16>) -> tensor<?x3xbf16> {
      return %a : tensor<?x3xbf16>
    })",
                     {dims});
  ASSERT_NE(r.module, nullptr) << r.errors;
  EXPECT_EQ(ShapeToString(r.module->entry_computation()->parameter(0)->shape(), false), "bf16[2,3]");
}

}  // namespace
}  // namespace xlac
