// Elementwise ops and control flow (tuples, while, conditional, call): operands move to the result's sharding and
// the op runs on the shards; bodies are partitioned with their parameters in the loop state's / operands' shardings.
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/kernel_calls.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {

bool IsElementwiseOp(const Instruction& inst) {
  Opcode op = inst.opcode();
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return true;
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kCopy:
    case Opcode::kMap:
    case Opcode::kReducePrecision:
      return inst.shape().IsArray();
    case Opcode::kBitcastConvert:
      return inst.shape().rank() == inst.operand(0)->shape().rank();
    case Opcode::kCustomCall:
      return IsElementwiseKernelCallOfOneShape(inst);
    default:
      return false;
  }
}

namespace {

// batch-norm-inference is elementwise with its scale, offset, mean and variance broadcast along the feature
// dimension: they take the result's tiles of that dimension, and a batch- or spatially-tiled activation (a data
// parallel CNN) stays where it is.
absl::StatusOr<PValue> BatchNormInference(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  const int64_t feature = inst.IntAttr("feature_index");
  if (!inst.shape().IsArray() || inst.operand_count() != 5 || feature < 0 || feature >= inst.shape().rank()) {
    return absl::NotFoundError("");
  }
  XLAC_ASSIGN_OR_RETURN(Tiling tiling, TilingOf(target, inst.shape().rank(), b.num_devices()));
  std::vector<Instruction*> operands;
  for (int64_t k = 0; k < inst.operand_count(); ++k) {
    Tiling want = k == 0 ? tiling : RegroupAxes(tiling, {{feature}});
    XLAC_ASSIGN_OR_RETURN(PValue moved, b.ReshardToTiling(b.Get(inst.operand(k)), want, inst));
    operands.push_back(moved.hlo);
  }
  Instruction* out = b.Clone(inst, ShardShape(inst.shape(), tiling), operands);
  return PValue{out, ToSharding(tiling), inst.shape()};
}

}  // namespace

absl::StatusOr<PValue> HandleElementwise(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() == Opcode::kBatchNormInference) return BatchNormInference(b, inst, target);
  if (!IsElementwiseOp(inst) || inst.HasSideEffect() || !inst.shape().IsArray()) {
    return absl::NotFoundError("");
  }
  XLAC_ASSIGN_OR_RETURN(Tiling tiling, TilingOf(target, inst.shape().rank(), b.num_devices()));
  std::vector<Instruction*> operands;
  for (const Instruction* operand : inst.operands()) {
    const PValue& value = b.Get(operand);
    // clamp and select take scalar bounds / predicates next to arrays.
    Sharding want = operand->shape().rank() == inst.shape().rank() ? ToSharding(tiling) : Sharding::Replicated();
    XLAC_ASSIGN_OR_RETURN(PValue moved, b.Reshard(value, want, inst));
    operands.push_back(moved.hlo);
  }
  Instruction* out = b.Clone(inst, ShardShape(inst.shape(), tiling), operands);
  return PValue{out, ToSharding(tiling), inst.shape()};
}

namespace {

// `batch` (a tiling of some array whose tiles lie only on batch dimensions) for an array of rank `rank` with the same
// batch dimensions.
Tiling BatchTilingForRank(const Tiling& batch, const std::vector<int64_t>& dims, int64_t rank) {
  std::vector<std::vector<int64_t>> axes(static_cast<size_t>(rank));
  for (int64_t d : dims) {
    if (d < rank && d < batch.rank() && batch.tiles[d] > 1) axes[d] = {d};
  }
  return RegroupAxes(batch, axes);
}

}  // namespace

