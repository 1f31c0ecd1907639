// Fusions emitted as one kernel (codegen/ir_emitter_fusion.cc, codegen/elemental_emitter.cc) and the reduction
// loops (EmitReduction): exact mode matches the interpreter bit for bit; the default mode, which reassociates
// f32/f64 sums, stays within n * 2^-23 relative error for the n-term sums of non-negative terms used here (the
// bound of either summation order is (n-1) u sum|x|, u = 2^-24).
#include <cmath>
#include <string>
#include <vector>

#include "codegen/pipeline.h"
#include "test/unit/codegen_test_util.h"

namespace xlac::codegen {
namespace {

using testing::DescribeDifference;
using testing::ParseAndVerify;

struct Runs {
  std::vector<Literal> expected, actual;
};

// Runs `text` on the interpreter and the JIT (exact or default mode) with seeded random arguments.
bool Run(const std::string& text, bool exact, Runs& runs, uint64_t seed = 11) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return false;
  std::vector<Literal> args;
  const Computation* entry = module->entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), seed + static_cast<uint64_t>(i)));
  }
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  EXPECT_TRUE(expected.ok()) << expected.status().ToString();
  if (!expected.ok()) return false;
  JitOptions options;
  options.compile.exact = exact;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString() << "\n" << text;
  if (!exe.ok()) return false;
  absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
  EXPECT_TRUE(actual.ok()) << actual.status().ToString();
  if (!actual.ok()) return false;
  runs.expected = *std::move(expected);
  runs.actual = *std::move(actual);
  EXPECT_EQ(runs.expected.size(), runs.actual.size());
  return runs.expected.size() == runs.actual.size();
}

void ExpectExact(const std::string& text) {
  Runs runs;
  if (!Run(text, /*exact=*/true, runs)) return;
  for (size_t i = 0; i < runs.actual.size(); ++i) {
    std::string difference = DescribeDifference(runs.expected[i], runs.actual[i]);
    EXPECT_TRUE(difference.empty()) << "output " << i << ": " << difference << "\n" << text;
  }
}

void ExpectCloseLeaf(const Literal& expected, const Literal& actual, double relative, const std::string& what) {
  if (expected.is_tuple()) {
    for (size_t i = 0; i < expected.tuple_elements().size(); ++i) {
      ExpectCloseLeaf(expected.tuple_elements()[i], actual.tuple_elements()[i], relative, what);
    }
    return;
  }
  ASSERT_EQ(expected.element_count(), actual.element_count());
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    double e = expected.GetAsDouble(i), a = actual.GetAsDouble(i);
    if (std::isnan(e) && std::isnan(a)) continue;
    ASSERT_LE(std::fabs(e - a), relative * std::max(1.0, std::fabs(e))) << "element " << i << "\n" << what;
  }
}

// Default mode: every float output within `relative` * max(1, |expected|).
void ExpectClose(const std::string& text, double relative) {
  Runs runs;
  if (!Run(text, /*exact=*/false, runs)) return;
  for (size_t i = 0; i < runs.actual.size(); ++i) ExpectCloseLeaf(runs.expected[i], runs.actual[i], relative, text);
}

void ExpectBoth(const std::string& text, double relative) {
  ExpectExact(text);
  ExpectClose(text, relative);
}

// Fusions left in the prepared module, and the temp bytes buffer assignment gave it.
struct Prepared {
  int fusions = 0;
  int64_t temp_bytes = 0;
};
Prepared Prepare(const std::string& text) {
  Prepared p;
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return p;
  CompileOptions options;
  options.opt_level = 0;  // no fusion pass: the fusions written here, as written
  absl::StatusOr<PreparedModule> prepared = PrepareModule(*module, options);
  EXPECT_TRUE(prepared.ok()) << prepared.status().ToString();
  if (!prepared.ok()) return p;
  for (const auto& comp : prepared->module->computations()) {
    for (const auto& inst : comp->instructions()) p.fusions += inst->opcode() == Opcode::kFusion;
  }
  p.temp_bytes = prepared->assignment.temp_bytes();
  return p;
}

constexpr char kLoopChain[] = R"(
HloModule m

fused {
  a = f32[8,16] parameter(0)
  b = f32[16] parameter(1)
  bb = f32[8,16] broadcast(b), dimensions={1}
  s = f32[8,16] add(a, bb)
  t = f32[16,8] transpose(s), dimensions={1,0}
  sl = f32[16,4] slice(t), slice={[0:16], [2:6]}
  c = f32[16,12] concatenate(sl, t), dimensions={1}
  z = f32[] constant(-1)
  p = f32[19,25] pad(c, z), padding=1_2x-1_3_1
  cv = bf16[19,25] convert(p)
  h = bf16[19,25] multiply(cv, cv)
  k = bf16[19,25] add(h, cv)
  zero = bf16[] constant(0)
  zb = bf16[19,25] broadcast(zero), dimensions={}
  gt = pred[19,25] compare(k, zb), direction=GT
  sel = bf16[19,25] select(gt, k, cv)
  e = f32[19,25] convert(sel)
  ROOT r = (f32[19,25], f32[19,25], bf16[19,25]) tuple(e, p, h)
}

