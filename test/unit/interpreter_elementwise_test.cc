// Elementwise ops with hand-computed expectations: integer wrap-around and XLA's division/shift rules, float
// special values, per-op rounding of narrow floats, compare (incl. TOTALORDER), select, clamp, complex ops.
#include <limits>

#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType F64 = PrimitiveType::kF64;
constexpr PrimitiveType BF16 = PrimitiveType::kBF16;
constexpr PrimitiveType F16 = PrimitiveType::kF16;
constexpr PrimitiveType S8 = PrimitiveType::kS8;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
constexpr PrimitiveType S64 = PrimitiveType::kS64;
constexpr PrimitiveType U8 = PrimitiveType::kU8;
constexpr PrimitiveType U32 = PrimitiveType::kU32;
constexpr PrimitiveType S4 = PrimitiveType::kS4;
constexpr PrimitiveType PRED = PrimitiveType::kPred;
constexpr PrimitiveType C64 = PrimitiveType::kC64;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string TypeName(PrimitiveType t) { return std::string(PrimitiveTypeName(t)); }

// Evaluates `op` on two (or one) parameters of `type`; the result has `out` type (defaults to `type`).
Literal Op(const std::string& op, const Literal& a, const Literal* b = nullptr, const std::string& attrs = "",
           PrimitiveType out = PrimitiveType::kInvalid) {
  PrimitiveType t = a.shape().element_type;
  if (out == PrimitiveType::kInvalid) out = t;
  std::string dims = "[" + std::to_string(a.element_count()) + "]";
  std::string text = "HloModule m\nENTRY e {\n  a = " + TypeName(t) + dims + " parameter(0)\n";
  std::vector<Literal> args;
  args.push_back(a);
  if (b != nullptr) {
    text += "  b = " + TypeName(b->shape().element_type) + dims + " parameter(1)\n";
    args.push_back(*b);
  }
  text += "  ROOT r = " + TypeName(out) + dims + " " + op + (b ? "(a, b)" : "(a)") + attrs + "\n}\n";
  absl::StatusOr<Literal> r = RunHlo(text, std::move(args));
  EXPECT_TRUE(r.ok()) << op << ": " << r.status().ToString();
  return r.ok() ? *std::move(r) : Literal();
}

Literal Bin(const std::string& op, PrimitiveType t, const std::vector<double>& a, const std::vector<double>& b,
            const std::string& attrs = "", PrimitiveType out = PrimitiveType::kInvalid) {
  Literal la = Vec(t, a), lb = Vec(t, b);
  return Op(op, la, &lb, attrs, out);
}

Literal Un(const std::string& op, PrimitiveType t, const std::vector<double>& a,
           PrimitiveType out = PrimitiveType::kInvalid) {
  return Op(op, Vec(t, a), nullptr, "", out);
}

TEST(InterpreterElementwise, IntegerArithmeticWraps) {
  EXPECT_EQ(Int64s(Bin("add", S8, {127, -128, 100}, {1, -1, 100})), (std::vector<int64_t>{-128, 127, -56}));
  EXPECT_EQ(Int64s(Bin("multiply", S32, {65536, -7}, {65536, 3})), (std::vector<int64_t>{0, -21}));
  EXPECT_EQ(Uint64s(Bin("subtract", U8, {0, 5}, {1, 3})), (std::vector<uint64_t>{255, 2}));
  EXPECT_EQ(Int64s(Un("negate", S32, {-2147483648.0, 5})), (std::vector<int64_t>{-2147483648LL, -5}));
  EXPECT_EQ(Int64s(Un("abs", S8, {-128, -3})), (std::vector<int64_t>{-128, 3}));
  EXPECT_EQ(Int64s(Bin("add", S4, {7, -8}, {1, -1})), (std::vector<int64_t>{-8, 7}));
}

