#include "tools/lib/run_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>

#include "fmt/format.h"
#include "passes/f64_reference.h"
#include "passes/tpu_memory.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

constexpr std::string_view kCompareTarget = "check.expect_close";
// Followed by "f64 reference" or "f32 reference".
constexpr std::string_view kRelativeVerdict = "xlac's error against an ";

std::string IndexString(const std::vector<int64_t>& index) {
  std::string out = "[";
  for (size_t i = 0; i < index.size(); ++i) out += (i ? ", " : "") + std::to_string(index[i]);
  return out + "]";
}

// Every element of two real floating-point arrays within atol * max(1, |want|), NaN matching NaN.
bool WithinMixedTolerance(const Literal& got, const Literal& want, double atol) {
  if (got.element_count() != want.element_count()) return false;
  for (int64_t i = 0; i < got.element_count(); ++i) {
    double a = got.GetAsDouble(i), b = want.GetAsDouble(i);
    if (std::isnan(a) || std::isnan(b)) {
      if (std::isnan(a) != std::isnan(b)) return false;
      continue;
    }
    if (a == b) continue;
    if (!(std::fabs(a - b) <= atol * std::max(1.0, std::fabs(b)))) return false;
  }
  return true;
}

// Every element of two floating-point (or complex, part by part) arrays within the default mode's tolerance.
// The linear part indices (complex: real and imaginary interleaved) of the elements outside the fixed rule, at most
// `limit` of them, and their count.
std::vector<int64_t> PartsOutsideDefaultTolerance(const Literal& got, const Literal& want, int64_t limit,
                                                  int64_t* count) {
  std::vector<int64_t> outside;
  *count = 0;
  const PrimitiveType type = got.shape().element_type;
  const PrimitiveType part = ComplexComponentType(type);
  const int64_t part_width = ByteWidth(part);
  const int64_t parts = got.element_count() * (IsComplexType(type) ? 2 : 1);
  for (int64_t i = 0; i < parts; ++i) {
    if (ElementWithinDefaultTolerance(part, got.raw_data() + i * part_width, want.raw_data() + i * part_width)) {
      continue;
    }
    ++*count;
    if (static_cast<int64_t>(outside.size()) < limit) outside.push_back(i);
  }
  return outside;
}

// The bytes of a value of `shape` (tuples: their elements'), as the interpreter counts them against its limit.
std::optional<int64_t> ResultBytes(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes) {
      std::optional<int64_t> bytes = ResultBytes(element);
      if (!bytes.has_value()) return std::nullopt;
      total += *bytes;
    }
    return total;
  }
  return shape.IsArray() ? shape.ByteSizeOf() : std::optional<int64_t>(0);
}

// Part `i` (complex: real and imaginary parts interleaved) of a real or complex floating-point literal.
double PartAsDouble(const Literal& lit, int64_t i) {
  switch (lit.shape().element_type) {
    case PrimitiveType::kC64: {
      float v;
      std::memcpy(&v, lit.raw_data() + i * 4, 4);
      return v;
    }
    case PrimitiveType::kC128: {
      double v;
      std::memcpy(&v, lit.raw_data() + i * 8, 8);
      return v;
    }
    default:
      return lit.GetAsDouble(i);
  }
}

std::vector<int64_t> MultiIndex(const std::vector<int64_t>& dims, int64_t linear) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] > 0 ? linear % dims[d] : 0;
    linear = dims[d] > 0 ? linear / dims[d] : 0;
  }
  return index;
}

// The relative rule applies to an output of this declared type against a reference computed in `reference` (f64 or
// f32): a real or complex float the reference widens, so that it computes the output more precisely than the
// interpreter does.
bool RelativeRuleApplies(PrimitiveType type, PrimitiveType reference = PrimitiveType::kF64) {
  PrimitiveType part = ComplexComponentType(type);
  return IsFloatingPointType(part) && ReferenceType(type, reference) != type;
}

