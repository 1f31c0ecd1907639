#include "passes/layout_copies.h"

#include <vector>

#include "ir/computation.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

Instruction* AddCopy(Module& module, Computation& comp, Instruction* operand, const Shape& shape) {
  return comp.AddInstruction(
      Instruction::Create(Opcode::kCopy, UniqueCopyName(module, operand->name()), shape, {operand}));
}

bool DiffersInLayout(const Shape& value, const Shape& declared) {
  return value.IsArray() && declared.IsArray() && !SameArrayLayout(value, declared);
}

}  // namespace

absl::StatusOr<bool> RunLayoutCopies(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() == Opcode::kTuple && inst->shape().IsTuple()) {
        for (int64_t i = 0; i < inst->operand_count(); ++i) {
          const Shape& element = inst->shape().tuple_shapes[static_cast<size_t>(i)];
          if (!DiffersInLayout(inst->operand(i)->shape(), element)) continue;
          inst->ReplaceOperandWith(i, AddCopy(module, *comp, inst->operand(i), element));
          changed = true;
        }
      } else if (inst->opcode() == Opcode::kGetTupleElement && inst->operand(0)->shape().IsTuple()) {
        int64_t index = inst->IntAttr("index", -1);
        const std::vector<Shape>& elements = inst->operand(0)->shape().tuple_shapes;
        if (index < 0 || index >= static_cast<int64_t>(elements.size())) continue;
        const Shape& element = elements[static_cast<size_t>(index)];
        if (!DiffersInLayout(element, inst->shape())) continue;
        Shape declared = inst->shape();
        std::vector<Instruction*> users = inst->users();
        bool was_root = comp->root() == inst;
        inst->set_shape(element);
        Instruction* copy = AddCopy(module, *comp, inst, declared);
        for (Instruction* user : users) user->ReplaceUsesOfOperand(inst, copy);
        if (was_root) comp->set_root(copy);
        changed = true;
      }
    }
  }
  return changed;
}

}  // namespace xlac
