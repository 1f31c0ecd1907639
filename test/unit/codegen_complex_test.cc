// Complex element types (c64, c128) compiled with the JIT against the interpreter: every elementwise op on special
// values (signed zeros, infinities, NaNs, huge and subnormal parts), conversions to and from every type, and the op
// families that run complex reducers or products (reduce, reduce-window, scatter, sort, map, dot, convolution,
// all-reduce).
#include <cmath>
#include <cstring>
#include <limits>

#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kComplexTypes = {"c64", "c128"};

std::string PartType(const std::string& t) { return t == "c64" ? "f32" : "f64"; }

// `text` with $T replaced by the complex type and $P by its part type.
std::string WithTypes(const std::string& text, const std::string& t) {
  return absl::StrReplaceAll(text, {{"$T", t}, {"$P", PartType(t)}});
}

// Parts of interest: zeros of both signs, small integers, infinities, NaN, values near overflow and underflow.
std::vector<double> SpecialParts(const std::string& t) {
  double inf = std::numeric_limits<double>::infinity();
  double huge = t == "c64" ? 3e38 : 1.5e308;
  double tiny = t == "c64" ? 1e-40 : 1e-310;  // subnormal
  return {0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, inf, -inf, std::nan(""), huge, -huge, tiny, 1e-20};
}

// A rank-1 complex literal of `t` from (real, imag) pairs.
Literal ComplexLiteral(const std::string& t, const std::vector<std::pair<double, double>>& values) {
  PrimitiveType type = t == "c64" ? PrimitiveType::kC64 : PrimitiveType::kC128;
  Literal lit(Shape::Array(type, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == PrimitiveType::kC64) {
      float parts[2] = {static_cast<float>(values[i].first), static_cast<float>(values[i].second)};
      std::memcpy(lit.mutable_raw_data() + i * sizeof(parts), parts, sizeof(parts));
    } else {
      double parts[2] = {values[i].first, values[i].second};
      std::memcpy(lit.mutable_raw_data() + i * sizeof(parts), parts, sizeof(parts));
    }
  }
  return lit;
}

// Every (real, imag) combination of the special parts.
std::vector<std::pair<double, double>> SpecialValues(const std::string& t) {
  std::vector<std::pair<double, double>> v;
  for (double re : SpecialParts(t)) {
    for (double im : SpecialParts(t)) v.emplace_back(re, im);
  }
  return v;
}

// Operand pairs for binary ops: every special value against a spread of others (all pairs would be 38416).
std::pair<Literal, Literal> SpecialPairs(const std::string& t) {
  std::vector<std::pair<double, double>> all = SpecialValues(t), a, b;
  for (size_t i = 0; i < all.size(); ++i) {
    for (size_t j = 0; j < all.size(); j += 5) {
      a.push_back(all[i]);
      b.push_back(all[(i + j) % all.size()]);
    }
  }
  return {ComplexLiteral(t, a), ComplexLiteral(t, b)};
}

std::string UnaryHlo(const std::string& op, const std::string& t, const std::string& out, int64_t n) {
  std::string dims = "[" + std::to_string(n) + "]";
  return WithTypes(
      "HloModule m\nENTRY e {\n  a = $T" + dims + " parameter(0)\n  ROOT r = " + out + dims + " " + op + "(a)\n}\n", t);
}

std::string BinaryHlo(const std::string& op, const std::string& t, const std::string& out, int64_t n,
                      const std::string& attrs = "") {
  std::string dims = "[" + std::to_string(n) + "]";
  return WithTypes("HloModule m\nENTRY e {\n  a = $T" + dims + " parameter(0)\n  b = $T" + dims +
                       " parameter(1)\n  ROOT r = " + out + dims + " " + op + "(a, b)" + attrs + "\n}\n",
                   t);
}

const std::vector<std::string> kUnaryOps = {
    "negate", "sign",         "sqrt",     "rsqrt", "cbrt",   "exponential", "exponential-minus-one",
    "log",    "log-plus-one", "logistic", "sine",  "cosine", "tan",         "tanh",
    "sinh",   "cosh",         "asin",     "acos",  "atan",   "asinh",       "acosh",
    "atanh"};
const std::vector<std::string> kBinaryOps = {"add",   "subtract", "multiply", "divide",
                                             "power", "atan2",    "maximum",  "minimum"};

