// The arithmetic of array shardings, shared by sharding propagation, the SPMD partitioner and the tools that shard
// inputs and assemble outputs.
//
// A `Tiling` is the normalized form of an array sharding over `num_devices` devices: the device array has shape
// [tiles[0], ..., tiles[rank-1], replication] (row-major `devices`), device `devices[i]` holds the tile whose index is
// the leading `rank` coordinates of i, and the trailing axis enumerates the devices holding the same tile. Replicated
// and maximal shardings are tiles of all ones (maximal: the value is computed by every device, and read from
// `device`); manual shardings keep `manual` set and no tiles. A sharding manual on a subgroup of devices
// (`last_tile_dims={manual}`, partially manual shard_map) has a further trailing axis of `manual_subgroup` devices
// whose data differ: collectives and resharding never cross it.
//
// Shard shapes follow XLA: a dimension of size D over T tiles has shards of ceil(D / T) elements; tile t starts at
// t * ceil(D / T), so trailing shards may be partly (or wholly) padding.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/shape.h"
#include "ir/sharding.h"

namespace xlac::spmd {

struct Tiling {
  std::vector<int64_t> tiles;    // one per array dimension
  int64_t replication = 1;       // trailing axis of the device array
  std::vector<int64_t> devices;  // row-major over [tiles..., replication]
  bool manual = false;
  int64_t manual_subgroup = 1;            // trailing manual axis of the device array (after replication), when > 1
  std::optional<int64_t> maximal_device;  // set for {maximal device=N}

  static Tiling Replicated(int64_t rank, int64_t num_devices);
  int64_t rank() const { return static_cast<int64_t>(tiles.size()); }
  int64_t num_tiles() const;
  bool IsReplicated() const { return !manual && num_tiles() == 1; }
  // Shape of the device array: tiles, the replication axis, and the manual axis when manual_subgroup > 1.
  std::vector<int64_t> AxisSizes() const;
  bool operator==(const Tiling&) const = default;
};

// The normalized form of `sharding` (not a tuple) for an array of rank `rank` over `num_devices` devices. Fails with
// a user-facing message for shardings the partitioner cannot represent (unreduced or manual subgroups, device ids
// out of range, a tile assignment that does not name every device exactly once).
absl::StatusOr<Tiling> TilingOf(const Sharding& sharding, int64_t rank, int64_t num_devices);

// The canonical HLO sharding of `tiling`: {replicated}, {manual}, {maximal device=N}, or tiled with
// last_tile_dim_replicate when replication > 1; the iota form when the device order is an iota transpose XLA would
// print that way, else an explicit list.
Sharding ToSharding(const Tiling& tiling);

// XLA's text form of a sharding ("{devices=[2,1]0,1}"), for messages and reports.
std::string ShardingToString(const Sharding& sharding);

// ceil(dims[i] / tiles[i]) per dimension.
std::vector<int64_t> ShardDims(const std::vector<int64_t>& dims, const Tiling& tiling);
Shape ShardShape(const Shape& shape, const Tiling& tiling);

// Position of `device` in the device array: tile index per dimension followed by the replica index; nullopt if the
// device is not in the array.
std::optional<std::vector<int64_t>> DeviceCoordinates(const Tiling& tiling, int64_t device);
// Element offset of `device`'s shard per dimension (tile index * shard size).
std::vector<int64_t> ShardOffsets(const std::vector<int64_t>& dims, const Tiling& tiling, int64_t device);

// Devices grouped along `axes` of the device array (indices into AxisSizes()): devices that agree on every other
// coordinate form one group, ordered row-major over `axes`. Groups are listed in row-major order of the other axes.
std::vector<std::vector<int64_t>> GroupsAlongAxes(const Tiling& tiling, const std::vector<int64_t>& axes);

// Rebuilds the device array for an array of rank `axes_per_dim.size()`: new dimension j is tiled by the product of
// the old axes axes_per_dim[j] (indices into AxisSizes(), in major-to-minor order), and every old axis not named
// becomes replication, except the manual axis, which stays manual. Each axis may be named at most once.
Tiling RegroupAxes(const Tiling& tiling, const std::vector<std::vector<int64_t>>& axes_per_dim);

// The tiling of a reshape's result (dims `in` -> `out`) that keeps every device's elements where they are, or
// nullopt. The reshape regroups dimensions into groups of equal element counts; within a group the tiles must cut
// the flattened group into contiguous blocks (the dimensions before the last tiled one tiled element by element, that
// one evenly, the rest whole) that are also blocks of the other side, which then takes the same device order: a merge
// of [4 over 4 tiles, 64 over 8] is [256 over 32] and the split back is the reverse. A group of one dimension (size-1
// dimensions aside) of the same size on both sides keeps its tiles, even or not. Symmetric: `out` -> `in` inverts it.
std::optional<Tiling> ReshapeTiling(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const Tiling& t);

// Transposes an N-d row-major array of device ids.
std::vector<int64_t> TransposeArray(const std::vector<int64_t>& values, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& perm);

}  // namespace xlac::spmd
