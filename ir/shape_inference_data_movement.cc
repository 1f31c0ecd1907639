// Shape inference for ops that move or reinterpret data without arithmetic: broadcast, reshape, transpose, slices,
// concatenate, pad, tuples, plus the value sources (parameter, constant, iota, rng).
#include <set>

#include "ir/literal.h"
#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"

namespace xlac::shape_inference_internal {
namespace {

absl::StatusOr<Shape> InferBroadcast(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, OptionalIntList(inst, "dimensions"));
  if (!IsArrayType(out.element_type)) {
    // Without a written result shape (the parser asks), XLA reads dimensions= as the sizes of new major dims.
    std::vector<int64_t> sizes = dims;
    for (int64_t size : sizes) {
      if (size < 0) return OpError(inst, "negative broadcast size {}", size);
    }
    std::vector<bool> dynamic(sizes.size(), false);
    sizes.insert(sizes.end(), operand.dimensions.begin(), operand.dimensions.end());
    dynamic.insert(dynamic.end(), operand.dynamic_dimensions.begin(), operand.dynamic_dimensions.end());
    return MakeShape(operand.element_type, std::move(sizes), std::move(dynamic));
  }
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, out, "the result"));
  if (static_cast<int64_t>(dims.size()) != operand.rank()) {
    return OpError(inst, "dimensions has {} entries but the operand {} has rank {}", dims.size(), Str(operand),
                   operand.rank());
  }
  std::set<int64_t> seen;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "dimensions entry", dims[i], out.rank()));
    if (!seen.insert(dims[i]).second) return OpError(inst, "dimension {} appears twice in dimensions", dims[i]);
    // Unlike the client-side broadcast, HLO broadcast never expands size-1 dims.
    if (!DimsCompatible(out.dimensions[dims[i]], operand.dimensions[i])) {
      return OpError(inst, "operand dimension {} has size {} but maps to result dimension {} of size {}", i,
                     operand.dimensions[i], dims[i], out.dimensions[dims[i]]);
    }
  }
  return ChangeElementType(out, operand.element_type);
}

absl::StatusOr<Shape> InferReshape(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, out, "the result"));
  std::optional<int64_t> in_count = operand.ElementCount();
  std::optional<int64_t> out_count = out.ElementCount();
  if (in_count && out_count && *in_count != *out_count) {
    return OpError(inst, "element count mismatch: {} has {} elements but {} has {}", Str(operand), *in_count, Str(out),
                   *out_count);
  }
  return ChangeElementType(out, operand.element_type);
}

absl::StatusOr<Shape> InferDynamicReshape(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, out, "the result"));
  if (inst.operand_count() != out.rank() + 1) {
    return OpError(inst, "expected one size operand per result dimension ({}), got {}", out.rank(),
                   inst.operand_count() - 1);
  }
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& size = inst.operand(i)->shape();
    if (!size.IsScalar() || size.element_type != PrimitiveType::kS32) {
      return OpError(inst, "size operand {} must be s32[], got {}", i, Str(size));
    }
  }
  return ChangeElementType(out, operand.element_type);
}

absl::StatusOr<Shape> InferTranspose(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* perm, RequiredIntList(inst, "dimensions"));
  if (!IsPermutation(*perm, operand.rank())) {
    return OpError(inst, "dimensions {{{}}} is not a permutation of the operand dimensions of {}", JoinInts(*perm),
                   Str(operand));
  }
  Shape result = StripLayout(operand);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    result.dimensions[i] = operand.dimensions[(*perm)[i]];
    result.dynamic_dimensions[i] = operand.dynamic_dimensions[(*perm)[i]];
  }
  return result;
}

absl::StatusOr<Shape> InferReverse(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, OptionalIntList(inst, "dimensions"));
  std::set<int64_t> seen;
  for (int64_t d : dims) {
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "dimensions entry", d, operand.rank()));
    if (!seen.insert(d).second) return OpError(inst, "dimension {} appears twice in dimensions", d);
  }
  return StripLayout(operand);
}