ENTRY main {
  a = f32[8,16] parameter(0)
  b = f32[16] parameter(1)
  ROOT f = (f32[19,25], f32[19,25], bf16[19,25]) fusion(a, b), kind=kLoop, calls=fused
}
)";

TEST(CodegenFusion, LoopChainWithBf16RoundingAndMultiOutput) {
  ExpectBoth(kLoopChain, 0);  // every op rounds to bf16 before the next: nothing to contract
  Prepared p = Prepare(kLoopChain);
  EXPECT_EQ(p.fusions, 1);
  // Only the three outputs get bytes: 2 x 19x25 f32 and 19x25 bf16, each rounded up to 64-byte alignment.
  EXPECT_EQ(p.temp_bytes, 1920 + 1920 + 960);
}

TEST(CodegenFusion, LoopIndexMaps) {
  ExpectBoth(R"(
HloModule m

fused {
  a = f32[6,4,10] parameter(0)
  i = s32[] parameter(1)
  r = f32[24,10] reshape(a)
  rv = f32[24,10] reverse(r), dimensions={0,1}
  io = s32[24,10] iota(), iota_dimension=0
  fo = f32[24,10] convert(io)
  m = f32[24,10] multiply(rv, fo)
  ds = f32[5,10] dynamic-slice(m, i, i), dynamic_slice_sizes={5,10}
  c = f32[5,10] constant({{1,2,3,4,5,6,7,8,9,10},{1,2,3,4,5,6,7,8,9,10},{0,0,0,0,0,0,0,0,0,0},{-1,-1,-1,-1,-1,-1,-1,-1,-1,-1},{3,3,3,3,3,3,3,3,3,3}})
  s = f32[5,10] subtract(ds, c)
  lo = f32[] constant(-2)
  hi = f32[] constant(2)
  cl = f32[5,10] clamp(lo, s, hi)
  b = f32[50] reshape(cl)
  bi = s32[50] bitcast-convert(b)
  sh = s32[50] shift-right-logical(bi, bi)
  ROOT t = (f32[50], s32[50]) tuple(b, sh)
}

ENTRY main {
  a = f32[6,4,10] parameter(0)
  i = s32[] constant(17)
  ROOT f = (f32[50], s32[50]) fusion(a, i), kind=kLoop, calls=fused
}
)",
             0x1p-22);  // the default mode may contract multiply and subtract
}

TEST(CodegenFusion, LoopBitcastConvertOfNarrowAndPredTypes) {
  ExpectBoth(R"(
HloModule m

fused {
  a = f8e4m3fn[64] parameter(0)
  b = s4[64] parameter(1)
  c = u8[64] parameter(2)
  ai = s8[64] bitcast-convert(a)
  bu = u4[64] bitcast-convert(b)
  cp = pred[64] bitcast-convert(c)
  af = f8e5m2[64] bitcast-convert(ai)
  ROOT t = (s8[64], u4[64], pred[64], f8e5m2[64]) tuple(ai, bu, cp, af)
}

ENTRY main {
  a = f8e4m3fn[64] parameter(0)
  b = s4[64] parameter(1)
  c = u8[64] parameter(2)
  ROOT f = (s8[64], u4[64], pred[64], f8e5m2[64]) fusion(a, b, c), kind=kLoop, calls=fused
}
)",
             0);
}

// Reduction lengths 1 (degenerate), 3, 17, 301 and 4099 (odd remainders of any vector width), rows and columns.
std::string RowColumnModule(int64_t rows, int64_t cols) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  std::string shape = "f32[" + r + "," + c + "]";
  return R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
mx {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}

fused_row {
  x = )" +
         shape + R"( parameter(0)
  e = )" +
         shape + R"( exponential(x)
  z = f32[] constant(0)
  m = f32[] constant(-inf)
  r0 = f32[)" +
         r + R"(] reduce(e, z), dimensions={1}, to_apply=sum
  r1 = f32[)" +
         r + R"(] reduce(x, m), dimensions={1}, to_apply=mx
  ROOT t = (f32[)" +
         r + "], f32[" + r + R"(]) tuple(r0, r1)
}