absl::StatusOr<PValue> HandleKernelCall(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  std::vector<int64_t> batch;
  const KernelCallSharding rule = KernelCallShardingOf(inst, &batch);
  if ((rule != KernelCallSharding::kBatchDims && rule != KernelCallSharding::kElementwise) || inst.HasSideEffect()) {
    return absl::NotFoundError("");
  }
  std::vector<const Shape*> leaves;
  if (inst.shape().IsTuple()) {
    for (const Shape& element : inst.shape().tuple_shapes) leaves.push_back(&element);
  } else {
    leaves.push_back(&inst.shape());
  }
  if (leaves.empty() || !leaves.front()->IsArray()) return absl::NotFoundError("");
  const Shape& lead = *leaves.front();
  // An elementwise kernel's operands and results share one shape (the bind pass checked): every dimension is batch.
  if (rule == KernelCallSharding::kElementwise) {
    batch.clear();
    for (int64_t d = 0; d < lead.rank(); ++d) batch.push_back(d);
  }
  // The tiles `sharding` (of an array of rank `rank`) puts on batch dimensions, when they split them evenly: padded
  // shards would hand the kernel rows that are not there.
  auto batch_tiling = [&](const Sharding& sharding, int64_t rank) -> std::optional<Tiling> {
    if (!sharding.IsTiled()) return std::nullopt;
    absl::StatusOr<Tiling> t = TilingOf(sharding, rank, b.num_devices());
    if (!t.ok() || t->manual || t->manual_subgroup != 1) return std::nullopt;
    Tiling kept = BatchTilingForRank(*t, batch, rank);
    if (kept.num_tiles() == 1) return std::nullopt;
    for (int64_t d : batch) {
      if (d < kept.rank() && d < lead.rank() && lead.dimensions[d] % kept.tiles[d] != 0) return std::nullopt;
    }
    return kept;
  };
  // The result's target decides; failing that, the first operand's sharding (the kernel then runs where its input
  // already is, and only its result moves).
  const Sharding& lead_target =
      target.kind == Sharding::Kind::kTuple && !target.tuple_elements.empty() ? target.tuple_elements.front() : target;
  std::optional<Tiling> tiling = batch_tiling(lead_target, lead.rank());
  for (int64_t k = 0; !tiling && k < inst.operand_count(); ++k) {
    tiling = batch_tiling(b.Get(inst.operand(k)).sharding, inst.operand(k)->shape().rank());
  }
  if (!tiling) return absl::NotFoundError("");
  std::vector<Instruction*> operands;
  for (const Instruction* operand : inst.operands()) {
    Tiling want = BatchTilingForRank(*tiling, batch, operand->shape().rank());
    XLAC_ASSIGN_OR_RETURN(PValue moved, b.Reshard(b.Get(operand), ToSharding(want), inst));
    operands.push_back(moved.hlo);
  }
  std::vector<Shape> local;
  std::vector<Sharding> produced;
  for (const Shape* leaf : leaves) {
    Tiling t = BatchTilingForRank(*tiling, batch, leaf->rank());
    local.push_back(ShardShape(*leaf, t));
    produced.push_back(ToSharding(t));
  }
  if (!inst.shape().IsTuple()) {
    Instruction* out = b.Clone(inst, local.front(), operands);
    return PValue{out, produced.front(), inst.shape()};
  }
  Instruction* out = b.Clone(inst, Shape::Tuple(std::move(local)), operands);
  return PValue{out, Sharding::Tuple(std::move(produced)), inst.shape()};
}

absl::StatusOr<PValue> HandleHostIo(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() == Opcode::kInfeed) {
    // Every core reads its own shard of the data (GSPMD's form); maximal and manual leaves, and tokens, are read
    // whole. Shards of an uneven tiling are read padded, the padding being whatever the host sends.
    XLAC_ASSIGN_OR_RETURN(Shape local, ShardShapeOf(inst.shape(), target, b.num_devices()));
    std::vector<Instruction*> operands;
    for (const Instruction* operand : inst.operands()) operands.push_back(b.Get(operand).hlo);
    return PValue{b.Clone(inst, local, operands), target, inst.shape()};
  }
  if (inst.opcode() != Opcode::kOutfeed || inst.operand_count() != 2) return absl::NotFoundError("");
  // An outfeed's sharding describes its data, leaf by leaf, possibly followed by the token's: every core writes its
  // shard of the data in that sharding.
  const Shape& data = inst.operand(0)->shape();
  Sharding want = inst.sharding().value_or(Sharding::Replicated());
  if (want.IsTuple() && data.IsTuple() && want.tuple_elements.size() == data.tuple_shapes.size() + 1) {
    want.tuple_elements.pop_back();
  } else if (want.IsTuple() && !data.IsTuple() && !want.tuple_elements.empty()) {
    want = want.tuple_elements.front();
  }
  want = ExpandTupleSharding(want, data);
  XLAC_ASSIGN_OR_RETURN(PValue moved, b.Reshard(b.Get(inst.operand(0)), want, inst));
  Instruction* out = b.Clone(inst, inst.shape(), {moved.hlo, b.Get(inst.operand(1)).hlo});
  out->SetAttr("outfeed_shape", AttrValue::Of(std::vector<Shape>{moved.hlo->shape()}));
  return PValue{out, Sharding::Replicated(), inst.shape()};
}

