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
#include "passes/fusion/fusible.h"

namespace xlac {
absl::StatusOr<bool> RunFusionInliner(Module& module) {
  bool changed = false;
  // Computations codegen emits as scalar code or inside a kernel (reducers, comparators, fused computations): a
  // fusion there is always inlined. Inlining only copies calls these computations already make, so the set stays valid.
  absl::flat_hash_set<const Computation*> embedded;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (CallsSequentially(*inst)) continue;
      for (const Computation* callee : inst->called_computations()) embedded.insert(callee);
    }
  }
  std::vector<Computation*> fused;  // callee-first, without duplicates
  absl::flat_hash_set<const Computation*> seen;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kFusion) continue;
      if (inst->called_computations().size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("fusion ", inst->name(), " must call exactly one computation"));
      }
      if (!embedded.contains(comp) && IsEmittableFusion(*inst)) continue;
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
