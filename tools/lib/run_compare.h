// Differential checking for xla-run --check-against: compares the outputs of one backend against another's
// (the JIT against the reference interpreter) leaf by leaf, and formats mismatches like check.* failures.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/harness/checks.h"
#include "tools/lib/run_driver.h"

namespace xlac {

struct CompareOptions {
  // Floating-point elements may differ by at most this many ULPs (harness::UlpDistance: NaN matches NaN and +0
  // matches -0). Codegen aims for bit-exact agreement with the interpreter, hence the default of 0. Integers and
  // pred always compare exactly.
  uint64_t max_ulp = 0;
  // When > 0, a real floating-point output that fails the ULP test still matches if every element is within
  // atol * max(1, |want|) of the reference (NaN matching NaN): for reductions an SPMD program reassociates, whose
  // error is relative to the summands rather than to a result near zero.
  double atol = 0;
  int max_mismatches = 5;  // mismatching elements listed per output
  // The JIT ran in the default numerics mode: a floating-point output that fails the tests above still matches if
  // every element passes ElementWithinDefaultTolerance (docs/numerics.md).
  bool default_mode_tolerance = false;
};

// The default mode's differential tolerance for one element of real floating type `type` (raw bytes): bitwise
// equal, both NaN, within 16 ULP, or |got - want| <= 1024 eps * max(1, |want|) with eps the machine epsilon of the
// compute type (f64: 2^-52; every narrower type computes in f32: 2^-23). test/unit/codegen_test_util.h has the same
// rule for the unit tests.
bool ElementWithinDefaultTolerance(PrimitiveType type, const uint8_t* got, const uint8_t* want);

// One result per output of `want` (by position); a result has `instruction` set to the output's label. Outputs
// whose count, shape or element type differ fail with `error` set. Non-array leaves (tokens) always pass.
std::vector<harness::CheckResult> CompareOutputs(const std::vector<LabeledOutput>& got,
                                                 const std::vector<LabeledOutput>& want, const CompareOptions& options);

// The report of one failed comparison, in the style of harness::FormatCheckFailure:
//   FILE: error: result_0 differs from the interpreter: 2 of 6 elements differ (max 0 ulp)
//     at [1]: got 0.5 (0x3f000000) want 0.500001 (0x3f000008) — 8 ulp
// `reference` names the backend compared against. Empty for passing results.
std::string FormatComparisonFailure(const harness::CheckResult& result, std::string_view file_name,
                                    std::string_view reference);

}  // namespace xlac
