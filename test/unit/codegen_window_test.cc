// reduce-window and select-and-scatter compiled with the JIT against the interpreter, bit for bit: every window
// attribute, variadic reducers, layouts, ties in the selection and overlapping scatter windows.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kTypes = {"f32", "f64", "bf16", "f16", "s32", "s8", "u8", "s64"};

void ExpectBothOptLevels(const std::string& text) {
  ExpectMatchesInterpreter(text, {}, 7, /*opt_level=*/2);
  ExpectMatchesInterpreter(text, {}, 11, /*opt_level=*/0);
}

constexpr const char* kReducers = R"(
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT r = $T[] add(a, b)
}
max {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT r = $T[] maximum(a, b)
}
ge {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
lt {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=LT
}
)";

std::string Module(const std::string& entry, const std::string& type) {
  return WithType(std::string("HloModule m\n") + kReducers + entry, type);
}

TEST(CodegenReduceWindow, StridesPaddingDilations) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    // Sum with a non-identity init (padding is skipped, not filled), overlapping windows, padding on both sides.
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[7,6] parameter(0)
  i = $T[] parameter(1)
  ROOT r = $T[4,6] reduce-window(a, i), window={size=3x2 stride=2x1 pad=1_1x0_1}, to_apply=add
})",
                               t));
    // Max with base and window dilation and negative padding.
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[5,6] parameter(0)
  i = $T[] parameter(1)
  ROOT r = $T[8,1] reduce-window(a, i), window={size=2x3 stride=1x2 pad=1_-1x-1_1 lhs_dilate=2x1 rhs_dilate=1x2},
      to_apply=max
})",
                               t));
  }
}

TEST(CodegenReduceWindow, RanksLayoutsAndEdgeCases) {
  for (const std::string& t : {"f32", "bf16", "s32", "f16"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[2,5,6,3]{1,3,2,0} parameter(0)
  i = $T[] parameter(1)
  ROOT r = $T[2,3,6,2]{2,3,0,1} reduce-window(a, i), window={size=1x3x2x2 stride=1x2x1x1 pad=0_0x1_1x0_1x0_0},
      to_apply=add
})",
                               t));
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[10] parameter(0)
  i = $T[] parameter(1)
  ROOT r = $T[10] reduce-window(a, i), window={size=5 pad=2_2}, to_apply=max
})",
                               t));
    // Windows entirely in padding give the init value.
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[2,2] parameter(0)
  i = $T[] parameter(1)
  ROOT r = $T[8,3] reduce-window(a, i), window={size=2x1 pad=4_3x0_1}, to_apply=add
})",
                               t));
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[] parameter(0)
  i = $T[] parameter(1)
  ROOT r = $T[] reduce-window(a, i), window={}, to_apply=add
})",
                               t));
  }
}

TEST(CodegenReduceWindow, VariadicArgmax) {
  for (const std::string& t : {"f32", "bf16", "s32", "s8"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(WithType(R"(
HloModule m
argmax {
  av = $T[] parameter(0)
  ai = s32[] parameter(1)
  bv = $T[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = $T[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = ($T[], s32[]) tuple(v, i)
}
ENTRY e {
  a = $T[6,7] parameter(0)
  idx = s32[6,7] iota(), iota_dimension=1
  iv = $T[] parameter(1)
  ii = s32[] constant(-1)
  ROOT r = ($T[3,4], s32[3,4]{0,1}) reduce-window(a, idx, iv, ii), window={size=2x3 stride=2x2 pad=0_0x1_1},
      to_apply=argmax
})",
                                 t));
  }
}

TEST(CodegenSelectAndScatter, OverlappingWindowsAndTies) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    // Stride below the window size: windows overlap, so the scatter order matters; small random integers tie.
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[7,6] parameter(0)
  s = $T[3,5] parameter(1)
  i = $T[] parameter(2)
  ROOT r = $T[7,6] select-and-scatter(a, s, i), window={size=3x2 stride=2x1}, select=ge, scatter=add
})",
                               t));
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[7,6] parameter(0)
  s = $T[4,4] parameter(1)
  i = $T[] parameter(2)
  ROOT r = $T[7,6] select-and-scatter(a, s, i), window={size=3x3 stride=2x2 pad=1_1x1_2}, select=lt, scatter=add
})",
                               t));
  }
}

TEST(CodegenSelectAndScatter, LayoutsDilationsAndPadding) {
  for (const std::string& t : {"f32", "bf16", "s32", "f16"}) {
    SCOPED_TRACE(t);
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[2,6,5,3]{1,3,2,0} parameter(0)
  s = $T[2,3,5,3]{0,1,2,3} parameter(1)
  i = $T[] parameter(2)
  ROOT r = $T[2,6,5,3]{2,0,3,1} select-and-scatter(a, s, i), window={size=1x2x3x1 stride=1x2x1x1 pad=0_0x0_0x1_1x0_0},
      select=ge, scatter=add
})",
                               t));
    // Windows entirely in padding select nothing; window dilation and negative padding.
    ExpectBothOptLevels(Module(R"(
ENTRY e {
  a = $T[5,6] parameter(0)
  s = $T[5,2] parameter(1)
  i = $T[] parameter(2)
  ROOT r = $T[5,6] select-and-scatter(a, s, i), window={size=2x2 stride=2x2 pad=4_1x-1_1 rhs_dilate=1x2},
      select=ge, scatter=max
})",
                               t));
  }
}

TEST(CodegenSelectAndScatter, MixedSourceType) {
  ExpectBothOptLevels(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT r = bf16[] add(a, b)
}
ENTRY e {
  a = f32[6,6] parameter(0)
  s = bf16[3,3] parameter(1)
  i = bf16[] parameter(2)
  ROOT r = bf16[6,6] select-and-scatter(a, s, i), window={size=3x3 stride=2x2 pad=0_1x0_1}, select=ge, scatter=add
})");
}

}  // namespace
}  // namespace xlac::codegen::testing
