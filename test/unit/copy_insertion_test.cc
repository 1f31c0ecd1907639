#include "passes/copy_insertion.h"

#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "passes/buffer_assignment.h"
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

int CountCopies(const Computation& comp) {
  int n = 0;
  for (const auto& inst : comp.instructions()) n += inst->opcode() == Opcode::kCopy;
  return n;
}

// Runs copy insertion; checks that the module verifies, computes the same, is accepted by buffer assignment and
// that a second run changes nothing.
void InsertAndCheck(Module& module) {
  std::vector<Literal> args;
  for (const Instruction* p : module.entry_computation()->parameters()) {
    args.push_back(interp::MakeRandomLiteral(p->shape(), 11 + args.size()));
  }
  absl::StatusOr<std::vector<Literal>> before = interp::Evaluate(module, {args});
  ASSERT_TRUE(before.ok()) << before.status().message();
  absl::StatusOr<bool> changed = RunCopyInsertion(module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  DiagnosticEngine diags;
  ASSERT_TRUE(VerifyModule(module, diags)) << diags.Render(SourceFile("<after>", ""));
  absl::StatusOr<std::vector<Literal>> after = interp::Evaluate(module, {args});
  ASSERT_TRUE(after.ok()) << after.status().message();
  EXPECT_TRUE(*after == *before);
  absl::StatusOr<BufferAssignment> ba = AssignBuffers(module);
  EXPECT_TRUE(ba.ok()) << ba.status().message();
  absl::StatusOr<bool> again = RunCopyInsertion(module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again) << "copy insertion is not idempotent";
}

TEST(CopyInsertionTest, WhileInitCopiesParametersConstantsAndLiveValues) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (f32[4], f32[4], f32[4], f32[4]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  ROOT s = (f32[4], f32[4], f32[4], f32[4]) parameter(0)
}
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  fresh = f32[4] exponential(p)
  live = f32[4] negate(p)
  init = (f32[4], f32[4], f32[4], f32[4]) tuple(p, c, fresh, live)
  w = (f32[4], f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
  g = f32[4] get-tuple-element(w), index=2
  ROOT r = f32[4] add(g, live)
}
)");
  ASSERT_NE(module, nullptr);
  InsertAndCheck(*module);
  const Instruction* init = module->entry_computation()->FindInstruction("w")->operand(0);
  ASSERT_EQ(init->opcode(), Opcode::kTuple);
  EXPECT_EQ(init->operand(0)->opcode(), Opcode::kCopy);
  EXPECT_EQ(init->operand(1)->opcode(), Opcode::kCopy);
  EXPECT_EQ(init->operand(2)->name(), "fresh");  // dies at the loop: the loop may own it
  EXPECT_EQ(init->operand(3)->opcode(), Opcode::kCopy);
  EXPECT_EQ(CountCopies(*module->entry_computation()), 3);
  // The pass-through body needs nothing.
  EXPECT_EQ(CountCopies(*module->FindComputation("body")), 0);
}

// Layout-copies rebuilds a while's init tuple after the while in instruction order; copy insertion replaces and
// frees that tuple while it walks the computation (a use after free that ASan caught in scripts/test-asan).
TEST(CopyInsertionTest, WhileInitTupleAfterTheWhile) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (f32[4], f32[4]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  ROOT s = (f32[4], f32[4]) parameter(0)
}
ENTRY main {
  p = f32[4] parameter(0)
  c = f32[4] constant({1, 2, 3, 4})
  init = (f32[4], f32[4]) tuple(p, c)
  ROOT w = (f32[4], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(module, nullptr);
  Computation& entry = *module->entry_computation();
  Instruction* w = entry.FindInstruction("w");
  Instruction* old_init = w->operand(0);
  Instruction* late_init =
      entry.AddInstruction(Instruction::Create(Opcode::kTuple, "late_init", old_init->shape(), old_init->operands()));
  w->ReplaceOperandWith(0, late_init);
  ASSERT_TRUE(entry.RemoveInstruction(old_init).ok());
  InsertAndCheck(*module);
  const Instruction* init = w->operand(0);
  ASSERT_EQ(init->opcode(), Opcode::kTuple);
  EXPECT_EQ(init->operand(0)->opcode(), Opcode::kCopy);
  EXPECT_EQ(init->operand(1)->opcode(), Opcode::kCopy);
}

TEST(CopyInsertionTest, WhileInitSharedLeafIsCopiedOnce) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (f32[4], f32[4]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  ROOT s = (f32[4], f32[4]) parameter(0)
}
ENTRY main {
  p = f32[4] parameter(0)
  x = f32[4] exponential(p)
  init = (f32[4], f32[4]) tuple(x, x)
  ROOT w = (f32[4], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(module, nullptr);
  InsertAndCheck(*module);
  const Instruction* init = module->entry_computation()->FindInstruction("w")->operand(0);
  EXPECT_EQ(init->operand(0)->name(), "x");
  EXPECT_EQ(init->operand(1)->opcode(), Opcode::kCopy);
}

constexpr std::string_view kSwapLoop = R"(
HloModule m
cond {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  sum = f32[4] add(a, b)
  ROOT t = (s32[], f32[4], f32[4]) tuple(i1, b, sum)
}
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  zero = s32[] constant(0)
  init = (s32[], f32[4], f32[4]) tuple(zero, p, q)
  ROOT w = (s32[], f32[4], f32[4]) while(init), condition=cond, body=body
}
)";

