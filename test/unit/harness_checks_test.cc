// check.* evaluation (runtime/harness/checks.h): ULP distance, each check's tolerance and defaults, the report.
#include <bit>
#include <cmath>
#include <complex>
#include <limits>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/float_types.h"
#include "runtime/harness/checks.h"

namespace xlac::harness {
namespace {

uint64_t F32(float f) { return std::bit_cast<uint32_t>(f); }

Literal F32s(std::vector<int64_t> dims, const std::vector<float>& values) {
  Literal lit(Shape::Array(PrimitiveType::kF32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.Set<float>(static_cast<int64_t>(i), values[i]);
  return lit;
}

float Next(float f, int ulps) {
  for (int i = 0; i < ulps; ++i) f = std::nextafter(f, std::numeric_limits<float>::infinity());
  return f;
}

TEST(UlpDistance, StableHloDefinition) {
  const auto f32 = PrimitiveType::kF32;
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(UlpDistance(F32(1.0f), F32(1.0f), f32), 0u);
  EXPECT_EQ(UlpDistance(F32(1.0f), F32(Next(1.0f, 1)), f32), 1u);
  EXPECT_EQ(UlpDistance(F32(Next(1.0f, 7)), F32(1.0f), f32), 7u);
  EXPECT_EQ(UlpDistance(F32(0.0f), F32(-0.0f), f32), 0u);      // +0 vs -0: both magnitudes are 0
  EXPECT_EQ(UlpDistance(F32(1e-45f), F32(-1e-45f), f32), 2u);  // across zero: sum of magnitudes
  EXPECT_EQ(UlpDistance(F32(-1e-45f), F32(0.0f), f32), 1u);
  EXPECT_EQ(UlpDistance(F32(nan), F32(-nan), f32), 0u);  // any NaN matches any NaN
  EXPECT_EQ(UlpDistance(F32(nan), F32(1.0f), f32), ~uint64_t{0});
  EXPECT_EQ(UlpDistance(F32(inf), F32(inf), f32), 0u);
  EXPECT_EQ(UlpDistance(F32(inf), F32(-inf), f32), ~uint64_t{0});
  EXPECT_EQ(UlpDistance(F32(inf), F32(std::numeric_limits<float>::max()), f32), ~uint64_t{0});
  // bf16 ulps are bf16 ulps: 1.0 = 0x3f80, next = 0x3f81.
  EXPECT_EQ(UlpDistance(0x3f80, 0x3f83, PrimitiveType::kBF16), 3u);
  EXPECT_EQ(UlpDistance(0x0001, 0x8001, PrimitiveType::kF16), 2u);
}

TEST(EvaluateCheck, ExpectCloseDefaultsToThreeUlpInCustomCallForm) {
  Literal want = F32s({3}, {1.0f, 2.0f, -0.5f});
  EXPECT_TRUE(EvaluateCheck("check.expect_close", "", F32s({3}, {Next(1.0f, 3), 2.0f, -0.5f}), want).passed());
  CheckResult r = EvaluateCheck("check.expect_close", "", F32s({3}, {Next(1.0f, 4), 2.0f, -0.5f}), want);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mismatched, 1);
  EXPECT_EQ(r.elements, 3);
  EXPECT_EQ(r.tolerance, "allowed 3 ulp");
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].why, "4 ulp");
  EXPECT_EQ(r.mismatches[0].index, std::vector<int64_t>{0});
  // The check dialect's form carries its own bounds (default 1, 0).
  const std::string dialect = R"({"max_ulp_difference":1,"min_ulp_difference":0})";
  EXPECT_FALSE(EvaluateCheck("check.expect_close", dialect, F32s({3}, {Next(1.0f, 2), 2.0f, -0.5f}), want).passed());
  EXPECT_TRUE(EvaluateCheck("check.expect_close", dialect, F32s({3}, {Next(1.0f, 1), 2.0f, -0.5f}), want).passed());
}

TEST(EvaluateCheck, ExpectCloseMinimumAndHugeBounds) {
  const std::string exactly_five = R"({"max_ulp_difference":5,"min_ulp_difference":5})";
  EXPECT_TRUE(
      EvaluateCheck("check.expect_close", exactly_five, F32s({1}, {Next(2.0f, 5)}), F32s({1}, {2.0f})).passed());
  CheckResult r = EvaluateCheck("check.expect_close", exactly_five, F32s({1}, {Next(2.0f, 4)}), F32s({1}, {2.0f}));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mismatches[0].why, "4 ulp < min 5");
  EXPECT_EQ(r.tolerance, "allowed 5 to 5 ulp");
  // 2^64-1 ulp (StableHLO's ulp_difference test): exactly the non-finite mismatches.
  const std::string all = R"({"max_ulp_difference":18446744073709551615,"min_ulp_difference":18446744073709551615})";
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(EvaluateCheck("check.expect_close", all, F32s({3}, {inf, inf, inf}),
                            F32s({3}, {-inf, std::numeric_limits<float>::quiet_NaN(), 1.2f}))
                  .passed());
  CheckResult nonfinite = EvaluateCheck("check.expect_close", "", F32s({1}, {inf}), F32s({1}, {3e38f}));
  EXPECT_FALSE(nonfinite.passed());
  EXPECT_EQ(nonfinite.mismatches[0].why, "non-finite mismatch");
}

