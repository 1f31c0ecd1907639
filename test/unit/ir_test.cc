// Unit tests for the IR core: types, shapes, float formats, literals, use lists and mutation API.
#include <cmath>

#include "gtest/gtest.h"
#include "ir/float_types.h"
#include "ir/module.h"

namespace xlac {
namespace {

TEST(PrimitiveType, NamesRoundTrip) {
  for (std::string_view name : {"pred", "s2", "s4", "u4", "f16", "bf16", "f8e4m3fn", "f8e8m0fnu", "f4e2m1fn",
                                "f6e3m2fn", "c128", "token", "opaque"}) {
    auto type = ParsePrimitiveType(name);
    ASSERT_TRUE(type.has_value()) << name;
    EXPECT_EQ(PrimitiveTypeName(*type), name);
  }
  EXPECT_FALSE(ParsePrimitiveType("f17").has_value());
  EXPECT_FALSE(ParsePrimitiveType("tuple").has_value());
  EXPECT_EQ(ByteWidth(PrimitiveType::kS4), 1);
  EXPECT_EQ(ByteWidth(PrimitiveType::kC64), 8);
}

TEST(Opcode, AllOpcodesRoundTrip) {
  EXPECT_EQ(kNumOpcodes, 136);
  for (int i = 0; i < kNumOpcodes; ++i) {
    Opcode op = static_cast<Opcode>(i);
    EXPECT_EQ(ParseOpcode(OpcodeName(op)), op);
  }
  EXPECT_EQ(OpcodeName(Opcode::kExp), "exponential");
  EXPECT_EQ(OpcodeArity(Opcode::kAdd), 2);
  EXPECT_FALSE(OpcodeArity(Opcode::kTuple).has_value());
}

TEST(Shape, Printing) {
  Shape s = Shape::Array(PrimitiveType::kF32, {2, 3});
  EXPECT_EQ(ShapeToString(s), "f32[2,3]");
  s.EnsureLayout();
  EXPECT_EQ(ShapeToString(s), "f32[2,3]{1,0}");
  EXPECT_EQ(ShapeToString(s, false), "f32[2,3]");
  s.layout->tiles = {Tile{{8, 128}}, Tile{{2, 1}}};
  s.layout->memory_space = 1;
  EXPECT_EQ(ShapeToString(s), "f32[2,3]{1,0:T(8,128)(2,1)S(1)}");
  Shape d = Shape::Array(PrimitiveType::kPred, {4, Shape::kUnboundedSize});
  d.dynamic_dimensions = {true, true};
  EXPECT_EQ(ShapeToString(d), "pred[<=4,?]");
  Shape scalar = Shape::Scalar(PrimitiveType::kF32);
  scalar.EnsureLayout();
  EXPECT_EQ(ShapeToString(scalar), "f32[]");
  Shape t = Shape::Tuple({scalar, Shape::Token()});
  EXPECT_EQ(ShapeToString(t), "(f32[], token[])");
  EXPECT_EQ(t.Subshape({1})->element_type, PrimitiveType::kToken);
  EXPECT_EQ(t.Subshape({2}), nullptr);
}

TEST(Shape, ElementCountOverflowIsDetected) {
  Shape s = Shape::Array(PrimitiveType::kF32, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_FALSE(s.ElementCount().has_value());
  Shape t = Shape::Array(PrimitiveType::kF64, {int64_t{1} << 61});
  EXPECT_TRUE(t.ElementCount().has_value());
  EXPECT_FALSE(t.ByteSizeOf().has_value());
}

TEST(FloatTypes, Half) {
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF16, 1.0), 0x3C00u);
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF16, 65504.0), 0x7BFFu);
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF16, 65520.0), 0x7C00u);  // tie rounds to even = inf
  EXPECT_TRUE(OverflowsFloatType(PrimitiveType::kF16, -65520));
  EXPECT_FALSE(OverflowsFloatType(PrimitiveType::kF16, 65504));
  EXPECT_FALSE(OverflowsFloatType(PrimitiveType::kBF16, -65505));
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF16, 0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kBF16, 1.0), 0x3F80u);
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kBF16, -0.0), 0x8000u);
  EXPECT_TRUE(std::isnan(FloatBitsToDouble(PrimitiveType::kBF16, 0x7FC0)));
}

