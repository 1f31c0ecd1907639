// Custom calls bound to C++ kernels (include/xlac/custom_call.h, docs/custom_calls.md).
//
// codegen/clang/kernel_compiler.h reads the kernels of a C++ file with Clang and describes each one as a
// KernelSignature. BindCustomKernels checks every custom call whose target names a kernel against the kernel's
// signature and marks the call (ir/kernel_calls.h), after which fusion, the SPMD partitioner and codegen treat an
// elementwise kernel's call as an elementwise op.
//
// Preconditions: the module verifies. Custom calls whose target no kernel names are left alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "ir/primitive_type.h"

namespace xlac {

// Where a kernel is declared in its C++ file, for diagnostics that point at both sides.
struct KernelSourceLoc {
  std::string file;
  int32_t line = 0;
  int32_t col = 0;
  std::string line_text;  // the source line, for the caret
};

enum class KernelKind : uint8_t {
  kElementwise,  // scalar function: one result element from the operand elements at its index
};

struct KernelSignature {
  std::string target;  // the custom_call_target it implements
  KernelKind kind = KernelKind::kElementwise;
  std::string symbol;  // the LLVM symbol of the function in the compiled kernel module
  std::string function;  // the C++ name, for messages
  std::vector<PrimitiveType> operand_types;
  PrimitiveType result_type = PrimitiveType::kInvalid;
  KernelSourceLoc loc;
};

// "file:line:col: note: <message>\n<line>\n<caret>\n": the kernel's side of a diagnostic.
std::string RenderKernelNote(const KernelSourceLoc& loc, std::string_view message);

// Checks and marks every custom call a kernel of `kernels` implements. A call that does not match its kernel
// (operand count, element types, dimensions) is an error at the call, followed by a note at the kernel: reported to
// `diags`, and the status is InvalidArgument with the same text (`kernel_notes` receives the notes' text). Returns
// whether the module changed.
absl::StatusOr<bool> BindCustomKernels(Module& module, const std::vector<KernelSignature>& kernels,
                                       DiagnosticEngine& diags, std::string* kernel_notes = nullptr);

}  // namespace xlac
