// dense<...> : tensor<...> literals and array<type: ...> attributes.
//
// Element syntax: integers (decimal or 0x bit patterns for floats), floats (1.5, 1.0E-3), true/false, complex
// pairs (re, im), nested lists that must be rectangular and match the tensor shape, a single element (splat), and
// hex blobs "0x..." holding the raw little-endian storage (one byte per element for sub-byte types, interleaved
// real/imaginary parts for complex types; a blob of exactly one element is a splat). i1 blobs come bit-packed as MLIR
// writes them, or one byte per element.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <complex>
#include <cstring>
#include <functional>
#include <limits>

#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"
#include "ir/float_types.h"

namespace xlac::shlo {
namespace {

// One scalar token of a dense literal, kept as a view into the source text (large literals hold millions).
struct DenseScalar {
  std::string_view text;
  size_t pos = 0;
  Tok kind = Tok::kInt;  // kInt, kFloat, or kBareId for true/false
  bool negative = false;
};

struct DenseElement {
  DenseScalar parts[2];
  bool is_complex = false;
  size_t pos = 0;
};

bool HexDigitValue(char c, uint8_t* out) {
  if (c >= '0' && c <= '9') {
    *out = static_cast<uint8_t>(c - '0');
  } else if (c >= 'a' && c <= 'f') {
    *out = static_cast<uint8_t>(c - 'a' + 10);
  } else if (c >= 'A' && c <= 'F') {
    *out = static_cast<uint8_t>(c - 'A' + 10);
  } else {
    return false;
  }
  return true;
}

bool ParseUnsigned(std::string_view text, uint64_t* out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

bool IsHexText(std::string_view text) {
  return text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
}

// Keeps sub-byte values in the form the Literal stores them: sign-extended for signed types, masked otherwise.
uint64_t NormalizeSubByte(PrimitiveType type, uint64_t bits) {
  const int width = BitWidth(type);
  if (width >= 8) return bits;
  const uint64_t mask = (uint64_t{1} << width) - 1;
  bits &= mask;
  if (IsSignedIntegralType(type) && (bits >> (width - 1)) != 0) bits |= ~mask;
  return bits & 0xff;
}

}  // namespace

// The element conversion: one scalar into literal element `index` (component `part` for complex).
class DenseBuilder {
 public:
  DenseBuilder(Parser* p, const Type& type, Literal* literal) : p_(p), type_(type), literal_(literal) {}

