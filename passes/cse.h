// Common subexpression elimination.
//
// Within each computation, visits instructions in post order and replaces every instruction that is identical to an
// earlier one (Instruction::IdenticalIgnoringName: opcode, shape, operands, attributes, called computations,
// literal) by that earlier one. Constants with equal literals and shapes merge like any other instruction.
// Parameters, side-effecting instructions (Instruction::HasSideEffect) and instructions with control dependencies
// are never merged. The survivor is always the first in post order, so the result does not depend on pointer values.
//
// Precondition: the module verifies. Returns whether anything was merged.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunCse(Module& module);

}  // namespace xlac
