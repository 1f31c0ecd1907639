#include "codegen/clang/kernel_runner.h"

#include "codegen/optimize.h"
#include "codegen/pipeline.h"
#include "fmt/format.h"
#include "ir/status_macros.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/SubtargetFeature.h"

namespace xlac::codegen {
namespace {

std::string ToString(llvm::Error error) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << error;
  return s;
}

// Named after the kernel's symbol, not its target: elementwise overloads share a target.
std::string ApplySymbol(const KernelSignature& kernel) {
  return (kernel.kind == KernelKind::kBuffer ? "xlac.apply_buffer." : "xlac.apply.") + kernel.symbol;
}

// i32 xlac.apply_buffer.<symbol>(ptr frame): the buffer kernel's entry point, which LinkKernels makes internal,
// under a name the JIT exports (interp::BufferKernelFn).
void EmitBufferApply(llvm::Module& module, const KernelSignature& kernel) {
  llvm::IRBuilder<> b(module.getContext());
  auto* type = llvm::FunctionType::get(b.getInt32Ty(), {b.getPtrTy()}, false);
  auto* callee = llvm::cast<llvm::Function>(module.getOrInsertFunction(kernel.symbol, type).getCallee());
  auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, ApplySymbol(kernel), module);
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  b.CreateRet(b.CreateCall(callee, {fn->getArg(0)}));
}

// The kernel's IR type for `type` (as codegen calls it: ir_emitter_kernel.cc).
llvm::Type* ScalarType(llvm::IRBuilder<>& b, PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return b.getInt1Ty();
    case PrimitiveType::kF16:
      return b.getHalfTy();
    case PrimitiveType::kBF16:
      return b.getBFloatTy();
    case PrimitiveType::kF32:
      return b.getFloatTy();
    case PrimitiveType::kF64:
      return b.getDoubleTy();
    default:
      return b.getIntNTy(static_cast<unsigned>(BitWidth(type)));
  }
}

// How an element is stored in a literal: pred as one byte, everything else as its scalar type.
llvm::Type* StorageType(llvm::IRBuilder<>& b, PrimitiveType type) {
  return type == PrimitiveType::kPred ? b.getInt8Ty() : ScalarType(b, type);
}

// void xlac.apply.<symbol>(ptr operands, ptr broadcast, ptr result, i64 count): interp::ElementwiseKernelFn.
void EmitApply(llvm::Module& module, const KernelSignature& kernel, llvm::Function& fn_kernel) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* ptr = b.getPtrTy();
  auto* type = llvm::FunctionType::get(b.getVoidTy(), {ptr, ptr, ptr, b.getInt64Ty()}, false);
  auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, ApplySymbol(kernel), module);
  llvm::Value* operands = fn->getArg(0);
  llvm::Value* broadcast = fn->getArg(1);
  llvm::Value* result = fn->getArg(2);
  llvm::Value* count = fn->getArg(3);
  auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  auto* loop = llvm::BasicBlock::Create(ctx, "loop", fn);
  auto* done = llvm::BasicBlock::Create(ctx, "done", fn);
  b.SetInsertPoint(entry);
  std::vector<llvm::Value*> bases, steps;
  for (size_t k = 0; k < kernel.operand_types.size(); ++k) {
    bases.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, operands, k)));
    llvm::Value* flag = b.CreateLoad(b.getInt8Ty(), b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), broadcast, k));
    steps.push_back(b.CreateSelect(b.CreateICmpNE(flag, b.getInt8(0)), b.getInt64(0), b.getInt64(1)));
  }
  b.CreateCondBr(b.CreateICmpSGT(count, b.getInt64(0)), loop, done);
  b.SetInsertPoint(loop);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2);
  i->addIncoming(b.getInt64(0), entry);
  std::vector<llvm::Value*> args;
  for (size_t k = 0; k < kernel.operand_types.size(); ++k) {
    const PrimitiveType t = kernel.operand_types[k];
    llvm::Type* storage = StorageType(b, t);
    llvm::Value* v = b.CreateLoad(storage, b.CreateInBoundsGEP(storage, bases[k], b.CreateMul(i, steps[k])));
    if (t == PrimitiveType::kPred) v = b.CreateICmpNE(v, b.getInt8(0));
    args.push_back(v);
  }
  llvm::Value* r = b.CreateCall(&fn_kernel, args);
  if (kernel.result_type == PrimitiveType::kPred) r = b.CreateZExt(r, b.getInt8Ty());
  b.CreateStore(r, b.CreateInBoundsGEP(StorageType(b, kernel.result_type), result, i));
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1));
  i->addIncoming(next, loop);
  b.CreateCondBr(b.CreateICmpSLT(next, count), loop, done);
  b.SetInsertPoint(done);
  b.CreateRetVoid();
}

}  // namespace

