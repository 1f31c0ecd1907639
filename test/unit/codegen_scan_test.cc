// scan compiled with the JIT (through scan-expander's while loop) against the interpreter: element types, scan
// dimensions, reverse, no carries, no inputs, zero length, several inputs/outputs/carries, layouts, nesting.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

TEST(CodegenScan, CumulativeSumAllTypes) {
  for (const std::string t : {"f32", "f64", "bf16", "s8", "s32", "u64"}) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
body {
  a = $T[] parameter(0)
  c = $T[] parameter(1)
  s = $T[] add(a, c)
  ROOT t = ($T[], $T[]) tuple(s, s)
}
ENTRY e {
  x = $T[9] parameter(0)
  c = $T[] parameter(1)
  ROOT s = ($T[9], $T[]) scan(x, c), dimensions={0}, num_carries=1, to_apply=body
})",
                                      t));
  }
}

TEST(CodegenScan, EveryDimensionBothDirections) {
  for (int dim = 0; dim < 3; ++dim) {
    for (const char* reverse : {"false", "true"}) {
      SCOPED_TRACE(std::to_string(dim) + " reverse=" + reverse);
      // The carried row depends on the order, so a wrong direction or index shows.
      std::vector<int64_t> dims = {3, 4, 5};
      std::vector<int64_t> rest;
      for (int d = 0; d < 3; ++d) {
        if (d != dim) rest.push_back(dims[d]);
      }
      std::string slice = "f32[" + std::to_string(rest[0]) + "," + std::to_string(rest[1]) + "]";
      std::string text = absl::StrReplaceAll(R"(
HloModule m
body {
  a = $S parameter(0)
  c = $S parameter(1)
  h = $S multiply(c, c)
  s = $S subtract(a, h)
  ROOT t = ($S, $S) tuple(h, s)
}
ENTRY e {
  x = f32[3,4,5] parameter(0)
  c = $S parameter(1)
  ROOT s = (f32[3,4,5], $S) scan(x, c), dimensions={$D}, num_carries=1, is_reverse=$R, to_apply=body
})",
                                             {{"$S", slice}, {"$D", std::to_string(dim)}, {"$R", reverse}});
      ExpectMatchesInterpreter(text);
    }
  }
}

TEST(CodegenScan, NoCarriesNonTupleResult) {
  ExpectMatchesInterpreter(R"(
HloModule m
body {
  a = f32[2,4] parameter(0)
  ROOT n = f32[2,4] exponential(a)
}
ENTRY e {
  x = f32[2,3,4] parameter(0)
  s = f32[2,3,4] scan(x), dimensions={1}, num_carries=0, is_reverse=true, to_apply=body
  ROOT r = f32[2,3,4] negate(s)
})");
}

TEST(CodegenScan, NoInputs) {
  ExpectMatchesInterpreter(R"(
HloModule m
body {
  c = s32[] parameter(0)
  d = f32[2] parameter(1)
  one = s32[] constant(1)
  n = s32[] add(c, one)
  cf = f32[] convert(c)
  b = f32[2] broadcast(cf), dimensions={}
  e = f32[2] add(d, b)
  ROOT t = (f32[2], s32[], f32[2]) tuple(e, n, e)
}
ENTRY e {
  c = s32[] parameter(0)
  d = f32[2] parameter(1)
  ROOT s = (f32[6,2], s32[], f32[2]) scan(c, d), dimensions={0}, num_carries=2, to_apply=body
})");
}

TEST(CodegenScan, ZeroLength) {
  ExpectMatchesInterpreter(R"(
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
})");
}

TEST(CodegenScan, SeveralInputsOutputsAndCarries) {
  ExpectMatchesInterpreter(R"(
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
})");
}

TEST(CodegenScan, NonDefaultLayouts) {
  ExpectMatchesInterpreter(R"(
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
  c = f32[2,3]{0,1} parameter(1)
  d = f32[2,3] parameter(2)
  s = (f32[4,2,3]{0,2,1}, f32[2,3]{1,0}) scan(x, c), dimensions={0}, num_carries=1, to_apply=body
  scan2 = (f32[4,2,3]{1,0,2}, f32[2,3]{0,1}) scan(x, d), dimensions={0}, num_carries=1, is_reverse=true, to_apply=body
  ROOT t = ((f32[4,2,3]{0,2,1}, f32[2,3]{1,0}), (f32[4,2,3]{1,0,2}, f32[2,3]{0,1})) tuple(s, scan2)
})");
}

TEST(CodegenScan, NestedAndShared) {
  // The inner body is used by two scans and the outer body runs a scan itself.
  ExpectMatchesInterpreter(R"(
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
  s = (f32[4,3], f32[]) scan(x, c), dimensions={0}, num_carries=1, is_reverse=true, to_apply=outer
  y = f32[4,3] get-tuple-element(s), index=0
  scan2 = (f32[4,3], f32[]) scan(y, c), dimensions={0}, num_carries=1, to_apply=outer
  flat = f32[12] reshape(x)
  scan3 = (f32[12], f32[]) scan(flat, c), dimensions={0}, num_carries=1, to_apply=inner
  ROOT t = ((f32[4,3], f32[]), (f32[4,3], f32[]), (f32[12], f32[])) tuple(s, scan2, scan3)
})");
}

}  // namespace
}  // namespace xlac::codegen::testing
