// Accuracy of the default mode's inlined math (codegen/fast_math.h), compiled through the JIT as one elementwise op
// over a dense input set per function, against long double libm rounded to the result type. Exact mode is checked
// to stay bitwise equal to the libm calls the interpreter makes. The exhaustive f32 sweep is
// benchmarks/math_accuracy_benchmark.cc; its table is in docs/numerics.md.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "codegen/fast_math.h"
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

struct MathFn {
  const char* hlo;
  double ulp;
  std::function<long double(long double)> ref;
  float (*libm32)(float);
  double (*libm64)(double);
};

long double Logistic(long double x) { return 1.0L / (1.0L + expl(-x)); }
float Logistic32(float x) { return 1.0f / (1.0f + std::exp(-x)); }
double Logistic64(double x) { return 1.0 / (1.0 + std::exp(-x)); }
float Rsqrt32(float x) { return 1.0f / std::sqrt(x); }
double Rsqrt64(double x) { return 1.0 / std::sqrt(x); }

const std::vector<MathFn>& Functions() {
  static const std::vector<MathFn> fns = {
      {"exponential", kFastMathExpUlp, [](long double x) { return expl(x); }, ::expf, ::exp},
      {"exponential-minus-one", kFastMathExpm1Ulp, [](long double x) { return expm1l(x); }, ::expm1f, ::expm1},
      {"log", kFastMathLogUlp, [](long double x) { return logl(x); }, ::logf, ::log},
      {"log-plus-one", kFastMathLog1pUlp, [](long double x) { return log1pl(x); }, ::log1pf, ::log1p},
      {"tanh", kFastMathTanhUlp, [](long double x) { return tanhl(x); }, ::tanhf, ::tanh},
      {"logistic", kFastMathLogisticUlp, Logistic, Logistic32, Logistic64},
      {"erf", kFastMathErfUlp, [](long double x) { return erfl(x); }, ::erff, ::erf},
      {"sine", kFastMathSinCosUlp, [](long double x) { return sinl(x); }, ::sinf, ::sin},
      {"cosine", kFastMathSinCosUlp, [](long double x) { return cosl(x); }, ::cosf, ::cos},
      {"cbrt", kFastMathCbrtUlp, [](long double x) { return cbrtl(x); }, ::cbrtf, ::cbrt},
      {"sqrt", 0.5, [](long double x) { return sqrtl(x); }, ::sqrtf, ::sqrt},
      {"rsqrt", 1.5, [](long double x) { return 1.0L / sqrtl(x); }, Rsqrt32, Rsqrt64},
  };
  return fns;
}

// ULP of T at `ref` (the denormal spacing below the normal range).
template <typename T>
long double UlpAt(long double ref) {
  int e = std::ilogb(static_cast<T>(std::fabs(ref)) == 0 ? std::numeric_limits<T>::min() : static_cast<T>(ref));
  e = std::max(e, std::numeric_limits<T>::min_exponent - 1);
  return std::ldexp(1.0L, e - (std::numeric_limits<T>::digits - 1));
}

// Error of `got` in ULP of T against the exact `ref`; infinite when the classes differ (NaN, inf, sign of zero).
template <typename T>
double UlpError(T got, long double ref) {
  T rounded = static_cast<T>(ref);
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(rounded) || std::isinf(got)) return rounded == got ? 0 : INFINITY;
  if (rounded == 0 && got == 0 && std::signbit(rounded) != std::signbit(got)) return INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / UlpAt<T>(ref));
}

template <typename T>
std::string TypeName() {
  return sizeof(T) == 4 ? "f32" : "f64";
}

template <typename T>
std::unique_ptr<JitExecutable> CompileOp(const std::string& op, int64_t n, int arity, bool exact) {
  std::string t = TypeName<T>() + "[" + std::to_string(n) + "]";
  std::string text = "HloModule m\nENTRY e {\n  a = " + t + " parameter(0)\n";
  if (arity == 2) text += "  b = " + t + " parameter(1)\n";
  text += "  ROOT r = " + t + " " + op + (arity == 2 ? "(a, b)\n}\n" : "(a)\n}\n");
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return nullptr;
  JitOptions options;
  options.compile.exact = exact;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  return exe.ok() ? *std::move(exe) : nullptr;
}

