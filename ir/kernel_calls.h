// Custom calls that a C++ kernel implements (passes/custom_kernels.h binds them): the mark every later stage reads.
//
// The mark lives in the call's frontend attributes, so it survives cloning, printing, parsing and the SPMD
// partitioner, and a dumped module shows which calls run a kernel:
//   xlac.kernel="elementwise"    the call is an elementwise op computed by a scalar function;
//   xlac.kernel="buffer"         the call runs a buffer kernel on row-major buffers;
//   xlac.kernel_symbol="..."     the LLVM symbol of the function in the kernel module linked into the program;
//   xlac.kernel_attrs="..."      a buffer kernel's attribute struct, its bytes in hex (filled from backend_config);
//   xlac.kernel_site="..."       "FILE:LINE:COL" of the call in the source the module came from, for run-time errors;
//   xlac.kernel_sharding="..."   a buffer kernel's sharding rule: "replicated", "elementwise" or "batch_dims=0,2".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/instruction.h"

namespace xlac {

inline constexpr std::string_view kKernelKindAttr = "xlac.kernel";
inline constexpr std::string_view kKernelSymbolAttr = "xlac.kernel_symbol";
inline constexpr std::string_view kElementwiseKernel = "elementwise";
inline constexpr std::string_view kBufferKernel = "buffer";
inline constexpr std::string_view kKernelAttrsAttr = "xlac.kernel_attrs";
inline constexpr std::string_view kKernelSiteAttr = "xlac.kernel_site";
inline constexpr std::string_view kKernelShardingAttr = "xlac.kernel_sharding";

// Symbol prefixes of the kernels in a compiled kernel library (codegen/clang/kernel_compiler.h): elementwise kernels
// are always inlined into the program, buffer kernels' entry points are left to the inliner.
inline constexpr std::string_view kElementwiseKernelPrefix = "xlac.kernel.";
inline constexpr std::string_view kBufferKernelPrefix = "xlac.buffer_kernel.";

// A custom call bound to an elementwise kernel (array result; operands of its dimensions or rank 0).
bool IsElementwiseKernelCall(const Instruction& inst);

// ... whose operands all have the result's dimensions (none broadcast from rank 0): what the SPMD passes shard as
// elementwise.
bool IsElementwiseKernelCallOfOneShape(const Instruction& inst);

// The kernel function's symbol of a bound call; empty for anything else.
std::string_view KernelSymbol(const Instruction& inst);

// A custom call bound to a buffer kernel.
bool IsBufferKernelCall(const Instruction& inst);

// A bound buffer-kernel call's attribute struct bytes (decoded from kKernelAttrsAttr), and its site (empty when not
// known).
std::string KernelAttrBytes(const Instruction& inst);
std::string_view KernelSite(const Instruction& inst);

// "custom call 'NAME' (target 'T') at FILE:LINE:COL" (without " at ..." when the site is unknown): how run-time
// errors of a buffer kernel name the call, in compiled code and in the interpreter alike.
std::string DescribeKernelCall(const Instruction& inst);

// A buffer-kernel call's sharding rule. `batch_dims` receives the batch dimensions of a "batch_dims" rule.
enum class KernelCallSharding : uint8_t { kNone, kReplicated, kElementwise, kBatchDims };
KernelCallSharding KernelCallShardingOf(const Instruction& inst, std::vector<int64_t>* batch_dims = nullptr);

}  // namespace xlac
