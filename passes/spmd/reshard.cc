// Building blocks of the per-core program (offsets from partition-id tables, padding masks, collectives) and
// resharding: moving a value from one sharding to another.
//
// Resharding works on the blocks each core holds. For every dimension where each core's target block already lies
// inside the block it holds, the target shard is a (per-core) slice of what is there: no communication. The other
// dimensions are all-gathered along their tile axis first. A replicated -> tiled reshard is therefore a
// dynamic-slice, tiled -> replicated an all-gather, tiled -> finer tiling a dynamic-slice, and a change of tiled
// dimension an all-gather of the old dimension followed by a dynamic-slice of the new one (reported, since an
// all-to-all would move less).
#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {

Instruction* ComputationBuilder::Add(Opcode op, Shape shape, std::vector<Instruction*> operands,
                                     std::string_view name_hint) {
  std::string name = p_.module().UniqueInstructionName(name_hint.empty() ? OpcodeName(op) : name_hint);
  return comp_->AddInstruction(Instruction::Create(op, std::move(name), std::move(shape), std::move(operands)));
}

Instruction* ComputationBuilder::Clone(const Instruction& original, Shape shape, std::vector<Instruction*> operands) {
  Instruction* clone = Add(original.opcode(), std::move(shape), std::move(operands), original.name());
  clone->mutable_attrs() = original.attrs();
  clone->set_called_computations(original.called_computations());
  if (original.has_literal()) clone->set_literal(original.literal());
  *clone->mutable_metadata() = original.metadata();
  *clone->mutable_frontend_attributes() = original.frontend_attributes();
  *clone->mutable_extra_attributes() = original.extra_attributes();
  clone->set_backend_config(original.backend_config(), original.backend_config_is_raw());
  clone->set_async_wrapped_opcode(original.async_wrapped_opcode());
  clone->set_loc(original.loc());
  return clone;
}

Instruction* ComputationBuilder::ScalarConstant(const Literal& scalar) {
  return comp_->AddInstruction(Instruction::CreateConstant(p_.module().UniqueInstructionName("constant"), scalar));
}

Instruction* ComputationBuilder::ConstantS32(int64_t value) {
  Literal literal(Shape::Scalar(PrimitiveType::kS32));
  literal.Set<int32_t>(0, static_cast<int32_t>(value));
  return ScalarConstant(literal);
}

Instruction* ComputationBuilder::Zero(PrimitiveType type) { return ScalarConstant(Literal(Shape::Scalar(type))); }

Instruction* ComputationBuilder::Broadcast(Instruction* scalar, const Shape& shape) {
  Shape out = Shape::Array(scalar->shape().element_type, shape.dimensions);
  Instruction* b = Add(Opcode::kBroadcast, std::move(out), {scalar});
  b->SetAttr("dimensions", AttrValue::IntList({}));
  return b;
}

Instruction* ComputationBuilder::Slice(Instruction* operand, const std::vector<int64_t>& limits) {
  Shape out = Shape::Array(operand->shape().element_type, limits);
  std::vector<SliceRange> ranges;
  for (int64_t limit : limits) ranges.push_back(SliceRange{0, limit, 1});
  Instruction* s = Add(Opcode::kSlice, std::move(out), {operand});
  s->SetAttr("slice", AttrValue::Of(std::move(ranges)));
  return s;
}

Instruction* ComputationBuilder::DynamicSlice(Instruction* operand, const std::vector<Instruction*>& starts,
                                              const std::vector<int64_t>& sizes) {
  std::vector<Instruction*> operands = {operand};
  operands.insert(operands.end(), starts.begin(), starts.end());
  Instruction* s = Add(Opcode::kDynamicSlice, Shape::Array(operand->shape().element_type, sizes), operands);
  s->SetAttr("dynamic_slice_sizes", AttrValue::IntList(sizes));
  return s;
}

