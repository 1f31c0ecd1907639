// Shape inference for elementwise ops: unary/binary arithmetic, compare, select, clamp and the conversions.
#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"

namespace xlac::shape_inference_internal {
namespace {

bool IsFloatOrComplex(PrimitiveType t) { return IsFloatingPointType(t) || IsComplexType(t); }
bool IsSignedOrFloat(PrimitiveType t) { return IsSignedIntegralType(t) || IsFloatingPointType(t); }

bool IsUnaryElementwise(Opcode op) {
  switch (op) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kCos:
    case Opcode::kSin:
    case Opcode::kTan:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kErf:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
    case Opcode::kReal:
    case Opcode::kImag:
    case Opcode::kAbs:
    case Opcode::kClz:
    case Opcode::kPopulationCount:
    case Opcode::kNegate:
    case Opcode::kSign:
    case Opcode::kNot:
    case Opcode::kIsFinite:
      return true;
    default:
      return false;
  }
}

bool IsBinaryElementwise(Opcode op) {
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kCompare:
    case Opcode::kSubtract:
    case Opcode::kAtan2:
    case Opcode::kPower:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kComplex:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<Shape> InferUnary(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& shape = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, shape, "the operand"));
  const PrimitiveType type = shape.element_type;
  auto type_error = [&](std::string_view expected) {
    return OpError(inst, "expected {} element type, got {}", expected, PrimitiveTypeName(type));
  };
  switch (inst.opcode()) {
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
      if (!IsFloatingPointType(type)) return type_error("a floating-point");
      return StripLayout(shape);
    case Opcode::kCos:
    case Opcode::kSin:
    case Opcode::kTan:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kRsqrt:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kTanh:
    case Opcode::kErf:
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtanh:
    case Opcode::kCosh:
    case Opcode::kSinh:
      if (!IsFloatOrComplex(type)) return type_error("a floating-point or complex");
      return StripLayout(shape);
    case Opcode::kReal:
    case Opcode::kImag:
      if (IsComplexType(type)) return ChangeElementType(shape, ComplexComponentType(type));
      if (IsFloatingPointType(type)) return StripLayout(shape);
      return type_error("a floating-point or complex");
    case Opcode::kAbs:
      if (IsComplexType(type)) return ChangeElementType(shape, ComplexComponentType(type));
      if (IsSignedOrFloat(type)) return StripLayout(shape);
      return type_error("a signed, floating-point or complex");
    case Opcode::kClz:
    case Opcode::kPopulationCount:
      if (!IsIntegralType(type)) return type_error("an integral");
      return StripLayout(shape);
    case Opcode::kNegate:
      if (!IsIntegralType(type) && !IsFloatOrComplex(type)) return type_error("an integral, floating-point or complex");
      return StripLayout(shape);
    case Opcode::kSign:
      if (!IsSignedOrFloat(type) && !IsComplexType(type)) return type_error("a signed, floating-point or complex");
      return StripLayout(shape);
    case Opcode::kNot:
      if (!IsPredType(type) && !IsIntegralType(type)) return type_error("a pred or integral");
      return StripLayout(shape);
    case Opcode::kIsFinite:
      if (!IsFloatingPointType(type)) return type_error("a floating-point");
      return ChangeElementType(shape, PrimitiveType::kPred);
    default:
      return NotImplemented(inst);
  }
}

