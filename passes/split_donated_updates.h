// split-donated-updates: donated weights updated where they are.
//
// A training step with donated parameters (input_output_alias; JAX's donate_argnums) updates a weight as
// w' = epilogue(w, dot(...)), which fusion makes one output fusion. Codegen writes an output fusion's dot into the
// fusion's buffer before its epilogue reads w (codegen/ir_emitter_fusion.cc), so that fusion cannot write w's
// buffer, and copy insertion copies its result there afterwards: one more read and write of every weight per step
// than the same step without donation. This pass splits such a fusion into its dot (or convolution), now an
// instruction of its own writing a buffer of its own, and a loop fusion of the epilogue, which reads w only at the
// index it writes and so may write over it (passes/alias_util.h, CanWriteOver): the plain step's traffic, no copy.
//
// It applies to an entry root leaf that input_output_alias gives to an array parameter p when the leaf's data comes
// from a single-output output fusion whose dot or convolution reads fused parameters only, whose operands include p
// (directly) and whose fused computation reads p only in the epilogue, through elementwise ops of its dimensions.
//
// Precondition: the module verifies; run it right before copy-insertion (after fusion and layout assignment).
// Results are unchanged, bit for bit (the same operations on the same values). Returns whether anything was split.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunSplitDonatedUpdates(Module& module);

}  // namespace xlac
