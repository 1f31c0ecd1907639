// Shape inference for collectives (and their -start/-done halves), tokens, host transfers and copy-start/-done.
#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"

namespace xlac::shape_inference_internal {
namespace {

Shape U32Scalar() { return MakeShape(PrimitiveType::kU32, {}); }

// Size of the first replica group, without materializing iota-form groups (their dims come from the text).
absl::StatusOr<std::optional<int64_t>> FirstGroupSize(const Instruction& inst) {
  XLAC_ASSIGN_OR_RETURN(const ReplicaGroups* groups,
                        OptionalAttr<ReplicaGroups>(inst, "replica_groups", AttrKind::kReplicaGroups));
  if (groups == nullptr) return std::optional<int64_t>();
  if (groups->iota) {
    if (groups->iota->dims.size() != 2) return OpError(inst, "iota replica_groups must have two dimensions");
    return std::optional<int64_t>(groups->iota->dims[1]);
  }
  if (groups->groups.empty()) return std::optional<int64_t>();
  return std::optional<int64_t>(static_cast<int64_t>(groups->groups[0].size()));
}

// XLA requires the shard count of all-gather / reduce-scatter to equal the number of participants per group. That
// number is the replica-group size when the groups hold replica ids (no channel) or flattened ids
// (use_global_device_ids); otherwise it also depends on the module's partition count, which is not checked here.
absl::Status CheckShardCount(const Instruction& inst, int64_t shard_count) {
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> group_size, FirstGroupSize(inst));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> channel_id, OptionalInt(inst, "channel_id"));
  XLAC_ASSIGN_OR_RETURN(bool global_ids, OptionalBool(inst, "use_global_device_ids", false));
  if (!group_size || *group_size == 1 || (channel_id && !global_ids)) return absl::OkStatus();
  if (*group_size != shard_count) {
    return OpError(inst, "shapes imply {} shards but replica groups have {} members", shard_count, *group_size);
  }
  return absl::OkStatus();
}

// Single operand -> its shape; several -> a tuple of them.
Shape SingleOrTuple(std::vector<Shape> shapes) {
  if (shapes.size() == 1) return std::move(shapes[0]);
  return Shape::Tuple(std::move(shapes));
}

std::vector<Shape> OperandShapes(const Instruction& inst) {
  std::vector<Shape> shapes;
  for (const Instruction* operand : inst.operands()) shapes.push_back(StripLayout(operand->shape()));
  return shapes;
}

absl::Status ExpectArrayOperands(const Instruction& inst) {
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, inst.operand(i)->shape(), fmt::format("operand {}", i)));
  }
  return absl::OkStatus();
}

// The i-th of `count` results in `shape`, which holds a single array when count == 1.
absl::StatusOr<const Shape*> NthResult(const Instruction& inst, const Shape& shape, int64_t i, int64_t count) {
  if (count == 1) return &shape;
  if (!shape.IsTuple() || static_cast<int64_t>(shape.tuple_shapes.size()) != count) {
    return OpError(inst, "expected a tuple of {} results, got {}", count, Str(shape));
  }
  return &shape.tuple_shapes[i];
}

int64_t CeilOfRatio(int64_t a, int64_t b) { return b == 0 ? 1 : (a + b - 1) / b; }

// all-gather and all-gather-start: the shard count is read off the result, as XLA's verifier does.
absl::StatusOr<Shape> InferAllGather(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  XLAC_RETURN_IF_ERROR(ExpectArrayOperands(inst));
  const bool is_start = inst.opcode() == Opcode::kAllGatherStart;
  XLAC_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst));
  const int64_t n = inst.operand_count();
  const Shape* outputs = &inst.shape();
  if (is_start) {
    if (!inst.shape().IsTuple() || inst.shape().tuple_shapes.size() != 2) {
      return OpError(inst, "result must be an (inputs, outputs) tuple, got {}", Str(inst.shape()));
    }
    outputs = &inst.shape().tuple_shapes[1];
  }
  std::vector<Shape> results;
  int64_t shard_count = 1;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& in = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "all-gather dimension", dim, in.rank()));
    XLAC_ASSIGN_OR_RETURN(const Shape* out, NthResult(inst, *outputs, i, n));
    if (!out->IsArray()) return OpError(inst, "result {} must be an array, got {}", i, Str(*out));
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "all-gather dimension", dim, out->rank()));
    if (i == 0 && in.dimensions[dim] >= 0 && out->dimensions[dim] >= 0) {
      shard_count = CeilOfRatio(out->dimensions[dim], in.dimensions[dim]);
    }
    Shape result = StripLayout(in);
    if (in.dimensions[dim] != Shape::kUnboundedSize) {
      std::optional<int64_t> size = CheckedMul(in.dimensions[dim], shard_count);
      if (!size) return OpError(inst, "gathered dimension overflows");
      result.dimensions[dim] = *size;
    }
    results.push_back(std::move(result));
  }
  XLAC_RETURN_IF_ERROR(CheckShardCount(inst, shard_count));
  Shape gathered = SingleOrTuple(std::move(results));
  if (!is_start) return gathered;
  return Shape::Tuple({SingleOrTuple(OperandShapes(inst)), std::move(gathered)});
}

