// TPU tiled layouts. Evidence for the rules (ir/tpu_layout.h) is HLO that XLA's TPU compiler printed, as found in
// public repositories and documentation:
//  - f32[32,6144]{1,0:T(8,128)}, f32[1,6144]{1,0:T(1,128)}, bf16[1,6144]{1,0:T(2,128)(2,1)},
//    pred[32,6144]{1,0:T(8,128)(4,1)}, pred[1,1]{1,0:T(4,128)(4,1)}, pred[]{:T(512)} (one v5-generation dump);
//  - s32[20,3,256,133]{2,1,0,3:T(4,128)} (second-minor extent 3 -> 4 rows), f8e4m3fn[..]{3,2,1,0:T(32,128)(4,1)};
//  - rank 1: s32[16]{0:T(128)}, u32[1]{0:T(128)}, u32[256]{0:T(256)}, u32[1024]{0:T(1024)}, s32[2048]{0:T(1024)},
//    bf16[128]{0:T(256)(128)(2,1)}, bf16[6144]{0:T(1024)(128)(2,1)}; scalars u32[]{:T(128)}.
// Where generations differ the newer rule is chosen: older dumps show 16-bit T(8,128)(2,1) and 8-bit T(8,128)(4,1)
// for large arrays (this model uses the full 8*p sublane rows: T(16,128)(2,1), T(32,128)(4,1)) and a 256-element
// minimum for 32-bit rank 0/1 (f32[8]{0:T(256)}, s32[]{:T(256)}; this model: 128).
#include "ir/tpu_layout.h"

#include <algorithm>

namespace xlac {
namespace {

int StorageBits(PrimitiveType type) {
  if (type == PrimitiveType::kPred) return 8;
  int bits = BitWidth(type);
  if (bits == 6) return 8;
  return bits;
}

int64_t Packing(PrimitiveType type) {
  int bits = StorageBits(type);
  return bits < 32 ? 32 / bits : 1;
}

int64_t NextPowerOfTwo(int64_t v) {
  int64_t p = 1;
  while (p < v) p *= 2;
  return p;
}

std::optional<int64_t> Mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

// Bytes of `elements` elements of `type`, whole bytes.
std::optional<int64_t> BytesOf(int64_t elements, PrimitiveType type) {
  std::optional<int64_t> bits = Mul(elements, StorageBits(type));
  if (!bits) return std::nullopt;
  return (*bits + 7) / 8;
}

}  // namespace

Layout TpuTiledLayout(const Shape& shape) {
  Layout layout = shape.layout ? *shape.layout : Layout::Default(shape.rank());
  if (!layout.tiles.empty()) return layout;
  const int64_t p = Packing(shape.element_type);
  const std::vector<Tile> packing = p > 1 ? std::vector<Tile>{Tile{{p, 1}}} : std::vector<Tile>{};
  if (shape.rank() == 0) {
    layout.tiles = {Tile{{128 * p}}};
  } else if (shape.rank() == 1) {
    int64_t n = std::max(128 * p, std::min<int64_t>(1024, NextPowerOfTwo(std::max<int64_t>(shape.dimensions[0], 1))));
    layout.tiles = {Tile{{n}}};
    if (p > 1) {
      layout.tiles.push_back(Tile{{128}});
      layout.tiles.insert(layout.tiles.end(), packing.begin(), packing.end());
    }
  } else {
    int64_t second_minor = shape.dimensions[layout.minor_to_major[1]];
    int64_t rows = std::clamp(NextPowerOfTwo(std::max<int64_t>(second_minor, 1)), p, 8 * p);
    layout.tiles = {Tile{{rows, 128}}};
    layout.tiles.insert(layout.tiles.end(), packing.begin(), packing.end());
  }
  return layout;
}

Shape WithTpuLayouts(const Shape& shape) {
  Shape result = shape;
  if (shape.IsTuple()) {
    for (Shape& element : result.tuple_shapes) element = WithTpuLayouts(element);
  } else if (shape.IsArray()) {
    result.layout = TpuTiledLayout(shape);
  }
  return result;
}

std::optional<int64_t> TpuUnpaddedByteSize(const Shape& shape) {
  if (!shape.IsArray()) return std::nullopt;
  std::optional<int64_t> elements = shape.ElementCount();
  if (!elements) return std::nullopt;
  return BytesOf(*elements, shape.element_type);
}

std::optional<int64_t> TpuPaddedByteSize(const Shape& shape) {
  if (!shape.IsArray()) return std::nullopt;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.IsUnboundedDimension(i)) return std::nullopt;
  }
  const Layout layout = TpuTiledLayout(shape);
  // Physical extents, most minor first, extended with leading 1s when the tile has more dimensions than the shape.
  std::vector<int64_t> physical;
  for (int64_t dim : layout.minor_to_major) physical.push_back(shape.dimensions[dim]);
  const Tile& tile = layout.tiles.front();
  const int64_t k = static_cast<int64_t>(tile.dimensions.size());
  while (static_cast<int64_t>(physical.size()) < k) physical.push_back(1);
  int64_t elements = 1;
  for (int64_t i = 0; i < static_cast<int64_t>(physical.size()); ++i) {
    int64_t extent = physical[i];
    if (i < k) {
      int64_t t = tile.dimensions[k - 1 - i];
      if (t != Tile::kCombineDimension && t > 0) extent = (extent + t - 1) / t * t;
    }
    std::optional<int64_t> next = Mul(elements, extent);
    if (!next) return std::nullopt;
    elements = *next;
  }
  return BytesOf(elements, shape.element_type);
}

}  // namespace xlac
