#include "passes/dce.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/status_macros.h"

namespace xlac {
namespace {

bool IsDead(const Instruction& inst) {
  return inst.user_count() == 0 && &inst != inst.parent()->root() && inst.opcode() != Opcode::kParameter &&
         !inst.HasSideEffect() && inst.control_predecessors().empty() && inst.control_successors().empty();
}

// Removes dead instructions with a worklist: removing one can only make its operands dead, so those are the only
// instructions that need another look.
absl::StatusOr<bool> RemoveDeadInstructions(Computation& comp) {
  std::vector<Instruction*> worklist = comp.MakeInstructionList();
  // Membership only (never iterated): guards against revisiting a deleted instruction that was queued twice.
  absl::flat_hash_set<const Instruction*> removed;
  bool changed = false;
  while (!worklist.empty()) {
    Instruction* inst = worklist.back();
    worklist.pop_back();
    if (removed.contains(inst) || !IsDead(*inst)) continue;
    std::vector<Instruction*> operands = inst->operands();
    inst->DetachFromOperandsAndEdges();
    removed.insert(inst);
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(inst));
    changed = true;
    for (Instruction* operand : operands) worklist.push_back(operand);
  }
  return changed;
}

// Removes computations the entry cannot reach, callers before callees so that each removed computation is no
// longer called by anything left in the module.
absl::StatusOr<bool> RemoveUnreachableComputations(Module& module) {
  Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");
  absl::flat_hash_set<const Computation*> reachable = {entry};
  std::vector<const Computation*> stack = {entry};
  while (!stack.empty()) {
    const Computation* comp = stack.back();
    stack.pop_back();
    for (const auto& inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (reachable.insert(callee).second) stack.push_back(callee);
      }
    }
  }

  std::vector<Computation*> dead;
  for (Computation* comp : module.MakeComputationList()) {
    if (!reachable.contains(comp)) dead.push_back(comp);
  }
  bool changed = !dead.empty();
  while (!dead.empty()) {
    absl::flat_hash_map<const Computation*, int> caller_count;
    for (const Computation* comp : dead) {
      for (const auto& inst : comp->instructions()) {
        for (const Computation* callee : inst->called_computations()) ++caller_count[callee];
      }
    }
    std::vector<Computation*> still_called;
    for (Computation* comp : dead) {
      if (caller_count.contains(comp)) {
        still_called.push_back(comp);
      } else {
        XLAC_RETURN_IF_ERROR(module.RemoveComputation(comp));
      }
    }
    if (still_called.size() == dead.size()) {
      return absl::FailedPreconditionError("unreachable computations call each other in a cycle");
    }
    dead = std::move(still_called);
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RunDce(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationList()) {
    XLAC_ASSIGN_OR_RETURN(bool comp_changed, RemoveDeadInstructions(*comp));
    changed |= comp_changed;
  }
  XLAC_ASSIGN_OR_RETURN(bool removed_computations, RemoveUnreachableComputations(module));
  return changed || removed_computations;
}

}  // namespace xlac
