// top-k: the `topk` op and XLA's "TopK" custom call (values and s32 indices of the k largest, or with the op's
// largest=false the k smallest, elements along the last dimension), as GSPMD's HandleCustomCallTopK does:
//  - the last dimension untiled (batch-partitioned): every core runs the top-k on its rows;
//  - the last dimension tiled with k < its shard length: every core takes the top k of its shard (padding of uneven
//    shards filled with the extreme that never wins), adds its shard's offset to the indices, all-gathers the
//    candidates of its row group along the tiled axis, sorts them by value (ties by the lower index, as the
//    unpartitioned top-k breaks them) and keeps the first k. The result is tiled like the operand on the other
//    dimensions and whole on the last.
// Otherwise (k at least a shard's length) the last dimension is gathered first and the top-k runs on whole rows.
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"
#include "passes/spmd/sharding_propagation_internal.h"

namespace xlac::spmd {
namespace {

// `tiling` with dimension `dim` untiled (its axis becomes replication).
Tiling UntileDim(const Tiling& tiling, int64_t dim) {
  std::vector<std::vector<int64_t>> axes;
  for (int64_t i = 0; i < tiling.rank(); ++i)
    axes.push_back(i == dim ? std::vector<int64_t>{} : std::vector<int64_t>{i});
  return RegroupAxes(tiling, axes);
}

// The value that never ranks above a real element: -inf (largest) or +inf for floats, the type's minimum or maximum
// for integers. nullopt for other types.
std::optional<Literal> NeverWins(PrimitiveType type, bool largest) {
  Literal v(Shape::Scalar(type));
  if (IsFloatingPointType(type)) {
    FloatFormat f = GetFloatFormat(type);
    if (!f.has_infinity || f.is_unsigned) return std::nullopt;
    v.SetFromDouble(0, largest ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
    return v;
  }
  if (!IsSignedIntegralType(type) && !IsUnsignedIntegralType(type)) return std::nullopt;
  const int bits = BitWidth(type);
  if (bits > 64 || bits < 2) return std::nullopt;
  const bool sign = IsSignedIntegralType(type);
  if (bits == 64) {
    v.SetFromInt64(0, largest ? (sign ? std::numeric_limits<int64_t>::min() : 0)
                              : (sign ? std::numeric_limits<int64_t>::max() : -1));
  } else {
    const int64_t lo = sign ? -(int64_t{1} << (bits - 1)) : 0;
    const int64_t hi = sign ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    v.SetFromInt64(0, largest ? lo : hi);
  }
  return v;
}

// (value_a, value_b, index_a, index_b) -> a ranks before b: the better value first (the total order for floats, as
// the top-k orders NaNs), equal values by the lower index.
Computation* RankComparator(Partitioner& p, PrimitiveType type, bool largest) {
  Module& m = p.module();
  Computation* comp = m.AddComputation(std::make_unique<Computation>(m.UniqueComputationName("topk_rank")));
  Shape scalar = Shape::Scalar(type);
  Shape index = Shape::Scalar(PrimitiveType::kS32);
  Shape pred = Shape::Scalar(PrimitiveType::kPred);
  auto param = [&](int64_t i, const char* name, const Shape& shape) {
    return comp->AddInstruction(Instruction::CreateParameter(i, m.UniqueInstructionName(name), shape));
  };
  Instruction* va = param(0, "value_a", scalar);
  Instruction* vb = param(1, "value_b", scalar);
  Instruction* ia = param(2, "index_a", index);
  Instruction* ib = param(3, "index_b", index);
  auto compare = [&](Instruction* a, Instruction* b, const char* direction) {
    Instruction* c =
        comp->AddInstruction(Instruction::Create(Opcode::kCompare, m.UniqueInstructionName("compare"), pred, {a, b}));
    c->SetAttr("direction", AttrValue::Enum(direction));
    if (IsFloatingPointType(a->shape().element_type)) c->SetAttr("type", AttrValue::Enum("TOTALORDER"));
    return c;
  };
  Instruction* better = compare(va, vb, largest ? "GT" : "LT");
  Instruction* equal = compare(va, vb, "EQ");
  Instruction* lower = compare(ia, ib, "LT");
  Instruction* tie =
      comp->AddInstruction(Instruction::Create(Opcode::kAnd, m.UniqueInstructionName("and"), pred, {equal, lower}));
  comp->set_root(
      comp->AddInstruction(Instruction::Create(Opcode::kOr, m.UniqueInstructionName("or"), pred, {better, tie})));
  return comp;
}

}  // namespace

absl::StatusOr<PValue> HandleTopK(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (!IsTopK(inst)) return absl::NotFoundError("");
  const Shape& in = inst.operand(0)->shape();
  const Shape& values_shape = inst.shape().tuple_shapes[0];
  const Shape& indices_shape = inst.shape().tuple_shapes[1];
  if (!in.IsArray() || in.rank() == 0 || !values_shape.IsArray() || values_shape.rank() != in.rank() ||
      indices_shape.element_type != PrimitiveType::kS32) {
    return absl::NotFoundError("");
  }
  const int64_t n = b.num_devices();
  const int64_t last = in.rank() - 1;
  const int64_t k = values_shape.dimensions[last];
  const bool largest = inst.opcode() != Opcode::kTopK || inst.BoolAttr("largest", true);
  const PValue& operand = b.Get(inst.operand(0));
  XLAC_ASSIGN_OR_RETURN(Tiling ot, TilingOf(operand.sharding, in.rank(), n));
  if (ot.manual || ot.manual_subgroup > 1) return absl::NotFoundError("");
  auto result = [&](Instruction* values, Instruction* indices, const Tiling& t) {
    Sharding s = ToSharding(t);
    return PValue{b.Tuple({values, indices}), Sharding::Tuple({s, s}), inst.shape()};
  };
  auto local = [&](Instruction* x) {
    Shape shape = inst.shape();
    for (Shape& leaf : shape.tuple_shapes) {
      for (int64_t d = 0; d < last; ++d) leaf.dimensions[d] = x->shape().dimensions[d];
    }
    return b.Clone(inst, shape, {x});
  };

  const int64_t tiles = ot.tiles[last];
  const int64_t shard = (in.dimensions[last] + tiles - 1) / tiles;
  std::optional<Literal> fill = NeverWins(in.element_type, largest);
  if (tiles == 1 || k >= shard || !fill.has_value()) {
    // Whole rows on every core, tiled like the wanted result (or the operand) on the other dimensions.
    Sharding leaf_target = target.IsTuple() ? target.tuple_elements.at(0) : target;
    XLAC_ASSIGN_OR_RETURN(Tiling want, TilingOf(leaf_target, in.rank(), n));
    Tiling t = UntileDim(ot, last);
    if (t.num_tiles() == 1 && !want.manual && want.manual_subgroup == 1) t = UntileDim(want, last);
    XLAC_ASSIGN_OR_RETURN(PValue x, b.ReshardToTiling(operand, t, inst));
    Instruction* topk = local(x.hlo);
    return result(b.Gte(topk, 0), b.Gte(topk, 1), t);
  }

  // Local candidates: the top k of this core's shard, indices made global.
  Instruction* x = b.MaskPadding(operand.hlo, in, ot, {last}, b.ScalarConstant(*fill));
  Instruction* topk = local(x);
  Instruction* values = b.Gte(topk, 0);
  Instruction* indices = b.Gte(topk, 1);
  Instruction* offset = b.ShardOffsets(in.dimensions, ot)[last];
  indices = b.Add(Opcode::kAdd, indices->shape(), {indices, b.Broadcast(offset, indices->shape())});
  // Every core of a row group gets the group's candidates, in shard order.
  const std::vector<std::vector<int64_t>> groups = GroupsAlongAxes(ot, {last});
  values = b.AllGather(values, last, groups, inst);
  indices = b.AllGather(indices, last, groups, inst);
  Shape sorted = Shape::Tuple({values->shape(), indices->shape()});
  Instruction* sort = b.Add(Opcode::kSort, sorted, {values, indices}, "topk_merge");
  sort->SetAttr("dimensions", AttrValue::IntList({last}));
  sort->SetAttr("is_stable", AttrValue::Bool(true));
  sort->set_called_computations({RankComparator(b.partitioner(), in.element_type, largest)});
  std::vector<int64_t> limits = values->shape().dimensions;
  limits[last] = k;
  return result(b.Slice(b.Gte(sort, 0), limits), b.Slice(b.Gte(sort, 1), limits), UntileDim(ot, last));
}

}  // namespace xlac::spmd