Instruction* ComputationBuilder::PadHigh(Instruction* operand, const std::vector<int64_t>& high) {
  PaddingConfig config;
  std::vector<int64_t> dims = operand->shape().dimensions;
  for (size_t i = 0; i < high.size(); ++i) {
    config.dimensions.push_back(PaddingDimension{0, high[i], 0});
    dims[i] += high[i];
  }
  Instruction* pad = Add(Opcode::kPad, Shape::Array(operand->shape().element_type, dims),
                         {operand, Zero(operand->shape().element_type)});
  pad->SetAttr("padding", AttrValue::Of(std::move(config)));
  return pad;
}

Instruction* ComputationBuilder::Gte(Instruction* tuple, int64_t index) {
  Instruction* gte = Add(Opcode::kGetTupleElement, tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
  gte->SetAttr("index", AttrValue::Int(index));
  return gte;
}

Instruction* ComputationBuilder::Tuple(const std::vector<Instruction*>& elements) {
  std::vector<Shape> shapes;
  for (Instruction* e : elements) shapes.push_back(e->shape());
  return Add(Opcode::kTuple, Shape::Tuple(std::move(shapes)), elements);
}

Instruction* ComputationBuilder::PartitionId() {
  if (partition_id_ == nullptr) {
    Instruction* id = Add(Opcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32), {});
    partition_id_ = Add(Opcode::kConvert, Shape::Scalar(PrimitiveType::kS32), {id});
  }
  return partition_id_;
}

Instruction* ComputationBuilder::TableLookup(const std::vector<int64_t>& table) {
  if (std::all_of(table.begin(), table.end(), [&](int64_t v) { return v == table[0]; })) {
    return ConstantS32(table.empty() ? 0 : table[0]);
  }
  if (auto it = tables_.find(table); it != tables_.end()) return it->second;
  Literal literal(Shape::Array(PrimitiveType::kS32, {static_cast<int64_t>(table.size())}));
  for (size_t i = 0; i < table.size(); ++i)
    literal.Set<int32_t>(static_cast<int64_t>(i), static_cast<int32_t>(table[i]));
  Instruction* constant =
      comp_->AddInstruction(Instruction::CreateConstant(p_.module().UniqueInstructionName("offsets"), literal));
  Instruction* slice = DynamicSlice(constant, {PartitionId()}, {1});
  Instruction* scalar = Add(Opcode::kReshape, Shape::Scalar(PrimitiveType::kS32), {slice});
  tables_[table] = scalar;
  return scalar;
}

std::vector<Instruction*> ComputationBuilder::ShardOffsets(const std::vector<int64_t>& dims, const Tiling& tiling) {
  std::vector<Instruction*> offsets;
  for (size_t d = 0; d < dims.size(); ++d) {
    std::vector<int64_t> table(static_cast<size_t>(num_devices()), 0);
    if (tiling.tiles[d] > 1) {
      for (int64_t dev = 0; dev < num_devices(); ++dev) table[dev] = spmd::ShardOffsets(dims, tiling, dev)[d];
    }
    offsets.push_back(TableLookup(table));
  }
  return offsets;
}

Instruction* ComputationBuilder::MaskPadding(Instruction* value, const Shape& base, const Tiling& tiling,
                                             const std::vector<int64_t>& dims, Instruction* fill) {
  std::vector<int64_t> shard = ShardDims(base.dimensions, tiling);
  Instruction* mask = nullptr;
  std::vector<Instruction*> offsets;
  for (int64_t d : dims) {
    if (tiling.tiles[d] <= 1 || shard[d] * tiling.tiles[d] == base.dimensions[d]) continue;
    if (offsets.empty()) offsets = ShardOffsets(base.dimensions, tiling);
    Shape index_shape = Shape::Array(PrimitiveType::kS32, shard);
    Instruction* iota = Add(Opcode::kIota, index_shape, {});
    iota->SetAttr("iota_dimension", AttrValue::Int(d));
    Instruction* index = Add(Opcode::kAdd, index_shape, {iota, Broadcast(offsets[d], index_shape)});
    Instruction* limit = Broadcast(ConstantS32(base.dimensions[d]), index_shape);
    Instruction* valid = Add(Opcode::kCompare, Shape::Array(PrimitiveType::kPred, shard), {index, limit});
    valid->SetAttr("direction", AttrValue::Enum("LT"));
    mask = mask == nullptr ? valid : Add(Opcode::kAnd, valid->shape(), {mask, valid});
  }
  if (mask == nullptr) return value;
  return Add(Opcode::kSelect, value->shape(), {mask, value, Broadcast(fill, value->shape())});
}

