#include "passes/flatten_call_graph.h"

#include <map>
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

// Call sites per computation: (sequential, embedded).
std::map<std::string, std::pair<int, int>> CallSites(const Module& module) {
  std::map<std::string, std::pair<int, int>> sites;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      bool sequential =
          inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional || inst->opcode() == Opcode::kCall;
      for (const Computation* callee : inst->called_computations()) {
        auto& s = sites[callee->name()];
        (sequential ? s.first : s.second)++;
      }
    }
  }
  return sites;
}

void FlattenAndCheck(Module& module, bool expect_changed) {
  absl::StatusOr<std::vector<Literal>> before =
      interp::Evaluate(module, {{interp::MakeRandomLiteral(module.entry_computation()->parameter(0)->shape(), 5)}});
  ASSERT_TRUE(before.ok()) << before.status().message();
  absl::StatusOr<bool> changed = RunFlattenCallGraph(module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(*changed, expect_changed);
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(module, diags)) << diags.Render(SourceFile("<after>", ""));
  absl::StatusOr<std::vector<Literal>> after =
      interp::Evaluate(module, {{interp::MakeRandomLiteral(module.entry_computation()->parameter(0)->shape(), 5)}});
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(*after == *before);
  for (const auto& [name, sites] : CallSites(module)) {
    if (sites.first > 0) EXPECT_EQ(sites, std::make_pair(1, 0)) << name;
  }
}

constexpr std::string_view kTwoLoops = R"(
HloModule m
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
inner_body {
  x = f32[4] parameter(0)
  ROOT y = f32[4] add(x, x)
}
inner_cond {
  x = f32[4] parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[4] get-tuple-element(s), index=1
  w = f32[4] while(x), condition=inner_cond, body=inner_body
  ROOT t = (s32[], f32[4]) tuple(i1, w)
}
ENTRY main {
  p = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, p)
  w1 = (s32[], f32[4]) while(init), condition=cond, body=body
  w2 = (s32[], f32[4]) while(w1), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w2), index=1
}
)";

TEST(FlattenCallGraphTest, ClonesSharedLoopComputationsRecursively) {
  auto module = Parse(kTwoLoops);
  ASSERT_NE(module, nullptr);
  FlattenAndCheck(*module, true);
  const Computation* entry = module->entry_computation();
  const Instruction* w1 = entry->FindInstruction("w1");
  const Instruction* w2 = entry->FindInstruction("w2");
  EXPECT_EQ(w1->called_computation(0)->name(), "cond");
  EXPECT_EQ(w1->called_computation(1)->name(), "body");
  EXPECT_EQ(w2->called_computation(0)->name(), "cond.clone");
  EXPECT_EQ(w2->called_computation(1)->name(), "body.clone");
  // The clone's inner loop got its own computations too.
  const Computation* body_clone = w2->called_computation(1);
  const Instruction* inner = body_clone->root()->operand(1);
  ASSERT_EQ(inner->opcode(), Opcode::kWhile);
  EXPECT_EQ(inner->called_computation(1)->name(), "inner_body.clone");
  // Cloned instructions have module-unique names.
  EXPECT_NE(body_clone->root()->name(), "t");
  // Nothing left to do.
  FlattenAndCheck(*module, false);
}

TEST(FlattenCallGraphTest, SameBranchTwiceClonedButReducersStayShared) {
  auto module = Parse(R"(
HloModule m
b {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
add {
  a = f32[] parameter(0)
  c = f32[] parameter(1)
  ROOT s = f32[] add(a, c)
}
ENTRY main {
  p = f32[4] parameter(0)
  zero = f32[] constant(0)
  r = f32[] reduce(p, zero), dimensions={0}, to_apply=add
  r2 = f32[] reduce(p, zero), dimensions={0}, to_apply=add
  i = s32[] convert(r)
  c = f32[4] conditional(i, p, p), branch_computations={b, b}
  ROOT t = (f32[4], f32[], f32[]) tuple(c, r, r2)
}
)");
  ASSERT_NE(module, nullptr);
  FlattenAndCheck(*module, true);
  const Instruction* c = module->entry_computation()->FindInstruction("c");
  EXPECT_EQ(c->called_computation(0)->name(), "b");
  EXPECT_EQ(c->called_computation(1)->name(), "b.clone");
  // The reducer stays shared.
  EXPECT_EQ(CallSites(*module)["add"], std::make_pair(0, 2));
}

TEST(FlattenCallGraphTest, BranchAlsoUsedByMapIsCloned) {
  auto module = Parse(R"(
HloModule m
neg {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  m = f32[4] map(p), dimensions={0}, to_apply=neg
  s = f32[] constant(2)
  t = pred[] constant(true)
  c = f32[] conditional(t, s, s), true_computation=neg, false_computation=neg
  b = f32[4] broadcast(c), dimensions={}
  ROOT r = f32[4] add(m, b)
}
)");
  ASSERT_NE(module, nullptr);
  FlattenAndCheck(*module, true);
  const Instruction* c = module->entry_computation()->FindInstruction("c");
  EXPECT_NE(c->called_computation(0)->name(), "neg");
  EXPECT_NE(c->called_computation(1)->name(), "neg");
  EXPECT_NE(c->called_computation(0), c->called_computation(1));
  EXPECT_EQ(module->entry_computation()->FindInstruction("m")->called_computation(0)->name(), "neg");
}

}  // namespace
}  // namespace xlac
