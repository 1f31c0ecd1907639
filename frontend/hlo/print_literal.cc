// Literal and floating-point element printing, following xla/literal.cc (DenseArrayPrintHelper, oneline mode) and
// xla/util.cc (RoundTripFpToString).
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "frontend/hlo/print_internal.h"
#include "frontend/hlo/printer.h"
#include "ir/float_types.h"

namespace xlac {
namespace {

std::string FormatG(int digits, double value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, value);
  return buf;
}

// Significant digits XLA prints for a type: std::numeric_limits<T>::max_digits10 (ml_dtypes computes it as
// 2 + floor(digits * log10(2)) with digits = explicit mantissa bits + 1).
int MaxDigits10(PrimitiveType type) {
  int digits = GetFloatFormat(type).mantissa_bits + 1;
  return 2 + (digits * 30103) / 100000;
}

// Number of NaN payload bits XLA prints for a type (NanPayloadBits: digits - 1 for types with signaling NaNs, and
// only for the types whose RoundTripFpToString appends payloads).
int NanPayloadBits(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF64:
      return 52;
    case PrimitiveType::kF32:
      return 23;
    case PrimitiveType::kF16:
      return 10;
    case PrimitiveType::kBF16:
      return 7;
    case PrimitiveType::kF8E5M2:
      return 2;
    case PrimitiveType::kF8E4M3:
      return 3;
    case PrimitiveType::kF8E3M4:
      return 4;
    default:
      return 0;
  }
}

void AppendNanPayload(PrimitiveType type, uint64_t bits, double value, std::string& out) {
  int payload_bits = NanPayloadBits(type);
  if (!std::isnan(value) || payload_bits == 0) return;
  uint64_t payload = bits & ((uint64_t{1} << payload_bits) - 1);
  if (payload == (uint64_t{1} << (payload_bits - 1))) return;  // the plain quiet NaN
  char buf[32];
  std::snprintf(buf, sizeof(buf), "(0x%llx)", static_cast<unsigned long long>(payload));
  out += buf;
}

class DenseArrayPrinter {
 public:
  DenseArrayPrinter(const Literal& literal, std::string& out) : literal_(literal), out_(out) {}

  void Print() {
    const Shape& shape = literal_.shape();
    rank_ = shape.rank();
    std::vector<int64_t> accum;
    Recurse(shape.dimensions, 0, accum);
  }

 private:
  // Mirrors brace_to_string in xla/literal.cc with oneline=true (linebreak is a space).
  std::string Brace(bool open, size_t remaining, int64_t front, const std::vector<int64_t>& accum) const {
    const char* brace = open ? "{" : "}";
    if (rank_ == 1) return brace;
    if (remaining == 1) {
      if (open) return front <= 1 ? "{" : "{ ";
      return front <= 1 ? "}" : " }";
    }
    if (open) {
      if (rank_ > 3 && !accum.empty() && static_cast<int64_t>(accum.size()) < rank_) {
        std::string s = "{ /*i" + std::to_string(accum.size() - 1) + "=" + std::to_string(accum.back()) + "*/";
        if (front > 0) s += " ";
        return s;
      }
      return "{ ";
    }
    return " }";
  }

  void Recurse(const std::vector<int64_t>& dims, size_t depth, std::vector<int64_t>& accum) {
    size_t remaining = dims.size() - depth;
    if (remaining == 0) {
      out_ += ElementString(next_index_++);
      return;
    }
    int64_t front = dims[depth];
    out_ += Brace(true, remaining, front, accum);
    for (int64_t i = 0; i < front; ++i) {
      accum.push_back(i);
      Recurse(dims, depth + 1, accum);
      accum.pop_back();
      if (i < front - 1) out_ += ", ";
    }
    out_ += Brace(false, remaining, front, accum);
  }

