// Custom calls that a C++ kernel implements (passes/custom_kernels.h binds them): the mark every later stage reads.
//
// The mark lives in the call's frontend attributes, so it survives cloning, printing and parsing, and a dumped
// module shows which calls run a kernel:
//   xlac.kernel="elementwise"    the call is an elementwise op computed by a scalar function;
//   xlac.kernel_symbol="..."     the LLVM symbol of that function in the kernel module linked into the program.
#pragma once

#include <string_view>

#include "ir/instruction.h"

namespace xlac {

inline constexpr std::string_view kKernelKindAttr = "xlac.kernel";
inline constexpr std::string_view kKernelSymbolAttr = "xlac.kernel_symbol";
inline constexpr std::string_view kElementwiseKernel = "elementwise";

// A custom call bound to an elementwise kernel (array result; operands of its dimensions or rank 0).
bool IsElementwiseKernelCall(const Instruction& inst);

// ... whose operands all have the result's dimensions (none broadcast from rank 0): what the SPMD passes shard as
// elementwise.
bool IsElementwiseKernelCallOfOneShape(const Instruction& inst);

// The kernel function's symbol of a bound call; empty for anything else.
std::string_view KernelSymbol(const Instruction& inst);

}  // namespace xlac
