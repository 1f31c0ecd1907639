// Element access in compute types, index helpers, attribute access and deterministic random literals.
#include <cmath>
#include <cstring>
#include <limits>

#include "ir/float_types.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

NumKind KindOf(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return NumKind::kPred;
    case PrimitiveType::kF64:
      return NumKind::kDouble;
    case PrimitiveType::kC64:
      return NumKind::kC64;
    case PrimitiveType::kC128:
      return NumKind::kC128;
    default:
      break;
  }
  if (IsSignedIntegralType(type)) return NumKind::kSigned;
  if (IsUnsignedIntegralType(type)) return NumKind::kUnsigned;
  return NumKind::kFloat;
}

float NarrowToFloat(PrimitiveType type, uint64_t bits) {
  switch (type) {
    case PrimitiveType::kBF16: {
      uint32_t b = static_cast<uint32_t>(bits & 0xffff) << 16;
      float f;
      std::memcpy(&f, &b, sizeof(f));
      return f;
    }
    case PrimitiveType::kF16: {
      uint16_t b = static_cast<uint16_t>(bits);
      _Float16 h;
      std::memcpy(&h, &b, sizeof(h));
      return static_cast<float>(h);
    }
    case PrimitiveType::kF32: {
      uint32_t b = static_cast<uint32_t>(bits);
      float f;
      std::memcpy(&f, &b, sizeof(f));
      return f;
    }
    default:
      return static_cast<float>(FloatBitsToDouble(type, bits));
  }
}

uint64_t FloatToNarrow(PrimitiveType type, float v) {
  switch (type) {
    case PrimitiveType::kBF16: {
      uint32_t u;
      std::memcpy(&u, &v, sizeof(u));
      if (std::isnan(v)) return ((u >> 16) & 0x8000) | 0x7fc0;
      u += 0x7fff + ((u >> 16) & 1);
      return u >> 16;
    }
    case PrimitiveType::kF16: {
      _Float16 h = static_cast<_Float16>(v);
      uint16_t b;
      std::memcpy(&b, &h, sizeof(b));
      return b;
    }
    case PrimitiveType::kF32: {
      uint32_t u;
      std::memcpy(&u, &v, sizeof(u));
      return u;
    }
    default:
      return DoubleToFloatBits(type, static_cast<double>(v));
  }
}

int64_t SignedMin(PrimitiveType type) {
  int bits = BitWidth(type);
  return bits >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
}
int64_t SignedMax(PrimitiveType type) {
  int bits = BitWidth(type);
  return bits >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
}
uint64_t UnsignedMax(PrimitiveType type) {
  int bits = BitWidth(type);
  return bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
}

namespace {

inline int64_t SignExtend(uint64_t v, int bits) {
  if (bits >= 64) return static_cast<int64_t>(v);
  int shift = 64 - bits;
  return static_cast<int64_t>(v << shift) >> shift;
}

template <typename S>
inline S RawGet(const Literal& lit, int64_t i) {
  S v;
  std::memcpy(&v, lit.raw_data() + i * static_cast<int64_t>(sizeof(S)), sizeof(S));
  return v;
}
template <typename S>
inline void RawSet(Literal& lit, int64_t i, S v) {
  std::memcpy(lit.mutable_raw_data() + i * static_cast<int64_t>(sizeof(S)), &v, sizeof(S));
}

}  // namespace

template <>
bool LoadOne<bool>(const Literal& lit, int64_t i) {
  return lit.raw_data()[i] != 0;
}
template <>
int64_t LoadOne<int64_t>(const Literal& lit, int64_t i) {
  switch (lit.shape().element_type) {
    case PrimitiveType::kS16:
      return RawGet<int16_t>(lit, i);
    case PrimitiveType::kS32:
      return RawGet<int32_t>(lit, i);
    case PrimitiveType::kS64:
      return RawGet<int64_t>(lit, i);
    default:
      return RawGet<int8_t>(lit, i);  // s2, s4, s8 (sub-byte values are stored sign-extended)
  }
}
template <>
uint64_t LoadOne<uint64_t>(const Literal& lit, int64_t i) {
  switch (lit.shape().element_type) {
    case PrimitiveType::kU16:
      return RawGet<uint16_t>(lit, i);
    case PrimitiveType::kU32:
      return RawGet<uint32_t>(lit, i);
    case PrimitiveType::kU64:
      return RawGet<uint64_t>(lit, i);
    default:
      return RawGet<uint8_t>(lit, i);
  }
}
template <>
float LoadOne<float>(const Literal& lit, int64_t i) {
  PrimitiveType t = lit.shape().element_type;
  switch (t) {
    case PrimitiveType::kF32:
      return RawGet<float>(lit, i);
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16:
      return NarrowToFloat(t, RawGet<uint16_t>(lit, i));
    default:
      return NarrowToFloat(t, RawGet<uint8_t>(lit, i));
  }
}
template <>
double LoadOne<double>(const Literal& lit, int64_t i) {
  return RawGet<double>(lit, i);
}
template <>
c64 LoadOne<c64>(const Literal& lit, int64_t i) {
  return RawGet<c64>(lit, i);
}
template <>
c128 LoadOne<c128>(const Literal& lit, int64_t i) {
  return RawGet<c128>(lit, i);
}