TEST(CopyInsertionTest, BodyRootSwapGoesThroughATemporary) {
  auto module = Parse(kSwapLoop);
  ASSERT_NE(module, nullptr);
  InsertAndCheck(*module);
  const Computation* body = module->FindComputation("body");
  const Instruction* root = body->root();
  // i1 updates its own leaf in place: no copy.
  EXPECT_EQ(root->operand(0)->name(), "i1");
  // Leaf 1 takes b (leaf 2's old value): copy to a temporary, then into the loop buffer after a's readers.
  const Instruction* move = root->operand(1);
  ASSERT_EQ(move->opcode(), Opcode::kCopy);
  EXPECT_EQ(move->operand(0)->opcode(), Opcode::kCopy);
  EXPECT_EQ(move->operand(0)->operand(0)->name(), "b");
  std::vector<std::string> preds;
  for (const Instruction* p : move->control_predecessors()) preds.push_back(p->name());
  EXPECT_EQ(preds, std::vector<std::string>{"sum"});
  // Leaf 2 (sum) reads b, which the temporary copy also reads: sum is written directly after it.
  EXPECT_EQ(root->operand(2)->name(), "sum");
  EXPECT_EQ(CountCopies(*body), 2);
}

TEST(CopyInsertionTest, BodyWriterThatFeedsAnotherReaderIsCopied) {
  auto module = Parse(R"(
HloModule m
cond {
  s = (f32[4], f32[4]) parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = (f32[4], f32[4]) parameter(0)
  a = f32[4] get-tuple-element(s), index=0
  b = f32[4] get-tuple-element(s), index=1
  na = f32[4] add(a, b)
  nb = f32[4] multiply(a, b)
  ROOT t = (f32[4], f32[4]) tuple(na, nb)
}
ENTRY main {
  p = f32[4] parameter(0)
  q = f32[4] parameter(1)
  init = (f32[4], f32[4]) tuple(p, q)
  ROOT w = (f32[4], f32[4]) while(init), condition=cond, body=body
}
)");
  ASSERT_NE(module, nullptr);
  InsertAndCheck(*module);
  const Instruction* root = module->FindComputation("body")->root();
  // na writes leaf 0 directly, ordered after nb (which reads a). nb cannot also be ordered after na (which reads
  // b), so leaf 1 is a copy made after both.
  EXPECT_EQ(root->operand(0)->name(), "na");
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kCopy);
}

TEST(CopyInsertionTest, BranchAndEntryRoots) {
  auto module = Parse(R"(
HloModule m, input_output_alias={ {3}: (1, {}, may-alias) }
b0 {
  x = (f32[4], f32[4]) parameter(0)
  g = f32[4] get-tuple-element(x), index=0
  ROOT t = (f32[4], f32[4]) tuple(g, g)
}
b1 {
  x = (f32[4], f32[4]) parameter(0)
  g = f32[4] get-tuple-element(x), index=1
  n = f32[4] negate(g)
  c = f32[4] constant({1, 1, 1, 1})
  ROOT t = (f32[4], f32[4]) tuple(n, c)
}
ENTRY main {
  i = s32[] parameter(0)
  p = f32[4] parameter(1)
  e = f32[4] exponential(p)
  ops = (f32[4], f32[4]) tuple(p, e)
  cond = (f32[4], f32[4]) conditional(i, ops, ops), branch_computations={b0, b1}
  c0 = f32[4] get-tuple-element(cond), index=0
  k = f32[4] constant({2, 2, 2, 2})
  ROOT r = (f32[4], f32[4], f32[4], f32[4], f32[4], f32[4]) tuple(c0, e, e, p, k, p)
}
)");
  ASSERT_NE(module, nullptr);
  InsertAndCheck(*module);
  const Instruction* t0 = module->FindComputation("b0")->root();
  EXPECT_EQ(t0->operand(0)->opcode(), Opcode::kCopy);  // parameter data
  EXPECT_EQ(t0->operand(1)->opcode(), Opcode::kCopy);
  EXPECT_NE(t0->operand(0), t0->operand(1));
  const Instruction* t1 = module->FindComputation("b1")->root();
  EXPECT_EQ(t1->operand(0)->name(), "n");
  EXPECT_EQ(t1->operand(1)->opcode(), Opcode::kCopy);  // constant
  const Instruction* r = module->entry_computation()->root();
  EXPECT_EQ(r->operand(0)->name(), "c0");
  EXPECT_EQ(r->operand(1)->name(), "e");
  EXPECT_EQ(r->operand(2)->opcode(), Opcode::kCopy);  // second e
  EXPECT_EQ(r->operand(3)->name(), "p");              // donated pass-through
  EXPECT_EQ(r->operand(4)->opcode(), Opcode::kCopy);  // constant
  EXPECT_EQ(r->operand(5)->opcode(), Opcode::kCopy);  // parameter, not donated at this index
}

TEST(CopyInsertionTest, RequiresFlattenedCallGraph) {
  auto module = Parse(R"(
HloModule m
b {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY main {
  i = s32[] parameter(0)
  p = f32[4] parameter(1)
  ROOT c = f32[4] conditional(i, p, p), branch_computations={b, b}
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunCopyInsertion(*module);
  ASSERT_FALSE(changed.ok());
  EXPECT_NE(changed.status().message().find("flatten-call-graph"), std::string::npos);
}

}  // namespace
}  // namespace xlac
