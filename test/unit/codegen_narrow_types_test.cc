// Sub-byte integers (s2, s4, u2, u4), the f8/f6/f4 float types and reduce-precision compiled with the JIT against the
// interpreter, exhaustively where the value space is small.
#include <cmath>
#include <cstring>

#include "codegen_test_util.h"
#include "ir/float_types.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kNarrowFloats = {"f8e4m3",   "f8e4m3fn",   "f8e4m3fnuz", "f8e4m3b11fnuz",
                                                "f8e5m2",   "f8e5m2fnuz", "f8e3m4",     "f8e8m0fnu",
                                                "f6e2m3fn", "f6e3m2fn",   "f4e2m1fn"};
const std::vector<std::string> kSubByteInts = {"s2", "s4", "u2", "u4"};

PrimitiveType TypeOf(const std::string& name) { return *ParsePrimitiveType(name); }

// Every bit pattern of `type` (sub-byte integers sign-extended as literals store them).
Literal AllPatterns(PrimitiveType type) {
  int bits = BitWidth(type);
  int64_t n = int64_t{1} << bits;
  Literal lit(Shape::Array(type, {n}));
  for (int64_t i = 0; i < n; ++i) {
    uint8_t v = static_cast<uint8_t>(i);
    if (IsSignedIntegralType(type)) v = static_cast<uint8_t>(static_cast<int8_t>(v << (8 - bits)) >> (8 - bits));
    lit.mutable_raw_data()[i] = v;
  }
  return lit;
}

// Every (a, b) pair of bit patterns as two arrays of n*n elements.
std::vector<Literal> AllPairs(PrimitiveType type) {
  Literal all = AllPatterns(type);
  int64_t n = all.element_count();
  Literal a(Shape::Array(type, {n * n})), b(Shape::Array(type, {n * n}));
  for (int64_t i = 0; i < n * n; ++i) {
    a.mutable_raw_data()[i] = all.raw_data()[i / n];
    b.mutable_raw_data()[i] = all.raw_data()[i % n];
  }
  std::vector<Literal> r;
  r.push_back(std::move(a));
  r.push_back(std::move(b));
  return r;
}

// f32 (or f64) values whose high 16 bits take every pattern, each with low bits that make exact values, ties and
// values just off ties for every narrow mantissa width.
template <typename Uint>
Literal RoundingInputs(PrimitiveType type, const std::vector<Uint>& lows) {
  constexpr int kShift = 8 * sizeof(Uint) - 16;
  Literal lit(Shape::Array(type, {static_cast<int64_t>(65536 * lows.size())}));
  int64_t i = 0;
  for (uint64_t hi = 0; hi < 65536; ++hi) {
    for (Uint low : lows) lit.Set<Uint>(i++, static_cast<Uint>((static_cast<Uint>(hi) << kShift) | low));
  }
  return lit;
}

std::string TupleModule(const std::string& params, const std::vector<std::string>& lines) {
  std::string body, names, shapes;
  for (size_t i = 0; i < lines.size(); ++i) {
    body += "  r" + std::to_string(i) + " = " + lines[i] + "\n";
    names += (i ? ", r" : "r") + std::to_string(i);
  }
  return "HloModule m\nENTRY e {\n" + params + body + "  ROOT t = tuple(" + names + ")\n}\n";
}

TEST(CodegenNarrowTypes, FloatDecodeAndReencodeEveryPattern) {
  for (const std::string& t : kNarrowFloats) {
    SCOPED_TRACE(t);
    int64_t n = int64_t{1} << BitWidth(TypeOf(t));
    std::string d = "[" + std::to_string(n) + "]";
    std::string params = "  p = " + t + d + " parameter(0)\n  f = f32" + d + " convert(p)\n";
    std::vector<std::string> lines = {
        "f32" + d + " convert(p)",    t + d + " convert(f)",          "f64" + d + " convert(p)",
        "f16" + d + " convert(p)",    "bf16" + d + " convert(p)",     "s32" + d + " convert(p)",
        "u8" + d + " convert(p)",     "s4" + d + " convert(p)",       "pred" + d + " convert(p)",
        "f8e5m2" + d + " convert(p)", "f4e2m1fn" + d + " convert(p)", "f8e8m0fnu" + d + " convert(p)"};
    std::vector<Literal> args;
    args.push_back(AllPatterns(TypeOf(t)));
    ExpectMatchesInterpreter(TupleModule(params, lines), std::move(args));
  }
}

