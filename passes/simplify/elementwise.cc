// Elementwise identities: arithmetic with neutral constants, involutions, select, and/or, max/min, convert, copy.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>

#include "ir/instruction.h"
#include "ir/literal.h"
#include "passes/simplify/simplifier_internal.h"

namespace xlac::simplify {
namespace {

bool IsInt(PrimitiveType type) { return IsIntegralType(type); }

// A value of `inst`'s shape equal everywhere to the known, uniform value of `candidate`: `candidate` itself if it
// has the right shape, else a new broadcast of a new scalar constant holding its first element.
Instruction* Splat(Rewriter& rw, Instruction* inst, Instruction* candidate) {
  if (SameShapeAndLayout(candidate->shape(), inst->shape()) && candidate->sharding() == inst->sharding()) {
    return candidate;
  }
  const Literal& source = *GetKnownValue(*candidate)->literal;
  Literal scalar(Shape::Scalar(inst->shape().element_type));
  std::memcpy(scalar.mutable_raw_data(), source.raw_data(), static_cast<size_t>(scalar.byte_size()));
  Instruction* constant = rw.AddConstant(*inst, std::move(scalar));
  constant->set_sharding(std::nullopt);
  Instruction* broadcast = rw.Add(*inst, Opcode::kBroadcast, inst->shape(), {constant});
  broadcast->SetAttr("dimensions", AttrValue::IntList({}));
  return broadcast;
}

// x / c -> x * (1/c) when every element of c is a power of two whose reciprocal the element type holds exactly:
// both are then the correctly rounded value of the same real number (also for NaN, inf and -0).
Instruction* DivideByPowerOfTwo(Rewriter& rw, Instruction* inst) {
  PrimitiveType type = inst->shape().element_type;
  if (!IsIeeeFloat(type)) return nullptr;
  Instruction* divisor = inst->operand(1);
  std::optional<KnownValue> known = GetKnownValue(*divisor);
  if (!known) return nullptr;
  const Literal& lit = *known->literal;
  Literal reciprocal(lit.shape());
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    double v = lit.GetAsDouble(i);
    int exponent = 0;
    if (!std::isfinite(v) || v == 0 || std::fabs(std::frexp(v, &exponent)) != 0.5) return nullptr;
    double r = 1.0 / v;  // exact in double: a power of two well inside its range
    reciprocal.SetFromDouble(i, r);
    if (reciprocal.GetAsDouble(i) != r) return nullptr;
  }
  Instruction* factor;
  if (known->is_scalar_broadcast) {
    Instruction* constant = rw.AddConstant(*divisor, std::move(reciprocal));
    constant->set_sharding(std::nullopt);
    factor = rw.Add(*divisor, Opcode::kBroadcast, divisor->shape(), {constant});
    factor->SetAttr("dimensions", AttrValue::IntList({}));
  } else {
    factor = rw.AddConstant(*divisor, std::move(reciprocal));
    factor->set_shape(divisor->shape());
  }
  return rw.Add(*inst, Opcode::kMultiply, inst->shape(), {inst->operand(0), factor});
}

Instruction* SimplifyArithmetic(Rewriter& rw, Instruction* inst) {
  PrimitiveType type = inst->shape().element_type;
  bool is_int = IsInt(type);
  bool is_float = IsIeeeFloat(type);
  if (!is_int && !is_float) return nullptr;
  Instruction* lhs = inst->operand(0);
  Instruction* rhs = inst->operand(1);
  // Neutral elements: integer 0 and 1; for floats only -0.0 is neutral for add (+0.0 + -0.0 is +0.0) and only +0.0
  // for subtract.
  auto is_zero_for_add = [&](const Instruction* x) { return is_int ? IsAllInt(*x, 0) : IsAllFloat(*x, -0.0); };
  auto is_one = [&](const Instruction* x) { return is_int ? IsAllInt(*x, 1) : IsAllFloat(*x, 1.0); };
  switch (inst->opcode()) {
    case Opcode::kAdd:
      if (is_zero_for_add(rhs)) return lhs;
      if (is_zero_for_add(lhs)) return rhs;
      return nullptr;
    case Opcode::kSubtract:
      if (is_int ? IsAllInt(*rhs, 0) : IsAllFloat(*rhs, 0.0)) return lhs;
      return nullptr;
    case Opcode::kMultiply:
      if (is_one(rhs)) return lhs;
      if (is_one(lhs)) return rhs;
      // Only integers: for floats, NaN * 0, inf * 0 and -x * 0 are not +0.
      if (is_int && IsAllInt(*rhs, 0)) return Splat(rw, inst, rhs);
      if (is_int && IsAllInt(*lhs, 0)) return Splat(rw, inst, lhs);
      return nullptr;
    case Opcode::kDivide:
      if (is_one(rhs)) return lhs;
      return DivideByPowerOfTwo(rw, inst);
    default:
      return nullptr;
  }
}

Instruction* SimplifyLogical(Rewriter& rw, Instruction* inst) {
  PrimitiveType type = inst->shape().element_type;
  if (!IsInt(type) && !IsPredType(type)) return nullptr;
  Instruction* lhs = inst->operand(0);
  Instruction* rhs = inst->operand(1);
  bool is_and = inst->opcode() == Opcode::kAnd;
  // and(x, ~0) = x, and(x, 0) = 0; or(x, 0) = x, or(x, ~0) = ~0.
  auto neutral = [&](const Instruction* x) { return is_and ? IsAllOnesBits(*x) : IsAllInt(*x, 0); };
  auto absorbing = [&](const Instruction* x) { return is_and ? IsAllInt(*x, 0) : IsAllOnesBits(*x); };
  if (neutral(rhs)) return lhs;
  if (neutral(lhs)) return rhs;
  if (absorbing(rhs)) return Splat(rw, inst, rhs);
  if (absorbing(lhs)) return Splat(rw, inst, lhs);
  if (lhs == rhs) return lhs;
  return nullptr;
}

Instruction* SimplifySelect(Instruction* inst) {
  Instruction* pred = inst->operand(0);
  Instruction* on_true = inst->operand(1);
  Instruction* on_false = inst->operand(2);
  if (on_true == on_false) return on_true;
  if (IsAllInt(*pred, 1)) return on_true;
  if (IsAllInt(*pred, 0)) return on_false;
  return nullptr;
}

// Conversions that keep every value of `from` exactly: pred or a narrower integer to a wider integer of a
// signedness that holds all its values.
bool IsExactIntWidening(PrimitiveType from, PrimitiveType to) {
  if (!IsIntegralType(to)) return false;
  if (IsPredType(from)) return true;
  if (!IsIntegralType(from)) return false;
  int from_bits = BitWidth(from);
  int to_bits = BitWidth(to);
  if (IsSignedIntegralType(from)) return IsSignedIntegralType(to) && to_bits >= from_bits;
  return IsUnsignedIntegralType(to) ? to_bits >= from_bits : to_bits > from_bits;
}

Instruction* SimplifyConvert(Rewriter& rw, Instruction* inst) {
  Instruction* operand = inst->operand(0);
  if (operand->shape().element_type == inst->shape().element_type) return operand;
  // convert(convert(x)) -> convert(x) when the inner one is exact: every conversion depends only on the value, and
  // the value is unchanged. Only integer intermediates: float ones could alter NaN payloads.
  if (operand->opcode() == Opcode::kConvert && Bypassable(*operand)) {
    Instruction* source = operand->operand(0);
    PrimitiveType to = inst->shape().element_type;
    if (IsExactIntWidening(source->shape().element_type, operand->shape().element_type) && !IsComplexType(to)) {
      if (source->shape().element_type == to) return source;
      return rw.Add(*inst, Opcode::kConvert, inst->shape(), {source});
    }
  }
  return nullptr;
}

}  // namespace

Instruction* SimplifyElementwise(Rewriter& rw, Instruction* inst) {
  switch (inst->opcode()) {
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
      return SimplifyArithmetic(rw, inst);
    case Opcode::kAnd:
    case Opcode::kOr:
      return SimplifyLogical(rw, inst);
    case Opcode::kNegate:
    case Opcode::kNot:
      // Both are involutions for every type (negation flips a sign bit or wraps; not flips bits).
      if (inst->operand(0)->opcode() == inst->opcode() && Bypassable(*inst->operand(0))) {
        return inst->operand(0)->operand(0);
      }
      return nullptr;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      return inst->operand(0) == inst->operand(1) ? inst->operand(0) : nullptr;
    case Opcode::kSelect:
      return SimplifySelect(inst);
    case Opcode::kConvert:
      return SimplifyConvert(rw, inst);
    case Opcode::kCopy:
      // A copy only changes the layout; two in a row are one.
      if (inst->operand(0)->opcode() == Opcode::kCopy && Bypassable(*inst->operand(0))) {
        return rw.Add(*inst, Opcode::kCopy, inst->shape(), {inst->operand(0)->operand(0)});
      }
      return nullptr;
    default:
      return nullptr;
  }
}

}  // namespace xlac::simplify
