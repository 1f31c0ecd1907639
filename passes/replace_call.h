// Replacing a custom call by what it means, for the passes that rewrite calls at load (annotation-custom-calls,
// library-custom-calls).
#pragma once

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

// Adds an instruction named after its opcode to `comp`, at `call`'s location and with its metadata: the pieces a
// rewrite builds in place of the call.
Instruction* AddAtCall(Module& module, Computation& comp, const Instruction& call, Opcode op, Shape shape,
                       std::vector<Instruction*> operands);

// Puts `replacement` (already added to `comp`) in place of `call`: its users, control edges and location move over,
// `call` is deleted and `replacement` takes its name, so reports and dumps still say which call it was.
absl::Status ReplaceCall(Computation& comp, Instruction* call, Instruction* replacement);

// What a rewrite makes of one custom call: its replacement (added to `comp`), nullptr to leave the call alone, or a
// user error about the call.
using CallRewrite = std::function<absl::StatusOr<Instruction*>(Module& module, Computation& comp, Instruction* call)>;

// Applies `rewrite` to every custom call of `module` and puts the replacements in place (ReplaceCall; the call's
// sharding stays a constraint on its replacement). Returns whether anything changed; the first error is returned
// with "line:col: " before it when the call's location is known (the pass manager's form).
absl::StatusOr<bool> RewriteCustomCalls(Module& module, const CallRewrite& rewrite);
// The same for drivers: the error is reported at the call in `diags`. Returns false on error.
bool RewriteCustomCalls(Module& module, const CallRewrite& rewrite, DiagnosticEngine& diags);

}  // namespace xlac