TEST(CodegenNarrowTypes, RoundingFromF32) {
  Literal in = RoundingInputs<uint32_t>(PrimitiveType::kF32, {0, 1, 0x7fff, 0x8000, 0x8001, 0xffff, 0x4000, 0xc000});
  std::string d = "[" + std::to_string(in.element_count()) + "]";
  std::vector<std::string> lines;
  for (const std::string& t : kNarrowFloats) lines.push_back(t + d + " convert(p)");
  std::vector<Literal> args;
  args.push_back(std::move(in));
  ExpectMatchesInterpreter(TupleModule("  p = f32" + d + " parameter(0)\n", lines), std::move(args));
}

TEST(CodegenNarrowTypes, RoundingFromF64RoundsOnce) {
  const uint64_t half = uint64_t{1} << 47;
  Literal in = RoundingInputs<uint64_t>(
      PrimitiveType::kF64, {0, 1, half, half - 1, half + 1, 2 * half - 1, half / 2, half / 2 + 1, 3 * (half / 2)});
  std::string d = "[" + std::to_string(in.element_count()) + "]";
  std::vector<std::string> lines;
  for (const std::string& t : kNarrowFloats) lines.push_back(t + d + " convert(p)");
  std::vector<Literal> args;
  args.push_back(std::move(in));
  ExpectMatchesInterpreter(TupleModule("  p = f64" + d + " parameter(0)\n", lines), std::move(args));
}

TEST(CodegenNarrowTypes, FloatArithmeticEveryPair) {
  for (const std::string& t : kNarrowFloats) {
    SCOPED_TRACE(t);
    std::vector<Literal> args = AllPairs(TypeOf(t));
    std::string d = "[" + std::to_string(args[0].element_count()) + "]";
    std::string params = "  a = " + t + d + " parameter(0)\n  b = " + t + d + " parameter(1)\n";
    std::vector<std::string> lines;
    for (const char* op :
         {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power", "remainder", "atan2"}) {
      lines.push_back(t + d + " " + op + "(a, b)");
    }
    for (const char* op : {"sqrt", "rsqrt", "exponential", "log", "tanh", "negate", "abs", "sign", "floor",
                           "round-nearest-even", "logistic", "cosine"}) {
      lines.push_back(t + d + " " + op + "(a)");
    }
    lines.push_back("pred" + d + " is-finite(a)");
    lines.push_back("pred" + d + " compare(a, b), direction=LT");
    lines.push_back("pred" + d + " compare(a, b), direction=NE");
    lines.push_back("pred" + d + " compare(a, b), direction=LE, type=TOTALORDER");
    lines.push_back(t + d + " clamp(a, b, a)");
    ExpectMatchesInterpreter(TupleModule(params, lines), std::move(args));
  }
}

TEST(CodegenNarrowTypes, IntegerOpsEveryPair) {
  for (const std::string& t : kSubByteInts) {
    SCOPED_TRACE(t);
    std::vector<Literal> args = AllPairs(TypeOf(t));
    std::string d = "[" + std::to_string(args[0].element_count()) + "]";
    std::string params = "  a = " + t + d + " parameter(0)\n  b = " + t + d + " parameter(1)\n";
    std::vector<std::string> lines;
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "and",
                           "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
      lines.push_back(t + d + " " + op + "(a, b)");
    }
    for (const char* op : {"negate", "abs", "sign", "not", "count-leading-zeros", "popcnt"}) {
      // abs and sign are defined on signed types only.
      if ((std::string(op) == "abs" || std::string(op) == "sign") && t[0] == 'u') continue;
      lines.push_back(t + d + " " + op + "(a)");
    }
    for (const char* to :
         {"s8", "u8", "s64", "u64", "f32", "f16", "f8e4m3fn", "f4e2m1fn", "s2", "u2", "s4", "u4", "pred"}) {
      lines.push_back(std::string(to) + d + " convert(a)");
    }
    lines.push_back("pred" + d + " compare(a, b), direction=LT");
    lines.push_back("pred" + d + " compare(a, b), direction=GE");
    lines.push_back(t + d + " clamp(b, a, b)");
    ExpectMatchesInterpreter(TupleModule(params, lines), std::move(args));
  }
}