TEST(InterpreterElementwise, IntegerDivisionAndRemainderEdgeCases) {
  // x/0 = -1 (signed) or all ones (unsigned); x%0 = x; INT_MIN/-1 = INT_MIN; INT_MIN%-1 = 0; truncation toward 0.
  EXPECT_EQ(Int64s(Bin("divide", S32, {7, -7, 5, -2147483648.0, 7}, {0, 2, -2, -1, -1})),
            (std::vector<int64_t>{-1, -3, -2, -2147483648LL, -7}));
  EXPECT_EQ(Uint64s(Bin("divide", U32, {7, 9}, {0, 2})), (std::vector<uint64_t>{4294967295u, 4}));
  EXPECT_EQ(Int64s(Bin("remainder", S32, {7, -7, 7, -2147483648.0}, {0, 3, -3, -1})),
            (std::vector<int64_t>{7, -1, 1, 0}));
  EXPECT_EQ(Uint64s(Bin("remainder", U8, {200, 7}, {0, 3})), (std::vector<uint64_t>{200, 1}));
  Literal min64 = Ints(S64, {1}, {std::numeric_limits<int64_t>::min()});
  Literal neg1 = Ints(S64, {1}, {-1});
  EXPECT_EQ(Int64s(Op("divide", min64, &neg1)), (std::vector<int64_t>{std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(Int64s(Op("remainder", min64, &neg1)), (std::vector<int64_t>{0}));
}

TEST(InterpreterElementwise, ShiftsWithOutOfRangeAmounts) {
  EXPECT_EQ(Int64s(Bin("shift-left", S32, {1, 1, 1, 3}, {31, 32, -1, 1})),
            (std::vector<int64_t>{-2147483648LL, 0, 0, 6}));
  EXPECT_EQ(Int64s(Bin("shift-right-arithmetic", S32, {-8, -8, 8, -1}, {1, 40, 40, 31})),
            (std::vector<int64_t>{-4, -1, 0, -1}));
  EXPECT_EQ(Int64s(Bin("shift-right-logical", S32, {-8, -8, 8}, {1, 32, 3})), (std::vector<int64_t>{2147483644, 0, 1}));
  EXPECT_EQ(Uint64s(Bin("shift-right-arithmetic", U8, {0x80, 0x80}, {1, 8})), (std::vector<uint64_t>{0xc0, 0xff}));
  EXPECT_EQ(Int64s(Bin("shift-left", S8, {1, 1}, {7, 8})), (std::vector<int64_t>{-128, 0}));
}

TEST(InterpreterElementwise, BitOpsPopcntClz) {
  EXPECT_EQ(Int64s(Bin("and", S32, {12, -1}, {10, 5})), (std::vector<int64_t>{8, 5}));
  EXPECT_EQ(Int64s(Bin("or", S32, {12, 0}, {10, 0})), (std::vector<int64_t>{14, 0}));
  EXPECT_EQ(Int64s(Bin("xor", S32, {12, -1}, {10, 0})), (std::vector<int64_t>{6, -1}));
  EXPECT_EQ(Int64s(Un("not", S32, {0, -1, 5})), (std::vector<int64_t>{-1, 0, -6}));
  EXPECT_EQ(Uint64s(Un("not", U8, {0, 0xf0})), (std::vector<uint64_t>{0xff, 0x0f}));
  EXPECT_EQ(Int64s(Un("not", PRED, {0, 1})), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Int64s(Un("popcnt", S32, {-1, 0, 7})), (std::vector<int64_t>{32, 0, 3}));
  EXPECT_EQ(Int64s(Un("popcnt", S8, {-1, -128})), (std::vector<int64_t>{8, 1}));
  EXPECT_EQ(Int64s(Un("count-leading-zeros", S32, {0, 1, -1, 65535})), (std::vector<int64_t>{32, 31, 0, 16}));
  EXPECT_EQ(Int64s(Un("count-leading-zeros", S4, {0, 1, -1})), (std::vector<int64_t>{4, 3, 0}));
  EXPECT_EQ(Int64s(Bin("and", PRED, {1, 1, 0}, {1, 0, 0})), (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(Int64s(Bin("xor", PRED, {1, 1, 0}, {1, 0, 0})), (std::vector<int64_t>{0, 1, 0}));
}

TEST(InterpreterElementwise, IntegerPowerAndMulhi) {
  EXPECT_EQ(Int64s(Bin("power", S32, {2, 3, 1, 2, -1, 0, 5}, {10, 3, -5, -1, -1, 0, 0})),
            (std::vector<int64_t>{1024, 27, 1, 0, 0, 1, 1}));
  EXPECT_EQ(Int64s(Bin("power", S32, {2}, {31})), (std::vector<int64_t>{-2147483648LL}));  // wraps
  EXPECT_EQ(Uint64s(Bin("multiply", U32, {4000000000.0}, {2})), (std::vector<uint64_t>{3705032704u}));
  EXPECT_EQ(Int64s(Bin("mulhi", S32, {65536, -1}, {65536, 1})), (std::vector<int64_t>{1, -1}));
  EXPECT_EQ(Uint64s(Bin("mulhi", U32, {4294967295.0}, {4294967295.0})), (std::vector<uint64_t>{4294967294u}));
}

TEST(InterpreterElementwise, FloatSpecialValues) {
  std::vector<double> r = Doubles(Bin("divide", F32, {1, -1, 0, 1}, {0, 0, 0, kInf}));
  EXPECT_EQ(r[0], kInf);
  EXPECT_EQ(r[1], -kInf);
  EXPECT_TRUE(std::isnan(r[2]));
  EXPECT_EQ(r[3], 0);
  // max/min propagate NaN (lhs first) and keep std::max's choice between -0 and +0.
  std::vector<double> mx = Doubles(Bin("maximum", F32, {kNaN, 1, 1, -0.0}, {1, kNaN, 2, 0.0}));
  EXPECT_TRUE(std::isnan(mx[0]));
  EXPECT_TRUE(std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 2);
  EXPECT_TRUE(std::signbit(mx[3]));
  std::vector<double> mn = Doubles(Bin("minimum", F32, {3, -kInf}, {kNaN, 0}));
  EXPECT_TRUE(std::isnan(mn[0]));
  EXPECT_EQ(mn[1], -kInf);
  std::vector<double> rem = Doubles(Bin("remainder", F32, {5.5, -5.5, 1, kInf}, {2, 2, 0, 1}));
  EXPECT_EQ(rem[0], 1.5);
  EXPECT_EQ(rem[1], -1.5);
  EXPECT_TRUE(std::isnan(rem[2]));
  EXPECT_TRUE(std::isnan(rem[3]));
}

TEST(InterpreterElementwise, SignRoundingAndIsFinite) {
  std::vector<double> s = Doubles(Un("sign", F32, {-3, -0.0, 0, 2, kNaN, -kInf}));
  EXPECT_EQ(s[0], -1);
  EXPECT_TRUE(s[1] == 0 && std::signbit(s[1]));
  EXPECT_TRUE(s[2] == 0 && !std::signbit(s[2]));
  EXPECT_EQ(s[3], 1);
  EXPECT_TRUE(std::isnan(s[4]));
  EXPECT_EQ(s[5], -1);
  EXPECT_EQ(Int64s(Un("sign", S32, {-5, 0, 9})), (std::vector<int64_t>{-1, 0, 1}));
  EXPECT_EQ(Doubles(Un("round-nearest-afz", F32, {0.5, 1.5, 2.5, -0.5, -2.5})), (std::vector<double>{1, 2, 3, -1, -3}));
  EXPECT_EQ(Doubles(Un("round-nearest-even", F32, {0.5, 1.5, 2.5, -0.5, -2.5})),
            (std::vector<double>{0, 2, 2, -0.0, -2}));
  EXPECT_EQ(Doubles(Un("floor", F32, {-1.5, 1.5})), (std::vector<double>{-2, 1}));
  EXPECT_EQ(Doubles(Un("ceil", F32, {-1.5, 1.5})), (std::vector<double>{-1, 2}));
  EXPECT_EQ(Int64s(Un("is-finite", F32, {1, kInf, -kInf, kNaN}, PRED)), (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Int64s(Un("is-finite", BF16, {1, kInf, kNaN}, PRED)), (std::vector<int64_t>{1, 0, 0}));
}

TEST(InterpreterElementwise, TranscendentalsInF32) {
  auto one = [](const std::string& op, double x) { return Doubles(Un(op, F32, {x}))[0]; };
  EXPECT_EQ(one("exponential", 0), 1);
  EXPECT_FLOAT_EQ(one("exponential", 1), std::exp(1.0f));
  EXPECT_FLOAT_EQ(one("log", 8), std::log(8.0f));
  EXPECT_EQ(one("sqrt", 16), 4);
  EXPECT_EQ(one("rsqrt", 4), 0.5);
  EXPECT_EQ(one("cbrt", -27), -3);
  EXPECT_FLOAT_EQ(one("exponential-minus-one", 1e-10), std::expm1(1e-10f));
  EXPECT_FLOAT_EQ(one("log-plus-one", 1e-10), std::log1p(1e-10f));
  EXPECT_EQ(one("logistic", 0), 0.5);
  EXPECT_FLOAT_EQ(one("logistic", 2), 1 / (1 + std::exp(-2.0f)));
  EXPECT_FLOAT_EQ(one("erf", 0.5), std::erf(0.5f));
  EXPECT_FLOAT_EQ(one("tan", 0.5), std::tan(0.5f));
  EXPECT_FLOAT_EQ(one("tanh", 0.5), std::tanh(0.5f));
  EXPECT_FLOAT_EQ(one("sine", 1), std::sin(1.0f));
  EXPECT_FLOAT_EQ(one("cosine", 1), std::cos(1.0f));
  EXPECT_TRUE(std::isnan(one("sqrt", -1)));
  EXPECT_EQ(one("log", 0), -kInf);
  std::vector<double> at = Doubles(Bin("atan2", F32, {1, 1, -0.0, 0}, {1, -1, -1, -1}));
  EXPECT_FLOAT_EQ(at[0], std::atan2(1.0f, 1.0f));
  EXPECT_FLOAT_EQ(at[1], std::atan2(1.0f, -1.0f));
  EXPECT_FLOAT_EQ(at[2], -std::acos(-1.0f));
  EXPECT_FLOAT_EQ(at[3], std::acos(-1.0f));
  std::vector<double> pw = Doubles(Bin("power", F32, {2, 1, kNaN, 4, -8}, {10, kNaN, 0, 0.5, 1.0 / 3}));
  EXPECT_EQ(pw[0], 1024);
  EXPECT_EQ(pw[1], 1);  // 1^x = 1 even for NaN
  EXPECT_EQ(pw[2], 1);  // x^0 = 1 even for NaN
  EXPECT_EQ(pw[3], 2);
  EXPECT_TRUE(std::isnan(pw[4]));
}

TEST(InterpreterElementwise, NarrowFloatsRoundAfterEveryOp) {
  // bf16 has 8 significant bits: 256 + 1 rounds back to 256, so a chain of +1 never moves.
  Literal r = Bin("add", BF16, {256, 1}, {1, 1});
  EXPECT_EQ(Doubles(r), (std::vector<double>{256, 2}));
  EXPECT_EQ(Bits(r)[0], 0x4380u);
  // f16: 2049 is not representable; 2048 + 1 ties to even (2048), 2048 + 3 -> 2052.
  EXPECT_EQ(Doubles(Bin("add", F16, {2048, 2048}, {1, 3})), (std::vector<double>{2048, 2052}));
  // Overflow to inf in f16 (max 65504).
  EXPECT_EQ(Doubles(Bin("multiply", F16, {300}, {300}))[0], kInf);
  // bf16 exp(1) computed in f32 then rounded to bf16: 2.71875.
  EXPECT_EQ(Doubles(Un("exponential", BF16, {1}))[0], 2.71875);
  // f8e4m3fn: 448 is the largest finite value; 16 + 1 rounds to 16 (3 mantissa bits).
  EXPECT_EQ(Doubles(Bin("add", PrimitiveType::kF8E4M3FN, {16, 1}, {1, 1})), (std::vector<double>{16, 2}));
  std::vector<double> sat = Doubles(Bin("multiply", PrimitiveType::kF8E4M3FN, {448}, {2}));
  EXPECT_TRUE(std::isnan(sat[0]));  // e4m3fn has no inf: overflow is NaN
  // f64 keeps full precision.
  EXPECT_EQ(Doubles(Bin("add", F64, {1e16}, {1}))[0], 1e16);
  EXPECT_EQ(Doubles(Bin("add", F64, {9007199254740992.0}, {2}))[0], 9007199254740994.0);
}

TEST(InterpreterElementwise, CompareDirectionsAndTotalOrder) {
  EXPECT_EQ(Int64s(Bin("compare", F32, {1, kNaN, -0.0, 2}, {2, kNaN, 0, 2}, ", direction=LT", PRED)),
            (std::vector<int64_t>{1, 0, 0, 0}));
  EXPECT_EQ(Int64s(Bin("compare", F32, {kNaN, -0.0, 1}, {kNaN, 0, 1}, ", direction=NE", PRED)),
            (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(Int64s(Bin("compare", F32, {-0.0, 1, kNaN, -kNaN, -kInf}, {0, kNaN, kNaN, -kInf, -kNaN},
                       ", direction=LT, type=TOTALORDER", PRED)),
            (std::vector<int64_t>{1, 1, 0, 1, 0}));
  EXPECT_EQ(Int64s(Bin("compare", F32, {kNaN, -0.0}, {kNaN, 0}, ", direction=EQ, type=TOTALORDER", PRED)),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Int64s(Bin("compare", U32, {4294967295.0, 1}, {0, 2}, ", direction=GT", PRED)),
            (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(Int64s(Bin("compare", S32, {-1, 5, 5}, {0, 5, 4}, ", direction=GE", PRED)),
            (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(Int64s(Bin("compare", PRED, {1, 0}, {0, 0}, ", direction=GT", PRED)), (std::vector<int64_t>{1, 0}));
}

TEST(InterpreterElementwise, SelectAndClamp) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal sel,
                            RunHlo(R"(
HloModule m
ENTRY e {
  p = pred[4] parameter(0)
  a = s32[4] parameter(1)
  b = s32[4] parameter(2)
  ROOT s = s32[4] select(p, a, b)
})",
                                   {Vec(PRED, {1, 0, 1, 0}), Vec(S32, {1, 2, 3, 4}), Vec(S32, {5, 6, 7, 8})}));
  EXPECT_EQ(Int64s(sel), (std::vector<int64_t>{1, 6, 3, 8}));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal cl, RunHlo(R"(
HloModule m
ENTRY e {
  lo = f32[] constant(-1)
  x = f32[5] parameter(0)
  hi = f32[] constant(1)
  ROOT c = f32[5] clamp(lo, x, hi)
})",
                                               {Vec(F32, {-5, 0.5, 7, kNaN, -0.0})}));
  std::vector<double> c = Doubles(cl);
  EXPECT_EQ(c[0], -1);
  EXPECT_EQ(c[1], 0.5);
  EXPECT_EQ(c[2], 1);
  EXPECT_TRUE(std::isnan(c[3]));
  EXPECT_TRUE(c[4] == 0 && std::signbit(c[4]));
}

TEST(InterpreterElementwise, ComplexOps) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  re = f32[2] parameter(0)
  im = f32[2] parameter(1)
  z = c64[2] complex(re, im)
  zz = c64[2] multiply(z, z)
  q = c64[2] divide(zz, z)
  a = f32[2] abs(z)
  r = f32[2] real(zz)
  i = f32[2] imag(zz)
  ex = c64[2] exponential(z)
  ROOT t = (f32[2], f32[2], f32[2], c64[2], c64[2]) tuple(a, r, i, q, ex)
})",
                                              {Vec(F32, {3, 0}), Vec(F32, {4, 1})}));
  EXPECT_EQ(Doubles(r.tuple_elements()[0]), (std::vector<double>{5, 1}));
  EXPECT_EQ(Doubles(r.tuple_elements()[1]), (std::vector<double>{-7, -1}));  // (3+4i)^2 = -7+24i; i^2 = -1
  EXPECT_EQ(Doubles(r.tuple_elements()[2]), (std::vector<double>{24, 0}));
  const Literal& q = r.tuple_elements()[3];
  EXPECT_EQ(q.Get<c64>(0), c64(3, 4));
  EXPECT_EQ(q.Get<c64>(1), c64(0, 1));
  c64 ex = r.tuple_elements()[4].Get<c64>(1);
  EXPECT_FLOAT_EQ(ex.real(), std::cos(1.0f));
  EXPECT_FLOAT_EQ(ex.imag(), std::sin(1.0f));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal eq, RunHlo(R"(
HloModule m
ENTRY e {
  a = c64[2] parameter(0)
  b = c64[2] parameter(1)
  ROOT c = pred[2] compare(a, b), direction=EQ
})",
                                               {[] {
                                                  Literal l(Shape::Array(C64, {2}));
                                                  l.Set<c64>(0, c64(1, 2));
                                                  l.Set<c64>(1, c64(1, 2));
                                                  return l;
                                                }(),
                                                [] {
                                                  Literal l(Shape::Array(C64, {2}));
                                                  l.Set<c64>(0, c64(1, 2));
                                                  l.Set<c64>(1, c64(1, -2));
                                                  return l;
                                                }()}));
  EXPECT_EQ(Int64s(eq), (std::vector<int64_t>{1, 0}));
}

