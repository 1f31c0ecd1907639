#include "codegen/optimize.h"

#include "codegen/streaming_stores.h"
#include "llvm/Analysis/CGSCCPassManager.h"
#include "llvm/Analysis/LoopAnalysisManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/PassManager.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/IPO/MergeFunctions.h"
#include "llvm/Transforms/Scalar/LoopPassManager.h"
#include "llvm/Transforms/Scalar/LoopStrengthReduce.h"

namespace xlac::codegen {

namespace {

// The packed GEMMs of dots and convolutions (codegen/ir_emitter_gemm.h: EmitGemmFunction's names).
bool IsGemmFunction(const llvm::Function& fn) {
  llvm::StringRef name = fn.getName();
  return name.starts_with("xlac.gemm.") || name.starts_with("xlac.conv.gemm.");
}

}  // namespace

void DisableCodegenLoopStrengthReduction() {
  static const bool done = [] {
    llvm::StringMap<llvm::cl::Option*>& options = llvm::cl::getRegisteredOptions();
    auto found = options.find("disable-lsr");
    if (found != options.end()) static_cast<llvm::cl::opt<bool>*>(found->second)->setValue(true);
    return true;
  }();
  (void)done;
}

void MergeIdenticalFunctions(llvm::Module& module) {
  for (llvm::Function& fn : module.functions()) {
    if (!fn.isDeclaration() && fn.hasLocalLinkage()) fn.setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder builder;
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager merge;
  merge.addPass(llvm::MergeFunctionsPass());
  merge.run(module, mam);
}

void OptimizeModule(llvm::Module& module, llvm::TargetMachine& target_machine, int opt_level, bool merge) {
  DisableCodegenLoopStrengthReduction();
  if (merge) MergeIdenticalFunctions(module);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = opt_level >= 2;
  tuning.SLPVectorization = opt_level >= 2;
  tuning.LoopUnrolling = opt_level >= 2;
  llvm::PassBuilder builder(&target_machine, tuning);
  builder.registerModuleAnalyses(mam);
  builder.registerCGSCCAnalyses(cgam);
  builder.registerFunctionAnalyses(fam);
  builder.registerLoopAnalyses(lam);
  builder.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::OptimizationLevel level = opt_level <= 0   ? llvm::OptimizationLevel::O0
                                  : opt_level == 1 ? llvm::OptimizationLevel::O1
                                  : opt_level == 2 ? llvm::OptimizationLevel::O2
                                                   : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager mpm =
      opt_level <= 0 ? builder.buildO0DefaultPipeline(level) : builder.buildPerModuleDefaultPipeline(level);
  mpm.run(module, mam);
  if (opt_level >= 1) {
    // Loop strength reduction, which code generation no longer runs (DisableCodegenLoopStrengthReduction), on the
    // GEMM functions alone: their register-tiled loops need it, and it costs little on them.
    llvm::FunctionPassManager lsr;
    lsr.addPass(llvm::createFunctionToLoopPassAdaptor(llvm::LoopStrengthReducePass()));
    for (llvm::Function& fn : module) {
      if (!fn.isDeclaration() && IsGemmFunction(fn)) lsr.run(fn, fam);
    }
  }
  MarkStreamingStores(module);
}

}  // namespace xlac::codegen