template <typename T>
std::vector<T> RunOp(JitExecutable& exe, const std::vector<const std::vector<T>*>& args) {
  std::vector<T> out(args[0]->size());
  std::vector<const void*> params;
  for (const auto* a : args) params.push_back(a->data());
  absl::Status status = exe.RunBuffers(params, {out.data()});
  EXPECT_TRUE(status.ok()) << status.ToString();
  return out;
}

template <typename T>
using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;

template <typename T>
T FromBits(Bits<T> b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Specials, every power of two with neighbours, a bit-pattern stride through the whole type (denormals included),
// and dense uniform grids over [-10, 10] and [-100, 100].
template <typename T>
std::vector<T> DenseInputs() {
  std::vector<T> v = {0,
                      -T(0),
                      INFINITY,
                      -INFINITY,
                      NAN,
                      std::numeric_limits<T>::min(),
                      std::numeric_limits<T>::denorm_min(),
                      std::numeric_limits<T>::max(),
                      -std::numeric_limits<T>::max()};
  for (int e = std::numeric_limits<T>::min_exponent - std::numeric_limits<T>::digits;
       e <= std::numeric_limits<T>::max_exponent - 1; ++e) {
    T p = std::ldexp(T(1), e);
    for (T s : {T(1), T(-1)}) {
      v.push_back(s * p);
      v.push_back(s * std::nextafter(p, T(0)));
      v.push_back(s * std::nextafter(p, T(INFINITY)));
    }
  }
  if constexpr (sizeof(T) == 4) {
    for (uint64_t b = 0; b < (uint64_t{1} << 32); b += 4099) v.push_back(FromBits<T>(static_cast<uint32_t>(b)));
  } else {
    std::mt19937_64 rng(12);
    for (int i = 0; i < 1 << 20; ++i) v.push_back(FromBits<T>(rng()));
  }
  for (int i = -200000; i <= 200000; ++i) v.push_back(T(i) * T(5e-5));
  for (int i = -200000; i <= 200000; ++i) v.push_back(T(i) * T(5e-4));
  // Cody-Waite boundaries: near multiples of ln2/2 and pi/4.
  for (int k = -300; k <= 300; ++k) {
    for (double c : {0.34657359027997264, 0.7853981633974483}) {
      T p = static_cast<T>(k * c);
      v.push_back(p);
      v.push_back(std::nextafter(p, T(INFINITY)));
      v.push_back(std::nextafter(p, -T(INFINITY)));
    }
  }
  return v;
}

template <typename T>
void CheckUnary(const MathFn& fn) {
  std::vector<T> inputs = DenseInputs<T>();
  std::unique_ptr<JitExecutable> fast = CompileOp<T>(fn.hlo, static_cast<int64_t>(inputs.size()), 1, false);
  std::unique_ptr<JitExecutable> exact = CompileOp<T>(fn.hlo, static_cast<int64_t>(inputs.size()), 1, true);
  ASSERT_TRUE(fast && exact);
  std::vector<T> got = RunOp<T>(*fast, {&inputs});
  std::vector<T> got_exact = RunOp<T>(*exact, {&inputs});
  bool trig = std::string(fn.hlo) == "sine" || std::string(fn.hlo) == "cosine";
  double range = sizeof(T) == 4 ? INFINITY : kFastMathTrigRange64;
  double worst = 0;
  T worst_x = 0;
  int exact_mismatches = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    T x = inputs[i];
    T libm = sizeof(T) == 4 ? static_cast<T>(fn.libm32(static_cast<float>(x))) : static_cast<T>(fn.libm64(x));
    if (std::memcmp(&libm, &got_exact[i], sizeof(T)) != 0 && !(std::isnan(libm) && std::isnan(got_exact[i]))) {
      if (exact_mismatches++ < 5)
        ADD_FAILURE() << "exact " << fn.hlo << "(" << x << ") = " << got_exact[i] << ", libm " << libm;
    }
    if (trig && std::fabs(x) > range && std::isfinite(x)) {
      EXPECT_LE(std::fabs(got[i]), T(1)) << fn.hlo << "(" << x << ")";
      continue;
    }
    double err = UlpError<T>(got[i], fn.ref(static_cast<long double>(x)));
    if (!(err <= worst)) {
      worst = err;
      worst_x = x;
    }
  }
  EXPECT_LE(worst, fn.ulp)
      << TypeName<T>() << " " << fn.hlo << " worst at x = " << std::hexfloat << worst_x << " (" << std::defaultfloat
      << worst_x << "): got "
      << got[std::find_if(inputs.begin(), inputs.end(), [&](T v) { return std::memcmp(&v, &worst_x, sizeof v) == 0; }) -
             inputs.begin()];
  std::printf("%s %-22s max %.3f ulp over %zu inputs\n", TypeName<T>().c_str(), fn.hlo, worst, inputs.size());
}

