#include "passes/fusion/fusion_cost.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "passes/fusion/fusible.h"

namespace xlac {
namespace {

// `inst` reads an element of operand `i` for more than one output element.
bool ReusesOwnOperand(const Instruction& inst, int64_t i) {
  const Shape& operand = inst.operand(i)->shape();
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
      return inst.shape().ElementCount().value_or(0) > operand.ElementCount().value_or(0);
    case Opcode::kClamp:
    case Opcode::kSelect:
      // Scalar bounds or predicate against an array.
      return operand.dimensions.empty() && !inst.shape().dimensions.empty();
    case Opcode::kPad:
      return i == 1;  // the padding value fills every padded position
    default:
      return false;
  }
}

}  // namespace

bool IsExpensiveOp(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kAcos:
    case Opcode::kAcosh:
    case Opcode::kAsin:
    case Opcode::kAsinh:
    case Opcode::kAtan:
    case Opcode::kAtan2:
    case Opcode::kAtanh:
    case Opcode::kCbrt:
    case Opcode::kCos:
    case Opcode::kCosh:
    case Opcode::kDivide:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kPower:
    case Opcode::kRemainder:
    case Opcode::kRsqrt:
    case Opcode::kSin:
    case Opcode::kSinh:
    case Opcode::kSqrt:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kDot:
    case Opcode::kConvolution:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kFusion:
    case Opcode::kCustomCall:
    case Opcode::kSort:
    case Opcode::kGather:
    case Opcode::kScatter:
    case Opcode::kFft:
      return true;
    default:
      return false;
  }
}

bool IsCheapToDuplicate(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
    case Opcode::kIota:
    case Opcode::kConstant:
    case Opcode::kConvert:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kSlice:
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kNegate:
    case Opcode::kAbs:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kNot:
      return true;
    default:
      return false;
  }
}

bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index, const Instruction* fused_param) {
  if (consumer.opcode() != Opcode::kFusion) return ReusesOwnOperand(consumer, operand_index);
  if (fused_param == nullptr) return false;
  // Any path from the parameter that passes a reusing edge reuses it.
  std::vector<const Instruction*> stack = {fused_param};
  absl::flat_hash_set<const Instruction*> seen = {stack[0]};
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    for (const Instruction* user : inst->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == inst && ReusesOwnOperand(*user, i)) return true;
      }
      if (seen.insert(user).second) stack.push_back(user);
    }
  }
  return false;
}

bool IsSameIndexElementwise(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
      break;
    default:
      if (!IsElementwiseUnary(inst.opcode()) && !IsElementwiseBinary(inst.opcode())) return false;
  }
  if (!IsElementalOp(inst)) return false;
  for (const Instruction* operand : inst.operands()) {
    // clamp and select accept scalar bounds/predicates; those are not the element the epilogue reads in place.
    if (operand->shape().dimensions != inst.shape().dimensions && !operand->shape().dimensions.empty()) return false;
  }
  return true;
}

int64_t FusedInstructionCount(const Computation& comp) { return comp.instruction_count() - comp.parameter_count(); }

}  // namespace xlac
