// gather and scatter.
//
// gather, operand tiled where it lies (tried first, as GSPMD prefers operand passthrough and trivially sliced
// dimensions to gathering the operand): each tiled operand dimension is either sliced whole (passthrough: its block
// is sliced locally and stays tiled in the result's offset dimension, no communication — a KV cache sharded on heads
// read at some positions) or indexed with slice size 1 (a vocabulary-parallel embedding table: indices are clamped as
// the unpartitioned gather would clamp them, shifted to this core's block, gathered locally, rows that belong to
// another core are zeroed, and one all-reduce over those axes sums the blocks).
// gather, index parallel: the result tiled only on batch dimensions takes the indices tiled the same way and the
// operand whole — a data-parallel embedding lookup, no communication.
// scatter, operand tiled on dimensions it indexes with window size 1: indices shifted to this core's block; updates
// that fall outside it are out of bounds and skipped, exactly as scatter specifies, so each update lands once and
// the result is exact. Tiled window dimensions that no index moves and whose window covers them whole
// (passthrough: a KV cache sharded on heads updated at some positions) tile the updates alike; each core scatters its
// block of the updates into its block of the operand, no communication.
#include <algorithm>

#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Index types whose arithmetic with shard offsets cannot overflow for any dimension size.
bool WideIndexType(PrimitiveType t) {
  return t == PrimitiveType::kS32 || t == PrimitiveType::kS64 || t == PrimitiveType::kU32 || t == PrimitiveType::kU64;
}

// Per index-vector component j (mapped to operand dim map[j]): a constant-shaped value broadcast over `indices`.
Instruction* ComponentVector(ComputationBuilder& b, const std::vector<Instruction*>& per_component,
                             const Shape& indices, int64_t index_vector_dim) {
  PrimitiveType type = indices.element_type;
  std::vector<Instruction*> parts;
  for (Instruction* scalar : per_component) {
    Instruction* v =
        scalar->shape().element_type == type ? scalar : b.Add(Opcode::kConvert, Shape::Scalar(type), {scalar});
    parts.push_back(b.Add(Opcode::kReshape, Shape::Array(type, {1}), {v}));
  }
  Instruction* vec = parts.size() == 1
                         ? parts[0]
                         : b.Add(Opcode::kConcatenate, Shape::Array(type, {static_cast<int64_t>(parts.size())}), parts);
  if (parts.size() > 1) vec->SetAttr("dimensions", AttrValue::IntList({0}));
  Shape target = Shape::Array(type, indices.dimensions);
  if (index_vector_dim == indices.rank()) {
    // Implicit trailing index vector of size 1.
    Instruction* s = b.Add(Opcode::kReshape, Shape::Scalar(type), {vec});
    return b.Broadcast(s, target);
  }
  Instruction* bc = b.Add(Opcode::kBroadcast, target, {vec});
  bc->SetAttr("dimensions", AttrValue::IntList({index_vector_dim}));
  return bc;
}

absl::StatusOr<PValue> IndexParallelGather(ComputationBuilder& b, const Instruction& inst, const Tiling& out) {
  const std::vector<int64_t>& offset_dims = inst.IntListAttr("offset_dims");
  const Shape& indices = inst.operand(1)->shape();
  const int64_t ivd = inst.IntAttr("index_vector_dim");
  // Output batch dims, in order, are the indices dims other than index_vector_dim.
  std::vector<int64_t> batch_out;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    if (!Contains(offset_dims, d)) batch_out.push_back(d);
  }
  std::vector<std::vector<int64_t>> axes(static_cast<size_t>(indices.rank()));
  size_t k = 0;
  for (int64_t d = 0; d < indices.rank(); ++d) {
    if (d == ivd) continue;
    axes[d] = {batch_out.at(k++)};
  }
  XLAC_ASSIGN_OR_RETURN(PValue idx, b.ReshardToTiling(b.Get(inst.operand(1)), RegroupAxes(out, axes), inst));
  XLAC_ASSIGN_OR_RETURN(PValue operand, b.Reshard(b.Get(inst.operand(0)), Sharding::Replicated(), inst));
  Instruction* g = b.Clone(inst, ShardShape(inst.shape(), out), {operand.hlo, idx.hlo});
  return PValue{g, ToSharding(out), inst.shape()};
}

