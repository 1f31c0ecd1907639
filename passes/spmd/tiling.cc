#include "passes/spmd/tiling.h"

#include <algorithm>
#include <numeric>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xlac::spmd {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

}  // namespace

Tiling Tiling::Replicated(int64_t rank, int64_t num_devices) {
  Tiling t;
  t.tiles.assign(static_cast<size_t>(rank), 1);
  t.replication = num_devices;
  t.devices = Iota(num_devices);
  return t;
}

int64_t Tiling::num_tiles() const { return Product(tiles); }

std::vector<int64_t> Tiling::AxisSizes() const {
  std::vector<int64_t> sizes = tiles;
  sizes.push_back(replication);
  if (manual_subgroup > 1) sizes.push_back(manual_subgroup);
  return sizes;
}

std::vector<int64_t> TransposeArray(const std::vector<int64_t>& values, const std::vector<int64_t>& dims,
                                    const std::vector<int64_t>& perm) {
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t i = rank; i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  std::vector<int64_t> out_dims(rank);
  for (size_t i = 0; i < rank; ++i) out_dims[i] = dims[perm[i]];
  std::vector<int64_t> out(values.size());
  std::vector<int64_t> index(rank, 0);
  for (size_t linear = 0; linear < values.size(); ++linear) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += index[i] * strides[perm[i]];
    out[linear] = values[src];
    for (size_t i = rank; i-- > 0;) {
      if (++index[i] < out_dims[i]) break;
      index[i] = 0;
    }
  }
  return out;
}

absl::StatusOr<Tiling> TilingOf(const Sharding& sharding, int64_t rank, int64_t num_devices) {
  switch (sharding.kind) {
    case Sharding::Kind::kReplicated:
    case Sharding::Kind::kUnknown:
      return Tiling::Replicated(rank, num_devices);
    case Sharding::Kind::kMaximal: {
      if (sharding.device < 0 || sharding.device >= num_devices) {
        return absl::InvalidArgumentError(
            absl::StrCat("maximal sharding names device ", sharding.device, " of ", num_devices));
      }
      Tiling t = Tiling::Replicated(rank, num_devices);
      t.maximal_device = sharding.device;
      return t;
    }
    case Sharding::Kind::kManual: {
      Tiling t = Tiling::Replicated(rank, num_devices);
      t.manual = true;
      return t;
    }
    case Sharding::Kind::kUnreduced:
      return absl::UnimplementedError("unreduced shardings are not supported");
    case Sharding::Kind::kTuple:
      return absl::InvalidArgumentError("a tuple sharding on an array value");
    case Sharding::Kind::kTiled:
      break;
  }
  const int64_t data_dims = sharding.NumDataTileDims();
  if (data_dims != rank) {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", ShardingToString(sharding), " tiles ", data_dims,
                                                   " dimensions of a rank-", rank, " array"));
  }
  for (Sharding::SubgroupType type : sharding.last_tile_dims) {
    if (type != Sharding::SubgroupType::kReplicated && type != Sharding::SubgroupType::kManual) {
      return absl::UnimplementedError(absl::StrCat("sharding ", ShardingToString(sharding),
                                                   " has unreduced or maximal subgroups, which the SPMD "
                                                   "partitioner does not support yet"));
    }
  }
  Tiling t;
  t.tiles.assign(sharding.tile_dims.begin(), sharding.tile_dims.begin() + rank);
  t.devices = sharding.DeviceList();
  if (static_cast<int64_t>(t.devices.size()) != Product(sharding.tile_dims)) {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", ShardingToString(sharding), " lists ", t.devices.size(),
                                                   " devices for ", Product(sharding.tile_dims), " tiles"));
  }
  // Trailing subgroup dims: replicated ones merge into the replication axis, manual ones into the manual axis
  // after it (transposing the device array when a manual dim comes first).
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i) perm.push_back(i);
  std::vector<int64_t> manual_dims;
  const int64_t subgroups = static_cast<int64_t>(sharding.tile_dims.size()) - rank;
  for (int64_t k = 0; k < subgroups; ++k) {
    bool is_manual = k < static_cast<int64_t>(sharding.last_tile_dims.size()) &&
                     sharding.last_tile_dims[k] == Sharding::SubgroupType::kManual;
    if (is_manual) {
      manual_dims.push_back(rank + k);
      t.manual_subgroup *= sharding.tile_dims[rank + k];
    } else {
      perm.push_back(rank + k);
      t.replication *= sharding.tile_dims[rank + k];
    }
  }
  perm.insert(perm.end(), manual_dims.begin(), manual_dims.end());
  t.devices = TransposeArray(t.devices, sharding.tile_dims, perm);
  if (static_cast<int64_t>(t.devices.size()) != num_devices) {
    return absl::InvalidArgumentError(absl::StrCat("sharding ", ShardingToString(sharding), " uses ", t.devices.size(),
                                                   " devices, but the program runs on ", num_devices, " partitions"));
  }
  std::vector<bool> seen(static_cast<size_t>(num_devices), false);
  for (int64_t d : t.devices) {
    if (d < 0 || d >= num_devices || seen[d]) {
      return absl::InvalidArgumentError(absl::StrCat("sharding ", ShardingToString(sharding),
                                                     " does not name each of the ", num_devices,
                                                     " devices exactly once"));
    }
    seen[d] = true;
  }
  return t;
}

