// Shardings: {replicated}, {maximal device=1}, {manual}, {unknown}, {unreduced}, {devices=[2,1]0,1},
// {devices=[4,2]<=[8]}, {devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}, last_tile_dims={manual, ...},
// shard_as/shard_like N, metadata={...} or metadata={{...},{...}}, and tuple shardings {{...}, {...}}.
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

bool ParseSingleSharding(Parser& p, Sharding* out, bool lbrace_consumed) {
  if (!lbrace_consumed && !p.Expect(TokKind::kLbrace, "to start a sharding")) return false;
  if (p.kind() == TokKind::kIdent && (p.tok().str == "mesh" || p.tok().str == "maximal_mesh")) {
    return p.TokenError("named (mesh) shardings are not supported");
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