TEST(FloatTypes, Float8AndSmaller) {
  // f8e4m3fn: max 448, no inf; overflow becomes NaN (0x7F).
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF8E4M3FN, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(FloatBitsToDouble(PrimitiveType::kF8E4M3FN, 0x7F)));
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF8E4M3FN, 1000.0), 0x7Fu);
  // fnuz: 0x80 is the NaN, no negative zero.
  EXPECT_TRUE(std::isnan(FloatBitsToDouble(PrimitiveType::kF8E5M2FNUZ, 0x80)));
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF8E5M2FNUZ, -0.0), 0x00u);
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF8E5M2, 0x7B), 57344.0);
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF8E8M0FNU, 127), 1.0);
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF8E8M0FNU, 0.25), 125u);
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF4E2M1FN, 0x7), 6.0);
  EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF4E2M1FN, 100.0), 0x7u);  // saturates
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF6E3M2FN, 0x1F), 28.0);
  EXPECT_EQ(FloatBitsToDouble(PrimitiveType::kF6E2M3FN, 0x1F), 7.5);
  // Every f8e4m3 value round-trips.
  for (uint64_t bits = 0; bits < 256; ++bits) {
    double v = FloatBitsToDouble(PrimitiveType::kF8E4M3, bits);
    if (std::isnan(v)) continue;
    EXPECT_EQ(DoubleToFloatBits(PrimitiveType::kF8E4M3, v), bits) << bits;
  }
}

TEST(FloatTypes, NanPayloads) {
  EXPECT_EQ(NanWithPayload(PrimitiveType::kBF16, true, 0x7f), 0xFFFFu);
  EXPECT_FALSE(NanWithPayload(PrimitiveType::kBF16, false, 0x3ff).has_value());
  EXPECT_FALSE(NanWithPayload(PrimitiveType::kF8E4M3B11FNUZ, false, 1).has_value());
  EXPECT_TRUE(IsDefaultNanPayload(PrimitiveType::kF32, 0x400000));
  EXPECT_EQ(NanPayload(PrimitiveType::kBF16, 0xFFBF), 0x3Fu);
}

TEST(Literal, TypedAccess) {
  Literal s4(Shape::Array(PrimitiveType::kS4, {3}));
  s4.SetFromInt64(0, -8);
  s4.SetFromInt64(1, 7);
  s4.SetFromInt64(2, 9);  // wraps to -7
  EXPECT_EQ(s4.GetAsInt64(0), -8);
  EXPECT_EQ(s4.GetAsInt64(1), 7);
  EXPECT_EQ(s4.GetAsInt64(2), -7);
  Literal bf(Shape::Array(PrimitiveType::kBF16, {1}));
  bf.SetFromDouble(0, 1.5);
  EXPECT_EQ(bf.Get<uint16_t>(0), 0x3FC0);
  EXPECT_EQ(bf.GetAsDouble(0), 1.5);
  Literal copy = bf;
  EXPECT_EQ(copy, bf);
  copy.SetFromDouble(0, 2.0);
  EXPECT_FALSE(copy == bf);
  Literal unknown = Literal::CreateUnknown(Shape::Array(PrimitiveType::kF32, {1000000}));
  EXPECT_TRUE(unknown.is_unknown());
  EXPECT_EQ(unknown.byte_size(), 0);
}

