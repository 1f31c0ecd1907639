// Buffer shapes b(...): the Shape field, its printing and comparisons, the parser, and the backends' refusal.
#include <string>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/buffer_shapes.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xlac {
namespace {

TEST(BufferShapeTest, DistinctFromItsElementArray) {
  Shape array = Shape::Array(PrimitiveType::kF32, {4, 8});
  Shape buffer = Shape::Buffer(array);
  EXPECT_TRUE(buffer.IsBuffer());
  EXPECT_FALSE(buffer.IsArray());
  EXPECT_FALSE(buffer.IsTuple());
  EXPECT_FALSE(array.IsBuffer());
  EXPECT_NE(buffer, array);
  EXPECT_FALSE(buffer.Compatible(array));
  EXPECT_FALSE(array.Compatible(buffer));
  EXPECT_TRUE(buffer.Compatible(Shape::Buffer(array)));
  EXPECT_EQ(buffer, Shape::Buffer(array));
  EXPECT_NE(buffer, Shape::Buffer(Shape::Array(PrimitiveType::kF32, {4, 9})));
  EXPECT_EQ(buffer.BufferElementShape(), array);
}

TEST(BufferShapeTest, PrintsWithTheLayoutInside) {
  Shape buffer = Shape::Buffer(Shape::Array(PrimitiveType::kS32, {2, 3}));
  EXPECT_EQ(ShapeToString(buffer), "b(s32[2,3])");
  buffer.EnsureLayout();
  EXPECT_EQ(ShapeToString(buffer), "b(s32[2,3]{1,0})");
  EXPECT_EQ(ShapeToString(buffer, /*print_layout=*/false), "b(s32[2,3])");
  Shape tuple = Shape::Tuple({Shape::Scalar(PrimitiveType::kF32), buffer});
  EXPECT_EQ(ShapeToString(tuple), "(f32[], b(s32[2,3]{1,0}))");
  EXPECT_TRUE(tuple.ContainsBuffer());
  EXPECT_FALSE(Shape::Tuple({Shape::Scalar(PrimitiveType::kF32)}).ContainsBuffer());
}

TEST(BufferShapeTest, ExistingShapesAreUnchanged) {
  Shape array = Shape::Array(PrimitiveType::kF32, {3});
  EXPECT_TRUE(array.IsArray());
  EXPECT_FALSE(array.ContainsBuffer());
  EXPECT_EQ(ShapeToString(array), "f32[3]");
  EXPECT_EQ(ShapeToString(Shape::Token()), "token[]");
}

TEST(BufferShapeTest, ParsedModuleIsRejectedByBackendsWithLocation) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  p = f32[4] parameter(0)
  pin = b(f32[4]{0}) custom-call(p), custom_call_target="Pin", output_to_operand_aliasing={{}: (0, {})}
  ROOT unpin = f32[4] custom-call(pin), custom_call_target="Unpin", output_to_operand_aliasing={{}: (0, {})}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const Instruction* pin = (*module)->entry_computation()->root()->operand(0);
  EXPECT_EQ(ShapeToString(pin->shape()), "b(f32[4]{0})");
  absl::Status status = RejectBufferShapes(**module, "the JIT");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_EQ(std::string(status.message()).substr(0, 60),
            "instruction 'pin' at line 4, column 3 (computation 'e') has ");

  absl::StatusOr<std::unique_ptr<Module>> plain =
      ParseHloModule("HloModule m\nENTRY e {\n  ROOT p = f32[4] parameter(0)\n}\n");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(RejectBufferShapes(**plain, "the JIT").ok());
}

}  // namespace
}  // namespace xlac