Sharding ToSharding(const Tiling& tiling) {
  if (tiling.manual) return Sharding::Manual();
  if (tiling.maximal_device) return Sharding::Maximal(*tiling.maximal_device);
  Sharding s;
  s.kind = Sharding::Kind::kTiled;
  s.tile_dims = tiling.tiles;
  if (tiling.manual_subgroup > 1) {
    if (tiling.replication > 1) {
      s.tile_dims.push_back(tiling.replication);
      s.last_tile_dims.push_back(Sharding::SubgroupType::kReplicated);
    }
    s.tile_dims.push_back(tiling.manual_subgroup);
    s.last_tile_dims.push_back(Sharding::SubgroupType::kManual);
    s.device_ids = tiling.devices;
    return s;
  }
  if (tiling.num_tiles() == 1) return Sharding::Replicated();
  if (tiling.replication > 1) {
    s.tile_dims.push_back(tiling.replication);
    s.last_tile_dim_replicate = true;
  }
  if (tiling.devices == Iota(static_cast<int64_t>(tiling.devices.size()))) {
    IotaList iota;
    iota.dims = s.tile_dims;
    iota.reshape_dims = {static_cast<int64_t>(tiling.devices.size())};
    s.iota = iota;
  } else {
    s.device_ids = tiling.devices;
  }
  return s;
}

std::string ShardingToString(const Sharding& s) {
  switch (s.kind) {
    case Sharding::Kind::kReplicated:
      return "{replicated}";
    case Sharding::Kind::kManual:
      return "{manual}";
    case Sharding::Kind::kUnknown:
      return "{unknown}";
    case Sharding::Kind::kUnreduced:
      return "{unreduced}";
    case Sharding::Kind::kMaximal:
      return absl::StrCat("{maximal device=", s.device, "}");
    case Sharding::Kind::kTuple: {
      std::vector<std::string> parts;
      for (const Sharding& e : s.tuple_elements) parts.push_back(ShardingToString(e));
      return absl::StrCat("{", absl::StrJoin(parts, ", "), "}");
    }
    case Sharding::Kind::kTiled:
      break;
  }
  std::string out = absl::StrCat("{devices=[", absl::StrJoin(s.tile_dims, ","), "]");
  if (s.iota) {
    absl::StrAppend(&out, "<=[", absl::StrJoin(s.iota->reshape_dims, ","), "]");
    if (!s.iota->transpose_perm.empty()) absl::StrAppend(&out, "T(", absl::StrJoin(s.iota->transpose_perm, ","), ")");
  } else {
    absl::StrAppend(&out, absl::StrJoin(s.device_ids, ","));
  }
  if (s.last_tile_dim_replicate) absl::StrAppend(&out, " last_tile_dim_replicate");
  if (!s.last_tile_dims.empty()) {
    std::vector<std::string> names;
    for (Sharding::SubgroupType t : s.last_tile_dims) {
      names.push_back(t == Sharding::SubgroupType::kManual      ? "manual"
                      : t == Sharding::SubgroupType::kUnreduced ? "unreduced"
                      : t == Sharding::SubgroupType::kMaximal   ? "maximal"
                                                                : "replicated");
    }
    absl::StrAppend(&out, " last_tile_dims={", absl::StrJoin(names, ", "), "}");
  }
  return out + "}";
}

std::vector<int64_t> ShardDims(const std::vector<int64_t>& dims, const Tiling& tiling) {
  std::vector<int64_t> out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t t = i < tiling.tiles.size() ? tiling.tiles[i] : 1;
    out[i] = (dims[i] + t - 1) / t;
  }
  return out;
}

Shape ShardShape(const Shape& shape, const Tiling& tiling) {
  Shape out = shape;
  out.dimensions = ShardDims(shape.dimensions, tiling);
  return out;
}

std::optional<std::vector<int64_t>> DeviceCoordinates(const Tiling& tiling, int64_t device) {
  auto it = std::find(tiling.devices.begin(), tiling.devices.end(), device);
  if (it == tiling.devices.end()) return std::nullopt;
  int64_t linear = it - tiling.devices.begin();
  std::vector<int64_t> sizes = tiling.AxisSizes();
  std::vector<int64_t> coords(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    coords[i] = linear % sizes[i];
    linear /= sizes[i];
  }
  return coords;
}

std::vector<int64_t> ShardOffsets(const std::vector<int64_t>& dims, const Tiling& tiling, int64_t device) {
  std::vector<int64_t> offsets(dims.size(), 0);
  std::optional<std::vector<int64_t>> coords = DeviceCoordinates(tiling, device);
  if (!coords) return offsets;
  std::vector<int64_t> shard = ShardDims(dims, tiling);
  for (size_t i = 0; i < dims.size(); ++i) offsets[i] = (*coords)[i] * shard[i];
  return offsets;
}

