// reduce (incl. variadic argmax and narrow-float accumulation order), reduce-window (stride, padding, base and
// window dilation, variadic) and select-and-scatter.
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType BF16 = PrimitiveType::kBF16;
constexpr PrimitiveType S32 = PrimitiveType::kS32;

constexpr char kAddF32[] = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

Literal Iota(PrimitiveType t, std::vector<int64_t> dims) {
  Literal lit(Shape::Array(t, dims));
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.SetFromDouble(i, static_cast<double>(i));
  return lit;
}

TEST(InterpreterReduce, SumOverDimensions) {
  const std::string head =
      std::string("HloModule m\n") + kAddF32 + "ENTRY e {\n  x = f32[2,3,4] parameter(0)\n  z = f32[] constant(0)\n";
  XLAC_ASSERT_OK_AND_ASSIGN(
      Literal r1,
      RunHlo(head + "  ROOT r = f32[2,4] reduce(x, z), dimensions={1}, to_apply=add\n}", {Iota(F32, {2, 3, 4})}));
  // r[i][k] = sum_j x[i][j][k] = 3*(12i + k) + 4*(0+1+2)
  EXPECT_EQ(Doubles(r1), (std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57}));
  XLAC_ASSERT_OK_AND_ASSIGN(
      Literal r2,
      RunHlo(head + "  ROOT r = f32[3] reduce(x, z), dimensions={0,2}, to_apply=add\n}", {Iota(F32, {2, 3, 4})}));
  EXPECT_EQ(Doubles(r2), (std::vector<double>{60, 92, 124}));
  XLAC_ASSERT_OK_AND_ASSIGN(
      Literal r3,
      RunHlo(head + "  ROOT r = f32[] reduce(x, z), dimensions={0,1,2}, to_apply=add\n}", {Iota(F32, {2, 3, 4})}));
  EXPECT_EQ(Doubles(r3), (std::vector<double>{276}));
}

TEST(InterpreterReduce, NarrowFloatAccumulatesSequentiallyWithRounding) {
  // bf16: 256 + 1 + 1 + ... stays 256 (each add rounds back), while summing the ones first would give more.
  constexpr char kText[] = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = bf16[5] parameter(0)
  z = bf16[] constant(0)
  ROOT r = bf16[] reduce(x, z), dimensions={0}, to_apply=add
})";
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(kText, {Vec(BF16, {256, 1, 1, 1, 1})}));
  EXPECT_EQ(r.GetAsDouble(0), 256);
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r2, RunHlo(kText, {Vec(BF16, {1, 1, 1, 1, 256})}));
  EXPECT_EQ(r2.GetAsDouble(0), 260);
}

TEST(InterpreterReduce, ReducerArgumentOrderIsAccumulatorFirst) {
  // A non-commutative reducer (a - b) exposes the order: ((((init - x0) - x1) - x2).
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
sub {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] subtract(a, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(100)
  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=sub
})",
                                              {Vec(F32, {1, 2, 3})}));
  EXPECT_EQ(r.GetAsDouble(0), 94);
}

TEST(InterpreterReduce, VariadicArgmax) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  keep = pred[] or(gt, tie)
  v = f32[] select(keep, av, bv)
  i = s32[] select(keep, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[2,4] parameter(0)
  idx = s32[2,4] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
})",
                                              {Arr(F32, {2, 4}, {3, 9, 9, 1, -5, -2, -7, -2})}));
  EXPECT_EQ(Doubles(r.tuple_elements()[0]), (std::vector<double>{9, -2}));
  EXPECT_EQ(Int64s(r.tuple_elements()[1]), (std::vector<int64_t>{1, 1}));
}

TEST(InterpreterReduce, ReduceWindowStridePadding) {
  // Max pool 1-D, window 3, stride 2, padding 1/1 over [1..6]; padding contributes only the init value.
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[6] parameter(0)
  init = f32[] constant(-inf)
  ROOT r = f32[3] reduce-window(x, init), window={size=3 stride=2 pad=1_1}, to_apply=max
})",
                                              {Vec(F32, {1, 5, 2, 6, 3, 4})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{5, 6, 6}));
}

TEST(InterpreterReduce, ReduceWindowDilations) {
  const std::string head =
      std::string("HloModule m\n") + kAddF32 + "ENTRY e {\n  x = f32[5] parameter(0)\n  z = f32[] constant(0)\n";
  // Window dilation 2: windows {0,2}, {1,3}, {2,4}.
  XLAC_ASSERT_OK_AND_ASSIGN(
      Literal wd, RunHlo(head + "  ROOT r = f32[3] reduce-window(x, z), window={size=2 rhs_dilate=2}, to_apply=add\n}",
                         {Vec(F32, {1, 2, 3, 4, 5})}));
  EXPECT_EQ(Doubles(wd), (std::vector<double>{4, 6, 8}));
  // Base dilation 2: base is [1,_,2,_,3,_,4,_,5] (holes are skipped); size-2 windows over 9 positions -> 8 outputs.
  XLAC_ASSERT_OK_AND_ASSIGN(
      Literal bd, RunHlo(head + "  ROOT r = f32[8] reduce-window(x, z), window={size=2 lhs_dilate=2}, to_apply=add\n}",
                         {Vec(F32, {1, 2, 3, 4, 5})}));
  EXPECT_EQ(Doubles(bd), (std::vector<double>{1, 2, 2, 3, 3, 4, 4, 5}));
}

TEST(InterpreterReduce, ReduceWindow2DVariadic) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
sum2 {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  n = s32[] add(b, d)
  ROOT t = (f32[], s32[]) tuple(s, n)
}
ENTRY e {
  x = f32[3,3] parameter(0)
  c1 = s32[] constant(1)
  one = s32[3,3] broadcast(c1), dimensions={}
  z = f32[] constant(0)
  zi = s32[] constant(0)
  ROOT r = (f32[2,2], s32[2,2]) reduce-window(x, one, z, zi), window={size=2x2}, to_apply=sum2
})",
                                              {Iota(F32, {3, 3})}));
  EXPECT_EQ(Doubles(r.tuple_elements()[0]), (std::vector<double>{8, 12, 20, 24}));
  EXPECT_EQ(Int64s(r.tuple_elements()[1]), (std::vector<int64_t>{4, 4, 4, 4}));
}

TEST(InterpreterReduce, SelectAndScatterMaxPoolGradient) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(std::string(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
)") + kAddF32 + R"(
ENTRY e {
  x = f32[6] parameter(0)
  src = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[6] select-and-scatter(x, src, z), window={size=2 stride=2}, select=ge, scatter=add
})",
                                              {Vec(F32, {1, 5, 7, 7, 3, 2}), Vec(F32, {10, 20, 30})}));
  // Window maxima: index 1, index 2 (first of the tie: GE keeps the current selection), index 4.
  EXPECT_EQ(Doubles(r), (std::vector<double>{0, 10, 20, 0, 30, 0}));
}

TEST(InterpreterReduce, SelectAndScatterOverlappingWindowsAccumulate) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(std::string(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
)") + kAddF32 + R"(
ENTRY e {
  x = f32[4] parameter(0)
  src = f32[3] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, src, z), window={size=2 stride=1}, select=ge, scatter=add
})",
                                              {Vec(F32, {1, 9, 2, 3}), Vec(F32, {1, 2, 4})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{0, 3, 0, 4}));
  (void)S32;
}

}  // namespace
}  // namespace xlac::interp::testing
