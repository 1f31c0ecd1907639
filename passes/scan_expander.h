// Rewrites every `scan` into a `while` loop over ops codegen lowers (codegen has no lowering for scan itself).
//
// The loop state is (s64 step, inputs..., outputs..., carries...), with the outputs starting as broadcast zeros.
// Each iteration reads element t (t = step, or len-1-step when is_reverse) of every input along the scan dimension
// (dynamic-slice of size 1 and a reshape dropping the dimension), runs the scan body through a `call` on
// (slices..., carries...), writes each body output at t (reshape adding the dimension, dynamic-update-slice) and
// takes the body's carries as the new ones. The loop runs while step < len; len is the inputs' size along the scan
// dimension, or the first output's when there are no inputs. The scan's uses then read the while's outputs and
// carries (through a tuple when the scan's result is one). This is the interpreter's evaluation order, so results
// are bit-identical. A zero-length scan becomes its results directly: zero outputs and the initial carries.
//
// State elements keep the layouts of the scan's operands and results; `copy` converts a carry whose layout differs.
// The calls are left for call-inliner (codegen preparation runs this pass before it).
//
// The scan's control predecessors precede the while and its successors follow it (or, without a loop, follow the
// predecessors directly).
//
// Precondition: the module verifies. A scan with dynamic dimensions is reported as UnimplementedError. Returns
// whether anything changed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunScanExpander(Module& module);

}  // namespace xlac