TEST(CodegenComplex, UnarySpecialValues) {
  for (const std::string& t : kComplexTypes) {
    Literal values = ComplexLiteral(t, SpecialValues(t));
    int64_t n = values.element_count();
    for (const std::string& op : kUnaryOps) {
      SCOPED_TRACE(op + " " + t);
      ExpectMatchesInterpreter(UnaryHlo(op, t, t, n), {values});
    }
    for (const char* op : {"abs", "real", "imag"}) {
      SCOPED_TRACE(std::string(op) + " " + t);
      ExpectMatchesInterpreter(UnaryHlo(op, t, PartType(t), n), {values});
    }
  }
}

TEST(CodegenComplex, UnaryRandom) {
  for (const std::string& t : kComplexTypes) {
    for (const std::string& op : kUnaryOps) {
      SCOPED_TRACE(op + " " + t);
      ExpectMatchesInterpreter(UnaryHlo(op, t, t, 64));
    }
    ExpectMatchesInterpreter(UnaryHlo("abs", t, PartType(t), 64));
  }
}

TEST(CodegenComplex, BinarySpecialValues) {
  for (const std::string& t : kComplexTypes) {
    auto [a, b] = SpecialPairs(t);
    int64_t n = a.element_count();
    for (const std::string& op : kBinaryOps) {
      SCOPED_TRACE(op + " " + t);
      ExpectMatchesInterpreter(BinaryHlo(op, t, t, n), {a, b});
    }
    for (const char* dir : {"EQ", "NE"}) {
      SCOPED_TRACE(std::string(dir) + " " + t);
      ExpectMatchesInterpreter(BinaryHlo("compare", t, "pred", n, std::string(", direction=") + dir), {a, b});
    }
  }
}

TEST(CodegenComplex, BinaryRandom) {
  for (const std::string& t : kComplexTypes) {
    for (const std::string& op : kBinaryOps) {
      SCOPED_TRACE(op + " " + t);
      ExpectMatchesInterpreter(BinaryHlo(op, t, t, 64));
    }
  }
}

TEST(CodegenComplex, ComplexSelectAndBroadcastScalar) {
  for (const std::string& t : kComplexTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithTypes(R"(
HloModule m
ENTRY e {
  re = $P[4,6] parameter(0)
  im = $P[4,6] parameter(1)
  p = pred[4,6] parameter(2)
  z = $T[4,6] complex(re, im)
  c = $T[] constant((1.5, -0.0))
  cb = $T[4,6] broadcast(c), dimensions={}
  s = $T[4,6] select(p, z, cb)
  m = $T[4,6] multiply(s, cb)
  ROOT t = ($T[4,6], $T[4,6]) tuple(s, m)
})",
                                       t));
  }
}

TEST(CodegenComplex, ConvertToAndFromEveryType) {
  const std::vector<std::string> types = {"pred", "s8",  "s16",  "s32", "s64", "u8",  "u16", "u32",
                                          "u64",  "f16", "bf16", "f32", "f64", "c64", "c128"};
  for (const std::string& t : kComplexTypes) {
    Literal values = ComplexLiteral(t, SpecialValues(t));
    int64_t n = values.element_count();
    for (const std::string& other : types) {
      SCOPED_TRACE(t + " -> " + other);
      ExpectMatchesInterpreter(UnaryHlo("convert", t, other, n), {values});
      SCOPED_TRACE(other + " -> " + t);
      ExpectMatchesInterpreter("HloModule m\nENTRY e {\n  a = " + other + "[40] parameter(0)\n  ROOT r = " + t +
                               "[40] convert(a)\n}\n");
    }
  }
}

TEST(CodegenComplex, IotaAndConstants) {
  for (const std::string& t : kComplexTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithTypes(R"(
HloModule m
ENTRY e {
  i = $T[3,4] iota(), iota_dimension=1
  c = $T[2] constant({(nan, -0), (-inf, 1e-30)})
  ROOT t = ($T[3,4], $T[2]) tuple(i, c)
})",
                                       t));
  }
}

TEST(CodegenComplex, ReduceAndReduceWindow) {
  for (const std::string& t : kComplexTypes) {
    for (const char* op : {"add", "multiply", "maximum"}) {
      SCOPED_TRACE(std::string(op) + " " + t);
      std::string reducer = std::string(R"(
HloModule m
red {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] )") + op + R"((a, b)
}
ENTRY e {
  x = $T[4,7] parameter(0)
  zero = $T[] constant((0.5, -1))
  r = $T[4] reduce(x, zero), dimensions={1}, to_apply=red
  w = $T[3,3] reduce-window(x, zero), window={size=2x3 stride=1x2}, to_apply=red
  ROOT t = ($T[4], $T[3,3]) tuple(r, w)
})";
      ExpectMatchesInterpreter(WithTypes(reducer, t));
    }
  }
}

