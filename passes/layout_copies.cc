#include "passes/layout_copies.h"

#include <vector>

#include "ir/computation.h"
#include "ir/kernel_calls.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

// Makes `comp`'s root produce `target`'s layouts.
bool CoerceRoot(Module& module, Computation& comp, const Shape& target) {
  Instruction* root = CoerceLayouts(module, comp, comp.root(), target);
  if (root == comp.root()) return false;
  comp.set_root(root);
  return true;
}

// Operand `i` of `inst` coerced to `target`'s layouts.
bool CoerceOperand(Module& module, Computation& comp, Instruction* inst, int64_t i, const Shape& target) {
  Instruction* operand = CoerceLayouts(module, comp, inst->operand(i), target);
  if (operand == inst->operand(i)) return false;
  inst->ReplaceOperandWith(i, operand);
  return true;
}

// Gives `inst` the shape `actual` (what its callee produces, or for a parameter what its caller passes) and its users
// a coerced value of the declared shape.
bool Retype(Module& module, Computation& comp, Instruction* inst, const Shape& actual) {
  if (SameLayouts(inst->shape(), actual)) return false;
  Shape declared = inst->shape();
  std::vector<Instruction*> users = inst->users();
  bool was_root = comp.root() == inst;
  inst->set_shape(actual);
  Instruction* value = CoerceLayouts(module, comp, inst, declared);
  for (Instruction* user : users) user->ReplaceUsesOfOperand(inst, value);
  if (was_root) comp.set_root(value);
  return true;
}

// A while loop's state lives in one buffer, in the body parameter's layouts: the initial value, the body's result,
// the condition's parameter and the while's own result are coerced to them.
bool FixWhile(Module& module, Computation& comp, Instruction* inst) {
  Computation* cond = inst->called_computation(0);
  Computation* body = inst->called_computation(1);
  if (cond->parameter_count() != 1 || body->parameter_count() != 1) return false;
  const Shape state = body->parameter(0)->shape();
  bool changed = CoerceOperand(module, comp, inst, 0, state);
  changed |= CoerceRoot(module, *body, state);
  changed |= Retype(module, *cond, cond->parameter(0), state);
  changed |= Retype(module, comp, inst, state);
  return changed;
}

// Each branch or callee reads its parameters in their declared layouts and returns the instruction's layouts.
bool FixCalls(Module& module, Computation& comp, Instruction* inst) {
  bool changed = false;
  if (inst->opcode() == Opcode::kConditional) {
    for (size_t b = 0; b < inst->called_computations().size(); ++b) {
      Computation* branch = inst->called_computation(static_cast<int64_t>(b));
      int64_t operand = static_cast<int64_t>(b) + 1;
      if (branch->parameter_count() == 1 && operand < inst->operand_count()) {
        changed |= CoerceOperand(module, comp, inst, operand, branch->parameter(0)->shape());
      }
      changed |= CoerceRoot(module, *branch, inst->shape());
    }
    return changed;
  }
  Computation* callee = inst->called_computation(0);
  for (int64_t i = 0; i < inst->operand_count() && i < callee->parameter_count(); ++i) {
    changed |= CoerceOperand(module, comp, inst, i, callee->parameter(i)->shape());
  }
  changed |= CoerceRoot(module, *callee, inst->shape());
  return changed;
}

// `shape` with every array leaf in the default (row-major) layout.
Shape RowMajor(const Shape& shape) {
  Shape out = shape;
  if (out.IsTuple()) {
    for (Shape& element : out.tuple_shapes) element = RowMajor(element);
  } else if (out.IsArray() && out.layout.has_value()) {
    out.layout = Layout::Default(out.rank());
  }
  return out;
}

}  // namespace

bool MakeKernelCallRowMajor(Module& module, Computation& comp, Instruction* call) {
  if (!IsBufferKernelCall(*call)) return false;
  bool changed = false;
  for (int64_t i = 0; i < call->operand_count(); ++i) {
    changed |= CoerceOperand(module, comp, call, i, RowMajor(call->operand(i)->shape()));
  }
  changed |= Retype(module, comp, call, RowMajor(call->shape()));
  return changed;
}

absl::StatusOr<bool> RunLayoutCopies(Module& module) {
  bool changed = false;
  // Two sweeps: the call boundaries first (they add tuples and get-tuple-elements with consistent layouts), then
  // the forwarding rules over everything, the added instructions included.
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (IsBufferKernelCall(*inst)) {
        changed |= MakeKernelCallRowMajor(module, *comp, inst);
      } else if (inst->opcode() == Opcode::kWhile && inst->called_computations().size() == 2) {
        changed |= FixWhile(module, *comp, inst);
      } else if ((inst->opcode() == Opcode::kConditional || inst->opcode() == Opcode::kCall) &&
                 !inst->called_computations().empty()) {
        changed |= FixCalls(module, *comp, inst);
      }
    }
  }
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() == Opcode::kTuple && inst->shape().IsTuple()) {
        for (int64_t i = 0; i < inst->operand_count(); ++i) {
          changed |= CoerceOperand(module, *comp, inst, i, inst->shape().tuple_shapes[static_cast<size_t>(i)]);
        }
      } else if (inst->opcode() == Opcode::kGetTupleElement && inst->operand(0)->shape().IsTuple()) {
        int64_t index = inst->IntAttr("index", -1);
        const std::vector<Shape>& elements = inst->operand(0)->shape().tuple_shapes;
        if (index < 0 || index >= static_cast<int64_t>(elements.size())) continue;
        changed |= Retype(module, *comp, inst, elements[static_cast<size_t>(index)]);
      }
    }
  }
  return changed;
}

}  // namespace xlac
