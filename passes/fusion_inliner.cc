#include "passes/fusion_inliner.h"

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
absl::StatusOr<bool> RunFusionInliner(Module& module) {
  bool changed = false;
  std::vector<Computation*> fused;  // callee-first, without duplicates
  absl::flat_hash_set<const Computation*> seen;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kFusion) continue;
      if (inst->called_computations().size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("fusion ", inst->name(), " must call exactly one computation"));
      }
      if (seen.insert(inst->called_computation(0)).second) fused.push_back(inst->called_computation(0));
      XLAC_RETURN_IF_ERROR(InlineCalledComputation(module, *comp, inst));
      changed = true;
    }
  }
  for (auto it = fused.rbegin(); it != fused.rend(); ++it) {
    if (*it != module.entry_computation() && !IsCalled(module, *it)) {
      XLAC_RETURN_IF_ERROR(module.RemoveComputation(*it));
    }
  }
  return changed;
}

}  // namespace xlac
