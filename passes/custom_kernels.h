// Custom calls bound to C++ kernels (include/xlac/custom_call.h, docs/custom_calls.md).
//
// codegen/clang/kernel_compiler.h reads the kernels of a C++ file with Clang and describes each one as a
// KernelSignature. BindCustomKernels checks every custom call whose target names a kernel against the kernel's
// signature and marks the call (ir/kernel_calls.h), after which fusion, the SPMD partitioner and codegen treat an
// elementwise kernel's call as an elementwise op, and a buffer kernel's call as a call of the kernel on row-major
// buffers with its attribute struct filled from the call's backend_config (passes/kernel_attrs.h).
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
  kBuffer,       // whole operands and results as row-major buffers, an attribute struct, a status
};

// How the SPMD partitioner may split a kernel's call (include/xlac/custom_call.h, "Sharding rule").
enum class KernelShardingRule : uint8_t {
  kElementwise,  // any sharding of the common shape runs per shard (elementwise kernels always)
  kReplicated,   // whole operands on every core (buffer kernels by default)
  kBatchDims,    // operands and results split along KernelSignature::batch_dims run per shard
};

// A buffer kernel's operand or result parameter: xlac::Buffer<T, Rank>.
struct KernelBufferParam {
  std::string name;
  PrimitiveType type = PrimitiveType::kInvalid;
  int64_t rank = -1;  // -1: any
  KernelSourceLoc loc;
};

// A field of a buffer kernel's attribute struct, filled from backend_config.
struct KernelAttrField {
  std::string name;
  PrimitiveType type = PrimitiveType::kInvalid;
  int64_t offset = 0;  // bytes from the start of the struct
  KernelSourceLoc loc;
};

struct KernelSignature {
  std::string target;  // the custom_call_target it implements
  KernelKind kind = KernelKind::kElementwise;
  std::string symbol;    // the LLVM symbol of the function in the compiled kernel module
  std::string function;  // the C++ name, for messages
  // kElementwise: the scalar parameter and result types.
  std::vector<PrimitiveType> operand_types;
  PrimitiveType result_type = PrimitiveType::kInvalid;
  KernelSourceLoc loc;  // the function (buffer kernels: the user's function, not the registered entry point)
  // kBuffer: operand and result views in order, and the attribute struct (attrs_size 0: none).
  std::vector<KernelBufferParam> operands;
  std::vector<KernelBufferParam> results;
  std::string attrs_struct;
  int64_t attrs_size = 0;
  int64_t attrs_align = 1;
  std::vector<KernelAttrField> attrs;
  KernelSourceLoc attrs_loc;
  KernelShardingRule sharding = KernelShardingRule::kElementwise;
  std::vector<int64_t> batch_dims;  // kBatchDims, ascending
};

// "file:line:col: note: <message>\n<line>\n<caret>\n": the kernel's side of a diagnostic.
std::string RenderKernelNote(const KernelSourceLoc& loc, std::string_view message);

// Checks and marks every custom call a kernel of `kernels` implements. A call that does not match its kernel
// (operand and result counts, element types, ranks or dimensions, the sharding rule's shapes, a buffer kernel's
// attributes) is an error at the call, followed by a note at the kernel, the parameter or the attribute field:
// reported to `diags`, and the status is InvalidArgument with the same text (`kernel_notes` receives the notes'
// text). `file`, when given, is the text the module was parsed from: buffer-kernel calls remember their place in it
// for run-time errors. Returns whether the module changed.
absl::StatusOr<bool> BindCustomKernels(Module& module, const std::vector<KernelSignature>& kernels,
                                       DiagnosticEngine& diags, std::string* kernel_notes = nullptr,
                                       const SourceFile* file = nullptr);

}  // namespace xlac