  std::string ElementString(int64_t i) const {
    PrimitiveType type = literal_.shape().element_type;
    if (type == PrimitiveType::kPred) {
      bool v = literal_.Get<uint8_t>(i) != 0;
      // XLA prints predicates inside arrays as 1/0 to keep them dense.
      if (rank_ > 0) return v ? "1" : "0";
      return v ? "true" : "false";
    }
    if (IsSignedIntegralType(type)) return std::to_string(literal_.GetAsInt64(i));
    if (IsUnsignedIntegralType(type)) {
      if (type == PrimitiveType::kU64) return std::to_string(literal_.Get<uint64_t>(i));
      return std::to_string(static_cast<uint64_t>(literal_.GetAsInt64(i)));
    }
    if (type == PrimitiveType::kC64) {
      auto c = literal_.Get<std::complex<float>>(i);
      float re = c.real(), im = c.imag();
      uint32_t re_bits, im_bits;
      std::memcpy(&re_bits, &re, 4);
      std::memcpy(&im_bits, &im, 4);
      return "(" + FloatElementToString(PrimitiveType::kF32, re_bits) + ", " +
             FloatElementToString(PrimitiveType::kF32, im_bits) + ")";
    }
    if (type == PrimitiveType::kC128) {
      auto c = literal_.Get<std::complex<double>>(i);
      double re = c.real(), im = c.imag();
      uint64_t re_bits, im_bits;
      std::memcpy(&re_bits, &re, 8);
      std::memcpy(&im_bits, &im, 8);
      return "(" + FloatElementToString(PrimitiveType::kF64, re_bits) + ", " +
             FloatElementToString(PrimitiveType::kF64, im_bits) + ")";
    }
    uint64_t bits = 0;
    switch (ByteWidth(type)) {
      case 8:
        bits = literal_.Get<uint64_t>(i);
        break;
      case 4:
        bits = literal_.Get<uint32_t>(i);
        break;
      case 2:
        bits = literal_.Get<uint16_t>(i);
        break;
      default:
        bits = literal_.Get<uint8_t>(i);
        break;
    }
    return FloatElementToString(type, bits);
  }

  const Literal& literal_;
  std::string& out_;
  int64_t rank_ = 0;
  int64_t next_index_ = 0;
};

void AppendLiteral(const Literal& literal, bool print_shape, std::string& out) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    out += "( ";
    const auto& elements = literal.tuple_elements();
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) out += ", ";
      AppendLiteral(elements[i], print_shape, out);
    }
    out += " )";
    return;
  }
  if (shape.IsToken()) {
    out += "token";
    return;
  }
  if (print_shape) {
    out += hlo_print::PrintShape(shape, /*print_layout=*/true);
    out += " ";
  }
  if (literal.is_unknown() || !shape.IsArray()) {
    out += "{...}";
    return;
  }
  DenseArrayPrinter(literal, out).Print();
}

}  // namespace

std::string FloatElementToString(PrimitiveType type, uint64_t bits) {
  double value = FloatBitsToDouble(type, bits);
  std::string out;
  if (type == PrimitiveType::kF32) {
    // Six digits when they round-trip, else max_digits10 (XLA's RoundTripFpToString(float)).
    float f = static_cast<float>(value);
    out = FormatG(6, value);
    if (std::isnan(f) || std::strtof(out.c_str(), nullptr) != f) out = FormatG(9, value);
  } else if (type == PrimitiveType::kF64) {
    out = FormatG(15, value);
    if (std::isnan(value) || std::strtod(out.c_str(), nullptr) != value) out = FormatG(17, value);
  } else {
    out = FormatG(MaxDigits10(type), value);
  }
  AppendNanPayload(type, bits, value, out);
  return out;
}

std::string LiteralToString(const Literal& literal, bool print_shape) {
  return hlo_print::LiteralText(literal, print_shape);
}

namespace hlo_print {

std::string LiteralText(const Literal& literal, bool print_shape) {
  std::string out;
  AppendLiteral(literal, print_shape, out);
  return out;
}

}  // namespace hlo_print
}  // namespace xlac
