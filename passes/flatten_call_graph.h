// Call-graph flattening (XLA's FlattenCallGraph).
//
// Afterwards every computation called sequentially (while condition/body, conditional branch, call) has exactly one
// call site in the module: a sequential callee that is already claimed by another call site, or that is also used
// by a non-sequential instruction (as a reducer, fusion body, ...), is replaced at this call site by a clone. Clones
// are named "<name>.clone" (uniquified), their instructions get module-unique names, and their own sequential
// callees are flattened in turn. Embedded computations (reducers, fusion bodies, sort comparators...) stay shared.
// Computations are visited from the entry, each one's call sites in program order; the first call site visited
// keeps the original.
//
// Precondition: the module verifies. Returns whether anything was cloned.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunFlattenCallGraph(Module& module);

}  // namespace xlac
