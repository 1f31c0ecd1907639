// The default mode's relative rule (tools/lib/run_compare.h): results with only last-bit differences pass, results
// with real bugs (one element off by 1e-3, a dropped reduction term, a transposed output, a NaN) fail. The
// candidates are the interpreter's own f32 results, mutated, judged against the f64-reference module's results.
#include "tools/lib/run_compare.h"

#include <cmath>
#include <complex>
#include <cstring>
#include <memory>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

// Deep enough that the interpreter's f32 result carries rounding error the f64 reference does not: a dot of 64
// terms, tanh, exp and a 16-term reduction.
constexpr char kProgram[] = R"(HloModule deep
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[16,64] parameter(0)
  b = f32[64,16] parameter(1)
  d = f32[16,16] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[16,16] tanh(d)
  e = f32[16,16] exponential(t)
  zero = f32[] constant(0)
  r = f32[16] reduce(e, zero), dimensions={1}, to_apply=add
  ROOT out = (f32[16,16], f32[16]) tuple(e, r)
})";

float Ulps(float x, int ulps) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = static_cast<uint32_t>(static_cast<int64_t>(bits) + ulps);
  std::memcpy(&x, &bits, 4);
  return x;
}

class RelativeRuleTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kProgram);
    ASSERT_TRUE(module.ok()) << module.status();
    module_ = *std::move(module);
    args_.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {16, 64}), 1));
    args_.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {64, 16}), 2));
    absl::StatusOr<std::vector<Literal>> f32 = interp::Evaluate(*module_, {args_});
    ASSERT_TRUE(f32.ok()) << f32.status();
    absl::StatusOr<std::vector<Literal>> f64 = EvaluateF64Reference(*module_, args_, {});
    ASSERT_TRUE(f64.ok()) << f64.status();
    want_ = (*f32)[0].tuple_elements();
    ref_ = (*f64)[0].tuple_elements();
    ASSERT_EQ(ref_[0].shape().element_type, PrimitiveType::kF64);
  }

  std::unique_ptr<Module> module_;
  std::vector<Literal> args_, want_, ref_;
};

TEST_F(RelativeRuleTest, TheInterpreterItselfAndLastBitNoisePass) {
  RelativeError self = JudgeRelativeError(want_[0], want_[0], ref_[0]);
  EXPECT_TRUE(self.passed);
  EXPECT_DOUBLE_EQ(self.Ratio(), 1.0);
  // The reference is more precise than f32: the interpreter's own error is measurable, and small.
  EXPECT_GT(self.interpreter_l2, 1e-9);
  EXPECT_LT(self.interpreter_l2, 1e-6);
  // What the default mode does (approximations, reassociation): a few ulps here and there.
  for (int k = 0; k < 2; ++k) {
    Literal noisy = want_[k];
    for (int64_t i = 0; i < noisy.element_count(); ++i) noisy.Set<float>(i, Ulps(noisy.Get<float>(i), (i % 5) - 2));
    RelativeError e = JudgeRelativeError(noisy, want_[k], ref_[k]);
    EXPECT_TRUE(e.passed) << k << ": " << e.xlac_l2 << " vs " << e.interpreter_l2 << ", max " << e.xlac_max << " vs "
                          << e.interpreter_max;
    EXPECT_GT(e.Ratio(), 1.0);
  }
}

TEST_F(RelativeRuleTest, OneElementOffByOnePartInAThousandFails) {
  Literal bad = want_[0];
  bad.Set<float>(3 * 16 + 5, bad.Get<float>(3 * 16 + 5) * (1 + 1e-3f));
  RelativeError e = JudgeRelativeError(bad, want_[0], ref_[0]);
  EXPECT_FALSE(e.passed);
  ASSERT_FALSE(e.worst_elements.empty());
  EXPECT_EQ(e.worst_elements[0], 3 * 16 + 5);
}

TEST_F(RelativeRuleTest, ADroppedReductionTermFails) {
  Literal bad = want_[1];
  bad.Set<float>(9, bad.Get<float>(9) - want_[0].Get<float>(9 * 16 + 7));  // r[9] without e[9, 7]
  EXPECT_FALSE(JudgeRelativeError(bad, want_[1], ref_[1]).passed);
}

