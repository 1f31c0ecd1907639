// Elementwise ops (arithmetic, compare, select, clamp, convert) compiled with the JIT against the interpreter.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kAllTypes = {"f32", "f64", "bf16", "f16", "s8",  "s16", "s32",
                                            "s64", "u8",  "u16",  "u32", "u64", "pred"};
const std::vector<std::string> kNumericTypes = {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32", "u64"};
const std::vector<std::string> kFloatTypes = {"f32", "f64", "bf16", "f16"};
const std::vector<std::string> kIntTypes = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"};

std::string Binary(const std::string& op, const std::string& type) {
  return WithType(R"(
HloModule m
ENTRY e {
  a = $T[3,17] parameter(0)
  b = $T[3,17] parameter(1)
  ROOT r = $T[3,17] )" +
                      op + R"((a, b)
})",
                  type);
}

std::string Unary(const std::string& op, const std::string& type) {
  return WithType(R"(
HloModule m
ENTRY e {
  a = $T[5,13] parameter(0)
  ROOT r = $T[5,13] )" +
                      op + R"((a)
})",
                  type);
}

TEST(CodegenElementwise, ArithmeticAllTypes) {
  for (const std::string& t : kAllTypes) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"}) {
      // pred has only the logical forms (add = or, multiply = and, max, min).
      std::string_view o = op;
      if (t == "pred" && (o == "subtract" || o == "divide" || o == "power")) continue;
      SCOPED_TRACE(std::string(op) + " " + t);
      ExpectMatchesInterpreter(Binary(op, t));
    }
  }
}

TEST(CodegenElementwise, RemainderAndAtan2) {
  for (const std::string& t : kNumericTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(Binary("remainder", t));
  }
  for (const std::string& t : kFloatTypes) ExpectMatchesInterpreter(Binary("atan2", t));
}

TEST(CodegenElementwise, BitwiseAndShifts) {
  for (const std::string& t : kIntTypes) {
    for (const char* op : {"and", "or", "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic"}) {
      SCOPED_TRACE(std::string(op) + " " + t);
      ExpectMatchesInterpreter(Binary(op, t));
    }
  }
  for (const char* op : {"and", "or", "xor"}) ExpectMatchesInterpreter(Binary(op, "pred"));
}

TEST(CodegenElementwise, IntegerEdgeCases) {
  // Division by zero, INT_MIN / -1, shifts out of range, negative powers.
  std::string text = R"(
HloModule m
ENTRY e {
  a = s32[8] parameter(0)
  b = s32[8] parameter(1)
  d = s32[8] divide(a, b)
  r = s32[8] remainder(a, b)
  sl = s32[8] shift-left(a, b)
  sr = s32[8] shift-right-arithmetic(a, b)
  sh = s32[8] shift-right-logical(a, b)
  p = s32[8] power(a, b)
  m = s32[8] mulhi(a, b)
  ROOT t = (s32[8], s32[8], s32[8], s32[8], s32[8], s32[8], s32[8]) tuple(d, r, sl, sr, sh, p, m)
})";
  Literal a(Shape::Array(PrimitiveType::kS32, {8}));
  Literal b(Shape::Array(PrimitiveType::kS32, {8}));
  std::vector<int32_t> av = {7, -7, INT32_MIN, INT32_MIN, 5, -1, 3, 123456789};
  std::vector<int32_t> bv = {0, 2, -1, 0, 40, 31, -2, 32};
  for (int i = 0; i < 8; ++i) {
    a.Set<int32_t>(i, av[i]);
    b.Set<int32_t>(i, bv[i]);
  }
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  ExpectMatchesInterpreter(text, std::move(args));
}

TEST(CodegenElementwise, UnaryFloat) {
  for (const std::string& t : kFloatTypes) {
    for (const char* op : {"abs",
                           "negate",
                           "sign",
                           "floor",
                           "ceil",
                           "round-nearest-afz",
                           "round-nearest-even",
                           "exponential",
                           "log",
                           "sqrt",
                           "rsqrt",
                           "tanh",
                           "sine",
                           "cosine",
                           "tan",
                           "logistic",
                           "sinh",
                           "cosh",
                           "asin",
                           "acos",
                           "atan",
                           "asinh",
                           "acosh",
                           "atanh",
                           "cbrt",
                           "erf",
                           "exponential-minus-one",
                           "log-plus-one"}) {
      SCOPED_TRACE(std::string(op) + " " + t);
      ExpectMatchesInterpreter(Unary(op, t));
    }
  }
}

