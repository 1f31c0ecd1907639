// Differential checking for xla-run --check-against: compares the outputs of one backend against another's
// (the JIT against the reference interpreter) leaf by leaf, and formats mismatches like check.* failures.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "runtime/harness/checks.h"
#include "runtime/interpreter/interpreter.h"
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
  // The JIT ran in the default numerics mode: a floating-point output that fails the tests above is judged by the
  // default mode's rule (docs/numerics.md, "Differential tolerance"): against `reference64` when given (the relative
  // rule, JudgeRelativeError), else element by element (ElementWithinDefaultTolerance, the fixed rule).
  bool default_mode_tolerance = false;
  // The outputs of the reference (passes/f64_reference.h run by the interpreter, EvaluateReference), by position: the
  // f64 reference's f64 or c128 arrays, or the f32 reference's f32 arrays (for outputs narrower than f32), of the
  // outputs' dimensions. Outputs the reference does not widen (f64 and c128 ones; f32 and c64 ones against the f32
  // reference) gain nothing from it and keep the fixed rule.
  const std::vector<LabeledOutput>* reference64 = nullptr;
};

// The relative rule's constants (docs/numerics.md gives the measurements behind them): xlac's error against the f64
// reference may be kRelativeErrorFactor times the interpreter's own, plus kRelativeErrorFloorUlps machine epsilons
// of the output's type relative to the reference's norm (or largest element, for the max-abs error), plus the type's
// smallest normal number: an output the interpreter computes exactly still allows the default mode's last-bit
// differences.
inline constexpr double kRelativeErrorFactor = 8;
inline constexpr double kRelativeErrorFloorUlps = 2;

// One output judged by the relative rule. Norms run over the real and imaginary parts of the elements that are
// finite in all three results: relative L2 is ||x - ref64||_2 / ||ref64||_2; max-abs is max |x - ref64|.
struct RelativeError {
  PrimitiveType reference = PrimitiveType::kF64;  // the reference's (component) type: f64 or f32
  double xlac_l2 = 0, interpreter_l2 = 0;         // relative L2 errors of the candidate and of the interpreter
  double xlac_max = 0, interpreter_max = 0;       // max-abs errors
  double allowed_l2 = 0, allowed_max = 0;         // factor x the interpreter's error + floor
  // A non-finite element (NaN, +-inf) in one of the candidate and the interpreter where the other has a different
  // value: a failure whatever the norms say. Elements non-finite only in the reference (f64 does not overflow
  // where f32 does) are compared with the fixed rule instead, counted in `fixed_rule_elements`.
  int64_t nonfinite_mismatches = 0;
  int64_t fixed_rule_elements = 0, fixed_rule_failures = 0;
  // Elements whose own error exceeds the allowance (reported, worst first; the verdict is on the norms).
  std::vector<int64_t> worst_elements;  // linear part indices (complex: 2 per element)
  bool passed = false;
  double Ratio() const;  // xlac_l2 / interpreter_l2, for the report (0/0 = 1)
};

// The relative rule for one real or complex floating-point output: `got` (the candidate) and `want` (the
// interpreter) in the output's declared type, `reference64` in a wider type (f64/c128, or f32 for an output narrower
// than f32), read as double. Precondition: equal element counts.
RelativeError JudgeRelativeError(const Literal& got, const Literal& want, const Literal& reference64,
                                 int max_worst = 5);

// The default mode's differential tolerance for one element of real floating type `type` (raw bytes): bitwise
// equal, both NaN, within 16 ULP, or |got - want| <= 1024 eps * max(1, |want|) with eps the machine epsilon of the
// compute type (f64: 2^-52; every narrower type computes in f32: 2^-23). test/unit/codegen_test_util.h has the same
// rule for the unit tests.
bool ElementWithinDefaultTolerance(PrimitiveType type, const uint8_t* got, const uint8_t* want);
// The distance from 1 to the next value of a floating-point type (bf16 2^-7, f16 2^-10, f32 2^-23).
double TypeEpsilon(PrimitiveType type);

