// The SPMD step the tools share: when a module has shardings and more than one partition, run the default SPMD
// pipeline on it (sharding-propagation, then spmd-partitioner), verify the result, and turn partitioner errors into
// located diagnostics.
#pragma once

#include <cstdint>
#include <ostream>

#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/spmd/spmd_partitioner.h"

namespace xlac {

// The pass names of the SPMD pipeline, in order.
const std::vector<std::string>& SpmdPipeline();

// Partitions `module` in place over `num_partitions` (0: the module's num_partitions) if it has shardings, with
// collectives for `num_replicas` replicas (0: the module's replica_count); sets
// `partitioned` accordingly and fills `report`. Returns false after writing diagnostics (rendered against `file`)
// to `err`.
bool PartitionModule(Module& module, int64_t num_partitions, int64_t num_replicas, const SourceFile& file,
                     SpmdReport& report, bool& partitioned, std::ostream& err);

}  // namespace xlac
