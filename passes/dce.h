// Dead code elimination.
//
// Removes instructions that have no users, are not their computation's root, are not parameters, have no side
// effect (Instruction::HasSideEffect) and have no control dependencies (those order the instruction against others,
// as in XLA's HloDCE), iterating until nothing more is dead. Then removes every computation not reachable from the
// entry computation through called computations; the entry itself is never removed.
//
// Precondition: the module verifies (in particular it has an entry computation and an acyclic call graph).
// Returns whether anything was removed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunDce(Module& module);

}  // namespace xlac
