#include "runtime/harness/checks.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <tuple>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/float_types.h"

namespace xlac::harness {
namespace {

constexpr std::string_view kExpectEq = "check.expect_eq";
constexpr std::string_view kExpectAlmostEq = "check.expect_almost_eq";
constexpr std::string_view kExpectClose = "check.expect_close";
constexpr std::string_view kExpectSerializedEq = "check.expect_serialized_eq";
constexpr std::string_view kEq = "check.eq";

// Where `"key":` starts its value in a JSON-ish backend_config ({"tolerance":1e-4,...}), or nullptr.
const char* ConfigValue(const std::string& config, std::string_view key) {
  size_t pos = config.find("\"" + std::string(key) + "\"");
  if (pos == std::string::npos) return nullptr;
  pos = config.find(':', pos);
  if (pos == std::string::npos) return nullptr;
  return config.c_str() + pos + 1;
}

double ConfigNumber(const std::string& config, std::string_view key, double fallback) {
  const char* v = ConfigValue(config, key);
  return v == nullptr ? fallback : std::strtod(v, nullptr);
}

// ULP bounds go up to 2^64-1, which a double cannot hold exactly, so integers are read as integers.
uint64_t ConfigUlp(const std::string& config, std::string_view key, uint64_t fallback) {
  const char* v = ConfigValue(config, key);
  if (v == nullptr) return fallback;
  while (*v == ' ') ++v;
  char* end = nullptr;
  errno = 0;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (end != v && *end != '.' && *end != 'e' && *end != 'E' && errno == 0 && *v != '-') return n;
  double d = std::strtod(v, nullptr);
  if (!(d > 0)) return 0;
  if (d >= 0x1p64) return ~uint64_t{0};
  return static_cast<uint64_t>(d);
}

uint64_t LoadBits(const Literal& lit, int64_t element, int component, int64_t width) {
  uint64_t v = 0;
  std::memcpy(&v, lit.raw_data() + element * ByteWidth(lit.shape().element_type) + component * width,
              static_cast<size_t>(width));
  return v;
}

std::string FormatFloat(PrimitiveType type, uint64_t bits) {
  double value = FloatBitsToDouble(type, bits);
  std::string text;
  if (std::isnan(value)) {
    text = std::signbit(value) ? "-nan" : "nan";
  } else if (std::isinf(value)) {
    text = value < 0 ? "-inf" : "inf";
  } else {
    char buffer[64];
    // Shortest text that reads back as the same value of the element's own type.
    std::to_chars_result r =
        type == PrimitiveType::kF32 ? std::to_chars(buffer, buffer + sizeof(buffer), static_cast<float>(value))
        : type == PrimitiveType::kF64
            ? std::to_chars(buffer, buffer + sizeof(buffer), value)
            : std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::general,
                            2 + static_cast<int>(std::ceil((GetFloatFormat(type).mantissa_bits + 1) * 0.30103)));
    text.assign(buffer, r.ptr);
  }
  return fmt::format("{} (0x{:0{}x})", text, bits, (BitWidth(type) + 3) / 4);
}

std::string FormatInteger(const Literal& lit, int64_t i) {
  PrimitiveType t = lit.shape().element_type;
  if (t == PrimitiveType::kPred) return lit.raw_data()[i] ? "true" : "false";
  if (IsUnsignedIntegralType(t)) return std::to_string(static_cast<uint64_t>(lit.GetAsInt64(i)));
  return std::to_string(lit.GetAsInt64(i));
}

std::vector<int64_t> MultiIndex(const std::vector<int64_t>& dims, int64_t linear) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : linear % dims[d];
    if (dims[d] != 0) linear /= dims[d];
  }
  return index;
}

std::string FormatDouble(double v) {
  char buffer[64];
  std::to_chars_result r = std::to_chars(buffer, buffer + sizeof(buffer), v);
  return std::string(buffer, r.ptr);
}

// How one check compares one component of one element; returns "" when it matches, else the reason.
struct Comparator {
  enum class Kind { kExact, kAbsolute, kUlp } kind = Kind::kExact;
  double tolerance = 0;
  uint64_t min_ulp = 0;
  uint64_t max_ulp = 0;

  std::string CompareFloat(PrimitiveType type, uint64_t a, uint64_t b) const {
    double da = FloatBitsToDouble(type, a), db = FloatBitsToDouble(type, b);
    switch (kind) {
      case Kind::kExact:
        return da == db ? "" : "not equal";
      case Kind::kAbsolute: {
        if (da == db || (std::isnan(da) && std::isnan(db))) return "";
        if (!std::isfinite(da) || !std::isfinite(db)) return "non-finite mismatch";
        double diff = std::fabs(da - db);
        return diff <= tolerance ? "" : "differs by " + FormatDouble(diff);
      }
      case Kind::kUlp: {
        uint64_t d = UlpDistance(a, b, type);
        if (d >= min_ulp && d <= max_ulp) return "";
        std::string distance = d == ~uint64_t{0} ? "non-finite mismatch" : std::to_string(d) + " ulp";
        return d < min_ulp ? distance + " < min " + std::to_string(min_ulp) : distance;
      }
    }
    return "";
  }
};