TEST(CodegenElementwise, UnaryInteger) {
  for (const std::string& t : kIntTypes) {
    for (const char* op : {"abs", "negate", "sign", "not", "count-leading-zeros", "popcnt"}) {
      if (t[0] == 'u' && (std::string_view(op) == "abs" || std::string_view(op) == "sign")) continue;
      SCOPED_TRACE(std::string(op) + " " + t);
      ExpectMatchesInterpreter(Unary(op, t));
    }
  }
  ExpectMatchesInterpreter(Unary("not", "pred"));
}

TEST(CodegenElementwise, CompareSelectClamp) {
  for (const std::string& t : kAllTypes) {
    for (const char* dir : {"EQ", "NE", "LT", "GT", "LE", "GE"}) {
      SCOPED_TRACE(std::string(dir) + " " + t);
      ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[4,9] parameter(0)
  b = $T[4,9] parameter(1)
  c = pred[4,9] compare(a, b), direction=)" +
                                            std::string(dir) + R"(
  ROOT s = $T[4,9] select(c, a, b)
})",
                                        t));
    }
    if (t == "pred") continue;
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  lo = $T[] parameter(0)
  x = $T[4,9] parameter(1)
  hi = $T[] parameter(2)
  ROOT c = $T[4,9] clamp(lo, x, hi)
})",
                                      t));
  }
  for (const std::string& t : kFloatTypes) {
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[4,9] parameter(0)
  b = $T[4,9] parameter(1)
  ROOT c = pred[4,9] compare(a, b), direction=LT, type=TOTALORDER
})",
                                      t));
  }
}

TEST(CodegenElementwise, FloatNaNAndSpecialValues) {
  // max/min NaN propagation, is-finite, float -> int saturation, through values the random inputs never produce.
  std::string text = R"(
HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  b = f32[8] parameter(1)
  mx = f32[8] maximum(a, b)
  mn = f32[8] minimum(a, b)
  f = pred[8] is-finite(a)
  i = s32[8] convert(a)
  u = u8[8] convert(a)
  h = f16[8] convert(a)
  bf = bf16[8] convert(a)
  sq = f32[8] sqrt(a)
  ROOT t = (f32[8], f32[8], pred[8], s32[8], u8[8], f16[8], bf16[8], f32[8]) tuple(mx, mn, f, i, u, h, bf, sq)
})";
  Literal a(Shape::Array(PrimitiveType::kF32, {8}));
  Literal b(Shape::Array(PrimitiveType::kF32, {8}));
  std::vector<float> av = {NAN, 1.0f, -0.0f, INFINITY, -INFINITY, 3e9f, -3e9f, 70000.5f};
  std::vector<float> bv = {1.0f, NAN, 0.0f, -1.0f, 2.0f, -2.5f, 255.5f, 1.0e-40f};
  for (int i = 0; i < 8; ++i) {
    a.Set<float>(i, av[i]);
    b.Set<float>(i, bv[i]);
  }
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  ExpectMatchesInterpreter(text, std::move(args));
}

TEST(CodegenElementwise, ConvertAllPairs) {
  for (const std::string& from : kAllTypes) {
    for (const std::string& to : kAllTypes) {
      SCOPED_TRACE(from + " -> " + to);
      // Scale first so float sources exercise rounding, saturation and negative values.
      std::string text = R"(
HloModule m
ENTRY e {
  a = )" + from + R"([6,7] parameter(0)
  ROOT c = )" + to + R"([6,7] convert(a)
})";
      ExpectMatchesInterpreter(text);
    }
    if (from == "f32" || from == "f64") {
      for (const std::string& to : kAllTypes) {
        ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = )" + from + R"([6,7] parameter(0)
  k = )" + from + R"([] constant(1e3)
  kb = )" + from + R"([6,7] broadcast(k), dimensions={}
  s = )" + from + R"([6,7] multiply(a, kb)
  ROOT c = )" + to + R"([6,7] convert(s)
})");
      }
    }
  }
}

TEST(CodegenElementwise, NonDefaultLayouts) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[5,7]{0,1} parameter(0)
  b = f32[5,7]{1,0} parameter(1)
  ROOT r = f32[5,7]{0,1} add(a, b)
})");
}

TEST(CodegenElementwise, OptLevels) {
  for (int level = 0; level <= 3; ++level) {
    ExpectMatchesInterpreter(Binary("multiply", "bf16"), {}, 3, level);
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
