#include "passes/optimization_pipeline.h"

#include "passes/pass_manager.h"

namespace xlac {

std::vector<std::string> OptimizationPipeline(const OptimizationOptions& options) {
  std::vector<std::string> steps;
  if (options.tpu_numerics) steps.push_back("tpu-dot-precision");
  if (options.opt_level <= 0) return steps;
  if (!options.exact && !options.tpu_numerics) steps.push_back("winograd-convolution");  // docs/numerics.md
  // Simplification first (it exposes fusion opportunities and removes work), then layouts (fusion keeps the
  // bitcasts layout assignment makes, and fused kernels read their operands in the chosen layouts), then fusion.
  for (const char* step : {"algebraic-simplifier", "constant-folding", "dce", "layout-assignment", "fusion"}) {
    steps.push_back(step);
  }
  return steps;
}

absl::StatusOr<bool> RunOptimizationPipeline(Module& module, const OptimizationOptions& options,
                                             DiagnosticEngine& diags) {
  std::vector<std::string> steps = OptimizationPipeline(options);
  if (steps.empty()) return false;
  PassManagerOptions manager_options;
  manager_options.observer = options.observer;
  manager_options.pipeline_name = "optimization";
  manager_options.verify_each = options.verify_each;
  PassManager manager(std::move(manager_options));
  if (absl::Status added = manager.AddPasses(steps); !added.ok()) return added;
  return manager.Run(module, diags);
}

}  // namespace xlac