std::string FormatRelative(const RelativeError& e) {
  std::string out = fmt::format(
      "{}{} reference is {:.2f}x what the interpreter's own f32 makes: relative L2 {:.3g} vs {:.3g}, max-abs {:.3g} "
      "vs {:.3g}; allowed {:.3g} and {:.3g} ({}x + floor)",
      kRelativeVerdict, PrimitiveTypeName(e.reference), e.Ratio(), e.xlac_l2, e.interpreter_l2, e.xlac_max,
      e.interpreter_max, e.allowed_l2, e.allowed_max, kRelativeErrorFactor);
  if (e.nonfinite_mismatches > 0) {
    out += fmt::format("; {} part{} non-finite in only one of xlac and the interpreter", e.nonfinite_mismatches,
                       e.nonfinite_mismatches == 1 ? "" : "s");
  }
  if (e.fixed_rule_failures > 0) {
    out += fmt::format("; {} of the {} parts not finite in the reference fail the fixed rule", e.fixed_rule_failures,
                       e.fixed_rule_elements);
  }
  return out;
}

}  // namespace

double RelativeError::Ratio() const {
  if (interpreter_l2 > 0) return xlac_l2 / interpreter_l2;
  return xlac_l2 == 0 ? 1.0 : std::numeric_limits<double>::infinity();
}

