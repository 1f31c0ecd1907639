// LLVM's new pass manager pipeline at -O0..-O3.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace xlac::codegen {

// Runs the default per-module pipeline for `opt_level` (0..3) with the target's cost model (so the loop vectorizer
// knows the vector width). O0 still runs the always-inline pipeline only.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& target_machine, int opt_level);

}  // namespace xlac::codegen
