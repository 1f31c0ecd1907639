#include "codegen/aot.h"

#include "ir/status_macros.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

namespace xlac::codegen {

absl::StatusOr<AotResult> CompileAot(const Module& module, AotOutput output, const CompileOptions& options) {
  XLAC_ASSIGN_OR_RETURN(PreparedModule prepared, PrepareModule(module, options));
  TargetOptions target_options;
  target_options.cpu = options.target_cpu;
  target_options.opt_level = options.opt_level;
  XLAC_ASSIGN_OR_RETURN(TargetInfo target, ResolveTarget(target_options));
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target, options.opt_level));
  llvm::LLVMContext context;
  // The object must link without xlac's libraries: it carries its own GEMM functions.
  CompileOptions lowering = options;
  lowering.prebuilt_gemms = false;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> llvm_module,
                        LowerToLlvm(prepared, target, *tm, context, lowering));
  AotResult result;
  result.buffer_table = prepared.assignment.ToString();
  llvm::raw_string_ostream os(result.contents);
  if (output == AotOutput::kLlvmIr) {
    llvm_module->print(os, nullptr);
    return result;
  }
  llvm::SmallVector<char, 0> bytes;
  llvm::raw_svector_ostream out(bytes);
  llvm::legacy::PassManager pm;
  llvm::CodeGenFileType type =
      output == AotOutput::kObject ? llvm::CodeGenFileType::ObjectFile : llvm::CodeGenFileType::AssemblyFile;
  if (tm->addPassesToEmitFile(pm, out, nullptr, type)) {
    return absl::InternalError("the target cannot emit this file type");
  }
  pm.run(*llvm_module);
  result.contents.assign(bytes.begin(), bytes.end());
  return result;
}

}  // namespace xlac::codegen
