// sort compiled with the JIT against the interpreter (a stable sort of every row): element types, every dimension,
// layouts, row lengths around the merge widths, multi-operand sorts with ties (stability), total-order comparators
// on NaNs and signed zeros, lexicographic comparators.
#include <cmath>
#include <limits>

#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kTypes = {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32", "pred"};

TEST(CodegenSort, EveryDimensionAllTypes) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
lt {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
gt {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=GT
}
ENTRY e {
  a = $T[5,6,7] parameter(0)
  b = $T[5,6,7]{0,2,1} parameter(1)
  r0 = $T[5,6,7] sort(a), dimensions={0}, to_apply=lt
  r1 = $T[5,6,7]{1,0,2} sort(a), dimensions={1}, is_stable=true, to_apply=gt
  r2 = $T[5,6,7] sort(b), dimensions={2}, to_apply=lt
  ROOT t = ($T[5,6,7], $T[5,6,7]{1,0,2}, $T[5,6,7]) tuple(r0, r1, r2)
})",
                                      t));
  }
}

TEST(CodegenSort, RowLengths) {
  for (int64_t len : {1, 2, 3, 4, 5, 8, 9, 31, 64, 100, 1000}) {
    SCOPED_TRACE(len);
    std::string text = absl::StrReplaceAll(R"(
HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
lt8 {
  x = s8[] parameter(0)
  y = s8[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[3,$N] parameter(0)
  b = s8[$N] parameter(1)
  s = f32[3,$N] sort(a), dimensions={1}, to_apply=lt
  k = s8[$N] sort(b), dimensions={0}, to_apply=lt8
  ROOT t = (f32[3,$N], s8[$N]) tuple(s, k)
})",
                                           {{"$N", std::to_string(len)}});
    ExpectMatchesInterpreter(text, {}, static_cast<uint64_t>(len));
    // Unoptimized code keeps the merge loop variables in memory.
    if (len == 9 || len == 100) ExpectMatchesInterpreter(text, {}, static_cast<uint64_t>(len), /*opt_level=*/0);
  }
}

TEST(CodegenSort, MultiOperandIsStableOnTies) {
  // s8 keys are 0..7 at random: many ties, whose f32/s32 payloads must keep their order.
  for (const char* dir : {"LT", "GT"}) {
    SCOPED_TRACE(dir);
    ExpectMatchesInterpreter(absl::StrReplaceAll(R"(
HloModule m
cmp {
  k0 = s8[] parameter(0)
  k1 = s8[] parameter(1)
  v0 = f32[] parameter(2)
  v1 = f32[] parameter(3)
  i0 = s32[] parameter(4)
  i1 = s32[] parameter(5)
  ROOT c = pred[] compare(k0, k1), direction=DIR
}
ENTRY e {
  k = s8[4,50] parameter(0)
  v = f32[4,50]{0,1} parameter(1)
  i = s32[4,50] iota(), iota_dimension=1
  ROOT s = (s8[4,50], f32[4,50], s32[4,50]{0,1}) sort(k, v, i), dimensions={1}, to_apply=cmp
})",
                                                 {{"DIR", dir}}));
  }
}

TEST(CodegenSort, LexicographicComparator) {
  ExpectMatchesInterpreter(R"(
HloModule m
cmp {
  a0 = u8[] parameter(0)
  a1 = u8[] parameter(1)
  b0 = bf16[] parameter(2)
  b1 = bf16[] parameter(3)
  lt = pred[] compare(a0, a1), direction=LT
  eq = pred[] compare(a0, a1), direction=EQ
  blt = pred[] compare(b0, b1), direction=GT
  tie = pred[] and(eq, blt)
  ROOT c = pred[] or(lt, tie)
}
ENTRY e {
  a = u8[64,3] parameter(0)
  b = bf16[64,3] parameter(1)
  ROOT s = (u8[64,3], bf16[64,3]) sort(a, b), dimensions={0}, to_apply=cmp
})");
}

TEST(CodegenSort, TotalOrderOnSpecialFloats) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> values = {1.5f, -0.0f, nan, 0.0f, -inf, -nan, 3.0f, inf, -1.0f, 0.0f, -0.0f, nan, 2.0f};
  Literal x(Shape::Array(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) x.Set<float>(static_cast<int64_t>(i), values[i]);
  std::vector<Literal> args;
  args.push_back(std::move(x));
  ExpectMatchesInterpreter(R"(
HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  i = s32[] parameter(2)
  j = s32[] parameter(3)
  ROOT c = pred[] compare(x, y), direction=LT, type=TOTALORDER
}
ENTRY e {
  a = f32[13] parameter(0)
  i = s32[13] iota(), iota_dimension=0
  ROOT s = (f32[13], s32[13]) sort(a, i), dimensions={0}, to_apply=lt
})",
                           std::move(args));
}

TEST(CodegenSort, SizeOneDimension) {
  ExpectMatchesInterpreter(R"(
HloModule m
lt {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT c = pred[] compare(x, y), direction=LT
}
ENTRY e {
  a = f32[1] parameter(0)
  b = f32[4,1]{0,1} parameter(1)
  s = f32[1] sort(a), dimensions={0}, to_apply=lt
  t = f32[4,1] sort(b), dimensions={1}, to_apply=lt
  ROOT r = (f32[1], f32[4,1]) tuple(s, t)
})");
}

}  // namespace
}  // namespace xlac::codegen::testing
