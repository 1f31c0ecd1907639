// layout-assignment (passes/layout_assignment.h) under the JIT: every rule's module still computes the
// interpreter's results (bit for bit in exact mode), and the rule really fired (the test would pass vacuously if the
// pass changed nothing).
#include <algorithm>

#include "codegen_test_util.h"
#include "passes/layout_assignment.h"

namespace xlac::codegen::testing {
namespace {

// Opcodes of the entry computation after layout assignment.
std::vector<Opcode> OpcodesAfterLayoutAssignment(const std::string& text) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return {};
  absl::StatusOr<bool> changed = RunLayoutAssignment(*module);
  EXPECT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(changed.value_or(false)) << "layout-assignment changed nothing";
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(*module, diags)) << PrintModule(*module);
  std::vector<Opcode> opcodes;
  for (const Instruction* inst : module->entry_computation()->MakePostOrder()) opcodes.push_back(inst->opcode());
  return opcodes;
}

int Count(const std::vector<Opcode>& opcodes, Opcode op) {
  return static_cast<int>(std::count(opcodes.begin(), opcodes.end(), op));
}

constexpr char kAttentionOutput[] = R"(
HloModule m
ENTRY e {
  a = f32[2,3,16,24] parameter(0)
  b = f32[2,3,24,20] parameter(1)
  w = f32[60,7] parameter(2)
  d = f32[2,3,16,20] dot(a, b), lhs_batch_dims={0,1}, lhs_contracting_dims={3}, rhs_batch_dims={0,1}, rhs_contracting_dims={2}
  t = f32[2,16,3,20] transpose(d), dimensions={0,2,1,3}
  r = f32[32,60] reshape(t)
  ROOT o = f32[32,7] dot(r, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";

TEST(LayoutAssignmentCodegen, DotWritesTheTransposedLayout) {
  std::vector<Opcode> ops = OpcodesAfterLayoutAssignment(kAttentionOutput);
  EXPECT_EQ(Count(ops, Opcode::kTranspose), 0);
  EXPECT_EQ(Count(ops, Opcode::kReshape), 0);
  EXPECT_EQ(Count(ops, Opcode::kBitcast), 2);
  ExpectMatchesInterpreter(kAttentionOutput);
}

constexpr char kTransposesAroundDot[] = R"(
HloModule m
ENTRY e {
  x = f32[24,36] parameter(0)
  y = f32[24,20] parameter(1)
  t = f32[36,24] transpose(x), dimensions={1,0}
  d = f32[36,20] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  dt = f32[20,36] transpose(d), dimensions={1,0}
  e2 = f32[20,36] exponential(dt)
  ROOT t2 = f32[36,20] transpose(e2), dimensions={1,0}
})";

TEST(LayoutAssignmentCodegen, TransposesBecomeStridedReads) {
  std::vector<Opcode> ops = OpcodesAfterLayoutAssignment(kTransposesAroundDot);
  EXPECT_EQ(Count(ops, Opcode::kTranspose), 0);
  ExpectMatchesInterpreter(kTransposesAroundDot);
}

constexpr char kConvolutionChain[] = R"(
HloModule m
sum { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
lt { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT l = pred[] compare(x, y), direction=LT }
ENTRY e {
  x = f32[2,9,9,5] parameter(0)
  w = f32[3,3,5,16] parameter(1)
  b = f32[16] parameter(2)
  zero = f32[] constant(0)
  c = f32[2,7,7,16]{1,3,2,0} convolution(x, w), window={size=3x3}, dim_labels=b01f_01io->b01f
  bb = f32[2,7,7,16]{1,3,2,0} broadcast(b), dimensions={3}
  a = f32[2,7,7,16]{1,3,2,0} add(c, bb)
  m = f32[2,7,7,16]{1,3,2,0} maximum(a, bb)
  s = f32[2,7,16]{1,2,0} reduce(m, zero), dimensions={1}, to_apply=sum
  so = f32[2,7,7,16]{1,3,2,0} sort(a), dimensions={3}, to_apply=lt
  ROOT t = (f32[2,7,16]{1,2,0}, f32[2,7,7,16]{1,3,2,0}) tuple(s, so)
})";

TEST(LayoutAssignmentCodegen, FeatureMinorConvolutionChain) {
  std::vector<Opcode> ops = OpcodesAfterLayoutAssignment(kConvolutionChain);
  EXPECT_EQ(Count(ops, Opcode::kCopy), 1);  // the sort reads the add in its written layout
  ExpectMatchesInterpreter(kConvolutionChain);
}

constexpr char kReshapes[] = R"(
HloModule m
ENTRY e {
  x = f32[4,6,10] parameter(0)
  y = f32[12,10]{0,1} parameter(1)
  r1 = f32[24,10] reshape(x)
  r2 = f32[4,1,60] reshape(x)
  r3 = f32[120] reshape(y)
  n1 = f32[24,10] negate(r1)
  s = f32[24,10] add(n1, r1)
  ROOT t = (f32[24,10], f32[4,1,60], f32[120]) tuple(s, r2, r3)
})";

TEST(LayoutAssignmentCodegen, ReshapesBetweenRowMajorLayoutsAreBitcasts) {
  std::vector<Opcode> ops = OpcodesAfterLayoutAssignment(kReshapes);
  EXPECT_EQ(Count(ops, Opcode::kBitcast), 2);
  EXPECT_EQ(Count(ops, Opcode::kReshape), 1);
  ExpectMatchesInterpreter(kReshapes);
}

constexpr char kWhileBody[] = R"(
HloModule m
cond { p = (s32[], f32[8,8]{0,1}) parameter(0)  i = s32[] get-tuple-element(p), index=0  n = s32[] constant(3)  ROOT c = pred[] compare(i, n), direction=LT }
body {
  p = (s32[], f32[8,8]{0,1}) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[8,8]{0,1} get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  t = f32[8,8] transpose(x), dimensions={1,0}
  d = f32[8,8] dot(t, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  th = f32[8,8] tanh(d)
  dt = f32[8,8] transpose(th), dimensions={1,0}
  s = f32[8,8]{0,1} add(dt, x)
  ROOT r = (s32[], f32[8,8]{0,1}) tuple(i1, s)
}
ENTRY e {
  x = f32[8,8]{0,1} parameter(0)
  z = s32[] constant(0)
  t = (s32[], f32[8,8]{0,1}) tuple(z, x)
  w = (s32[], f32[8,8]{0,1}) while(t), condition=cond, body=body
  ROOT g = f32[8,8]{0,1} get-tuple-element(w), index=1
})";

TEST(LayoutAssignmentCodegen, WhileBody) {
  std::unique_ptr<Module> module = ParseAndVerify(kWhileBody);
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(RunLayoutAssignment(*module).value_or(false));
  for (const auto& inst : module->FindComputation("body")->instructions()) {
    EXPECT_NE(inst->opcode(), Opcode::kTranspose) << inst->name();
  }
  ExpectMatchesInterpreter(kWhileBody);
}

}  // namespace
}  // namespace xlac::codegen::testing
