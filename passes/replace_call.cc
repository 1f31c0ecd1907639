#include "passes/replace_call.h"

#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "ir/status_macros.h"

namespace xlac {

Instruction* AddAtCall(Module& module, Computation& comp, const Instruction& call, Opcode op, Shape shape,
                       std::vector<Instruction*> operands) {
  auto inst = Instruction::Create(op, module.UniqueInstructionName(std::string(OpcodeName(op))), std::move(shape),
                                  std::move(operands));
  inst->set_loc(call.loc());
  *inst->mutable_metadata() = call.metadata();
  return comp.AddInstruction(std::move(inst));
}

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

namespace {

absl::StatusOr<bool> Rewrite(Module& module, const CallRewrite& rewrite, SourceLoc* error_at) {
  bool changed = false;
  std::vector<Computation*> comps;
  for (const auto& comp : module.computations()) comps.push_back(comp.get());
  for (Computation* comp : comps) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      absl::StatusOr<Instruction*> replacement = rewrite(module, *comp, inst);
      if (!replacement.ok()) {
        *error_at = inst->loc();
        return replacement.status();
      }
      if (*replacement == nullptr) continue;
      Instruction* value = *replacement;
      if (inst->sharding().has_value() && !value->sharding().has_value()) value->set_sharding(inst->sharding());
      XLAC_RETURN_IF_ERROR(ReplaceCall(*comp, inst, value));
      changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RewriteCustomCalls(Module& module, const CallRewrite& rewrite) {
  SourceLoc at;
  absl::StatusOr<bool> changed = Rewrite(module, rewrite, &at);
  if (!changed.ok() && at.known()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}", at.line, at.col, std::string(changed.status().message())));
  }
  return changed;
}

bool RewriteCustomCalls(Module& module, const CallRewrite& rewrite, DiagnosticEngine& diags) {
  SourceLoc at;
  absl::StatusOr<bool> changed = Rewrite(module, rewrite, &at);
  if (changed.ok()) return true;
  diags.Error(at, std::string(changed.status().message()));
  return false;
}

}  // namespace xlac
