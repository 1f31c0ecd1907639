// The device counts a program implies when its header does not state them.
//
// Exporters often leave them out: PyTorch/XLA passes the device count to XLA at compile time, so its StableHLO has
// `mhlo.sharding` / Shardy shardings over 8x4 devices but no `mhlo.num_partitions`; XLA's dumps after SPMD
// partitioning (and PyTorch/XLA's TPU dumps) hold explicit collectives whose replica groups name 8, 64 or 128
// devices and no `num_partitions` / `replica_count`. The evidence, in the order it is trusted:
//   - shardings (tiled: the size of the tile assignment; maximal: the device's id + 1) give partitions;
//   - collectives' replica_groups / source_target_pairs give replicas, partitions or both, by XLA's group mode
//     (ir/collective_groups.h): no channel_id means replica ids; a channel_id means partition ids
//     (all-to-all, collective-permute), replica ids across partitions (use_global_device_ids=false), or flattened
//     device ids (true), which are read as partitions when the replica count is not known otherwise.
// A count the module states is kept; the verifier and the partitioner report shardings and replica groups that need
// more devices than it says, naming both counts.
#pragma once

#include <cstdint>
#include <string>

#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

struct DeviceCountOptions {
  // Counts given on the command line or through an API (0: none). They win over the module and the evidence.
  int64_t num_partitions = 0;
  int64_t num_replicas = 0;
};

// Sets `module.config()`'s num_partitions and replica_count: from `options`, else as the module states them, else
// from the evidence above (recording where they came from in ModuleConfig::device_count_source and reporting a
// note at the instruction the count came from). Returns false after reporting an error to `diags`. Needs only a
// parsed module, not a verified one: the verifier checks collectives against these counts.
bool ResolveDeviceCounts(Module& module, const DeviceCountOptions& options, DiagnosticEngine& diags);

}  // namespace xlac
