// Evaluation of the test-harness `check.*` custom-calls that StableHLO tests use (see frontend/stablehlo/parser.h
// for how the frontend lowers them and ../shared/corpus/README.md for the semantics).
//
// This is deliberately independent of the interpreter: CheckCollector::Handle has the signature of
// InterpreterOptions::custom_call_handler, and compiled code will call the same functions from its runtime.
//
// Semantics (tolerances from backend_config; an empty backend_config means the `stablehlo.custom_call @check.*`
// defaults, a JSON object the `check` dialect's values):
//  - check.expect_eq: exact. Integers and pred compare bits; floats compare with `==` (NaN never matches, +0 == -0);
//    complex per component.
//  - check.expect_almost_eq: |got - want| <= tolerance in double (default 1e-3 for the custom-call form, the
//    dialect default 1e-4 is always in its backend_config); equal values and NaN/NaN match, other non-finite
//    values must be equal. Integers exact.
//  - check.expect_close: UlpDistance(got, want) in [min_ulp_difference, max_ulp_difference] (custom-call default
//    [0, 3]); integers exact. Complex: each component separately.
//  - check.eq (quantized tests): exact for integers, absolute 1e-4 for floats. Its result, when pred-shaped, is
//    whether it passed.
//  - check.expect_serialized_eq: compares against probe files the StableHLO interpreter wrote in an earlier run,
//    which do not exist here; it is recorded as skipped, never as passed.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace xlac::harness {

// ULP distance of two bit patterns of floating type `type` as StableHLO defines it: bitwise equal -> 0; NaN vs
// NaN -> 0; any other pair involving a non-finite value -> 2^64-1; same sign -> |bits(|a|) - bits(|b|)|; different
// signs -> bits(|a|) + bits(|b|) (so +0 vs -0 is 0).
uint64_t UlpDistance(uint64_t a, uint64_t b, PrimitiveType type);

enum class CheckStatus : uint8_t { kPassed, kFailed, kSkipped };

struct CheckMismatch {
  std::vector<int64_t> index;  // multi-dimensional, row-major
  int component = -1;          // complex: 0 real, 1 imaginary; -1 for non-complex elements
  std::string got;             // "0.118708 (0x3df31b3a)", "5", "true"
  std::string want;
  std::string why;  // "4 ulp", "differs by 0.0023", "not equal", ...
};

struct CheckResult {
  std::string target;       // "check.expect_close"
  std::string instruction;  // name of the custom-call, for checks without a source location
  SourceLoc loc;
  CheckStatus status = CheckStatus::kPassed;
  std::string tolerance;   // "max 3 ulp", "tolerance 0.001", "exact"
  int64_t elements = 0;    // elements compared
  int64_t mismatched = 0;  // elements with at least one differing component
  // A problem that made element comparison impossible (shape or type mismatch, bad backend_config); when set, the
  // check failed and `mismatches` is empty.
  std::string error;
  std::vector<CheckMismatch> mismatches;  // the first CheckOptions::max_mismatches, in row-major order
  bool passed() const { return status != CheckStatus::kFailed; }
};

struct CheckOptions {
  int max_mismatches = 5;
};

// True for the custom-call targets this library evaluates.
bool IsCheckTarget(std::string_view target);

// Compares `actual` against `expected` as check `target` with `backend_config`. Precondition: IsCheckTarget(target).
CheckResult EvaluateCheck(std::string_view target, std::string_view backend_config, const Literal& actual,
                          const Literal& expected, const CheckOptions& options = {});

// Collects the results of every check a run executes; safe to call from several device threads.
class CheckCollector {
 public:
  explicit CheckCollector(CheckOptions options = {}) : options_(options) {}

  // The body of a custom_call_handler: evaluates a check custom-call, records its result and returns the value the
  // custom-call produces (an empty tuple; pred for check.eq). Other targets return Unimplemented, which the
  // interpreter turns into "unsupported custom call target".
  absl::StatusOr<Literal> Handle(const Instruction& custom_call, const std::vector<const Literal*>& operands);

  // Every result so far, ordered by source location, then instruction name, then content, so that the order does
  // not depend on how device threads interleaved. A check executed several times (in a loop, on several devices)
  // appears once per execution.
  std::vector<CheckResult> Results() const;

 private:
  CheckOptions options_;
  mutable std::mutex mu_;
  std::vector<CheckResult> results_;
};

// The failure report of one check:
//   FILE:LINE:COL: error: check.expect_close failed: 3 of 400 elements differ (max 3 ulp)
//     at [2, 5]: got 0.118708 (0x3df31b3a) want 0.118709 (0x3df31b3c) — 4 ulp
// (`FILE: error: ...` without a known location). Empty for checks that did not fail.
std::string FormatCheckFailure(const CheckResult& result, std::string_view file_name);

// "N checks: P passed, F failed" plus ", S skipped" when some were skipped.
std::string FormatCheckSummary(const std::vector<CheckResult>& results);

}  // namespace xlac::harness