TEST(Literal, CopiesShareBytesUntilOneWrites) {
  Literal a(Shape::Array(PrimitiveType::kF32, {4}));
  for (int64_t i = 0; i < 4; ++i) a.Set<float>(i, static_cast<float>(i));
  Literal b = a;
  EXPECT_TRUE(b.SharesBytesWith(a));
  EXPECT_EQ(b.raw_data(), a.raw_data());
  // A write through either copy leaves the other as it was.
  b.Set<float>(1, 10.0f);
  EXPECT_FALSE(b.SharesBytesWith(a));
  EXPECT_EQ(a.Get<float>(1), 1.0f);
  EXPECT_EQ(b.Get<float>(1), 10.0f);
  EXPECT_EQ(b.Get<float>(3), 3.0f);
  Literal c = a;
  c.mutable_raw_data()[0] = 0xff;
  EXPECT_EQ(a.Get<float>(0), 0.0f);
  Literal d = a;
  a.SetFromDouble(2, -1.0);  // the original writing unshares too
  EXPECT_EQ(d.Get<float>(2), 2.0f);
  EXPECT_EQ(a.Get<float>(2), -1.0f);
  // The only holder writes in place.
  const uint8_t* before = a.raw_data();
  a.Set<float>(0, 5.0f);
  EXPECT_EQ(a.raw_data(), before);
  // Moves and tuples carry the shared bytes along; equality compares bytes, shared or not.
  Literal tuple = Literal::CreateTuple({d, Literal(d)});
  EXPECT_TRUE(tuple.tuple_elements()[0].SharesBytesWith(d));
  EXPECT_EQ(tuple.tuple_elements()[0], tuple.tuple_elements()[1]);
  Literal zero_sized(Shape::Array(PrimitiveType::kF32, {0}));
  EXPECT_EQ(zero_sized, Literal(zero_sized));
}