TEST(EvaluateCheck, AlmostEqTolerances) {
  Literal want = F32s({2}, {1.0f, 100.0f});
  // Custom-call form: absolute 1e-3; dialect form: whatever backend_config says (the frontend writes 1e-4).
  EXPECT_TRUE(EvaluateCheck("check.expect_almost_eq", "", F32s({2}, {1.0009f, 100.0f}), want).passed());
  EXPECT_FALSE(EvaluateCheck("check.expect_almost_eq", "", F32s({2}, {1.0011f, 100.0f}), want).passed());
  EXPECT_FALSE(
      EvaluateCheck("check.expect_almost_eq", R"({"tolerance":1e-4})", F32s({2}, {1.0009f, 100.0f}), want).passed());
  CheckResult r = EvaluateCheck("check.expect_almost_eq", R"({"tolerance":0.5})", F32s({2}, {1.0f, 101.0f}), want);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.tolerance, "tolerance 0.5");
  EXPECT_EQ(r.mismatches[0].why, "differs by 1");
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(EvaluateCheck("check.expect_almost_eq", "", F32s({2}, {nan, inf}), F32s({2}, {nan, inf})).passed());
  EXPECT_FALSE(EvaluateCheck("check.expect_almost_eq", "", F32s({1}, {inf}), F32s({1}, {-inf})).passed());
  // check.eq (quantized tests): 1e-4 whatever the config.
  EXPECT_FALSE(EvaluateCheck("check.eq", "", F32s({1}, {1.0002f}), F32s({1}, {1.0f})).passed());
  EXPECT_TRUE(EvaluateCheck("check.eq", "", F32s({1}, {1.00005f}), F32s({1}, {1.0f})).passed());
}

TEST(EvaluateCheck, ExpectEqIsExact) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(EvaluateCheck("check.expect_eq", "", F32s({1}, {0.0f}), F32s({1}, {-0.0f})).passed());
  EXPECT_FALSE(EvaluateCheck("check.expect_eq", "", F32s({1}, {nan}), F32s({1}, {nan})).passed());
  EXPECT_FALSE(EvaluateCheck("check.expect_eq", "", F32s({1}, {Next(1.0f, 1)}), F32s({1}, {1.0f})).passed());
  Literal a(Shape::Array(PrimitiveType::kS32, {2, 2})), b(Shape::Array(PrimitiveType::kS32, {2, 2}));
  for (int i = 0; i < 4; ++i) {
    a.Set<int32_t>(i, i);
    b.Set<int32_t>(i, i == 3 ? -7 : i);
  }
  CheckResult r = EvaluateCheck("check.expect_eq", "", a, b);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.tolerance, "exact");
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].index, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(r.mismatches[0].got, "3");
  EXPECT_EQ(r.mismatches[0].want, "-7");
  // Integers are exact under every check.
  EXPECT_FALSE(EvaluateCheck("check.expect_close", "", a, b).passed());
  EXPECT_FALSE(EvaluateCheck("check.expect_almost_eq", "", a, b).passed());
}

TEST(EvaluateCheck, ComplexComparesEachComponent) {
  using c64 = std::complex<float>;
  Literal a(Shape::Array(PrimitiveType::kC64, {2})), b(Shape::Array(PrimitiveType::kC64, {2}));
  a.Set<c64>(0, {1.0f, 2.0f});
  b.Set<c64>(0, {1.0f, 2.0f});
  a.Set<c64>(1, {Next(3.0f, 2), Next(4.0f, 9)});
  b.Set<c64>(1, {3.0f, 4.0f});
  CheckResult r = EvaluateCheck("check.expect_close", "", a, b);
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.mismatched, 1);
  ASSERT_EQ(r.mismatches.size(), 1u);
  EXPECT_EQ(r.mismatches[0].component, 1);
  EXPECT_EQ(r.mismatches[0].why, "9 ulp");
  a.Set<c64>(1, {Next(3.0f, 2), Next(4.0f, 3)});
  EXPECT_TRUE(EvaluateCheck("check.expect_close", "", a, b).passed());
}