Instruction* ComputationBuilder::AllGather(Instruction* operand, int64_t dim,
                                           const std::vector<std::vector<int64_t>>& groups, const Instruction& source) {
  Shape shape = operand->shape();
  shape.dimensions[dim] *= static_cast<int64_t>(groups.at(0).size());
  Instruction* ag = Add(Opcode::kAllGather, shape, {operand});
  ag->SetAttr("dimensions", AttrValue::IntList({dim}));
  ag->SetAttr("replica_groups", AttrValue::Of(p_.GlobalGroups(groups)));
  ag->SetAttr("channel_id", AttrValue::Int(p_.NextChannelId()));
  ag->SetAttr("use_global_device_ids", AttrValue::Bool(true));
  p_.RecordCollective(source, *ag, static_cast<int64_t>(groups[0].size()));
  return ag;
}

Instruction* ComputationBuilder::AllReduce(Instruction* operand, Computation* reducer,
                                           const std::vector<std::vector<int64_t>>& groups, const Instruction& source) {
  Instruction* ar = Add(Opcode::kAllReduce, operand->shape(), {operand});
  ar->set_called_computations({reducer});
  ar->SetAttr("replica_groups", AttrValue::Of(p_.GlobalGroups(groups)));
  ar->SetAttr("channel_id", AttrValue::Int(p_.NextChannelId()));
  ar->SetAttr("use_global_device_ids", AttrValue::Bool(true));
  p_.RecordCollective(source, *ar, static_cast<int64_t>(groups[0].size()));
  return ar;
}

Instruction* ComputationBuilder::AllToAll(Instruction* operand, int64_t dim,
                                          const std::vector<std::vector<int64_t>>& groups, const Instruction& source) {
  Instruction* a2a = Add(Opcode::kAllToAll, operand->shape(), {operand});
  a2a->SetAttr("dimensions", AttrValue::IntList({dim}));
  ReplicaGroups rg;
  rg.groups = groups;
  a2a->SetAttr("replica_groups", AttrValue::Of(std::move(rg)));
  a2a->SetAttr("channel_id", AttrValue::Int(p_.NextChannelId()));
  p_.RecordCollective(source, *a2a, static_cast<int64_t>(groups[0].size()));
  return a2a;
}

Instruction* ComputationBuilder::CollectivePermute(Instruction* operand,
                                                   const std::vector<std::pair<int64_t, int64_t>>& pairs,
                                                   const Instruction& source) {
  Instruction* cp = Add(Opcode::kCollectivePermute, operand->shape(), {operand});
  std::vector<std::vector<int64_t>> list;
  for (const auto& [from, to] : pairs) list.push_back({from, to});
  cp->SetAttr("source_target_pairs", AttrValue::IntListList(std::move(list)));
  cp->SetAttr("channel_id", AttrValue::Int(p_.NextChannelId()));
  p_.RecordCollective(source, *cp, 2);
  return cp;
}

// Same tiles in another device order: every core fetches its block from one core that holds it.
Instruction* ComputationBuilder::TryCollectivePermute(const PValue& value, const Tiling& from, const Tiling& to,
                                                      const Instruction& source) {
  if (from.tiles != to.tiles || from.replication != to.replication) return nullptr;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  for (size_t i = 0; i < to.devices.size(); ++i) {
    if (from.devices[i] != to.devices[i]) pairs.emplace_back(from.devices[i], to.devices[i]);
  }
  std::sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  // Cores that keep their block receive it from themselves.
  for (size_t i = 0; i < to.devices.size(); ++i) {
    if (from.devices[i] == to.devices[i]) pairs.emplace_back(from.devices[i], to.devices[i]);
  }
  return CollectivePermute(value.hlo, pairs, source);
}