fused_col {
  x = )" +
         shape + R"( parameter(0)
  y = )" +
         shape + R"( multiply(x, x)
  z = f32[] constant(0)
  ROOT r = f32[)" +
         c + R"(] reduce(y, z), dimensions={0}, to_apply=sum
}

ENTRY main {
  a = )" +
         shape + R"( parameter(0)
  f = (f32[)" +
         r + "], f32[" + r + R"(]) fusion(a), kind=kInput, calls=fused_row
  g = f32[)" +
         c + R"(] fusion(a), kind=kInput, calls=fused_col
  sq = )" +
         shape + R"( multiply(a, a)
  zero = f32[] constant(0)
  s = f32[)" +
         r + R"(] reduce(sq, zero), dimensions={1}, to_apply=sum
  f0 = f32[)" +
         r + R"(] get-tuple-element(f), index=0
  f1 = f32[)" +
         r + R"(] get-tuple-element(f), index=1
  ROOT o = (f32[)" +
         r + "], f32[" + r + "], f32[" + c + "], f32[" + r + R"(]) tuple(f0, f1, g, s)
}
)";
}

TEST(CodegenFusion, InputFusionRowsAndColumnsOfOddLengths) {
  for (auto [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {3, 17}, {17, 3}, {37, 301}, {5, 4099}}) {
    SCOPED_TRACE(std::to_string(rows) + "x" + std::to_string(cols));
    std::string text = RowColumnModule(rows, cols);
    ExpectExact(text);
    // Sums of n non-negative terms: each order is within (n-1) u of the exact sum, so they differ by < n 2^-23.
    ExpectClose(text, static_cast<double>(std::max(rows, cols)) * 0x1p-23);
  }
}

TEST(CodegenFusion, InputFusionBf16AndF64) {
  // bf16 sums round after every step (never reordered); f64 sums reassociate in the default mode.
  ExpectBoth(R"(
HloModule m

bsum {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
dsum {
  a = f64[] parameter(0)
  b = f64[] parameter(1)
  ROOT s = f64[] add(a, b)
}

fused {
  x = bf16[9,130] parameter(0)
  a = bf16[9,130] abs(x)
  d = f64[9,130] convert(a)
  e = f64[9,130] multiply(d, d)
  bz = bf16[] constant(0)
  dz = f64[] constant(0)
  r0 = bf16[9] reduce(a, bz), dimensions={1}, to_apply=bsum
  r1 = f64[9] reduce(e, dz), dimensions={1}, to_apply=dsum
  ROOT t = (bf16[9], f64[9]) tuple(r0, r1)
}

ENTRY main {
  x = bf16[9,130] parameter(0)
  ROOT f = (bf16[9], f64[9]) fusion(x), kind=kInput, calls=fused
}
)",
             130 * 0x1p-52);
}

TEST(CodegenFusion, FusionsAndAccumulatorsGetNoBuffers) {
  Prepared p = Prepare(RowColumnModule(37, 301));
  EXPECT_EQ(p.fusions, 2);
  // Four outputs (37, 37, 301 and 37 floats) and the unfused square; nothing for the fused exponential or square.
  EXPECT_EQ(p.temp_bytes, 192 + 192 + 1216 + 192 + 44608);
}

TEST(CodegenFusion, ColumnReductionsOfOtherLayoutsAndTypes) {
  // Reduced dimensions not in memory order (layout {0,1,2}; 231 non-negative terms), an integer reduce, a bf16
  // reduce and a min over a middle dimension.
  ExpectBoth(R"(
HloModule m

sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
isum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
bsum {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
mn {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] minimum(a, b)
}

ENTRY main {
  x = f32[7,9,33]{0,1,2} parameter(0)
  i = s32[7,9,33] parameter(1)
  h = bf16[7,9,33] parameter(2)
  x2 = f32[7,9,33]{0,1,2} multiply(x, x)
  z = f32[] constant(0)
  iz = s32[] constant(0)
  bz = bf16[] constant(0)
  pinf = f32[] constant(inf)
  r0 = f32[9] reduce(x2, z), dimensions={0,2}, to_apply=sum
  r1 = s32[7] reduce(i, iz), dimensions={1,2}, to_apply=isum
  r2 = bf16[9,33] reduce(h, bz), dimensions={0}, to_apply=bsum
  r3 = f32[7,33] reduce(x, pinf), dimensions={1}, to_apply=mn
  ROOT t = (f32[9], s32[7], bf16[9,33], f32[7,33]) tuple(r0, r1, r2, r3)
}
)",
             231 * 0x1p-23);
}

TEST(CodegenFusion, VariadicArgmaxKeepsItsOrderInBothModes) {
  // Not associative as written (ties pick the first index): sequential in both modes, so bitwise in both.
  std::string text = R"(
HloModule m

argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(bv, av), direction=GT
  v = f32[] select(gt, bv, av)
  i = s32[] select(gt, bi, ai)
  ROOT t = (f32[], s32[]) tuple(v, i)
}

