#include "passes/fusion/fusible.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "ir/computation.h"
#include "passes/alias_util.h"
#include "passes/fusion/fusion_cost.h"
#include "ir/kernel_calls.h"

namespace xlac {
namespace {

// A static array whose elements have a scalar compute type (no complex, tuple, token or dynamic dimension).
bool IsScalarComputeArray(const Shape& shape) {
  return shape.IsArray() && !IsComplexType(shape.element_type) && shape.IsStatic();
}

// A reducer made of scalar elemental ops only: codegen inlines it into the reduction loop.
bool IsScalarComputation(const Computation& comp) {
  if (comp.root() == nullptr) return false;
  for (const auto& inst : comp.instructions()) {
    if (!inst->shape().IsScalar() || !IsElementalOp(*inst) || !inst->called_computations().empty()) return false;
  }
  return true;
}

// Every instruction of `comp` except those in `except` is elemental.
bool OthersElemental(const Computation& comp, const absl::flat_hash_set<const Instruction*>& except) {
  for (const auto& inst : comp.instructions()) {
    if (except.contains(inst.get())) continue;
    if (!IsElementalOp(*inst)) return false;
  }
  return true;
}

bool IsEmittableLoop(const Computation& comp) {
  const Instruction* root = comp.root();
  absl::flat_hash_set<const Instruction*> except;
  if (root->opcode() == Opcode::kTuple) {
    if (root->operand_count() == 0 || root->user_count() != 0) return false;
    for (const Instruction* element : root->operands()) {
      if (!element->shape().IsArray() || element->shape().dimensions != root->operand(0)->shape().dimensions) {
        return false;
      }
    }
    except.insert(root);
  }
  return OthersElemental(comp, except);
}

bool IsEmittableInput(const Computation& comp) {
  const Instruction* root = comp.root();
  std::vector<const Instruction*> reduces;
  absl::flat_hash_set<const Instruction*> except;
  if (root->opcode() == Opcode::kTuple) {
    if (root->operand_count() == 0 || root->user_count() != 0) return false;
    except.insert(root);
    for (const Instruction* element : root->operands()) reduces.push_back(element);
  } else {
    reduces.push_back(root);
  }
  for (const Instruction* reduce : reduces) {
    if (reduce->opcode() != Opcode::kReduce || reduce->operand_count() != 2 || !reduce->shape().IsArray()) return false;
    if (reduce->called_computations().size() != 1 || !IsScalarComputation(*reduce->called_computation(0))) return false;
    // A reduce's result leaves the fusion only through the root.
    if (reduce != root && (reduce->user_count() != 1 || reduce->users()[0] != root)) return false;
    if (reduce == root && reduce->user_count() != 0) return false;
    if (reduce->operand(0)->shape().dimensions != reduces[0]->operand(0)->shape().dimensions ||
        reduce->dimensions() != reduces[0]->dimensions()) {
      return false;
    }
    if (except.contains(reduce)) return false;  // the same reduce twice in the tuple
    except.insert(reduce);
  }
  return OthersElemental(comp, except);
}

bool IsEmittableOutput(const Computation& comp) {
  const Instruction* root = comp.root();
  const Instruction* gemm = nullptr;
  for (const auto& inst : comp.instructions()) {
    if (inst->opcode() != Opcode::kDot && inst->opcode() != Opcode::kConvolution) continue;
    if (gemm != nullptr) return false;
    gemm = inst.get();
  }
  if (gemm == nullptr || !root->shape().IsArray() || !SameArrayLayout(gemm->shape(), root->shape())) return false;
  if (IsComplexType(gemm->shape().element_type)) return false;
  for (const Instruction* operand : gemm->operands()) {
    if (operand->opcode() != Opcode::kParameter) return false;
  }
  // Everything downstream of the GEMM reads it at the output index only, and reaches the root.
  std::vector<const Instruction*> stack = {gemm};
  absl::flat_hash_set<const Instruction*> seen = {gemm};
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (inst != gemm && !IsSameIndexElementwise(*inst)) return false;
    if (inst->user_count() == 0 && inst != root) return false;
    for (const Instruction* user : inst->users()) {
      if (seen.insert(user).second) stack.push_back(user);
    }
  }
  return OthersElemental(comp, {gemm});
}

}  // namespace

bool IsElementalOp(const Instruction& inst) {
  if (!IsScalarComputeArray(inst.shape())) return false;
  for (const Instruction* operand : inst.operands()) {
    if (!IsScalarComputeArray(operand->shape())) return false;
  }
  if (inst.HasSideEffect() || !inst.called_computations().empty()) return false;
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kIota:
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kCopy:
    case Opcode::kSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kReverse:
    case Opcode::kDynamicSlice:
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kReducePrecision:
      return true;
    case Opcode::kConstant:
      return inst.has_literal() && !inst.literal().is_unknown();
    case Opcode::kBitcastConvert:
      return BitWidth(inst.shape().element_type) == BitWidth(inst.operand(0)->shape().element_type);
    case Opcode::kCustomCall:
      return IsElementwiseKernelCall(inst);
    default:
      return IsElementwiseUnary(inst.opcode()) || IsElementwiseBinary(inst.opcode());
  }
}

bool IsEmittableFusion(const Instruction& fusion) {
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1) return false;
  const Computation* comp = fusion.called_computation(0);
  if (comp == nullptr || comp->root() == nullptr || comp->parameter_count() != fusion.operand_count()) return false;
  std::string_view kind = fusion.StringAttr("kind");
  if (kind == "kLoop") return IsEmittableLoop(*comp);
  if (kind == "kInput") return IsEmittableInput(*comp);
  if (kind == "kOutput") return IsEmittableOutput(*comp);
  return false;
}

}  // namespace xlac