RelativeError JudgeRelativeError(const Literal& got, const Literal& want, const Literal& reference64, int max_worst) {
  RelativeError e;
  e.reference = ComplexComponentType(reference64.shape().element_type);
  const PrimitiveType part = ComplexComponentType(got.shape().element_type);
  const int64_t part_width = ByteWidth(part);
  const int64_t parts = got.element_count() * (IsComplexType(got.shape().element_type) ? 2 : 1);
  const FloatFormat format = GetFloatFormat(part);
  const double eps = std::ldexp(1.0, -format.mantissa_bits);
  const double tiny = std::ldexp(1.0, 1 - format.exponent_bias);  // smallest normal number of the type
  double sum_ref = 0, sum_xlac = 0, sum_interp = 0, max_ref = 0;
  // Candidates for the report: elements whose error most exceeds factor x the interpreter's (a min-heap by excess).
  std::vector<std::pair<double, int64_t>> worst;
  auto consider = [&](double excess, int64_t i) {
    if (max_worst <= 0) return;
    auto cmp = [](const auto& a, const auto& b) { return a.first > b.first; };
    if (static_cast<int>(worst.size()) < max_worst) {
      worst.push_back({excess, i});
      std::push_heap(worst.begin(), worst.end(), cmp);
    } else if (excess > worst.front().first) {
      std::pop_heap(worst.begin(), worst.end(), cmp);
      worst.back() = {excess, i};
      std::push_heap(worst.begin(), worst.end(), cmp);
    }
  };
  for (int64_t i = 0; i < parts; ++i) {
    const double x = PartAsDouble(got, i), w = PartAsDouble(want, i), r = PartAsDouble(reference64, i);
    if (!std::isfinite(x) || !std::isfinite(w)) {
      if (!(std::isnan(x) && std::isnan(w)) && x != w) {
        ++e.nonfinite_mismatches;
        consider(std::numeric_limits<double>::infinity(), i);
      }
      continue;
    }
    if (!std::isfinite(r)) {
      ++e.fixed_rule_elements;
      if (!ElementWithinDefaultTolerance(part, got.raw_data() + i * part_width, want.raw_data() + i * part_width)) {
        ++e.fixed_rule_failures;
        consider(std::numeric_limits<double>::max(), i);
      }
      continue;
    }
    const double dx = std::fabs(x - r), dw = std::fabs(w - r);
    sum_ref += r * r;
    sum_xlac += dx * dx;
    sum_interp += dw * dw;
    max_ref = std::max(max_ref, std::fabs(r));
    e.xlac_max = std::max(e.xlac_max, dx);
    e.interpreter_max = std::max(e.interpreter_max, dw);
    const double excess = dx - kRelativeErrorFactor * dw - kRelativeErrorFloorUlps * eps * std::fabs(r) - tiny;
    if (excess > 0) consider(excess, i);
  }
  const double norm = std::sqrt(sum_ref), scale = std::max(norm, tiny);
  e.xlac_l2 = std::sqrt(sum_xlac) / scale;
  e.interpreter_l2 = std::sqrt(sum_interp) / scale;
  e.allowed_l2 = kRelativeErrorFactor * e.interpreter_l2 + kRelativeErrorFloorUlps * eps + tiny / scale;
  e.allowed_max = kRelativeErrorFactor * e.interpreter_max + kRelativeErrorFloorUlps * eps * max_ref + tiny;
  e.passed = e.nonfinite_mismatches == 0 && e.fixed_rule_failures == 0 && e.xlac_l2 <= e.allowed_l2 &&
             e.xlac_max <= e.allowed_max;
  std::sort_heap(worst.begin(), worst.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (const auto& [excess, i] : worst) e.worst_elements.push_back(i);
  return e;
}

std::string FormatRelativeErrorSummary(const std::vector<std::pair<std::string, RelativeError>>& relative) {
  if (relative.empty()) return "";
  const auto* worst = &relative.front();
  // Outputs both compute exactly (0 vs 0, ratio 1) say nothing about the default mode: they lose to any other.
  auto key = [](const RelativeError& e) { return std::make_pair(e.xlac_l2 > 0 || e.interpreter_l2 > 0, e.Ratio()); };
  for (const auto& entry : relative) {
    if (key(entry.second) > key(worst->second)) worst = &entry;
  }
  const RelativeError& e = worst->second;
  return fmt::format(
      "default-mode error against an {} reference: worst {}: xlac's error is {:.2f}x what the interpreter's own f32 "
      "makes (relative L2 {:.3g} vs {:.3g}, max-abs {:.3g} vs {:.3g}; {} output{} judged, {}x + floor allowed)\n",
      PrimitiveTypeName(e.reference), worst->first, e.Ratio(), e.xlac_l2, e.interpreter_l2, e.xlac_max,
      e.interpreter_max, relative.size(), relative.size() == 1 ? "" : "s", kRelativeErrorFactor);
}

bool ElementWithinDefaultTolerance(PrimitiveType type, const uint8_t* got, const uint8_t* want) {
  int64_t width = ByteWidth(type);
  if (std::memcmp(got, want, static_cast<size_t>(width)) == 0) return true;
  uint64_t a_bits = 0, b_bits = 0;
  std::memcpy(&a_bits, got, static_cast<size_t>(width));
  std::memcpy(&b_bits, want, static_cast<size_t>(width));
  if (harness::UlpDistance(a_bits, b_bits, type) <= 16) return true;
  Literal a(Shape::Scalar(type)), b(Shape::Scalar(type));
  std::memcpy(a.mutable_raw_data(), got, static_cast<size_t>(width));
  std::memcpy(b.mutable_raw_data(), want, static_cast<size_t>(width));
  double x = a.GetAsDouble(0), y = b.GetAsDouble(0);
  double eps = type == PrimitiveType::kF64 ? 0x1p-52 : 0x1p-23;
  const double scale = std::max(1.0, std::fabs(y));
  if (std::fabs(x - y) <= 1024 * eps * scale) return true;
  // Types narrower than f32 are stored rounded: a one-ulp f32 difference upstream straddles a rounding boundary of
  // every intermediate they are stored in, and the difference compounds downstream (a bf16 transformer differs from
  // the interpreter by several bf16 ulps where a reassociated sum cancels). They get one epsilon of their own type,
  // as JAX's and XLA's own tests allow bf16 1e-2 and f16 1e-3.
  return ByteWidth(type) < 4 && std::fabs(x - y) <= TypeEpsilon(type) * scale;
}

double TypeEpsilon(PrimitiveType type) {
  // The distance from 1 to the next value of the type.
  Literal one(Shape::Scalar(type));
  one.SetFromDouble(0, 1.0);
  uint64_t bits = 0;
  const size_t width = static_cast<size_t>(ByteWidth(type));
  std::memcpy(&bits, one.raw_data(), width);
  ++bits;
  Literal next(Shape::Scalar(type));
  std::memcpy(next.mutable_raw_data(), &bits, width);
  return next.GetAsDouble(0) - 1.0;
}

std::vector<harness::CheckResult> CompareOutputs(const std::vector<LabeledOutput>& got,
                                                 const std::vector<LabeledOutput>& want, const CompareOptions& options,
                                                 std::vector<std::pair<std::string, RelativeError>>* relative) {
  std::vector<harness::CheckResult> results;
  const std::string config = fmt::format(R"({{"min_ulp_difference":0,"max_ulp_difference":{}}})", options.max_ulp);
  harness::CheckOptions check_options{options.max_mismatches};
  for (size_t i = 0; i < std::max(got.size(), want.size()); ++i) {
    harness::CheckResult r;
    if (i >= got.size() || i >= want.size()) {
      r.target = std::string(kCompareTarget);
      r.instruction = i < want.size() ? want[i].label : got[i].label;
      r.status = harness::CheckStatus::kFailed;
      r.error = fmt::format("{} outputs, want {}", got.size(), want.size());
      results.push_back(std::move(r));
      continue;
    }
    const Literal& a = *got[i].value;
    const Literal& b = *want[i].value;
    if (!a.shape().IsArray() && !b.shape().IsArray() && a.shape().element_type == b.shape().element_type) {
      r.target = std::string(kCompareTarget);  // tokens: nothing to compare
    } else {
      r = harness::EvaluateCheck(kCompareTarget, config, a, b, check_options);
      if (IsIntegralType(a.shape().element_type) || IsPredType(a.shape().element_type)) {
        r.tolerance = "exact";
      } else if (!r.passed() && options.atol > 0 && IsFloatingPointType(a.shape().element_type) &&
                 a.shape().dimensions == b.shape().dimensions && WithinMixedTolerance(a, b, options.atol)) {
        r.status = harness::CheckStatus::kPassed;
        r.mismatched = 0;
        r.mismatches.clear();
      } else if (const Literal* ref =
                     options.default_mode_tolerance && options.reference64 != nullptr && i < options.reference64->size()
                         ? (*options.reference64)[i].value
                         : nullptr;
                 ref != nullptr && ref->shape().IsArray() &&
                 RelativeRuleApplies(a.shape().element_type, ComplexComponentType(ref->shape().element_type)) &&
                 a.shape().element_type == b.shape().element_type && a.shape().dimensions == b.shape().dimensions &&
                 ref->shape().dimensions == a.shape().dimensions &&
                 ref->shape().element_type ==
                     ReferenceType(a.shape().element_type, ComplexComponentType(ref->shape().element_type))) {
        RelativeError e = JudgeRelativeError(a, b, *ref, options.max_mismatches);
        if (relative != nullptr) relative->push_back({want[i].label, e});
        // Bitwise equality (the ULP test above) passes whatever the norms say.
        if (!r.passed()) {
          r.status = e.passed ? harness::CheckStatus::kPassed : harness::CheckStatus::kFailed;
          r.tolerance = FormatRelative(e);
          r.mismatches.clear();
          r.mismatched = static_cast<int64_t>(e.worst_elements.size());
          for (int64_t part : e.worst_elements) {
            const bool complex = IsComplexType(a.shape().element_type);
            const int64_t element = complex ? part / 2 : part;
            const double x = PartAsDouble(a, part), w = PartAsDouble(b, part), f = PartAsDouble(*ref, part);
            harness::CheckMismatch m;
            m.index = MultiIndex(a.shape().dimensions, element);
            m.component = complex ? static_cast<int>(part % 2) : -1;
            m.got = fmt::format("{:.9g}", x);
            m.want = fmt::format("{:.9g}", w);
            m.why = fmt::format("{} reference {:.17g}: error {:.3g}, the interpreter's {:.3g}",
                                PrimitiveTypeName(e.reference), f, std::fabs(x - f), std::fabs(w - f));
            r.mismatches.push_back(std::move(m));
          }
          if (e.passed) {
            r.mismatched = 0;
            r.mismatches.clear();
          }
        }
      } else if (!r.passed() && options.default_mode_tolerance &&
                 (IsFloatingPointType(a.shape().element_type) || IsComplexType(a.shape().element_type)) &&
                 a.shape().element_type == b.shape().element_type && a.shape().dimensions == b.shape().dimensions) {
        int64_t outside_count = 0;
        const std::vector<int64_t> outside =
            PartsOutsideDefaultTolerance(a, b, std::max<int64_t>(options.max_mismatches, 1), &outside_count);
        r.mismatches.clear();
        r.mismatched = outside_count;
        if (outside_count == 0) {
          r.status = harness::CheckStatus::kPassed;
          r.tolerance = "default-mode tolerance";
        } else {
          r.tolerance = "the fixed rule: 16 ulp or 1024 eps max(1, |want|)";
          const bool complex = IsComplexType(a.shape().element_type);
          for (int64_t part : outside) {
            harness::CheckMismatch m;
            m.index = MultiIndex(a.shape().dimensions, complex ? part / 2 : part);
            m.component = complex ? static_cast<int>(part % 2) : -1;
            const double x = PartAsDouble(a, part), w = PartAsDouble(b, part);
            m.got = fmt::format("{:.9g}", x);
            m.want = fmt::format("{:.9g}", w);
            m.why = fmt::format("differs by {:.3g}", std::fabs(x - w));
            r.mismatches.push_back(std::move(m));
          }
        }
      }
    }
    r.instruction = want[i].label;
    results.push_back(std::move(r));
  }
  return results;
}

bool JudgedByRelativeRule(const Shape& result, PrimitiveType reference) {
  if (result.IsTuple()) {
    for (const Shape& element : result.tuple_shapes) {
      if (JudgedByRelativeRule(element, reference)) return true;
    }
    return false;
  }
  return result.IsArray() && RelativeRuleApplies(result.element_type, reference);
}

bool JudgedOutputsNarrowerThanF32(const Shape& result) {
  std::function<bool(const Shape&)> all_narrow = [&](const Shape& shape) {
    if (shape.IsTuple()) {
      for (const Shape& element : shape.tuple_shapes) {
        if (!all_narrow(element)) return false;
      }
      return true;
    }
    return !shape.IsArray() || !RelativeRuleApplies(shape.element_type, PrimitiveType::kF64) ||
           RelativeRuleApplies(shape.element_type, PrimitiveType::kF32);
  };
  return JudgedByRelativeRule(result, PrimitiveType::kF32) && all_narrow(result);
}

absl::StatusOr<std::vector<Literal>> EvaluateReference(const Module& module, const std::vector<Literal>& arguments,
                                                       const ReferenceOptions& options) {
  return EvaluateReference(module, std::vector<std::vector<Literal>>{arguments}, options);
}

absl::StatusOr<std::vector<Literal>> EvaluateF64Reference(const Module& module, const std::vector<Literal>& arguments,
                                                          const ReferenceOptions& options) {
  return EvaluateReference(module, arguments, options);
}

absl::StatusOr<std::vector<Literal>> EvaluateReference(const Module& module,
                                                       const std::vector<std::vector<Literal>>& device_arguments,
                                                       const ReferenceOptions& options) {
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteFloats(module, options.type);
  if (!promoted.ok()) return promoted.status();
  // The interpreter refuses a value above its limit only when it reaches it, for a large model's logits after most of
  // its run. Every live value of the entry is evaluated, so one above the limit refuses the reference up front.
  const Computation* entry = (*promoted)->entry_computation();
  for (const Instruction* inst : entry->MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter || inst->opcode() == Opcode::kGetTupleElement) continue;
    const std::optional<int64_t> bytes = ResultBytes(inst->shape());
    if (bytes.has_value() && *bytes <= options.max_result_bytes) continue;
    if (!interp::LiveInstructions(*entry).contains(inst)) continue;
    return absl::ResourceExhaustedError(fmt::format(
        "its value {} ({}, {}) is larger than the interpreter's limit of {} per value", inst->name(),
        ShapeToString(inst->shape(), false), bytes.has_value() ? FormatBytes(*bytes) : std::string("too large"),
        FormatBytes(options.max_result_bytes)));
  }
  harness::CheckCollector checks;
  interp::InterpreterOptions interp_options;
  interp_options.num_replicas = options.num_replicas;
  interp_options.num_partitions = options.num_partitions;
  interp_options.seed = options.seed;
  interp_options.threads = options.threads;
  interp_options.custom_call_handler = [&checks](const Instruction& inst, const std::vector<const Literal*>& operands) {
    return checks.Handle(inst, operands);
  };
  interp_options.elementwise_kernels = options.elementwise_kernels;
  interp_options.max_result_bytes = options.max_result_bytes;
  return interp::Evaluate(**promoted, device_arguments, interp_options);
}

std::string FormatComparisonFailure(const harness::CheckResult& result, std::string_view file_name,
                                    std::string_view reference) {
  if (result.passed()) return "";
  std::string out = fmt::format("{}: error: {} differs from the {}", file_name, result.instruction, reference);
  if (!result.error.empty()) return out + ": " + result.error + "\n";
  if (result.tolerance.starts_with(kRelativeVerdict)) {
    // The verdict is on the whole output; the elements listed are the ones furthest over the allowance.
    out += ": " + result.tolerance + "\n";
  } else {
    out += fmt::format(": {} of {} element{} differ{} ({})\n", result.mismatched, result.elements,
                       result.elements == 1 ? "" : "s", result.mismatched == 1 ? "s" : "", result.tolerance);
  }
  for (const harness::CheckMismatch& m : result.mismatches) {
    out += "  at " + IndexString(m.index);
    if (m.component >= 0) out += m.component == 0 ? " (real)" : " (imag)";
    out += ": got " + m.got + " want " + m.want + " \u2014 " + m.why + "\n";
  }
  return out;
}

}  // namespace xlac