absl::StatusOr<Shape> InferSlice(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_ASSIGN_OR_RETURN(const std::vector<SliceRange>* ranges,
                        RequiredAttr<std::vector<SliceRange>>(inst, "slice", AttrKind::kSlice));
  if (static_cast<int64_t>(ranges->size()) != operand.rank()) {
    return OpError(inst, "slice has {} ranges but the operand {} has rank {}", ranges->size(), Str(operand),
                   operand.rank());
  }
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const SliceRange& r = (*ranges)[i];
    if (r.start < 0) return OpError(inst, "negative start {} in dimension {}", r.start, i);
    if (r.stride <= 0) return OpError(inst, "stride {} in dimension {} must be positive", r.stride, i);
    if (r.start > r.limit) return OpError(inst, "start {} exceeds limit {} in dimension {}", r.start, r.limit, i);
    if (operand.dimensions[i] != Shape::kUnboundedSize && r.limit > operand.dimensions[i]) {
      return OpError(inst, "limit {} exceeds size {} of dimension {} of {}", r.limit, operand.dimensions[i], i,
                     Str(operand));
    }
    // limit - start cannot overflow: both are in [0, limit].
    int64_t size = (r.limit - r.start) / r.stride + ((r.limit - r.start) % r.stride != 0 ? 1 : 0);
    dims.push_back(size);
    dynamic.push_back(size != 1 && operand.dynamic_dimensions[i]);
  }
  return MakeShape(operand.element_type, std::move(dims), std::move(dynamic));
}

// Validates the start indices of dynamic-slice / dynamic-update-slice: one scalar per dimension, or XLA's legacy
// single rank-1 index vector.
absl::Status CheckStartIndices(const Instruction& inst, const Shape& operand, int64_t first_index) {
  const int64_t count = inst.operand_count() - first_index;
  if (count >= 1 && inst.operand(first_index)->shape().IsArray() && inst.operand(first_index)->shape().rank() == 1) {
    const Shape& indices = inst.operand(first_index)->shape();
    if (count != 1) return OpError(inst, "expected a single rank-1 start index operand, got {}", count);
    if (!IsIntegralType(indices.element_type)) {
      return OpError(inst, "start indices must be integral, got {}", Str(indices));
    }
    if (indices.dimensions[0] != operand.rank()) {
      return OpError(inst, "start index vector {} must have one entry per dimension of {}", Str(indices), Str(operand));
    }
    return absl::OkStatus();
  }
  if (count != operand.rank()) {
    return OpError(inst, "expected {} start indices (the rank of {}), got {}", operand.rank(), Str(operand), count);
  }
  for (int64_t i = first_index; i < inst.operand_count(); ++i) {
    const Shape& index = inst.operand(i)->shape();
    if (!index.IsScalar() || !IsIntegralType(index.element_type)) {
      return OpError(inst, "start index operand {} must be an integral scalar, got {}", i, Str(index));
    }
    if (index.element_type != inst.operand(first_index)->shape().element_type) {
      return OpError(inst, "start indices must all have the same type, got {} and {}",
                     Str(inst.operand(first_index)->shape()), Str(index));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferDynamicSlice(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(CheckStartIndices(inst, operand, 1));
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* sizes, RequiredIntList(inst, "dynamic_slice_sizes"));
  if (static_cast<int64_t>(sizes->size()) != operand.rank()) {
    return OpError(inst, "dynamic_slice_sizes has {} entries but the operand {} has rank {}", sizes->size(),
                   Str(operand), operand.rank());
  }
  std::vector<bool> dynamic(operand.rank(), false);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t size = (*sizes)[i];
    if (size < 0) return OpError(inst, "negative slice size {} in dimension {}", size, i);
    if (operand.dimensions[i] != Shape::kUnboundedSize && size > operand.dimensions[i]) {
      return OpError(inst, "slice size {} exceeds size {} of dimension {} of {}", size, operand.dimensions[i], i,
                     Str(operand));
    }
    dynamic[i] = size == operand.dimensions[i] && operand.dynamic_dimensions[i];
  }
  return MakeShape(operand.element_type, *sizes, std::move(dynamic));
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 2));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& update = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, update, "the update"));
  XLAC_RETURN_IF_ERROR(CheckStartIndices(inst, operand, 2));
  if (update.rank() != operand.rank()) {
    return OpError(inst, "update {} and operand {} have different ranks", Str(update), Str(operand));
  }
  if (!SameElementTypeIgnoringFpPrecision(operand, update)) {
    return OpError(inst, "update element type {} does not match operand element type {}",
                   PrimitiveTypeName(update.element_type), PrimitiveTypeName(operand.element_type));
  }
  Shape result = StripLayout(operand);
  for (int64_t i = 0; i < operand.rank(); ++i) {
    if (operand.dimensions[i] != Shape::kUnboundedSize && update.dimensions[i] != Shape::kUnboundedSize &&
        update.dimensions[i] > operand.dimensions[i]) {
      return OpError(inst, "update dimension {} of size {} exceeds operand size {}", i, update.dimensions[i],
                     operand.dimensions[i]);
    }
    if (update.dynamic_dimensions[i] && update.dimensions[i] == operand.dimensions[i]) {
      result.dynamic_dimensions[i] = true;
    }
  }
  return result;
}

