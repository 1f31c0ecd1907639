// Shapes and layouts: f32[2,<=3,?]{2,1,0:T(8,128)(2,1)E(4)S(1)}, (s32[], token[]).
#include <limits>

#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"

namespace xlac::hlo {

bool Parser::CanBeShape() const {
  return kind() == TokKind::kPrimitiveType || kind() == TokKind::kLparen || AtBufferShape();
}

// No opcode is named `b`, so `b(` where a shape may start is always XLA's buffer shape.
bool Parser::AtBufferShape() const {
  return kind() == TokKind::kIdent && tok().str == "b" && LookAhead() == TokKind::kLparen;
}

bool Parser::ParseShape(Shape* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  if (kind() == TokKind::kLparen) {
    Next();
    std::vector<Shape> elements;
    if (kind() != TokKind::kRparen) {
      do {
        elements.emplace_back();
        if (!ParseShape(&elements.back())) return false;
      } while (EatIfPresent(TokKind::kComma));
    }
    if (!Expect(TokKind::kRparen, "at the end of a tuple shape")) return false;
    *out = Shape::Tuple(std::move(elements));
    return true;
  }
  if (AtBufferShape()) {
    // b(array): XLA's buffer type wraps exactly one array shape (with its layout).
    Next();  // b
    Next();  // (
    size_t element_pos = pos();
    if (kind() == TokKind::kRparen) return TokenError("expects the array shape of a buffer b(...)");
    Shape element;
    if (!ParseShape(&element)) return false;
    if (!element.IsArray()) {
      return Error(element_pos, fmt::format("a buffer b(...) holds an array shape, not {}",
                                            element.IsTuple()    ? "a tuple"
                                            : element.IsBuffer() ? "a buffer"
                                                                 : PrimitiveTypeName(element.element_type)));
    }
    if (kind() == TokKind::kComma) return TokenError("a buffer b(...) holds exactly one array shape");
    if (!Expect(TokKind::kRparen, "at the end of a buffer shape b(...)")) return false;
    *out = Shape::Buffer(std::move(element));
    return true;
  }
  if (kind() != TokKind::kPrimitiveType) {
    return TokenError("expects a shape (primitive type or '(' of a tuple)");
  }
  const PrimitiveType type = tok().primitive_type;
  Next();
  Shape shape;
  shape.element_type = type;
  if (!Expect(TokKind::kLsquare, "to start the dimensions of a shape")) return false;
  if (kind() != TokKind::kRsquare) {
    do {
      if (kind() == TokKind::kQuestionMark) {
        Next();
        shape.dimensions.push_back(Shape::kUnboundedSize);
        shape.dynamic_dimensions.push_back(true);
        continue;
      }
      bool dynamic = EatIfPresent(TokKind::kLeq);
      size_t dim_pos = pos();
      int64_t size;
      if (!ParseInt64(&size)) return false;
      if (size < 0) return Error(dim_pos, fmt::format("invalid dimension size {}", size));
      shape.dimensions.push_back(size);
      shape.dynamic_dimensions.push_back(dynamic);
    } while (EatIfPresent(TokKind::kComma));
  }
  if (!Expect(TokKind::kRsquare, "to end the dimensions of a shape")) return false;
  if ((type == PrimitiveType::kToken || type == PrimitiveType::kOpaque) && !shape.dimensions.empty()) {
    return Error(prev_end() - 1, fmt::format("{} shapes have no dimensions", PrimitiveTypeName(type)));
  }

  // A '{' starts a layout only if an integer or ':' follows: `-> f32[2] {` may open a computation body. XLA's
  // old lexer also accepted `f32[]{}` (an empty layout on a rank-0 shape), so that is taken as a layout too.
  if (kind() == TokKind::kLbrace) {
    TokKind next = LookAhead();
    if (next == TokKind::kInt || next == TokKind::kColon || (next == TokKind::kRbrace && shape.rank() == 0)) {
      size_t layout_pos = pos();
      Layout layout;
      if (!ParseLayout(&layout)) return false;
      if (static_cast<int64_t>(layout.minor_to_major.size()) != shape.rank()) {
        return Error(layout_pos, fmt::format("dimensions size is {}, but minor to major size is {}", shape.rank(),
                                             layout.minor_to_major.size()));
      }
      if (!layout.physical_shape.empty()) {
        return Error(layout_pos, "layout has a physical shape, but is not for a sparse array");
      }
      if (type == PrimitiveType::kToken || type == PrimitiveType::kOpaque) {
        return Error(layout_pos, fmt::format("{} shapes have no layout", PrimitiveTypeName(type)));
      }
      shape.layout = std::move(layout);
    }
  }
  *out = std::move(shape);
  return true;
}

namespace {

bool IsIdent(const Parser& p, std::string_view text) { return p.kind() == TokKind::kIdent && p.tok().str == text; }

}  // namespace

bool Parser::ParseLayout(Layout* out) {
  Layout layout;
  if (!Expect(TokKind::kLbrace, "to start a layout")) return false;
  auto parse_int_attr = [&](int64_t* value, std::string_view what) {
    Next();  // the letter
    return Expect(TokKind::kLparen, fmt::format("after {}", what)) && ParseInt64(value) &&
           Expect(TokKind::kRparen, fmt::format("to end {}", what));
  };
  auto parse_type_attr = [&](PrimitiveType* type, std::string_view what) {
    Next();  // '#' or '*'
    if (!Expect(TokKind::kLparen, fmt::format("after {}", what))) return false;
    if (kind() != TokKind::kPrimitiveType || !IsUnsignedIntegralType(tok().primitive_type)) {
      return TokenError(fmt::format("expects an unsigned integer type for the {}", what));
    }
    *type = tok().primitive_type;
    Next();
    return Expect(TokKind::kRparen, fmt::format("to end the {}", what));
  };

  if (kind() != TokKind::kRbrace) {
    if (kind() == TokKind::kInt) {
      do {
        int64_t dim;
        if (!ParseInt64(&dim)) return false;
        layout.minor_to_major.push_back(dim);
      } while (EatIfPresent(TokKind::kComma));
    }
    if (EatIfPresent(TokKind::kColon)) {
      if (IsIdent(*this, "D")) {
        Next();
        bool any_suffix = false;
        std::vector<bool> unique, ordered;
        if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
              if (kind() != TokKind::kIdent) return TokenError("expects a dim level type (D, C, S or H)");
              const std::string& t = tok().str;
              DimLevelType level;
              if (t == "D") {
                level = DimLevelType::kDense;
              } else if (t == "C") {
                level = DimLevelType::kCompressed;
              } else if (t == "S") {
                level = DimLevelType::kSingleton;
              } else if (t == "H") {
                level = DimLevelType::kLooseCompressed;
              } else {
                return TokenError("expects a dim level type (D, C, S or H)");
              }
              Next();
              bool not_unique = EatIfPresent(TokKind::kPlus);
              bool not_ordered = EatIfPresent(TokKind::kTilde);
              any_suffix |= not_unique || not_ordered;
              layout.dim_level_types.push_back(level);
              unique.push_back(!not_unique);
              ordered.push_back(!not_ordered);
              return true;
            })) {
          return false;
        }
        if (any_suffix) {
          layout.dim_unique = std::move(unique);
          layout.dim_ordered = std::move(ordered);
        }
      }
      if (IsIdent(*this, "T")) {
        Next();
        do {
          Tile tile;
          if (!ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
                if (EatIfPresent(TokKind::kAsterisk)) {
                  tile.dimensions.push_back(Tile::kCombineDimension);
                  return true;
                }
                int64_t dim;
                if (!ParseInt64(&dim)) return false;
                tile.dimensions.push_back(dim);
                return true;
              })) {
            return false;
          }
          layout.tiles.push_back(std::move(tile));
        } while (kind() == TokKind::kLparen);
      }
      if (IsIdent(*this, "L") &&
          !parse_int_attr(&layout.tail_padding_alignment_in_elements, "the tail padding alignment L(...)")) {
        return false;
      }
      if (kind() == TokKind::kOctothorp && !parse_type_attr(&layout.index_primitive_type, "index type #(...)")) {
        return false;
      }
      if (kind() == TokKind::kAsterisk && !parse_type_attr(&layout.pointer_primitive_type, "pointer type *(...)")) {
        return false;
      }
      if (IsIdent(*this, "E") && !parse_int_attr(&layout.element_size_in_bits, "the element size E(...)")) {
        return false;
      }
      if (IsIdent(*this, "S") && !parse_int_attr(&layout.memory_space, "the memory space S(...)")) return false;
      if (IsIdent(*this, "SC")) {
        Next();
        do {
          SplitConfig config;
          if (!Expect(TokKind::kLparen, "to start a split config") || !ParseInt64(&config.dimension) ||
              !ParseList(TokKind::kColon, TokKind::kRparen, TokKind::kComma, [&] {
                int64_t index;
                if (!ParseInt64(&index)) return false;
                config.split_indices.push_back(index);
                return true;
              })) {
            return false;
          }
          layout.split_configs.push_back(std::move(config));
        } while (kind() == TokKind::kLparen);
      }
      if (IsIdent(*this, "P")) {
        Next();
        Shape physical;
        if (!Expect(TokKind::kLparen, "to start the physical shape") || !ParseShape(&physical) ||
            !Expect(TokKind::kRparen, "to end the physical shape")) {
          return false;
        }
        layout.physical_shape.push_back(std::move(physical));
      }
      if (IsIdent(*this, "M") &&
          !parse_int_attr(&layout.dynamic_shape_metadata_prefix_bytes, "the dynamic shape metadata size M(...)")) {
        return false;
      }
    }
  }
  if (!Expect(TokKind::kRbrace, "to end a layout")) return false;
  *out = std::move(layout);
  return true;
}

bool Parser::ParseShapeList(std::vector<Shape>* out) {
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    out->emplace_back();
    return ParseShape(&out->back());
  });
}

}  // namespace xlac::hlo
