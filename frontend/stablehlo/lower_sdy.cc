// Shardy (sdy dialect) annotations, lowered as XLA's Shardy -> HLO export does (xla/service/spmd/shardy/
// stablehlo_round_trip/export_shardings.cc and shard_map_export.cc):
//  - sdy.mesh definitions name device meshes; a sharding `<@mesh, [{"x"}, {"y", ?}, {}]>` becomes an HLO tiled
//    sharding: tensor dim i is split into the product of its axes' sizes, and the device array is the mesh's device
//    ids (iota by default) reshaped to the mesh shape, transposed to [axes of dim 0..., axes of dim 1..., unreduced
//    axes..., other axes...] and reshaped to [tile counts..., unreduced size, replicated size]. A trailing
//    replicated group gives last_tile_dim_replicate (or last_tile_dims={unreduced, replicated}). Sub-axes
//    "x":(pre)size split axis x of size n into [pre, size, n/(pre*size)] and take the middle piece.
//  - No sharded axes gives {replicated}; a mesh without axes gives {replicated}, or {maximal device=N} when it lists
//    one device id.
//  - sdy.sharding_constraint / sdy.reshard become custom-call "Sharding"; sdy.manual_computation becomes the
//    shard_map pattern: Sharding + SPMDFullToShardShape per operand, the body inlined, and Sharding {manual} +
//    SPMDShardToFullShape per result. Shardings inside a fully manual body are {manual}.
//  - sdy.propagation_barrier and sdy.data_flow_edge are identities, sdy.sharding_group is dropped,
//    sdy.named_computation is inlined, sdy.constant is a constant.
//  - tt-xla's stablehlo.composite "sdy.all_slice" inside a manual body may become a local dynamic-slice
//    (lower_sdy_composite.cc); the manual computation records its operands' local values for that.
#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

constexpr int64_t kMaxMeshDevices = int64_t{1} << 24;

std::string AxisRefName(const SdyAxisRef& ref) {
  if (!ref.IsSubAxis()) return fmt::format("\"{}\"", ref.name);
  return fmt::format("\"{}\":({}){}", ref.name, ref.pre_size, ref.size);
}

std::string AxisList(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += fmt::format("{}\"{}\"", out.empty() ? "" : ", ", n);
  return out;
}

