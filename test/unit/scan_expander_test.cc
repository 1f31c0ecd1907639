#include "passes/scan_expander.h"

#include <memory>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
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

int CountOpcode(const Module& module, Opcode op) {
  int n = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) n += inst->opcode() == op;
  }
  return n;
}

// Expands the scans of `text` and checks that the module verifies (layouts included), has no scan left, prints
// text that parses and verifies again, and computes bit for bit what the interpreter computes on the original.
void ExpandAndCompare(std::string_view text, int expected_whiles, std::unique_ptr<Module>* result = nullptr) {
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args;
  for (const Instruction* p : module->entry_computation()->parameters()) {
    args.push_back(interp::MakeRandomLiteral(p->shape(), 11 + args.size()));
  }
  absl::StatusOr<std::vector<Literal>> before = interp::Evaluate(*module, {args});
  ASSERT_TRUE(before.ok()) << before.status().message();

  absl::StatusOr<bool> changed = RunScanExpander(*module);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  std::string printed = PrintModule(*module);
  DiagnosticEngine diags;
  VerifierOptions options;
  options.check_layouts = true;
  EXPECT_TRUE(VerifyModule(*module, diags, options)) << diags.Render(SourceFile("<after>", "")) << printed;
  EXPECT_EQ(CountOpcode(*module, Opcode::kScan), 0) << printed;
  EXPECT_EQ(CountOpcode(*module, Opcode::kWhile), expected_whiles) << printed;
  std::unique_ptr<Module> reparsed = Parse(printed);
  EXPECT_NE(reparsed, nullptr) << printed;

  absl::StatusOr<std::vector<Literal>> after = interp::Evaluate(*module, {args});
  ASSERT_TRUE(after.ok()) << after.status().message() << "\n" << printed;
  EXPECT_TRUE(*after == *before) << printed;
  if (result != nullptr) *result = std::move(module);
}

TEST(ScanExpanderTest, CumulativeSumWithCarry) {
  ExpandAndCompare(R"(
HloModule m
body {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  s = s32[] add(a, b)
  ROOT t = (s32[], s32[]) tuple(s, s)
}
ENTRY e {
  x = s32[7] parameter(0)
  c = s32[] parameter(1)
  ROOT scan = (s32[7], s32[]) scan(x, c), dimensions={0}, num_carries=1, to_apply=body
}
)",
                   1);
}

TEST(ScanExpanderTest, ReverseWithoutCarriesAndNonTupleBody) {
  ExpandAndCompare(R"(
HloModule m
body {
  a = f32[2,4] parameter(0)
  ROOT n = f32[2,4] exponential(a)
}
ENTRY e {
  x = f32[2,3,4] parameter(0)
  s = f32[2,3,4] scan(x), dimensions={1}, num_carries=0, is_reverse=true, to_apply=body
  ROOT r = f32[2,3,4] negate(s)
}
)",
                   1);
}

TEST(ScanExpanderTest, ReverseOrderIsObservable) {
  // A running product of non-commuting 2x2 matrices differs between directions, so the order must match.
  ExpandAndCompare(R"(
HloModule m
body {
  a = f32[2,2] parameter(0)
  c = f32[2,2] parameter(1)
  p = f32[2,2] dot(c, a), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,2], f32[2,2]) tuple(p, p)
}
ENTRY e {
  x = f32[5,2,2] parameter(0)
  c = f32[2,2] parameter(1)
  fwd = (f32[5,2,2], f32[2,2]) scan(x, c), dimensions={0}, num_carries=1, to_apply=body
  rev = (f32[5,2,2], f32[2,2]) scan(x, c), dimensions={0}, num_carries=1, is_reverse=true, to_apply=body
  ROOT t = ((f32[5,2,2], f32[2,2]), (f32[5,2,2], f32[2,2])) tuple(fwd, rev)
}
)",
                   2);
}

TEST(ScanExpanderTest, NoInputsTakesTheLengthFromTheFirstOutput) {
  ExpandAndCompare(R"(
HloModule m
body {
  c = s32[] parameter(0)
  one = s32[] constant(1)
  n = s32[] add(c, one)
  ROOT t = (s32[], s32[]) tuple(c, n)
}
ENTRY e {
  c = s32[] parameter(0)
  ROOT s = (s32[6], s32[]) scan(c), dimensions={0}, num_carries=1, to_apply=body
}
)",
                   1);
}

TEST(ScanExpanderTest, ZeroLengthNeedsNoLoop) {
  ExpandAndCompare(R"(
HloModule m
body {
  a = f32[3] parameter(0)
  c = f32[3] parameter(1)
  s = f32[3] add(a, c)
  ROOT t = (f32[3], f32[3]) tuple(s, s)
}
ENTRY e {
  x = f32[3,0] parameter(0)
  c = f32[3] parameter(1)
  ROOT s = (f32[3,0], f32[3]) scan(x, c), dimensions={1}, num_carries=1, to_apply=body
}
)",
                   0);
}

