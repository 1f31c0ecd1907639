#include "ir/shape.h"

#include <cassert>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlac {

bool Layout::operator==(const Layout& other) const {
  return minor_to_major == other.minor_to_major && dim_level_types == other.dim_level_types &&
         dim_unique == other.dim_unique && dim_ordered == other.dim_ordered && tiles == other.tiles &&
         tail_padding_alignment_in_elements == other.tail_padding_alignment_in_elements &&
         element_size_in_bits == other.element_size_in_bits && index_primitive_type == other.index_primitive_type &&
         pointer_primitive_type == other.pointer_primitive_type && memory_space == other.memory_space &&
         split_configs == other.split_configs && physical_shape == other.physical_shape &&
         dynamic_shape_metadata_prefix_bytes == other.dynamic_shape_metadata_prefix_bytes;
}

Layout Layout::Default(int64_t rank) {
  Layout layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

bool Layout::HasOnlyMinorToMajor() const {
  Layout copy;
  copy.minor_to_major = minor_to_major;
  return copy == *this;
}

Shape::Shape(PrimitiveType type, std::vector<int64_t> dims)
    : element_type(type), dimensions(std::move(dims)), dynamic_dimensions(dimensions.size(), false) {}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type = PrimitiveType::kTuple;
  s.tuple_shapes = std::move(elements);
  return s;
}

Shape Shape::Token() {
  Shape s;
  s.element_type = PrimitiveType::kToken;
  return s;
}

Shape Shape::Buffer(Shape array) {
  assert(array.IsArray() && "a buffer shape wraps an array shape");
  array.is_buffer = true;
  return array;
}

Shape Shape::BufferElementShape() const {
  assert(is_buffer);
  Shape s = *this;
  s.is_buffer = false;
  return s;
}

bool Shape::ContainsBuffer() const {
  if (is_buffer) return true;
  for (const Shape& s : tuple_shapes) {
    if (s.ContainsBuffer()) return true;
  }
  return false;
}

bool Shape::IsStatic() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes) {
      if (!s.IsStatic()) return false;
    }
    return true;
  }
  for (bool d : dynamic_dimensions) {
    if (d) return false;
  }
  return true;
}

std::optional<int64_t> Shape::ElementCount() const {
  int64_t count = 1;
  for (int64_t d : dimensions) {
    if (d < 0) return std::nullopt;
    if (d != 0 && count > std::numeric_limits<int64_t>::max() / d) return std::nullopt;
    count *= d;
  }
  return count;
}

std::optional<int64_t> Shape::ByteSizeOf() const {
  std::optional<int64_t> count = ElementCount();
  if (!count) return std::nullopt;
  int64_t width = ByteWidth(element_type);
  if (width != 0 && *count > std::numeric_limits<int64_t>::max() / width) return std::nullopt;
  return *count * width;
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type != other.element_type || is_buffer != other.is_buffer) return false;
  if (IsTuple()) {
    if (tuple_shapes.size() != other.tuple_shapes.size()) return false;
    for (size_t i = 0; i < tuple_shapes.size(); ++i) {
      if (!tuple_shapes[i].Compatible(other.tuple_shapes[i])) return false;
    }
    return true;
  }
  return dimensions == other.dimensions && dynamic_dimensions == other.dynamic_dimensions;
}

bool Shape::operator==(const Shape& other) const {
  return element_type == other.element_type && dimensions == other.dimensions &&
         dynamic_dimensions == other.dynamic_dimensions && tuple_shapes == other.tuple_shapes &&
         layout == other.layout && is_buffer == other.is_buffer;
}

void Shape::EnsureLayout() {
  if (IsTuple()) {
    for (Shape& s : tuple_shapes) s.EnsureLayout();
    return;
  }
  if ((IsArray() || IsBuffer()) && !layout) layout = Layout::Default(rank());
}

void Shape::ClearLayout() {
  layout.reset();
  for (Shape& s : tuple_shapes) s.ClearLayout();
}

const Shape* Shape::Subshape(const std::vector<int64_t>& index) const {
  const Shape* s = this;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= static_cast<int64_t>(s->tuple_shapes.size())) return nullptr;
    s = &s->tuple_shapes[i];
  }
  return s;
}

Shape* Shape::MutableSubshape(const std::vector<int64_t>& index) {
  return const_cast<Shape*>(static_cast<const Shape*>(this)->Subshape(index));
}

namespace {

void AppendDimLevelType(std::string& out, const Layout& layout, size_t i) {
  switch (layout.dim_level_types[i]) {
    case DimLevelType::kDense:
      out += "D";
      break;
    case DimLevelType::kCompressed:
      out += "C";
      break;
    case DimLevelType::kSingleton:
      out += "S";
      break;
    case DimLevelType::kLooseCompressed:
      out += "H";
      break;
  }
  if (i < layout.dim_unique.size() && !layout.dim_unique[i]) out += "+";
  if (i < layout.dim_ordered.size() && !layout.dim_ordered[i]) out += "~";
}

}  // namespace

