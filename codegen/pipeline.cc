#include "codegen/pipeline.h"

#include "absl/strings/str_cat.h"
#include "codegen/optimize.h"
#include "ir/diagnostics.h"
#include "ir/status_macros.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Target/TargetMachine.h"
#include "passes/codegen_prepare.h"
#include "passes/optimization_pipeline.h"

namespace xlac::codegen {

absl::StatusOr<PreparedModule> PrepareModule(const Module& module, const CompileOptions& options) {
  PreparedModule prepared;
  prepared.module = module.Clone();
  OptimizationOptions optimization;
  optimization.opt_level = options.opt_level;
  optimization.tpu_numerics = options.tpu_numerics;
  DiagnosticEngine diags;
  absl::StatusOr<bool> optimized = RunOptimizationPipeline(*prepared.module, optimization, diags);
  if (!optimized.ok()) {
    if (diags.diagnostics().empty()) return optimized.status();
    return absl::Status(optimized.status().code(),
                        absl::StrCat(optimized.status().message(), ": ", diags.diagnostics().front().message));
  }
  XLAC_RETURN_IF_ERROR(PrepareForCodegen(*prepared.module));
  XLAC_ASSIGN_OR_RETURN(prepared.assignment, AssignBuffers(*prepared.module, options.buffers));
  return prepared;
}

absl::StatusOr<std::unique_ptr<llvm::Module>> LowerToLlvm(const PreparedModule& prepared, const TargetInfo& target,
                                                          llvm::TargetMachine& target_machine,
                                                          llvm::LLVMContext& context, const CompileOptions& options) {
  CodegenOptions codegen;
  codegen.entry_name = options.entry_name;
  codegen.target = target;
  codegen.tiled_dot = options.tiled_dot;
  codegen.tiled_convolution = options.tiled_convolution;
  codegen.exact = options.exact;
  codegen.parallel = options.parallel;
  codegen.row_groups = options.row_groups;
  codegen.tpu_numerics = options.tpu_numerics;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> llvm_module,
                        EmitModule(*prepared.module, prepared.assignment, context, codegen));
  llvm_module->setDataLayout(target_machine.createDataLayout());
  OptimizeModule(*llvm_module, target_machine, options.opt_level);
  return llvm_module;
}

}  // namespace xlac::codegen