template <>
void StoreOne<bool>(Literal& lit, int64_t i, bool v) {
  lit.mutable_raw_data()[i] = v ? 1 : 0;
}
template <>
void StoreOne<int64_t>(Literal& lit, int64_t i, int64_t v) {
  PrimitiveType t = lit.shape().element_type;
  switch (t) {
    case PrimitiveType::kS8:
      RawSet<int8_t>(lit, i, static_cast<int8_t>(v));
      return;
    case PrimitiveType::kS16:
      RawSet<int16_t>(lit, i, static_cast<int16_t>(v));
      return;
    case PrimitiveType::kS32:
      RawSet<int32_t>(lit, i, static_cast<int32_t>(v));
      return;
    case PrimitiveType::kS64:
      RawSet<int64_t>(lit, i, v);
      return;
    default:
      RawSet<int8_t>(lit, i, static_cast<int8_t>(SignExtend(static_cast<uint64_t>(v), BitWidth(t))));
      return;
  }
}
template <>
void StoreOne<uint64_t>(Literal& lit, int64_t i, uint64_t v) {
  PrimitiveType t = lit.shape().element_type;
  switch (t) {
    case PrimitiveType::kU8:
      RawSet<uint8_t>(lit, i, static_cast<uint8_t>(v));
      return;
    case PrimitiveType::kU16:
      RawSet<uint16_t>(lit, i, static_cast<uint16_t>(v));
      return;
    case PrimitiveType::kU32:
      RawSet<uint32_t>(lit, i, static_cast<uint32_t>(v));
      return;
    case PrimitiveType::kU64:
      RawSet<uint64_t>(lit, i, v);
      return;
    default:
      RawSet<uint8_t>(lit, i, static_cast<uint8_t>(v & UnsignedMax(t)));
      return;
  }
}
template <>
void StoreOne<float>(Literal& lit, int64_t i, float v) {
  PrimitiveType t = lit.shape().element_type;
  switch (t) {
    case PrimitiveType::kF32:
      RawSet<float>(lit, i, v);
      return;
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16:
      RawSet<uint16_t>(lit, i, static_cast<uint16_t>(FloatToNarrow(t, v)));
      return;
    default:
      RawSet<uint8_t>(lit, i, static_cast<uint8_t>(FloatToNarrow(t, v)));
      return;
  }
}
template <>
void StoreOne<double>(Literal& lit, int64_t i, double v) {
  RawSet<double>(lit, i, v);
}
template <>
void StoreOne<c64>(Literal& lit, int64_t i, c64 v) {
  RawSet<c64>(lit, i, v);
}
template <>
void StoreOne<c128>(Literal& lit, int64_t i, c128 v) {
  RawSet<c128>(lit, i, v);
}

namespace {

template <typename S, typename C>
void LoadLoop(const Literal& lit, std::vector<C>& out) {
  const uint8_t* p = lit.raw_data();
  for (size_t i = 0; i < out.size(); ++i) {
    S v;
    std::memcpy(&v, p + i * sizeof(S), sizeof(S));
    out[i] = static_cast<C>(v);
  }
}

template <typename S, typename C>
void StoreLoop(Literal& lit, const std::vector<C>& in) {
  uint8_t* p = lit.mutable_raw_data();
  for (size_t i = 0; i < in.size(); ++i) {
    S v = static_cast<S>(in[i]);
    std::memcpy(p + i * sizeof(S), &v, sizeof(S));
  }
}

}  // namespace

template <typename C>
std::vector<C> LoadAll(const Literal& lit) {
  std::vector<C> out(static_cast<size_t>(lit.element_count()));
  PrimitiveType t = lit.shape().element_type;
  if constexpr (std::is_same_v<C, int64_t>) {
    switch (t) {
      case PrimitiveType::kS32:
        LoadLoop<int32_t>(lit, out);
        return out;
      case PrimitiveType::kS64:
        LoadLoop<int64_t>(lit, out);
        return out;
      default:
        break;
    }
  } else if constexpr (std::is_same_v<C, float>) {
    if (t == PrimitiveType::kF32) {
      LoadLoop<float>(lit, out);
      return out;
    }
  } else if constexpr (std::is_same_v<C, double>) {
    LoadLoop<double>(lit, out);
    return out;
  }
  for (size_t i = 0; i < out.size(); ++i) out[i] = LoadOne<C>(lit, static_cast<int64_t>(i));
  return out;
}

