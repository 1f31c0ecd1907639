#include "passes/optimization_pipeline.h"

#include "passes/pass_manager.h"

namespace xlac {

std::vector<std::string> OptimizationPipeline(const OptimizationOptions& options) {
  if (options.opt_level <= 0) return {};
  // Simplification first (it exposes fusion opportunities and removes work), then fusion.
  return {
      "algebraic-simplifier",
      "constant-folding",
      "dce",
      "fusion",
  };
}

absl::StatusOr<bool> RunOptimizationPipeline(Module& module, const OptimizationOptions& options,
                                             DiagnosticEngine& diags) {
  std::vector<std::string> steps = OptimizationPipeline(options);
  if (steps.empty()) return false;
  PassManager manager;
  if (absl::Status added = manager.AddPasses(steps); !added.ok()) return added;
  return manager.Run(module, diags);
}

}  // namespace xlac