absl::StatusOr<Shape> InferConcatenate(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  XLAC_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst));
  const Shape& first = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, first, "operand 0"));
  XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "dimension", dim, first.rank()));
  Shape result = StripLayout(first);
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& shape = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, shape, fmt::format("operand {}", i)));
    if (shape.rank() != first.rank()) {
      return OpError(inst, "cannot concatenate arrays of different ranks: {} and {}", Str(first), Str(shape));
    }
    if (!SameElementTypeIgnoringFpPrecision(first, shape)) {
      return OpError(inst, "cannot concatenate arrays of different element types: {} and {}", Str(first), Str(shape));
    }
    for (int64_t d = 0; d < first.rank(); ++d) {
      if (d != dim && !DimsCompatible(first.dimensions[d], shape.dimensions[d])) {
        return OpError(inst, "operands differ in dimension {}, which is not the concatenation dimension: {} and {}", d,
                       Str(first), Str(shape));
      }
      if (shape.dynamic_dimensions[d]) result.dynamic_dimensions[d] = true;
    }
    result.element_type = HigherPrecisionElementType(result, shape);
    if (result.dimensions[dim] == Shape::kUnboundedSize || shape.dimensions[dim] == Shape::kUnboundedSize) {
      result.dimensions[dim] = Shape::kUnboundedSize;
    } else {
      std::optional<int64_t> sum = CheckedAdd(result.dimensions[dim], shape.dimensions[dim]);
      if (!sum) return OpError(inst, "concatenated dimension {} overflows", dim);
      result.dimensions[dim] = *sum;
    }
  }
  return result;
}

