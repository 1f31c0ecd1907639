// Shardings: {replicated}, {maximal device=1}, {manual}, {unknown}, {unreduced}, {devices=[2,1]0,1},
// {devices=[4,2]<=[8]}, {devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}, last_tile_dims={manual, ...},
// shard_as/shard_like N, metadata={...} or metadata={{...},{...}}, and tuple shardings {{...}, {...}}. Named
// (mesh) shardings are parse_named_sharding.cc.
#include <algorithm>

#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"

namespace xlac::hlo {
namespace {

bool ParseSingleOrListMetadata(Parser& p, std::vector<OpMetadata>* out) {
  if (p.kind() == TokKind::kLbrace && p.LookAhead() == TokKind::kLbrace) {
    return p.ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
      out->emplace_back();
      return p.ParseMetadata(&out->back());
    });
  }
  out->emplace_back();
  return p.ParseMetadata(&out->back());
}

// ---- Named (mesh) shardings ----
// XLA's NamedSharding: a mesh of named axes over the devices, and per tensor dimension the axes (or sub-axes
// `b:(pre)size`) that split it, major to minor. It means the tiled sharding whose tile assignment is the mesh's
// device array with the axes of dimension 0 first, then dimension 1, ..., then the manual, unreduced and replicated
// axes as subgroup dimensions; that is what it is converted to (the text itself is printed back verbatim while the
// sharding is unchanged, see print_attributes.cc).

struct MeshAxis {
  std::string name;
  int64_t size;
};

// `b` or `b:(2)2`: the sub-axis of size 2 whose more major sub-axes multiply to 2; size 0 = the whole axis.
struct AxisRef {
  size_t pos = 0;
  int64_t axis = 0;
  int64_t pre = 1;
  int64_t size = 0;
};

bool ParseAxisRef(Parser& p, const std::vector<MeshAxis>& axes, AxisRef* out) {
  out->pos = p.pos();
  const bool sub = p.kind() == TokKind::kName;  // `b:` lexes as a name
  if (!sub && p.kind() != TokKind::kIdent) return p.TokenError("expects a mesh axis name");
  const std::string name = p.tok().str;
  p.Next();
  auto it = std::find_if(axes.begin(), axes.end(), [&](const MeshAxis& a) { return a.name == name; });
  if (it == axes.end()) return p.Error(out->pos, fmt::format("unknown mesh axis '{}'", name));
  out->axis = it - axes.begin();
  if (!sub) return true;
  if (!p.Expect(TokKind::kLparen, "to start a sub-axis pre-size") || !p.ParseInt64(&out->pre) ||
      !p.Expect(TokKind::kRparen, "after a sub-axis pre-size") || !p.ParseInt64(&out->size)) {
    return false;
  }
  if (out->pre < 1 || out->size < 1 || it->size % out->pre != 0 || (it->size / out->pre) % out->size != 0) {
    return p.Error(out->pos, fmt::format("sub-axis {}:({}){} does not fit axis '{}' of size {}", name, out->pre,
                                         out->size, name, it->size));
  }
  return true;
}

// {a, b:(2)2, ?}; `?` (the dimension may be sharded further) is accepted last and has no meaning here.
bool ParseAxisList(Parser& p, const std::vector<MeshAxis>& axes, std::vector<AxisRef>* out) {
  if (!p.Expect(TokKind::kLbrace, "to start a list of mesh axes")) return false;
  if (p.EatIfPresent(TokKind::kRbrace)) return true;
  do {
    if (p.EatIfPresent(TokKind::kQuestionMark)) break;
    out->emplace_back();
    if (!ParseAxisRef(p, axes, &out->back())) return false;
  } while (p.EatIfPresent(TokKind::kComma));
  return p.Expect(TokKind::kRbrace, "to end a list of mesh axes");
}