// The operand dimension each offset dimension of a gather's result slices, in order (operand dims neither collapsed
// nor batching).
std::vector<int64_t> OffsetOperandDims(const Instruction& inst) {
  const std::vector<int64_t>& collapsed = inst.IntListAttr("collapsed_slice_dims");
  const std::vector<int64_t>& batching = inst.IntListAttr("operand_batching_dims");
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < inst.operand(0)->shape().rank(); ++d) {
    if (!Contains(collapsed, d) && !Contains(batching, d)) dims.push_back(d);
  }
  return dims;
}

// Gather from an operand tiled on dimensions it indexes with slice size 1 (`indexed`: a vocabulary-parallel table)
// and/or on dimensions it slices whole (`passthrough`: their start is always 0, as clamping makes it). Passthrough
// dimensions stay tiled in the result's offset dimensions: each core slices its own block, no communication (a
// KV cache sharded on heads read at some positions). Indexed dimensions: indices clamped as the unpartitioned
// gather clamps them, shifted to this core's block, rows of another core zeroed, one all-reduce over those axes.
absl::StatusOr<PValue> OperandShardedGather(ComputationBuilder& b, const Instruction& inst, const Tiling& operand_t,
                                            const std::vector<int64_t>& indexed,
                                            const std::vector<int64_t>& passthrough) {
  const Shape& operand_shape = inst.operand(0)->shape();
  const Shape& indices_shape = inst.operand(1)->shape();
  const std::vector<int64_t>& start_index_map = inst.IntListAttr("start_index_map");
  const std::vector<int64_t>& slice_sizes = inst.IntListAttr("slice_sizes");
  const std::vector<int64_t>& offset_dims = inst.IntListAttr("offset_dims");
  const int64_t ivd = inst.IntAttr("index_vector_dim");
  XLAC_ASSIGN_OR_RETURN(PValue idx, b.Reshard(b.Get(inst.operand(1)), Sharding::Replicated(), inst));
  const PValue& operand = b.Get(inst.operand(0));
  PrimitiveType itype = indices_shape.element_type;
  std::vector<int64_t> shard = ShardDims(operand_shape.dimensions, operand_t);
  // The local gather: passthrough dimensions slice the whole local block.
  std::vector<int64_t> local_slice_sizes = slice_sizes;
  Shape local_shape = inst.shape();
  std::vector<std::vector<int64_t>> result_axes(static_cast<size_t>(inst.shape().rank()));
  const std::vector<int64_t> offset_operand_dims = OffsetOperandDims(inst);
  for (size_t k = 0; k < offset_operand_dims.size() && k < offset_dims.size(); ++k) {
    const int64_t d = offset_operand_dims[k];
    if (!Contains(passthrough, d)) continue;
    local_slice_sizes[d] = shard[d];
    local_shape.dimensions[offset_dims[k]] = shard[d];
    result_axes[offset_dims[k]] = {d};
  }
  Tiling result_t = RegroupAxes(operand_t, result_axes);
  if (indexed.empty()) {
    Instruction* g = b.Clone(inst, local_shape, {operand.hlo, idx.hlo});
    g->SetAttr("slice_sizes", AttrValue::IntList(local_slice_sizes));
    return PValue{g, ToSharding(result_t), inst.shape()};
  }
  std::vector<Instruction*> offsets = b.ShardOffsets(operand_shape.dimensions, operand_t);
  // Clamp every component as the unpartitioned gather does, then shift the indexed ones into this core's block.
  std::vector<Instruction*> lows, highs, shifts;
  for (int64_t d : start_index_map) {
    lows.push_back(b.ConstantS32(0));
    highs.push_back(b.ConstantS32(operand_shape.dimensions[d] - slice_sizes[d]));
    shifts.push_back(Contains(indexed, d) ? offsets[d] : b.ConstantS32(0));
  }
  Shape ishape = Shape::Array(itype, indices_shape.dimensions);
  Instruction* lo = ComponentVector(b, lows, ishape, ivd);
  Instruction* hi = ComponentVector(b, highs, ishape, ivd);
  Instruction* clamped = b.Add(Opcode::kClamp, ishape, {lo, idx.hlo, hi});
  Instruction* local = b.Add(Opcode::kSubtract, ishape, {clamped, ComponentVector(b, shifts, ishape, ivd)});
  // valid: every indexed component inside [0, shard).
  std::vector<Instruction*> limits;
  for (int64_t d : start_index_map)
    limits.push_back(b.ConstantS32(Contains(indexed, d) ? shard[d] : (int64_t{1} << 30)));
  Shape pshape = Shape::Array(PrimitiveType::kPred, indices_shape.dimensions);
  Instruction* ge = b.Add(Opcode::kCompare, pshape, {local, b.Broadcast(b.Zero(itype), ishape)});
  ge->SetAttr("direction", AttrValue::Enum("GE"));
  Instruction* lt = b.Add(Opcode::kCompare, pshape, {local, ComponentVector(b, limits, ishape, ivd)});
  lt->SetAttr("direction", AttrValue::Enum("LT"));
  Instruction* ok = b.Add(Opcode::kAnd, pshape, {ge, lt});
  // AND over the index vector: reduce along index_vector_dim (or nothing when it is implicit).
  Instruction* valid = ok;
  std::vector<int64_t> batch_dims_of_indices;
  for (int64_t d = 0; d < indices_shape.rank(); ++d) {
    if (d != ivd) batch_dims_of_indices.push_back(indices_shape.dimensions[d]);
  }
  if (ivd < indices_shape.rank()) {
    Instruction* t = b.ScalarConstant([] {
      Literal l(Shape::Scalar(PrimitiveType::kPred));
      l.Set<uint8_t>(0, 1);
      return l;
    }());
    valid = b.Add(Opcode::kReduce, Shape::Array(PrimitiveType::kPred, batch_dims_of_indices), {ok, t});
    valid->SetAttr("dimensions", AttrValue::IntList({ivd}));
    valid->set_called_computations({b.partitioner().ScalarReducer(Opcode::kAnd, PrimitiveType::kPred)});
  }
  Instruction* g = b.Clone(inst, local_shape, {operand.hlo, local});
  g->SetAttr("slice_sizes", AttrValue::IntList(local_slice_sizes));
  // Broadcast the per-index validity over the offset dims of the result.
  std::vector<int64_t> batch_out;
  for (int64_t d = 0; d < inst.shape().rank(); ++d) {
    if (!Contains(offset_dims, d)) batch_out.push_back(d);
  }
  Instruction* mask = b.Add(Opcode::kBroadcast, Shape::Array(PrimitiveType::kPred, local_shape.dimensions), {valid});
  mask->SetAttr("dimensions", AttrValue::IntList(batch_out));
  PrimitiveType type = inst.shape().element_type;
  Instruction* zeroed = b.Add(Opcode::kSelect, g->shape(), {mask, g, b.Broadcast(b.Zero(type), g->shape())});
  Opcode combine = type == PrimitiveType::kPred ? Opcode::kOr : Opcode::kAdd;
  Instruction* sum =
      b.AllReduce(zeroed, b.partitioner().ScalarReducer(combine, type), GroupsAlongAxes(operand_t, indexed), inst);
  return PValue{sum, ToSharding(result_t), inst.shape()};
}

}  // namespace

