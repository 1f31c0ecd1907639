#include "runtime/harness/npy.h"

#include <bit>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace xlac::harness {
namespace {

static_assert(std::endian::native == std::endian::little, "the .npy reader assumes a little-endian host");

constexpr std::string_view kMagic = "\x93NUMPY";
// Guards against headers that claim absurd sizes before anything is allocated.
constexpr int64_t kMaxNpyBytes = int64_t{1} << 36;

absl::Status Error(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

// A tiny reader for the Python literal dict numpy writes: {'descr': '<f4', 'fortran_order': False, 'shape': (3,)}.
class HeaderReader {
 public:
  explicit HeaderReader(std::string_view text) : text_(text) {}

  absl::Status Parse(NpyHeader& header) {
    bool have_descr = false, have_order = false, have_shape = false;
    SkipSpace();
    if (!Consume('{')) return Fail("expected '{'");
    while (true) {
      SkipSpace();
      if (Consume('}')) break;
      std::string key;
      if (!ReadString(key)) return Fail("expected a quoted key");
      SkipSpace();
      if (!Consume(':')) return Fail("expected ':' after '" + key + "'");
      SkipSpace();
      if (key == "descr") {
        if (Peek() == '[') return Error("structured dtypes (descr is a list) are not supported");
        if (!ReadString(header.descr)) return Fail("'descr' must be a string");
        have_descr = true;
      } else if (key == "fortran_order") {
        if (text_.substr(pos_).starts_with("True")) {
          header.fortran_order = true;
          pos_ += 4;
        } else if (text_.substr(pos_).starts_with("False")) {
          header.fortran_order = false;
          pos_ += 5;
        } else {
          return Fail("'fortran_order' must be True or False");
        }
        have_order = true;
      } else if (key == "shape") {
        if (!Consume('(')) return Fail("'shape' must be a tuple");
        while (true) {
          SkipSpace();
          if (Consume(')')) break;
          int64_t dim = 0;
          bool any = false;
          while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
            if (dim > (kMaxNpyBytes - 9) / 10) return Error("dimension too large in .npy header");
            dim = dim * 10 + (text_[pos_++] - '0');
            any = true;
          }
          if (!any) return Fail("expected a non-negative dimension in 'shape'");
          header.shape.push_back(dim);
          SkipSpace();
          if (Consume(')')) break;
          if (!Consume(',')) return Fail("expected ',' or ')' in 'shape'");
        }
        have_shape = true;
      } else {
        return Error("unexpected key '" + key + "' in .npy header");
      }
      SkipSpace();
      if (Consume('}')) break;
      if (!Consume(',')) return Fail("expected ',' or '}'");
    }
    if (!have_descr || !have_order || !have_shape) {
      return Error(".npy header must have 'descr', 'fortran_order' and 'shape'");
    }
    return absl::OkStatus();
  }

 private:
  char Peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  bool Consume(char c) {
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }
  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n')) ++pos_;
  }
  bool ReadString(std::string& out) {
    char quote = Peek();
    if (quote != '\'' && quote != '"') return false;
    size_t end = text_.find(quote, pos_ + 1);
    if (end == std::string_view::npos) return false;
    out = std::string(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return true;
  }
  absl::Status Fail(const std::string& what) {
    return Error(fmt::format("malformed .npy header at offset {}: {}", pos_, what));
  }

  std::string_view text_;
  size_t pos_ = 0;
};

// Element types with a numpy dtype of their own: the descr body (after the byte-order character).
std::string_view StandardBody(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return "b1";
    case PrimitiveType::kS8:
      return "i1";
    case PrimitiveType::kS16:
      return "i2";
    case PrimitiveType::kS32:
      return "i4";
    case PrimitiveType::kS64:
      return "i8";
    case PrimitiveType::kU8:
      return "u1";
    case PrimitiveType::kU16:
      return "u2";
    case PrimitiveType::kU32:
      return "u4";
    case PrimitiveType::kU64:
      return "u8";
    case PrimitiveType::kF16:
      return "f2";
    case PrimitiveType::kF32:
      return "f4";
    case PrimitiveType::kF64:
      return "f8";
    case PrimitiveType::kC64:
      return "c8";
    case PrimitiveType::kC128:
      return "c16";
    default:
      return "";
  }
}

