// Accuracy sweep and speed of the default mode's inlined math (codegen/fast_math.h) against exact mode's libm calls.
//
//   math_accuracy_benchmark                      time each function over 16M f32 elements, default vs exact mode
//   math_accuracy_benchmark --sweep=f32 [FN...]  every one of the 2^32 f32 inputs (minutes per function), max ULP
//                                                error against f64 libm (itself within 2^-29 f32 ULP)
//   math_accuracy_benchmark --sweep=f64 [FN...]  a dense f64 sweep (bit-pattern stride plus uniform grids), max ULP
//                                                error against long double libm
// FN is an HLO opcode name (exponential, tanh, ...); the default is every function. docs/numerics.md has the table.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/jit.h"
#include "frontend/hlo/parser.h"

namespace xlac {
namespace {

struct Fn {
  const char* hlo;
  std::function<long double(long double)> ref;
  bool trig = false;
};

const std::vector<Fn>& Functions() {
  static const std::vector<Fn> fns = {
      {"exponential", [](long double x) { return expl(x); }},
      {"exponential-minus-one", [](long double x) { return expm1l(x); }},
      {"log", [](long double x) { return logl(x); }},
      {"log-plus-one", [](long double x) { return log1pl(x); }},
      {"tanh", [](long double x) { return tanhl(x); }},
      {"logistic", [](long double x) { return 1.0L / (1.0L + expl(-x)); }},
      {"erf", [](long double x) { return erfl(x); }},
      {"sine", [](long double x) { return sinl(x); }, true},
      {"cosine", [](long double x) { return cosl(x); }, true},
      {"cbrt", [](long double x) { return cbrtl(x); }},
  };
  return fns;
}

// f64 references for the f32 sweep (long double is ~5x slower and adds nothing at f32 precision).
using Ref64 = double (*)(double);
Ref64 Ref64For(std::string_view fn) {
  if (fn == "exponential") return [](double x) { return std::exp(x); };
  if (fn == "exponential-minus-one") return [](double x) { return std::expm1(x); };
  if (fn == "log") return [](double x) { return std::log(x); };
  if (fn == "log-plus-one") return [](double x) { return std::log1p(x); };
  if (fn == "tanh") return [](double x) { return std::tanh(x); };
  if (fn == "logistic") return [](double x) { return 1.0 / (1.0 + std::exp(-x)); };
  if (fn == "erf") return [](double x) { return std::erf(x); };
  if (fn == "sine") return [](double x) { return std::sin(x); };
  if (fn == "cosine") return [](double x) { return std::cos(x); };
  return [](double x) { return std::cbrt(x); };
}

std::unique_ptr<codegen::JitExecutable> Compile(const std::string& op, const std::string& type, int64_t n, bool exact) {
  std::string t = type + "[" + std::to_string(n) + "]";
  std::string text = "HloModule m\nENTRY e {\n  a = " + t + " parameter(0)\n  ROOT r = " + t + " " + op + "(a)\n}\n";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<math>");
  if (!module.ok()) return nullptr;
  codegen::JitOptions options;
  options.compile.exact = exact;
  options.threads = 1;  // ns per element on one core, both modes
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(**module, options);
  if (!exe.ok()) {
    std::fprintf(stderr, "%s\n", exe.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(exe);
}

template <typename T>
long double UlpAt(long double ref) {
  T r = static_cast<T>(std::fabs(ref));
  int e = r == 0 || std::isinf(r) ? std::numeric_limits<T>::min_exponent - 1 : std::ilogb(r);
  e = std::max(e, std::numeric_limits<T>::min_exponent - 1);
  return std::ldexp(1.0L, e - (std::numeric_limits<T>::digits - 1));
}

// ULP error of `got` against `ref`; infinity when NaN/inf/zero-sign classes differ.
template <typename T>
double UlpError(T got, long double ref) {
  T rounded = static_cast<T>(ref);
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(rounded) || std::isinf(got)) return rounded == got ? 0 : INFINITY;
  if (rounded == 0 && got == 0 && std::signbit(rounded) != std::signbit(got)) return INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) / UlpAt<T>(ref));
}

struct Worst {
  double ulp = 0;
  double x = 0;
  void Add(double err, double at) {
    if (!(err <= ulp)) {
      ulp = err;
      x = at;
    }
  }
};

constexpr double kTrigRange32 = INFINITY, kTrigRange64 = 1e6;  // kFastMathTrigRange64, codegen/fast_math.h

// UlpError<float> against an f64 reference without long double arithmetic (the sweep evaluates it 2^32 times).
double UlpError32(float got, double ref) {
  float rounded = static_cast<float>(ref);
  if (std::isnan(ref) || std::isnan(got)) return std::isnan(ref) && std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(rounded) || std::isinf(got)) return rounded == got ? 0 : INFINITY;
  if (rounded == 0 && got == 0 && std::signbit(rounded) != std::signbit(got)) return INFINITY;
  static const std::vector<double> kUlp = [] {
    std::vector<double> u(256);
    for (int e = 0; e < 256; ++e) u[static_cast<size_t>(e)] = std::ldexp(1.0, std::max(e, 1) - 150);
    return u;
  }();
  uint32_t bits;
  std::memcpy(&bits, &rounded, 4);
  return std::fabs(static_cast<double>(got) - ref) / kUlp[(bits >> 23) & 0xff];
}

