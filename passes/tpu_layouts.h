// tpu-layouts: every array as a TPU stores it, in XLA's syntax: f32[100,100]{1,0:T(8,128)}, bf16 T(16,128)(2,1),
// s8/pred T(32,128)(4,1), the rank-0/1 tiles (ir/tpu_layout.h has the rules, docs/tpu_model.md the evidence).
//
// For inspection and TPU sizing only: `xla-opt --passes=layout-assignment,tpu-layouts` prints the program a TPU
// would hold, with each buffer's padding visible in its type. The dimension order stays the one layout-assignment
// chose; compiled CPU code never runs this pass (its kernels address plain layouts), and the HBM check
// (passes/tpu_memory.h) sizes buffers with the same tiles. Arrays that already carry tiles keep them; the entry
// computation layout is tiled the same way.
//
// Precondition: the module verifies. Returns whether anything changed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunTpuLayouts(Module& module);

}  // namespace xlac