// The ml_dtypes name of a type numpy itself lacks ("" if none).
std::string_view MlDtypesName(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kBF16:
      return "bfloat16";
    case PrimitiveType::kF8E3M4:
      return "float8_e3m4";
    case PrimitiveType::kF8E4M3:
      return "float8_e4m3";
    case PrimitiveType::kF8E4M3FN:
      return "float8_e4m3fn";
    case PrimitiveType::kF8E4M3B11FNUZ:
      return "float8_e4m3b11fnuz";
    case PrimitiveType::kF8E4M3FNUZ:
      return "float8_e4m3fnuz";
    case PrimitiveType::kF8E5M2:
      return "float8_e5m2";
    case PrimitiveType::kF8E5M2FNUZ:
      return "float8_e5m2fnuz";
    case PrimitiveType::kF8E8M0FNU:
      return "float8_e8m0fnu";
    case PrimitiveType::kF6E2M3FN:
      return "float6_e2m3fn";
    case PrimitiveType::kF6E3M2FN:
      return "float6_e3m2fn";
    case PrimitiveType::kF4E2M1FN:
      return "float4_e2m1fn";
    case PrimitiveType::kS2:
      return "int2";
    case PrimitiveType::kS4:
      return "int4";
    case PrimitiveType::kU2:
      return "uint2";
    case PrimitiveType::kU4:
      return "uint4";
    default:
      return "";
  }
}

// The descr body written for `type` (standard dtype or raw-bits / widened integer).
std::string_view WrittenBody(PrimitiveType type) {
  if (std::string_view s = StandardBody(type); !s.empty()) return s;
  if (type == PrimitiveType::kBF16) return "u2";
  if (type == PrimitiveType::kS2 || type == PrimitiveType::kS4) return "i1";
  return "u1";  // u2, u4 and every 8-bit-or-smaller float
}

// Every descr body accepted for `type` when reading.
std::vector<std::string> AcceptedBodies(PrimitiveType type) {
  std::vector<std::string> bodies = {std::string(WrittenBody(type))};
  if (StandardBody(type).empty()) {
    if (IsFloatingPointType(type)) bodies.push_back(type == PrimitiveType::kBF16 ? "V2" : "V1");
    bodies.emplace_back(MlDtypesName(type));
  }
  return bodies;
}

struct Descr {
  char order = '|';
  std::string body;
};

Descr SplitDescr(std::string_view descr) {
  Descr d;
  if (!descr.empty() && (descr[0] == '<' || descr[0] == '>' || descr[0] == '|' || descr[0] == '=')) {
    d.order = descr[0];
    descr.remove_prefix(1);
  }
  d.body = std::string(descr);
  return d;
}

std::optional<PrimitiveType> TypeForBody(std::string_view body) {
  for (int i = 0; i <= static_cast<int>(PrimitiveType::kToken); ++i) {
    PrimitiveType t = static_cast<PrimitiveType>(i);
    if (!IsArrayType(t)) continue;
    if (StandardBody(t) == body || (!MlDtypesName(t).empty() && MlDtypesName(t) == body)) return t;
  }
  return std::nullopt;
}

absl::StatusOr<Literal> Decode(std::string_view bytes, const NpyHeader& header, PrimitiveType type) {
  if (header.fortran_order) {
    return Error("fortran_order=True arrays are not supported; save a C-ordered array (numpy.ascontiguousarray)");
  }
  Descr d = SplitDescr(header.descr);
  if (d.order == '>' && ByteWidth(type) > 1) {
    return Error("big-endian data ('" + header.descr + "') is not supported; save the array as little-endian");
  }
  Shape shape(type, header.shape);
  std::optional<int64_t> size = shape.ByteSizeOf();
  if (!size || *size > kMaxNpyBytes) return Error("array of shape " + NpyShapeString(header.shape) + " is too large");
  const int64_t available = static_cast<int64_t>(bytes.size() - header.data_offset);
  if (available != *size) {
    return Error(fmt::format("the data is {} bytes, but shape {} of '{}' needs {}", available,
                             NpyShapeString(header.shape), header.descr, *size));
  }
  Literal literal(shape);
  if (*size > 0) std::memcpy(literal.mutable_raw_data(), bytes.data() + header.data_offset, static_cast<size_t>(*size));
  // Validate the values whose storage byte has more room than the type.
  const int bits = BitWidth(type);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    uint8_t raw = literal.raw_data()[i];
    bool ok = true;
    if (type == PrimitiveType::kPred) {
      ok = raw <= 1;
    } else if (bits < 8 && IsSignedIntegralType(type)) {
      int v = static_cast<int8_t>(raw);
      ok = v >= -(1 << (bits - 1)) && v < (1 << (bits - 1));
    } else if (bits < 8) {
      ok = raw < (1u << bits);
    } else {
      break;
    }
    if (!ok) {
      return Error(fmt::format("element {} ({}) is out of range for {}", i,
                               IsSignedIntegralType(type) ? static_cast<int>(static_cast<int8_t>(raw)) : raw,
                               PrimitiveTypeName(type)));
    }
  }
  return literal;
}

}  // namespace

absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes) {
  if (!bytes.starts_with(kMagic)) return Error("not a .npy file (missing the \\x93NUMPY magic string)");
  if (bytes.size() < 10) return Error("truncated .npy header");
  NpyHeader header;
  header.major_version = static_cast<uint8_t>(bytes[6]);
  size_t header_len = 0, prefix = 0;
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<uint8_t>(bytes[i])); };
  if (header.major_version == 1) {
    header_len = byte(8) | byte(9) << 8;
    prefix = 10;
  } else if (header.major_version == 2 || header.major_version == 3) {
    if (bytes.size() < 12) return Error("truncated .npy header");
    header_len = byte(8) | byte(9) << 8 | byte(10) << 16 | byte(11) << 24;
    prefix = 12;
  } else {
    return Error(fmt::format("unsupported .npy format version {}.{}", header.major_version, byte(7)));
  }
  if (bytes.size() < prefix + header_len) return Error("truncated .npy header");
  HeaderReader reader(bytes.substr(prefix, header_len));
  if (absl::Status s = reader.Parse(header); !s.ok()) return s;
  header.data_offset = prefix + header_len;
  return header;
}

std::string NpyDescrFor(PrimitiveType type) {
  return std::string(ByteWidth(type) == 1 ? "|" : "<") + std::string(WrittenBody(type));
}

std::string NpyShapeString(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

absl::StatusOr<std::string> LiteralToNpy(const Literal& literal) {
  const Shape& shape = literal.shape();
  if (!shape.IsArray()) return Error("cannot write a " + ShapeToString(shape, false) + " value as .npy");
  if (literal.is_unknown()) return Error("cannot write a literal without values as .npy");
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}",
                                 NpyDescrFor(shape.element_type), NpyShapeString(shape.dimensions));
  // numpy pads the header with spaces and a newline so that the data starts at a multiple of 64 bytes.
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  if ((total + 63) / 64 * 64 - prefix > 0xffff) prefix = 12;
  total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  size_t header_len = total - prefix;
  dict.append(header_len - dict.size() - 1, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += static_cast<char>(prefix == 10 ? 1 : 2);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header_len >> (8 * i)) & 0xff);
  out += dict;
  out.append(reinterpret_cast<const char*>(literal.raw_data()), static_cast<size_t>(literal.byte_size()));
  return out;
}

absl::StatusOr<Literal> NpyToLiteral(std::string_view bytes, PrimitiveType type) {
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(bytes);
  if (!header.ok()) return header.status();
  Descr d = SplitDescr(header->descr);
  std::vector<std::string> accepted = AcceptedBodies(type);
  bool ok = false;
  for (const std::string& body : accepted) ok |= body == d.body;
  if (!ok) {
    std::string list;
    for (size_t i = 0; i < accepted.size(); ++i) {
      bool is_name = accepted[i] == MlDtypesName(type);
      list += fmt::format("{}'{}{}'", i ? ", " : "", is_name ? "" : ByteWidth(type) == 1 ? "|" : "<", accepted[i]);
    }
    return Error(fmt::format("dtype '{}' does not match element type {} (expected {})", header->descr,
                             PrimitiveTypeName(type), list));
  }
  return Decode(bytes, *header, type);
}

absl::StatusOr<Literal> NpyToLiteral(std::string_view bytes) {
  absl::StatusOr<NpyHeader> header = ParseNpyHeader(bytes);
  if (!header.ok()) return header.status();
  std::optional<PrimitiveType> type = TypeForBody(SplitDescr(header->descr).body);
  if (!type) return Error("unsupported .npy dtype '" + header->descr + "'");
  return Decode(bytes, *header, *type);
}

}  // namespace xlac::harness