absl::StatusOr<Shape> InferReduceScatter(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  XLAC_RETURN_IF_ERROR(ExpectArrayOperands(inst));
  XLAC_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst));
  const int64_t n = inst.operand_count();
  int64_t shard_count = 1;
  std::vector<Shape> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& in = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "scatter dimension", dim, in.rank()));
    XLAC_ASSIGN_OR_RETURN(const Shape* out, NthResult(inst, inst.shape(), i, n));
    if (!out->IsArray()) return OpError(inst, "result {} must be an array, got {}", i, Str(*out));
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "scatter dimension", dim, out->rank()));
    // An empty scatter dimension implies no shard count (and must give an empty result): keep 1.
    if (i == 0 && in.dimensions[dim] > 0 && out->dimensions[dim] > 0) {
      shard_count = CeilOfRatio(in.dimensions[dim], out->dimensions[dim]);
    }
    Shape result = StripLayout(in);
    if (in.dimensions[dim] != Shape::kUnboundedSize) {
      if (in.dimensions[dim] % shard_count != 0) {
        return OpError(inst, "scatter dimension size {} of operand {} is not divisible by the shard count {}",
                       in.dimensions[dim], i, shard_count);
      }
      result.dimensions[dim] = in.dimensions[dim] / shard_count;
    }
    results.push_back(std::move(result));
  }
  XLAC_RETURN_IF_ERROR(CheckShardCount(inst, shard_count));
  return SingleOrTuple(std::move(results));
}

absl::StatusOr<Shape> InferAllToAll(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  XLAC_RETURN_IF_ERROR(ExpectArrayOperands(inst));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, OptionalIntList(inst, "dimensions"));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> split_count, FirstGroupSize(inst));
  if (!dims.empty()) {
    // Array all-to-all splits and concatenates along the same dimension, so the shape is unchanged.
    if (dims.size() != 1) return OpError(inst, "expected exactly one entry in dimensions, got {}", dims.size());
    XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
    const Shape& in = inst.operand(0)->shape();
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "split dimension", dims[0], in.rank()));
    if (split_count && *split_count > 0 && in.dimensions[dims[0]] >= 0 && in.dimensions[dims[0]] % *split_count != 0) {
      return OpError(inst, "split dimension size {} is not divisible by the split count {}", in.dimensions[dims[0]],
                     *split_count);
    }
    return StripLayout(in);
  }
  const Shape& first = inst.operand(0)->shape();
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    if (!ShapesCompatible(first, inst.operand(i)->shape())) {
      return OpError(inst, "operands must have the same shape, got {} and {}", Str(first),
                     Str(inst.operand(i)->shape()));
    }
  }
  if (split_count && *split_count != inst.operand_count()) {
    return OpError(inst, "tuple all-to-all needs one operand per group member ({}), got {}", *split_count,
                   inst.operand_count());
  }
  return Shape::Tuple(OperandShapes(inst));
}

absl::StatusOr<Shape> InferCollectivePermute(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  // The in-place form (input, output, input offsets, output offsets) carries slice_sizes=.
  const bool inplace = inst.FindAttr("slice_sizes") != nullptr;
  std::vector<Shape> shapes = OperandShapes(inst);
  Shape input, output;
  if (inplace) {
    XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 4));
    input = shapes[0];
    output = shapes[1];
  } else {
    XLAC_RETURN_IF_ERROR(ExpectArrayOperands(inst));
    input = SingleOrTuple(shapes);
    output = input;
  }
  if (inst.opcode() == Opcode::kCollectivePermute) return output;
  std::vector<Shape> elements = {input, output};
  // The remaining elements are backend context (u32[] sync flags in XLA's own lowering).
  if (inst.shape().IsTuple()) {
    for (size_t i = 2; i < inst.shape().tuple_shapes.size(); ++i) {
      elements.push_back(StripLayout(inst.shape().tuple_shapes[i]));
    }
  }
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> InferRaggedAllToAll(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 6));
  XLAC_RETURN_IF_ERROR(ExpectArrayOperands(inst));
  const Shape& input = inst.operand(0)->shape();
  const Shape& output = inst.operand(1)->shape();
  if (input.element_type != output.element_type || input.rank() != output.rank()) {
    return OpError(inst, "input {} and output {} must have the same element type and rank", Str(input), Str(output));
  }
  for (int64_t i = 2; i < 6; ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!IsIntegralType(s.element_type)) return OpError(inst, "operand {} must be integral, got {}", i, Str(s));
    // One offset/size per peer, optionally per update: rank 1 or 2.
    if (s.rank() != 1 && s.rank() != 2) return OpError(inst, "operand {} must have rank 1 or 2, got {}", i, Str(s));
    if (!SameDimensions(s, inst.operand(2)->shape())) {
      return OpError(inst, "offset and size operands must have the same shape, got {} and {}",
                     Str(inst.operand(2)->shape()), Str(s));
    }
  }
  return StripLayout(output);
}

