#include "passes/kernel_attrs.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "fmt/format.h"
#include "ir/float_types.h"
#include "ir/primitive_type.h"

namespace xlac {
namespace {

struct Value {
  enum class Kind : uint8_t { kInteger, kFloat, kBool, kOther } kind = Kind::kOther;
  bool negative = false;
  uint64_t magnitude = 0;  // kInteger
  double number = 0;       // kInteger and kFloat
  bool truth = false;      // kBool
  std::string text;        // as written, for messages
};

// A recursive-descent reader of the two dictionary forms. Keys keep their first position for duplicate checks.
class ConfigReader {
 public:
  explicit ConfigReader(std::string_view text) : text_(text) {}

  // Entries in order; false with `error_` set when the text is not one of the two forms.
  bool Read(std::map<std::string, Value, std::less<>>& out) {
    Skip();
    if (pos_ == text_.size()) return true;  // no backend_config
    if (!Eat('{')) return Fail("a backend_config of attributes is a {...} dictionary");
    Skip();
    if (Eat('}')) return AtEnd();
    while (true) {
      std::string key;
      if (!ReadKey(key)) return false;
      Skip();
      if (!Eat(':') && !Eat('=')) return Fail(fmt::format("expected ':' or '=' after '{}'", key));
      Value value;
      if (!ReadValue(value)) return false;
      if (!out.emplace(key, std::move(value)).second) return Fail(fmt::format("'{}' is given twice", key));
      Skip();
      if (Eat('}')) return AtEnd();
      if (!Eat(',')) return Fail("expected ',' or '}'");
      Skip();
    }
  }

  const std::string& error() const { return error_; }

 private:
  bool Fail(std::string message) {
    error_ = fmt::format("{} at offset {} of '{}'", message, pos_, text_);
    return false;
  }
  bool AtEnd() {
    Skip();
    return pos_ == text_.size() || Fail("unexpected text after the dictionary");
  }
  void Skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  static bool IsWordChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-' || c == '+' || c == '$';
  }
  bool ReadString(std::string& out) {
    // The opening quote has been eaten. JSON escapes beyond \" and \\ do not occur in attribute names.
    while (pos_ < text_.size() && text_[pos_] != '"') {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      out.push_back(text_[pos_++]);
    }
    return Eat('"') || Fail("unterminated string");
  }
  bool ReadKey(std::string& key) {
    if (Eat('"')) return ReadString(key);
    const size_t start = pos_;
    while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    key = std::string(text_.substr(start, pos_ - start));
    return !key.empty() || Fail("expected an attribute name");
  }
  // A value, with a StableHLO type suffix (` : i32`) dropped; nested values are skipped as kOther.
  bool ReadValue(Value& value) {
    Skip();
    const size_t start = pos_;
    if (Eat('"')) {
      std::string ignored;
      if (!ReadString(ignored)) return false;
    } else if (pos_ < text_.size() && (text_[pos_] == '[' || text_[pos_] == '{' || text_[pos_] == '<')) {
      if (!SkipNested()) return false;
    } else {
      while (pos_ < text_.size() && (IsWordChar(text_[pos_]) || text_[pos_] == '<')) {
        if (text_[pos_] == '<') {
          if (!SkipNested()) return false;
        } else {
          ++pos_;
        }
      }
    }
    value.text = std::string(text_.substr(start, pos_ - start));
    Classify(value);
    Skip();
    if (pos_ < text_.size() && text_[pos_] == ':') {
      // StableHLO's `3 : i32`; JSON never has a second colon in an entry.
      ++pos_;
      Skip();
      while (pos_ < text_.size() && IsWordChar(text_[pos_])) ++pos_;
    }
    return !value.text.empty() || Fail("expected a value");
  }
  bool SkipNested() {
    int depth = 0;
    bool in_string = false;
    for (; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (in_string) {
        if (c == '\\') ++pos_;
        if (c == '"') in_string = false;
        continue;
      }
      if (c == '"') in_string = true;
      if (c == '[' || c == '{' || c == '<' || c == '(') ++depth;
      if (c == ']' || c == '}' || c == '>' || c == ')') {
        if (--depth == 0) {
          ++pos_;
          return true;
        }
      }
    }
    return Fail("unbalanced brackets");
  }
  static void Classify(Value& value) {
    const std::string& t = value.text;
    if (t == "true" || t == "false") {
      value.kind = Value::Kind::kBool;
      value.truth = t == "true";
      return;
    }
    std::string_view digits = t;
    value.negative = !digits.empty() && digits[0] == '-';
    if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
    if (digits.empty()) return;
    auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), value.magnitude);
    if (error == std::errc() && end == digits.data() + digits.size()) {
      value.kind = Value::Kind::kInteger;
      value.number = static_cast<double>(value.magnitude) * (value.negative ? -1 : 1);
      return;
    }
    double number = 0;
    auto [fend, ferror] = std::from_chars(t.data(), t.data() + t.size(), number);
    if (ferror == std::errc() && fend == t.data() + t.size()) {
      value.kind = Value::Kind::kFloat;
      value.number = number;
    } else if (t == "inf" || t == "-inf" || t == "nan" || t == "NaN" || t == "Infinity" || t == "-Infinity") {
      value.kind = Value::Kind::kFloat;
      value.number = t.find("nan") != std::string::npos || t == "NaN" ? std::nan("")
                     : t[0] == '-'                                    ? -INFINITY
                                                                      : INFINITY;
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  std::string error_;
};

bool IsInteger(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
      return true;
    default:
      return false;
  }
}

