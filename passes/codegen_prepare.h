// The pass pipeline that establishes buffer assignment's preconditions (passes/buffer_assignment.h) after
// fusion-inliner and async-to-sync (codegen lowers neither fusions nor async collectives): call-inliner,
// flatten-call-graph, dce, copy-insertion, verifying after each.
//
// Precondition: the module verifies. A failure is an error of the named pass (or a verification failure after it,
// which is a compiler bug; the verifier's first message is included).
#pragma once

#include "absl/status/status.h"
#include "ir/module.h"

namespace xlac {

absl::Status PrepareForCodegen(Module& module);

}  // namespace xlac