TEST(CodegenNarrowTypes, ConvertFloatsToSubByteIntegersSaturates) {
  std::vector<double> values = {0.0,  -0.0, 0.5,  -0.5, 1.75,  -1.75,  2.0,      3.5,       7.9, 8.0,
                                -8.0, -8.5, 15.5, 16.0, 300.0, -300.0, INFINITY, -INFINITY, NAN};
  Literal in(Shape::Array(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) in.Set<float>(static_cast<int64_t>(i), static_cast<float>(values[i]));
  std::string d = "[" + std::to_string(values.size()) + "]";
  std::vector<std::string> lines;
  for (const std::string& t : kSubByteInts) lines.push_back(t + d + " convert(p)");
  for (const std::string& t : kSubByteInts) lines.push_back(t + d + " convert(q)");
  std::vector<Literal> args;
  args.push_back(std::move(in));
  ExpectMatchesInterpreter(TupleModule("  p = f32" + d + " parameter(0)\n  q = f8e4m3" + d + " convert(p)\n", lines),
                           std::move(args));
}

TEST(CodegenNarrowTypes, ReducePrecisionEveryWidth) {
  struct Case {
    std::string type;
    int max_e, max_m;
  };
  for (const Case& c : {Case{"f32", 9, 24}, Case{"f64", 12, 53}, Case{"bf16", 9, 8}, Case{"f16", 9, 11},
                        Case{"f8e4m3fn", 5, 4}, Case{"f8e5m2", 6, 3}}) {
    SCOPED_TRACE(c.type);
    std::string d = "[64]";
    std::vector<std::string> lines;
    for (int e = 1; e <= c.max_e; ++e) {
      for (int m = 0; m <= c.max_m; ++m) {
        lines.push_back(c.type + d + " reduce-precision(p), exponent_bits=" + std::to_string(e) +
                        ", mantissa_bits=" + std::to_string(m));
      }
    }
    std::string params = "  p = " + c.type + d + " parameter(0)\n";
    ExpectMatchesInterpreter(TupleModule(params, lines));
    // Special values: zeros, infinities, NaNs, subnormals, the largest finite values.
    Literal special(Shape::Array(TypeOf(c.type), {64}));
    std::vector<double> v = {0.0,   -0.0, INFINITY, -INFINITY, NAN,   -NAN,   1e-40, -1e-40, 6e-8, 3e38,  -3e38,
                             65504, 1.5,  1.75,     0.1,       1e300, 5e-324, 2.5,   3.5,    448,  57344, 1e-3};
    for (int64_t i = 0; i < 64; ++i) {
      special.SetFromDouble(i, i < static_cast<int64_t>(v.size()) ? v[i] : std::ldexp(1.0 + i / 64.0, int(i) - 40));
    }
    std::vector<Literal> args;
    args.push_back(std::move(special));
    ExpectMatchesInterpreter(TupleModule(params, lines), std::move(args));
  }
}

TEST(CodegenNarrowTypes, ReduceDotIotaConstants) {
  for (std::string t : {"s4", "u4", "s2", "f8e4m3fn", "f8e5m2", "f8e4m3b11fnuz", "f4e2m1fn", "f8e8m0fnu"}) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(absl::StrReplaceAll(WithType(R"(
HloModule m
add {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] add(x, y)
}
ENTRY e {
  a = $T[6,40] parameter(0)
  b = $T[40,5] parameter(1)
  z = $T[] constant(1)
  r = $T[6] reduce(a, z), dimensions={1}, to_apply=add
  d = $T[6,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  i = $T[7,3] iota(), iota_dimension=0
  c = $T[4] constant($C)
  m = $T[4] multiply(c, c)
  ROOT t = tuple(r, d, i, m)
})",
                                                          t),
                                                 {{"$C", t[0] == 'f' ? "{1, 0.5, 2, 4}" : "{1, 0, 1, 1}"}}));
  }
}

TEST(CodegenNarrowTypes, MixedDotAndConvolutionRoundOnce) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f8e4m3fn[4,64] parameter(0)
  b = f8e5m2[64,3] parameter(1)
  d = f8e4m3[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = f8e4m3fn[1,9,2] parameter(2)
  k = f8e4m3fn[3,2,2] parameter(3)
  c = f8e4m3fn[1,7,2] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f
  ROOT t = tuple(d, c)
})");
}

TEST(CodegenNarrowTypes, SubByteBitcastConvert) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = s4[16] parameter(0)
  u = u4[16] bitcast-convert(a)
  f = f4e2m1fn[16] bitcast-convert(u)
  s = s4[16] bitcast-convert(f)
  b = u2[8] parameter(1)
  c = s2[8] bitcast-convert(b)
  ROOT t = tuple(u, f, s, c)
})");
}

}  // namespace
}  // namespace xlac::codegen::testing
