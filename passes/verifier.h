// The HLO verifier: structural invariants plus every instruction's shape against shape inference.
//
// Precondition: none (works on any module the parser or a pass produced). Reports user-facing diagnostics naming
// the instruction, at the instruction's source location when known.
#pragma once

#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

struct VerifierOptions {
  // Compare layouts of operands/results where XLA requires them to match (off: layouts are free until layout
  // assignment).
  bool check_layouts = false;
};

// Returns true if the module is valid; otherwise reports each problem to `diags` and returns false.
bool VerifyModule(const Module& module, DiagnosticEngine& diags, const VerifierOptions& options = {});

}  // namespace xlac
