#include "tools/lib/run_tpu.h"

#include <algorithm>
#include <vector>

#include "codegen/pipeline.h"
#include "fmt/format.h"
#include "ir/status_macros.h"
#include "ir/tpu_target.h"
#include "passes/spmd/dcn_attribution.h"
#include "passes/tpu_cost_model.h"
#include "passes/tpu_memory.h"

namespace xlac {

absl::Status CheckTpuTarget(const RunOptions& options, const Module& module, const Module& run_module,
                            std::ostream& out) {
  XLAC_ASSIGN_OR_RETURN(const TpuChipSpec* chip, FindTpuChipSpec(options.tpu));
  const int64_t replicas = options.num_replicas > 0 ? options.num_replicas : module.config().replica_count;
  const int64_t partitions = options.num_partitions > 0 ? options.num_partitions : module.config().num_partitions;
  const int64_t devices = std::max<int64_t>(replicas, 1) * std::max<int64_t>(partitions, 1);
  XLAC_ASSIGN_OR_RETURN(TpuTopology topology, options.topology.empty() ? DefaultTpuTopology(*chip, devices)
                                                                       : ParseTpuTopology(*chip, options.topology));
  codegen::CompileOptions compile;
  compile.exact = options.exact;
  compile.tpu_numerics = options.tpu_numerics;
  compile.partitioned = &run_module != &module;  // the partition step's output
  XLAC_ASSIGN_OR_RETURN(codegen::PreparedModule prepared, codegen::PrepareModule(run_module, compile));
  XLAC_ASSIGN_OR_RETURN(TpuMemoryReport report, AnalyzeTpuMemory(*prepared.module, prepared.assignment, *chip));
  if (options.tpu_report) {
    XLAC_ASSIGN_OR_RETURN(TpuStepReport step, ModelOptimizedTpuStep(run_module, topology, replicas, partitions,
                                                                    options.tpu_numerics, compile.partitioned));
    out << fmt::format("TPU {} slice {} ({} devices), per core:\n", chip->name, topology.ToString(),
                       topology.num_devices())
        << report.Summary() << step.ToString();
    if (options.dcn_mesh > 0) {
      XLAC_ASSIGN_OR_RETURN(std::vector<DcnSplit> splits,
                            SplitModuleCollectives(run_module, replicas, partitions, options.dcn_mesh));
      out << "TPU " << FormatDcnSplits(splits, devices, options.dcn_mesh);
    }
  }
  return CheckTpuMemory(report);
}

}  // namespace xlac