// The tuple element `index` of operand 0, which must be a tuple.
absl::StatusOr<Shape> OperandElement(const Instruction& inst, int64_t index) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& s = inst.operand(0)->shape();
  if (!s.IsTuple() || static_cast<int64_t>(s.tuple_shapes.size()) <= index) {
    return OpError(inst, "operand must be a tuple with at least {} elements, got {}", index + 1, Str(s));
  }
  return StripLayout(s.tuple_shapes[index]);
}

absl::Status ExpectTokenOperand(const Instruction& inst, int64_t i) {
  if (i >= inst.operand_count() || !inst.operand(i)->shape().IsToken()) {
    return OpError(inst, "operand {} must be a token", i);
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferHostTransfer(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kInfeed: {
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      XLAC_RETURN_IF_ERROR(ExpectTokenOperand(inst, 0));
      const Shape& own = inst.shape();
      if (!own.IsTuple() || own.tuple_shapes.size() != 2) {
        return OpError(inst, "result must be a (data, token) tuple, got {}", Str(own));
      }
      return Shape::Tuple({StripLayout(own.tuple_shapes[0]), Shape::Token()});
    }
    case Opcode::kOutfeed: {
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
      XLAC_RETURN_IF_ERROR(ExpectTokenOperand(inst, 1));
      const AttrValue* declared = inst.FindAttr("outfeed_shape");
      if (declared != nullptr && declared->kind == AttrKind::kShapeList &&
          std::holds_alternative<std::vector<Shape>>(declared->value)) {
        const std::vector<Shape>& list = std::get<std::vector<Shape>>(declared->value);
        if (list.size() == 1 && !ShapesCompatible(list[0], inst.operand(0)->shape())) {
          return OpError(inst, "outfeed_shape {} does not match the operand {}", Str(list[0]),
                         Str(inst.operand(0)->shape()));
        }
      }
      return Shape::Token();
    }
    case Opcode::kSend:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
      return Shape::Tuple({StripLayout(inst.operand(0)->shape()), U32Scalar(), Shape::Token()});
    case Opcode::kSendDone:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return Shape::Token();
    case Opcode::kRecv: {
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      const Shape& own = inst.shape();
      if (!own.IsTuple() || own.tuple_shapes.size() != 3) {
        return OpError(inst, "result must be a (data, u32[], token) tuple, got {}", Str(own));
      }
      return Shape::Tuple({StripLayout(own.tuple_shapes[0]), U32Scalar(), Shape::Token()});
    }
    case Opcode::kRecvDone: {
      XLAC_ASSIGN_OR_RETURN(Shape data, OperandElement(inst, 0));
      return Shape::Tuple({std::move(data), Shape::Token()});
    }
    default:
      return NotImplemented(inst);
  }
}

}  // namespace

absl::StatusOr<Shape> InferCollectiveShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kCollectiveBroadcast:
      XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
      XLAC_RETURN_IF_ERROR(ExpectArrayOperands(inst));
      return SingleOrTuple(OperandShapes(inst));
    case Opcode::kAllReduceDone:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return StripLayout(inst.operand(0)->shape());
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
      return InferAllGather(inst);
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      return OperandElement(inst, 1);
    case Opcode::kReduceScatter:
      return InferReduceScatter(inst);
    case Opcode::kAllToAll:
      return InferAllToAll(inst);
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return InferCollectivePermute(inst);
    case Opcode::kRaggedAllToAll:
      return InferRaggedAllToAll(inst);
    case Opcode::kPartitionId:
    case Opcode::kReplicaId:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 0));
      return U32Scalar();
    case Opcode::kAfterAll:
      return Shape::Token();
    case Opcode::kAddDependency:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
      XLAC_RETURN_IF_ERROR(ExpectTokenOperand(inst, 1));
      return StripLayout(inst.operand(0)->shape());
    case Opcode::kCopyStart:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return Shape::Tuple({StripLayout(inst.operand(0)->shape()), StripLayout(inst.operand(0)->shape()), U32Scalar()});
    case Opcode::kCopyDone: {
      XLAC_ASSIGN_OR_RETURN(Shape dest, OperandElement(inst, 0));
      XLAC_ASSIGN_OR_RETURN(Shape src, OperandElement(inst, 1));
      if (!ShapesCompatible(dest, src)) {
        return OpError(inst, "source {} and destination {} of the copy differ", Str(src), Str(dest));
      }
      return dest;
    }
    default:
      return InferHostTransfer(inst);
  }
}

}  // namespace xlac::shape_inference_internal
