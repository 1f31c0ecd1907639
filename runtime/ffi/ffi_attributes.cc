#include "runtime/ffi/ffi_attributes.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <type_traits>

#include "absl/status/status.h"

namespace xlac::ffi {
namespace {

// absl 20220623's StrCat takes absl::string_view, which is not std::string_view: concatenate by hand.
template <typename... Ts>
std::string Cat(const Ts&... parts) {
  std::string out;
  (
      [&] {
        if constexpr (std::is_arithmetic_v<Ts>) {
          out += std::to_string(parts);
        } else if constexpr (std::is_same_v<Ts, absl::string_view>) {
          out.append(parts.data(), parts.size());
        } else {
          out += std::string_view(parts);
        }
      }(),
      ...);
  return out;
}

// The element types an attribute may have, by MLIR spelling.
std::optional<XLA_FFI_DataType> ParseTypeName(std::string_view name) {
  if (name == "i1") return XLA_FFI_DataType_PRED;
  if (name == "i8" || name == "si8") return XLA_FFI_DataType_S8;
  if (name == "i16" || name == "si16") return XLA_FFI_DataType_S16;
  if (name == "i32" || name == "si32") return XLA_FFI_DataType_S32;
  if (name == "i64" || name == "si64" || name == "index") return XLA_FFI_DataType_S64;
  if (name == "ui8") return XLA_FFI_DataType_U8;
  if (name == "ui16") return XLA_FFI_DataType_U16;
  if (name == "ui32") return XLA_FFI_DataType_U32;
  if (name == "ui64") return XLA_FFI_DataType_U64;
  if (name == "f32") return XLA_FFI_DataType_F32;
  if (name == "f64") return XLA_FFI_DataType_F64;
  return std::nullopt;
}

bool IsFloat(XLA_FFI_DataType t) { return t == XLA_FFI_DataType_F32 || t == XLA_FFI_DataType_F64; }

// One number as written: its text kind decides the default type.
struct Number {
  bool is_float = false;
  bool is_hex = false;
  bool negative = false;
  uint64_t magnitude = 0;  // integers (and hex bit patterns)
  double value = 0;        // floats
};

class Parser {
 public:
  explicit Parser(std::string_view text) : text_(text) {}

  absl::StatusOr<FfiAttrMap> ParseTop() {
    SkipSpace();
    if (pos_ == text_.size()) return FfiAttrMap{};
    FfiAttrMap map;
    if (absl::Status s = ParseDict(map); !s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("unexpected text after the dictionary");
    return map;
  }

 private:
  absl::Status Error(std::string_view what) const {
    return absl::InvalidArgumentError(Cat("backend_config: ", what, " at offset ", pos_, " of '",
                                          text_.size() > 120 ? Cat(text_.substr(0, 117), "...") : std::string(text_),
                                          "'"));
  }
  void SkipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Eat(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }
  bool Peek(char c) {
    SkipSpace();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  static bool IsIdentChar(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' || c == '-';
  }
  std::string_view Identifier() {
    SkipSpace();
    size_t begin = pos_;
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    }
    return text_.substr(begin, pos_ - begin);
  }

  absl::Status ParseString(std::string& out) {
    if (!Eat('"')) return Error("expected a string");
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) break;
      char e = text_[pos_++];
      if (e == 'n') {
        out.push_back('\n');
      } else if (e == 't') {
        out.push_back('\t');
      } else if (std::isxdigit(static_cast<unsigned char>(e)) && pos_ < text_.size() &&
                 std::isxdigit(static_cast<unsigned char>(text_[pos_]))) {
        // MLIR's \XX hex escape.
        char hex[3] = {e, text_[pos_++], 0};
        out.push_back(static_cast<char>(std::strtol(hex, nullptr, 16)));
      } else {
        out.push_back(e);  // \" \\ and anything else stands for itself
      }
    }
    if (!Eat('"')) return Error("unterminated string");
    return absl::OkStatus();
  }

