#include "passes/codegen_prepare.h"

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "passes/alias_util.h"
#include "passes/pass_manager.h"

namespace xlac {
namespace {

// An output fusion's dot writes the fusion's buffer through its fused computation (buffer assignment aliases the
// fused dot), so every output fusion needs a fused computation of its own; call inlining and call-graph flattening
// copy fusions without copying the computations they call.
void GiveOutputFusionsTheirOwnComputation(Module& module) {
  absl::flat_hash_set<const Computation*> seen;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kFusion || inst->StringAttr("kind") != "kOutput") continue;
      const Computation* fused = inst->called_computation(0);
      if (seen.insert(fused).second) continue;
      std::unique_ptr<Computation> clone = fused->Clone(module.UniqueComputationName(fused->name() + ".clone"));
      for (const auto& cloned : clone->instructions()) cloned->set_name(UniqueCopyName(module, cloned->name()));
      inst->set_called_computations({module.AddComputation(std::move(clone))});
    }
  }
}

}  // namespace

const std::vector<std::string>& CodegenPreparePipeline() {
  static const std::vector<std::string> kSteps = {"async-to-sync", "fusion-inliner",        "scan-expander",
                                                  "call-inliner",  "flatten-call-graph",    "layout-copies",
                                                  "dce",           "split-donated-updates", "copy-insertion"};
  return kSteps;
}

absl::Status PrepareForCodegen(Module& module, CompileObserver* observer, bool verify_each) {
  PassManagerOptions manager_options;
  manager_options.observer = observer;
  manager_options.verify_each = verify_each;
  manager_options.pipeline_name = "codegen-prepare";
  PassManager manager(std::move(manager_options));
  absl::Status added = manager.AddPasses(CodegenPreparePipeline());
  if (!added.ok()) return added;
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = manager.Run(module, diags);
  if (changed.ok()) {
    GiveOutputFusionsTheirOwnComputation(module);
    return absl::OkStatus();
  }
  if (!diags.diagnostics().empty()) {
    return absl::Status(changed.status().code(),
                        absl::StrCat(changed.status().message(), ": ", diags.diagnostics().front().message));
  }
  return changed.status();
}

}  // namespace xlac
