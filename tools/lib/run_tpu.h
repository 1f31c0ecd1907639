// xla-run --tpu: the slice and per-core HBM checks (and --tpu-report) before a run.
#pragma once

#include <ostream>

#include "absl/status/status.h"
#include "ir/module.h"
#include "tools/lib/run_options.h"

namespace xlac {

// --tpu: the slice must have the run's device count, and every core's program (`run_module`: the partitioned one
// when the module is sharded) must fit the chip's HBM once padded to TPU tiles. Checked before anything runs.
// With --tpu-report the HBM and step-time reports go to `out` first.
absl::Status CheckTpuTarget(const RunOptions& options, const Module& module, const Module& run_module,
                            std::ostream& out);

}  // namespace xlac
