// LLVM's new pass manager pipeline at -O0..-O3.
#pragma once

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

namespace xlac::codegen {

// Makes identical functions one (LLVM's MergeFunctions): kernels outlined from the entry that differ only in where
// their buffers live, and the parallel loops and GEMMs they call. Our internal functions' addresses are never
// compared, so they become unnamed_addr first and a merged function disappears instead of becoming a thunk.
void MergeIdenticalFunctions(llvm::Module& module);

// Code generation's loop strength reduction costs about half of all code generation time on programs with many
// loop kernels (its search grows with the address expressions of a loop: unrolled tiles of copies and transposes)
// and gains nothing measurable outside the GEMMs, so it is turned off in LLVM's code generator for the whole process
// (its `-disable-lsr` option, set once) and OptimizeModule runs it on the GEMM functions instead. Called before any
// code generation of ours (OptimizeModule does).
void DisableCodegenLoopStrengthReduction();

// Runs the default per-module pipeline for `opt_level` (0..3) with the target's cost model (so the loop vectorizer
// knows the vector width). O0 still runs the always-inline pipeline only. MergeIdenticalFunctions first when `merge`
// (a module split into parts was merged as a whole before). Then loop strength reduction on the GEMM functions.
void OptimizeModule(llvm::Module& module, llvm::TargetMachine& target_machine, int opt_level, bool merge = true);

}  // namespace xlac::codegen
