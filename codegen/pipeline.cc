#include "codegen/pipeline.h"

#include "absl/strings/str_cat.h"
#include "codegen/kernel_math.h"
#include "codegen/optimize.h"
#include "codegen/prebuilt_gemms.h"
#include "codegen/split_compile.h"
#include "fmt/format.h"
#include "ir/buffer_shapes.h"
#include "ir/diagnostics.h"
#include "ir/kernel_calls.h"
#include "ir/status_macros.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
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
  llvm::Expected<std::unique_ptr<llvm::Module>> kernels =
      llvm::parseBitcodeFile(llvm::MemoryBufferRef(bitcode, "xlac.kernels"), module.getContext());
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
  optimization.exact = options.exact;
  optimization.stage = options.partitioned ? OptimizationStage::kAfterPartitioning : OptimizationStage::kWhole;
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
  codegen.rng_seed = options.rng_seed;
  codegen.outline_kernels = options.outline_kernels;
  return codegen;
}

namespace {

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitLlvm(const PreparedModule& prepared, const TargetInfo& target,
                                                       llvm::TargetMachine& target_machine, llvm::LLVMContext& context,
                                                       const CompileOptions& options) {
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
    if (options.prebuilt_gemms) {
      if (const XlacPrebuiltGemmSet* set = FindPrebuiltGemms(target, target_machine)) {
        UsePrebuiltGemms(*llvm_module, *set);
      }
    }
  }
  if (observer != nullptr && observer->dumping()) observer->DumpText("ir-no-opt.ll", PrintLlvm(*llvm_module));
  return llvm_module;
}

// Merges identical functions of `module` and optimizes it: in place when it is small (no parts returned), otherwise
// in parts on several threads (returned optimized, each in its own context; `promoted` lists what to restore when
// they are joined).
absl::StatusOr<std::vector<ModulePart>> Optimize(llvm::Module& module, const TargetInfo& target,
                                                 llvm::TargetMachine& target_machine, const CompileOptions& options,
                                                 std::vector<PromotedSymbol>& promoted) {
  MergeIdenticalFunctions(module);
  const int count = ChoosePartCount(module);
  if (count <= 1) {
    OptimizeModule(module, target_machine, options.opt_level, /*merge=*/false);
    return std::vector<ModulePart>();
  }
  std::vector<ModulePart> parts = SplitModule(module, count, promoted);
  std::vector<absl::Status> status(parts.size());
  ParallelForEach(static_cast<int>(parts.size()), options.compile_threads, [&](int i) {
    absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine = CreateTargetMachine(target, options.opt_level);
    if (!machine.ok()) {
      status[i] = machine.status();
      return;
    }
    OptimizeModule(*parts[i].module, **machine, options.opt_level, /*merge=*/false);
  });
  for (const absl::Status& s : status) XLAC_RETURN_IF_ERROR(s);
  return parts;
}

}  // namespace

absl::StatusOr<std::unique_ptr<llvm::Module>> LowerToLlvm(const PreparedModule& prepared, const TargetInfo& target,
                                                          llvm::TargetMachine& target_machine,
                                                          llvm::LLVMContext& context, const CompileOptions& options) {
  CompileObserver* observer = options.observer;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> llvm_module,
                        EmitLlvm(prepared, target, target_machine, context, options));
  {
    ScopedPhase phase(observer, "llvm optimize", "llvm");
    std::vector<PromotedSymbol> promoted;
    XLAC_ASSIGN_OR_RETURN(std::vector<ModulePart> parts,
                          Optimize(*llvm_module, target, target_machine, options, promoted));
    if (!parts.empty()) {
      auto joined = std::make_unique<llvm::Module>(llvm_module->getName(), context);
      joined->setDataLayout(llvm_module->getDataLayout());
      joined->setTargetTriple(llvm_module->getTargetTriple());
      llvm_module.reset();
      XLAC_RETURN_IF_ERROR(JoinParts(std::move(parts), *joined, promoted));
      llvm_module = std::move(joined);
    }
  }
  if (observer != nullptr && observer->dumping()) observer->DumpText("ir-with-opt.ll", PrintLlvm(*llvm_module));
  return llvm_module;
}

absl::StatusOr<std::vector<std::unique_ptr<llvm::MemoryBuffer>>> LowerToObjects(
    const PreparedModule& prepared, const TargetInfo& target, llvm::TargetMachine& target_machine,
    llvm::LLVMContext& context, const CompileOptions& options, const TargetMachineFactory& codegen_machine,
    std::string* optimized_ir) {
  CompileObserver* observer = options.observer;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::Module> llvm_module,
                        EmitLlvm(prepared, target, target_machine, context, options));
  std::vector<ModulePart> parts;
  {
    ScopedPhase phase(observer, "llvm optimize", "llvm");
    std::vector<PromotedSymbol> promoted;  // the JIT resolves hidden symbols across its object files
    XLAC_ASSIGN_OR_RETURN(parts, Optimize(*llvm_module, target, target_machine, options, promoted));
  }
  std::vector<llvm::Module*> modules;
  if (parts.empty()) {
    modules.push_back(llvm_module.get());
  } else {
    llvm_module.reset();
    for (ModulePart& part : parts) modules.push_back(part.module.get());
  }
  const bool dump = observer != nullptr && observer->dumping();
  if (dump || optimized_ir != nullptr) {
    std::string text;
    for (size_t i = 0; i < modules.size(); ++i) {
      if (modules.size() > 1) text += fmt::format("; part {} of {}\n", i + 1, modules.size());
      text += PrintLlvm(*modules[i]);
    }
    if (dump) observer->DumpText("ir-with-opt.ll", text);
    if (optimized_ir != nullptr) *optimized_ir = std::move(text);
  }
  ScopedPhase phase(observer, "jit codegen", "jit");
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects(modules.size());
  std::vector<absl::Status> status(modules.size());
  ParallelForEach(static_cast<int>(modules.size()), options.compile_threads, [&](int i) {
    absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine = codegen_machine();
    if (!machine.ok()) {
      status[i] = machine.status();
      return;
    }
    llvm::orc::SimpleCompiler compiler(**machine);
    llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> object = compiler(*modules[i]);
    if (!object) {
      status[i] = absl::InternalError("code generation failed: " + llvm::toString(object.takeError()));
      return;
    }
    objects[i] = std::move(*object);
  });
  for (const absl::Status& s : status) XLAC_RETURN_IF_ERROR(s);
  return objects;
}

}  // namespace xlac::codegen