// device_ids=(0,2,1,3) or device_ids=([4,16]T(1,0)): the mesh's device array in row-major order.
bool ParseMeshDeviceIds(Parser& p, int64_t num_devices, std::vector<int64_t>* out) {
  const size_t start = p.pos();
  if (!p.Expect(TokKind::kLparen, "to start the mesh device ids")) return false;
  if (p.EatIfPresent(TokKind::kLsquare)) {
    IotaList iota;
    do {
      int64_t d;
      if (!p.ParseInt64(&d)) return false;
      iota.reshape_dims.push_back(d);
    } while (p.EatIfPresent(TokKind::kComma));
    if (!p.Expect(TokKind::kRsquare, "to end the iota reshape dims")) return false;
    if (p.kind() == TokKind::kIdent && p.tok().str == "T") {
      p.Next();
      if (!p.ParseList(TokKind::kLparen, TokKind::kRparen, TokKind::kComma, [&] {
            int64_t d;
            if (!p.ParseInt64(&d)) return false;
            iota.transpose_perm.push_back(d);
            return true;
          })) {
        return false;
      }
    }
    int64_t n = 1;
    for (int64_t d : iota.reshape_dims) n = d > 0 && d <= num_devices && n <= num_devices ? n * d : num_devices + 1;
    std::vector<int64_t> perm = iota.transpose_perm;
    std::sort(perm.begin(), perm.end());
    bool is_perm = iota.transpose_perm.empty() || perm.size() == iota.reshape_dims.size();
    for (size_t i = 0; is_perm && i < perm.size(); ++i) is_perm = perm[i] == static_cast<int64_t>(i);
    if (n != num_devices || !is_perm) {
      return p.Error(start,
                     fmt::format("the mesh device ids must be an iota of {} devices with a permutation", num_devices));
    }
    iota.dims = {num_devices};
    *out = iota.ToList();
  } else {
    do {
      int64_t d;
      if (!p.ParseInt64(&d)) return false;
      out->push_back(d);
    } while (p.EatIfPresent(TokKind::kComma));
    if (static_cast<int64_t>(out->size()) != num_devices) {
      return p.Error(start,
                     fmt::format("the mesh has {} devices, but {} device ids are listed", num_devices, out->size()));
    }
  }
  return p.Expect(TokKind::kRparen, "to end the mesh device ids");
}