TEST_F(RelativeRuleTest, ATransposedOutputFails) {
  Literal transposed = want_[0];
  for (int64_t i = 0; i < 16; ++i) {
    for (int64_t j = 0; j < 16; ++j) transposed.Set<float>(i * 16 + j, want_[0].Get<float>(j * 16 + i));
  }
  EXPECT_FALSE(JudgeRelativeError(transposed, want_[0], ref_[0]).passed);
}

TEST_F(RelativeRuleTest, ANaNWhereTheInterpreterIsFiniteFails) {
  Literal bad = want_[1];
  bad.Set<float>(0, std::nanf(""));
  RelativeError e = JudgeRelativeError(bad, want_[1], ref_[1]);
  EXPECT_FALSE(e.passed);
  EXPECT_EQ(e.nonfinite_mismatches, 1);
  // NaN where the interpreter has NaN too is no error.
  EXPECT_TRUE(JudgeRelativeError(bad, bad, ref_[1]).passed);
}

TEST_F(RelativeRuleTest, CompareOutputsReportsTheRatioAndTheWorstElements) {
  Literal bad = want_[0];
  bad.Set<float>(3 * 16 + 5, bad.Get<float>(3 * 16 + 5) * (1 + 1e-3f));
  std::vector<LabeledOutput> want = {{"result_0", &want_[0]}, {"result_1", &want_[1]}};
  std::vector<LabeledOutput> ref = {{"result_0", &ref_[0]}, {"result_1", &ref_[1]}};
  CompareOptions options;
  options.default_mode_tolerance = true;
  options.reference64 = &ref;
  std::vector<std::pair<std::string, RelativeError>> relative;
  std::vector<harness::CheckResult> r =
      CompareOutputs({{"result_0", &bad}, {"result_1", &want_[1]}}, want, options, &relative);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_FALSE(r[0].passed());
  EXPECT_TRUE(r[1].passed());
  ASSERT_EQ(relative.size(), 2u);
  std::string report = FormatComparisonFailure(r[0], "m.hlo", "interpreter");
  EXPECT_TRUE(
      report.starts_with("m.hlo: error: result_0 differs from the interpreter: xlac's error against an f64 "
                         "reference is "))
      << report;
  EXPECT_NE(report.find("  at [3, 5]: got "), std::string::npos) << report;
  EXPECT_NE(FormatRelativeErrorSummary(relative).find("worst result_0: xlac's error is"), std::string::npos);

  // Without the reference the fixed per-element rule judges: a 1e-3 relative error is within 1024 eps only when
  // |want| < 1/8, so it fails here too, and bitwise equal outputs pass either way.
  options.reference64 = nullptr;
  relative.clear();
  r = CompareOutputs({{"result_0", &bad}, {"result_1", &want_[1]}}, want, options, &relative);
  EXPECT_FALSE(r[0].passed());
  EXPECT_TRUE(r[1].passed());
  EXPECT_TRUE(relative.empty());
}

TEST(F64ReferenceTest, ComplexOutputsAreJudgedPartByPart) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[8] parameter(0)
  x = f32[8] exponential(a)
  t = f32[8] tanh(a)
  ROOT c = c64[8] complex(x, t)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args;
  args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {8}), 3));
  absl::StatusOr<std::vector<Literal>> f32 = interp::Evaluate(**module, {args});
  absl::StatusOr<std::vector<Literal>> f64 = EvaluateF64Reference(**module, args, {});
  ASSERT_TRUE(f32.ok() && f64.ok());
  const Literal& want = (*f32)[0];
  ASSERT_EQ((*f64)[0].shape().element_type, PrimitiveType::kC128);
  Literal bad = want;
  using C = std::complex<float>;
  C v = bad.Get<C>(2);
  bad.Set<C>(2, C(v.real(), v.imag() * (1 + 1e-3f)));
  std::vector<LabeledOutput> ref = {{"result_0", &(*f64)[0]}};
  CompareOptions options;
  options.default_mode_tolerance = true;
  options.reference64 = &ref;
  std::vector<harness::CheckResult> r = CompareOutputs({{"result_0", &bad}}, {{"result_0", &want}}, options);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].passed());
  ASSERT_FALSE(r[0].mismatches.empty());
  EXPECT_EQ(r[0].mismatches[0].index, std::vector<int64_t>{2});
  EXPECT_EQ(r[0].mismatches[0].component, 1);  // the imaginary part
  EXPECT_TRUE(CompareOutputs({{"result_0", &want}}, {{"result_0", &want}}, options)[0].passed());
}