TEST(EvaluateCheck, ShapeMismatchAndMismatchLimit) {
  CheckResult r = EvaluateCheck("check.expect_eq", "", F32s({2}, {1, 2}), F32s({3}, {1, 2, 3}));
  EXPECT_FALSE(r.passed());
  EXPECT_EQ(r.error, "shape mismatch: got f32[2] want f32[3]");
  std::vector<float> zeros(10, 0.0f), ones(10, 1.0f);
  CheckResult many = EvaluateCheck("check.expect_eq", "", F32s({10}, zeros), F32s({10}, ones), CheckOptions{3});
  EXPECT_EQ(many.mismatched, 10);
  EXPECT_EQ(many.mismatches.size(), 3u);
  EXPECT_EQ(many.mismatches[2].index, std::vector<int64_t>{2});
  EXPECT_EQ(EvaluateCheck("check.expect_serialized_eq", "", F32s({1}, {0}), F32s({1}, {0})).status,
            CheckStatus::kSkipped);
}

TEST(FormatCheck, ReportLayout) {
  Literal want = F32s({2, 3}, {0, 0, 0, 0, 0, std::bit_cast<float>(0x3df31b3cu)});
  Literal got = F32s({2, 3}, {0, 0, 0, 0, 0, std::bit_cast<float>(0x3df31b38u)});
  CheckResult r = EvaluateCheck("check.expect_close", "", got, want);
  r.loc = SourceLoc{12, 5};
  EXPECT_EQ(FormatCheckFailure(r, "t.mlir"),
            "t.mlir:12:5: error: check.expect_close failed: 1 of 6 elements differs (allowed 3 ulp)\n"
            "  at [1, 2]: got 0.11870426 (0x3df31b38) want 0.11870429 (0x3df31b3c) \u2014 4 ulp\n");
  CheckResult no_loc = EvaluateCheck("check.expect_eq", "", F32s({1}, {1}), F32s({1}, {2}));
  no_loc.instruction = "custom-call.3";
  EXPECT_EQ(FormatCheckFailure(no_loc, "t.hlo"),
            "t.hlo: error: check.expect_eq failed (custom-call.3): 1 of 1 element differs (exact)\n"
            "  at [0]: got 1 (0x3f800000) want 2 (0x40000000) \u2014 not equal\n");
  EXPECT_EQ(FormatCheckFailure(EvaluateCheck("check.expect_eq", "", F32s({1}, {1}), F32s({1}, {1})), "t"), "");
  std::vector<CheckResult> all = {r, no_loc, EvaluateCheck("check.expect_eq", "", F32s({1}, {1}), F32s({1}, {1}))};
  EXPECT_EQ(FormatCheckSummary(all), "3 checks: 1 passed, 2 failed\n");
  all.push_back(EvaluateCheck("check.expect_serialized_eq", "", F32s({1}, {1}), F32s({1}, {1})));
  EXPECT_EQ(FormatCheckSummary(all), "4 checks: 1 passed, 2 failed, 1 skipped\n");
}

TEST(CheckCollector, HandlesCheckCustomCalls) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(HloModule m
ENTRY e {
  a = f32[2] constant({1, 2})
  ROOT c = () custom-call(a, a), custom_call_target="check.expect_eq", custom_call_has_side_effect=true
  p = pred[] custom-call(a, a), custom_call_target="check.eq", custom_call_has_side_effect=true
  o = f32[2] custom-call(a), custom_call_target="something.else"
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  const Computation* entry = (*module)->entry_computation();
  CheckCollector collector;
  Literal x = F32s({2}, {1, 2}), y = F32s({2}, {1, 5});
  absl::StatusOr<Literal> unit = collector.Handle(*entry->FindInstruction("c"), {&x, &y});
  ASSERT_TRUE(unit.ok());
  EXPECT_TRUE(unit->is_tuple());
  absl::StatusOr<Literal> pred = collector.Handle(*entry->FindInstruction("p"), {&x, &x});
  ASSERT_TRUE(pred.ok());
  EXPECT_EQ(pred->raw_data()[0], 1);
  absl::StatusOr<Literal> other = collector.Handle(*entry->FindInstruction("o"), {&x});
  EXPECT_EQ(other.status().code(), absl::StatusCode::kUnimplemented);
  std::vector<CheckResult> results = collector.Results();
  ASSERT_EQ(results.size(), 2u);
  // Ordered by source location: c (line 4) before p (line 5).
  EXPECT_EQ(results[0].instruction, "c");
  EXPECT_EQ(results[0].loc.line, 4);
  EXPECT_FALSE(results[0].passed());
  EXPECT_TRUE(results[1].passed());
  absl::StatusOr<Literal> wrong_arity = collector.Handle(*entry->FindInstruction("c"), {&x});
  ASSERT_TRUE(wrong_arity.ok());
  results = collector.Results();
  ASSERT_EQ(results.size(), 3u);
  // Same location and instruction: ordered by content, so the arity failure (no mismatched elements) comes first.
  EXPECT_EQ(results[0].error, "expected 2 operands, got 1");
  EXPECT_EQ(results[1].mismatched, 1);
}

}  // namespace
}  // namespace xlac::harness