// Follows xla::Layout::Print: each optional part appears only when it differs from its default, and the ':' is
// printed only if some part follows. D(...) (sparse dim level types) is what older XLA versions printed first.
std::string LayoutToString(const Layout& layout) {
  std::string out = "{";
  out += absl::StrJoin(layout.minor_to_major, ",");
  std::string extra;
  if (!layout.dim_level_types.empty()) {
    bool all_dense = true;
    for (size_t i = 0; i < layout.dim_level_types.size(); ++i) {
      if (layout.dim_level_types[i] != DimLevelType::kDense ||
          (i < layout.dim_unique.size() && !layout.dim_unique[i]) ||
          (i < layout.dim_ordered.size() && !layout.dim_ordered[i])) {
        all_dense = false;
      }
    }
    if (!all_dense) {
      extra += "D(";
      for (size_t i = 0; i < layout.dim_level_types.size(); ++i) {
        if (i) extra += ",";
        AppendDimLevelType(extra, layout, i);
      }
      extra += ")";
    }
  }
  if (!layout.tiles.empty()) {
    extra += "T";
    for (const Tile& tile : layout.tiles) {
      extra += "(";
      for (size_t i = 0; i < tile.dimensions.size(); ++i) {
        if (i) extra += ",";
        if (tile.dimensions[i] == Tile::kCombineDimension) {
          extra += "*";
        } else {
          absl::StrAppend(&extra, tile.dimensions[i]);
        }
      }
      extra += ")";
    }
  }
  if (layout.tail_padding_alignment_in_elements != 1) {
    absl::StrAppend(&extra, "L(", layout.tail_padding_alignment_in_elements, ")");
  }
  if (layout.index_primitive_type != PrimitiveType::kInvalid) {
    absl::StrAppend(&extra, "#(", std::string(PrimitiveTypeName(layout.index_primitive_type)), ")");
  }
  if (layout.pointer_primitive_type != PrimitiveType::kInvalid) {
    absl::StrAppend(&extra, "*(", std::string(PrimitiveTypeName(layout.pointer_primitive_type)), ")");
  }
  if (layout.element_size_in_bits != 0) absl::StrAppend(&extra, "E(", layout.element_size_in_bits, ")");
  if (layout.memory_space != 0) absl::StrAppend(&extra, "S(", layout.memory_space, ")");
  if (!layout.split_configs.empty()) {
    extra += "SC";
    for (const SplitConfig& sc : layout.split_configs) {
      absl::StrAppend(&extra, "(", sc.dimension, ":", absl::StrJoin(sc.split_indices, ","), ")");
    }
  }
  if (!layout.physical_shape.empty()) {
    absl::StrAppend(&extra, "P(", ShapeToString(layout.physical_shape[0], true), ")");
  }
  if (layout.dynamic_shape_metadata_prefix_bytes > 0) {
    absl::StrAppend(&extra, "M(", layout.dynamic_shape_metadata_prefix_bytes, ")");
  }
  if (!extra.empty()) {
    out += ":";
    out += extra;
  }
  out += "}";
  return out;
}

std::string ShapeToString(const Shape& shape, bool print_layout) {
  if (shape.IsTuple()) {
    std::string out = "(";
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (i) out += ", ";
      out += ShapeToString(shape.tuple_shapes[i], print_layout);
    }
    out += ")";
    return out;
  }
  if (shape.IsBuffer()) return absl::StrCat("b(", ShapeToString(shape.BufferElementShape(), print_layout), ")");
  std::string out(PrimitiveTypeName(shape.element_type));
  out += "[";
  for (size_t i = 0; i < shape.dimensions.size(); ++i) {
    if (i) out += ",";
    if (shape.dynamic_dimensions[i]) {
      if (shape.dimensions[i] == Shape::kUnboundedSize) {
        out += "?";
      } else {
        absl::StrAppend(&out, "<=", shape.dimensions[i]);
      }
    } else {
      absl::StrAppend(&out, shape.dimensions[i]);
    }
  }
  out += "]";
  if (print_layout && shape.layout && shape.IsArray()) {
    // XLA prints no "{}" for a scalar whose layout carries nothing beyond the (empty) minor_to_major.
    if (shape.rank() > 0 || !shape.layout->HasOnlyMinorToMajor()) out += LayoutToString(*shape.layout);
  }
  return out;
}

std::string ShapeIndexToString(const std::vector<int64_t>& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

}  // namespace xlac