template <typename C>
void StoreAll(Literal& lit, const std::vector<C>& values) {
  PrimitiveType t = lit.shape().element_type;
  if constexpr (std::is_same_v<C, int64_t>) {
    switch (t) {
      case PrimitiveType::kS32:
        StoreLoop<int32_t>(lit, values);
        return;
      case PrimitiveType::kS64:
        StoreLoop<int64_t>(lit, values);
        return;
      default:
        break;
    }
  } else if constexpr (std::is_same_v<C, float>) {
    if (t == PrimitiveType::kF32) {
      StoreLoop<float>(lit, values);
      return;
    }
  } else if constexpr (std::is_same_v<C, double>) {
    StoreLoop<double>(lit, values);
    return;
  }
  for (size_t i = 0; i < values.size(); ++i) StoreOne<C>(lit, static_cast<int64_t>(i), values[i]);
}

template <typename C>
C Normalize(C v, PrimitiveType type) {
  if constexpr (std::is_same_v<C, float>) {
    if (type == PrimitiveType::kF32) return v;
    return NarrowToFloat(type, FloatToNarrow(type, v));
  } else if constexpr (std::is_same_v<C, int64_t>) {
    return SignExtend(static_cast<uint64_t>(v), BitWidth(type));
  } else if constexpr (std::is_same_v<C, uint64_t>) {
    return v & UnsignedMax(type);
  } else {
    return v;
  }
}

#define XLAC_INSTANTIATE(C)                                   \
  template std::vector<C> LoadAll<C>(const Literal&);         \
  template void StoreAll<C>(Literal&, const std::vector<C>&); \
  template C Normalize<C>(C, PrimitiveType);
XLAC_INSTANTIATE(bool)
XLAC_INSTANTIATE(int64_t)
XLAC_INSTANTIATE(uint64_t)
XLAC_INSTANTIATE(float)
XLAC_INSTANTIATE(double)
XLAC_INSTANTIATE(c64)
XLAC_INSTANTIATE(c128)
#undef XLAC_INSTANTIATE

// ---- shapes and indices ----

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions) n *= d;
  return n;
}

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (size_t i = index.size(); i-- > 0;) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

Literal MakeArray(PrimitiveType type, std::vector<int64_t> dims) { return Literal(Shape(type, std::move(dims))); }

Literal ScalarS64(PrimitiveType type, int64_t v) {
  Literal lit(Shape::Scalar(type));
  lit.SetFromInt64(0, v);
  return lit;
}

int64_t IndexValue(const Literal& lit, int64_t i) {
  if (IsUnsignedIntegralType(lit.shape().element_type)) {
    uint64_t v = LoadOne<uint64_t>(lit, i);
    return v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) ? std::numeric_limits<int64_t>::max()
                                                                          : static_cast<int64_t>(v);
  }
  return LoadOne<int64_t>(lit, i);
}

bool HasNonDefaultLayout(const Shape& shape) {
  if (!shape.layout || shape.layout->minor_to_major.size() != shape.dimensions.size()) return false;
  const std::vector<int64_t>& m2m = shape.layout->minor_to_major;
  for (size_t i = 0; i < m2m.size(); ++i) {
    if (m2m[i] != static_cast<int64_t>(m2m.size() - 1 - i)) return true;
  }
  return false;
}

std::vector<int64_t> PhysicalToLogical(const Shape& shape) {
  int64_t n = ElementCount(shape);
  std::vector<int64_t> result(static_cast<size_t>(n));
  size_t rank = shape.dimensions.size();
  std::vector<int64_t> major_to_minor(rank);
  for (size_t i = 0; i < rank; ++i) {
    major_to_minor[i] =
        HasNonDefaultLayout(shape) ? shape.layout->minor_to_major[rank - 1 - i] : static_cast<int64_t>(i);
  }
  std::vector<int64_t> phys_dims(rank);
  for (size_t i = 0; i < rank; ++i) phys_dims[i] = shape.dimensions[major_to_minor[i]];
  std::vector<int64_t> strides = RowMajorStrides(shape.dimensions);
  std::vector<int64_t> index(rank, 0);
  for (int64_t p = 0; p < n; ++p) {
    int64_t logical = 0;
    for (size_t i = 0; i < rank; ++i) logical += index[i] * strides[major_to_minor[i]];
    result[p] = logical;
    NextIndex(index, phys_dims);
  }
  return result;
}

// ---- attributes ----

