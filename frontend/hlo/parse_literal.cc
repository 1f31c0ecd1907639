// Literals: scalars, nested arrays { {1,2}, {3,4} }, complex (1, 2), tuples ( {1}, 2 ), elided {...}.
// Values are range-checked like XLA's parser (integers against their type, floats against overflow, NaN payloads
// against the type's payload bits). Memory is only committed as elements are actually read, so a huge shape
// written with few elements is a dimension mismatch, never a huge allocation.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"
#include "ir/float_types.h"

namespace xlac::hlo {
namespace {

constexpr uint64_t kDoubleMantissaMask = (uint64_t{1} << 52) - 1;
constexpr uint64_t kDoubleQuietBit = uint64_t{1} << 51;

void AppendBits(std::vector<uint8_t>* bytes, uint64_t bits, int64_t width) {
  uint8_t buffer[8];
  std::memcpy(buffer, &bits, sizeof(bits));  // little-endian host: the low `width` bytes come first
  bytes->insert(bytes->end(), buffer, buffer + width);
}

std::string TypeName(PrimitiveType type) { return std::string(PrimitiveTypeName(type)); }

}  // namespace

bool Parser::ParseLiteral(const Shape& shape, Literal* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  if (shape.IsTuple()) {
    if (!Expect(TokKind::kLparen, "to start a tuple literal")) return false;
    std::vector<Literal> elements;
    elements.reserve(shape.tuple_shapes.size());
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i > 0 && !Expect(TokKind::kComma, "to separate tuple literal elements")) return false;
      elements.emplace_back();
      if (!ParseLiteral(shape.tuple_shapes[i], &elements.back())) return false;
    }
    if (!Expect(TokKind::kRparen,
                fmt::format("at the end of a tuple literal with {} elements", shape.tuple_shapes.size()))) {
      return false;
    }
    *out = Literal::CreateTuple(std::move(elements));
    return true;
  }
  if (!shape.IsArray()) {
    return TokenError(fmt::format("literals of type {} are not supported", TypeName(shape.element_type)));
  }

  const PrimitiveType type = shape.element_type;
  const int64_t rank = shape.rank();
  const size_t literal_pos = pos();
  std::optional<int64_t> element_count = shape.ElementCount();
  if (!element_count.has_value()) {
    return TokenError("a literal cannot have an unbounded dynamic dimension or more than 2^63 elements");
  }
  const int64_t width = ByteWidth(type);
  std::vector<uint8_t> bytes;
  std::vector<int64_t> seen(static_cast<size_t>(rank), 0);
  int64_t nest = 0;
  int64_t values_read = 0;
  bool elided = false;

  auto index_string = [&](int64_t dim) {
    std::string s = "[";
    for (int64_t i = 0; i < dim; ++i) s += fmt::format("{}{}", i > 0 ? "," : "", seen[i] - 1);
    return s + "]";
  };
  // Accounts for one scalar element at the current nesting level.
  bool scalar_for_array = false;
  auto add_element = [&]() {
    if (rank == 0) {
      if (values_read > 0) return TokenError("expects a single value for a scalar literal");
    } else if (nest == 0) {
      // XLA accepts a bare value for an array literal, `f32[4] constant(0.5)`, and sets only element 0 (the rest
      // are zero). Tests in the wild rely on it, so it is accepted with a warning.
      if (*element_count == 0) return TokenError("a literal with no elements cannot hold a value");
      if (*element_count > options_.max_literal_bytes / std::max<int64_t>(width, 1)) {
        return TokenError(fmt::format("literal exceeds the maximum size of {} bytes", options_.max_literal_bytes));
      }
      diags_.Report(Severity::kWarning, Loc(pos()),
                    fmt::format("a single value for a literal of shape {} sets only its first element (XLA "
                                "semantics); write {{...}} with all elements instead",
                                ShapeToString(shape, false)));
      scalar_for_array = true;
    } else {
      if (nest != rank) {
        return TokenError(fmt::format("expects nested array in rank {}, but sees {}", rank, nest));
      }
      if (++seen[rank - 1] > shape.dimensions[rank - 1]) {
        return TokenError(
            fmt::format("expects {} elements on the minor-most dimension, but sees more", shape.dimensions[rank - 1]));
      }
    }
    if (static_cast<int64_t>(bytes.size()) > options_.max_literal_bytes - width) {
      return TokenError(fmt::format("literal exceeds the maximum size of {} bytes", options_.max_literal_bytes));
    }
    ++values_read;
    return true;
  };
  // Range-checks a floating-point value for `t` and returns its bit pattern; handles NaN payloads as XLA does.
  auto float_bits = [&](PrimitiveType t, double v, size_t at, uint64_t* bits) {
    const FloatFormat f = GetFloatFormat(t);
    if (std::isnan(v)) {
      uint64_t dbits;
      std::memcpy(&dbits, &v, sizeof(dbits));
      const bool negative = (dbits >> 63) != 0;
      uint64_t payload = dbits & kDoubleMantissaMask;
      // Only IEEE-like formats (with infinities) have signaling NaNs and thus payload bits.
      const int payload_bits = f.has_infinity ? f.mantissa_bits : 0;
      if (payload_bits > 0) {
        if (payload == kDoubleQuietBit) payload = uint64_t{1} << (payload_bits - 1);
        const uint64_t largest = (uint64_t{1} << payload_bits) - 1;
        if (payload > largest) {
          return Error(at, fmt::format("NaN payload 0x{:x} is out of range for {} (largest payload 0x{:x})", payload,
                                       TypeName(t), largest));
        }
        const int total = f.exponent_bits + f.mantissa_bits;
        *bits = (negative ? uint64_t{1} << total : 0) | (((uint64_t{1} << f.exponent_bits) - 1) << f.mantissa_bits) |
                payload;
        return true;
      }
      if (payload != kDoubleQuietBit) {
        return Error(at, fmt::format("NaN payload 0x{:x} is not supported: {} does not support NaN payloads", payload,
                                     TypeName(t)));
      }
      *bits = DoubleToFloatBits(t, v);
      return true;
    }
    if (t == PrimitiveType::kF64) {
      std::memcpy(bits, &v, sizeof(v));
      return true;
    }
    if (std::isfinite(v) && OverflowsFloatType(t, v)) {
      return Error(at, fmt::format("value {} is out of range for literal's primitive type {}", v, TypeName(t)));
    }
    if (t == PrimitiveType::kF32) {
      float fv = static_cast<float>(v);
      uint32_t b;
      std::memcpy(&b, &fv, sizeof(b));
      *bits = b;
      return true;
    }
    *bits = DoubleToFloatBits(t, v);
    return true;
  };

  do {
    switch (kind()) {
      case TokKind::kLbrace: {
        ++nest;
        if (nest > rank) {
          return TokenError(fmt::format("expects nested array in rank {}, but sees larger", rank));
        }
        if (nest > 1) {
          if (++seen[nest - 2] > shape.dimensions[nest - 2]) {
            return TokenError(fmt::format("expects {} elements in the {}th element, but sees more",
                                          shape.dimensions[nest - 2], index_string(nest - 2)));
          }
        }
        Next();
        break;
      }
      case TokKind::kRbrace: {
        if (nest == 0) return TokenError("unexpected '}' token");
        --nest;
        if (seen[nest] != shape.dimensions[nest]) {
          return TokenError(fmt::format("expects {} elements in the {}th element, but sees {}", shape.dimensions[nest],
                                        index_string(nest), seen[nest]));
        }
        seen[nest] = 0;
        Next();
        break;
      }
      case TokKind::kDots: {
        if (nest != 1) {
          return TokenError(fmt::format("expects `...` at nest level 1, but sees it at nest level {}", nest));
        }
        seen[0] = shape.dimensions[0];
        elided = true;
        Next();
        break;
      }
      case TokKind::kComma:
        Next();
        break;
      case TokKind::kLparen: {
        if (!IsComplexType(type)) {
          return TokenError("unexpected '(' in literal; parentheses are only valid for complex literals");
        }
        const size_t at = pos();
        if (!add_element()) return false;
        Next();
        double parts[2];
        const char* names[2] = {"real", "imaginary"};
        for (int i = 0; i < 2; ++i) {
          if (i == 1 && !Expect(TokKind::kComma, "after the real part of a complex literal")) return false;
          if (kind() != TokKind::kInt && kind() != TokKind::kDecimal && kind() != TokKind::kw_inf &&
              kind() != TokKind::kNegInf) {
            return TokenError(
                fmt::format("expects a floating-point value for the {} part of a complex number", names[i]));
          }
          if (!ParseDouble(&parts[i])) return false;
        }
        if (!Expect(TokKind::kRparen, "after a complex number")) return false;
        const PrimitiveType component = ComplexComponentType(type);
        // A part is in range when it rounds to a finite value: the printer's 9 significant digits for FLT_MAX
        // (3.40282347e+38) are slightly above FLT_MAX as a double.
        for (int i = 0; i < 2; ++i) {
          if (OverflowsFloatType(component, parts[i])) {
            return Error(at, fmt::format("{} part {} is out of range for literal's primitive type {}", names[i],
                                         parts[i], TypeName(type)));
          }
        }
        for (int i = 0; i < 2; ++i) {
          uint64_t bits;
          if (!float_bits(component, parts[i], at, &bits)) return false;
          AppendBits(&bytes, bits, width / 2);
        }
        break;
      }
      case TokKind::kw_true:
      case TokKind::kw_false:
      case TokKind::kInt:
      case TokKind::kDecimal:
      case TokKind::kw_inf:
      case TokKind::kNegInf: {
        const size_t at = pos();
        if (!add_element()) return false;
        if (IsPredType(type) || IsIntegralType(type)) {
          uint64_t bits;
          if (kind() == TokKind::kw_true || kind() == TokKind::kw_false) {
            if (!IsPredType(type))
              return TokenError(fmt::format("expects integer for primitive type: {}", TypeName(type)));
            bits = kind() == TokKind::kw_true ? 1 : 0;
          } else if (kind() != TokKind::kInt) {
            return TokenError(fmt::format("expects integer for primitive type: {}", TypeName(type)));
          } else if (IsPredType(type)) {
            bits = tok().int_val != 0 ? 1 : 0;  // XLA converts to bool before range checking
          } else {
            const int64_t value = tok().int_val;
            const bool exceeds = tok().int_exceeds_int64;
            const std::string printed = exceeds ? std::to_string(static_cast<uint64_t>(value)) : std::to_string(value);
            if (IsUnsignedIntegralType(type)) {
              // As in XLA, the value is reinterpreted as uint64 (so u64 accepts -1) and checked against the max.
              const int bit_width = BitWidth(type);
              const uint64_t max =
                  bit_width >= 64 ? std::numeric_limits<uint64_t>::max() : (uint64_t{1} << bit_width) - 1;
              if (static_cast<uint64_t>(value) > max) {
                return TokenError(
                    fmt::format("value {} is out of range for literal's primitive type {}, namely "
                                "[0, {}]",
                                printed, TypeName(type), max));
              }
            } else {
              const int bit_width = BitWidth(type);
              const int64_t max =
                  bit_width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bit_width - 1)) - 1;
              const int64_t min = -max - 1;
              if (exceeds || value < min || value > max) {
                return TokenError(
                    fmt::format("value {} is out of range for literal's primitive type {}, namely "
                                "[{}, {}]",
                                printed, TypeName(type), min, max));
              }
            }
            bits = static_cast<uint64_t>(value);
          }
          Next();
          AppendBits(&bytes, bits, width);
        } else if (IsFloatingPointType(type)) {
          if (kind() == TokKind::kw_true || kind() == TokKind::kw_false) {
            return TokenError(fmt::format("expects floating point value for primitive type: {}", TypeName(type)));
          }
          double value;
          if (!ParseDouble(&value)) return false;
          uint64_t bits;
          if (!float_bits(type, value, at, &bits)) return false;
          AppendBits(&bytes, bits, width);
        } else {
          return TokenError(fmt::format("expects a complex value (real, imag) for primitive type: {}", TypeName(type)));
        }
        break;
      }
      default:
        return TokenError("unexpected token in a literal");
    }
  } while (nest > 0);

  if (elided) {
    *out = Literal::CreateUnknown(shape);
    return true;
  }
  if (scalar_for_array) {
    Literal literal(shape);
    std::memcpy(literal.mutable_raw_data(), bytes.data(), bytes.size());
    *out = std::move(literal);
    return true;
  }
  if (values_read != *element_count) {
    return Error(literal_pos, fmt::format("literal of shape {} expects {} elements, but has {}",
                                          ShapeToString(shape, false), *element_count, values_read));
  }
  std::optional<int64_t> byte_size = shape.ByteSizeOf();
  if (!byte_size.has_value() || *byte_size != static_cast<int64_t>(bytes.size())) {
    return Error(literal_pos, "internal error: literal byte size mismatch");
  }
  Literal literal(shape);
  if (!bytes.empty()) std::memcpy(literal.mutable_raw_data(), bytes.data(), bytes.size());
  *out = std::move(literal);
  return true;
}

bool Parser::ParseLiteralWithShape(Literal* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  if (EatIfPresent(TokKind::kLparen)) {
    std::vector<Literal> elements;
    while (kind() != TokKind::kRparen) {
      elements.emplace_back();
      if (!ParseLiteralWithShape(&elements.back())) return false;
      if (kind() != TokKind::kRparen && !Expect(TokKind::kComma, "to separate tuple literal elements")) return false;
    }
    Next();
    *out = Literal::CreateTuple(std::move(elements));
    return true;
  }
  Shape shape;
  if (!ParseShape(&shape)) return false;
  return ParseLiteral(shape, out);
}

}  // namespace xlac::hlo