KernelRunner::KernelRunner() = default;
KernelRunner::~KernelRunner() = default;

absl::StatusOr<std::unique_ptr<KernelRunner>> KernelRunner::Create(const KernelLibrary& library,
                                                                   const TargetInfo& target) {
  std::unique_ptr<KernelRunner> runner(new KernelRunner());
  if (library.kernels.empty()) return runner;
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("xlac.kernel_runner", *context);
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, CreateTargetMachine(target, 2));
  module->setDataLayout(tm->createDataLayout());
  module->setTargetTriple(target.triple);
  llvm::IRBuilder<> b(*context);
  for (const KernelSignature& kernel : library.kernels) {
    if (kernel.kind == KernelKind::kBuffer) {
      EmitBufferApply(*module, kernel);
      continue;
    }
    std::vector<llvm::Type*> params;
    for (PrimitiveType t : kernel.operand_types) params.push_back(ScalarType(b, t));
    auto* type = llvm::FunctionType::get(ScalarType(b, kernel.result_type), params, false);
    auto* callee = llvm::cast<llvm::Function>(module->getOrInsertFunction(kernel.symbol, type).getCallee());
    EmitApply(*module, kernel, *callee);
  }
  XLAC_RETURN_IF_ERROR(LinkKernels(*module, library.bitcode, target, /*approximate_math=*/false));
  std::string broken;
  llvm::raw_string_ostream broken_os(broken);
  if (llvm::verifyModule(*module, &broken_os)) {
    return absl::InternalError(
        "the kernel runner's module does not verify (a kernel's IR type differs from its "
        "signature?): " +
        broken);
  }
  OptimizeModule(*module, *tm, 2);

  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu);
  llvm::SubtargetFeatures features(target.features);
  jtmb.addFeatures(features.getFeatures());
  jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) return absl::InternalError("cannot create the kernel JIT: " + ToString(jit.takeError()));
  runner->jit_ = std::move(*jit);
  // Kernels call libm and the C library: they come from the process.
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(runner->jit_->getDataLayout().getGlobalPrefix());
  if (!generator) return absl::InternalError("cannot search the process: " + ToString(generator.takeError()));
  runner->jit_->getMainJITDylib().addGenerator(std::move(*generator));
  if (llvm::Error error =
          runner->jit_->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    return absl::InternalError("cannot add the kernels to the JIT: " + ToString(std::move(error)));
  }
  for (const KernelSignature& kernel : library.kernels) {
    llvm::Expected<llvm::orc::ExecutorAddr> address = runner->jit_->lookup(ApplySymbol(kernel));
    if (!address) {
      return absl::InternalError(fmt::format("cannot compile the kernel {} for the interpreter: {}", kernel.function,
                                             ToString(address.takeError())));
    }
    if (kernel.kind == KernelKind::kBuffer) {
      runner->kernels_.buffer[kernel.symbol] = address->toPtr<interp::BufferKernelFn>();
    } else {
      runner->kernels_.elementwise[kernel.symbol] = address->toPtr<interp::ElementwiseKernelFn>();
    }
  }
  return runner;
}

}  // namespace xlac::codegen