absl::StatusOr<PValue> HandleControlFlow(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  Partitioner& p = b.partitioner();
  switch (inst.opcode()) {
    case Opcode::kTuple: {
      std::vector<Instruction*> elements;
      Sharding produced = target;
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        // Manual leaves cannot move; the driver decides whether the result may keep them.
        const PValue& operand = b.Get(inst.operand(i));
        produced.tuple_elements[i] = KeepManualLeaves(operand.sharding, target.tuple_elements[i], operand.base);
        XLAC_ASSIGN_OR_RETURN(PValue moved, b.Reshard(operand, produced.tuple_elements[i], inst));
        elements.push_back(moved.hlo);
      }
      Instruction* tuple = b.Clone(inst, Shape(), elements);
      std::vector<Shape> shapes;
      for (Instruction* e : elements) shapes.push_back(e->shape());
      tuple->set_shape(Shape::Tuple(std::move(shapes)));
      return PValue{tuple, produced, inst.shape()};
    }
    case Opcode::kGetTupleElement: {
      const PValue& tuple = b.Get(inst.operand(0));
      int64_t index = inst.IntAttr("index");
      Sharding expanded = ExpandTupleSharding(tuple.sharding, tuple.base);
      Instruction* gte = b.Clone(inst, tuple.hlo->shape().tuple_shapes.at(index), {tuple.hlo});
      return PValue{gte, expanded.tuple_elements.at(index), inst.shape()};
    }
    case Opcode::kCopy: {
      if (!inst.shape().IsTuple()) return absl::NotFoundError("");
      // Manual leaves cannot move; the driver decides whether the result may keep them.
      const PValue& operand = b.Get(inst.operand(0));
      Sharding want = KeepManualLeaves(operand.sharding, target, inst.shape());
      XLAC_ASSIGN_OR_RETURN(PValue moved, b.Reshard(operand, want, inst));
      // Copied leaf by leaf (a flat tuple), which is what code generation handles.
      std::vector<Instruction*> leaves;
      for (size_t i = 0; i < inst.shape().tuple_shapes.size(); ++i) {
        Instruction* leaf = b.Gte(moved.hlo, static_cast<int64_t>(i));
        leaves.push_back(leaf->shape().IsArray() ? b.Add(Opcode::kCopy, leaf->shape(), {leaf}) : leaf);
      }
      return PValue{b.Tuple(leaves), want, inst.shape()};
    }
    case Opcode::kOptimizationBarrier: {
      XLAC_ASSIGN_OR_RETURN(PValue moved, b.Reshard(b.Get(inst.operand(0)), target, inst));
      return PValue{b.Clone(inst, moved.hlo->shape(), {moved.hlo}), target, inst.shape()};
    }
    case Opcode::kWhile: {
      XLAC_ASSIGN_OR_RETURN(PValue init, b.Reshard(b.Get(inst.operand(0)), target, inst));
      Sharding pred = p.TargetSharding(*inst.called_computation(0)->root());
      XLAC_ASSIGN_OR_RETURN(Computation * condition,
                            p.PartitionComputation(*inst.called_computation(0), {target}, pred));
      XLAC_ASSIGN_OR_RETURN(Computation * body, p.PartitionComputation(*inst.called_computation(1), {target}, target));
      Instruction* loop = b.Clone(inst, init.hlo->shape(), {init.hlo});
      loop->set_called_computations({condition, body});
      return PValue{loop, target, inst.shape()};
    }
    case Opcode::kConditional: {
      XLAC_ASSIGN_OR_RETURN(PValue index, b.Reshard(b.Get(inst.operand(0)), Sharding::Replicated(), inst));
      std::vector<Instruction*> operands = {index.hlo};
      std::vector<Computation*> branches;
      XLAC_ASSIGN_OR_RETURN(Shape shape, ShardShapeOf(inst.shape(), target, b.num_devices()));
      for (int64_t k = 0; k + 1 < inst.operand_count(); ++k) {
        const PValue& operand = b.Get(inst.operand(k + 1));
        operands.push_back(operand.hlo);
        XLAC_ASSIGN_OR_RETURN(Computation * branch,
                              p.PartitionComputation(*inst.called_computation(k), {operand.sharding}, target));
        branches.push_back(branch);
      }
      Instruction* cond = b.Clone(inst, shape, operands);
      cond->set_called_computations(branches);
      return PValue{cond, target, inst.shape()};
    }
    case Opcode::kCall: {
      std::vector<Instruction*> operands;
      std::vector<Sharding> shardings;
      for (const Instruction* operand : inst.operands()) {
        operands.push_back(b.Get(operand).hlo);
        shardings.push_back(b.Get(operand).sharding);
      }
      XLAC_ASSIGN_OR_RETURN(Shape shape, ShardShapeOf(inst.shape(), target, b.num_devices()));
      XLAC_ASSIGN_OR_RETURN(Computation * callee,
                            p.PartitionComputation(*inst.called_computation(0), shardings, target));
      Instruction* call = b.Clone(inst, shape, operands);
      call->set_called_computations({callee});
      return PValue{call, target, inst.shape()};
    }
    default:
      return absl::NotFoundError("");
  }
}

}  // namespace xlac::spmd