TEST(IotaList, Transposed) {
  IotaList iota{{4, 2}, {2, 4}, {1, 0}};
  EXPECT_EQ(iota.ToList(), (std::vector<int64_t>{0, 4, 1, 5, 2, 6, 3, 7}));
  ReplicaGroups groups;
  groups.iota = IotaList{{2, 2}, {4}, {}};
  EXPECT_EQ(groups.Expanded(), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
}

class ComputationTest : public ::testing::Test {
 protected:
  Shape f32_ = Shape::Array(PrimitiveType::kF32, {4});
};

TEST_F(ComputationTest, UseListsStayConsistent) {
  Module module("m");
  auto comp = std::make_unique<Computation>("entry");
  Computation* c = module.AddEntryComputation(std::move(comp));
  Instruction* p0 = c->AddInstruction(Instruction::CreateParameter(0, "p0", f32_));
  Instruction* p1 = c->AddInstruction(Instruction::CreateParameter(1, "p1", f32_));
  Instruction* add = c->AddInstruction(Instruction::Create(Opcode::kAdd, "add", f32_, {p0, p0}));
  Instruction* mul = c->AddInstruction(Instruction::Create(Opcode::kMultiply, "mul", f32_, {add, p1}));
  c->set_root(mul);
  EXPECT_EQ(p0->users(), std::vector<Instruction*>{add});  // one entry despite two uses
  add->ReplaceOperandWith(0, p1);
  EXPECT_EQ(p0->users(), std::vector<Instruction*>{add});
  add->ReplaceOperandWith(1, p1);
  EXPECT_TRUE(p0->users().empty());
  EXPECT_EQ(p1->users(), (std::vector<Instruction*>{mul, add}));

  Instruction* neg = c->AddInstruction(Instruction::Create(Opcode::kNegate, "neg", f32_, {mul}));
  Instruction* abs = c->AddInstruction(Instruction::Create(Opcode::kAbs, "abs", f32_, {add}));
  c->set_root(neg);
  mul->ReplaceAllUsesWith(abs);
  EXPECT_EQ(neg->operand(0), abs);
  EXPECT_TRUE(mul->users().empty());
  EXPECT_EQ(abs->users(), std::vector<Instruction*>{neg});
  neg->ReplaceAllUsesWith(abs);  // root moves with its uses
  EXPECT_EQ(c->root(), abs);
  EXPECT_FALSE(c->RemoveInstruction(add).ok());  // abs still uses add
  EXPECT_FALSE(c->RemoveInstruction(p0).ok());   // parameters stay
  EXPECT_TRUE(c->RemoveInstruction(neg).ok());
  EXPECT_TRUE(c->RemoveInstruction(mul).ok());
  EXPECT_EQ(p1->users(), std::vector<Instruction*>{add});
  // Ids come from one module-wide counter (the computation took id 0): deterministic, not pointer-based.
  EXPECT_LT(p0->unique_id(), abs->unique_id());
}

TEST_F(ComputationTest, RemoveAndCloneAndPostOrder) {
  Module module("m");
  Computation* c = module.AddEntryComputation(std::make_unique<Computation>("entry"));
  Instruction* p0 = c->AddInstruction(Instruction::CreateParameter(0, "p0", f32_));
  Instruction* dead = c->AddInstruction(Instruction::Create(Opcode::kExp, "dead", f32_, {p0}));
  Instruction* dead2 = c->AddInstruction(Instruction::Create(Opcode::kLog, "dead2", f32_, {dead}));
  Instruction* neg = c->AddInstruction(Instruction::Create(Opcode::kNegate, "neg", f32_, {p0}));
  c->set_root(neg);
  dead->AddControlDependencyTo(neg);
  ASSERT_TRUE(c->RemoveInstructionAndUnusedOperands(dead2).ok());
  // `dead` has a control successor, so it stays.
  EXPECT_EQ(c->instruction_count(), 3);
  std::unique_ptr<Computation> clone = c->Clone("entry.clone");
  ASSERT_EQ(clone->instruction_count(), 3);
  EXPECT_EQ(clone->root()->name(), "neg");
  EXPECT_NE(clone->root(), neg);
  EXPECT_EQ(clone->root()->control_predecessors().size(), 1u);
  EXPECT_EQ(clone->root()->control_predecessors()[0]->name(), "dead");
  EXPECT_EQ(clone->parameter(0)->name(), "p0");
  std::vector<Instruction*> post = c->MakePostOrder();
  ASSERT_EQ(post.size(), 3u);
  EXPECT_EQ(post.back(), neg);
}

TEST(Module, UniqueNamesAndPostOrder) {
  Module module("m");
  Computation* callee = module.AddComputation(std::make_unique<Computation>("callee"));
  Shape s = Shape::Scalar(PrimitiveType::kF32);
  Instruction* cp = callee->AddInstruction(Instruction::CreateParameter(0, "add", s));
  callee->set_root(cp);
  Computation* entry = module.AddEntryComputation(std::make_unique<Computation>("entry"));
  Instruction* p = entry->AddInstruction(Instruction::CreateParameter(0, "p", s));
  Instruction* call = entry->AddInstruction(Instruction::Create(Opcode::kCall, "call", s, {p}));
  call->set_called_computations({callee});
  entry->set_root(call);
  EXPECT_EQ(module.UniqueInstructionName("add"), "add.1");
  EXPECT_EQ(module.UniqueInstructionName("add"), "add.2");
  EXPECT_EQ(module.UniqueInstructionName("mul"), "mul");
  EXPECT_EQ(module.UniqueComputationName("entry"), "entry.1");
  std::vector<Computation*> order = module.MakeComputationPostOrder();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], callee);
  EXPECT_FALSE(module.RemoveComputation(callee).ok());
}

TEST(Diagnostics, RendersCaret) {
  SourceFile file("x.hlo", "line one\n  bad token here\n", 0);
  DiagnosticEngine diags;
  diags.Error({2, 3}, "unexpected token");
  EXPECT_EQ(diags.Render(file), "x.hlo:2:3: error: unexpected token\n  bad token here\n  ^\n");
  SourceFile chunk("x.hlo", "a\nb\n", 10);
  EXPECT_EQ(chunk.Line(12), "b");
}

}  // namespace
}  // namespace xlac
