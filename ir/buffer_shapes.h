// Buffer shapes b(...) parse, verify and print, but neither backend executes them.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "ir/module.h"

namespace xlac {

// OK if no instruction of `module` has a buffer shape b(...) (also inside a tuple); otherwise an InvalidArgument error
// naming the first such instruction, its line and column when known, and `backend` ("the JIT", "the interpreter").
// XLA uses buffer shapes for non-copyable values between Pin/Unpin custom-calls; no CPU runtime gives them meaning.
absl::Status RejectBufferShapes(const Module& module, std::string_view backend);

}  // namespace xlac