absl::StatusOr<Shape> InferPad(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& value = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  if (!value.IsScalar()) return OpError(inst, "padding value must be a scalar, got {}", Str(value));
  if (!SameElementTypeIgnoringFpPrecision(operand, value)) {
    return OpError(inst, "padding value {} does not match the operand element type of {}", Str(value), Str(operand));
  }
  XLAC_ASSIGN_OR_RETURN(const PaddingConfig* config,
                        RequiredAttr<PaddingConfig>(inst, "padding", AttrKind::kPaddingConfig));
  if (static_cast<int64_t>(config->dimensions.size()) != operand.rank()) {
    return OpError(inst, "padding has {} dimensions but the operand {} has rank {}", config->dimensions.size(),
                   Str(operand), operand.rank());
  }
  Shape result = ChangeElementType(operand, HigherPrecisionElementType(operand, value));
  for (int64_t i = 0; i < operand.rank(); ++i) {
    const PaddingDimension& p = config->dimensions[i];
    if (p.interior_padding < 0)
      return OpError(inst, "negative interior padding {} in dimension {}", p.interior_padding, i);
    int64_t d = operand.dimensions[i];
    if (d == Shape::kUnboundedSize) continue;
    std::optional<int64_t> size = CheckedMul(std::max<int64_t>(d - 1, 0), p.interior_padding);
    if (size) size = CheckedAdd(*size, d);
    if (size) size = CheckedAdd(*size, p.edge_padding_low);
    if (size) size = CheckedAdd(*size, p.edge_padding_high);
    if (!size) return OpError(inst, "padded dimension {} overflows", i);
    if (*size < 0) return OpError(inst, "padding makes dimension {} negative ({})", i, *size);
    result.dimensions[i] = *size;
  }
  return result;
}

absl::StatusOr<Shape> InferIota(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 0));
  const Shape& shape = inst.shape();
  if (!shape.IsArray()) return OpError(inst, "result must be an array, got {}", Str(shape));
  if (shape.rank() == 0) return OpError(inst, "result must not be a scalar");
  XLAC_ASSIGN_OR_RETURN(int64_t dim, RequiredInt(inst, "iota_dimension"));
  XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "iota_dimension", dim, shape.rank()));
  if (!IsIntegralType(shape.element_type) && !IsFloatingPointType(shape.element_type) &&
      !IsComplexType(shape.element_type)) {
    return OpError(inst, "element type must be integral, floating-point or complex, got {}",
                   PrimitiveTypeName(shape.element_type));
  }
  return StripLayout(shape);
}

absl::StatusOr<Shape> InferGetTupleElement(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.IsTuple()) return OpError(inst, "operand must be a tuple, got {}", Str(operand));
  XLAC_ASSIGN_OR_RETURN(int64_t index, RequiredInt(inst, "index"));
  if (index < 0 || index >= static_cast<int64_t>(operand.tuple_shapes.size())) {
    return OpError(inst, "index {} out of range for tuple {} with {} elements", index, Str(operand),
                   operand.tuple_shapes.size());
  }
  return StripLayout(operand.tuple_shapes[index]);
}

absl::StatusOr<Shape> InferDimensionSize(const Instruction& inst) {
  const bool is_set = inst.opcode() == Opcode::kSetDimensionSize;
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, is_set ? 2 : 1));
  const Shape& operand = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst));
  XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "dimension", dim, operand.rank()));
  if (operand.dimensions[dim] > std::numeric_limits<int32_t>::max()) {
    return OpError(inst, "dimension {} of {} exceeds the int32 limit", dim, Str(operand));
  }
  if (!is_set) return MakeShape(PrimitiveType::kS32, {});
  const Shape& value = inst.operand(1)->shape();
  if (!value.IsScalar() || value.element_type != PrimitiveType::kS32) {
    return OpError(inst, "size operand must be s32[], got {}", Str(value));
  }
  Shape result = StripLayout(operand);
  result.dynamic_dimensions[dim] = true;
  return result;
}

absl::StatusOr<Shape> InferTopK(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  if (operand.rank() < 1) return OpError(inst, "operand must have rank >= 1, got {}", Str(operand));
  XLAC_ASSIGN_OR_RETURN(int64_t k, RequiredInt(inst, "k"));
  const int64_t last = operand.dimensions.back();
  if (k < 0 || (last != Shape::kUnboundedSize && k > last)) {
    return OpError(inst, "k={} is out of range for the last dimension of {}", k, Str(operand));
  }
  Shape values = StripLayout(operand);
  values.dimensions.back() = k;
  values.dynamic_dimensions.back() = false;
  Shape indices = ChangeElementType(values, PrimitiveType::kS32);
  return Shape::Tuple({values, indices});
}