bool ParseNamedSharding(Parser& p, Sharding* out) {
  const size_t start = p.pos();
  p.NoteNamedSharding();
  if (p.tok().str == "maximal_mesh") {
    p.Next();
    int64_t device = 0;
    if (!p.Expect(TokKind::kLsquare, "after maximal_mesh")) return false;
    if (p.kind() != TokKind::kAttributeName || p.tok().str != "device_id") return p.TokenError("expects device_id=");
    p.Next();
    if (!p.ParseInt64(&device) || !p.Expect(TokKind::kRsquare, "to end maximal_mesh")) return false;
    *out = Sharding::Maximal(device);
    return p.Expect(TokKind::kRbrace, "to end a sharding");
  }
  p.Next();  // mesh
  std::vector<MeshAxis> axes;
  if (!p.Expect(TokKind::kLsquare, "to start the mesh axes")) return false;
  int64_t num_devices = 1;
  do {
    if (p.kind() != TokKind::kAttributeName) return p.TokenError("expects a mesh axis (name=size)");
    const size_t axis_pos = p.pos();
    MeshAxis axis{p.tok().str, 0};
    p.Next();
    if (!p.ParseInt64(&axis.size)) return false;
    for (const MeshAxis& a : axes) {
      if (a.name == axis.name) return p.Error(axis_pos, fmt::format("mesh axis '{}' appears twice", axis.name));
    }
    if (axis.size < 1 || num_devices > kMaxIotaDevices / axis.size) {
      return p.Error(axis_pos, fmt::format("invalid mesh axis size {}", axis.size));
    }
    num_devices *= axis.size;
    axes.push_back(std::move(axis));
  } while (p.EatIfPresent(TokKind::kComma));
  if (!p.Expect(TokKind::kRsquare, "to end the mesh axes")) return false;

  std::vector<int64_t> devices;
  std::vector<std::vector<AxisRef>> dims;
  std::vector<AxisRef> replicated, unreduced, manual;
  std::optional<Sharding::Kind> whole;  // {mesh[...], replicated} / manual / unreduced
  std::vector<OpMetadata> metadata;
  while (p.EatIfPresent(TokKind::kComma)) {
    const std::string attr = p.kind() == TokKind::kAttributeName ? p.tok().str : "";
    if (attr == "device_ids") {
      p.Next();
      if (!ParseMeshDeviceIds(p, num_devices, &devices)) return false;
    } else if (attr == "replicated" || attr == "unreduced" || attr == "manual") {
      p.Next();
      if (!ParseAxisList(p, axes, attr == "replicated" ? &replicated : attr == "unreduced" ? &unreduced : &manual)) {
        return false;
      }
    } else if (attr == "metadata") {
      p.Next();
      if (!ParseSingleOrListMetadata(p, &metadata)) return false;
    } else if (p.kind() == TokKind::kLsquare) {
      if (!p.ParseList(TokKind::kLsquare, TokKind::kRsquare, TokKind::kComma, [&] {
            dims.emplace_back();
            return ParseAxisList(p, axes, &dims.back());
          })) {
        return false;
      }
    } else if (p.kind() == TokKind::kw_replicated || p.kind() == TokKind::kw_manual ||
               p.kind() == TokKind::kw_unreduced) {
      whole = p.kind() == TokKind::kw_replicated ? Sharding::Kind::kReplicated
              : p.kind() == TokKind::kw_manual   ? Sharding::Kind::kManual
                                                 : Sharding::Kind::kUnreduced;
      p.Next();
    } else {
      return p.TokenError(
          "expects device_ids=, a list of dimension shardings, replicated, unreduced, manual, replicated=, "
          "unreduced=, manual= or metadata= in a named sharding");
    }
  }
  if (!p.Expect(TokKind::kRbrace, "to end a sharding")) return false;
  if (devices.empty()) {
    devices.resize(num_devices);
    for (int64_t i = 0; i < num_devices; ++i) devices[i] = i;
  }

  Sharding sharding;
  sharding.metadata = std::move(metadata);
  if (whole.has_value()) {
    sharding.kind = *whole;
    *out = std::move(sharding);
    return true;
  }

  // Split every axis at the boundaries of the sub-axes that name it: the refined mesh has one dimension per piece.
  std::vector<std::vector<int64_t>> bounds(axes.size());
  std::vector<const AxisRef*> refs;
  for (const auto& d : dims) {
    for (const AxisRef& r : d) refs.push_back(&r);
  }
  for (const auto* list : {&replicated, &unreduced, &manual}) {
    for (const AxisRef& r : *list) refs.push_back(&r);
  }
  for (size_t i = 0; i < axes.size(); ++i) bounds[i] = {1, axes[i].size};
  for (const AxisRef* r : refs) {
    if (r->size > 0) {
      bounds[r->axis].push_back(r->pre);
      bounds[r->axis].push_back(r->pre * r->size);
    }
  }
  std::vector<int64_t> piece_sizes;
  std::vector<int64_t> first_piece(axes.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    std::vector<int64_t>& b = bounds[i];
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    first_piece[i] = static_cast<int64_t>(piece_sizes.size());
    for (size_t j = 0; j + 1 < b.size(); ++j) {
      if (b[j + 1] % b[j] != 0) {
        return p.Error(start, fmt::format("the sub-axes of mesh axis '{}' overlap", axes[i].name));
      }
      piece_sizes.push_back(b[j + 1] / b[j]);
    }
  }
  std::vector<bool> used(piece_sizes.size(), false);
  auto pieces_of = [&](const AxisRef& r, std::vector<int64_t>* out_pieces) {
    const std::vector<int64_t>& b = bounds[r.axis];
    const int64_t lo = r.pre, hi = r.size > 0 ? r.pre * r.size : axes[r.axis].size;
    for (size_t j = 0; j + 1 < b.size(); ++j) {
      if (b[j] >= lo && b[j + 1] <= hi) {
        const int64_t piece = first_piece[r.axis] + static_cast<int64_t>(j);
        if (used[piece]) {
          return p.Error(r.pos, fmt::format("mesh axis '{}' is used more than once", axes[r.axis].name));
        }
        used[piece] = true;
        out_pieces->push_back(piece);
      }
    }
    return true;
  };
  std::vector<int64_t> order, tile_dims;
  for (const auto& d : dims) {
    int64_t size = 1;
    for (const AxisRef& r : d) {
      const size_t before = order.size();
      if (!pieces_of(r, &order)) return false;
      for (size_t k = before; k < order.size(); ++k) size *= piece_sizes[order[k]];
    }
    tile_dims.push_back(size);
  }
  struct Group {
    Sharding::SubgroupType type;
    const std::vector<AxisRef>* refs;
  };
  std::vector<std::pair<Sharding::SubgroupType, int64_t>> subgroups;
  for (const Group& g :
       {Group{Sharding::SubgroupType::kManual, &manual}, Group{Sharding::SubgroupType::kUnreduced, &unreduced},
        Group{Sharding::SubgroupType::kReplicated, &replicated}}) {
    int64_t size = 1;
    const size_t before = order.size();
    for (const AxisRef& r : *g.refs) {
      if (!pieces_of(r, &order)) return false;
    }
    if (g.type == Sharding::SubgroupType::kReplicated) {
      // Axes named nowhere replicate too.
      for (size_t k = 0; k < used.size(); ++k) {
        if (!used[k]) order.push_back(static_cast<int64_t>(k));
      }
    }
    for (size_t k = before; k < order.size(); ++k) size *= piece_sizes[order[k]];
    if (size > 1) subgroups.emplace_back(g.type, size);
  }

  int64_t data_tiles = 1;
  for (int64_t t : tile_dims) data_tiles *= t;
  if (data_tiles == 1 && subgroups.size() <= 1) {
    const auto type = subgroups.empty() ? Sharding::SubgroupType::kReplicated : subgroups[0].first;
    sharding.kind = type == Sharding::SubgroupType::kManual      ? Sharding::Kind::kManual
                    : type == Sharding::SubgroupType::kUnreduced ? Sharding::Kind::kUnreduced
                                                                 : Sharding::Kind::kReplicated;
    *out = std::move(sharding);
    return true;
  }
  // The tile assignment: the refined device array transposed to `order`.
  const int64_t n = static_cast<int64_t>(piece_sizes.size());
  std::vector<int64_t> strides(n, 1);
  for (int64_t k = n - 2; k >= 0; --k) strides[k] = strides[k + 1] * piece_sizes[k + 1];
  std::vector<int64_t> index(n, 0);
  sharding.device_ids.reserve(num_devices);
  for (int64_t linear = 0; linear < num_devices; ++linear) {
    int64_t source = 0;
    for (int64_t k = 0; k < n; ++k) source += index[k] * strides[order[k]];
    sharding.device_ids.push_back(devices[source]);
    for (int64_t k = n - 1; k >= 0; --k) {
      if (++index[k] < piece_sizes[order[k]]) break;
      index[k] = 0;
    }
  }
  sharding.kind = Sharding::Kind::kTiled;
  sharding.tile_dims = tile_dims;
  if (subgroups.size() == 1 && subgroups[0].first == Sharding::SubgroupType::kReplicated) {
    sharding.last_tile_dim_replicate = true;
    sharding.tile_dims.push_back(subgroups[0].second);
  } else {
    for (const auto& [type, size] : subgroups) {
      sharding.last_tile_dims.push_back(type);
      sharding.tile_dims.push_back(size);
    }
  }
  *out = std::move(sharding);
  return true;
}

