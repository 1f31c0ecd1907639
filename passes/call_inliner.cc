#include "passes/call_inliner.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"

namespace xlac {
absl::StatusOr<bool> RunCallInliner(Module& module) {
  bool changed = false;
  std::vector<Computation*> targets;  // in callee-first order, without duplicates
  absl::flat_hash_set<const Computation*> is_target;
  // Callees first: by the time a computation is copied into its callers it contains no calls of its own.
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kCall) continue;
      if (inst->called_computations().size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("call ", inst->name(), " must call exactly one computation"));
      }
      Computation* callee = inst->called_computation(0);
      if (is_target.insert(callee).second) targets.push_back(callee);
      XLAC_RETURN_IF_ERROR(InlineCalledComputation(module, *comp, inst));
      changed = true;
    }
  }
  // A target may still serve a non-call instruction (say, as a reducer); those stay.
  for (auto it = targets.rbegin(); it != targets.rend(); ++it) {
    if (*it != module.entry_computation() && !IsCalled(module, *it)) {
      XLAC_RETURN_IF_ERROR(module.RemoveComputation(*it));
    }
  }
  return changed;
}

}  // namespace xlac
