// The compiled C++ kernels as host functions, for the reference interpreter (InterpreterOptions::
// elementwise_kernels): the kernel library JIT-compiled on its own, with a loop around each elementwise kernel and
// each buffer kernel's entry point exported. The interpreter thus runs the kernel's own code, and its results agree
// with the compiled program's.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "codegen/clang/kernel_compiler.h"
#include "codegen/target.h"
#include "runtime/interpreter/interpreter.h"

namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace xlac::codegen {

class KernelRunner {
 public:
  // JIT-compiles `library` for `target` (which must be the host's or a CPU it can run).
  static absl::StatusOr<std::unique_ptr<KernelRunner>> Create(const KernelLibrary& library, const TargetInfo& target);
  ~KernelRunner();
  KernelRunner(const KernelRunner&) = delete;
  KernelRunner& operator=(const KernelRunner&) = delete;

  // Every kernel, elementwise and buffer, by kernel symbol (KernelSignature::symbol); valid while the runner lives.
  const interp::CompiledKernels& kernels() const { return kernels_; }
  // The same table, under the name its users knew before buffer kernels (InterpreterOptions::elementwise_kernels).
  const interp::ElementwiseKernels& elementwise() const { return kernels_; }

 private:
  KernelRunner();
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  interp::CompiledKernels kernels_;
};

}  // namespace xlac::codegen
