// algebraic-simplifier: local rewrites that remove work without changing any result bit (XLA's AlgebraicSimplifier,
// restricted to the exact rules): identities (x+(-0.0), x*1, neg(neg(x)), select with a constant predicate, ...),
// collapsed chains of reshapes, transposes, broadcasts, slices, pads and converts, transposes folded into dot
// dimension numbers, reduce-of-reduce for integer reducers, and division by a power of two as a multiplication.
//
// Every rule is exact for every input, including NaN, inf, -0 and integer overflow (a float rule that would be
// wrong for one of them, such as x*0 -> 0 or x+0 -> x with +0, does not exist). Signaling NaNs are the one
// exception, as in LLVM's own folds: x*1 -> x no longer quiets them.
//
// Preconditions: the module verifies. A scheduled module (is_scheduled=true) is left unchanged: its
// instruction order is its schedule, which new instructions would break. Instructions with control edges or side
// effects are left alone, and no rewrite drops a `sharding=` annotation: a replacement instruction carries the sharding
// and metadata of the one it replaces, and an existing value only replaces an instruction whose sharding it already
// has. Each computation is rewritten to a fixed point; instructions a rewrite leaves dead are removed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

// Returns true if the module changed.
absl::StatusOr<bool> RunAlgebraicSimplifier(Module& module);

}  // namespace xlac
