// Call inlining (XLA's CallInliner).
//
// Replaces every `call` instruction, in every computation, by a copy of the called computation's instructions: the
// callee's parameters become the call's operands and the copy of its root replaces the call's uses. Callees are
// inlined before their callers, so nested calls disappear too. Copied instructions get module-unique names derived
// from the callee's names. Control edges inside the callee are copied; the call's control predecessors become
// predecessors of the copied instructions that have no copied operands or predecessors, and its control successors
// follow every copied instruction that has no copied users. Computations that were call targets and are no longer
// called by anything are removed (other unreachable computations are left to dce).
//
// Precondition: the module verifies. Returns whether any call was inlined.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunCallInliner(Module& module);

}  // namespace xlac
