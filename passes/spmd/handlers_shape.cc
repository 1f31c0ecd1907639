// Data movement: broadcast, transpose, reshape, slice, pad, concatenate, reverse, dynamic-slice,
// dynamic-update-slice, iota, sort. Dimensions an op moves data along are made whole first (all-gathered if the
// operand was tiled there); every other dimension keeps its tiling and the op runs on the shards.
#include <algorithm>

#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {
namespace {

// `tiling` with the dimensions in `whole` untiled (their axes become replication).
Tiling Untile(const Tiling& tiling, const std::vector<bool>& whole) {
  std::vector<std::vector<int64_t>> axes;
  for (int64_t i = 0; i < tiling.rank(); ++i) {
    axes.push_back(whole[i] ? std::vector<int64_t>{} : std::vector<int64_t>{i});
  }
  return RegroupAxes(tiling, axes);
}

}  // namespace

absl::StatusOr<PValue> HandleShapeOp(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (!inst.shape().IsArray() && inst.opcode() != Opcode::kSort) return absl::NotFoundError("");
  const int64_t n = b.num_devices();
  const int64_t rank = inst.shape().IsArray() ? inst.shape().rank() : 0;
  switch (inst.opcode()) {
    case Opcode::kBroadcast: {
      XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, rank, n));
      std::vector<std::vector<int64_t>> axes;
      for (int64_t d : inst.dimensions()) axes.push_back({d});
      XLAC_ASSIGN_OR_RETURN(PValue operand, b.ReshardToTiling(b.Get(inst.operand(0)), RegroupAxes(out, axes), inst));
      return PValue{b.Clone(inst, ShardShape(inst.shape(), out), {operand.hlo}), ToSharding(out), inst.shape()};
    }
    case Opcode::kTranspose: {
      XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, rank, n));
      const std::vector<int64_t>& perm = inst.dimensions();
      std::vector<std::vector<int64_t>> axes(static_cast<size_t>(rank));
      for (int64_t i = 0; i < rank; ++i) axes[perm[i]] = {i};
      XLAC_ASSIGN_OR_RETURN(PValue operand, b.ReshardToTiling(b.Get(inst.operand(0)), RegroupAxes(out, axes), inst));
      return PValue{b.Clone(inst, ShardShape(inst.shape(), out), {operand.hlo}), ToSharding(out), inst.shape()};
    }
    case Opcode::kReshape: {
      const PValue& operand = b.Get(inst.operand(0));
      if (!inst.operand(0)->shape().IsStatic() || !inst.shape().IsStatic()) return absl::NotFoundError("");
      const std::vector<int64_t>& in_dims = inst.operand(0)->shape().dimensions;
      XLAC_ASSIGN_OR_RETURN(Tiling in, TilingOf(operand.sharding, inst.operand(0)->shape().rank(), n));
      std::optional<Tiling> out = ReshapeTiling(in_dims, inst.shape().dimensions, in);
      if (out)
        return PValue{b.Clone(inst, ShardShape(inst.shape(), *out), {operand.hlo}), ToSharding(*out), inst.shape()};
      // The operand's tiles do not survive the reshape: move it to the tiling the wanted result's tiles come from.
      XLAC_ASSIGN_OR_RETURN(Tiling want, TilingOf(target, rank, n));
      std::optional<Tiling> from = ReshapeTiling(inst.shape().dimensions, in_dims, want);
      if (!from || want.num_tiles() == 1) return absl::NotFoundError("");
      XLAC_ASSIGN_OR_RETURN(PValue moved, b.ReshardToTiling(operand, *from, inst));
      return PValue{b.Clone(inst, ShardShape(inst.shape(), want), {moved.hlo}), ToSharding(want), inst.shape()};
    }
    case Opcode::kSlice:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      if (!inst.shape().IsStatic()) return absl::NotFoundError("");
      XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, rank, n));
      const Shape& in_shape = inst.operand(0)->shape();
      std::vector<bool> whole(static_cast<size_t>(rank), false);
      for (int64_t d = 0; d < rank; ++d) {
        switch (inst.opcode()) {
          case Opcode::kSlice: {
            const auto& r = inst.FindAttr("slice")->get<std::vector<SliceRange>>()[d];
            whole[d] = r.start != 0 || r.limit != in_shape.dimensions[d] || r.stride != 1;
            break;
          }
          case Opcode::kPad: {
            const auto& p = inst.FindAttr("padding")->get<PaddingConfig>().dimensions[d];
            whole[d] = p.edge_padding_low != 0 || p.edge_padding_high != 0 || p.interior_padding != 0;
            break;
          }
          case Opcode::kReverse:
            whole[d] = std::find(inst.dimensions().begin(), inst.dimensions().end(), d) != inst.dimensions().end();
            break;
          case Opcode::kConcatenate:
            whole[d] = d == inst.dimensions().at(0);
            break;
          case Opcode::kDynamicSlice:
            whole[d] = inst.shape().dimensions[d] != in_shape.dimensions[d];
            break;
          default:  // dynamic-update-slice
            whole[d] = inst.operand(1)->shape().dimensions[d] != in_shape.dimensions[d];
            break;
        }
      }
      Tiling t = Untile(out, whole);
      std::vector<Instruction*> operands;
      for (int64_t k = 0; k < inst.operand_count(); ++k) {
        const Instruction* operand = inst.operand(k);
        bool is_array_operand = operand->shape().rank() == rank && rank > 0;
        if (inst.opcode() == Opcode::kPad && k == 1) is_array_operand = false;
        XLAC_ASSIGN_OR_RETURN(PValue moved, is_array_operand ? b.ReshardToTiling(b.Get(operand), t, inst)
                                                             : b.Reshard(b.Get(operand), Sharding::Replicated(), inst));
        operands.push_back(moved.hlo);
      }
      Instruction* local = b.Clone(inst, ShardShape(inst.shape(), t), operands);
      if (inst.opcode() == Opcode::kSlice) {
        std::vector<SliceRange> ranges = inst.FindAttr("slice")->get<std::vector<SliceRange>>();
        for (int64_t d = 0; d < rank; ++d) {
          if (!whole[d]) ranges[d] = SliceRange{0, local->shape().dimensions[d], 1};
        }
        local->SetAttr("slice", AttrValue::Of(std::move(ranges)));
      }
      if (inst.opcode() == Opcode::kDynamicSlice)
        local->SetAttr("dynamic_slice_sizes", AttrValue::IntList(local->shape().dimensions));
      return PValue{local, ToSharding(t), inst.shape()};
    }
    case Opcode::kIota: {
      if (!inst.shape().IsStatic()) return absl::NotFoundError("");
      XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, rank, n));
      Shape shard = ShardShape(inst.shape(), out);
      int64_t dim = inst.IntAttr("iota_dimension");
      if (out.tiles[dim] == 1) return PValue{b.Clone(inst, shard, {}), ToSharding(out), inst.shape()};
      Shape index_shape = Shape::Array(PrimitiveType::kS32, shard.dimensions);
      Instruction* iota = b.Add(Opcode::kIota, index_shape, {});
      iota->SetAttr("iota_dimension", AttrValue::Int(dim));
      Instruction* offset = b.ShardOffsets(inst.shape().dimensions, out)[dim];
      Instruction* global = b.Add(Opcode::kAdd, index_shape, {iota, b.Broadcast(offset, index_shape)});
      Instruction* result =
          shard.element_type == PrimitiveType::kS32 ? global : b.Add(Opcode::kConvert, shard, {global});
      result->set_shape(shard);
      return PValue{result, ToSharding(out), inst.shape()};
    }
    case Opcode::kSort: {
      const Shape& first = inst.operand(0)->shape();
      Sharding element_target = target.IsTuple() ? target.tuple_elements.at(0) : target;
      XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(element_target, first.rank(), n));
      std::vector<bool> whole(static_cast<size_t>(first.rank()), false);
      whole[inst.dimensions().at(0)] = true;
      Tiling t = Untile(out, whole);
      std::vector<Instruction*> operands;
      std::vector<Shape> shapes;
      for (const Instruction* operand : inst.operands()) {
        XLAC_ASSIGN_OR_RETURN(PValue moved, b.ReshardToTiling(b.Get(operand), t, inst));
        operands.push_back(moved.hlo);
        shapes.push_back(moved.hlo->shape());
      }
      Shape shape = inst.shape().IsTuple() ? Shape::Tuple(shapes) : shapes[0];
      Sharding s = ToSharding(t);
      Sharding result =
          inst.shape().IsTuple() ? Sharding::Tuple(std::vector<Sharding>(inst.shape().tuple_shapes.size(), s)) : s;
      return PValue{b.Clone(inst, shape, operands), result, inst.shape()};
    }
    default:
      return absl::NotFoundError("");
  }
}

}  // namespace xlac::spmd
