// convert (saturating float->int with NaN->0, int->float rounding, pred, complex, narrow floats), bitcast-convert
// (same and different widths, sub-byte) and reduce-precision.
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
constexpr PrimitiveType U4 = PrimitiveType::kU4;
constexpr PrimitiveType PRED = PrimitiveType::kPred;
constexpr PrimitiveType C64 = PrimitiveType::kC64;

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string Dims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Literal Conv(const std::string& op, const Literal& x, PrimitiveType to, std::vector<int64_t> out_dims = {},
             const std::string& attrs = "") {
  if (out_dims.empty()) out_dims = x.shape().dimensions;
  std::string text = "HloModule m\nENTRY e {\n  x = " + std::string(PrimitiveTypeName(x.shape().element_type)) +
                     Dims(x.shape().dimensions) + " parameter(0)\n  ROOT r = " + std::string(PrimitiveTypeName(to)) +
                     Dims(out_dims) + " " + op + "(x)" + attrs + "\n}\n";
  absl::StatusOr<Literal> r = RunHlo(text, {x});
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *std::move(r) : Literal();
}

TEST(InterpreterConvert, FloatToIntSaturatesAndMapsNaNToZero) {
  EXPECT_EQ(Int64s(Conv("convert", Vec(F32, {1.9, -1.9, 3e9, -3e9, kNaN, kInf, -kInf}), S32)),
            (std::vector<int64_t>{1, -1, 2147483647, -2147483648LL, 0, 2147483647, -2147483648LL}));
  EXPECT_EQ(Int64s(Conv("convert", Vec(F32, {300, -300, 127.9, -128.5}), S8)),
            (std::vector<int64_t>{127, -128, 127, -128}));
  EXPECT_EQ(Uint64s(Conv("convert", Vec(F32, {-5, 300, 255.5, kNaN}), U8)), (std::vector<uint64_t>{0, 255, 255, 0}));
  EXPECT_EQ(Int64s(Conv("convert", Vec(F64, {1e19, -1e19}), S64)),
            (std::vector<int64_t>{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}));
  EXPECT_EQ(Int64s(Conv("convert", Vec(F32, {9, -9, 7.5}), S4)), (std::vector<int64_t>{7, -8, 7}));
  EXPECT_EQ(Int64s(Conv("convert", Vec(BF16, {-1.5, 1e10}), S32)), (std::vector<int64_t>{-1, 2147483647}));
}

TEST(InterpreterConvert, IntToIntWrapsAndIntToFloatRounds) {
  EXPECT_EQ(Int64s(Conv("convert", Ints(S32, {3}, {300, -129, 255}), S8)), (std::vector<int64_t>{44, 127, -1}));
  EXPECT_EQ(Uint64s(Conv("convert", Ints(S32, {2}, {-1, 256}), U8)), (std::vector<uint64_t>{255, 0}));
  EXPECT_EQ(Int64s(Conv("convert", Ints(U32, {1}, {4294967295LL}), S64)), (std::vector<int64_t>{4294967295LL}));
  // 2^24 + 1 is not representable in f32 (ties to even -> 2^24); 2^24 + 3 -> 2^24 + 4.
  EXPECT_EQ(Doubles(Conv("convert", Ints(S32, {2}, {16777217, 16777219}), F32)),
            (std::vector<double>{16777216, 16777220}));
  // s32 -> bf16 goes through f32: 257 -> 256 (tie to even), 259 -> 260.
  EXPECT_EQ(Doubles(Conv("convert", Ints(S32, {2}, {257, 259}), BF16)), (std::vector<double>{256, 260}));
  EXPECT_EQ(Doubles(Conv("convert", Ints(S4, {2}, {-8, 7}), F32)), (std::vector<double>{-8, 7}));
  EXPECT_EQ(Doubles(Conv("convert", Ints(U4, {2}, {15, 3}), F32)), (std::vector<double>{15, 3}));
}

TEST(InterpreterConvert, PredConversions) {
  EXPECT_EQ(Int64s(Conv("convert", Vec(F32, {0, -0.0, 0.5, kNaN, -2}), PRED)), (std::vector<int64_t>{0, 0, 1, 1, 1}));
  EXPECT_EQ(Int64s(Conv("convert", Ints(S32, {3}, {0, 2, -1}), PRED)), (std::vector<int64_t>{0, 1, 1}));
  EXPECT_EQ(Doubles(Conv("convert", Vec(PRED, {1, 0}), F32)), (std::vector<double>{1, 0}));
  EXPECT_EQ(Int64s(Conv("convert", Vec(PRED, {1, 0}), S32)), (std::vector<int64_t>{1, 0}));
}

