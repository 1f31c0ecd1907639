// constant-folding: replaces each instruction whose operands are all known values (constants, iotas, broadcasts of
// constants) by a constant holding its result, computed by the reference interpreter, so a folded module gives the
// interpreter's bits exactly (XLA's HloConstantFolding).
//
// Not folded: side-effecting ops, rng, custom-calls, collectives, partition-id / replica-id, infeed and other I/O,
// control flow (while, conditional, call, fusion, async), tuples, dynamic shapes, elided `{...}` constants, and the
// cheap-to-rematerialize sources themselves (a broadcast of a scalar stays a broadcast, an iota stays an iota).
// Results are materialized only up to 64 KiB, or up to the byte size of the constant operands they replace (so
// folding never grows the module much). Because every folded instruction's operands are constants, nothing folded
// depends on a loop's induction state, inside while bodies or anywhere else.
//
// Preconditions: the module verifies. A scheduled module (is_scheduled=true) is left unchanged: its
// instruction order is its schedule, which new instructions would break. The folded constant keeps the instruction's
// name, shape (layout included), sharding and metadata; instructions with control edges are left alone.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

// Returns true if the module changed.
absl::StatusOr<bool> RunConstantFolding(Module& module);

}  // namespace xlac
