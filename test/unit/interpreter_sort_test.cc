// sort (single/multi-operand, stable, along any dimension, total-order NaNs) and topk.
#include <limits>

#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(InterpreterSort, AscendingAndDescending) {
  constexpr char kText[] = R"(
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=%s
}
ENTRY e {
  x = f32[5] parameter(0)
  ROOT s = f32[5] sort(x), dimensions={0}, to_apply=cmp
})";
  char text[512];
  std::snprintf(text, sizeof(text), kText, "LT");
  XLAC_ASSERT_OK_AND_ASSIGN(Literal up, RunHlo(text, {Vec(F32, {3, -1, 2, 10, 0})}));
  EXPECT_EQ(Doubles(up), (std::vector<double>{-1, 0, 2, 3, 10}));
  std::snprintf(text, sizeof(text), kText, "GT");
  XLAC_ASSERT_OK_AND_ASSIGN(Literal down, RunHlo(text, {Vec(F32, {3, -1, 2, 10, 0})}));
  EXPECT_EQ(Doubles(down), (std::vector<double>{10, 3, 2, 0, -1}));
}

TEST(InterpreterSort, MultiOperandStableSortCarriesValues) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[6] parameter(0)
  v = f32[6] parameter(1)
  ROOT s = (s32[6], f32[6]) sort(k, v), dimensions={0}, is_stable=true, to_apply=cmp
})",
                                              {Ints(S32, {6}, {2, 1, 2, 0, 1, 2}), Vec(F32, {0, 1, 2, 3, 4, 5})}));
  EXPECT_EQ(Int64s(r.tuple_elements()[0]), (std::vector<int64_t>{0, 1, 1, 2, 2, 2}));
  EXPECT_EQ(Doubles(r.tuple_elements()[1]), (std::vector<double>{3, 1, 4, 0, 2, 5}));
}

TEST(InterpreterSort, SortsAlongTheGivenDimension) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}
ENTRY e {
  x = s32[3,2] parameter(0)
  ROOT s = s32[3,2] sort(x), dimensions={0}, to_apply=cmp
})",
                                              {Ints(S32, {3, 2}, {5, 0, 1, 9, 3, 4})}));
  EXPECT_EQ(Int64s(r), (std::vector<int64_t>{1, 0, 3, 4, 5, 9}));
}

TEST(InterpreterSort, TotalOrderPutsNaNsLast) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT, type=TOTALORDER
}
ENTRY e {
  x = f32[5] parameter(0)
  ROOT s = f32[5] sort(x), dimensions={0}, to_apply=cmp
})",
                                              {Vec(F32, {1, kNaN, 0, -0.0, -1})}));
  std::vector<double> v = Doubles(r);
  EXPECT_EQ(v[0], -1);
  EXPECT_TRUE(v[1] == 0 && std::signbit(v[1]));
  EXPECT_TRUE(v[2] == 0 && !std::signbit(v[2]));
  EXPECT_EQ(v[3], 1);
  EXPECT_TRUE(std::isnan(v[4]));
}

TEST(InterpreterSort, ComparatorWithSeveralOps) {
  // Sort by absolute value; the comparator is compiled, not a single compare.
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  aa = s32[] abs(a)
  bb = s32[] abs(b)
  ROOT c = pred[] compare(aa, bb), direction=LT
}
ENTRY e {
  x = s32[4] parameter(0)
  ROOT s = s32[4] sort(x), dimensions={0}, is_stable=true, to_apply=cmp
})",
                                              {Ints(S32, {4}, {-3, 2, 1, -2})}));
  EXPECT_EQ(Int64s(r), (std::vector<int64_t>{1, 2, -2, -3}));
}

TEST(InterpreterTopK, LargestWithIndices) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  x = f32[2,4] parameter(0)
  ROOT t = (f32[2,2], s32[2,2]) topk(x), k=2, largest=true
})",
                                              {Arr(F32, {2, 4}, {1, 5, 3, 5, -1, -2, -3, 0})}));
  EXPECT_EQ(Doubles(r.tuple_elements()[0]), (std::vector<double>{5, 5, 0, -1}));
  EXPECT_EQ(Int64s(r.tuple_elements()[1]), (std::vector<int64_t>{1, 3, 3, 0}));
}

}  // namespace
}  // namespace xlac::interp::testing