TEST(InterpreterConvert, FloatToFloat) {
  // f32 -> f16 overflow to inf, underflow to subnormal / zero, NaN stays NaN.
  std::vector<double> h = Doubles(Conv("convert", Vec(F32, {65520, 1e-8, 6e-8, kNaN, -0.0}), F16));
  EXPECT_EQ(h[0], kInf);
  EXPECT_EQ(h[1], 0);
  EXPECT_EQ(h[2], std::ldexp(1.0, -24));  // smallest f16 subnormal
  EXPECT_TRUE(std::isnan(h[3]));
  EXPECT_TRUE(h[4] == 0 && std::signbit(h[4]));
  // f32 -> bf16 rounds to nearest even on the dropped 16 bits.
  Literal b = Conv("convert", Vec(F32, {1.00390625, 1.01171875}), BF16);  // 1+2^-8 ties down, 1+3*2^-8 ties up
  EXPECT_EQ(Bits(b), (std::vector<uint64_t>{0x3f80, 0x3f82}));
  // f8e5m2 from f32, and back.
  Literal f8 = Conv("convert", Vec(F32, {1.0, 1.2, 57344, 1e6}), PrimitiveType::kF8E5M2);
  std::vector<double> f8d = Doubles(f8);
  EXPECT_EQ(f8d[0], 1.0);
  EXPECT_EQ(f8d[1], 1.25);
  EXPECT_EQ(f8d[2], 57344);
  EXPECT_EQ(f8d[3], kInf);
  // f64 -> f32 rounds once.
  EXPECT_EQ(Doubles(Conv("convert", Vec(F64, {1.0000000596046448, 1.0000000596046458}), F32)),
            (std::vector<double>{1.0, 1.0000001192092896}));  // a tie goes to even; just above it rounds up
}

TEST(InterpreterConvert, F64ToNarrowRounding) {
  // f64 -> bf16 goes through f32 (as XLA does): just above a bf16 tie, the f32 step lands on the tie, which then
  // rounds to even. f64 -> f16 rounds once, so just above a tie rounds up.
  EXPECT_EQ(Doubles(Conv("convert", Vec(F64, {1.00390625 + std::ldexp(1.0, -30)}), BF16))[0], 1.0);
  EXPECT_EQ(Doubles(Conv("convert", Vec(F64, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)}), F16))[0],
            1.0009765625);
}

TEST(InterpreterConvert, ComplexConversions) {
  Literal z = Conv("convert", Vec(F32, {1.5, -2}), C64);
  EXPECT_EQ(z.Get<c64>(0), c64(1.5f, 0));
  EXPECT_EQ(z.Get<c64>(1), c64(-2, 0));
  Literal zz(Shape::Array(C64, {1}));
  zz.Set<c64>(0, c64(1.25f, -3));
  Literal w = Conv("convert", zz, PrimitiveType::kC128);
  EXPECT_EQ(w.Get<c128>(0), c128(1.25, -3));
}

TEST(InterpreterConvert, BitcastConvertSameWidth) {
  Literal r = Conv("bitcast-convert", Vec(F32, {1.0, -2.0}), U32);
  EXPECT_EQ(Uint64s(r), (std::vector<uint64_t>{0x3f800000u, 0xc0000000u}));
  Literal back = Conv("bitcast-convert", Ints(S32, {1}, {0x40490fdb}), F32);
  EXPECT_FLOAT_EQ(static_cast<float>(back.GetAsDouble(0)), 3.14159274f);
}

TEST(InterpreterConvert, BitcastConvertDifferentWidths) {
  // f32 -> f16[2]: little-endian, low half first. 1.0f = 0x3f800000 -> {0x0000, 0x3f80}.
  Literal halves = Conv("bitcast-convert", Vec(F32, {1.0}), F16, {1, 2});
  EXPECT_EQ(Bits(halves), (std::vector<uint64_t>{0x0000, 0x3f80}));
  // u8[2,4] -> u32[2].
  Literal bytes = Ints(U8, {2, 4}, {0x78, 0x56, 0x34, 0x12, 0xff, 0, 0, 0x80});
  EXPECT_EQ(Uint64s(Conv("bitcast-convert", bytes, U32, {2})), (std::vector<uint64_t>{0x12345678u, 0x800000ffu}));
  // s8 -> s4[2]: nibbles, low first, sign-extended.
  Literal nibbles = Conv("bitcast-convert", Ints(S8, {1}, {0x7f}), S4, {1, 2});
  EXPECT_EQ(Int64s(nibbles), (std::vector<int64_t>{-1, 7}));
  Literal packed = Conv("bitcast-convert", Ints(U4, {1, 2}, {0xf, 0x1}), U8, {1});
  EXPECT_EQ(Uint64s(packed), (std::vector<uint64_t>{0x1f}));
}

TEST(InterpreterConvert, ReducePrecision) {
  // To bf16 precision (8 exponent, 7 mantissa bits): RNE on the mantissa.
  std::vector<double> r = Doubles(
      Conv("reduce-precision", Vec(F32, {1.00390625, 1.01171875, 3.0}), F32, {}, ", exponent_bits=8, mantissa_bits=7"));
  EXPECT_EQ(r, (std::vector<double>{1.0, 1.015625, 3.0}));
  // To f16 range (5 exponent bits): overflow -> inf, tiny -> 0 (denormals flush), NaN stays NaN.
  std::vector<double> h = Doubles(
      Conv("reduce-precision", Vec(F32, {70000, 1e-6, kNaN, -1}), F32, {}, ", exponent_bits=5, mantissa_bits=10"));
  EXPECT_EQ(h[0], kInf);
  EXPECT_EQ(h[1], 0);
  EXPECT_TRUE(std::isnan(h[2]));
  EXPECT_EQ(h[3], -1);
  // mantissa_bits=0 turns NaN into inf.
  std::vector<double> z =
      Doubles(Conv("reduce-precision", Vec(F32, {kNaN}), F32, {}, ", exponent_bits=8, mantissa_bits=0"));
  EXPECT_EQ(z[0], kInf);
}

}  // namespace
}  // namespace xlac::interp::testing
