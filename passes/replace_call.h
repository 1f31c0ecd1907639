// Replacing a custom call by what it means, for the passes that rewrite calls at load (annotation-custom-calls,
// library-custom-calls).
#pragma once

#include "absl/status/status.h"
#include "ir/computation.h"

namespace xlac {

// Puts `replacement` (already added to `comp`) in place of `call`: its users, control edges and location move over,
// `call` is deleted and `replacement` takes its name, so reports and dumps still say which call it was.
absl::Status ReplaceCall(Computation& comp, Instruction* call, Instruction* replacement);

}  // namespace xlac