std::vector<std::vector<int64_t>> GroupsAlongAxes(const Tiling& tiling, const std::vector<int64_t>& axes) {
  std::vector<int64_t> sizes = tiling.AxisSizes();
  std::vector<int64_t> perm;
  for (int64_t a = 0; a < static_cast<int64_t>(sizes.size()); ++a) {
    if (std::find(axes.begin(), axes.end(), a) == axes.end()) perm.push_back(a);
  }
  perm.insert(perm.end(), axes.begin(), axes.end());
  std::vector<int64_t> transposed = TransposeArray(tiling.devices, sizes, perm);
  int64_t group_size = 1;
  for (int64_t a : axes) group_size *= sizes[a];
  std::vector<std::vector<int64_t>> groups;
  for (size_t i = 0; i < transposed.size(); i += group_size) {
    groups.emplace_back(transposed.begin() + i, transposed.begin() + i + group_size);
  }
  return groups;
}

Tiling RegroupAxes(const Tiling& tiling, const std::vector<std::vector<int64_t>>& axes_per_dim) {
  std::vector<int64_t> sizes = tiling.AxisSizes();
  std::vector<bool> used(sizes.size(), false);
  std::vector<int64_t> perm;
  Tiling out;
  out.maximal_device = tiling.maximal_device;
  out.manual_subgroup = tiling.manual_subgroup;
  const int64_t manual_axis = tiling.manual_subgroup > 1 ? static_cast<int64_t>(sizes.size()) - 1 : -1;
  if (manual_axis >= 0) used[manual_axis] = true;
  for (const std::vector<int64_t>& axes : axes_per_dim) {
    int64_t t = 1;
    for (int64_t a : axes) {
      used[a] = true;
      perm.push_back(a);
      t *= sizes[a];
    }
    out.tiles.push_back(t);
  }
  for (int64_t a = 0; a < static_cast<int64_t>(sizes.size()); ++a) {
    if (!used[a]) {
      perm.push_back(a);
      out.replication *= sizes[a];
    }
  }
  if (manual_axis >= 0) perm.push_back(manual_axis);
  out.devices = TransposeArray(tiling.devices, sizes, perm);
  return out;
}

std::optional<Tiling> ReshapeTiling(const std::vector<int64_t>& in, const std::vector<int64_t>& out, const Tiling& t) {
  if (t.rank() != static_cast<int64_t>(in.size())) return std::nullopt;
  for (const std::vector<int64_t>* dims : {&in, &out}) {
    for (int64_t d : *dims) {
      if (d <= 0) return std::nullopt;  // zero-size or dynamic dimensions have no meaningful grouping
    }
  }
  std::vector<int64_t> out_tiles(out.size(), 1);
  size_t i = 0, o = 0;
  while (i < in.size() || o < out.size()) {
    // The smallest groups [i, i2) and [o, o2) with equal element counts.
    size_t i2 = i, o2 = o;
    int64_t pi = 1, po = 1;
    if (i2 < in.size()) pi *= in[i2++];
    if (o2 < out.size()) po *= out[o2++];
    while (pi != po) {
      if (pi < po && i2 < in.size()) {
        pi *= in[i2++];
      } else if (po < pi && o2 < out.size()) {
        po *= out[o2++];
      } else {
        return std::nullopt;
      }
    }
    std::vector<size_t> in_dims, out_dims;  // the group's dimensions other than size 1
    int64_t total_tiles = 1;
    for (size_t k = i; k < i2; ++k) {
      if (in[k] == 1 && t.tiles[k] > 1) return std::nullopt;
      if (in[k] > 1) in_dims.push_back(k);
      total_tiles *= t.tiles[k];
    }
    for (size_t k = o; k < o2; ++k) {
      if (out[k] > 1) out_dims.push_back(k);
    }
    i = i2;
    o = o2;
    if (total_tiles == 1) continue;
    if (in_dims.size() == 1 && out_dims.size() == 1) {
      out_tiles[out_dims[0]] = t.tiles[in_dims[0]];
      continue;
    }
    // Contiguous blocks of the flattened group on the operand side.
    size_t last = 0;
    for (size_t q = 0; q < in_dims.size(); ++q) {
      if (t.tiles[in_dims[q]] > 1) last = q;
    }
    for (size_t q = 0; q < last; ++q) {
      if (t.tiles[in_dims[q]] != in[in_dims[q]]) return std::nullopt;
    }
    if (in[in_dims[last]] % t.tiles[in_dims[last]] != 0) return std::nullopt;
    // The same blocks on the result side: whole tiles of the leading dimensions, then one that divides.
    int64_t remaining = total_tiles;
    for (size_t k : out_dims) {
      if (remaining == 1) break;
      if (remaining % out[k] == 0) {
        out_tiles[k] = out[k];
        remaining /= out[k];
      } else if (out[k] % remaining == 0) {
        out_tiles[k] = remaining;
        remaining = 1;
      } else {
        return std::nullopt;
      }
    }
    if (remaining != 1) return std::nullopt;
  }
  // Groups keep their order and a group's tiled axes stay adjacent, so the row-major device array is the same.
  Tiling result = t;
  result.tiles = std::move(out_tiles);
  return result;
}

}  // namespace xlac::spmd
