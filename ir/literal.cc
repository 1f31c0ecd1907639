#include "ir/literal.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>

#include "ir/float_types.h"

namespace xlac {

Literal::Literal(const Shape& shape) : Literal(CreateUninitialized(shape)) {
  std::function<void(Literal&)> zero = [&](Literal& literal) {
    if (literal.data_ != nullptr) std::fill(literal.data_->begin(), literal.data_->end(), uint8_t{0});
    for (Literal& element : literal.tuple_elements_) zero(element);
  };
  zero(*this);
}

Literal Literal::CreateUninitialized(const Shape& shape) {
  Literal literal;
  literal.shape_ = shape;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) literal.tuple_elements_.push_back(CreateUninitialized(element));
    return literal;
  }
  if (!shape.IsArray()) return literal;
  std::optional<int64_t> count = shape.ElementCount();
  std::optional<int64_t> bytes = shape.ByteSizeOf();
  assert(count && bytes && "literal shape too large; callers must check ByteSizeOf first");
  literal.element_count_ = *count;
  literal.data_ = std::make_shared<Bytes>(static_cast<size_t>(*bytes));
  return literal;
}

Literal Literal::ViewAs(const Shape& shape) const {
  assert(shape_.IsArray() && shape.IsArray() && shape.ByteSizeOf() == std::optional<int64_t>(byte_size()) &&
         "ViewAs needs an array of the same byte size");
  Literal view;
  view.shape_ = shape;
  view.data_ = data_;
  view.element_count_ = shape.ElementCount().value_or(0);
  view.unknown_ = unknown_;
  return view;
}

void Literal::Unshare() { data_ = std::make_shared<Bytes>(*data_); }

Literal Literal::CreateUnknown(const Shape& shape) {
  Literal literal;
  literal.shape_ = shape;
  literal.unknown_ = true;
  literal.element_count_ = shape.ElementCount().value_or(0);
  return literal;
}

Literal Literal::CreateTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements) shapes.push_back(e.shape());
  Literal literal;
  literal.shape_ = Shape::Tuple(std::move(shapes));
  literal.tuple_elements_ = std::move(elements);
  return literal;
}

namespace {

uint64_t LoadBits(const uint8_t* p, int64_t width) {
  uint64_t bits = 0;
  std::memcpy(&bits, p, static_cast<size_t>(width));  // little-endian host
  return bits;
}

}  // namespace

double Literal::GetAsDouble(int64_t i) const {
  PrimitiveType t = shape_.element_type;
  const uint8_t* p = raw_data() + i * ByteWidth(t);
  switch (t) {
    case PrimitiveType::kPred:
      return *p ? 1.0 : 0.0;
    case PrimitiveType::kC64:
      return Get<std::complex<float>>(i).real();
    case PrimitiveType::kC128:
      return Get<std::complex<double>>(i).real();
    default:
      break;
  }
  if (IsFloatingPointType(t)) return FloatBitsToDouble(t, LoadBits(p, ByteWidth(t)));
  if (IsSignedIntegralType(t)) return static_cast<double>(GetAsInt64(i));
  return static_cast<double>(static_cast<uint64_t>(GetAsInt64(i)));
}

int64_t Literal::GetAsInt64(int64_t i) const {
  PrimitiveType t = shape_.element_type;
  int64_t width = ByteWidth(t);
  const uint8_t* p = raw_data() + i * width;
  if (IsFloatingPointType(t) || IsComplexType(t)) return static_cast<int64_t>(GetAsDouble(i));
  uint64_t bits = LoadBits(p, width);
  if (IsSignedIntegralType(t) && width < 8) {
    int shift = 64 - static_cast<int>(width) * 8;
    return static_cast<int64_t>(bits << shift) >> shift;
  }
  return static_cast<int64_t>(bits);
}

void Literal::SetFromDouble(int64_t i, double v) {
  PrimitiveType t = shape_.element_type;
  switch (t) {
    case PrimitiveType::kC64:
      Set(i, std::complex<float>(static_cast<float>(v), 0));
      return;
    case PrimitiveType::kC128:
      Set(i, std::complex<double>(v, 0));
      return;
    case PrimitiveType::kPred:
      mutable_raw_data()[i] = v != 0;
      return;
    default:
      break;
  }
  if (IsFloatingPointType(t)) {
    uint64_t bits = DoubleToFloatBits(t, v);
    std::memcpy(mutable_raw_data() + i * ByteWidth(t), &bits, static_cast<size_t>(ByteWidth(t)));
    return;
  }
  SetFromInt64(i, std::isfinite(v) ? static_cast<int64_t>(v) : 0);
}

void Literal::SetFromInt64(int64_t i, int64_t v) {
  PrimitiveType t = shape_.element_type;
  if (IsFloatingPointType(t) || IsComplexType(t)) {
    SetFromDouble(i, static_cast<double>(v));
    return;
  }
  if (t == PrimitiveType::kPred) {
    mutable_raw_data()[i] = v != 0;
    return;
  }
  int64_t width = ByteWidth(t);
  int bits = BitWidth(t);
  uint64_t u = static_cast<uint64_t>(v);
  if (bits < 8) {
    // Sub-byte types: wrap to the type's width, then sign-extend into the storage byte for signed types.
    uint64_t mask = (uint64_t{1} << bits) - 1;
    u &= mask;
    if (IsSignedIntegralType(t) && (u >> (bits - 1)) & 1) u |= ~mask;
  }
  std::memcpy(mutable_raw_data() + i * width, &u, static_cast<size_t>(width));
}

bool Literal::operator==(const Literal& other) const {
  return shape_.Compatible(other.shape_) && unknown_ == other.unknown_ && byte_size() == other.byte_size() &&
         (data_ == other.data_ || byte_size() == 0 ||
          std::memcmp(raw_data(), other.raw_data(), static_cast<size_t>(byte_size())) == 0) &&
         tuple_elements_ == other.tuple_elements_;
}

size_t Literal::Hash() const {
  size_t h = std::hash<int>()(static_cast<int>(shape_.element_type));
  for (int64_t d : shape_.dimensions) h = h * 31 + std::hash<int64_t>()(d);
  // FNV-1a over the bytes: cheap and independent of pointer values.
  for (int64_t i = 0; i < byte_size(); ++i) h = (h ^ raw_data()[i]) * 1099511628211ull;
  for (const Literal& e : tuple_elements_) h = h * 31 + e.Hash();
  return h ^ (unknown_ ? 0x9e3779b97f4a7c15ull : 0);
}

}  // namespace xlac