bool IsSigned(PrimitiveType t) {
  return t == PrimitiveType::kS8 || t == PrimitiveType::kS16 || t == PrimitiveType::kS32 || t == PrimitiveType::kS64;
}

template <typename T>
void Store(std::string& bytes, int64_t offset, T v) {
  std::memcpy(bytes.data() + offset, &v, sizeof(T));
}

// Writes `value` as `field` into `bytes`, or says why it does not fit.
std::optional<std::string> Encode(const KernelAttrField& field, const Value& value, std::string& bytes) {
  const PrimitiveType t = field.type;
  if (t == PrimitiveType::kPred) {
    if (value.kind != Value::Kind::kBool) return "a bool takes true or false";
    Store<uint8_t>(bytes, field.offset, value.truth ? 1 : 0);
    return std::nullopt;
  }
  if (IsInteger(t)) {
    if (value.kind != Value::Kind::kInteger) return fmt::format("{} takes an integer", PrimitiveTypeName(t));
    const int bits = BitWidth(t);
    const uint64_t max = IsSigned(t) ? (uint64_t{1} << (bits - 1)) - 1
                                     : (bits == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bits) - 1);
    const uint64_t min_magnitude = IsSigned(t) ? uint64_t{1} << (bits - 1) : 0;
    if (value.negative ? value.magnitude > min_magnitude : value.magnitude > max) {
      return fmt::format("out of range for {}", PrimitiveTypeName(t));
    }
    const uint64_t raw = value.negative ? ~value.magnitude + 1 : value.magnitude;
    switch (bits) {
      case 8:
        Store<uint8_t>(bytes, field.offset, static_cast<uint8_t>(raw));
        break;
      case 16:
        Store<uint16_t>(bytes, field.offset, static_cast<uint16_t>(raw));
        break;
      case 32:
        Store<uint32_t>(bytes, field.offset, static_cast<uint32_t>(raw));
        break;
      default:
        Store<uint64_t>(bytes, field.offset, raw);
        break;
    }
    return std::nullopt;
  }
  if (value.kind != Value::Kind::kInteger && value.kind != Value::Kind::kFloat) {
    return fmt::format("{} takes a number", PrimitiveTypeName(t));
  }
  switch (t) {
    case PrimitiveType::kF64:
      Store<double>(bytes, field.offset, value.number);
      return std::nullopt;
    case PrimitiveType::kF32:
      Store<float>(bytes, field.offset, static_cast<float>(value.number));
      return std::nullopt;
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
      Store<uint16_t>(bytes, field.offset, static_cast<uint16_t>(DoubleToFloatBits(t, value.number)));
      return std::nullopt;
    default:
      return fmt::format("{} is not an attribute type", PrimitiveTypeName(t));
  }
}

std::string FieldList(const KernelSignature& kernel) {
  std::string out;
  for (const KernelAttrField& f : kernel.attrs) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", f.name, PrimitiveTypeName(f.type));
  }
  return "{" + out + "}";
}

}  // namespace

std::optional<std::string> FillKernelAttrs(const KernelSignature& kernel, std::string_view config,
                                           std::string_view call, KernelAttrProblem& problem) {
  std::map<std::string, Value, std::less<>> values;
  ConfigReader reader(config);
  if (!reader.Read(values)) {
    problem.message = fmt::format("custom call {} has a backend_config the kernel {} cannot read: {}", call,
                                  kernel.function, reader.error());
    return std::nullopt;
  }
  std::string bytes(static_cast<size_t>(kernel.attrs_size), '\0');
  for (const KernelAttrField& field : kernel.attrs) {
    auto it = values.find(field.name);
    if (it == values.end()) {
      problem.field = &field;
      problem.message = fmt::format(
          "custom call {} has no attribute '{}' in its backend_config; the kernel {} for "
          "\"{}\" takes {}",
          call, field.name, kernel.function, kernel.target, FieldList(kernel));
      return std::nullopt;
    }
    if (std::optional<std::string> why = Encode(field, it->second, bytes)) {
      problem.field = &field;
      problem.message = fmt::format("attribute '{}' of custom call {} is {}, but the kernel's field is {}: {}",
                                    field.name, call, it->second.text, PrimitiveTypeName(field.type), *why);
      return std::nullopt;
    }
    values.erase(it);
  }
  if (!values.empty()) {
    problem.message = fmt::format(
        "custom call {} has attribute '{}' in its backend_config, which the kernel {} for "
        "\"{}\" does not take ({})",
        call, values.begin()->first, kernel.function, kernel.target,
        kernel.attrs_size > 0 ? kernel.attrs_struct + " " + FieldList(kernel)
                              : std::string("it has no attribute struct"));
    return std::nullopt;
  }
  return bytes;
}

}  // namespace xlac