TEST(CodegenComplex, ScatterSortAndMap) {
  for (const std::string& t : kComplexTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithTypes(R"(
HloModule m
mul {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] multiply(a, b)
}
less_real {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ra = $P[] real(a)
  rb = $P[] real(b)
  ROOT lt = pred[] compare(ra, rb), direction=LT
}
f {
  a = $T[] parameter(0)
  e = $T[] exponential(a)
  ROOT s = $T[] divide(e, a)
}
ENTRY e {
  x = $T[6,3] parameter(0)
  idx = s32[2,1] constant({{4}, {1}})
  upd = $T[2,3] parameter(1)
  sc = $T[6,3] scatter(x, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul
  so = $T[6,3] sort(x), dimensions={0}, is_stable=true, to_apply=less_real
  mp = $T[6,3] map(x), dimensions={0,1}, to_apply=f
  ROOT t = ($T[6,3], $T[6,3], $T[6,3]) tuple(sc, so, mp)
})",
                                       t));
  }
}

TEST(CodegenComplex, DotAndConvolution) {
  for (const std::string& t : kComplexTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithTypes(R"(
HloModule m
ENTRY e {
  a = $T[2,5,7] parameter(0)
  b = $T[2,7,3] parameter(1)
  d = $T[2,5,3] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  fa = f32[4,5] parameter(2)
  m = $T[1,5,3] slice(d), slice={[1:2], [0:5], [0:3]}
  ms = $T[5,3] reshape(m)
  mixed = $T[4,3] dot(fa, ms), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  in = $T[1,6,6,2] parameter(3)
  k = $T[3,3,2,4] parameter(4)
  c = $T[1,4,4,4] convolution(in, k), window={size=3x3}, dim_labels=b01f_01io->b01f
  ROOT t = ($T[2,5,3], $T[4,3], $T[1,4,4,4]) tuple(d, mixed, c)
})",
                                       t));
  }
}

TEST(CodegenComplex, SpecialValueProducts) {
  // NaN recovery of full-range complex multiplication inside a dot's accumulation.
  for (const std::string& t : kComplexTypes) {
    SCOPED_TRACE(t);
    auto [a, b] = SpecialPairs(t);
    int64_t n = a.element_count();
    std::string text = WithTypes("HloModule m\nENTRY e {\n  a = $T[" + std::to_string(n) + "] parameter(0)\n  b = $T[" +
                                     std::to_string(n) + "] parameter(1)\n  ar = $T[" + std::to_string(n / 8) +
                                     ",8] reshape(a)\n  br = $T[" + std::to_string(n / 8) +
                                     ",8] reshape(b)\n  ROOT d = $T[" + std::to_string(n / 8) +
                                     "] dot(ar, br), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                                     "lhs_contracting_dims={1}, rhs_contracting_dims={1}\n}\n",
                                 t);
    ASSERT_EQ(n % 8, 0);
    ExpectMatchesInterpreter(text, {a, b});
  }
}

TEST(CodegenComplex, AllReduce) {
  for (const std::string& t : kComplexTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithTypes(R"(
HloModule m, replica_count=4
mul {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] multiply(a, b)
}
ENTRY e {
  p = $T[3,5] parameter(0)
  r = u32[] replica-id()
  rc = $T[] convert(r)
  rb = $T[3,5] broadcast(rc), dimensions={}
  x = $T[3,5] add(p, rb)
  ROOT ar = $T[3,5] all-reduce(x), replica_groups={}, to_apply=mul
})",
                                       t));
  }
}

TEST(CodegenComplex, UndefinedOpsFailCleanly) {
  // The interpreter rejects these too; codegen must say so instead of crashing.
  for (const char* text : {
           "HloModule m\nENTRY e {\n  a = c64[4] parameter(0)\n  b = c64[4] parameter(1)\n"
           "  ROOT r = pred[4] compare(a, b), direction=LT\n}\n",
           "HloModule m\nENTRY e {\n  a = c64[4] parameter(0)\n  ROOT r = c64[4] clamp(a, a, a)\n}\n",
       }) {
    std::unique_ptr<Module> module = ParseAndVerify(text);
    if (!module) continue;
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, JitOptions{});
    EXPECT_FALSE(exe.ok()) << text;
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
