// The f64-reference pass (passes/f64_reference.h) on structures the lit test does not reach: loops carrying tuples
// through called computations, kept custom-calls, and what it refuses.
#include "passes/f64_reference.h"

#include <cmath>
#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

std::unique_ptr<Module> Parse(const char* text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// A while loop carrying (s32, bf16[8]) whose body divides by 3 and takes exp: in bf16 every step rounds, in the
// reference none does.
constexpr char kLoop[] = R"(HloModule loop
cond {
  p = (s32[], bf16[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(6)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], bf16[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = bf16[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  three = bf16[] constant(3)
  t = bf16[8] broadcast(three), dimensions={}
  w = bf16[8] divide(v, t)
  e = bf16[8] exponential(w)
  ROOT r = (s32[], bf16[8]) tuple(j, e)
}
ENTRY e {
  x = (s32[], bf16[8]) parameter(0)
  l = (s32[], bf16[8]) while(x), condition=cond, body=body
  ROOT v = bf16[8] get-tuple-element(l), index=1
})";

TEST(F64ReferencePassTest, LoopsCarryTuplesOfPromotedValues) {
  std::unique_ptr<Module> module = Parse(kLoop);
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*module);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  EXPECT_EQ(PrintModule(*module), before);  // the input is not changed
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**promoted, diags)) << PrintModule(**promoted);
  const Computation* body = (*promoted)->FindComputation("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->parameter(0)->shape().tuple_shapes[1].element_type, PrimitiveType::kF64);
  EXPECT_EQ(body->root()->shape().tuple_shapes[1].element_type, PrimitiveType::kF64);

  Literal counter(Shape::Scalar(PrimitiveType::kS32));
  counter.Set<int32_t>(0, 0);
  std::vector<Literal> parts;
  parts.push_back(std::move(counter));
  parts.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kBF16, {8}), 4));
  std::vector<Literal> args;
  args.push_back(Literal::CreateTuple(std::move(parts)));
  absl::StatusOr<std::vector<Literal>> narrow = interp::Evaluate(*module, {args});
  absl::StatusOr<std::vector<Literal>> wide = interp::Evaluate(**promoted, {args});
  ASSERT_TRUE(narrow.ok() && wide.ok());
  const Literal& n = (*narrow)[0];
  const Literal& w = (*wide)[0];
  ASSERT_EQ(w.shape().element_type, PrimitiveType::kF64);
  // The same function, computed once with bf16 rounding after every op and once without: a few bf16 ulps apart,
  // and not bitwise equal (the reference really computes wider).
  bool any_differs = false;
  for (int64_t i = 0; i < 8; ++i) {
    const double a = n.GetAsDouble(i), b = w.GetAsDouble(i);
    EXPECT_NEAR(a, b, 0.05 * std::fabs(b)) << i;
    any_differs |= a != b;
  }
  EXPECT_TRUE(any_differs);
}

TEST(F64ReferencePassTest, CustomCallsKeepTheirDeclaredTypes) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] exponential(a)
  s = f32[4] custom-call(b), custom_call_target="Sharding", sharding={replicated}
  c = f32[4] custom-call(s), custom_call_target="my.kernel"
  ROOT d = f32[4] add(c, s)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(RunF64Reference(*module).value());
  const Computation* entry = module->entry_computation();
  // The Sharding annotation is an identity: promoted. my.kernel's contract is unknown: f32 in, f32 out, widened.
  EXPECT_EQ(entry->FindInstruction("s")->shape().element_type, PrimitiveType::kF64);
  const Instruction* c = entry->FindInstruction("c");
  EXPECT_EQ(c->shape().element_type, PrimitiveType::kF32);
  EXPECT_EQ(c->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(c->operand(0)->shape().element_type, PrimitiveType::kF32);
  const Instruction* d = entry->FindInstruction("d");
  EXPECT_EQ(d->shape().element_type, PrimitiveType::kF64);
  EXPECT_EQ(d->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(d->operand(0)->operand(0), c);
}

TEST(F64ReferencePassTest, AKeptOpThatCallsComputationsIsRefused) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="my.reduce", called_computations={add}
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*module);
  ASSERT_FALSE(promoted.ok());
  EXPECT_EQ(promoted.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(promoted.status().message().find("c keeps its declared types but calls computations"), std::string::npos)
      << promoted.status();
}

}  // namespace
}  // namespace xlac