absl::StatusOr<Shape> InferRng(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  if (!a.IsScalar() || !b.IsScalar()) return OpError(inst, "operands must be scalars, got {} and {}", Str(a), Str(b));
  if (a.element_type != b.element_type) {
    return OpError(inst, "operands must have the same element type, got {} and {}", Str(a), Str(b));
  }
  if (!inst.shape().IsArray()) return OpError(inst, "result must be an array, got {}", Str(inst.shape()));
  XLAC_ASSIGN_OR_RETURN(std::optional<std::string> distribution, OptionalText(inst, "distribution"));
  const PrimitiveType t = a.element_type;
  if (distribution && *distribution == "rng_normal") {
    if (!IsFloatingPointType(t)) return OpError(inst, "rng_normal needs floating-point operands, got {}", Str(a));
  } else if (distribution && *distribution != "rng_uniform") {
    return OpError(inst, "unknown distribution '{}'", *distribution);
  } else if (!IsFloatingPointType(t) && !IsIntegralType(t) && !IsPredType(t)) {
    return OpError(inst, "rng_uniform needs floating-point, integral or pred operands, got {}", Str(a));
  }
  return ChangeElementType(inst.shape(), t);
}

absl::StatusOr<Shape> InferRngBitGenerator(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& state = inst.operand(0)->shape();
  const Shape& out = inst.shape();
  // XLA also accepts a bare values array (the new state is then dropped) and checks nothing in that case.
  if (!out.IsTuple()) return StripLayout(out);
  if (out.tuple_shapes.size() != 2) {
    return OpError(inst, "result must be a (state, values) tuple, got {}", Str(out));
  }
  if (!ShapesCompatible(state, out.tuple_shapes[0])) {
    return OpError(inst, "result state {} does not match the input state {}", Str(out.tuple_shapes[0]), Str(state));
  }
  return StripLayout(out);
}

}  // namespace

absl::StatusOr<Shape> InferDataMovementShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 0));
      return StripLayout(inst.shape());
    case Opcode::kConstant:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 0));
      if (!inst.has_literal()) return OpError(inst, "constant has no literal");
      return StripLayout(inst.literal().shape());
    case Opcode::kIota:
      return InferIota(inst);
    case Opcode::kRng:
      return InferRng(inst);
    case Opcode::kRngBitGenerator:
      return InferRngBitGenerator(inst);
    case Opcode::kRngGetAndUpdateState:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 0));
      return MakeShape(PrimitiveType::kU64, {2});
    case Opcode::kBroadcast:
      return InferBroadcast(inst);
    case Opcode::kReshape:
      return InferReshape(inst);
    case Opcode::kDynamicReshape:
      return InferDynamicReshape(inst);
    case Opcode::kBitcast:
      // A bitcast may reinterpret anything; only its byte size matters, which depends on layouts.
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return StripLayout(inst.shape());
    case Opcode::kTranspose:
      return InferTranspose(inst);
    case Opcode::kReverse:
      return InferReverse(inst);
    case Opcode::kSlice:
      return InferSlice(inst);
    case Opcode::kDynamicSlice:
      return InferDynamicSlice(inst);
    case Opcode::kDynamicUpdateSlice:
      return InferDynamicUpdateSlice(inst);
    case Opcode::kConcatenate:
      return InferConcatenate(inst);
    case Opcode::kPad:
      return InferPad(inst);
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      elements.reserve(inst.operand_count());
      for (const Instruction* operand : inst.operands()) elements.push_back(StripLayout(operand->shape()));
      return Shape::Tuple(std::move(elements));
    }
    case Opcode::kGetTupleElement:
      return InferGetTupleElement(inst);
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      return InferDimensionSize(inst);
    case Opcode::kOptimizationBarrier:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return StripLayout(inst.operand(0)->shape());
    case Opcode::kTopK:
      return InferTopK(inst);
    default:
      return NotImplemented(inst);
  }
}

}  // namespace xlac::shape_inference_internal