  bool Store(const DenseScalar& s, int64_t index, int part) {
    const PrimitiveType element = type_.element;
    const PrimitiveType component = ComplexComponentType(element);
    uint8_t* dst = literal_->mutable_raw_data() + index * ByteWidth(element);
    if (IsPredType(element)) {
      if (s.kind == Tok::kBareId) {
        dst[0] = s.text == "true" ? 1 : 0;
        return true;
      }
      uint64_t v = 0;
      if (s.kind != Tok::kInt || s.negative || !ParseUnsigned(s.text, &v) || v > 1) {
        return p_->Error(s.pos, fmt::format("expected a boolean value for {}", TypeToString(type_)));
      }
      dst[0] = static_cast<uint8_t>(v);
      return true;
    }
    if (IsIntegralType(element)) {
      uint64_t magnitude = 0;
      if (s.kind == Tok::kBareId) {
        magnitude = s.text == "true" ? 1 : 0;
      } else if (s.kind != Tok::kInt || !ParseUnsigned(s.text, &magnitude)) {
        return p_->Error(s.pos, fmt::format("expected an integer value for {}", TypeToString(type_)));
      }
      const int width = BitWidth(element);
      uint64_t bits;
      bool in_range;
      if (IsSignedIntegralType(element)) {
        const uint64_t max_positive = (uint64_t{1} << (width - 1)) - 1;
        in_range = s.negative ? magnitude <= max_positive + 1 : magnitude <= max_positive;
        bits = s.negative ? 0 - magnitude : magnitude;
      } else {
        const uint64_t max = width == 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << width) - 1;
        in_range = !s.negative && magnitude <= max;
        bits = magnitude;
      }
      if (!in_range) {
        return p_->Error(s.pos, fmt::format("integer value {}{} is out of range for {}", s.negative ? "-" : "", s.text,
                                            PrimitiveTypeName(element)));
      }
      bits = NormalizeSubByte(element, bits);
      std::memcpy(dst, &bits, static_cast<size_t>(ByteWidth(element)));
      return true;
    }
    // Floating point, possibly a complex component.
    const int64_t component_width = ByteWidth(component);
    dst += part * component_width;
    if (s.kind == Tok::kBareId) return p_->Error(s.pos, fmt::format("expected a number for {}", TypeToString(type_)));
    if (s.kind == Tok::kInt && IsHexText(s.text)) {
      // A bit pattern.
      uint64_t bits = 0;
      if (s.negative || !ParseUnsigned(s.text, &bits) ||
          (BitWidth(component) < 64 && bits >> BitWidth(component) != 0)) {
        return p_->Error(s.pos,
                         fmt::format("hexadecimal value {} does not fit {}", s.text, PrimitiveTypeName(component)));
      }
      std::memcpy(dst, &bits, static_cast<size_t>(component_width));
      return true;
    }
    double value = 0;
    if (component == PrimitiveType::kF32) {
      // Parse straight to float: decimal -> double -> float can round twice.
      float f = 0;
      auto [ptr, ec] = std::from_chars(s.text.data(), s.text.data() + s.text.size(), f);
      if (ec == std::errc::result_out_of_range) {
        f = std::strtof(std::string(s.text).c_str(), nullptr);
        if (std::isinf(f)) return p_->Error(s.pos, fmt::format("value {} overflows f32", s.text));
      } else if (ec != std::errc()) {
        return p_->Error(s.pos, fmt::format("invalid number {}", s.text));
      }
      if (s.negative) f = -f;
      std::memcpy(dst, &f, sizeof(f));
      return true;
    }
    auto [ptr, ec] = std::from_chars(s.text.data(), s.text.data() + s.text.size(), value);
    if (ec == std::errc::result_out_of_range) {
      value = std::strtod(std::string(s.text).c_str(), nullptr);
    } else if (ec != std::errc()) {
      return p_->Error(s.pos, fmt::format("invalid number {}", s.text));
    }
    if (s.negative) value = -value;
    if (component == PrimitiveType::kF64) {
      if (std::isinf(value)) return p_->Error(s.pos, fmt::format("value {} overflows f64", s.text));
      std::memcpy(dst, &value, sizeof(value));
      return true;
    }
    if (OverflowsFloatType(component, value)) {
      return p_->Error(
          s.pos, fmt::format("value {}{} overflows {}", s.negative ? "-" : "", s.text, PrimitiveTypeName(component)));
    }
    uint64_t bits = DoubleToFloatBits(component, value);
    std::memcpy(dst, &bits, static_cast<size_t>(component_width));
    return true;
  }

  bool StoreElement(const DenseElement& e, int64_t index) {
    if (IsComplexType(type_.element)) {
      if (!e.is_complex) {
        // MLIR requires (re, im) for complex elements; a bare real is read as (re, 0) like XLA's literals.
        if (!Store(e.parts[0], index, 0)) return false;
        DenseScalar zero;
        zero.kind = Tok::kFloat;
        zero.text = "0.0";
        zero.pos = e.pos;
        return Store(zero, index, 1);
      }
      return Store(e.parts[0], index, 0) && Store(e.parts[1], index, 1);
    }
    if (e.is_complex) {
      return p_->Error(e.pos, fmt::format("complex value for the non-complex type {}", TypeToString(type_)));
    }
    return Store(e.parts[0], index, 0);
  }