  absl::Status ParseDict(FfiAttrMap& map) {
    if (!Eat('{')) return Error("expected '{'");
    if (!Eat('}')) {
      do {
        std::string name;
        bool quoted_key = Peek('"');
        if (quoted_key) {
          if (absl::Status s = ParseString(name); !s.ok()) return s;
        } else {
          name = std::string(Identifier());
          if (name.empty()) return Error("expected an attribute name");
        }
        // MLIR writes `name = value`; JSON `"name": value`.
        if (!Eat('=') && !Eat(':')) {
          return Error(Cat("attribute '", name, "' has no value (unit attributes are not FFI attributes)"));
        }
        FfiAttr attr;
        if (absl::Status s = ParseValue(name, attr); !s.ok()) return s;
        if (std::any_of(map.begin(), map.end(), [&](const auto& kv) { return kv.first == name; })) {
          return Error(Cat("attribute '", name, "' appears twice"));
        }
        map.emplace_back(std::move(name), std::move(attr));
      } while (Eat(','));
      if (!Eat('}')) return Error("expected ',' or '}'");
    }
    // XLA hands attributes to handlers sorted by name, so handlers may binary-search them.
    std::sort(map.begin(), map.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return absl::OkStatus();
  }

  absl::StatusOr<Number> ParseNumber() {
    SkipSpace();
    Number n;
    size_t begin = pos_;
    if (pos_ < text_.size() && (text_[pos_] == '-' || text_[pos_] == '+')) n.negative = text_[pos_++] == '-';
    if (text_.substr(pos_, 2) == "0x" || text_.substr(pos_, 2) == "0X") {
      pos_ += 2;
      size_t digits = pos_;
      while (pos_ < text_.size() && std::isxdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      auto [p, ec] = std::from_chars(text_.data() + digits, text_.data() + pos_, n.magnitude, 16);
      if (ec != std::errc() || pos_ == digits) return Error("invalid hexadecimal number");
      n.is_hex = true;
      return n;
    }
    size_t digits = pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' || text_[pos_] == 'e' ||
            text_[pos_] == 'E' ||
            ((text_[pos_] == '-' || text_[pos_] == '+') && (text_[pos_ - 1] == 'e' || text_[pos_ - 1] == 'E')))) {
      if (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E') n.is_float = true;
      ++pos_;
    }
    if (pos_ == digits) {
      // inf / nan as JSON-ish writers spell them.
      std::string_view word = Identifier();
      if (word == "inf" || word == "infinity") {
        n.is_float = true;
        n.value = n.negative ? -INFINITY : INFINITY;
        return n;
      }
      if (word == "nan") {
        n.is_float = true;
        n.value = NAN;
        return n;
      }
      pos_ = begin;
      return Error("expected a value");
    }
    std::string_view body = text_.substr(digits, pos_ - digits);
    if (n.is_float) {
      std::string copy(body);
      char* end = nullptr;
      n.value = std::strtod(copy.c_str(), &end);
      if (end != copy.c_str() + copy.size()) return Error("invalid number");
      if (n.negative) n.value = -n.value;
    } else {
      auto [p, ec] = std::from_chars(body.data(), body.data() + body.size(), n.magnitude, 10);
      if (ec != std::errc() || p != body.data() + body.size()) return Error("integer out of range");
    }
    return n;
  }

  // An optional `: type` after a scalar.
  absl::StatusOr<std::optional<XLA_FFI_DataType>> ParseOptionalType() {
    size_t save = pos_;
    if (!Eat(':')) return std::optional<XLA_FFI_DataType>();
    std::string_view name = Identifier();
    std::optional<XLA_FFI_DataType> type = ParseTypeName(name);
    if (!type) {
      pos_ = save + 1;
      return Error(
          Cat("unsupported attribute type '", name, "' (FFI attributes are i1, i8..i64, ui8..ui64, f32 or f64)"));
    }
    return type;
  }

  // Stores `n` as one element of `type` at the end of `out`.
  absl::Status AppendElement(const Number& n, XLA_FFI_DataType type, std::vector<uint8_t>& out) {
    auto put = [&out](const auto v) {
      const auto* p = reinterpret_cast<const uint8_t*>(&v);
      out.insert(out.end(), p, p + sizeof(v));
    };
    if (IsFloat(type)) {
      if (n.is_hex) {  // MLIR prints non-finite floats as their bit pattern
        if (type == XLA_FFI_DataType_F32) {
          put(static_cast<uint32_t>(n.magnitude));
        } else {
          put(n.magnitude);
        }
        return absl::OkStatus();
      }
      double v = n.is_float ? n.value : (n.negative ? -static_cast<double>(n.magnitude) : n.magnitude);
      if (type == XLA_FFI_DataType_F32) {
        put(static_cast<float>(v));
      } else {
        put(v);
      }
      return absl::OkStatus();
    }
    if (n.is_float) return Error("a floating-point value needs a float type");
    const bool is_unsigned = type == XLA_FFI_DataType_U8 || type == XLA_FFI_DataType_U16 ||
                             type == XLA_FFI_DataType_U32 || type == XLA_FFI_DataType_U64;
    if (is_unsigned && n.negative && n.magnitude != 0) return Error("negative value for an unsigned type");
    if (!is_unsigned && n.magnitude > (n.negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1)) {
      return Error("integer out of range");
    }
    const int64_t s = n.negative ? static_cast<int64_t>(0 - n.magnitude) : static_cast<int64_t>(n.magnitude);
    auto fits = [&](int64_t lo, int64_t hi) {
      return is_unsigned ? n.magnitude <= static_cast<uint64_t>(hi) : s >= lo && s <= hi;
    };
    switch (type) {
      case XLA_FFI_DataType_PRED:
        if (!fits(0, 1) && !fits(-1, 0)) return Error("an i1 value must be 0 or 1");
        put(static_cast<uint8_t>(s != 0));
        return absl::OkStatus();
      case XLA_FFI_DataType_S8:
        if (!fits(INT8_MIN, INT8_MAX)) return Error("value out of range for i8");
        put(static_cast<int8_t>(s));
        return absl::OkStatus();
      case XLA_FFI_DataType_S16:
        if (!fits(INT16_MIN, INT16_MAX)) return Error("value out of range for i16");
        put(static_cast<int16_t>(s));
        return absl::OkStatus();
      case XLA_FFI_DataType_S32:
        if (!fits(INT32_MIN, INT32_MAX)) return Error("value out of range for i32");
        put(static_cast<int32_t>(s));
        return absl::OkStatus();
      case XLA_FFI_DataType_S64:
        put(s);
        return absl::OkStatus();
      case XLA_FFI_DataType_U8:
        if (!fits(0, UINT8_MAX)) return Error("value out of range for ui8");
        put(static_cast<uint8_t>(n.magnitude));
        return absl::OkStatus();
      case XLA_FFI_DataType_U16:
        if (!fits(0, UINT16_MAX)) return Error("value out of range for ui16");
        put(static_cast<uint16_t>(n.magnitude));
        return absl::OkStatus();
      case XLA_FFI_DataType_U32:
        if (!fits(0, UINT32_MAX)) return Error("value out of range for ui32");
        put(static_cast<uint32_t>(n.magnitude));
        return absl::OkStatus();
      case XLA_FFI_DataType_U64:
        put(n.magnitude);
        return absl::OkStatus();
      default:
        return Error("unsupported attribute type");
    }
  }

  // true / false, or a number with an optional type.
  absl::Status ParseScalar(FfiAttr& attr, std::optional<XLA_FFI_DataType> forced) {
    SkipSpace();
    attr.kind = FfiAttr::Kind::kScalar;
    for (std::string_view word : {"true", "false"}) {
      if (text_.substr(pos_, word.size()) == word &&
          (pos_ + word.size() == text_.size() || !IsIdentChar(text_[pos_ + word.size()]))) {
        pos_ += word.size();
        attr.dtype = XLA_FFI_DataType_PRED;
        attr.bytes = {static_cast<uint8_t>(word == "true")};
        return absl::OkStatus();
      }
    }
    absl::StatusOr<Number> n = ParseNumber();
    if (!n.ok()) return n.status();
    absl::StatusOr<std::optional<XLA_FFI_DataType>> type = ParseOptionalType();
    if (!type.ok()) return type.status();
    XLA_FFI_DataType t = type->has_value() ? **type
                         : forced          ? *forced
                                           : (n->is_float ? XLA_FFI_DataType_F64 : XLA_FFI_DataType_S64);
    attr.dtype = t;
    return AppendElement(*n, t, attr.bytes);
  }

  // `array<i32: 1, 2>`: MLIR's dense array attribute.
  absl::Status ParseDenseArray(FfiAttr& attr) {
    if (!Eat('<')) return Error("expected '<' after 'array'");
    std::string_view name = Identifier();
    std::optional<XLA_FFI_DataType> type = ParseTypeName(name);
    if (!type || *type == XLA_FFI_DataType_PRED || name == "index") {
      return Error(Cat("unsupported dense array element type '", name, "' (i8..i64, f32 or f64)"));
    }
    attr.kind = FfiAttr::Kind::kArray;
    attr.dtype = *type;
    if (Eat(':')) {
      do {
        absl::StatusOr<Number> n = ParseNumber();
        if (!n.ok()) return n.status();
        if (absl::Status s = AppendElement(*n, *type, attr.bytes); !s.ok()) return s;
        ++attr.count;
      } while (Eat(','));
    }
    if (!Eat('>')) return Error("expected ',' or '>' in the dense array");
    return absl::OkStatus();
  }

  // Numbers of a `dense<...>` or `[...]` list, flattened.
  absl::Status ParseNumberList(std::vector<Number>& out, bool& typed, XLA_FFI_DataType& type) {
    if (Eat('[')) {
      if (Eat(']')) return absl::OkStatus();
      do {
        if (absl::Status s = ParseNumberList(out, typed, type); !s.ok()) return s;
      } while (Eat(','));
      if (!Eat(']')) return Error("expected ',' or ']'");
      return absl::OkStatus();
    }
    SkipSpace();
    if (text_.substr(pos_, 4) == "true" || text_.substr(pos_, 5) == "false") {
      return Error("arrays of booleans are not FFI attributes");
    }
    absl::StatusOr<Number> parsed = ParseNumber();
    if (!parsed.ok()) return parsed.status();
    absl::StatusOr<std::optional<XLA_FFI_DataType>> t = ParseOptionalType();
    if (!t.ok()) return t.status();
    if (t->has_value()) {
      if (typed && type != **t) return Error("array elements of different types");
      typed = true;
      type = **t;
    }
    out.push_back(*parsed);
    return absl::OkStatus();
  }

  absl::Status FillArray(FfiAttr& attr, const std::vector<Number>& numbers, XLA_FFI_DataType type) {
    if (type == XLA_FFI_DataType_PRED) return Error("arrays of booleans are not FFI attributes");
    attr.kind = FfiAttr::Kind::kArray;
    attr.dtype = type;
    attr.count = numbers.size();
    for (const Number& n : numbers) {
      if (absl::Status s = AppendElement(n, type, attr.bytes); !s.ok()) return s;
    }
    return absl::OkStatus();
  }

  // `dense<[1, 2]> : tensor<2xi32>` (or a splat `dense<1> : tensor<3xi32>`): a flat array.
  absl::Status ParseDenseElements(FfiAttr& attr) {
    if (!Eat('<')) return Error("expected '<' after 'dense'");
    std::vector<Number> numbers;
    bool typed = false;
    XLA_FFI_DataType type = XLA_FFI_DataType_INVALID;
    const bool splat = !Peek('[');
    if (absl::Status s = ParseNumberList(numbers, typed, type); !s.ok()) return s;
    if (!Eat('>') || !Eat(':')) return Error("expected '> : tensor<...>' after the dense elements");
    if (Identifier() != "tensor" || !Eat('<')) return Error("expected 'tensor<...>'");
    SkipSpace();
    int64_t elements = 1;
    std::string_view element_name;
    while (true) {
      size_t begin = pos_;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
      if (pos_ > begin && pos_ < text_.size() && text_[pos_] == 'x') {
        elements *= std::strtoll(std::string(text_.substr(begin, pos_ - begin)).c_str(), nullptr, 10);
        ++pos_;
        continue;
      }
      pos_ = begin;
      element_name = Identifier();
      break;
    }
    std::optional<XLA_FFI_DataType> t = ParseTypeName(element_name);
    if (!t) return Error(Cat("unsupported dense element type '", element_name, "'"));
    if (!Eat('>')) return Error("expected '>' after the tensor type");
    if (splat && numbers.size() == 1) numbers.assign(static_cast<size_t>(elements), numbers[0]);
    if (static_cast<int64_t>(numbers.size()) != elements) return Error("dense elements do not match the tensor type");
    return FillArray(attr, numbers, *t);
  }

  absl::Status ParseValue(std::string_view name, FfiAttr& attr) {
    SkipSpace();
    if (pos_ >= text_.size()) return Error("expected a value");
    const char c = text_[pos_];
    if (c == '"') {
      attr.kind = FfiAttr::Kind::kString;
      return ParseString(attr.str);
    }
    if (c == '{') {
      attr.kind = FfiAttr::Kind::kDictionary;
      attr.dict = std::make_shared<FfiAttrMap>();
      return ParseDict(*attr.dict);
    }
    if (c == '[') {
      std::vector<Number> numbers;
      bool typed = false;
      XLA_FFI_DataType type = XLA_FFI_DataType_INVALID;
      if (absl::Status s = ParseNumberList(numbers, typed, type); !s.ok()) return s;
      if (!typed) {
        const bool any_float = std::any_of(numbers.begin(), numbers.end(), [](const Number& n) { return n.is_float; });
        type = any_float ? XLA_FFI_DataType_F64 : XLA_FFI_DataType_S64;
      }
      return FillArray(attr, numbers, type);
    }
    size_t save = pos_;
    std::string_view word = Identifier();
    if (word == "array") return ParseDenseArray(attr);
    if (word == "dense") return ParseDenseElements(attr);
    pos_ = save;
    const bool numeric = std::isdigit(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.';
    if (word == "true" || word == "false" || (word.empty() && numeric) || word == "inf" || word == "nan") {
      return ParseScalar(attr, std::nullopt);
    }
    return Error(Cat("unsupported value for attribute '", name, "'"));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<FfiAttrMap> ParseFfiAttributes(std::string_view backend_config) {
  return Parser(backend_config).ParseTop();
}

size_t FfiDataTypeBytes(XLA_FFI_DataType dtype) {
  switch (dtype) {
    case XLA_FFI_DataType_PRED:
    case XLA_FFI_DataType_S8:
    case XLA_FFI_DataType_U8:
      return 1;
    case XLA_FFI_DataType_S16:
    case XLA_FFI_DataType_U16:
      return 2;
    case XLA_FFI_DataType_S32:
    case XLA_FFI_DataType_U32:
    case XLA_FFI_DataType_F32:
      return 4;
    case XLA_FFI_DataType_S64:
    case XLA_FFI_DataType_U64:
    case XLA_FFI_DataType_F64:
      return 8;
    default:
      return 0;
  }
}

// The structs of one dictionary level. Vectors are sized before any pointer into them is taken.
struct EncodedFfiAttrs::Level {
  XLA_FFI_Attrs attrs{};
  std::vector<XLA_FFI_AttrType> types;
  std::vector<XLA_FFI_ByteSpan> name_spans;
  std::vector<XLA_FFI_ByteSpan*> names;
  std::vector<void*> values;
  std::vector<XLA_FFI_Scalar> scalars;
  std::vector<XLA_FFI_Array> arrays;
  std::vector<XLA_FFI_ByteSpan> strings;
};

EncodedFfiAttrs::EncodedFfiAttrs(FfiAttrMap attrs) : map_(std::move(attrs)) { root_ = Encode(map_); }
EncodedFfiAttrs::~EncodedFfiAttrs() = default;

XLA_FFI_Attrs* EncodedFfiAttrs::Encode(FfiAttrMap& map) {
  auto level = std::make_unique<Level>();
  Level& l = *level;
  levels_.push_back(std::move(level));
  const size_t n = map.size();
  l.types.resize(n);
  l.name_spans.resize(n);
  l.names.resize(n);
  l.values.resize(n);
  l.scalars.resize(n);
  l.arrays.resize(n);
  l.strings.resize(n);
  for (size_t i = 0; i < n; ++i) {
    auto& [name, attr] = map[i];
    l.name_spans[i] = XLA_FFI_ByteSpan{name.data(), name.size()};
    l.names[i] = &l.name_spans[i];
    switch (attr.kind) {
      case FfiAttr::Kind::kScalar:
        l.types[i] = XLA_FFI_AttrType_SCALAR;
        l.scalars[i] = XLA_FFI_Scalar{attr.dtype, attr.bytes.data()};
        l.values[i] = &l.scalars[i];
        break;
      case FfiAttr::Kind::kArray:
        l.types[i] = XLA_FFI_AttrType_ARRAY;
        l.arrays[i] = XLA_FFI_Array{attr.dtype, attr.count, attr.bytes.data()};
        l.values[i] = &l.arrays[i];
        break;
      case FfiAttr::Kind::kString:
        l.types[i] = XLA_FFI_AttrType_STRING;
        l.strings[i] = XLA_FFI_ByteSpan{attr.str.data(), attr.str.size()};
        l.values[i] = &l.strings[i];
        break;
      case FfiAttr::Kind::kDictionary:
        l.types[i] = XLA_FFI_AttrType_DICTIONARY;
        l.values[i] = Encode(*attr.dict);
        break;
    }
  }
  l.attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  l.attrs.extension_start = nullptr;
  l.attrs.size = static_cast<int64_t>(n);
  l.attrs.types = l.types.data();
  l.attrs.names = l.names.data();
  l.attrs.attrs = l.values.data();
  return &l.attrs;
}

}  // namespace xlac::ffi
