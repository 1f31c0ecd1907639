// fusion-inliner: fusions disappear, their fused computations too, and evaluation is unchanged.
#include "passes/fusion_inliner.h"

#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? *std::move(module) : nullptr;
}

int CountOpcode(const Module& module, Opcode op) {
  int n = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) n += inst->opcode() == op;
  }
  return n;
}

constexpr char kModule[] = R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

fused_inner {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  ROOT m = f32[4] multiply(x, y)
}

fused_outer {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  e = f32[4] fusion(x, y), kind=kCustom, calls=fused_inner
  z = f32[] constant(0)
  r = f32[] reduce(e, z), dimensions={0}, to_apply=sum
  ROOT t = (f32[], f32[4]) tuple(r, e)
}

passthrough {
  ROOT x = f32[4] parameter(0)
}

ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  f = (f32[], f32[4]) fusion(p, q), kind=kInput, calls=fused_outer
  g = f32[4] fusion(q), kind=kCustom, calls=passthrough
  h = f32[4] fusion(g, p), kind=kCustom, calls=fused_inner
  r = f32[] get-tuple-element(f), index=0
  ROOT out = (f32[], f32[4], f32[4]) tuple(r, h, g)
}
)";

TEST(FusionInliner, InlinesNestedFusionsAndKeepsResults) {
  std::unique_ptr<Module> module = Parse(kModule);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = {interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {4}), 1),
                               interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {4}), 2)};
  absl::StatusOr<std::vector<Literal>> before = interp::Evaluate(*module, {args});
  ASSERT_TRUE(before.ok()) << before.status().ToString();

  absl::StatusOr<bool> changed = RunFusionInliner(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*module, Opcode::kFusion), 0);
  // Only the reducer and the entry remain.
  EXPECT_EQ(module->computations().size(), 2u);
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(*module, diags));

  absl::StatusOr<std::vector<Literal>> after = interp::Evaluate(*module, {args});
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE((*before)[0] == (*after)[0]);

  absl::StatusOr<bool> again = RunFusionInliner(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

// Fusions codegen emits as one kernel (passes/fusion/fusible.h) stay; a kLoop fusion with a non-elemental op
// (here a dot) is inlined.
TEST(FusionInliner, KeepsFusionsCodegenEmits) {
  std::unique_ptr<Module> module = Parse(R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

loop {
  x = f32[4,4] parameter(0)
  y = f32[4,4] parameter(1)
  ROOT m = f32[4,4] multiply(x, y)
}

input {
  x = f32[4,4] parameter(0)
  e = f32[4,4] exponential(x)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(e, z), dimensions={1}, to_apply=sum
}

not_elemental {
  x = f32[4,4] parameter(0)
  ROOT d = f32[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

ENTRY main {
  p = f32[4,4] parameter(0)
  f = f32[4,4] fusion(p, p), kind=kLoop, calls=loop
  g = f32[4] fusion(f), kind=kInput, calls=input
  h = f32[4,4] fusion(p), kind=kLoop, calls=not_elemental
  ROOT t = (f32[4], f32[4,4]) tuple(g, h)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunFusionInliner(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().ToString();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(CountOpcode(*module, Opcode::kFusion), 2);
  EXPECT_EQ(CountOpcode(*module, Opcode::kDot), 1);
  EXPECT_EQ(module->computations().size(), 4u);  // sum, loop, input, main
}

}  // namespace
}  // namespace xlac
