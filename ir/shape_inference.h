// Shape inference for HLO instructions, following XLA's ShapeInference rules.
#pragma once

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace xlac {

// The result shape `inst` must have given its opcode, operand shapes, attributes and called computations; the
// instruction's own shape is not consulted except where XLA lets the text choose (parameter, constant, custom-call,
// infeed/recv, rng-bit-generator, reshape/bitcast/convert target types, ...). Errors are user errors: the message
// names the problem but not the location (callers add it). The returned shape has no layout.
absl::StatusOr<Shape> InferShape(const Instruction& inst);

}  // namespace xlac
