#include "passes/cse.h"

#include <memory>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/verifier.h"

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

bool RunAndCheck(Module& module) {
  absl::StatusOr<bool> changed = RunCse(module);
  EXPECT_TRUE(changed.ok()) << changed.status().message();
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(module, diags)) << diags.Render(SourceFile("<after cse>", ""));
  return changed.ok() && *changed;
}

std::vector<std::string> Names(const Computation& comp) {
  std::vector<std::string> names;
  for (const auto& inst : comp.instructions()) names.push_back(inst->name());
  return names;
}

TEST(CseTest, MergesIdenticalInstructionsIntoTheFirst) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  a1 = f32[4] add(p, q)
  a2 = f32[4] add(p, q)
  ROOT m = f32[4] multiply(a1, a2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(RunAndCheck(*module));
  Computation* entry = module->entry_computation();
  EXPECT_EQ(entry->FindInstruction("a2"), nullptr);
  Instruction* a1 = entry->FindInstruction("a1");
  ASSERT_NE(a1, nullptr);
  EXPECT_EQ(entry->root()->operand(0), a1);
  EXPECT_EQ(entry->root()->operand(1), a1);
}

TEST(CseTest, MergesWholeExpressionsBottomUp) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  n1 = f32[4] negate(p)
  e1 = f32[4] exponential(n1)
  n2 = f32[4] negate(p)
  e2 = f32[4] exponential(n2)
  ROOT t = (f32[4], f32[4]) tuple(e1, e2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(RunAndCheck(*module));
  Computation* entry = module->entry_computation();
  EXPECT_EQ(Names(*entry), (std::vector<std::string>{"p", "n1", "e1", "t"}));
  EXPECT_EQ(entry->root()->operand(0), entry->FindInstruction("e1"));
  EXPECT_EQ(entry->root()->operand(1), entry->FindInstruction("e1"));
}

TEST(CseTest, MergesEqualConstantsOnly) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  c1 = f32[] constant(1)
  c2 = f32[] constant(1)
  c3 = f32[] constant(2)
  c4 = s32[] constant(1)
  ROOT t = (f32[], f32[], f32[], s32[]) tuple(c1, c2, c3, c4)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(RunAndCheck(*module));
  Computation* entry = module->entry_computation();
  EXPECT_EQ(Names(*entry), (std::vector<std::string>{"c1", "c3", "c4", "t"}));
  EXPECT_EQ(entry->root()->operand(1), entry->FindInstruction("c1"));
}

TEST(CseTest, DoesNotMergeDifferentAttributes) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  lt = pred[4] compare(p, q), direction=LT
  gt = pred[4] compare(p, q), direction=GT
  b1 = f32[4,4] broadcast(p), dimensions={0}
  b2 = f32[4,4] broadcast(p), dimensions={1}
  ROOT t = (pred[4], pred[4], f32[4,4], f32[4,4]) tuple(lt, gt, b1, b2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(RunAndCheck(*module));
  EXPECT_EQ(module->entry_computation()->instruction_count(), 7);
}

TEST(CseTest, DoesNotMergeSideEffectsParametersOrElidedConstants) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p0 = f32[4] parameter(0)
  p1 = f32[4] parameter(1)
  se1 = f32[4] custom-call(p0), custom_call_target="rand", custom_call_has_side_effect=true
  se2 = f32[4] custom-call(p0), custom_call_target="rand", custom_call_has_side_effect=true
  elided1 = f32[4] constant({...})
  elided2 = f32[4] constant({...})
  ROOT t = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(p0, p1, se1, se2, elided1, elided2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(RunAndCheck(*module));
  EXPECT_EQ(module->entry_computation()->instruction_count(), 7);
}

TEST(CseTest, DoesNotMergeInstructionsWithControlDependencies) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  n1 = f32[4] negate(p)
  n2 = f32[4] negate(p), control-predecessors={x}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(x, n1, n2)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(RunAndCheck(*module));
  EXPECT_NE(module->entry_computation()->FindInstruction("n2"), nullptr);
}

TEST(CseTest, ReplacesTheRoot) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  n1 = f32[4] negate(p)
  e = f32[4] exponential(n1)
  ROOT n2 = f32[4] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(RunAndCheck(*module));
  EXPECT_EQ(module->entry_computation()->root()->name(), "n1");
}

TEST(CseTest, WorksWithinEachComputationButNotAcross) {
  auto module = Parse(R"(
HloModule m

body {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  a1 = f32[] add(x, y)
  a2 = f32[] add(x, y)
  ROOT m = f32[] maximum(a1, a2)
}

ENTRY main {
  p = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=body
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(RunAndCheck(*module));
  EXPECT_EQ(Names(*module->FindComputation("body")), (std::vector<std::string>{"x", "y", "a1", "m"}));
}

TEST(CseTest, ResultIsDeterministic) {
  constexpr std::string_view kText = R"(
HloModule m

ENTRY main {
  p = f32[8] parameter(0)
  c1 = f32[] constant(3)
  b1 = f32[8] broadcast(c1), dimensions={}
  c2 = f32[] constant(3)
  b2 = f32[8] broadcast(c2), dimensions={}
  m1 = f32[8] multiply(p, b1)
  m2 = f32[8] multiply(p, b2)
  s = f32[8] subtract(m1, m2)
  ROOT t = (f32[8], f32[8]) tuple(s, m2)
}
)";
  std::string first;
  for (int i = 0; i < 5; ++i) {
    auto module = Parse(kText);
    ASSERT_NE(module, nullptr);
    EXPECT_TRUE(RunAndCheck(*module));
    std::string printed = PrintModule(*module);
    if (i == 0) first = printed;
    EXPECT_EQ(printed, first);
  }
  auto module = Parse(kText);
  ASSERT_TRUE(RunAndCheck(*module));
  EXPECT_EQ(Names(*module->entry_computation()), (std::vector<std::string>{"p", "c1", "b1", "m1", "s", "t"}));
}

}  // namespace
}  // namespace xlac
