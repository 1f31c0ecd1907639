// The compilation pipeline shared by the JIT and AOT paths: clone the module, optimize it
// (passes/optimization_pipeline.h, at opt_level >= 1), prepare it for codegen (passes/codegen_prepare.h), assign
// buffers, emit LLVM IR and optimize that. LLVM headers stay out of this header.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/emitter.h"
#include "codegen/target.h"
#include "ir/module.h"
#include "passes/buffer_assignment.h"
#include "passes/compile_observer.h"

namespace llvm {
class LLVMContext;
class MemoryBuffer;
class Module;
class TargetMachine;
}  // namespace llvm

namespace xlac::codegen {

struct CompileOptions {
  int opt_level = 2;                // 0..3
  std::string target_cpu = "host";  // "host" or an LLVM CPU name
  std::string entry_name = "xlac_entry";
  BufferAssignmentOptions buffers;
  bool tiled_dot = true;          // CodegenOptions::tiled_dot
  bool tiled_convolution = true;  // CodegenOptions::tiled_convolution
  bool exact = false;             // CodegenOptions::exact (docs/numerics.md)
  bool parallel = true;           // CodegenOptions::parallel
  bool row_groups = true;         // CodegenOptions::row_groups
  bool tpu_numerics = false;      // CodegenOptions::tpu_numerics
  bool trace_kernels = false;     // CodegenOptions::trace_kernels (changes the code: part of any cache key)
  uint64_t rng_seed = 42;         // CodegenOptions::rng_seed (part of any cache key)
  // The module came out of the partition step (compiler/compiler.h's PartitionModule), which ran the optimization
  // steps that come before partitioning: PrepareModule runs the rest (OptimizationStage::kAfterPartitioning).
  bool partitioned = false;
  // Times the phases and writes the dumps (passes/compile_observer.h); not owned, may be null. Never changes code.
  CompileObserver* observer = nullptr;
  // PrepareModule verifies the module after every pass (PassManagerOptions::verify_each). Never changes code: the
  // JIT turns it off on the way to a cache lookup, since a hit's module verified after every pass when it was
  // compiled, and verifies a miss's module once before compiling it.
  bool verify_each_pass = true;
  // LLVM bitcode of C++ custom-call kernels (codegen/clang/kernel_compiler.h), linked into the program's module
  // before it is optimized; null when the program has none. `kernel_fingerprint` names what it was compiled from
  // (part of any cache key).
  std::shared_ptr<const std::string> kernel_bitcode;
  std::string kernel_fingerprint;
  // Threads that optimize and compile the LLVM module's parts (codegen/split_compile.h); 0: the CPUs of the
  // process's affinity mask. Never changes code: the parts depend on the module alone.
  int compile_threads = 0;
  // Every compute kernel becomes a function of its own (CodegenOptions::outline_kernels). Never changes a result.
  bool outline_kernels = true;
  // The shared GEMM functions come from the ones the build compiled (codegen/prebuilt_gemms.h) when the target's
  // vector ISA has them: only a host that links xlac_codegen can run such code, so the JIT uses them and AOT
  // objects never do. Never changes a result (the same IR, compiled once).
  bool prebuilt_gemms = true;
};

// A module ready for LLVM emission: the prepared clone and where its values live.
struct PreparedModule {
  std::unique_ptr<Module> module;
  BufferAssignment assignment;
};

// Clone + PrepareForCodegen + AssignBuffers. `module` must verify.
absl::StatusOr<PreparedModule> PrepareModule(const Module& module, const CompileOptions& options);

// The emitter's options LowerToLlvm uses for `options` on `target` (hosts that must know what the code assumes, such
// as the JIT's streamed results, ask the same function).
CodegenOptions CodegenOptionsFor(const CompileOptions& options, const TargetInfo& target);

// Links `bitcode` (CompileOptions::kernel_bitcode) into `module`: only what the module calls, kernels made internal
// and always inlined, every function given `target`'s attributes so the inliner may inline across. With
// `approximate_math` (the default numerics mode) the kernel code's libm calls become the program's inlined
// approximations (codegen/kernel_math.h).
absl::Status LinkKernels(llvm::Module& module, const std::string& bitcode, const TargetInfo& target,
                         bool approximate_math);

// Emits and optimizes (at options.opt_level) the LLVM module of `prepared` for `target_machine`. Identical functions
// are merged first; a large module is then optimized in parts on options.compile_threads threads and joined again
// (codegen/split_compile.h): the same module for any number of threads.
absl::StatusOr<std::unique_ptr<llvm::Module>> LowerToLlvm(const PreparedModule& prepared, const TargetInfo& target,
                                                          llvm::TargetMachine& target_machine,
                                                          llvm::LLVMContext& context, const CompileOptions& options);

// LowerToLlvm and code generation, for a JIT that links several object files: each part of the module is optimized
// and compiled to an object on its own (on options.compile_threads threads), with target machines from
// `codegen_machine`. `optimized_ir`, when not null, receives the optimized parts' IR.
using TargetMachineFactory = std::function<absl::StatusOr<std::unique_ptr<llvm::TargetMachine>>()>;
absl::StatusOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>> LowerToObjects(
    const PreparedModule& prepared, const TargetInfo& target, llvm::TargetMachine& target_machine,
    llvm::LLVMContext& context, const CompileOptions& options, const TargetMachineFactory& codegen_machine,
    std::string* optimized_ir);

}  // namespace xlac::codegen