TEST(InterpreterElementwise, ComplexMaxMinAreLexicographic) {
  Literal a(Shape::Array(C64, {3}));
  Literal b(Shape::Array(C64, {3}));
  a.Set<c64>(0, c64(1.5f, 2.5f));
  b.Set<c64>(0, c64(7.5f, 1.5f));
  a.Set<c64>(1, c64(1.5f, 7.5f));
  b.Set<c64>(1, c64(1.5f, 2.5f));
  a.Set<c64>(2, c64(0.0f, 1.5f));
  b.Set<c64>(2, c64(-0.0f, 2.5f));
  Literal mx = Op("maximum", a, &b);
  EXPECT_EQ(mx.Get<c64>(0), c64(7.5f, 1.5f));
  EXPECT_EQ(mx.Get<c64>(1), c64(1.5f, 7.5f));
  EXPECT_EQ(mx.Get<c64>(2), c64(-0.0f, 2.5f));  // equal real parts: the imaginary part decides
  Literal mn = Op("minimum", a, &b);
  EXPECT_EQ(mn.Get<c64>(0), c64(1.5f, 2.5f));
  EXPECT_EQ(mn.Get<c64>(1), c64(1.5f, 2.5f));
}

TEST(InterpreterElementwise, UnsupportedTypeIsAnError) {
  absl::StatusOr<Literal> r = RunHlo(R"(
HloModule m
ENTRY e {
  a = c64[2] parameter(0)
  ROOT b = c64[2] remainder(a, a)
})",
                                     {Literal(Shape::Array(C64, {2}))});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("not defined for element type c64"), std::string::npos) << r.status().ToString();
}

}  // namespace
}  // namespace xlac::interp::testing