// HLO binary ops do not broadcast (XLA's verifier rejects implicit broadcasts), so operand dims must be equal.
absl::StatusOr<Shape> InferBinary(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, lhs, "the lhs"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, rhs, "the rhs"));
  const Opcode op = inst.opcode();
  switch (op) {
    case Opcode::kAdd:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kCompare:
      break;
    case Opcode::kSubtract:
    case Opcode::kAtan2:
    case Opcode::kPower:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
      if (IsPredType(lhs.element_type) || IsPredType(rhs.element_type)) {
        return OpError(inst, "expected an arithmetic element type, got pred");
      }
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (!IsPredType(lhs.element_type) && !IsIntegralType(lhs.element_type)) {
        return OpError(inst, "expected a pred or integral element type, got {}", PrimitiveTypeName(lhs.element_type));
      }
      break;
    case Opcode::kComplex:
      if (!IsFloatingPointType(lhs.element_type)) {
        return OpError(inst, "expected a floating-point element type, got {}", PrimitiveTypeName(lhs.element_type));
      }
      break;
    default:
      return NotImplemented(inst);
  }
  if (!SameElementTypeIgnoringFpPrecision(lhs, rhs)) {
    return OpError(inst, "operands have different element types: {} and {}", Str(lhs), Str(rhs));
  }
  if (!SameDimensions(lhs, rhs))
    return OpError(inst, "operands have incompatible shapes: {} and {}", Str(lhs), Str(rhs));
  Shape result = ChangeElementType(lhs, HigherPrecisionElementType(lhs, rhs));
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (rhs.dynamic_dimensions[i]) result.dynamic_dimensions[i] = true;
  }
  if (op == Opcode::kCompare) {
    XLAC_ASSIGN_OR_RETURN(std::optional<std::string> direction, OptionalText(inst, "direction"));
    if (direction && *direction != "EQ" && *direction != "NE" && *direction != "GE" && *direction != "GT" &&
        *direction != "LE" && *direction != "LT") {
      return OpError(inst, "unknown comparison direction '{}'", *direction);
    }
    // XLA's verifier ties an explicit comparison type to the operand element type.
    XLAC_ASSIGN_OR_RETURN(std::optional<std::string> type, OptionalText(inst, "type"));
    if (type) {
      PrimitiveType t = rhs.element_type;
      bool ok = IsFloatingPointType(t)    ? (*type == "FLOAT" || *type == "TOTALORDER")
                : IsComplexType(t)        ? *type == "FLOAT"
                : IsSignedIntegralType(t) ? *type == "SIGNED"
                                          : *type == "UNSIGNED";
      if (!ok)
        return OpError(inst, "comparison type {} does not suit operands of type {}", *type, PrimitiveTypeName(t));
    }
    result.element_type = PrimitiveType::kPred;
  } else if (op == Opcode::kComplex) {
    if (lhs.element_type == PrimitiveType::kF32 && rhs.element_type == PrimitiveType::kF32) {
      result.element_type = PrimitiveType::kC64;
    } else if (lhs.element_type == PrimitiveType::kF64 && rhs.element_type == PrimitiveType::kF64) {
      result.element_type = PrimitiveType::kC128;
    } else {
      return OpError(inst, "complex components must both be f32 or both f64, got {} and {}", Str(lhs), Str(rhs));
    }
  }
  return result;
}

absl::StatusOr<Shape> InferSelect(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 3));
  const Shape& pred = inst.operand(0)->shape();
  const Shape& on_true = inst.operand(1)->shape();
  const Shape& on_false = inst.operand(2)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, pred, "the predicate"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, on_true, "on_true"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, on_false, "on_false"));
  if (!ShapesCompatible(on_true, on_false, /*ignore_fp_precision=*/true)) {
    return OpError(inst, "on_true and on_false must have the same shape, got {} and {}", Str(on_true), Str(on_false));
  }
  if (!IsPredType(pred.element_type)) return OpError(inst, "predicate must be pred, got {}", Str(pred));
  // A scalar predicate selects whole arrays (XLA allows it since it adopted StableHLO semantics).
  if (!pred.IsScalar() && !SameDimensions(pred, on_true)) {
    return OpError(inst, "predicate shape {} does not match operand shape {}", Str(pred), Str(on_true));
  }
  return ChangeElementType(on_true, HigherPrecisionElementType(on_true, on_false));
}

absl::StatusOr<Shape> InferClamp(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 3));
  const Shape& min = inst.operand(0)->shape();
  const Shape& operand = inst.operand(1)->shape();
  const Shape& max = inst.operand(2)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, min, "min"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, max, "max"));
  if (!SameElementTypeIgnoringFpPrecision(min, operand) || !SameElementTypeIgnoringFpPrecision(max, operand)) {
    return OpError(inst, "operands have different element types: {}, {}, {}", Str(min), Str(operand), Str(max));
  }
  if ((!min.IsScalar() && !SameDimensions(min, operand)) || (!max.IsScalar() && !SameDimensions(max, operand))) {
    return OpError(inst, "min and max must be scalars or match the operand shape, got {}, {}, {}", Str(min),
                   Str(operand), Str(max));
  }
  return StripLayout(operand);
}

absl::StatusOr<Shape> InferConvert(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const PrimitiveType to = inst.shape().element_type;
  if (!operand.IsArray() || !IsArrayType(to)) {
    return OpError(inst, "cannot convert {} to {}: only arrays convert", Str(operand), PrimitiveTypeName(to));
  }
  return ChangeElementType(operand, to);
}

