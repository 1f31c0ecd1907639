#include "passes/dce.h"

#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
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
  SourceFile file("<test>", text);
  EXPECT_TRUE(VerifyModule(**module, diags)) << diags.Render(file);
  return std::move(module).value();
}

void ExpectVerifies(const Module& module) {
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(module, diags)) << diags.Render(SourceFile("<after dce>", ""));
}

TEST(DceTest, RemovesDeadChainButKeepsRootAndParameters) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  unused_param = f32[4] parameter(1)
  live = f32[4] add(p, p)
  dead1 = f32[4] multiply(p, p)
  dead2 = f32[4] exponential(dead1)
  dead3 = f32[4] add(dead2, live)
  ROOT r = f32[4] negate(live)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunDce(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  Computation* entry = module->entry_computation();
  EXPECT_EQ(entry->FindInstruction("dead1"), nullptr);
  EXPECT_EQ(entry->FindInstruction("dead2"), nullptr);
  EXPECT_EQ(entry->FindInstruction("dead3"), nullptr);
  ASSERT_NE(entry->FindInstruction("live"), nullptr);
  EXPECT_NE(entry->FindInstruction("unused_param"), nullptr);
  EXPECT_EQ(entry->root()->name(), "r");
  EXPECT_EQ(entry->instruction_count(), 4);
  // Only r uses live now.
  EXPECT_EQ(entry->FindInstruction("live")->user_count(), 1);
  ExpectVerifies(*module);
}

TEST(DceTest, ReportsNoChangeOnCleanModule) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunDce(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(module->entry_computation()->instruction_count(), 2);
}

TEST(DceTest, KeepsSideEffectingInstructions) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  effect = f32[4] custom-call(p), custom_call_target="log", custom_call_has_side_effect=true
  pure = f32[4] custom-call(p), custom_call_target="pure"
  ROOT r = f32[4] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunDce(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_NE(module->entry_computation()->FindInstruction("effect"), nullptr);
  EXPECT_EQ(module->entry_computation()->FindInstruction("pure"), nullptr);
}

TEST(DceTest, KeepsInstructionsWithControlDependencies) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  before = f32[4] exponential(p)
  after = f32[4] negate(p), control-predecessors={before}
  ROOT r = f32[4] add(p, p)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunDce(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
  EXPECT_NE(module->entry_computation()->FindInstruction("before"), nullptr);
  EXPECT_NE(module->entry_computation()->FindInstruction("after"), nullptr);
}

TEST(DceTest, RemovesComputationsUnreachableFromEntry) {
  auto module = Parse(R"(
HloModule m

inner {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}

callee {
  x = f32[] parameter(0)
  ROOT c = f32[] call(x), to_apply=inner
}

never_called {
  y = f32[] parameter(0)
  ROOT e = f32[] exponential(y)
}

sum {
  l = f32[] parameter(0)
  r = f32[] parameter(1)
  dead_in_sum = f32[] multiply(l, r)
  ROOT s = f32[] add(l, r)
}

ENTRY main {
  p = f32[4] parameter(0)
  s0 = f32[] parameter(1)
  dead_call = f32[] call(s0), to_apply=callee
  ROOT red = f32[] reduce(p, s0), dimensions={0}, to_apply=sum
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunDce(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(module->FindComputation("inner"), nullptr);
  EXPECT_EQ(module->FindComputation("callee"), nullptr);
  EXPECT_EQ(module->FindComputation("never_called"), nullptr);
  ASSERT_NE(module->FindComputation("sum"), nullptr);
  EXPECT_EQ(module->FindComputation("sum")->FindInstruction("dead_in_sum"), nullptr);
  EXPECT_NE(module->FindComputation("main"), nullptr);
  EXPECT_EQ(module->computations().size(), 2u);
  ExpectVerifies(*module);
}

TEST(DceTest, KeepsCallsToSideEffectingComputations) {
  auto module = Parse(R"(
HloModule m

effectful {
  x = f32[] parameter(0)
  ROOT cc = f32[] custom-call(x), custom_call_target="print", custom_call_has_side_effect=true
}

ENTRY main {
  p = f32[] parameter(0)
  unused_call = f32[] call(p), to_apply=effectful
  ROOT r = f32[] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunDce(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_FALSE(*changed);
  EXPECT_NE(module->entry_computation()->FindInstruction("unused_call"), nullptr);
  EXPECT_NE(module->FindComputation("effectful"), nullptr);
}

TEST(DceTest, SecondRunIsANoOp) {
  auto module = Parse(R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  d = f32[4] multiply(p, p)
  ROOT r = f32[4] negate(p)
}
)");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(RunDce(*module).value());
  absl::StatusOr<bool> again = RunDce(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

}  // namespace
}  // namespace xlac