void SweepF32(const Fn& fn) {
  constexpr int64_t kChunk = int64_t{1} << 24;
  std::unique_ptr<codegen::JitExecutable> exe = Compile(fn.hlo, "f32", kChunk, false);
  if (!exe) return;
  std::vector<float> in(kChunk), out(kChunk);
  Worst all, in_range;
  auto start = std::chrono::steady_clock::now();
  for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kChunk) {
    for (int64_t i = 0; i < kChunk; ++i) {
      uint32_t bits = static_cast<uint32_t>(base + static_cast<uint64_t>(i));
      std::memcpy(&in[static_cast<size_t>(i)], &bits, 4);
    }
    if (!exe->RunBuffers({in.data()}, {out.data()}).ok()) return;
    // Two halves on two threads (the references dominate the time).
    Worst part_all[2], part_range[2];
    Ref64 ref = Ref64For(fn.hlo);
    auto check = [&](int half) {
      for (size_t i = half * in.size() / 2; i < (half + 1) * in.size() / 2; ++i) {
        double err = UlpError32(out[i], ref(in[i]));
        part_all[half].Add(err, in[i]);
        if (!fn.trig || std::fabs(in[i]) <= kTrigRange32) part_range[half].Add(err, in[i]);
      }
    };
    std::thread other(check, 1);
    check(0);
    other.join();
    for (int h = 0; h < 2; ++h) {
      all.Add(part_all[h].ulp, part_all[h].x);
      in_range.Add(part_range[h].ulp, part_range[h].x);
    }
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("f32 %-22s max %8.3f ulp at %-14.9g", fn.hlo, in_range.ulp, in_range.x);
  if (fn.trig) std::printf(" (|x| <= %g; all inputs: %.3g ulp at %g)", kTrigRange32, all.ulp, all.x);
  std::printf("  [2^32 inputs, %.0f s]\n", seconds);
  std::fflush(stdout);
}

void SweepF64(const Fn& fn) {
  std::vector<double> in;
  std::mt19937_64 rng(5);
  for (int i = 0; i < (1 << 23); ++i) {
    uint64_t bits = rng();
    double x;
    std::memcpy(&x, &bits, 8);
    in.push_back(x);
  }
  // Uniform grids where the functions are interesting, and every power-of-two binade from 2^-1074 to 2^1023.
  for (double scale : {1e-3, 1.0, 30.0, 750.0}) {
    std::uniform_real_distribution<double> u(-scale, scale);
    for (int i = 0; i < (1 << 21); ++i) in.push_back(u(rng));
  }
  std::uniform_real_distribution<double> mant(1.0, 2.0);
  for (int e = -1074; e <= 1023; ++e) {
    for (int i = 0; i < 256; ++i) in.push_back((i & 1 ? -1 : 1) * std::ldexp(mant(rng), e));
  }
  std::unique_ptr<codegen::JitExecutable> exe = Compile(fn.hlo, "f64", static_cast<int64_t>(in.size()), false);
  if (!exe) return;
  std::vector<double> out(in.size());
  if (!exe->RunBuffers({in.data()}, {out.data()}).ok()) return;
  Worst all, in_range;
  for (size_t i = 0; i < in.size(); ++i) {
    double err = UlpError<double>(out[i], fn.ref(in[i]));
    all.Add(err, in[i]);
    if (!fn.trig || std::fabs(in[i]) <= kTrigRange64) in_range.Add(err, in[i]);
  }
  std::printf("f64 %-22s max %8.3f ulp at %-24.17g", fn.hlo, in_range.ulp, in_range.x);
  if (fn.trig) std::printf(" (|x| <= %g; all inputs: %.3g ulp at %g)", kTrigRange64, all.ulp, all.x);
  std::printf("  [%zu inputs]\n", in.size());
  std::fflush(stdout);
}