const std::vector<int64_t>& IntList(const Instruction& inst, std::string_view name) { return inst.IntListAttr(name); }
int64_t IntAttr(const Instruction& inst, std::string_view name, int64_t fallback) {
  return inst.IntAttr(name, fallback);
}
bool BoolAttr(const Instruction& inst, std::string_view name, bool fallback) { return inst.BoolAttr(name, fallback); }
std::string_view TextAttr(const Instruction& inst, std::string_view name) { return inst.StringAttr(name); }
const Window* WindowAttr(const Instruction& inst) {
  const AttrValue* v = inst.FindAttr("window");
  if (v == nullptr || v->kind != AttrKind::kWindow) return nullptr;
  return &v->get<Window>();
}

// ---- deterministic random values ----

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

namespace {

// Uniform in [-1, 1) with 53 random bits.
double UniformSigned(uint64_t r) { return static_cast<double>(r >> 11) * 0x1p-52 - 1.0; }

// The seeded values of f32 and f64 arrays, exactly as the generic loop in FillRandom computes them, in a loop the
// compiler vectorizes: xla-run generates every parameter this way, and the BERT layer's 28 MB took 45 ms through
// StoreOne element by element. `r >> 11` fits 53 bits, so the signed conversion is exact and vectorizes.
// (Clang multiversions no templates: one function per type.)
__attribute__((target_clones("avx2", "default"))) void FillUniformSignedF32(float* out, int64_t count, uint64_t seed) {
  for (int64_t i = 0; i < count; ++i) {
    uint64_t r = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(i)));
    out[i] = static_cast<float>(static_cast<double>(static_cast<int64_t>(r >> 11)) * 0x1p-52 - 1.0);
  }
}
__attribute__((target_clones("avx2", "default"))) void FillUniformSignedF64(double* out, int64_t count, uint64_t seed) {
  for (int64_t i = 0; i < count; ++i) {
    uint64_t r = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(i)));
    out[i] = static_cast<double>(static_cast<int64_t>(r >> 11)) * 0x1p-52 - 1.0;
  }
}

}  // namespace

uint64_t HashString(std::string_view s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ SplitMix64(seed);
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

void FillRandom(Literal& lit, uint64_t seed) {
  if (lit.is_tuple()) {
    for (size_t i = 0; i < lit.mutable_tuple_elements().size(); ++i) {
      FillRandom(lit.mutable_tuple_elements()[i], SplitMix64(seed + i));
    }
    return;
  }
  if (!lit.shape().IsArray()) return;
  PrimitiveType t = lit.shape().element_type;
  if (t == PrimitiveType::kF32 || t == PrimitiveType::kF64) {
    if (t == PrimitiveType::kF32) {
      FillUniformSignedF32(reinterpret_cast<float*>(lit.mutable_raw_data()), lit.element_count(), seed);
    } else {
      FillUniformSignedF64(reinterpret_cast<double*>(lit.mutable_raw_data()), lit.element_count(), seed);
    }
    return;
  }
  bool unsigned_float = IsFloatingPointType(t) && GetFloatFormat(t).is_unsigned;
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    uint64_t r = SplitMix64(seed ^ SplitMix64(static_cast<uint64_t>(i)));
    switch (KindOf(t)) {
      case NumKind::kPred:
        StoreOne<bool>(lit, i, (r >> 32) & 1);
        break;
      case NumKind::kSigned:
        StoreOne<int64_t>(lit, i, static_cast<int64_t>((r >> 32) % 8));
        break;
      case NumKind::kUnsigned:
        StoreOne<uint64_t>(lit, i, (r >> 32) % 8);
        break;
      case NumKind::kFloat: {
        double v = UniformSigned(r);
        StoreOne<float>(lit, i, static_cast<float>(unsigned_float ? std::fabs(v) + 0.125 : v));
        break;
      }
      case NumKind::kDouble:
        StoreOne<double>(lit, i, UniformSigned(r));
        break;
      case NumKind::kC64:
        StoreOne<c64>(lit, i,
                      c64(static_cast<float>(UniformSigned(r)), static_cast<float>(UniformSigned(SplitMix64(r)))));
        break;
      case NumKind::kC128:
        StoreOne<c128>(lit, i, c128(UniformSigned(r), UniformSigned(SplitMix64(r))));
        break;
    }
  }
}

Literal MakeRandomLiteral(const Shape& shape, uint64_t seed) {
  Literal lit(shape);
  FillRandom(lit, seed);
  return lit;
}

Literal ElidedConstantValue(const Shape& shape, std::string_view name, uint64_t seed) {
  Literal lit(shape);
  FillRandom(lit, HashString(name, seed));
  return lit;
}

Literal InfeedValue(const Shape& data_shape, std::string_view name, uint64_t seed, int64_t device_id,
                    uint64_t occurrence) {
  Literal data(data_shape);
  FillRandom(data, HashString(name, seed) ^ SplitMix64(static_cast<uint64_t>(device_id) * 0x10001 + occurrence));
  return data;
}

}  // namespace xlac::interp
