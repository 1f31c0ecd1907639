// Dense literal values: the payload of constant(...) and of custom-call literal=.
//
// Elements are stored row-major in logical index order (layouts do not affect storage), ByteWidth(type) bytes each:
// pred as uint8 0/1, s2/s4/s8 as int8, u2/u4/u8 as uint8, f16/bf16 as their uint16 bit patterns, every f8/f6/f4
// type as its uint8 bit pattern (low bits), f32 float, f64 double, c64 complex<float>, c128 complex<double>.
// A literal whose values were elided in the text (`constant({...})`) is "unknown": it has a shape but no data.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "ir/shape.h"

namespace xlac {

// std::allocator that default-initializes: resize() leaves bytes as they are instead of zeroing them.
template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  using std::allocator<T>::allocator;
  template <typename U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

class Literal {
 public:
  Literal() = default;
  // Zero-filled array literal or tuple of zero-filled literals. Precondition: the element count fits in memory
  // (callers check Shape::ByteSizeOf against their limits first).
  explicit Literal(const Shape& shape);
  // The same shape with unspecified bytes, for producers that write every byte before anything reads it (the
  // interpreter's kernels: zero-filling a 150 MB activation first cost as much as computing it).
  static Literal CreateUninitialized(const Shape& shape);
  static Literal CreateUnknown(const Shape& shape);
  static Literal CreateTuple(std::vector<Literal> elements);
  // This array's bytes as an array of `shape` (a reshape, a copy, a bitcast to a type of the same width), shared
  // with this literal until either writes. Precondition: both are arrays of the same byte size.
  Literal ViewAs(const Shape& shape) const;

  const Shape& shape() const { return shape_; }
  bool is_unknown() const { return unknown_; }
  bool is_tuple() const { return shape_.IsTuple(); }
  const std::vector<Literal>& tuple_elements() const { return tuple_elements_; }
  std::vector<Literal>& mutable_tuple_elements() { return tuple_elements_; }

  int64_t element_count() const { return element_count_; }
  const uint8_t* raw_data() const { return data_ ? data_->data() : nullptr; }
  // Writable bytes. A copy of a literal shares its bytes until either writes (copy on write): the first write through
  // a shared literal copies them. A pointer from here is valid until the literal is copied from or destroyed; writes
  // through it after a copy was made reach the copy too, so write first, then copy.
  uint8_t* mutable_raw_data() {
    if (data_ != nullptr && data_.use_count() > 1) Unshare();
    return data_ ? data_->data() : nullptr;
  }
  int64_t byte_size() const { return data_ ? static_cast<int64_t>(data_->size()) : 0; }
  // Whether this literal's bytes are (still) shared with a copy: tests and memory accounting.
  bool SharesBytesWith(const Literal& other) const { return data_ != nullptr && data_ == other.data_; }

  // Typed element access by linear (row-major) index. T must match the storage type documented above.
  template <typename T>
  T Get(int64_t linear_index) const {
    T v;
    std::memcpy(&v, raw_data() + linear_index * sizeof(T), sizeof(T));
    return v;
  }
  template <typename T>
  void Set(int64_t linear_index, T v) {
    std::memcpy(mutable_raw_data() + linear_index * sizeof(T), &v, sizeof(T));
  }

  // Element as double / int64 regardless of storage (floats via their format; complex: real part).
  double GetAsDouble(int64_t linear_index) const;
  int64_t GetAsInt64(int64_t linear_index) const;
  // Stores `v` converted to the element type (floats round to nearest even; ints wrap).
  void SetFromDouble(int64_t linear_index, double v);
  void SetFromInt64(int64_t linear_index, int64_t v);

  // Bitwise equality of shape (ignoring layout), unknown-ness and data.
  bool operator==(const Literal& other) const;
  // Hash of shape and data, for CSE of constants.
  size_t Hash() const;

 private:
  using Bytes = std::vector<uint8_t, DefaultInitAllocator<uint8_t>>;
  void Unshare();

  Shape shape_;
  // Shared by copies (copy on write): handing a replicated parameter to 32 emulated devices, a value through an
  // identity op or a tuple, or a loop's state from one iteration to the next costs no bytes.
  std::shared_ptr<Bytes> data_;
  int64_t element_count_ = 0;
  std::vector<Literal> tuple_elements_;
  bool unknown_ = false;
};

}  // namespace xlac
