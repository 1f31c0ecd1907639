#include "codegen/pipeline.h"

#include "absl/strings/str_cat.h"
#include "codegen/kernel_math.h"
#include "codegen/optimize.h"
#include "ir/buffer_shapes.h"
#include "ir/diagnostics.h"
#include "ir/kernel_calls.h"
#include "ir/status_macros.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Target/TargetMachine.h"
#include "passes/codegen_prepare.h"
#include "passes/optimization_pipeline.h"

namespace xlac::codegen {
namespace {

std::string PrintLlvm(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

}  // namespace

absl::Status LinkKernels(llvm::Module& module, const std::string& bitcode, const TargetInfo& target,
                         bool approximate_math) {
  llvm::Expected<std::unique_ptr<llvm::Module>> kernels = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(bitcode, "xlac.kernels"), module.getContext());
  if (!kernels) return absl::InternalError("cannot read the kernel library: " + llvm::toString(kernels.takeError()));
  // Marked before linking, so the kernel library's own functions can be told apart from the program's afterwards.
  for (llvm::Function& fn : (*kernels)->functions()) {
    if (!fn.isDeclaration()) fn.addFnAttr("xlac-kernel-code");
  }
  (*kernels)->setDataLayout(module.getDataLayout());
  (*kernels)->setTargetTriple(module.getTargetTriple());
  if (llvm::Linker::linkModules(module, std::move(*kernels), llvm::Linker::LinkOnlyNeeded)) {
    return absl::InternalError("cannot link the kernel library into the program");
  }
  for (llvm::Function& fn : module.functions()) {
    if (fn.isDeclaration()) continue;
    SetFunctionTargetAttributes(fn, target);
    if (approximate_math && fn.hasFnAttribute("xlac-kernel-code")) ApproximateKernelMath(fn);
    // Buffer kernels' entry points are internal too, and left to the inliner (a kernel may be large).
    if (fn.getName().starts_with(kBufferKernelPrefix)) fn.setLinkage(llvm::GlobalValue::InternalLinkage);
    if (fn.getName().starts_with(kElementwiseKernelPrefix)) {
      fn.setLinkage(llvm::GlobalValue::InternalLinkage);
      fn.removeFnAttr(llvm::Attribute::NoInline);
      fn.removeFnAttr(llvm::Attribute::OptimizeNone);
      fn.addFnAttr(llvm::Attribute::AlwaysInline);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<PreparedModule> PrepareModule(const Module& module, const CompileOptions& options) {
  XLAC_RETURN_IF_ERROR(RejectBufferShapes(module, "the compiler"));
  PreparedModule prepared;
  CompileObserver* observer = options.observer;
  prepared.module = module.Clone();
  if (observer != nullptr) observer->DumpModule(*prepared.module, "before_optimizations.txt");
  OptimizationOptions optimization;
  optimization.opt_level = options.opt_level;
  optimization.tpu_numerics = options.tpu_numerics;
  optimization.observer = observer;
  optimization.verify_each = options.verify_each_pass;
  DiagnosticEngine diags;
  absl::StatusOr<bool> optimized = RunOptimizationPipeline(*prepared.module, optimization, diags);
  if (!optimized.ok()) {
    if (diags.diagnostics().empty()) return optimized.status();
    return absl::Status(optimized.status().code(),
                        absl::StrCat(optimized.status().message(), ": ", diags.diagnostics().front().message));
  }
  XLAC_RETURN_IF_ERROR(PrepareForCodegen(*prepared.module, observer, options.verify_each_pass));
  if (observer != nullptr) observer->DumpModule(*prepared.module, "after_optimizations.txt");
  {
    ScopedPhase phase(observer, "buffer assignment", "codegen");
    XLAC_ASSIGN_OR_RETURN(prepared.assignment, AssignBuffers(*prepared.module, options.buffers));
  }
  if (observer != nullptr && observer->dumping()) {
    observer->DumpText("buffer-assignment.txt", prepared.assignment.ToString());
  }
  return prepared;
}

CodegenOptions CodegenOptionsFor(const CompileOptions& options, const TargetInfo& target) {
  CodegenOptions codegen;
  codegen.entry_name = options.entry_name;
  codegen.target = target;
  codegen.tiled_dot = options.tiled_dot;
  codegen.tiled_convolution = options.tiled_convolution;
  codegen.exact = options.exact;
  codegen.parallel = options.parallel;
  codegen.row_groups = options.row_groups;
  codegen.tpu_numerics = options.tpu_numerics;
  codegen.trace_kernels = options.trace_kernels;
  return codegen;
}

absl::StatusOr<std::unique_ptr<llvm::Module>> LowerToLlvm(const PreparedModule& prepared, const TargetInfo& target,
                                                          llvm::TargetMachine& target_machine,
                                                          llvm::LLVMContext& context, const CompileOptions& options) {
  CodegenOptions codegen = CodegenOptionsFor(options, target);
  CompileObserver* observer = options.observer;
  std::unique_ptr<llvm::Module> llvm_module;
  {
    ScopedPhase phase(observer, "llvm emit", "codegen");
    XLAC_ASSIGN_OR_RETURN(llvm_module, EmitModule(*prepared.module, prepared.assignment, context, codegen));
    llvm_module->setDataLayout(target_machine.createDataLayout());
    if (options.kernel_bitcode != nullptr) {
      XLAC_RETURN_IF_ERROR(LinkKernels(*llvm_module, *options.kernel_bitcode, target, !options.exact));
    }
  }
  if (observer != nullptr && observer->dumping()) observer->DumpText("ir-no-opt.ll", PrintLlvm(*llvm_module));
  {
    ScopedPhase phase(observer, "llvm optimize", "llvm");
    OptimizeModule(*llvm_module, target_machine, options.opt_level);
  }
  if (observer != nullptr && observer->dumping()) observer->DumpText("ir-with-opt.ll", PrintLlvm(*llvm_module));
  return llvm_module;
}

}  // namespace xlac::codegen