std::string Describe(const Comparator& c, bool is_float) {
  if (!is_float || c.kind == Comparator::Kind::kExact) return "exact";
  if (c.kind == Comparator::Kind::kAbsolute) return "tolerance " + FormatDouble(c.tolerance);
  // The tolerance, not a measurement: "allowed", so "(allowed 0 ulp)" is not read as the largest difference found.
  if (c.min_ulp == 0) return "allowed " + std::to_string(c.max_ulp) + " ulp";
  return "allowed " + std::to_string(c.min_ulp) + " to " + std::to_string(c.max_ulp) + " ulp";
}

std::string IndexToString(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

}  // namespace

uint64_t UlpDistance(uint64_t a, uint64_t b, PrimitiveType type) {
  if (a == b) return 0;
  double da = FloatBitsToDouble(type, a), db = FloatBitsToDouble(type, b);
  if (std::isnan(da) && std::isnan(db)) return 0;
  if (!std::isfinite(da) || !std::isfinite(db)) return ~uint64_t{0};
  FloatFormat format = GetFloatFormat(type);
  int sign_bit = BitWidth(type) - 1;
  uint64_t mask = format.is_unsigned ? ~uint64_t{0} : ~(uint64_t{1} << sign_bit);
  uint64_t ma = a & mask, mb = b & mask;
  bool sa = !format.is_unsigned && ((a >> sign_bit) & 1), sb = !format.is_unsigned && ((b >> sign_bit) & 1);
  if (sa == sb) return ma > mb ? ma - mb : mb - ma;
  return ma + mb;
}

bool IsCheckTarget(std::string_view target) {
  return target == kExpectEq || target == kExpectAlmostEq || target == kExpectClose || target == kExpectSerializedEq ||
         target == kEq;
}

CheckResult EvaluateCheck(std::string_view target, std::string_view backend_config, const Literal& actual,
                          const Literal& expected, const CheckOptions& options) {
  CheckResult result;
  result.target = std::string(target);
  if (target == kExpectSerializedEq) {
    result.status = CheckStatus::kSkipped;
    result.tolerance = "skipped: needs the StableHLO interpreter's probe files";
    return result;
  }
  auto fail = [&](std::string error) {
    result.status = CheckStatus::kFailed;
    result.error = std::move(error);
    return result;
  };
  if (actual.is_tuple() || expected.is_tuple() || !actual.shape().IsArray() || !expected.shape().IsArray()) {
    return fail("expected two arrays, got " + ShapeToString(actual.shape(), false) + " and " +
                ShapeToString(expected.shape(), false));
  }
  if (actual.shape().element_type != expected.shape().element_type ||
      actual.shape().dimensions != expected.shape().dimensions) {
    return fail("shape mismatch: got " + ShapeToString(actual.shape(), false) + " want " +
                ShapeToString(expected.shape(), false));
  }
  if (actual.is_unknown() || expected.is_unknown()) return fail("an operand has no known value");

  const std::string config(backend_config);
  const bool custom_call_form = config.empty();
  Comparator cmp;
  if (target == kExpectAlmostEq) {
    cmp.kind = Comparator::Kind::kAbsolute;
    cmp.tolerance = ConfigNumber(config, "tolerance", custom_call_form ? 1e-3 : 1e-4);
  } else if (target == kEq) {
    cmp.kind = Comparator::Kind::kAbsolute;
    cmp.tolerance = 1e-4;
  } else if (target == kExpectClose) {
    cmp.kind = Comparator::Kind::kUlp;
    cmp.max_ulp = ConfigUlp(config, "max_ulp_difference", custom_call_form ? 3 : 1);
    cmp.min_ulp = ConfigUlp(config, "min_ulp_difference", 0);
  }

  const PrimitiveType type = actual.shape().element_type;
  const bool is_float = IsFloatingPointType(type) || IsComplexType(type);
  const PrimitiveType component_type = IsComplexType(type) ? ComplexComponentType(type) : type;
  const int components = IsComplexType(type) ? 2 : 1;
  const int64_t width = ByteWidth(component_type);
  result.tolerance = Describe(cmp, is_float);
  result.elements = actual.element_count();
  for (int64_t i = 0; i < result.elements; ++i) {
    bool element_differs = false;
    for (int c = 0; c < components; ++c) {
      std::string why;
      std::string got, want;
      if (is_float) {
        uint64_t a = LoadBits(actual, i, c, width), b = LoadBits(expected, i, c, width);
        why = cmp.CompareFloat(component_type, a, b);
        if (why.empty()) continue;
        got = FormatFloat(component_type, a);
        want = FormatFloat(component_type, b);
      } else {
        if (std::memcmp(actual.raw_data() + i * width, expected.raw_data() + i * width, width) == 0) continue;
        why = "not equal";
        got = FormatInteger(actual, i);
        want = FormatInteger(expected, i);
      }
      element_differs = true;
      if (static_cast<int>(result.mismatches.size()) < options.max_mismatches) {
        result.mismatches.push_back({MultiIndex(actual.shape().dimensions, i), components == 2 ? c : -1, std::move(got),
                                     std::move(want), std::move(why)});
      }
    }
    if (element_differs) ++result.mismatched;
  }
  if (result.mismatched > 0) result.status = CheckStatus::kFailed;
  return result;
}

