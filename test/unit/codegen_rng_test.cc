// rng-bit-generator (ThreeFry, Philox, default; every output width; odd, even and scalar shapes; u64[2] and u64[3]
// states), the stateful rng op (uniform and normal, per-run counter shared with rng-get-and-update-state) compiled
// with the JIT against the interpreter, plus known values from StableHLO's test data.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

Literal State(std::vector<uint64_t> words) {
  Literal s(Shape::Array(PrimitiveType::kU64, {static_cast<int64_t>(words.size())}));
  for (size_t i = 0; i < words.size(); ++i) s.Set<uint64_t>(static_cast<int64_t>(i), words[i]);
  return s;
}

std::vector<Literal> Args(Literal a) {
  std::vector<Literal> args;
  args.push_back(std::move(a));
  return args;
}

TEST(CodegenRng, BitGeneratorAlgorithmsTypesShapes) {
  for (const std::string alg : {"rng_three_fry", "rng_philox", "rng_default"}) {
    for (const std::string t : {"u32", "s32", "u64", "s64", "u8", "s16", "f32", "f64", "bf16", "f16"}) {
      for (const std::string shape : {"[]", "[7]", "[4,6]", "[3,5]", "[5,3,2]", "[1,9]", "[2,0]"}) {
        SCOPED_TRACE(alg + " " + t + shape);
        std::string text = absl::StrReplaceAll(R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], $T$S) rng-bit-generator(s), algorithm=$A
})",
                                               {{"$T", t}, {"$S", shape}, {"$A", alg}});
        ExpectMatchesInterpreter(text, Args(State({0x1234567890abcdefull, 0xfffffffffffffffeull})));
      }
    }
  }
}

TEST(CodegenRng, PhiloxThreeWordStateAndChaining) {
  // The 128-bit counter carries from the low into the high word; chained generators advance the state.
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  s = u64[3] parameter(0)
  a = (u64[3], u32[3,5]) rng-bit-generator(s), algorithm=rng_philox
  s1 = u64[3] get-tuple-element(a), index=0
  b = (u64[3], u64[6]) rng-bit-generator(s1), algorithm=rng_philox
  st2 = u64[3] get-tuple-element(b), index=0
  c = (u64[3], s8[2,2]{0,1}) rng-bit-generator(st2), algorithm=rng_default
  d0 = u32[3,5] get-tuple-element(a), index=1
  d1 = u64[6] get-tuple-element(b), index=1
  ROOT t = (u32[3,5], u64[6], (u64[3], s8[2,2]{0,1})) tuple(d0, d1, c)
})",
                           Args(State({7, 0xfffffffffffffffdull, 5})));
}

TEST(CodegenRng, BitGeneratorKnownValue) {
  // stablehlo/testdata/rng_bit_generator_uint64_2.mlir: THREE_FRY on state [3, 3].
  std::string text = R"(
HloModule m
ENTRY e {
  s = u64[2] parameter(0)
  ROOT r = (u64[2], u64[]) rng-bit-generator(s), algorithm=rng_three_fry
})";
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_TRUE(module);
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module);
  ASSERT_TRUE(exe.ok()) << exe.status();
  absl::StatusOr<std::vector<Literal>> out = (*exe)->Run(Args(State({3, 3})));
  ASSERT_TRUE(out.ok()) << out.status();
  const Literal& r = (*out)[0];
  EXPECT_EQ(r.tuple_elements()[0].Get<uint64_t>(0), 3u);
  EXPECT_EQ(r.tuple_elements()[0].Get<uint64_t>(1), 4u);
  EXPECT_EQ(r.tuple_elements()[1].Get<uint64_t>(0), 3349939604322698703ull);
  ExpectMatchesInterpreter(text, Args(State({3, 3})));
}

TEST(CodegenRng, UniformAndNormal) {
  for (const std::string t : {"f32", "f64"}) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  lo = $T[] constant(-2.5)
  hi = $T[] constant(7)
  u = $T[4,5] rng(lo, hi), distribution=rng_uniform
  uu = $T[4,5]{0,1} rng(lo, hi), distribution=rng_uniform
  n = $T[33] rng(a, b), distribution=rng_normal
  ROOT t = ($T[4,5], $T[4,5]{0,1}, $T[33]) tuple(u, uu, n)
})",
                                      t));
  }
}

TEST(CodegenRng, IntegerUniformAndCounterInLoop) {
  ExpectMatchesInterpreter(R"(
HloModule m
cond {
  p = (s32[], s32[8], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], s32[8], u64[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  lo = s32[] constant(-5)
  hi = s32[] constant(1000)
  r = s32[8] rng(lo, hi), distribution=rng_uniform
  acc = s32[8] get-tuple-element(p), index=1
  sum = s32[8] add(acc, r)
  st = u64[2] rng-get-and-update-state(), delta=17
  ROOT t = (s32[], s32[8], u64[2]) tuple(i1, sum, st)
}
ENTRY e {
  z = s32[] constant(0)
  zs = s32[8] broadcast(z), dimensions={}
  s0 = u64[2] constant({0, 0})
  init = (s32[], s32[8], u64[2]) tuple(z, zs, s0)
  w = (s32[], s32[8], u64[2]) while(init), condition=cond, body=body
  lo = u8[] constant(3)
  hi = u8[] constant(2)
  e = u8[6] rng(lo, hi), distribution=rng_uniform
  ROOT t = ((s32[], s32[8], u64[2]), u8[6]) tuple(w, e)
})");
}

}  // namespace
}  // namespace xlac::codegen::testing