 private:
  Parser* p_;
  const Type& type_;
  Literal* literal_;
};

bool Parser::ParseDenseAttr(size_t start, AttrPtr* out) {
  // Current token: '<'.
  Next();
  std::vector<DenseElement> flat;
  std::vector<int64_t> list_dims;  // sizes seen at each nesting depth
  int64_t leaf_depth = -1;
  bool is_list = false;
  bool hex_blob = false;
  std::string blob_text;
  size_t blob_pos = 0;

  auto parse_scalar = [&](DenseScalar* s) -> bool {
    s->pos = pos();
    s->negative = Eat(Tok::kMinus);
    if (kind() == Tok::kInt || kind() == Tok::kFloat) {
      s->kind = kind();
      s->text = Source(tok().begin, tok().end);
      Next();
      return true;
    }
    if (!s->negative && (IsKeyword("true") || IsKeyword("false"))) {
      s->kind = Tok::kBareId;
      s->text = Source(tok().begin, tok().end);
      Next();
      return true;
    }
    return TokenError(fmt::format("expected a dense element value, but found {}", DescribeToken()));
  };
  auto parse_element = [&](int64_t depth) -> bool {
    if (leaf_depth >= 0 && leaf_depth != depth) return TokenError("dense elements are nested inconsistently");
    leaf_depth = depth;
    DenseElement e;
    e.pos = pos();
    if (Eat(Tok::kLParen)) {
      e.is_complex = true;
      if (!parse_scalar(&e.parts[0]) || !Expect(Tok::kComma, "in a complex value") || !parse_scalar(&e.parts[1]) ||
          !Expect(Tok::kRParen, "to end a complex value")) {
        return false;
      }
    } else if (!parse_scalar(&e.parts[0])) {
      return false;
    }
    // Text elements cost ~40 bytes each before the type is known; real literals this big use hex blobs.
    if (static_cast<int64_t>(flat.size()) * 64 > options_.max_literal_bytes) {
      return Error(e.pos, "dense literal is too large");
    }
    flat.push_back(std::move(e));
    return true;
  };
  std::function<bool(int64_t)> parse_list = [&](int64_t depth) -> bool {
    DepthGuard guard(this);
    if (!guard.ok()) return DepthExceeded();
    const size_t list_pos = pos();
    Next();  // '['
    int64_t count = 0;
    if (kind() != Tok::kRSquare) {
      do {
        if (kind() == Tok::kLSquare) {
          if (leaf_depth >= 0 && leaf_depth <= depth) return TokenError("dense elements are nested inconsistently");
          if (!parse_list(depth + 1)) return false;
        } else if (!parse_element(depth + 1)) {
          return false;
        }
        ++count;
      } while (Eat(Tok::kComma));
    }
    if (!Expect(Tok::kRSquare, "to end a dense list")) return false;
    if (static_cast<int64_t>(list_dims.size()) <= depth) list_dims.resize(static_cast<size_t>(depth) + 1, -1);
    if (list_dims[depth] == -1) {
      list_dims[depth] = count;
    } else if (list_dims[depth] != count) {
      return Error(list_pos,
                   fmt::format("dense list has {} elements, but a sibling list has {}", count, list_dims[depth]));
    }
    return true;
  };

  if (kind() == Tok::kString) {
    hex_blob = true;
    blob_text = tok().str;
    blob_pos = pos();
    Next();
  } else if (kind() == Tok::kLSquare) {
    is_list = true;
    if (!parse_list(0)) return false;
  } else if (kind() != Tok::kGreater) {
    if (!parse_element(0)) return false;
  }
  if (!Expect(Tok::kGreater, "to end the dense literal") || !Expect(Tok::kColon, "before the dense literal type")) {
    return false;
  }
  const size_t type_pos = pos();
  Type type;
  if (!ParseType(&type)) return false;
  if (type.quantized && !type.quant) return Error(type_pos, "quantized types are not supported");
  if (type.kind != Type::Kind::kTensor || type.element == PrimitiveType::kInvalid) {
    return Error(type_pos, fmt::format("expected a tensor type for the dense literal, but found {}", type.text));
  }
  if (type.IsDynamic()) return Error(type_pos, "a dense literal needs a static shape");

  Shape shape(type.element, type.dims);
  std::optional<int64_t> bytes = shape.ByteSizeOf();
  std::optional<int64_t> count = shape.ElementCount();
  if (!bytes.has_value() || !count.has_value() || *bytes > options_.max_literal_bytes) {
    return Error(type_pos, fmt::format("dense literal of type {} is too large", type.text));
  }
  auto literal = std::make_shared<Literal>(shape);
  const int64_t width = ByteWidth(type.element);

  if (hex_blob) {
    if (blob_text.size() < 2 || blob_text[0] != '0' || (blob_text[1] != 'x' && blob_text[1] != 'X')) {
      return Error(blob_pos, "expected a hex string \"0x...\" in dense<...> (string tensors are not supported)");
    }
    std::string_view digits = std::string_view(blob_text).substr(2);
    if (digits.size() % 2 != 0) return Error(blob_pos, "hex string has an odd number of digits");
    const int64_t blob_bytes = static_cast<int64_t>(digits.size() / 2);
    const bool splat = blob_bytes == width && *count != 1;
    // MLIR stores i1 bit-packed, LSB first (ceil(n/8) bytes; one byte 0x00 or 0xFF is a splat); other producers
    // write one byte per element. The size tells them apart except for one byte, where MLIR's reading wins.
    const bool bit_packed = IsPredType(type.element) && blob_bytes == (*count + 7) / 8 && blob_bytes != *bytes;
    if (blob_bytes != *bytes && !splat && !bit_packed) {
      if (IsPredType(type.element)) {
        return Error(blob_pos, fmt::format("hex string has {} bytes, but {} needs {} (one per element) or {} "
                                           "(bit-packed)",
                                           blob_bytes, type.text, *bytes, (*count + 7) / 8));
      }
      return Error(blob_pos, fmt::format("hex string has {} bytes, but {} needs {}", blob_bytes, type.text, *bytes));
    }
    std::vector<uint8_t> raw(static_cast<size_t>(blob_bytes));
    for (size_t i = 0; i < raw.size(); ++i) {
      uint8_t hi, lo;
      if (!HexDigitValue(digits[2 * i], &hi) || !HexDigitValue(digits[2 * i + 1], &lo)) {
        return Error(blob_pos, "invalid hex digit in dense string");
      }
      raw[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    if (bit_packed) {
      std::vector<uint8_t> bits(static_cast<size_t>(*count));
      for (size_t i = 0; i < bits.size(); ++i) bits[i] = (raw[i / 8] >> (i % 8)) & 1;
      raw = std::move(bits);
    } else if (IsPredType(type.element)) {
      for (uint8_t& b : raw) b = b != 0 ? 1 : 0;
    } else if (BitWidth(type.element) < 8) {
      for (uint8_t& b : raw) b = static_cast<uint8_t>(NormalizeSubByte(type.element, b));
    }
    uint8_t* dst = literal->mutable_raw_data();
    if (splat && !bit_packed) {
      for (int64_t i = 0; i < *count; ++i) std::memcpy(dst + i * width, raw.data(), static_cast<size_t>(width));
    } else if (!raw.empty()) {
      std::memcpy(dst, raw.data(), raw.size());
    }
  } else {
    DenseBuilder builder(this, type, literal.get());
    if (!is_list) {
      if (flat.empty()) {
        if (*count != 0)
          return Error(start, fmt::format("empty dense literal for {} with {} elements", type.text, *count));
      } else {
        // Splat.
        if (*count > 0) {
          if (!builder.StoreElement(flat[0], 0)) return false;
          for (int64_t i = 1; i < *count; ++i) {
            std::memcpy(literal->mutable_raw_data() + i * width, literal->raw_data(), static_cast<size_t>(width));
          }
        }
      }
    } else {
      // Nested lists: the discovered dims must be the tensor's.
      std::vector<int64_t> dims = list_dims;
      if (leaf_depth > static_cast<int64_t>(dims.size())) dims.resize(static_cast<size_t>(leaf_depth), 0);
      // `[[], []]` for a tensor<2x0x3xf32> lists only the dims up to the empty one.
      const bool empty_prefix = flat.empty() && *count == 0 && !dims.empty() && dims.back() == 0 &&
                                dims.size() <= type.dims.size() &&
                                std::equal(dims.begin(), dims.end(), type.dims.begin());
      if (dims != type.dims && !empty_prefix) {
        std::string seen;
        for (size_t i = 0; i < dims.size(); ++i) seen += fmt::format("{}{}", i ? "x" : "", dims[i]);
        return Error(start, fmt::format("dense literal has shape [{}], but its type is {}", seen, type.text));
      }
      if (static_cast<int64_t>(flat.size()) != *count) {
        return Error(start,
                     fmt::format("dense literal has {} elements, but {} needs {}", flat.size(), type.text, *count));
      }
      for (int64_t i = 0; i < *count; ++i) {
        if (!builder.StoreElement(flat[static_cast<size_t>(i)], i)) return false;
      }
    }
  }
  auto attr = std::make_shared<Attr>();
  attr->kind = Attr::Kind::kDense;
  attr->pos = start;
  attr->type = std::move(type);
  attr->dense = std::move(literal);
  *out = std::move(attr);
  return true;
}

// dense_resource<key> : tensor<...>: the blob of `key` in the file's dialect_resources (parse_resources.cc) is a
// 4-byte alignment followed by the little-endian elements (one byte per i1).
bool Parser::ParseDenseResourceAttr(size_t start, AttrPtr* out) {
  Next();  // '<'
  const size_t key_pos = pos();
  if (kind() != Tok::kBareId && kind() != Tok::kString) {
    return TokenError(fmt::format("expected a resource name in dense_resource<...>, but found {}", DescribeToken()));
  }
  const std::string key = tok().str;
  Next();
  if (!Expect(Tok::kGreater, "to end dense_resource<...>") || !Expect(Tok::kColon, "before the dense_resource type")) {
    return false;
  }
  const size_t type_pos = pos();
  Type type;
  if (!ParseType(&type)) return false;
  if (type.quantized && !type.quant) return Error(type_pos, "quantized types are not supported");
  if (type.kind != Type::Kind::kTensor || type.element == PrimitiveType::kInvalid || type.IsDynamic()) {
    return Error(type_pos, fmt::format("expected a static tensor type for dense_resource, but found {}", type.text));
  }
  Shape shape(type.element, type.dims);
  std::optional<int64_t> bytes = shape.ByteSizeOf();
  if (!bytes.has_value() || *bytes > options_.max_literal_bytes) {
    return Error(type_pos, fmt::format("dense_resource of type {} is too large", type.text));
  }
  auto it = resource_blobs_.find(key);
  if (it == resource_blobs_.end()) {
    // Values left out of the print are unknown, as HLO's elided `constant({...})`: xla-run and the interpreter give
    // them seeded values. MLIR prints large dense<> literals as dense_resource<__elided__>
    // (--mlir-elide-elementsattrs-if-larger), and with --mlir-elide-resource-strings-if-larger keeps the key but
    // leaves the blob out of the {-# dialect_resources #-} section, which it still prints (empty if need be). A
    // named resource in a file without that section was never printed with its file: that is an error.
    if (key != "__elided__") {
      if (resource_sections_.empty()) {
        return Error(key_pos, fmt::format("dense_resource<{}> has no blob in the file's dialect_resources: the file "
                                          "has no {{-# dialect_resources #-}} section",
                                          key));
      }
      if (!elided_resource_warned_) {
        elided_resource_warned_ = true;
        diags_.Report(Severity::kWarning, Loc(key_pos),
                      fmt::format("dense_resource<{}> has no blob in the file's dialect_resources: taken as elided "
                                  "when the file was printed (--mlir-elide-resource-strings-if-larger), its values "
                                  "are unknown",
                                  key));
      }
    }
    auto attr = std::make_shared<Attr>();
    attr->kind = Attr::Kind::kDense;
    attr->pos = start;
    attr->type = std::move(type);
    attr->dense = std::make_shared<Literal>(Literal::CreateUnknown(shape));
    *out = std::move(attr);
    return true;
  }
  const std::string_view digits = it->second.hex;
  if (digits.size() % 2 != 0 || digits.size() < 8 || static_cast<int64_t>(digits.size() / 2 - 4) != *bytes) {
    return Error(key_pos, fmt::format("resource {} holds {} bytes after its alignment, but {} needs {}", key,
                                      digits.size() >= 8 ? (digits.size() - 8) / 2 : 0, type.text, *bytes));
  }
  auto literal = std::make_shared<Literal>(shape);
  uint8_t* dst = literal->mutable_raw_data();
  for (int64_t i = 0; i < *bytes; ++i) {
    uint8_t hi, lo;
    if (!HexDigitValue(digits[8 + 2 * i], &hi) || !HexDigitValue(digits[9 + 2 * i], &lo)) {
      return Error(it->second.pos, fmt::format("invalid hex digit in resource {}", key));
    }
    uint8_t b = static_cast<uint8_t>(hi * 16 + lo);
    if (IsPredType(type.element)) {
      b = b != 0 ? 1 : 0;
    } else if (BitWidth(type.element) < 8) {
      b = static_cast<uint8_t>(NormalizeSubByte(type.element, b));
    }
    dst[i] = b;
  }
  auto attr = std::make_shared<Attr>();
  attr->kind = Attr::Kind::kDense;
  attr->pos = start;
  attr->type = std::move(type);
  attr->dense = std::move(literal);
  *out = std::move(attr);
  return true;
}

// array<i64: 1, 2>, array<i1: true, false>, array<f32: 1.0>, array<i64>
bool Parser::ParseDenseArrayAttr(size_t start, AttrPtr* out) {
  Next();  // '<'
  auto attr = std::make_shared<Attr>();
  attr->kind = Attr::Kind::kDenseArray;
  attr->pos = start;
  attr->type.emplace();
  const size_t type_pos = pos();
  if (!ParseType(&*attr->type)) return false;
  if (!attr->type->is_scalar_type) return Error(type_pos, "expected a scalar element type in array<...>");
  if (Eat(Tok::kColon)) {
    do {
      AttrPtr element;
      if (!ParseAttribute(&element, /*allow_type_suffix=*/false)) return false;
      if (element->kind != Attr::Kind::kInt && element->kind != Attr::Kind::kFloat &&
          element->kind != Attr::Kind::kBool) {
        return Error(element->pos, "expected a number or boolean in array<...>");
      }
      attr->elements.push_back(std::move(element));
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kGreater, "to end the array attribute")) return false;
  *out = std::move(attr);
  return true;
}

}  // namespace xlac::shlo
