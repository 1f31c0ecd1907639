// Copy insertion (a conservative XLA CopyInsertion): adds `copy` instructions, and control edges that order
// writers after readers, so that the aliasing buffer assignment imposes (passes/buffer_assignment.h) never makes
// one value overwrite another that is still needed. Only sequential computations (the entry, while
// condition/body, conditional branches) change.
//
// What is copied, per array leaf:
//  - while init: a leaf whose data comes from a parameter or constant, appears at two init leaves (all but the
//    first), is read by anything that does not run before the while (anything the while does not depend on), or
//    reaches the computation root. The loop then owns its state.
//  - while body root: a leaf that is not the pass-through of the body parameter at the same index. The value is
//    written into the loop buffer at that index, so it must come after every reader of the parameter there: the
//    copy gets those readers as control predecessors. A leaf taken from the parameter at another index is first
//    copied to a temporary (so that swaps do not need each other's old value). No copy is made when the leaf's
//    defining instruction can itself be ordered after those readers (none of them depends on it, and if it reads
//    the parameter leaf it writes the result over it, passes/alias_util.h CanWriteOver: an elementwise op or loop
//    fusion of the same shape and layout reading it only at the index written): it then
//    gets the readers as control predecessors and writes the loop buffer directly.
//  - conditional branch root: a leaf from a parameter or constant, or a leaf already present at an earlier index.
//  - entry root: a leaf from an entry parameter or constant, or already present at an earlier index; except that a
//    leaf aliased to a parameter by input_output_alias is handled like a while body root leaf (pass-through of that
//    parameter leaf, direct write ordered after its readers, or a copy ordered after them).
//
// Precondition: the module verifies, calls are inlined and every sequential computation has one caller (run
// call-inliner and flatten-call-graph first). Returns whether anything was added.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunCopyInsertion(Module& module);

}  // namespace xlac
