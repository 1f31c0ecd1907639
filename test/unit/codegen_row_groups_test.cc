// FindRowGroups (codegen/row_groups.h) on fused modules: which kernels run row by row, at which row rank, and which
// reads or buffers keep kernels apart.
#include "codegen/pipeline.h"
#include "codegen/row_groups.h"
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

struct Found {
  std::vector<std::vector<std::string>> members;
  std::vector<std::vector<int64_t>> rows;
};

Found Groups(const std::string& text) {
  Found found;
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return found;
  absl::StatusOr<PreparedModule> prepared = PrepareModule(*module, CompileOptions{});
  EXPECT_TRUE(prepared.ok()) << prepared.status();
  if (!prepared.ok()) return found;
  std::vector<Instruction*> post = prepared->module->entry_computation()->MakePostOrder();
  std::vector<const Instruction*> order(post.begin(), post.end());
  for (const RowGroup& g : FindRowGroups(order, prepared->assignment)) {
    std::vector<std::string> names;
    for (const Instruction* m : g.members) names.push_back(std::string(m->StringAttr("kind")));
    found.members.push_back(names);
    found.rows.push_back(g.rows);
  }
  return found;
}

constexpr char kSoftmax[] = R"(
HloModule m
mx { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] maximum(x, y) }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[4,6,32,48] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[4,6,32] reduce(a, ninf), dimensions={3}, to_apply=mx
  bm = f32[4,6,32,48] broadcast(m), dimensions={0,1,2}
  s = f32[4,6,32,48] subtract(a, bm)
  x = f32[4,6,32,48] exponential(s)
  d = f32[4,6,32] reduce(x, zero), dimensions={3}, to_apply=add
  bd = f32[4,6,32,48] broadcast(d), dimensions={0,1,2}
  ROOT r = f32[4,6,32,48] divide(x, bd)
})";

TEST(RowGroups, SoftmaxIsOneGroupOverItsRows) {
  Found f = Groups(kSoftmax);
  ASSERT_EQ(f.members.size(), 1u);
  EXPECT_EQ(f.members[0], (std::vector<std::string>{"kInput", "kLoop", "kInput", "kLoop"}));
  EXPECT_EQ(f.rows[0], (std::vector<int64_t>{4, 6, 32}));
}

TEST(RowGroups, TransposedReadSplitsTheChain) {
  Found f = Groups(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  x = f32[64,64] parameter(0)
  zero = f32[] constant(0)
  s = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  bs = f32[64,64] broadcast(s), dimensions={0}
  d = f32[64,64] subtract(x, bs)
  ex = f32[64,64] exponential(d)
  t = f32[64,64] transpose(ex), dimensions={1,0}
  sum2 = f32[64] reduce(t, zero), dimensions={1}, to_apply=add
  bsum2 = f32[64,64] broadcast(sum2), dimensions={0}
  ROOT o = f32[64,64] divide(ex, bsum2)
})");
  // reduce -> exp loop form a group; the transposed reduction cannot join it (it needs whole columns of e).
  for (const std::vector<std::string>& members : f.members) {
    EXPECT_LE(members.size(), 2u);
  }
  ASSERT_GE(f.members.size(), 1u);
  EXPECT_EQ(f.members[0], (std::vector<std::string>{"kInput", "kLoop"}));
  EXPECT_EQ(f.rows[0], (std::vector<int64_t>{64}));
}

TEST(RowGroups, BroadcastAlongTheRowsIsNotRowLocal) {
  // The loop reads the reduction result broadcast along dimension 1: row r needs all of s, so the two kernels stay
  // apart.
  Found f = Groups(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  x = f32[64,64] parameter(0)
  zero = f32[] constant(0)
  s = f32[64] reduce(x, zero), dimensions={1}, to_apply=add
  bs = f32[64,64] broadcast(s), dimensions={1}
  ROOT d = f32[64,64] subtract(x, bs)
})");
  EXPECT_TRUE(f.members.empty());
}

TEST(RowGroups, ColumnReductionsAndSingleKernelsFormNoGroup) {
  Found f = Groups(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  x = f32[64,64] parameter(0)
  zero = f32[] constant(0)
  s = f32[64] reduce(x, zero), dimensions={0}, to_apply=add
  bs = f32[64,64] broadcast(s), dimensions={1}
  ROOT d = f32[64,64] subtract(x, bs)
})");
  EXPECT_TRUE(f.members.empty());
  f = Groups("HloModule m\nENTRY e {\n x = f32[64,64] parameter(0)\n ROOT y = f32[64,64] exponential(x)\n}");
  EXPECT_TRUE(f.members.empty());
}

TEST(RowGroups, RowRankIsTheLargestAllMembersShare) {
  // The loop over [8,16,32] could be cut at rank 1, 2 or 3; the reduction keeps [8,16], so the group has rank 2.
  Found f = Groups(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  x = f32[8,16,32] parameter(0)
  zero = f32[] constant(0)
  s = f32[8,16] reduce(x, zero), dimensions={2}, to_apply=add
  bs = f32[8,16,32] broadcast(s), dimensions={0,1}
  ROOT d = f32[8,16,32] multiply(x, bs)
})");
  ASSERT_EQ(f.members.size(), 1u);
  EXPECT_EQ(f.rows[0], (std::vector<int64_t>{8, 16}));
}

}  // namespace
}  // namespace xlac::codegen::testing
