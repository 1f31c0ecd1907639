// TPU tiled layouts and padded sizes: the physical layout XLA's TPU compiler gives an array (in XLA's syntax,
// f32[..]{1,0:T(8,128)}) and the HBM bytes it occupies once its minor dimensions are padded to the tile.
//
// The rules (docs/tpu_model.md has the evidence and what differs between TPU generations):
//  - storage width: pred and 6-bit floats are stored in 8 bits; 64-bit and complex types keep their width with
//    32-bit tiles (TPUs emulate them with 32-bit pairs; public sources show no separate tiling);
//  - packing p = 32 / storage bits for narrower types (16-bit: 2, 8-bit: 4, 4-bit: 8, 2-bit: 16), else 1;
//  - rank >= 2: the two most minor dimensions of the layout are tiled T(r,128)(p,1) with r = the smallest power of
//    two >= the second-minor extent, at least p and at most 8*p ({1,0:T(8,128)} f32, T(16,128)(2,1) bf16,
//    T(32,128)(4,1) s8/pred; f32[1,N] gets T(1,128), bf16[1,N] T(2,128)(2,1), pred[1,1] T(4,128)(4,1));
//  - rank 1: T(n)(128)(p,1) (32-bit and wider: T(n)) with n = the smallest power of two >= the extent, at least
//    128*p and at most 1024 (at least 128*p when that is larger): s32[16]{0:T(128)}, bf16[128]{0:T(256)(128)(2,1)},
//    f32[4096]{0:T(1024)};
//  - rank 0: {:T(128*p)} (pred[]{:T(512)}, f32[]{:T(128)}).
// Padded bytes: the first tile pads the dimensions it covers up to a multiple of the tile; the later tiles
// ((128), (p,1)) subdivide it without adding padding. An array whose layout already has tiles (a TPU HLO dump) is
// sized by those tiles.
#pragma once

#include <cstdint>
#include <optional>

#include "ir/shape.h"

namespace xlac {

// The TPU layout of array `shape`: its minor_to_major (the default descending one when it has none) with the TPU
// tiles above. Tiles already present are kept.
Layout TpuTiledLayout(const Shape& shape);

// `shape` with every array leaf given its TPU tiled layout (tuples recursively).
Shape WithTpuLayouts(const Shape& shape);

// Bytes the array occupies on a TPU: padded to its tiles (TpuTiledLayout when it has none). nullopt when the
// shape is dynamic-unbounded or the size overflows. Tuples are not arrays: nullopt.
std::optional<int64_t> TpuPaddedByteSize(const Shape& shape);

// Bytes of the dense array without padding (elements * storage bits / 8, rounded up to whole bytes).
std::optional<int64_t> TpuUnpaddedByteSize(const Shape& shape);

}  // namespace xlac
