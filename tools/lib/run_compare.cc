#include "tools/lib/run_compare.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "fmt/format.h"

namespace xlac {
namespace {

constexpr std::string_view kCompareTarget = "check.expect_close";

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
bool WithinDefaultTolerance(const Literal& got, const Literal& want) {
  if (got.element_count() != want.element_count()) return false;
  PrimitiveType type = got.shape().element_type;
  PrimitiveType part = type == PrimitiveType::kC64    ? PrimitiveType::kF32
                       : type == PrimitiveType::kC128 ? PrimitiveType::kF64
                                                      : type;
  int64_t part_width = ByteWidth(part);
  int64_t parts = got.element_count() * (IsComplexType(type) ? 2 : 1);
  for (int64_t i = 0; i < parts; ++i) {
    if (!ElementWithinDefaultTolerance(part, got.raw_data() + i * part_width, want.raw_data() + i * part_width)) {
      return false;
    }
  }
  return true;
}

}  // namespace

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
  return std::fabs(x - y) <= 1024 * eps * std::max(1.0, std::fabs(y));
}

std::vector<harness::CheckResult> CompareOutputs(const std::vector<LabeledOutput>& got,
                                                 const std::vector<LabeledOutput>& want,
                                                 const CompareOptions& options) {
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
      } else if (!r.passed() && options.default_mode_tolerance &&
                 (IsFloatingPointType(a.shape().element_type) || IsComplexType(a.shape().element_type)) &&
                 a.shape().element_type == b.shape().element_type && a.shape().dimensions == b.shape().dimensions &&
                 WithinDefaultTolerance(a, b)) {
        r.status = harness::CheckStatus::kPassed;
        r.mismatched = 0;
        r.mismatches.clear();
        r.tolerance = "default-mode tolerance";
      }
    }
    r.instruction = want[i].label;
    results.push_back(std::move(r));
  }
  return results;
}

std::string FormatComparisonFailure(const harness::CheckResult& result, std::string_view file_name,
                                    std::string_view reference) {
  if (result.passed()) return "";
  std::string out = fmt::format("{}: error: {} differs from the {}", file_name, result.instruction, reference);
  if (!result.error.empty()) return out + ": " + result.error + "\n";
  out += fmt::format(": {} of {} element{} differ{} ({})\n", result.mismatched, result.elements,
                     result.elements == 1 ? "" : "s", result.mismatched == 1 ? "s" : "", result.tolerance);
  for (const harness::CheckMismatch& m : result.mismatches) {
    out += "  at " + IndexString(m.index);
    if (m.component >= 0) out += m.component == 0 ? " (real)" : " (imag)";
    out += ": got " + m.got + " want " + m.want + " \u2014 " + m.why + "\n";
  }
  return out;
}

}  // namespace xlac