// XLA's CanonicalizeIotaDims (as frontend/hlo/print_sharding.cc): drops size-1 dims and merges runs of dims the
// permutation keeps in order, so the iota list equals what parsing XLA's printed sharding gives.
void CanonicalizeIotaDims(std::vector<int64_t>& dims, std::vector<int64_t>& perm) {
  if (dims.size() <= 1) return;
  while (true) {
    bool changed = false;
    std::vector<int64_t> old_to_new(dims.size());
    int64_t new_ndims = 0;
    for (size_t i = 0; i < dims.size(); ++i) old_to_new[i] = dims[i] == 1 ? -1 : new_ndims++;
    if (new_ndims != static_cast<int64_t>(dims.size())) {
      std::vector<int64_t> new_dims, new_perm;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (old_to_new[i] >= 0) new_dims.push_back(dims[i]);
        int64_t mapped = old_to_new[static_cast<size_t>(perm[i])];
        if (mapped >= 0) new_perm.push_back(mapped);
      }
      dims = std::move(new_dims);
      perm = std::move(new_perm);
    }
    for (size_t i = 1, base = 0; i < dims.size(); ++i) {
      const int64_t base_dim = perm[base];
      const int64_t dim = perm[i];
      if (base_dim + static_cast<int64_t>(i - base) == dim) {
        dims[static_cast<size_t>(base_dim)] *= dims[static_cast<size_t>(dim)];
        dims[static_cast<size_t>(dim)] = 1;
        changed = true;
      } else {
        base = i;
      }
    }
    if (!changed) break;
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------------------------
// Meshes

bool Lowerer::ValidateSdyMesh(const SdyMesh& mesh, std::string label, SdyMeshInfo* out) {
  out->label = std::move(label);
  out->num_devices = 1;
  for (size_t i = 0; i < mesh.axes.size(); ++i) {
    const auto& [name, size] = mesh.axes[i];
    const size_t at = i < mesh.axis_pos.size() ? mesh.axis_pos[i] : mesh.pos;
    if (size < 1) return Error(at, fmt::format("mesh axis \"{}\" has size {}; sizes must be positive", name, size));
    if (std::find(out->names.begin(), out->names.end(), name) != out->names.end()) {
      return Error(at, fmt::format("mesh axis \"{}\" is defined twice in {}", name, out->label));
    }
    if (out->num_devices > kMaxMeshDevices / size) {
      return Error(at, fmt::format("{} has more than {} devices", out->label, kMaxMeshDevices));
    }
    out->num_devices *= size;
    out->names.push_back(name);
    out->sizes.push_back(size);
  }
  if (!mesh.has_device_ids) return true;
  const size_t at = mesh.device_ids_pos;
  if (static_cast<int64_t>(mesh.device_ids.size()) != out->num_devices) {
    return Error(at,
                 fmt::format("{} has {} device{} ({}), but device_ids lists {}", out->label, out->num_devices,
                             out->num_devices == 1 ? "" : "s",
                             mesh.axes.empty() ? std::string("no axes") : fmt::format("axes {}", AxisList(out->names)),
                             mesh.device_ids.size()));
  }
  std::set<int64_t> seen;
  for (int64_t id : mesh.device_ids) {
    if (id < 0) return Error(at, fmt::format("device id {} of {} is negative", id, out->label));
    if (!seen.insert(id).second) return Error(at, fmt::format("device id {} appears twice in {}", id, out->label));
  }
  bool iota = !mesh.axes.empty();
  for (size_t i = 0; iota && i < mesh.device_ids.size(); ++i) iota = mesh.device_ids[i] == static_cast<int64_t>(i);
  if (!iota) out->device_ids = mesh.device_ids;
  return true;
}

bool Lowerer::CollectSdyMeshes(const ModuleAst& ast) {
  for (const MeshDef& def : ast.meshes) {
    if (sdy_meshes_.count(def.name)) return Error(def.name_pos, fmt::format("redefinition of mesh @{}", def.name));
    SdyMeshInfo info;
    if (!ValidateSdyMesh(def.mesh->sdy->mesh, "mesh @" + def.name, &info)) return false;
    sdy_meshes_[def.name] = std::move(info);
  }
  return true;
}

const SdyMeshInfo* Lowerer::ResolveSdyMesh(const SdySharding& sharding, SdyMeshInfo* storage) {
  if (sharding.mesh != nullptr) {
    if (!ValidateSdyMesh(*sharding.mesh, "the inlined mesh", storage)) return nullptr;
    return storage;
  }
  auto it = sdy_meshes_.find(sharding.mesh_name);
  if (it == sdy_meshes_.end()) {
    std::string known;
    for (const auto& [name, info] : sdy_meshes_) known += fmt::format("{}@{}", known.empty() ? "" : ", ", name);
    return Error(sharding.mesh_pos, fmt::format("unknown mesh @{} ({})", sharding.mesh_name,
                                                known.empty() ? std::string("the module defines no sdy.mesh")
                                                              : "the module defines " + known)),
           nullptr;
  }
  return &it->second;
}

// ---------------------------------------------------------------------------------------------------------------
// Shardings

bool Lowerer::SdyToSharding(const SdySharding& s, const Shape& shape, Sharding* out) {
  SdyMeshInfo storage;
  const SdyMeshInfo* mesh = ResolveSdyMesh(s, &storage);
  if (mesh == nullptr) return false;
  if (shape.IsTuple()) return Error(s.pos, "a Shardy sharding of a tuple value is not supported");
  const int64_t rank = shape.IsArray() ? shape.rank() : 0;
  if (static_cast<int64_t>(s.dims.size()) != rank) {
    return Error(s.pos, fmt::format("the sharding has {} dimension sharding{}, but the value {} has rank {}",
                                    s.dims.size(), s.dims.size() == 1 ? "" : "s", ShapeToString(shape, false), rank));
  }

  // Every axis reference: its mesh axis and the part of it it covers, as the multiplicative interval [lo, hi) of
  // major-to-minor positions (the whole axis of size n is [1, n); "x":(pre)size is [pre, pre*size)).
  struct Ref {
    size_t axis;
    int64_t lo, hi;
    const SdyAxisRef* src;
  };
  std::vector<std::vector<Ref>> dim_refs(s.dims.size());
  std::vector<Ref> unreduced_refs, all_refs;
  auto add_ref = [&](const SdyAxisRef& r, std::vector<Ref>* into) -> bool {
    auto it = std::find(mesh->names.begin(), mesh->names.end(), r.name);
    if (it == mesh->names.end()) {
      return Error(
          r.pos, mesh->names.empty()
                     ? fmt::format("axis \"{}\" is not in {}, which has no axes", r.name, mesh->label)
                     : fmt::format("axis \"{}\" is not in {} (axes: {})", r.name, mesh->label, AxisList(mesh->names)));
    }
    Ref ref{static_cast<size_t>(it - mesh->names.begin()), 1, 0, &r};
    const int64_t n = mesh->sizes[ref.axis];
    ref.hi = n;
    if (r.IsSubAxis()) {
      if (r.pre_size > n || r.size > n / r.pre_size || n % (r.pre_size * r.size) != 0) {
        return Error(r.pos, fmt::format("sub-axis {} does not fit axis \"{}\" of size {} (pre-size times size must "
                                        "divide it)",
                                        AxisRefName(r), r.name, n));
      }
      ref.lo = r.pre_size;
      ref.hi = r.pre_size * r.size;
    }
    for (const Ref& other : all_refs) {
      if (other.axis != ref.axis) continue;
      const bool same_whole = !r.IsSubAxis() && !other.src->IsSubAxis();
      if (same_whole || std::max(ref.lo, other.lo) < std::min(ref.hi, other.hi)) {
        return Error(r.pos, same_whole || AxisRefName(r) == AxisRefName(*other.src)
                                ? fmt::format("axis {} is used more than once in the sharding", AxisRefName(r))
                                : fmt::format("axis {} overlaps {}, which the sharding already uses", AxisRefName(r),
                                              AxisRefName(*other.src)));
      }
    }
    all_refs.push_back(ref);
    if (into != nullptr) into->push_back(ref);
    return true;
  };
  for (size_t d = 0; d < s.dims.size(); ++d) {
    for (const SdyAxisRef& r : s.dims[d].axes) {
      if (!add_ref(r, &dim_refs[d])) return false;
    }
  }
  for (const SdyAxisRef& r : s.replicated) {
    if (!add_ref(r, nullptr)) return false;
  }
  for (const SdyAxisRef& r : s.unreduced) {
    if (!add_ref(r, &unreduced_refs)) return false;
  }

  // Inside a shard_map (sdy.manual_computation), the axes it made manual: all of them gives {manual}; some of them a
  // manual subgroup (`last_tile_dims={manual[, replicated]}`, as XLA exports a partially manual shard_map), the
  // manual axes leaving the dimensions they shard in an in/out sharding.
  std::vector<bool> manual_axis(mesh->names.size(), false);
  bool any_manual = false, all_manual = true;
  for (size_t a = 0; a < mesh->names.size(); ++a) {
    manual_axis[a] =
        std::find(sdy_manual_axes_.begin(), sdy_manual_axes_.end(), mesh->names[a]) != sdy_manual_axes_.end();
    any_manual = any_manual || manual_axis[a];
    all_manual = all_manual && manual_axis[a];
  }
  if (!sdy_manual_axes_.empty() && all_manual) {
    *out = Sharding::Manual();
    return true;
  }
  if (mesh->names.empty()) {
    *out = mesh->device_ids.size() == 1 ? Sharding::Maximal(mesh->device_ids[0]) : Sharding::Replicated();
    return true;
  }

  // Split each mesh axis into the pieces between the boundaries its references use.
  std::vector<std::vector<int64_t>> bounds(mesh->names.size());
  for (size_t a = 0; a < bounds.size(); ++a) bounds[a] = {1, mesh->sizes[a]};
  for (const Ref& r : all_refs) {
    bounds[r.axis].push_back(r.lo);
    bounds[r.axis].push_back(r.hi);
  }
  std::vector<int64_t> piece_sizes;
  std::vector<size_t> first_piece(bounds.size());
  for (size_t a = 0; a < bounds.size(); ++a) {
    std::vector<int64_t>& b = bounds[a];
    std::sort(b.begin(), b.end());
    b.erase(std::unique(b.begin(), b.end()), b.end());
    first_piece[a] = piece_sizes.size();
    for (size_t j = 0; j + 1 < b.size(); ++j) {
      if (b[j + 1] % b[j] != 0) {
        return Error(s.pos, fmt::format("the sub-axes of \"{}\" used by the sharding do not split it consistently "
                                        "({} does not divide {})",
                                        mesh->names[a], b[j], b[j + 1]));
      }
      piece_sizes.push_back(b[j + 1] / b[j]);
    }
  }
  std::vector<bool> used(piece_sizes.size(), false);
  std::vector<int64_t> perm;
  // Appends the pieces `r` covers to the permutation; returns their size.
  auto take = [&](const Ref& r) {
    const std::vector<int64_t>& b = bounds[r.axis];
    int64_t size = 1;
    for (size_t j = 0; j + 1 < b.size(); ++j) {
      if (b[j] >= r.lo && b[j + 1] <= r.hi) {
        const size_t piece = first_piece[r.axis] + j;
        perm.push_back(static_cast<int64_t>(piece));
        used[piece] = true;
        size *= piece_sizes[piece];
      }
    }
    return size;
  };
  std::vector<int64_t> tile_dims;
  bool any_tiled = false;
  for (const std::vector<Ref>& refs : dim_refs) {
    int64_t tiles = 1;
    for (const Ref& r : refs) {
      if (!manual_axis[r.axis]) tiles *= take(r);
    }
    any_tiled = any_tiled || tiles > 1;
    tile_dims.push_back(tiles);
  }
  int64_t unreduced = 1;
  for (const Ref& r : unreduced_refs) unreduced *= take(r);
  int64_t manual = 1;
  for (size_t a = 0; a < mesh->names.size(); ++a) {
    if (!manual_axis[a]) continue;
    for (size_t j = 0; j + 1 < bounds[a].size(); ++j) {
      const size_t piece = first_piece[a] + j;
      perm.push_back(static_cast<int64_t>(piece));
      used[piece] = true;
      manual *= piece_sizes[piece];
    }
  }
  int64_t replicated = 1;
  for (size_t p = 0; p < piece_sizes.size(); ++p) {
    if (used[p]) continue;
    perm.push_back(static_cast<int64_t>(p));
    replicated *= piece_sizes[p];
  }

  Sharding sharding;
  sharding.kind = Sharding::Kind::kTiled;
  if (any_manual) {
    if (unreduced > 1) return Error(s.pos, "unreduced axes inside a partially manual region are not supported");
    tile_dims.push_back(manual);
    sharding.last_tile_dims.push_back(Sharding::SubgroupType::kManual);
    if (replicated > 1) sharding.last_tile_dims.push_back(Sharding::SubgroupType::kReplicated);
  } else if (!any_tiled && unreduced == 1) {
    *out = Sharding::Replicated();
    return true;
  } else if (!any_tiled && replicated == 1) {
    sharding.kind = Sharding::Kind::kUnreduced;
    *out = std::move(sharding);
    return true;
  } else if (unreduced > 1) {
    tile_dims.push_back(unreduced);
    sharding.last_tile_dims.push_back(Sharding::SubgroupType::kUnreduced);
    if (replicated > 1) sharding.last_tile_dims.push_back(Sharding::SubgroupType::kReplicated);
  } else {
    sharding.last_tile_dim_replicate = replicated > 1;
  }
  if (replicated > 1) tile_dims.push_back(replicated);
  sharding.tile_dims = tile_dims;

  if (mesh->device_ids.empty()) {
    IotaList iota;
    iota.dims = tile_dims;
    iota.reshape_dims = piece_sizes;
    iota.transpose_perm = perm;
    CanonicalizeIotaDims(iota.reshape_dims, iota.transpose_perm);
    if (iota.reshape_dims.empty()) iota.reshape_dims = {1};
    if (iota.reshape_dims.size() == 1) iota.transpose_perm.clear();
    sharding.iota = std::move(iota);
  } else {
    // The device ids reshaped to the pieces and transposed by `perm`, in row-major order.
    std::vector<int64_t> strides(piece_sizes.size(), 1);
    for (size_t i = piece_sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * piece_sizes[i];
    std::vector<int64_t> index(perm.size(), 0);
    sharding.device_ids.reserve(static_cast<size_t>(mesh->num_devices));
    for (int64_t k = 0; k < mesh->num_devices; ++k) {
      int64_t src = 0;
      for (size_t i = 0; i < perm.size(); ++i) src += index[i] * strides[static_cast<size_t>(perm[i])];
      sharding.device_ids.push_back(mesh->device_ids[static_cast<size_t>(src)]);
      for (size_t i = perm.size(); i-- > 0;) {
        if (++index[i] < piece_sizes[static_cast<size_t>(perm[i])]) break;
        index[i] = 0;
      }
    }
    // XLA sorts the devices of each replication group (HloSharding::PartialTile).
    if (replicated > 1) {
      for (auto it = sharding.device_ids.begin(); it != sharding.device_ids.end(); it += replicated) {
        std::sort(it, it + replicated);
      }
    }
  }
  *out = std::move(sharding);
  return true;
}

bool Lowerer::ValueShardingAttr(const NamedAttr& attr, const Shape& shape, std::optional<Sharding>* out) {
  if (attr.name == "mhlo.sharding") return ParseShardingAttr(*attr.value, out);
  const Attr& a = *attr.value;
  if ((a.kind != Attr::Kind::kSdySharding && a.kind != Attr::Kind::kSdyShardingPerValue) ||
      a.sdy->shardings.size() != 1) {
    return Error(a.pos, "sdy.sharding of a value must be a #sdy.sharding<@mesh, [...]>");
  }
  Sharding sharding;
  if (!SdyToSharding(a.sdy->shardings[0], shape, &sharding)) return false;
  *out = std::move(sharding);
  return true;
}

bool Lowerer::ApplySdyOpSharding(const Attr& attr, const Results& results, Instruction* primary) {
  if (attr.kind != Attr::Kind::kSdyShardingPerValue && attr.kind != Attr::Kind::kSdySharding) {
    return Error(attr.pos, "sdy.sharding of an op must be a #sdy.sharding_per_value<[...]>");
  }
  const std::vector<SdySharding>& shardings = attr.sdy->shardings;
  if (shardings.size() != results.size()) {
    return Error(attr.pos,
                 fmt::format("sdy.sharding has {} sharding{}, but the op has {} result{}", shardings.size(),
                             shardings.size() == 1 ? "" : "s", results.size(), results.size() == 1 ? "" : "s"));
  }
  std::vector<Sharding> converted(shardings.size());
  for (size_t i = 0; i < shardings.size(); ++i) {
    if (!SdyToSharding(shardings[i], results[i]->shape(), &converted[i])) return false;
  }
  if (results.size() == 1) {
    primary->set_sharding(std::move(converted[0]));
  } else if (primary->shape().IsTuple() && primary->shape().tuple_shapes.size() == converted.size()) {
    primary->set_sharding(Sharding::Tuple(std::move(converted)));
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Ops

Instruction* Lowerer::EmitShardingCall(std::string_view target, const Shape& shape, Instruction* x, Sharding sharding) {
  Instruction* cc = Emit(Opcode::kCustomCall, shape, {x});
  cc->SetAttr("custom_call_target", AttrValue::String(std::string(target)));
  cc->set_sharding(std::move(sharding));
  return cc;
}

bool Lowerer::InlineRegion(const Region& region, const Op& owner, const std::vector<Instruction*>& args,
                           std::vector<Instruction*>* returned) {
  if (region.blocks.empty()) return Error(region.pos, "empty region");
  const Block& block = region.blocks[0];
  if (block.args.size() != args.size()) {
    return Error(region.pos, fmt::format("the region of '{}' takes {} arguments, but {} are passed", owner.name,
                                         block.args.size(), args.size()));
  }
  // The region is isolated from above: it sees only its arguments.
  Scope scope;
  scope.comp = scope_->comp;
  scope.owner = owner.name;
  ScopeGuard guard(this, &scope);
  for (size_t i = 0; i < args.size(); ++i) {
    const BlockArg& arg = block.args[i];
    Shape declared;
    if (!ToShape(arg.type, arg.pos, &declared)) return false;
    if (!declared.Compatible(args[i]->shape())) {
      return Error(arg.pos, fmt::format("region argument '%{}' has type {}, but the value passed is {}", arg.name,
                                        TypeToString(arg.type), ShapeToString(args[i]->shape(), false)));
    }
    if (scope.values.count(arg.name)) return Error(arg.pos, fmt::format("redefinition of '%{}'", arg.name));
    scope.values[arg.name] = {args[i]};
  }
  std::vector<const Type*> types;
  size_t return_pos = region.pos;
  return LowerBlockBody(block, &owner, returned, &types, &return_pos);
}

namespace {

bool ShardingListAttr(Lowerer& l, const Op& op, std::string_view name, const std::vector<SdySharding>** out) {
  const Attr* a;
  if (!l.RequireAttr(op, name, &a)) return false;
  if (a->kind != Attr::Kind::kSdyShardingPerValue) return l.Error(a->pos, fmt::format("{} must list shardings", name));
  *out = &a->sdy->shardings;
  return true;
}

}  // namespace

bool Lowerer::SdyLocalShape(const SdySharding& s, const Shape& global, const std::vector<std::string>& manual,
                            size_t pos, Shape* out) {
  *out = global;
  if (!global.IsArray()) return true;
  SdyMeshInfo storage;
  const SdyMeshInfo* mesh = ResolveSdyMesh(s, &storage);
  if (mesh == nullptr) return false;
  if (static_cast<int64_t>(s.dims.size()) != global.rank()) {
    return Error(s.pos, fmt::format("the sharding has {} dimension shardings, but the value {} has rank {}",
                                    s.dims.size(), ShapeToString(global, false), global.rank()));
  }
  for (int64_t d = 0; d < global.rank(); ++d) {
    int64_t shards = 1;
    for (const SdyAxisRef& r : s.dims[static_cast<size_t>(d)].axes) {
      if (std::find(manual.begin(), manual.end(), r.name) == manual.end()) continue;
      auto it = std::find(mesh->names.begin(), mesh->names.end(), r.name);
      if (it == mesh->names.end()) continue;  // SdyToSharding reports it
      shards *= r.IsSubAxis() ? r.size : mesh->sizes[static_cast<size_t>(it - mesh->names.begin())];
    }
    if (global.IsDynamicDimension(d) || shards == 1) continue;
    const int64_t size = global.dimensions[static_cast<size_t>(d)];
    if (size % shards != 0) {
      return Error(pos, fmt::format("dimension {} of {} (size {}) does not split evenly into {} manual shards", d,
                                    ShapeToString(global, false), size, shards));
    }
    out->dimensions[static_cast<size_t>(d)] = size / shards;
  }
  return true;
}

bool Lowerer::ShardMapShardings(const SdySharding& s, const Shape& global, const std::vector<std::string>& axes,
                                size_t pos, ShardMapValue* out) {
  if (!SdyToSharding(s, global, &out->global)) return false;
  if (!SdyLocalShape(s, global, axes, pos, &out->local_shape)) return false;
  std::vector<std::string> inner = sdy_manual_axes_;
  inner.insert(inner.end(), axes.begin(), axes.end());
  std::swap(sdy_manual_axes_, inner);
  const bool ok = SdyToSharding(s, out->local_shape, &out->local);
  std::swap(sdy_manual_axes_, inner);
  return ok;
}

// sdy.manual_computation as JAX's shard_map lowers to HLO: Sharding (in-sharding) + SPMDFullToShardShape per operand,
// the body inlined, and Sharding + SPMDShardToFullShape (out-sharding) per result. The local values' sharding is
// {manual} when every mesh axis is manual, and a manual subgroup over the manual axes (tiled along the free axes the
// shardings name) when only some are, as XLA exports a partially manual shard_map.
bool Lowerer::LowerSdyManualComputation(const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  const std::vector<SdySharding>* ins = nullptr;
  const std::vector<SdySharding>* outs = nullptr;
  const Attr* axes_attr;
  if (!LookupOperands(op, &operands) || !ShardingListAttr(*this, op, "in_shardings", &ins) ||
      !ShardingListAttr(*this, op, "out_shardings", &outs) || !RequireAttr(op, "manual_axes", &axes_attr)) {
    return false;
  }
  if (axes_attr->kind != Attr::Kind::kSdyManualAxes) return Error(axes_attr->pos, "manual_axes must list mesh axes");
  if (op.regions.size() != 1) return OpError(op, "sdy.manual_computation has one region");
  if (ins->size() != operands.size()) {
    return OpError(op, fmt::format("in_shardings has {} shardings, but sdy.manual_computation has {} operands",
                                   ins->size(), operands.size()));
  }
  std::vector<Shape> result_shapes(op.result_types.size());
  for (size_t i = 0; i < op.result_types.size(); ++i) {
    if (!ToShape(op.result_types[i], op.result_types[i].pos, &result_shapes[i])) return false;
  }
  if (outs->size() != result_shapes.size()) {
    return OpError(op, fmt::format("out_shardings has {} shardings, but sdy.manual_computation has {} results",
                                   outs->size(), result_shapes.size()));
  }
  const std::vector<SdyAxisRef>& manual = axes_attr->sdy->axes;
  const SdySharding* first = !ins->empty() ? &ins->front() : (!outs->empty() ? &outs->front() : nullptr);
  if (first == nullptr && !manual.empty()) {
    return Error(axes_attr->pos, "manual_axes needs in/out shardings that name the mesh");
  }
  // All in/out shardings name one mesh, and the manual axes are axes of it.
  std::vector<std::string> axes;
  SdyMeshInfo mesh_info;
  if (first != nullptr) {
    SdyMeshInfo first_storage;
    const SdyMeshInfo* mesh = ResolveSdyMesh(*first, &first_storage);
    if (mesh == nullptr) return false;
    mesh_info = *mesh;
    for (const std::vector<SdySharding>* list : {ins, outs}) {
      for (const SdySharding& s : *list) {
        SdyMeshInfo storage;
        const SdyMeshInfo* other = ResolveSdyMesh(s, &storage);
        if (other == nullptr) return false;
        if (!(*other == mesh_info)) {
          return Error(s.mesh_pos, fmt::format("all in/out shardings of sdy.manual_computation must use one mesh, "
                                               "but this one uses {} and the first {}",
                                               other->label, mesh_info.label));
        }
      }
    }
    for (const SdyAxisRef& a : manual) {
      if (a.IsSubAxis()) return Error(a.pos, "manual axes must be whole mesh axes, not sub-axes");
      if (std::find(mesh_info.names.begin(), mesh_info.names.end(), a.name) == mesh_info.names.end()) {
        return Error(a.pos, fmt::format("manual axis \"{}\" is not in {} (axes: {})", a.name, mesh_info.label,
                                        AxisList(mesh_info.names)));
      }
      if (std::find(axes.begin(), axes.end(), a.name) != axes.end()) {
        return Error(a.pos, fmt::format("manual axis \"{}\" is listed twice", a.name));
      }
      if (std::find(sdy_manual_axes_.begin(), sdy_manual_axes_.end(), a.name) != sdy_manual_axes_.end()) {
        return Error(a.pos,
                     fmt::format("axis \"{}\" is already manual in the enclosing sdy.manual_computation", a.name));
      }
      axes.push_back(a.name);
    }
  }
  const Region& body = op.regions[0];
  const Block* block = body.blocks.empty() ? nullptr : &body.blocks[0];

  // Operands: the in-sharding, then (with manual axes) the local shard.
  std::vector<std::string> inner_axes = sdy_manual_axes_;
  inner_axes.insert(inner_axes.end(), axes.begin(), axes.end());
  std::vector<Instruction*> locals;
  for (size_t i = 0; i < operands.size(); ++i) {
    Instruction* x = operands[i];
    if (!x->shape().IsArray()) {
      locals.push_back(x);
      continue;
    }
    const size_t at = block != nullptr && i < block->args.size() ? block->args[i].pos : op.name_pos;
    ShardMapValue v;
    if (!ShardMapShardings((*ins)[i], x->shape(), axes, at, &v)) return false;
    Instruction* constrained = EmitShardingCall("Sharding", x->shape(), x, v.global);
    if (axes.empty()) {
      locals.push_back(constrained);
      continue;
    }
    if (block != nullptr && i < block->args.size()) {
      Shape declared;
      if (!ToShape(block->args[i].type, block->args[i].pos, &declared)) return false;
      if (!declared.Compatible(v.local_shape)) {
        return Error(
            at, fmt::format("region argument '%{}' has type {}, but the manual shard of operand {} ({} "
                            "under {}) is {}",
                            block->args[i].name, TypeToString(block->args[i].type), i, ShapeToString(x->shape(), false),
                            ShardingToString(v.global), ShapeToString(v.local_shape, false)));
      }
    }
    locals.push_back(EmitShardingCall("SPMDFullToShardShape", v.local_shape, constrained, v.local));
    sdy_manual_args_[locals.back()] = SdyManualArg{&(*ins)[i], mesh_info, inner_axes};
  }

  std::vector<Instruction*> returned;
  const size_t enclosing = sdy_manual_axes_.size();
  sdy_manual_axes_.insert(sdy_manual_axes_.end(), axes.begin(), axes.end());
  const bool ok = InlineRegion(body, op, locals, &returned);
  sdy_manual_axes_.resize(enclosing);
  if (!ok) return false;
  if (returned.size() != result_shapes.size()) {
    return OpError(op, fmt::format("the body returns {} values, but sdy.manual_computation has {} results",
                                   returned.size(), result_shapes.size()));
  }

  // Results: the manual value, then (with manual axes) its assembly into the global value.
  for (size_t i = 0; i < returned.size(); ++i) {
    Instruction* v = returned[i];
    if (!result_shapes[i].IsArray()) {
      results->push_back(v);
      continue;
    }
    ShardMapValue out;
    if (!ShardMapShardings((*outs)[i], result_shapes[i], axes, (*outs)[i].pos, &out)) return false;
    if (axes.empty()) {
      results->push_back(EmitShardingCall("Sharding", v->shape(), v, std::move(out.global)));
      continue;
    }
    if (!out.local_shape.Compatible(v->shape())) {
      return OpError(op, fmt::format("the body returns {} as result {}, but the manual shard of {} under {} is {}",
                                     ShapeToString(v->shape(), false), i, ShapeToString(result_shapes[i], false),
                                     ShardingToString(out.global), ShapeToString(out.local_shape, false)));
    }
    Instruction* manual_value = EmitShardingCall("Sharding", v->shape(), v, std::move(out.local));
    results->push_back(EmitShardingCall("SPMDShardToFullShape", result_shapes[i], manual_value, std::move(out.global)));
  }
  return true;
}

namespace {

bool CheckOneOperand(Lowerer& l, const Op& op, std::vector<Instruction*>* operands) {
  if (!l.LookupOperands(op, operands)) return false;
  if (operands->size() != 1) return l.OpError(op, fmt::format("'{}' takes one operand", op.name));
  return true;
}

// The one operand under a custom-call "Sharding" with the sharding in attribute `name`.
bool LowerAsShardingCall(Lowerer& l, const Op& op, std::string_view name, Lowerer::Results* results) {
  std::vector<Instruction*> operands;
  const Attr* attr;
  if (!CheckOneOperand(l, op, &operands) || !l.RequireAttr(op, name, &attr)) return false;
  if (attr->kind != Attr::Kind::kSdySharding) return l.Error(attr->pos, "expected a sharding <@mesh, [...]>");
  Sharding sharding;
  if (!l.SdyToSharding(attr->sdy->shardings[0], operands[0]->shape(), &sharding)) return false;
  results->push_back(l.EmitShardingCall("Sharding", operands[0]->shape(), operands[0], std::move(sharding)));
  return true;
}

// sdy.sharding_constraint / sdy.reshard %x <@mesh, [...]>: custom-call "Sharding".
bool LowerShardingConstraint(Lowerer& l, const Op& op, Lowerer::Results* results) {
  return LowerAsShardingCall(l, op, "sharding", results);
}

// sdy.all_gather / all_slice / all_to_all / all_reduce / reduce_scatter / collective_permute %x out_sharding=<...>:
// in the global view each keeps %x's value (an all-reduce's operand is a partial sum only per device) and gives it
// out_sharding, so a "Sharding" constraint; the partitioner makes the collectives again.
bool LowerSdyCollective(Lowerer& l, const Op& op, Lowerer::Results* results) {
  return LowerAsShardingCall(l, op, "out_sharding", results);
}

// sdy.propagation_barrier and sdy.data_flow_edge only guide sharding propagation: identities.
bool LowerIdentity(Lowerer& l, const Op& op, Lowerer::Results* results) {
  std::vector<Instruction*> operands;
  if (!CheckOneOperand(l, op, &operands)) return false;
  if (const Attr* sharding = l.FindAttr(op, "sharding"); sharding != nullptr) {
    if (sharding->kind != Attr::Kind::kSdySharding) return l.Error(sharding->pos, "expected a sharding");
    Sharding ignored;  // validated only
    if (!l.SdyToSharding(sharding->sdy->shardings[0], operands[0]->shape(), &ignored)) return false;
  }
  results->push_back(operands[0]);
  return true;
}

// sdy.sharding_group %x group_id=N: a propagation hint without a value; dropped.
bool LowerShardingGroup(Lowerer& l, const Op& op, Lowerer::Results* results) {
  std::vector<Instruction*> operands;
  int64_t group;
  (void)results;
  return CheckOneOperand(l, op, &operands) && l.GetInt(op, "group_id", &group);
}

bool LowerSdyConstant(Lowerer& l, const Op& op, Lowerer::Results* results) {
  const Attr* value;
  if (!l.RequireAttr(op, "value", &value)) return false;
  if (value->kind != Attr::Kind::kDense) return l.Error(value->pos, "the constant value must be a dense<...> literal");
  results->push_back(l.EmitConstant(*value->dense));
  return true;
}

// sdy.named_computation<"name">(...) (...) { ... }: propagation treats it as inlined, and so do we.
bool LowerNamedComputation(Lowerer& l, const Op& op, Lowerer::Results* results) {
  std::vector<Instruction*> operands;
  if (!l.LookupOperands(op, &operands)) return false;
  if (op.regions.size() != 1) return l.OpError(op, "sdy.named_computation has one region");
  return l.InlineRegion(op.regions[0], op, operands, results);
}

bool LowerManualComputation(Lowerer& l, const Op& op, Lowerer::Results* results) {
  return l.LowerSdyManualComputation(op, results);
}

}  // namespace

void RegisterSdyOps(OpTable* table) {
  OpTable& t = *table;
  t["sdy.sharding_constraint"] = &LowerShardingConstraint;
  t["sdy.reshard"] = &LowerShardingConstraint;
  for (const char* collective : {"sdy.all_gather", "sdy.all_slice", "sdy.all_to_all", "sdy.all_reduce",
                                 "sdy.reduce_scatter", "sdy.collective_permute"}) {
    t[collective] = &LowerSdyCollective;
  }
  t["sdy.propagation_barrier"] = &LowerIdentity;
  t["sdy.data_flow_edge"] = &LowerIdentity;
  t["sdy.sharding_group"] = &LowerShardingGroup;
  t["sdy.constant"] = &LowerSdyConstant;
  t["sdy.named_computation"] = &LowerNamedComputation;
  t["sdy.manual_computation"] = &LowerManualComputation;
}

}  // namespace xlac::shlo
