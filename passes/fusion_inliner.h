// Fusion inlining: undoes the fusions codegen cannot emit as one kernel, so it sees ordinary instructions there.
//
// Fusions for which IsEmittableFusion holds (passes/fusion/fusible.h) stay when they run as sequential code (in the
// entry, a while or conditional computation or a called computation). Replaces every other `fusion` instruction
// (kCustom, XLA's dumps...) by a copy of its fused computation's instructions: the fused parameters become the fusion's
// operands and the copy of the fused root replaces the fusion's uses. Fusions nested in fused computations are inlined
// first. Copied instructions get module-unique names derived from the fused computation's names. The fusion's control
// predecessors precede the copies that have no copied operands, and its control successors follow the copies that have
// no copied users. Fused computations no longer called by anything are removed.
//
// Precondition: the module verifies. Returns whether any fusion was inlined.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunFusionInliner(Module& module);

}  // namespace xlac
