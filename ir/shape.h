// Shapes and layouts as XLA prints them: f32[2,<=3,?]{1,0:T(8,128)(2,1)S(1)}, (s32[], token[]).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ir/primitive_type.h"

namespace xlac {

// A tile of a tiled layout: T(8,128). A dimension of -1 is XLA's "combine dimension" printed as '*'.
struct Tile {
  std::vector<int64_t> dimensions;
  static constexpr int64_t kCombineDimension = std::numeric_limits<int64_t>::min();
  bool operator==(const Tile&) const = default;
};

// XLA's SplitConfig: SC(dim:split,split...).
struct SplitConfig {
  int64_t dimension = 0;
  std::vector<int64_t> split_indices;
  bool operator==(const SplitConfig&) const = default;
};

enum class DimLevelType : uint8_t { kDense, kCompressed, kSingleton, kLooseCompressed };

struct Shape;

// Everything XLA prints inside a layout's braces, in its print order:
//   minor_to_major [ ':' D(..) T(..) L(..) E(..) #(..) *(..) S(..) SC(..) P(..) M(..) ]
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::vector<DimLevelType> dim_level_types;                       // D(...); empty = dense
  std::vector<bool> dim_unique;                                    // '+' suffix in D(...) is "not unique"
  std::vector<bool> dim_ordered;                                   // '~' suffix in D(...) is "not ordered"
  std::vector<Tile> tiles;                                         // T(...)(...)
  int64_t tail_padding_alignment_in_elements = 1;                  // L(n)
  int64_t element_size_in_bits = 0;                                // E(n); 0 = natural
  PrimitiveType index_primitive_type = PrimitiveType::kInvalid;    // #(type)
  PrimitiveType pointer_primitive_type = PrimitiveType::kInvalid;  // *(type)
  int64_t memory_space = 0;                                        // S(n)
  std::vector<SplitConfig> split_configs;                          // SC(...)
  std::vector<Shape> physical_shape;                               // P(shape); at most one element
  int64_t dynamic_shape_metadata_prefix_bytes = 0;                 // M(n)

  bool operator==(const Layout& other) const;
  // Default descending layout {rank-1,...,0}.
  static Layout Default(int64_t rank);
  // True when nothing beyond minor_to_major is set.
  bool HasOnlyMinorToMajor() const;
};

// An array, tuple, token, opaque or buffer shape. Array dims may be dynamic (printed `?` when unbounded and `<=N`
// when the bound is N); a dynamic dim's value in `dimensions` is its bound, or kUnboundedSize.
struct Shape {
  static constexpr int64_t kUnboundedSize = std::numeric_limits<int64_t>::min();

  PrimitiveType element_type = PrimitiveType::kInvalid;
  std::vector<int64_t> dimensions;
  std::vector<bool> dynamic_dimensions;  // same length as dimensions
  std::vector<Shape> tuple_shapes;       // for kTuple
  std::optional<Layout> layout;          // absent when the text had none (or for tuples/tokens)
  // XLA's buffer type `b(f32[4]{0})` (Shape::MakeBufferShape): the fields above describe the buffer's element array.
  // A buffer is not an array (IsArray() is false), so every op that needs an array rejects it, as in XLA; only
  // values that move it around (parameter, tuple, get-tuple-element, while, custom-call) carry one.
  bool is_buffer = false;

  Shape() = default;
  Shape(PrimitiveType type, std::vector<int64_t> dims);
  static Shape Array(PrimitiveType type, std::vector<int64_t> dims) { return Shape(type, std::move(dims)); }
  static Shape Scalar(PrimitiveType type) { return Shape(type, {}); }
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  // b(array): `array` must be an array shape.
  static Shape Buffer(Shape array);

  bool IsArray() const { return !is_buffer && IsArrayType(element_type); }
  bool IsBuffer() const { return is_buffer; }
  // The element array of a buffer (the shape itself with is_buffer cleared).
  Shape BufferElementShape() const;
  // True if this shape or any tuple element (recursively) is a buffer.
  bool ContainsBuffer() const;
  bool IsTuple() const { return element_type == PrimitiveType::kTuple; }
  bool IsToken() const { return element_type == PrimitiveType::kToken; }
  bool IsOpaque() const { return element_type == PrimitiveType::kOpaque; }
  int64_t rank() const { return static_cast<int64_t>(dimensions.size()); }
  bool IsScalar() const { return IsArray() && dimensions.empty(); }
  bool IsDynamicDimension(int64_t i) const { return dynamic_dimensions[i]; }
  bool IsUnboundedDimension(int64_t i) const { return dimensions[i] == kUnboundedSize; }
  bool IsStatic() const;  // recursively no dynamic dims
  // Product of dims; nullopt if it overflows int64 or any dim is unbounded.
  std::optional<int64_t> ElementCount() const;
  // Byte size of a dense array (ByteWidth per element); nullopt on overflow.
  std::optional<int64_t> ByteSizeOf() const;

  // Same element type and dims (and dynamic flags) and buffer-ness, ignoring layouts. Tuples compare element-wise.
  bool Compatible(const Shape& other) const;
  // Exact equality including layouts.
  bool operator==(const Shape& other) const;

  // Ensures arrays (recursively) have a layout, filling the default descending one where absent.
  void EnsureLayout();
  void ClearLayout();

  // Sub-shape at a ShapeIndex path into tuples; nullptr if the path is invalid.
  const Shape* Subshape(const std::vector<int64_t>& index) const;
  Shape* MutableSubshape(const std::vector<int64_t>& index);
};

struct ShapePrintOptions {
  bool print_layout = true;
  // Print a layout even for scalars/rank-0 etc. exactly when present (XLA prints `{}` for rank-0 with layout).
};

// Canonical XLA text: "f32[2,3]{1,0}", "(f32[], s32[4]{0})", "token[]", "pred[<=4,?]".
std::string ShapeToString(const Shape& shape, bool print_layout = true);
std::string LayoutToString(const Layout& layout);

// ShapeIndex {0,1} -> "{0,1}".
std::string ShapeIndexToString(const std::vector<int64_t>& index);

}  // namespace xlac
