#include "passes/call_inliner.h"

#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**module, diags)) << diags.Render(SourceFile("<test>", text));
  return std::move(module).value();
}

// Runs the inliner and checks that the module still verifies and computes the same result.
void InlineAndCompare(Module& module, bool expect_changed = true) {
  std::vector<Literal> args;
  for (const Instruction* p : module.entry_computation()->parameters()) {
    args.push_back(interp::MakeRandomLiteral(p->shape(), 3 + args.size()));
  }
  absl::StatusOr<std::vector<Literal>> before = interp::Evaluate(module, {args});
  ASSERT_TRUE(before.ok()) << before.status().message();
  absl::StatusOr<bool> changed = RunCallInliner(module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(*changed, expect_changed);
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(module, diags)) << diags.Render(SourceFile("<after>", ""));
  absl::StatusOr<std::vector<Literal>> after = interp::Evaluate(module, {args});
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(*after == *before);
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) EXPECT_NE(inst->opcode(), Opcode::kCall) << inst->name();
  }
}

TEST(CallInlinerTest, InlinesAndRemovesTheCallee) {
  auto module = Parse(R"(
HloModule m
f {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  n = f32[4] negate(x)
  ROOT a = f32[4] add(n, y)
}
ENTRY main {
  p = f32[4] parameter(0)
  n = f32[4] exponential(p)
  ROOT c = f32[4] call(p, n), to_apply=f
}
)");
  ASSERT_NE(module, nullptr);
  InlineAndCompare(*module);
  EXPECT_EQ(module->computations().size(), 1u);
  const Instruction* root = module->entry_computation()->root();
  EXPECT_EQ(root->opcode(), Opcode::kAdd);
  // The inlined negate got a fresh name (the caller already has an `n`) and reads the call's first operand.
  EXPECT_EQ(root->operand(0)->name(), "n.1");
  EXPECT_EQ(root->operand(0)->operand(0)->name(), "p");
  EXPECT_EQ(root->operand(1)->name(), "n");
}

TEST(CallInlinerTest, InlinesNestedCallsAndKeepsComputationsWithOtherUses) {
  auto module = Parse(R"(
HloModule m
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
g {
  x = f32[4] parameter(0)
  ROOT y = f32[4] multiply(x, x)
}
f {
  x = f32[4] parameter(0)
  c = f32[4] call(x), to_apply=g
  zero = f32[] constant(0)
  r = f32[] reduce(c, zero), dimensions={0}, to_apply=sum
  ROOT b = f32[4] broadcast(r), dimensions={}
}
ENTRY main {
  p = f32[4] parameter(0)
  c1 = f32[4] call(p), to_apply=f
  c2 = f32[4] call(c1), to_apply=f
  one = f32[] constant(1)
  two = f32[] call(one, one), to_apply=sum
  b2 = f32[4] broadcast(two), dimensions={}
  ROOT r = f32[4] add(c2, b2)
}
)");
  ASSERT_NE(module, nullptr);
  InlineAndCompare(*module);
  // sum stays: the inlined reduces use it as their reducer.
  EXPECT_NE(module->FindComputation("sum"), nullptr);
  EXPECT_EQ(module->FindComputation("f"), nullptr);
  EXPECT_EQ(module->FindComputation("g"), nullptr);
  EXPECT_EQ(module->computations().size(), 2u);
}

TEST(CallInlinerTest, CallerControlEdgesMoveToTheInlinedCode) {
  auto module = Parse(R"(
HloModule m
f {
  x = f32[4] parameter(0)
  n = f32[4] negate(x)
  ROOT e = f32[4] exponential(n)
}
ENTRY main {
  p = f32[4] parameter(0)
  before = f32[4] sine(p)
  c = f32[4] call(p), to_apply=f, control-predecessors={before}
  after = f32[4] cosine(p), control-predecessors={c}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(before, c, after)
}
)");
  ASSERT_NE(module, nullptr);
  InlineAndCompare(*module);
  const Computation* entry = module->entry_computation();
  const Instruction* before = entry->FindInstruction("before");
  const Instruction* after = entry->FindInstruction("after");
  const Instruction* n = entry->root()->operand(1)->operand(0);
  const Instruction* e = entry->root()->operand(1);
  ASSERT_EQ(n->opcode(), Opcode::kNegate);
  EXPECT_EQ(n->control_predecessors(), std::vector<Instruction*>{const_cast<Instruction*>(before)});
  EXPECT_EQ(after->control_predecessors(), std::vector<Instruction*>{const_cast<Instruction*>(e)});
}

TEST(CallInlinerTest, CallOfParameterPassThroughAndNoCalls) {
  auto module = Parse(R"(
HloModule m
id {
  ROOT x = f32[4] parameter(0)
}
ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=id
}
)");
  ASSERT_NE(module, nullptr);
  InlineAndCompare(*module);
  EXPECT_EQ(module->entry_computation()->root()->name(), "p");
  InlineAndCompare(*module, /*expect_changed=*/false);
}

}  // namespace
}  // namespace xlac