TEST(ScanExpanderTest, SeveralInputsOutputsAndCarriesOfMixedTypes) {
  ExpandAndCompare(R"(
HloModule m
body {
  a = f32[3] parameter(0)
  b = s32[3] parameter(1)
  acc = f32[3] parameter(2)
  k = s32[] parameter(3)
  bf = f32[3] convert(b)
  m = f32[3] multiply(a, bf)
  acc2 = f32[3] add(acc, m)
  kb = s32[3] broadcast(k), dimensions={}
  o2 = s32[3] add(b, kb)
  one = s32[] constant(1)
  k2 = s32[] add(k, one)
  gt = pred[3] compare(a, acc), direction=GT
  ROOT t = (f32[3], s32[3], pred[3], f32[3], s32[]) tuple(m, o2, gt, acc2, k2)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  y = s32[3,4] parameter(1)
  acc = f32[3] parameter(2)
  k = s32[] parameter(3)
  ROOT s = (f32[3,4], s32[3,4], pred[3,4], f32[3], s32[]) scan(x, y, acc, k), dimensions={1}, num_carries=2, to_apply=body
}
)",
                   1);
}

TEST(ScanExpanderTest, SingleResultFromAOneElementTupleBody) {
  ExpandAndCompare(R"(
HloModule m
body {
  a = f32[2] parameter(0)
  n = f32[2] sqrt(a)
  ROOT t = (f32[2]) tuple(n)
}
ENTRY e {
  x = f32[4,2] parameter(0)
  ROOT s = f32[4,2] scan(x), dimensions={0}, num_carries=0, to_apply=body
}
)",
                   1);
}

TEST(ScanExpanderTest, OnlyCarries) {
  ExpandAndCompare(R"(
HloModule m
add {
  p = f32[] parameter(0)
  q = f32[] parameter(1)
  ROOT s = f32[] add(p, q)
}
body {
  a = f32[3] parameter(0)
  c = f32[] parameter(1)
  r = f32[] reduce(a, c), dimensions={0}, to_apply=add
  ROOT t = (f32[]) tuple(r)
}
ENTRY e {
  x = f32[5,3] parameter(0)
  c = f32[] parameter(1)
  ROOT s = f32[] scan(x, c), dimensions={0}, num_carries=1, to_apply=body
}
)",
                   1);
}

TEST(ScanExpanderTest, NonDefaultLayouts) {
  std::unique_ptr<Module> module;
  // The input and the carry result are column-major, the initial carry and the body's carry row-major: the state
  // keeps the input's and the results' layouts and copies convert the carries to the result's.
  ExpandAndCompare(R"(
HloModule m
body {
  a = f32[3] parameter(0)
  c = f32[2,3] parameter(1)
  b = f32[2,3] broadcast(a), dimensions={1}
  s = f32[2,3] add(b, c)
  ROOT t = (f32[2,3], f32[2,3]) tuple(s, s)
}
ENTRY e {
  x = f32[4,3]{0,1} parameter(0)
  c = f32[2,3] parameter(1)
  ROOT s = (f32[4,2,3]{0,2,1}, f32[2,3]{0,1}) scan(x, c), dimensions={0}, num_carries=1, to_apply=body
}
)",
                   1, &module);
  ASSERT_NE(module, nullptr);
  // One copy of the initial carry, one of the body's carry.
  EXPECT_EQ(CountOpcode(*module, Opcode::kCopy), 2);
}

TEST(ScanExpanderTest, NestedScans) {
  ExpandAndCompare(R"(
HloModule m
inner {
  a = f32[] parameter(0)
  c = f32[] parameter(1)
  s = f32[] multiply(a, c)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
outer {
  row = f32[3] parameter(0)
  c = f32[] parameter(1)
  r = (f32[3], f32[]) scan(row, c), dimensions={0}, num_carries=1, to_apply=inner
  o = f32[3] get-tuple-element(r), index=0
  k = f32[] get-tuple-element(r), index=1
  ROOT t = (f32[3], f32[]) tuple(o, k)
}
ENTRY e {
  x = f32[4,3] parameter(0)
  c = f32[] parameter(1)
  ROOT s = (f32[4,3], f32[]) scan(x, c), dimensions={0}, num_carries=1, is_reverse=true, to_apply=outer
}
)",
                   2);
}

TEST(ScanExpanderTest, ControlEdgesMoveToTheLoop) {
  std::unique_ptr<Module> module = Parse(R"(
HloModule m
body {
  a = f32[] parameter(0)
  ROOT n = f32[] negate(a)
}
ENTRY e {
  x = f32[4] parameter(0)
  before = f32[4] exponential(x)
  s = f32[4] scan(x), dimensions={0}, num_carries=0, to_apply=body, control-predecessors={before}
  after = f32[4] sqrt(x), control-predecessors={s}
  ROOT t = (f32[4], f32[4], f32[4]) tuple(before, s, after)
}
)");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(RunScanExpander(*module).ok());
  Computation* entry = module->entry_computation();
  Instruction* loop = nullptr;
  for (const auto& inst : entry->instructions()) {
    if (inst->opcode() == Opcode::kWhile) loop = inst.get();
  }
  ASSERT_NE(loop, nullptr);
  ASSERT_EQ(loop->control_predecessors().size(), 1u);
  EXPECT_EQ(loop->control_predecessors()[0]->name(), "before");
  ASSERT_EQ(loop->control_successors().size(), 1u);
  EXPECT_EQ(loop->control_successors()[0]->name(), "after");
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(*module, diags)) << PrintModule(*module);
}

TEST(ScanExpanderTest, NoScanNoChange) {
  std::unique_ptr<Module> module = Parse(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  ROOT n = f32[4] negate(x)
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunScanExpander(*module);
  ASSERT_TRUE(changed.ok());
  EXPECT_FALSE(*changed);
}

}  // namespace
}  // namespace xlac
