// Async collectives to their synchronous forms, for codegen (which runs every collective to completion where it
// stands, so splitting it into start and done buys nothing).
//
//  - all-reduce-start becomes all-reduce (same shape); its all-reduce-done users become the all-reduce;
//  - all-gather-start / collective-permute-start become all-gather / collective-permute of the start's result
//    element (tuple element 1), which replaces their all-gather-done / collective-permute-done users;
//  - async-start (with any async-update chain) and its async-done become the wrapped op (`op-start` syntax) or a
//    `call` of the wrapped computation (which call-inliner then inlines).
//
// A start whose value is used by anything other than its done (and updates) is left alone and reported as
// UnimplementedError naming it. Precondition: the module verifies. Returns whether anything changed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunAsyncToSync(Module& module);

}  // namespace xlac
