#include "passes/optimization_pipeline.h"

#include "passes/pass_manager.h"

namespace xlac {

std::vector<std::string> OptimizationPipeline(const OptimizationOptions& options) {
  std::vector<std::string> steps;
  const OptimizationStage stage = options.stage;
  if (stage != OptimizationStage::kAfterPartitioning && options.tpu_numerics) steps.push_back("tpu-dot-precision");
  if (options.opt_level <= 0) return steps;
  if (stage != OptimizationStage::kAfterPartitioning) {
    if (!options.exact && !options.tpu_numerics) steps.push_back("winograd-convolution");  // docs/numerics.md
    // Simplification first: it exposes fusion opportunities and removes work.
    for (const char* step : {"algebraic-simplifier", "constant-folding", "dce"}) steps.push_back(step);
  }
  switch (stage) {
    case OptimizationStage::kBeforePartitioning:
      // Fusion merges only ops of equal shardings: it runs after propagation, so that it sees the shardings the
      // partitioner will give every op, not only the annotated ones.
      steps.push_back("sharding-propagation");
      steps.push_back("fusion");
      break;
    case OptimizationStage::kWhole:
      // The same order with no partitioner in between. Fusion first loses nothing to layouts chosen later: it leaves
      // out of its loops the reshapes and transposes that relabel bytes (layout assignment makes them bitcasts), and
      // layout assignment gives fused parameters their producers' layouts instead of copies.
      steps.push_back("fusion");
      [[fallthrough]];
    case OptimizationStage::kAfterPartitioning:
      // Layouts for the (partitioned) fused program: fusions read their operands in the layouts they get, then
      // fusion again for what partitioning and layout assignment exposed (the collectives' neighbours, the reshapes
      // partitioning made, a dot's epilogue once the reshape after it is a bitcast, the copies of layouts).
      steps.push_back("layout-assignment");
      steps.push_back("fusion");
      break;
  }
  return steps;
}

absl::StatusOr<bool> RunOptimizationPipeline(Module& module, const OptimizationOptions& options,
                                             DiagnosticEngine& diags) {
  std::vector<std::string> steps = OptimizationPipeline(options);
  if (steps.empty()) return false;
  PassManagerOptions manager_options;
  manager_options.observer = options.observer;
  manager_options.pipeline_name = options.stage == OptimizationStage::kAfterPartitioning ? "layout" : "optimization";
  manager_options.verify_each = options.verify_each;
  PassManager manager(std::move(manager_options));
  if (absl::Status added = manager.AddPasses(steps); !added.ok()) return added;
  return manager.Run(module, diags);
}

}  // namespace xlac