absl::StatusOr<PValue> HandleGatherScatter(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  const int64_t n = b.num_devices();
  if (inst.opcode() == Opcode::kGather && inst.operand_count() == 2 && inst.shape().IsStatic()) {
    if (!inst.IntListAttr("operand_batching_dims").empty()) return absl::NotFoundError("");
    const std::vector<int64_t>& offset_dims = inst.IntListAttr("offset_dims");
    XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, inst.shape().rank(), n));
    const Shape& operand_shape = inst.operand(0)->shape();
    XLAC_ASSIGN_OR_RETURN(Tiling ot, TilingOf(b.Get(inst.operand(0)).sharding, operand_shape.rank(), n));
    const std::vector<int64_t>& start_index_map = inst.IntListAttr("start_index_map");
    const std::vector<int64_t>& slice_sizes = inst.IntListAttr("slice_sizes");
    // A tiled operand is partitioned where it lies (as GSPMD prefers operand passthrough and trivially sliced
    // dimensions to gathering it for an index-parallel gather): every tiled dimension is indexed with slice size 1
    // or sliced whole.
    if (ot.num_tiles() > 1 && ot.manual_subgroup == 1) {
      const std::vector<int64_t> offset_operand_dims = OffsetOperandDims(inst);
      std::vector<int64_t> indexed, passthrough;
      bool fits = true;
      for (int64_t d = 0; d < operand_shape.rank(); ++d) {
        if (ot.tiles[d] == 1) continue;
        if (Contains(start_index_map, d) && slice_sizes[d] == 1) {
          indexed.push_back(d);
        } else if (slice_sizes[d] == operand_shape.dimensions[d] && Contains(offset_operand_dims, d)) {
          passthrough.push_back(d);
        } else {
          fits = false;
        }
      }
      if (fits && (indexed.empty() || WideIndexType(inst.operand(1)->shape().element_type))) {
        return OperandShardedGather(b, inst, ot, indexed, passthrough);
      }
    }
    bool batch_only = out.num_tiles() > 1;
    for (int64_t d : offset_dims) batch_only &= out.tiles[d] == 1;
    if (batch_only) return IndexParallelGather(b, inst, out);
    return absl::NotFoundError("");
  }
  if (inst.opcode() == Opcode::kScatter && inst.operand_count() == 3 && inst.shape().IsArray()) {
    if (!inst.IntListAttr("input_batching_dims").empty()) return absl::NotFoundError("");
    const Shape& operand_shape = inst.operand(0)->shape();
    const Shape& updates_shape = inst.operand(2)->shape();
    const std::vector<int64_t>& inserted = inst.IntListAttr("inserted_window_dims");
    const std::vector<int64_t>& map = inst.IntListAttr("scatter_dims_to_operand_dims");
    const std::vector<int64_t>& update_window_dims = inst.IntListAttr("update_window_dims");
    const int64_t ivd = inst.IntAttr("index_vector_dim");
    XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, operand_shape.rank(), n));
    if (out.num_tiles() == 1 || out.manual_subgroup != 1) return absl::NotFoundError("");
    // Every tiled operand dimension is indexed with window size 1 (indices shifted into this core's block), or a
    // window dimension no index moves whose window covers it whole (passthrough: the updates are tiled alike, each
    // core scatters its block of them into its block, as GSPMD's operand passthrough does).
    std::vector<std::vector<int64_t>> update_axes(static_cast<size_t>(updates_shape.rank()));
    bool indexed = false;
    size_t window = 0;
    for (int64_t d = 0; d < operand_shape.rank(); ++d) {
      const bool is_window = !Contains(inserted, d);
      const int64_t u = is_window && window < update_window_dims.size() ? update_window_dims[window] : -1;
      if (is_window) ++window;
      if (out.tiles[d] == 1) continue;
      if (Contains(inserted, d) && Contains(map, d)) {
        indexed = true;
      } else if (u >= 0 && u < updates_shape.rank() && !Contains(map, d) &&
                 updates_shape.dimensions[u] == operand_shape.dimensions[d]) {
        update_axes[u] = {d};
      } else {
        return absl::NotFoundError("");
      }
    }
    const Shape& indices_shape = inst.operand(1)->shape();
    if (indexed && !WideIndexType(indices_shape.element_type)) return absl::NotFoundError("");
    XLAC_ASSIGN_OR_RETURN(PValue operand, b.ReshardToTiling(b.Get(inst.operand(0)), out, inst));
    XLAC_ASSIGN_OR_RETURN(PValue idx, b.Reshard(b.Get(inst.operand(1)), Sharding::Replicated(), inst));
    XLAC_ASSIGN_OR_RETURN(PValue updates,
                          b.ReshardToTiling(b.Get(inst.operand(2)), RegroupAxes(out, update_axes), inst));
    Instruction* local = idx.hlo;
    if (indexed) {
      std::vector<Instruction*> offsets = b.ShardOffsets(operand_shape.dimensions, out);
      std::vector<Instruction*> shifts;
      for (int64_t d : map) shifts.push_back(out.tiles[d] > 1 ? offsets[d] : b.ConstantS32(0));
      Shape ishape = Shape::Array(indices_shape.element_type, indices_shape.dimensions);
      local = b.Add(Opcode::kSubtract, ishape, {idx.hlo, ComponentVector(b, shifts, ishape, ivd)});
    }
    Instruction* s = b.Clone(inst, ShardShape(inst.shape(), out), {operand.hlo, local, updates.hlo});
    return PValue{s, ToSharding(out), inst.shape()};
  }
  return absl::NotFoundError("");
}

}  // namespace xlac::spmd