TEST(F64ReferenceTest, TheReferenceKeepsWhatF32Loses) {
  // 1e8 + 1 - 1e8 is 0 in f32 and 1 in f64; the f64 result is returned, not rounded back to f32.
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  x = f32[] parameter(0)
  one = f32[] constant(1)
  s = f32[] add(x, one)
  ROOT d = f32[] subtract(s, x)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  Literal x(Shape::Scalar(PrimitiveType::kF32));
  x.Set<float>(0, 1e8f);
  absl::StatusOr<std::vector<Literal>> f32 = interp::Evaluate(**module, {{x}});
  absl::StatusOr<std::vector<Literal>> f64 = EvaluateF64Reference(**module, {x}, {});
  ASSERT_TRUE(f32.ok() && f64.ok());
  EXPECT_EQ((*f32)[0].Get<float>(0), 0.0f);
  ASSERT_EQ((*f64)[0].shape().element_type, PrimitiveType::kF64);
  EXPECT_EQ((*f64)[0].Get<double>(0), 1.0);
  // An xlac result of 0 is exactly as wrong as the interpreter's: it passes; 2 is twice as far off yet within 8x.
  Literal two = (*f32)[0];
  two.Set<float>(0, 2.0f);
  EXPECT_TRUE(JudgeRelativeError((*f32)[0], (*f32)[0], (*f64)[0]).passed);
  EXPECT_DOUBLE_EQ(JudgeRelativeError(two, (*f32)[0], (*f64)[0]).Ratio(), 1.0);
}

// The f32 reference widens only what is narrower than f32: a bf16 output is judged against it, an f32 output keeps
// the fixed rule (the reference computes it as the interpreter does). A promoted value above the interpreter's limit
// refuses the reference before it runs.
TEST(F32ReferenceTest, JudgesOnlyOutputsNarrowerThanF32) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = bf16[64] parameter(0)
  x = bf16[64] exponential(a)
  t = bf16[64] tanh(x)
  f = f32[64] convert(t)
  ROOT out = (bf16[64], f32[64]) tuple(t, f)
})");
  ASSERT_TRUE(module.ok()) << module.status();
  const Shape& result = (*module)->entry_computation()->root()->shape();
  EXPECT_TRUE(JudgedByRelativeRule(result, PrimitiveType::kF32));
  EXPECT_FALSE(JudgedOutputsNarrowerThanF32(result));  // the f32 output
  EXPECT_TRUE(JudgedOutputsNarrowerThanF32(result.tuple_shapes[0]));
  EXPECT_FALSE(JudgedByRelativeRule(result.tuple_shapes[1], PrimitiveType::kF32));
  std::vector<Literal> args;
  args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kBF16, {64}), 5));

  // The promoted module's largest value is its result tuple: 2 x 64 x 8 bytes in f64, 2 x 64 x 4 in f32.
  ReferenceOptions options;
  options.max_result_bytes = 600;
  absl::StatusOr<std::vector<Literal>> f64 = EvaluateReference(**module, args, options);
  ASSERT_FALSE(f64.ok());
  EXPECT_EQ(f64.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(f64.status().message().find(
                "its value out ((f64[64], f64[64]), 1 KiB) is larger than the interpreter's limit of 600 B per value"),
            std::string::npos)
      << f64.status();
  options.type = PrimitiveType::kF32;
  absl::StatusOr<std::vector<Literal>> f32 = EvaluateReference(**module, args, options);
  ASSERT_TRUE(f32.ok()) << f32.status();
  const std::vector<Literal>& ref = (*f32)[0].tuple_elements();
  ASSERT_EQ(ref[0].shape().element_type, PrimitiveType::kF32);

  absl::StatusOr<std::vector<Literal>> interpreted = interp::Evaluate(**module, {args});
  ASSERT_TRUE(interpreted.ok());
  const std::vector<Literal>& want = (*interpreted)[0].tuple_elements();
  std::vector<LabeledOutput> want_outputs = {{"result_0", &want[0]}, {"result_1", &want[1]}};
  std::vector<LabeledOutput> ref_outputs = {{"result_0", &ref[0]}, {"result_1", &ref[1]}};
  CompareOptions compare;
  compare.default_mode_tolerance = true;
  compare.reference64 = &ref_outputs;
  // One bf16 ulp off in every element of both outputs: the bf16 one within the relative rule, the f32 one (a bf16
  // ulp is 65536 f32 ulps) outside the fixed rule.
  Literal bf16_noisy = want[0], f32_noisy = want[1];
  for (int64_t i = 0; i < 64; ++i) {
    const double v = want[0].GetAsDouble(i);
    bf16_noisy.SetFromDouble(i, v + (i % 2 ? 1 : -1) * std::ldexp(std::fabs(v), -8));
    f32_noisy.SetFromDouble(i, bf16_noisy.GetAsDouble(i));
  }
  std::vector<std::pair<std::string, RelativeError>> relative;
  std::vector<harness::CheckResult> r =
      CompareOutputs({{"result_0", &bf16_noisy}, {"result_1", &f32_noisy}}, want_outputs, compare, &relative);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].passed()) << FormatComparisonFailure(r[0], "m.hlo", "interpreter");
  EXPECT_FALSE(r[1].passed());
  EXPECT_NE(FormatComparisonFailure(r[1], "m.hlo", "interpreter").find("the fixed rule"), std::string::npos);
  ASSERT_EQ(relative.size(), 1u);
  EXPECT_EQ(relative[0].first, "result_0");
  EXPECT_EQ(relative[0].second.reference, PrimitiveType::kF32);
  EXPECT_TRUE(FormatRelativeErrorSummary(relative).starts_with(
      "default-mode error against an f32 reference: worst result_0: xlac's error is "))
      << FormatRelativeErrorSummary(relative);
}

}  // namespace
}  // namespace xlac