// The tiles of one dimension move to another dimension that was whole (row -> column): an all-to-all instead of
// gathering the whole array.
Instruction* ComputationBuilder::TryAllToAll(const PValue& value, const Tiling& from, const Tiling& to,
                                             const Instruction& source) {
  const int64_t rank = from.rank();
  int64_t a = -1, b = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (from.tiles[d] == to.tiles[d]) continue;
    if (from.tiles[d] > 1 && to.tiles[d] == 1 && a < 0) {
      a = d;
    } else if (from.tiles[d] == 1 && to.tiles[d] > 1 && b < 0) {
      b = d;
    } else {
      return nullptr;
    }
  }
  if (a < 0 || b < 0 || from.tiles[a] != to.tiles[b]) return nullptr;
  std::vector<std::vector<int64_t>> axes;
  for (int64_t d = 0; d < rank; ++d) {
    axes.push_back(d == a ? std::vector<int64_t>{} : d == b ? std::vector<int64_t>{a} : std::vector<int64_t>{d});
  }
  auto same = [](const Tiling& x, const Tiling& y) {
    return x.tiles == y.tiles && x.devices == y.devices && x.replication == y.replication;
  };
  Instruction* x = value.hlo;
  Tiling src = from;
  if (!same(RegroupAxes(from, axes), to)) {
    // The cores hold the right blocks of `a` for an exchange, but not the ones whose position in their group matches
    // the block of `b` they want (another device order, or partial replication over other devices): a
    // collective-permute first puts on every core the block of `a` it must contribute, then the all-to-all.
    std::vector<std::vector<int64_t>> back;
    for (int64_t d = 0; d < rank; ++d) {
      back.push_back(d == b ? std::vector<int64_t>{} : d == a ? std::vector<int64_t>{b} : std::vector<int64_t>{d});
    }
    src = RegroupAxes(to, back);
    if (src.tiles != from.tiles || src.replication != from.replication || !same(RegroupAxes(src, axes), to)) {
      return nullptr;
    }
    x = TryCollectivePermute(value, from, src, source);
  }
  const int64_t t = from.tiles[a];
  const std::vector<int64_t>& dims = value.base.dimensions;
  std::vector<int64_t> shard = x->shape().dimensions;
  const int64_t b_chunk = (dims[b] + t - 1) / t;
  if (shard[b] != b_chunk * t) {
    std::vector<int64_t> high(static_cast<size_t>(rank), 0);
    high[b] = b_chunk * t - shard[b];
    x = PadHigh(x, high);
    shard = x->shape().dimensions;
  }
  // [.., a: sa, .., b: t*cb, ..] -> split b into [t, cb] and exchange along the t dimension.
  std::vector<int64_t> split = shard;
  split[b] = b_chunk;
  split.insert(split.begin() + b, t);
  PrimitiveType type = x->shape().element_type;
  x = Add(Opcode::kReshape, Shape::Array(type, split), {x});
  x = AllToAll(x, b, GroupsAlongAxes(src, {a}), source);
  // Now index j of the t dimension holds tile j of dimension a: move it in front of a and merge.
  const int64_t a_pos = a < b ? a : a + 1;
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < rank + 1; ++d) {
    if (d == b) continue;
    if (d == a_pos) perm.push_back(b);
    perm.push_back(d);
  }
  std::vector<int64_t> transposed;
  for (int64_t d : perm) transposed.push_back(split[d]);
  Instruction* tr = Add(Opcode::kTranspose, Shape::Array(type, transposed), {x});
  tr->SetAttr("dimensions", AttrValue::IntList(perm));
  std::vector<int64_t> merged = shard;
  merged[b] = b_chunk;
  merged[a] = shard[a] * t;
  x = Add(Opcode::kReshape, Shape::Array(type, merged), {tr});
  if (merged[a] != dims[a]) {
    std::vector<int64_t> limits = merged;
    limits[a] = dims[a];
    x = Slice(x, limits);
  }
  return x;
}

