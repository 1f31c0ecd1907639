// Optimizing and compiling one LLVM module in independent parts on several threads.
//
// The emitted module is a list of functions that call each other little (codegen/ir_emitter_outline.cc: the entry
// calls one function per kernel). SplitModule cuts it into parts, each in its own LLVMContext so threads can work on
// them at once:
// - functions that reference each other (a kernel, its parallel loops, their convolution GEMMs) stay in one part, so
//   LLVM's interprocedural passes see them as before; only the module's external functions (the entry) and shared
//   functions (the shape-generic GEMMs many kernels call, marked with internal::kSharedFunctionAttribute) are cut
//   from their callers;
// - functions LLVM will inline (internal, not noinline, only ever called directly: the GEMM micro-kernels) and small
//   constants are copied into every part that uses them;
// - whatever one part uses of another's becomes an external hidden symbol (`promoted`), internal again once the
//   parts are joined.
// Which part a function lands in depends only on the module (never on the number of threads), so the joined module
// and the object file compiled from it are the same bytes whatever the machine's load or core count.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "llvm/IR/GlobalValue.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace xlac::codegen {

struct ModulePart {
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  ModulePart();
  ModulePart(ModulePart&&) noexcept;
  ModulePart& operator=(ModulePart&&) noexcept;
  ~ModulePart();
};

// A symbol SplitModule made external so that parts can reference it, and the linkage it had.
struct PromotedSymbol {
  std::string name;
  llvm::GlobalValue::LinkageTypes linkage;
};

// How many parts `module` is cut into: by its size alone, one part per kMinPartInstructions up to kMaxParts.
int ChoosePartCount(const llvm::Module& module);

// Cuts `module` into at most `parts` parts (fewer when it has fewer independent clusters of functions), each in a
// context of its own. `module` keeps its functions but their cross-part symbols are external afterwards (listed in
// `promoted`); it is not needed by the parts.
std::vector<ModulePart> SplitModule(llvm::Module& module, int parts, std::vector<PromotedSymbol>& promoted);

// Links `parts` in order into `into` (an empty module of the caller's context) and gives the promoted symbols back
// their linkage.
absl::Status JoinParts(std::vector<ModulePart> parts, llvm::Module& into, const std::vector<PromotedSymbol>& promoted);

// Runs work(i) for every i in [0, n) on min(n, threads) threads (the caller's included); threads <= 0: the CPUs
// of the process's affinity mask.
void ParallelForEach(int n, int threads, const std::function<void(int)>& work);

}  // namespace xlac::codegen
