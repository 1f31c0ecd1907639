#include "passes/replace_call.h"

#include <string>
#include <utility>
#include <vector>

#include "ir/status_macros.h"

namespace xlac {

absl::Status ReplaceCall(Computation& comp, Instruction* call, Instruction* replacement) {
  replacement->set_loc(call->loc());
  for (Instruction* pred : std::vector<Instruction*>(call->control_predecessors())) {
    pred->AddControlDependencyTo(replacement);
    pred->RemoveControlDependencyTo(call);
  }
  for (Instruction* succ : std::vector<Instruction*>(call->control_successors())) {
    replacement->AddControlDependencyTo(succ);
    call->RemoveControlDependencyTo(succ);
  }
  call->ReplaceAllUsesWith(replacement);
  std::string name = call->name();
  XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(call));
  replacement->set_name(std::move(name));  // the module keeps the name reserved
  return absl::OkStatus();
}

}  // namespace xlac
