// Layout copies: where a value is passed on with a different declared layout than its own, add a `copy` to that
// layout, so that code generation (which forwards tuple and get-tuple-element values by sharing buffers) never reads
// data in the wrong layout. The interpreter works on logical values and never needs this.
//
//  - tuple: an operand (array or tuple) whose layouts differ from the tuple's element shape at its index is copied to
//  it
//    (`ROOT r = tuple(c, d)` with the tuple shape inferred in default layouts while c has another);
//  - get-tuple-element: one whose layout differs from the tuple element it reads takes that element's layout, and a
//    copy to its declared layout replaces it for its users;
//  - while: the loop state lives in one buffer in the body parameter's layouts; the initial value and the body's
//    root are coerced to them, the condition's parameter and the while itself take them and hand their users a
//    coerced value of the declared shape;
//  - conditional and call: operands are coerced to the callee parameters' layouts and callee roots to the
//    instruction's layouts;
//  - a custom call bound to a buffer kernel (ir/kernel_calls.h): operands are coerced to the default (row-major)
//    layout, the call produces it, and its users get a copy in the declared layout (the kernel indexes row-major).
// Coercion copies arrays and rebuilds tuples (get-tuple-element, copy, tuple) only where a leaf's layout differs.
//
// Layouts compare by minor_to_major, an absent layout being the default one. Precondition: the module verifies.
// Returns whether anything was added.
#pragma once

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunLayoutCopies(Module& module);

// The buffer-kernel rule above for one instruction of `comp` (layout assignment applies it before choosing layouts,
// so the copies it adds are fused); false for anything but a buffer-kernel call.
bool MakeKernelCallRowMajor(Module& module, Computation& comp, Instruction* call);

}  // namespace xlac
