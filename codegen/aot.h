// Ahead-of-time compilation: the same pipeline as the JIT, written out as LLVM IR, assembly or an object file.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "codegen/pipeline.h"
#include "ir/module.h"

namespace xlac::codegen {

enum class AotOutput { kLlvmIr, kAssembly, kObject };

struct AotResult {
  std::string contents;      // IR text, assembly text or object bytes
  std::string buffer_table;  // BufferAssignment::ToString of the prepared module (what the caller must supply)
};

// `module` must verify; it is not modified.
absl::StatusOr<AotResult> CompileAot(const Module& module, AotOutput output, const CompileOptions& options);

}  // namespace xlac::codegen