fused {
  x = f32[13,129] parameter(0)
  a = f32[13,129] abs(x)
  io = s32[13,129] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[13], s32[13]) reduce(a, io, ninf, zero), dimensions={1}, to_apply=argmax
}

ENTRY main {
  x = f32[13,129] parameter(0)
  ROOT f = (f32[13], s32[13]) fusion(x), kind=kInput, calls=fused
}
)";
  ExpectBoth(text, 0);
}

// `x` dies at the fusion: it may take over x's bytes when fused parameter 0 is read only where the output is written.
std::string InPlaceModule(const std::string& use) {
  return R"(
HloModule m

fused {
  p0 = f32[32,32] parameter(0)
  p1 = f32[32,32] parameter(1)
  u = f32[32,32] )" +
         use + R"(
  n = f32[32,32] negate(p1)
  ROOT s = f32[32,32] add(u, n)
}

ENTRY main {
  a = f32[32,32] parameter(0)
  x = f32[32,32] exponential(a)
  ROOT f = f32[32,32] fusion(x, a), kind=kLoop, calls=fused
}
)";
}

TEST(CodegenFusion, LoopFusionWritesOverAnOperandReadElementwise) {
  std::string elementwise = InPlaceModule("multiply(p0, p0)");
  ExpectBoth(elementwise, 1e-5);  // the default mode may approximate exp (a few ulps, then squared and cancelled)
  EXPECT_EQ(Prepare(elementwise).temp_bytes, 32 * 32 * 4);
  // A transposed read would see elements already overwritten: the fusion gets its own bytes.
  std::string transposed = InPlaceModule("transpose(p0), dimensions={1,0}");
  ExpectBoth(transposed, 1e-5);
  EXPECT_EQ(Prepare(transposed).temp_bytes, 2 * 32 * 32 * 4);
}

constexpr char kDotBiasRelu[] = R"(
HloModule m

fused_dot {
  a = f32[64,96] parameter(0)
  b = f32[96,80] parameter(1)
  bias = f32[80] parameter(2)
  d = f32[64,80] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,80] broadcast(bias), dimensions={1}
  s = f32[64,80] add(d, bb)
  z = f32[] constant(0)
  zb = f32[64,80] broadcast(z), dimensions={}
  ROOT r = f32[64,80] maximum(s, zb)
}

ENTRY main {
  a = f32[64,96] parameter(0)
  b = f32[96,80] parameter(1)
  c = f32[80] parameter(2)
  ROOT f = f32[64,80] fusion(a, b, c), kind=kOutput, calls=fused_dot
}
)";

TEST(CodegenFusion, OutputFusionDotBiasRelu) {
  // Products of values in [-4, 4) summed over k = 96, default mode with fused multiply-adds.
  ExpectBoth(kDotBiasRelu, 96 * 16 * 0x1p-23);
  Prepared p = Prepare(kDotBiasRelu);
  EXPECT_EQ(p.fusions, 1);
  EXPECT_EQ(p.temp_bytes, 64 * 80 * 4);  // the dot writes the fusion's output: no buffer of its own
}

TEST(CodegenFusion, SharedFusedComputationsAndFusionsCodegenCannotEmit) {
  // kCustom is inlined; two output fusions sharing a fused computation stay, each with a computation of its own (the
  // fused dot aliases its caller's buffers); a fusion inside a reducer is inlined (reducers are scalar code).
  std::string text = R"(
HloModule m

fused_dot {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = f32[8,8] negate(d)
}

custom {
  a = f32[8,8] parameter(0)
  ROOT e = f32[8,8] exponential(a)
}

fused_step {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT f = f32[] fusion(a, b), kind=kLoop, calls=fused_step
}

ENTRY main {
  a = f32[8,8] parameter(0)
  b = f32[8,8] parameter(1)
  f = f32[8,8] fusion(a, b), kind=kOutput, calls=fused_dot
  g = f32[8,8] fusion(b, a), kind=kOutput, calls=fused_dot
  h = f32[8,8] fusion(a), kind=kCustom, calls=custom
  ninf = f32[] constant(-inf)
  r = f32[8] reduce(h, ninf), dimensions={1}, to_apply=max
  ROOT t = (f32[8,8], f32[8,8], f32[8,8], f32[8]) tuple(f, g, h, r)
}
)";
  EXPECT_EQ(Prepare(text).fusions, 2);
  ExpectBoth(text, 8 * 16 * 0x1p-23);
}

}  // namespace
}  // namespace xlac::codegen