absl::StatusOr<Shape> InferBitcastConvert(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  const PrimitiveType from = operand.element_type;
  const PrimitiveType to = inst.shape().element_type;
  if (!operand.IsArray() || !IsArrayType(to)) {
    return OpError(inst, "cannot bitcast-convert {} to {}: only arrays convert", Str(operand), PrimitiveTypeName(to));
  }
  if (IsComplexType(from) != IsComplexType(to)) {
    return OpError(inst, "cannot bitcast-convert between complex and real types: {} to {}", Str(operand),
                   PrimitiveTypeName(to));
  }
  const int in_bits = BitWidth(from);
  const int out_bits = BitWidth(to);
  if (in_bits <= 0 || out_bits <= 0 || std::max(in_bits, out_bits) % std::min(in_bits, out_bits) != 0) {
    return OpError(inst, "cannot bitcast types with indivisible bit widths: {} to {}", PrimitiveTypeName(from),
                   PrimitiveTypeName(to));
  }
  const int64_t ratio = std::max(in_bits, out_bits) / std::min(in_bits, out_bits);
  Shape result = ChangeElementType(operand, to);
  if (in_bits > out_bits) {
    result.dimensions.push_back(ratio);
    result.dynamic_dimensions.push_back(false);
  } else if (in_bits < out_bits) {
    if (operand.rank() < 1 || operand.dimensions.back() != ratio) {
      return OpError(inst, "the last dimension of {} must equal the bit-width ratio {} to bitcast-convert to {}",
                     Str(operand), ratio, PrimitiveTypeName(to));
    }
    result.dimensions.pop_back();
    result.dynamic_dimensions.pop_back();
  }
  return result;
}

absl::StatusOr<Shape> InferStochasticConvert(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& random = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, random, "the random operand"));
  if (!IsUnsignedIntegralType(random.element_type)) {
    return OpError(inst, "random numbers must be unsigned integers, got {}", Str(random));
  }
  if (!IsFloatingPointType(operand.element_type)) {
    return OpError(inst, "only floating-point operands convert stochastically, got {}", Str(operand));
  }
  if (BitWidth(operand.element_type) != BitWidth(random.element_type)) {
    return OpError(inst, "random operand must have as many bits as the operand: {} vs {}", Str(random), Str(operand));
  }
  if (!SameDimensions(operand, random)) {
    return OpError(inst, "operand shape {} does not match random shape {}", Str(operand), Str(random));
  }
  return ChangeElementType(operand, inst.shape().element_type);
}

absl::StatusOr<Shape> InferReducePrecision(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.IsArray() || !IsFloatingPointType(operand.element_type)) {
    return OpError(inst, "expected a floating-point operand, got {}", Str(operand));
  }
  XLAC_ASSIGN_OR_RETURN(int64_t exponent_bits, RequiredInt(inst, "exponent_bits"));
  XLAC_ASSIGN_OR_RETURN(int64_t mantissa_bits, RequiredInt(inst, "mantissa_bits"));
  // One exponent bit is needed to tell zero from infinity; zero mantissa bits is still a meaningful format.
  if (exponent_bits < 1) return OpError(inst, "exponent_bits must be >= 1, got {}", exponent_bits);
  if (mantissa_bits < 0) return OpError(inst, "mantissa_bits must be >= 0, got {}", mantissa_bits);
  return StripLayout(operand);
}

}  // namespace

absl::StatusOr<Shape> InferElementwiseShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kCopy:
    case Opcode::kDomain:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return StripLayout(inst.operand(0)->shape());
    case Opcode::kSelect:
      return InferSelect(inst);
    case Opcode::kClamp:
      return InferClamp(inst);
    case Opcode::kConvert:
      return InferConvert(inst);
    case Opcode::kBitcastConvert:
      return InferBitcastConvert(inst);
    case Opcode::kStochasticConvert:
      return InferStochasticConvert(inst);
    case Opcode::kReducePrecision:
      return InferReducePrecision(inst);
    default:
      break;
  }
  if (IsBinaryElementwise(inst.opcode())) return InferBinary(inst);
  if (IsUnaryElementwise(inst.opcode())) return InferUnary(inst);
  return NotImplemented(inst);
}

}  // namespace xlac::shape_inference_internal
