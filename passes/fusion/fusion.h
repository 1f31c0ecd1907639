// The `fusion` pass: groups elemental producers with their consumers into `fusion` instructions that codegen emits
// as one kernel each (passes/fusion/fusible.h is the contract), the way XLA's InstructionFusion and multi-output
// fusion do. Output is ordinary HLO: `fusion(...)`, kind=kLoop|kInput|kOutput, calls=%fused_computation[.N].
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

// Fuses within the entry computation and the computations it runs sequentially (while bodies, conditional
// branches, calls). Fusions already in the module are left as they are, and a scheduled module (is_scheduled=true)
// is left alone. Returns whether anything was fused.
absl::StatusOr<bool> RunFusion(Module& module);

}  // namespace xlac