// One result per output of `want` (by position); a result has `instruction` set to the output's label. Outputs
// whose count, shape or element type differ fail with `error` set. Non-array leaves (tokens) always pass.
// `relative`, when given, receives the relative rule's measurements of every output it judged (with its label).
std::vector<harness::CheckResult> CompareOutputs(
    const std::vector<LabeledOutput>& got, const std::vector<LabeledOutput>& want, const CompareOptions& options,
    std::vector<std::pair<std::string, RelativeError>>* relative = nullptr);

// One line on the relative rule's outcome, naming the output with the largest ratio and the reference's type:
//   "default-mode error against an f64 reference: worst result_3: xlac's error is 1.3x what the interpreter's own
//    f32 makes (relative L2 2.1e-06 vs 1.6e-06, max-abs 3.8e-06 vs 2.4e-06; 12 outputs judged)"
// Empty when nothing was judged.
std::string FormatRelativeErrorSummary(const std::vector<std::pair<std::string, RelativeError>>& relative);

// Whether a result of this shape has an output the relative rule judges against a reference computed in `reference`
// (f64: a real or complex float narrower than f64; f32: a real float narrower than f32): without one the reference
// would only cost time.
bool JudgedByRelativeRule(const Shape& result, PrimitiveType reference = PrimitiveType::kF64);
// Whether every output of this shape the relative rule judges against the f64 reference is narrower than f32 (and
// there is one): the f32 reference then judges the same outputs.
bool JudgedOutputsNarrowerThanF32(const Shape& result);

struct ReferenceOptions {
  uint64_t seed = 42;  // the seed of the run (rng ops, elided constants)
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  int64_t threads = 0;
  // C++ elementwise kernels (InterpreterOptions::elementwise_kernels): their calls keep their declared types.
  const interp::ElementwiseKernels* elementwise_kernels = nullptr;
  PrimitiveType type = PrimitiveType::kF64;  // what the reference computes in: kF64 or kF32
  // The interpreter's largest value (InterpreterOptions::max_result_bytes): a promoted module with a larger value in
  // its entry fails before it runs, instead of at that value.
  int64_t max_result_bytes = interp::InterpreterOptions{}.max_result_bytes;
};
using F64ReferenceOptions = ReferenceOptions;

// The reference of the default mode's check: `module` promoted to options.type by the f64-reference pass
// (PromoteFloats) and evaluated by the interpreter on `arguments` (the module's own argument types). check.*
// custom-calls evaluate and are ignored. An error (an op the promotion or the interpreter does not support in the
// wider type, a promoted value above the interpreter's limit) means no reference of that type.
absl::StatusOr<std::vector<Literal>> EvaluateReference(const Module& module, const std::vector<Literal>& arguments,
                                                       const ReferenceOptions& options);
// The same with one argument list per device (the interpreter's Evaluate): a partitioned program run device by device
// (a module with manual regions), or global arguments handed over without the copy the overload above makes. One
// result per device, in the promoted types (passes/f64_reference.h, ReferenceShape).
absl::StatusOr<std::vector<Literal>> EvaluateReference(const Module& module,
                                                       const std::vector<std::vector<Literal>>& device_arguments,
                                                       const ReferenceOptions& options);
// EvaluateReference under its former name (options.type is f64 unless set).
absl::StatusOr<std::vector<Literal>> EvaluateF64Reference(const Module& module, const std::vector<Literal>& arguments,
                                                          const ReferenceOptions& options);

// The report of one failed comparison, in the style of harness::FormatCheckFailure:
//   FILE: error: result_0 differs from the interpreter: 2 of 6 elements differ (max 0 ulp)
//     at [1]: got 0.5 (0x3f000000) want 0.500001 (0x3f000008) — 8 ulp
// `reference` names the backend compared against. Empty for passing results.
std::string FormatComparisonFailure(const harness::CheckResult& result, std::string_view file_name,
                                    std::string_view reference);

}  // namespace xlac
