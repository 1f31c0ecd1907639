// libm calls in C++ kernels, in the default numerics mode: replaced by the same inlined approximations the program's
// own transcendental ops use (codegen/fast_math.h, bounds in docs/numerics.md), so a kernel that calls std::exp or
// std::tanh vectorizes in its fused loop like the HLO ops around it. Exact mode keeps the calls, as the interpreter
// (which runs the kernels through codegen/clang/kernel_runner.h, always exactly) makes them.
#pragma once

namespace llvm {
class Function;
}  // namespace llvm

namespace xlac::codegen {

// Rewrites, in `fn`, every call of a libm function or LLVM math intrinsic that fast_math approximates (exp, expm1,
// log, log1p, tanh, erf, sin, cos, cbrt; f32 pow) on a scalar f32 or f64. Returns the number of calls replaced.
int ApproximateKernelMath(llvm::Function& fn);

}  // namespace xlac::codegen
