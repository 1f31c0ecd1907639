#include "passes/flatten_call_graph.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "ir/computation.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

Computation* CloneIntoModule(Module& module, const Computation& comp) {
  std::unique_ptr<Computation> clone = comp.Clone(module.UniqueComputationName(comp.name() + ".clone"));
  for (const auto& inst : clone->instructions()) inst->set_name(UniqueCopyName(module, inst->name()));
  return module.AddComputation(std::move(clone));
}

}  // namespace

absl::StatusOr<bool> RunFlattenCallGraph(Module& module) {
  Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");

  // Computations some non-sequential instruction uses (membership only).
  absl::flat_hash_set<const Computation*> embedded_use;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (CallsSequentially(*inst)) continue;
      for (const Computation* callee : inst->called_computations()) embedded_use.insert(callee);
    }
  }

  bool changed = false;
  absl::flat_hash_set<const Computation*> claimed = {entry};
  absl::flat_hash_set<const Computation*> visited = {entry};
  std::vector<Computation*> stack = {entry};
  while (!stack.empty()) {
    Computation* comp = stack.back();
    stack.pop_back();
    std::vector<Computation*> next;
    for (Instruction* inst : comp->MakeInstructionList()) {
      std::vector<Computation*> callees = inst->called_computations();
      bool rewired = false;
      for (Computation*& callee : callees) {
        if (CallsSequentially(*inst)) {
          if (claimed.contains(callee) || embedded_use.contains(callee)) {
            callee = CloneIntoModule(module, *callee);
            rewired = true;
            changed = true;
          }
          claimed.insert(callee);
        }
        if (visited.insert(callee).second) next.push_back(callee);
      }
      if (rewired) inst->set_called_computations(callees);
    }
    // Reversed so that the stack pops callees in program order.
    stack.insert(stack.end(), next.rbegin(), next.rend());
  }
  return changed;
}

}  // namespace xlac