absl::StatusOr<PValue> ComputationBuilder::Reshard(const PValue& value, const Sharding& target,
                                                   const Instruction& source) {
  if (value.base.IsTuple()) {
    Sharding from = ExpandTupleSharding(value.sharding, value.base);
    Sharding to = ExpandTupleSharding(target, value.base);
    std::vector<Instruction*> elements;
    bool changed = false;
    for (size_t i = 0; i < value.base.tuple_shapes.size(); ++i) {
      Instruction* element = Gte(value.hlo, static_cast<int64_t>(i));
      XLAC_ASSIGN_OR_RETURN(PValue moved, Reshard(PValue{element, from.tuple_elements[i], value.base.tuple_shapes[i]},
                                                  to.tuple_elements[i], source));
      changed |= moved.hlo != element;
      elements.push_back(moved.hlo);
    }
    if (!changed) {
      // Nothing moved: drop the get-tuple-elements again.
      for (Instruction* e : elements) {
        if (e->user_count() == 0) XLAC_RETURN_IF_ERROR(comp_->RemoveInstruction(e));
      }
      return PValue{value.hlo, to, value.base};
    }
    return PValue{Tuple(elements), to, value.base};
  }
  if (!value.base.IsArray()) return PValue{value.hlo, target, value.base};
  XLAC_ASSIGN_OR_RETURN(Tiling to, TilingOf(target, value.base.rank(), num_devices()));
  return ReshardToTiling(value, to, source);
}