namespace xlac {
namespace {

// The fixed rule (docs/numerics.md): f32 within 16 ULP or 1024 eps; types narrower than f32 also within one epsilon
// of their own type, times max(1, |want|).
TEST(FixedRuleTest, NarrowTypesGetTheirOwnEpsilon) {
  EXPECT_EQ(TypeEpsilon(PrimitiveType::kBF16), 0x1p-7);
  EXPECT_EQ(TypeEpsilon(PrimitiveType::kF16), 0x1p-10);
  EXPECT_EQ(TypeEpsilon(PrimitiveType::kF32), 0x1p-23);
  auto within = [](PrimitiveType type, double got, double want) {
    Literal a(Shape::Scalar(type)), b(Shape::Scalar(type));
    a.SetFromDouble(0, got);
    b.SetFromDouble(0, want);
    return ElementWithinDefaultTolerance(type, a.raw_data(), b.raw_data());
  };
  // DistilBERT's (development set) worst: 19 bf16 ULP, 4.6e-3 apart near 0.04.
  EXPECT_TRUE(within(PrimitiveType::kBF16, -0.039795, -0.035156));
  EXPECT_TRUE(within(PrimitiveType::kBF16, 100.0, 100.5));   // relative above 1
  EXPECT_FALSE(within(PrimitiveType::kBF16, 0.05, 0.0625));  // 0.0125 apart: more than 2^-7
  EXPECT_FALSE(within(PrimitiveType::kBF16, 90.0, 100.0));   // 20 ULP and 10%
  EXPECT_TRUE(within(PrimitiveType::kF16, 0.5005, 0.5));
  EXPECT_FALSE(within(PrimitiveType::kF16, 0.51, 0.5));  // 20 ULP and 0.01
  // f32 keeps the tight rule: 1e-3 apart near 0.5 is far outside it.
  EXPECT_FALSE(within(PrimitiveType::kF32, 0.501, 0.5));
  EXPECT_TRUE(within(PrimitiveType::kF32, 0.5 + 1e-5, 0.5));
}

}  // namespace
}  // namespace xlac