// Fastest of `runs` runs of `exe` on `in`, in seconds.
double Fastest(codegen::JitExecutable& exe, const std::vector<float>& in, std::vector<float>& out, int runs) {
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (!exe.RunBuffers({in.data()}, {out.data()}).ok()) return -1;
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return best;
}

// 16M f32 elements through one function: default mode timed by the benchmark loop, exact mode best of 3. Run's
// argument and result copies are measured with negate (same shapes) and subtracted; counters: ns per element of the
// function alone in each mode, its speedup (exact / default), and the end-to-end speedup including the copies.
void BM_Math(benchmark::State& state, const char* op, float lo, float hi) {
  constexpr int64_t kN = int64_t{1} << 24;
  std::unique_ptr<codegen::JitExecutable> fast = Compile(op, "f32", kN, false);
  std::unique_ptr<codegen::JitExecutable> exact = Compile(op, "f32", kN, true);
  std::unique_ptr<codegen::JitExecutable> baseline = Compile("negate", "f32", kN, true);
  if (!fast || !exact || !baseline) {
    state.SkipWithError("compile failed");
    return;
  }
  std::vector<float> in(kN), out(kN);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(lo, hi);
  for (float& x : in) x = u(rng);
  double base_time = Fastest(*baseline, in, out, 3);
  double exact_time = Fastest(*exact, in, out, 3);
  double best = 1e30;
  for (auto _ : state) {
    double t = Fastest(*fast, in, out, 1);
    benchmark::DoNotOptimize(out.data());
    best = std::min(best, t);
  }
  double fast_kernel = std::max(best - base_time, 1e-9), exact_kernel = std::max(exact_time - base_time, 1e-9);
  state.counters["default_ns/elem"] = fast_kernel * 1e9 / kN;
  state.counters["exact_ns/elem"] = exact_kernel * 1e9 / kN;
  state.counters["speedup"] = exact_kernel / fast_kernel;
  state.counters["end_to_end_speedup"] = exact_time / best;
}

BENCHMARK_CAPTURE(BM_Math, exp, "exponential", -10.f, 10.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, tanh, "tanh", -5.f, 5.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, erf, "erf", -3.f, 3.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, log, "log", 0.f, 100.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, logistic, "logistic", -10.f, 10.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, sin, "sine", -100.f, 100.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, expm1, "exponential-minus-one", -5.f, 5.f)->Iterations(5)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Math, cbrt, "cbrt", -100.f, 100.f)->Iterations(5)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xlac

int main(int argc, char** argv) {
  std::string sweep;
  std::vector<std::string> only;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--sweep=")) {
      sweep = std::string(arg.substr(8));
    } else if (!sweep.empty()) {
      only.emplace_back(arg);
    }
  }
  if (sweep.empty()) {
    benchmark::Initialize(&argc, argv);
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  }
  if (sweep != "f32" && sweep != "f64") {
    std::fprintf(stderr, "--sweep takes f32 or f64\n");
    return 1;
  }
  for (const xlac::Fn& fn : xlac::Functions()) {
    if (!only.empty() && std::find(only.begin(), only.end(), fn.hlo) == only.end()) continue;
    if (sweep == "f32") {
      xlac::SweepF32(fn);
    } else {
      xlac::SweepF64(fn);
    }
  }
  return 0;
}
