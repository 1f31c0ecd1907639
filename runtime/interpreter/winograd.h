// The Winograd transforms of ir/winograd.h in the reference interpreter (winograd.cc); not part of its API.
#pragma once

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

// custom-call "xlac.winograd_input" or "xlac.winograd_output": plain loops in the order ir/winograd.h specifies, so
// the results are bit for bit those of the runtime's kernels (runtime/cpu/winograd.cc).
absl::StatusOr<Literal> EvalWinogradTransform(const Instruction& inst, Operands operands);

}  // namespace xlac::interp
