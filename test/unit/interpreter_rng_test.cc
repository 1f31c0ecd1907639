// rng-bit-generator against the Random123 known-answer vectors (Threefry2x32-20, Philox4x32-10), the way XLA's
// RngBitGeneratorExpander feeds them, plus output-shape splitting and state advance; the stateful `rng` op's
// ranges and determinism.
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType U64 = PrimitiveType::kU64;
constexpr PrimitiveType F32 = PrimitiveType::kF32;

Literal State(const std::vector<uint64_t>& words) {
  Literal lit(Shape::Array(U64, {static_cast<int64_t>(words.size())}));
  for (size_t i = 0; i < words.size(); ++i) lit.Set<uint64_t>(static_cast<int64_t>(i), words[i]);
  return lit;
}

// Returns (new state, data) of rng-bit-generator with `algorithm` producing `data_shape`.
std::pair<std::vector<uint64_t>, std::vector<uint64_t>> Generate(const std::string& algorithm,
                                                                 const std::vector<uint64_t>& state,
                                                                 const std::string& data_shape) {
  std::string n = std::to_string(state.size());
  std::string text = "HloModule m\nENTRY e {\n  s = u64[" + n + "] parameter(0)\n  ROOT r = (u64[" + n + "], " +
                     data_shape + ") rng-bit-generator(s), algorithm=" + algorithm + "\n}\n";
  absl::StatusOr<Literal> r = RunHlo(text, {State(state)});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  if (!r.ok()) return {};
  return {Bits(r->tuple_elements()[0]), Bits(r->tuple_elements()[1])};
}

TEST(InterpreterRng, ThreeFryKnownAnswers) {
  // Random123 / JAX test vectors: (key, counter) -> (x0, x1). Key words are (lo, hi) of state[0], counter words
  // (lo, hi) of state[1].
  EXPECT_EQ(Generate("rng_three_fry", {0, 0}, "u32[2]").second, (std::vector<uint64_t>{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(Generate("rng_three_fry", {~0ull, ~0ull}, "u32[2]").second,
            (std::vector<uint64_t>{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(Generate("rng_three_fry", {0x037073441319'8a2eull, 0x85a308d3'243f6a88ull}, "u32[2]").second,
            (std::vector<uint64_t>{0xc4923a9c, 0x483df7a0}));
}

TEST(InterpreterRng, ThreeFryShapesAndState) {
  // u32[2]: one Threefry call, counter advances by 1.
  EXPECT_EQ(Generate("rng_three_fry", {0, 0}, "u32[2]").first, (std::vector<uint64_t>{0, 1}));
  // u32[3]: odd dim is split into ceil(3/2)=2 calls; elements 0,1 come from counter 0.
  auto [state3, data3] = Generate("rng_three_fry", {0, 0}, "u32[3]");
  EXPECT_EQ(state3, (std::vector<uint64_t>{0, 2}));
  ASSERT_EQ(data3.size(), 3u);
  EXPECT_EQ(data3[0], 0x6b200159u);
  EXPECT_EQ(data3[1], 0x99ba4efeu);
  // u64: both words of one call per element.
  auto [state64, data64] = Generate("rng_three_fry", {0, 0}, "u64[1]");
  EXPECT_EQ(state64, (std::vector<uint64_t>{0, 1}));
  EXPECT_EQ(data64, (std::vector<uint64_t>{0x99ba4efe6b200159ull}));
  // u16: low halves of the 32-bit words.
  EXPECT_EQ(Generate("rng_three_fry", {0, 0}, "u16[2]").second, (std::vector<uint64_t>{0x0159, 0x4efe}));
  // [2,2] splits dim 0: element [i][j] comes from call j, word i.
  std::vector<uint64_t> d22 = Generate("rng_three_fry", {0, 0}, "u32[2,2]").second;
  std::vector<uint64_t> d4 = Generate("rng_three_fry", {0, 0}, "u32[4]").second;
  ASSERT_EQ(d22.size(), 4u);
  ASSERT_EQ(d4.size(), 4u);
  // u32[4]: call 0 -> elements 0,1; call 1 -> elements 2,3. u32[2,2]: call j -> [0][j], [1][j].
  EXPECT_EQ(d22[0], d4[0]);
  EXPECT_EQ(d22[2], d4[1]);
  EXPECT_EQ(d22[1], d4[2]);
  EXPECT_EQ(d22[3], d4[3]);
}

TEST(InterpreterRng, PhiloxKnownAnswers) {
  // u64[3] state = (key, counter low, counter high); key words (lo, hi), counter words low to high.
  EXPECT_EQ(Generate("rng_philox", {0, 0, 0}, "u32[4]").second,
            (std::vector<uint64_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Generate("rng_philox", {~0ull, ~0ull, ~0ull}, "u32[4]").second,
            (std::vector<uint64_t>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(
      Generate("rng_philox", {0x299f31d0'a4093822ull, 0x85a308d3'243f6a88ull, 0x03707344'13198a2eull}, "u32[4]").second,
      (std::vector<uint64_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
  // rng_default is Philox, as on XLA's CPU and GPU backends.
  EXPECT_EQ(Generate("rng_default", {0, 0, 0}, "u32[4]").second,
            (std::vector<uint64_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

TEST(InterpreterRng, PhiloxShapesAndState) {
  auto [s3, d3] = Generate("rng_philox", {0, 0, 0}, "u64[2]");
  EXPECT_EQ(s3, (std::vector<uint64_t>{0, 1, 0}));
  EXPECT_EQ(d3, (std::vector<uint64_t>{0xe169c58d6627e8d5ull, 0x9b00dbd8bc57ac4cull}));
  // A u64[2] state (key, counter) uses the key as the counter's high word and keeps only the low word.
  auto [s2, d2] = Generate("rng_philox", {0, 0}, "u32[5]");
  EXPECT_EQ(s2, (std::vector<uint64_t>{0, 2}));
  ASSERT_EQ(d2.size(), 5u);
  EXPECT_EQ(d2[0], 0x6627e8d5u);
  EXPECT_EQ(d2[3], 0x9b00dbd8u);
  // Counter carry: low word all ones, +1 block carries into the high word.
  auto [sc, dc] = Generate("rng_philox", {0, ~0ull, 0}, "u32[8]");
  EXPECT_EQ(sc, (std::vector<uint64_t>{0, 1, 1}));
}

TEST(InterpreterRng, RngUniformIsInRangeAndDeterministic) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  a = f32[] constant(2)
  b = f32[] constant(3)
  ROOT r = f32[1000] rng(a, b), distribution=rng_uniform
})";
  XLAC_ASSERT_OK_AND_ASSIGN(Literal x, RunHlo(kText));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal y, RunHlo(kText));
  EXPECT_TRUE(x == y);
  for (double v : Doubles(x)) {
    EXPECT_GE(v, 2);
    EXPECT_LT(v, 3);
  }
  XLAC_ASSERT_OK_AND_ASSIGN(Literal ints, RunHlo(R"(
HloModule m
ENTRY e {
  a = s32[] constant(-3)
  b = s32[] constant(4)
  ROOT r = s32[1000] rng(a, b), distribution=rng_uniform
})"));
  for (int64_t v : Int64s(ints)) {
    EXPECT_GE(v, -3);
    EXPECT_LT(v, 4);
  }
  (void)F32;
}

}  // namespace
}  // namespace xlac::interp::testing