bool ParseSingleSharding(Parser& p, Sharding* out, bool lbrace_consumed) {
  if (!lbrace_consumed && !p.Expect(TokKind::kLbrace, "to start a sharding")) return false;
  if (p.kind() == TokKind::kIdent && (p.tok().str == "mesh" || p.tok().str == "maximal_mesh")) {
    return ParseNamedSharding(p, out);
  }
  const size_t start = p.pos();
  bool maximal = false, replicated = false, manual = false, unknown = false, unreduced = false;
  bool last_tile_dim_replicate = false, has_last_tile_dims = false, has_devices = false;
  std::optional<size_t> last_tile_dims_pos;
  std::vector<int64_t> devices, tile_dims;
  std::optional<IotaList> iota;
  std::vector<Sharding::SubgroupType> subgroup_types;
  std::vector<OpMetadata> metadata;
  std::optional<int64_t> shard_group_id;
  bool shard_as = false;

  while (p.kind() != TokKind::kRbrace) {
    switch (p.kind()) {
      case TokKind::kw_maximal:
        maximal = true;
        p.Next();
        break;
      case TokKind::kw_replicated:
        replicated = true;
        p.Next();
        break;
      case TokKind::kw_manual:
        manual = true;
        p.Next();
        break;
      case TokKind::kw_unknown:
        unknown = true;
        p.Next();
        break;
      case TokKind::kw_unreduced:
        unreduced = true;
        p.Next();
        break;
      case TokKind::kw_last_tile_dim_replicate:
        last_tile_dim_replicate = true;
        p.Next();
        break;
      case TokKind::kw_shard_as:
      case TokKind::kw_shard_like: {
        shard_as = p.kind() == TokKind::kw_shard_as;
        p.Next();
        int64_t id;
        if (!p.ParseInt64(&id)) return false;
        shard_group_id = id;
        break;
      }
      case TokKind::kAttributeName: {
        const std::string attr = p.tok().str;
        const size_t attr_pos = p.pos();
        p.Next();
        if (attr == "device") {
          int64_t device;
          if (!p.ParseInt64(&device)) return false;
          devices = {device};
          has_devices = true;
        } else if (attr == "devices") {
          devices.clear();
          tile_dims.clear();
          if (!p.ParseTileAssignment(&tile_dims, &iota, &devices)) return false;
          has_devices = true;
        } else if (attr == "metadata") {
          if (!ParseSingleOrListMetadata(p, &metadata)) return false;
        } else if (attr == "last_tile_dims") {
          has_last_tile_dims = true;
          last_tile_dims_pos = attr_pos;
          if (!p.ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
                switch (p.kind()) {
                  case TokKind::kw_maximal:
                    subgroup_types.push_back(Sharding::SubgroupType::kMaximal);
                    break;
                  case TokKind::kw_replicated:
                    subgroup_types.push_back(Sharding::SubgroupType::kReplicated);
                    break;
                  case TokKind::kw_manual:
                    subgroup_types.push_back(Sharding::SubgroupType::kManual);
                    break;
                  case TokKind::kw_unreduced:
                    subgroup_types.push_back(Sharding::SubgroupType::kUnreduced);
                    break;
                  default:
                    return p.TokenError("expects a sharding type (maximal, replicated, manual or unreduced)");
                }
                p.Next();
                return true;
              })) {
            return false;
          }
        } else {
          return p.Error(attr_pos, fmt::format("unknown attribute \"{}\" in sharding: expected device=, devices=, "
                                               "metadata= or last_tile_dims=",
                                               attr));
        }
        break;
      }
      default:
        return p.TokenError("unexpected token in sharding");
    }
  }

  Sharding sharding;
  sharding.metadata = std::move(metadata);
  auto no_devices = [&](std::string_view what) {
    return !has_devices || p.Error(start, fmt::format("{} shardings should not have any devices assigned", what));
  };
  if (replicated) {
    if (!no_devices("replicated")) return false;
    sharding.kind = Sharding::Kind::kReplicated;
  } else if (maximal) {
    if (devices.size() != 1 || iota.has_value()) {
      return p.Error(start, "maximal shardings should have exactly one device assigned");
    }
    sharding.kind = Sharding::Kind::kMaximal;
    sharding.device = devices[0];
  } else if (manual) {
    if (!no_devices("manual")) return false;
    sharding.kind = Sharding::Kind::kManual;
  } else if (unknown) {
    if (!no_devices("unknown")) return false;
    sharding.kind = Sharding::Kind::kUnknown;
  } else if (unreduced) {
    if (!no_devices("unreduced")) return false;
    sharding.kind = Sharding::Kind::kUnreduced;
  } else {
    if (tile_dims.empty()) {
      return p.Error(start, "non-maximal shardings must have a tile assignment list including dimensions");
    }
    if (last_tile_dim_replicate && has_last_tile_dims) {
      return p.Error(*last_tile_dims_pos, "last_tile_dim_replicate and last_tile_dims are mutually exclusive");
    }
    sharding.kind = Sharding::Kind::kTiled;
    sharding.tile_dims = tile_dims;
    if (iota.has_value()) {
      sharding.iota = std::move(iota);
    } else {
      if (devices.size() <= 1) {
        return p.Error(start, "non-maximal shardings must have more than one device assigned");
      }
      int64_t expected = 1;
      for (int64_t d : tile_dims) expected *= d;  // bounded by ParseTileAssignment
      if (static_cast<int64_t>(devices.size()) != expected) {
        return p.Error(start, fmt::format("tile assignment of shape [{}] needs {} devices, but {} are listed",
                                          fmt::join(tile_dims, ","), expected, devices.size()));
      }
      sharding.device_ids = std::move(devices);
    }
    sharding.last_tile_dim_replicate = last_tile_dim_replicate;
    sharding.last_tile_dims = std::move(subgroup_types);
    int64_t subgroup_dims = static_cast<int64_t>(sharding.last_tile_dims.size()) + (last_tile_dim_replicate ? 1 : 0);
    if (subgroup_dims > static_cast<int64_t>(tile_dims.size())) {
      return p.Error(start, "the tile assignment has fewer dimensions than its subgroup (last tile) dimensions");
    }
  }
  if (shard_group_id.has_value()) {
    sharding.shard_group_id = shard_group_id;
    sharding.shard_group_is_shard_as = shard_as;
  }
  p.Next();  // '}'
  *out = std::move(sharding);
  return true;
}

}  // namespace

bool Parser::ParseSharding(Sharding* out) {
  if (!Expect(TokKind::kLbrace, "to start a sharding")) return false;
  if (kind() != TokKind::kLbrace && kind() != TokKind::kRbrace) return ParseSingleSharding(*this, out, true);
  std::vector<Sharding> elements;
  if (kind() != TokKind::kRbrace) {
    do {
      elements.emplace_back();
      if (!ParseSingleSharding(*this, &elements.back(), false)) return false;
    } while (EatIfPresent(TokKind::kComma));
  }
  if (!Expect(TokKind::kRbrace, "to end a tuple sharding")) return false;
  *out = Sharding::Tuple(std::move(elements));
  return true;
}

}  // namespace xlac::hlo