absl::StatusOr<PValue> ComputationBuilder::ReshardToTiling(const PValue& value, const Tiling& to,
                                                           const Instruction& source) {
  const Shape& base = value.base;
  const int64_t rank = base.rank();
  XLAC_ASSIGN_OR_RETURN(Tiling from, TilingOf(value.sharding, rank, num_devices()));
  from.maximal_device.reset();
  if (from.manual || to.manual) {
    if (from.manual && to.manual) return PValue{value.hlo, ToSharding(to), base};
    return absl::InvalidArgumentError(absl::StrCat("cannot reshard between manual and non-manual shardings (",
                                                   ShardingToString(value.sharding), " -> ",
                                                   ShardingToString(ToSharding(to)), ")"));
  }
  if (from.manual_subgroup > 1 && to.manual_subgroup == 1) {
    // Leaving a partially manual region without SPMDShardToFullShape: the manual groups computed the same program on
    // the same inputs, so their copies are read as replicas.
    p_.Warn(source, absl::StrCat("the partially manual value ", ShardingToString(value.sharding),
                                 " is read as replicated across its manual groups"));
    from.replication *= from.manual_subgroup;
    from.manual_subgroup = 1;
  }
  if (from.manual_subgroup != to.manual_subgroup) {
    // A value that is not manual anywhere is the same for every manual group, so it may enter a partially manual
    // region: each group takes it in the target's tiling within the group. That is the target with its manual axis
    // read as more replication (the manual axis is the minor end of the device array), then relabelled manual.
    if (from.manual_subgroup != 1) {
      return absl::InvalidArgumentError(absl::StrCat("cannot reshard between different manual subgroups (",
                                                     ShardingToString(value.sharding), " -> ",
                                                     ShardingToString(ToSharding(to)), ")"));
    }
    Tiling auto_to = to;
    auto_to.replication *= to.manual_subgroup;
    auto_to.manual_subgroup = 1;
    XLAC_ASSIGN_OR_RETURN(PValue moved, ReshardToTiling(PValue{value.hlo, ToSharding(from), base}, auto_to, source));
    return PValue{moved.hlo, ToSharding(to), base};
  }
  Tiling from_cmp = from, to_cmp = to;
  from_cmp.maximal_device.reset();
  to_cmp.maximal_device.reset();
  if (from_cmp.tiles == to_cmp.tiles && from_cmp.devices == to_cmp.devices)
    return PValue{value.hlo, ToSharding(to), base};

  if (Instruction* moved = TryCollectivePermute(value, from, to, source)) {
    moved->set_shape(ShardShape(base, to));
    return PValue{moved, ToSharding(to), base};
  }
  if (Instruction* moved = TryAllToAll(value, from, to, source)) {
    moved->set_shape(ShardShape(base, to));
    return PValue{moved, ToSharding(to), base};
  }
  const std::vector<int64_t>& dims = base.dimensions;
  const int64_t n = num_devices();
  // Dimensions where some core's target block is not inside the block it holds must be gathered.
  auto contained = [&](const Tiling& have, int64_t d) {
    std::vector<int64_t> have_shard = ShardDims(dims, have), want_shard = ShardDims(dims, to);
    for (int64_t dev = 0; dev < n; ++dev) {
      int64_t have_off = spmd::ShardOffsets(dims, have, dev)[d];
      int64_t want_off = spmd::ShardOffsets(dims, to, dev)[d];
      if (have.tiles[d] == 1) continue;  // a whole dimension can be padded up to any target block
      if (want_off < have_off || want_off + want_shard[d] > have_off + have_shard[d]) return false;
    }
    return true;
  };
  Instruction* current = value.hlo;
  Tiling have = from;
  bool gathered_any = false;
  for (int64_t d = 0; d < rank; ++d) {
    if (have.tiles[d] == 1 || contained(have, d)) continue;
    std::vector<std::vector<int64_t>> groups = GroupsAlongAxes(have, {d});
    current = AllGather(current, d, groups, source);
    gathered_any = true;
    std::vector<std::vector<int64_t>> axes;
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i == d ? std::vector<int64_t>{} : std::vector<int64_t>{i});
    have = RegroupAxes(have, axes);
    if (current->shape().dimensions[d] != dims[d]) {
      std::vector<int64_t> limits = current->shape().dimensions;
      limits[d] = dims[d];
      current = Slice(current, limits);
    }
  }
  if (gathered_any && to.num_tiles() > 1) {
    bool kept_some = false;
    for (int64_t d = 0; d < rank; ++d) kept_some |= have.tiles[d] > 1;
    if (!kept_some) {
      p_.Warn(source,
              absl::StrCat("resharding ", ShardingToString(value.sharding), " -> ", ShardingToString(ToSharding(to)),
                           " materializes the whole array on every core (all-gather, then dynamic-slice)"));
    }
  }
  // Now every target block lies inside the held block, or the dimension is whole: slice per core.
  std::vector<int64_t> want_shard = ShardDims(dims, to);
  std::vector<int64_t> have_shard = ShardDims(dims, have);
  std::vector<int64_t> pad_high(static_cast<size_t>(rank), 0);
  bool needs_pad = false;
  std::vector<std::vector<int64_t>> tables(static_cast<size_t>(rank), std::vector<int64_t>(n, 0));
  for (int64_t dev = 0; dev < n; ++dev) {
    std::vector<int64_t> have_off = spmd::ShardOffsets(dims, have, dev);
    std::vector<int64_t> want_off = spmd::ShardOffsets(dims, to, dev);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t local = want_off[d] - have_off[d];
      tables[d][dev] = local;
      int64_t extent = local + want_shard[d] - have_shard[d];
      if (extent > pad_high[d]) {
        pad_high[d] = extent;
        needs_pad = true;
      }
    }
  }
  if (needs_pad) current = PadHigh(current, pad_high);
  bool identity = current->shape().dimensions == want_shard;
  for (int64_t d = 0; d < rank && identity; ++d) {
    identity = std::all_of(tables[d].begin(), tables[d].end(), [](int64_t v) { return v == 0; });
  }
  if (!identity) {
    std::vector<Instruction*> starts;
    for (int64_t d = 0; d < rank; ++d) starts.push_back(TableLookup(tables[d]));
    current = DynamicSlice(current, starts, want_shard);
  }
  Shape shape = ShardShape(base, to);
  if (current != value.hlo && !(current->shape() == shape)) {
    // Keep the declared layout of the value on its shard.
    current->set_shape(shape);
  }
  return PValue{current, ToSharding(to), base};
}

}  // namespace xlac::spmd