absl::StatusOr<Literal> CheckCollector::Handle(const Instruction& custom_call,
                                               const std::vector<const Literal*>& operands) {
  std::string_view target = custom_call.StringAttr("custom_call_target");
  if (!IsCheckTarget(target)) return absl::UnimplementedError("not a check: " + std::string(target));
  CheckResult result;
  const size_t arity = target == kExpectSerializedEq ? 1 : 2;
  if (operands.size() != arity) {
    result.target = std::string(target);
    result.status = CheckStatus::kFailed;
    result.error = fmt::format("expected {} operand{}, got {}", arity, arity == 1 ? "" : "s", operands.size());
  } else {
    const Literal& actual = *operands[0];
    result = EvaluateCheck(target, custom_call.backend_config(), actual, arity == 2 ? *operands[1] : actual, options_);
  }
  result.instruction = custom_call.name();
  result.loc = custom_call.loc();
  const bool passed = result.passed();
  {
    std::lock_guard<std::mutex> lock(mu_);
    results_.push_back(std::move(result));
  }
  Literal value(custom_call.shape());
  if (custom_call.shape().IsArray() && custom_call.shape().element_type == PrimitiveType::kPred) {
    for (int64_t i = 0; i < value.element_count(); ++i) value.mutable_raw_data()[i] = passed ? 1 : 0;
  }
  return value;
}

std::vector<CheckResult> CheckCollector::Results() const {
  std::vector<CheckResult> results;
  {
    std::lock_guard<std::mutex> lock(mu_);
    results = results_;
  }
  auto key = [](const CheckResult& r) {
    return std::make_tuple(r.loc.line, r.loc.col, std::cref(r.instruction), static_cast<int>(r.status), r.mismatched,
                           FormatCheckFailure(r, ""));
  };
  std::stable_sort(results.begin(), results.end(),
                   [&](const CheckResult& a, const CheckResult& b) { return key(a) < key(b); });
  return results;
}

std::string FormatCheckFailure(const CheckResult& result, std::string_view file_name) {
  if (result.passed()) return "";
  std::string out(file_name);
  if (result.loc.known()) out += fmt::format(":{}:{}", result.loc.line, result.loc.col);
  out += ": error: " + result.target + " failed";
  if (!result.loc.known() && !result.instruction.empty()) out += " (" + result.instruction + ")";
  if (!result.error.empty()) return out + ": " + result.error + "\n";
  out += fmt::format(": {} of {} element{} differ{} ({})\n", result.mismatched, result.elements,
                     result.elements == 1 ? "" : "s", result.mismatched == 1 ? "s" : "", result.tolerance);
  for (const CheckMismatch& m : result.mismatches) {
    out += "  at " + IndexToString(m.index);
    if (m.component >= 0) out += m.component == 0 ? " (real)" : " (imag)";
    out += ": got " + m.got + " want " + m.want + " \u2014 " + m.why + "\n";
  }
  return out;
}

std::string FormatCheckSummary(const std::vector<CheckResult>& results) {
  int64_t passed = 0, failed = 0, skipped = 0;
  for (const CheckResult& r : results) {
    if (r.status == CheckStatus::kPassed) ++passed;
    if (r.status == CheckStatus::kFailed) ++failed;
    if (r.status == CheckStatus::kSkipped) ++skipped;
  }
  std::string out =
      fmt::format("{} check{}: {} passed, {} failed", results.size(), results.size() == 1 ? "" : "s", passed, failed);
  if (skipped > 0) out += fmt::format(", {} skipped", skipped);
  return out + "\n";
}

}  // namespace xlac::harness
