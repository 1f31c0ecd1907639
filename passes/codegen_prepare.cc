#include "passes/codegen_prepare.h"

#include "absl/strings/str_cat.h"
#include "passes/pass_manager.h"

namespace xlac {

absl::Status PrepareForCodegen(Module& module) {
  PassManager manager;
  absl::Status added = manager.AddPasses({"async-to-sync", "fusion-inliner", "scan-expander", "call-inliner",
                                          "flatten-call-graph", "layout-copies", "dce", "copy-insertion"});
  if (!added.ok()) return added;
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = manager.Run(module, diags);
  if (changed.ok()) return absl::OkStatus();
  if (!diags.diagnostics().empty()) {
    return absl::Status(changed.status().code(),
                        absl::StrCat(changed.status().message(), ": ", diags.diagnostics().front().message));
  }
  return changed.status();
}

}  // namespace xlac