TEST(FastMath, UnaryF32) {
  for (const MathFn& fn : Functions()) CheckUnary<float>(fn);
}

TEST(FastMath, UnaryF64) {
  for (const MathFn& fn : Functions()) CheckUnary<double>(fn);
}

TEST(FastMath, PowF32) {
  std::vector<float> xs, ys;
  std::vector<float> bases = {0.0f,  -0.0f, 1.0f,   -1.0f, 0.5f,   -0.5f,    2.0f,      -2.0f, 3.7f,   -3.7f,
                              1e-3f, 1e3f,  1e-30f, 1e30f, 1e-40f, INFINITY, -INFINITY, NAN,   0.999f, 1.001f};
  std::vector<float> exps = {0.0f,  -0.0f, 1.0f,   -1.0f, 2.0f,   -2.0f, 3.0f,     -3.0f,     0.5f, -0.5f,
                             7.25f, 1e10f, -1e10f, 33.0f, -33.0f, 1e-8f, INFINITY, -INFINITY, NAN};
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> log_mag(-20.0f, 20.0f), expo(-30.0f, 30.0f);
  for (int i = 0; i < 200000; ++i) {
    bases.push_back((i % 2 ? -1.0f : 1.0f) * std::exp(log_mag(rng)));
    exps.push_back(i % 3 == 0 ? std::round(expo(rng)) : expo(rng));
  }
  for (size_t i = 0; i < 20; ++i) {
    for (float y : exps) {
      xs.push_back(bases[i]);
      ys.push_back(y);
    }
  }
  for (size_t i = 20; i < bases.size(); ++i) {
    xs.push_back(bases[i]);
    ys.push_back(exps[i % exps.size()]);
  }
  std::unique_ptr<JitExecutable> fast = CompileOp<float>("power", static_cast<int64_t>(xs.size()), 2, false);
  ASSERT_TRUE(fast);
  std::vector<float> got = RunOp<float>(*fast, {&xs, &ys});
  double worst = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    double err = UlpError<float>(got[i], powl(xs[i], ys[i]));
    if (!(err <= kFastMathPowUlp)) ADD_FAILURE() << "pow(" << xs[i] << ", " << ys[i] << ") = " << got[i];
    if (err > worst) worst = err;
    if (std::isnan(xs[i]) || std::isnan(ys[i]) || xs[i] == 1 || ys[i] == 0) {
      float libm = std::pow(xs[i], ys[i]);
      EXPECT_TRUE(std::isnan(libm) ? std::isnan(got[i]) : got[i] == libm) << xs[i] << " " << ys[i];
    }
  }
  std::printf("f32 power max %.3f ulp over %zu inputs\n", worst, xs.size());
}

// The mode switch reaches codegen through JitOptions: exact is libm's tanhf bit for bit, the default within bounds.
TEST(FastMath, ExactModeIsLibmDefaultModeIsBounded) {
  const char* text = "HloModule m\nENTRY e {\n  a = f32[1024] parameter(0)\n  ROOT r = f32[1024] tanh(a)\n}\n";
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_TRUE(module);
  for (bool exact : {false, true}) {
    JitOptions options;
    options.compile.exact = exact;
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    ASSERT_TRUE(exe.ok()) << exe.status().ToString();
    std::vector<float> in(1024), out(1024);
    for (int i = 0; i < 1024; ++i) in[static_cast<size_t>(i)] = (static_cast<float>(i) - 512) / 64;
    ASSERT_TRUE((*exe)->RunBuffers({in.data()}, {out.data()}).ok());
    for (size_t i = 0; i < in.size(); ++i) {
      if (exact) {
        EXPECT_EQ(out[i], std::tanh(in[i]));
      } else {
        EXPECT_LE(UlpError<float>(out[i], tanhl(in[i])), kFastMathTanhUlp);
      }
    }
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
