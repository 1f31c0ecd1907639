// Kernels outlined from the entry function. Every compute kernel of the entry computation (and of the while and
// conditional computations it runs) is emitted into a function of its own,
//   void xlac.k.<name>(ptr buffers, ptr dev, ptr slice0, ptr slice1, ...)
// which the entry calls with the addresses of the buffer slices the kernel touches. Inside the kernel a slice is an
// argument, never "allocation base + constant offset", so two kernels that compute the same thing on buffers that
// live in different places (the repeated layers of a network) are the same function, and MergeFunctions
// (codegen/optimize.cc) keeps one of them before LLVM optimizes and compiles it. No function grows with the program
// either: the entry is a list of calls.
//
// The body is emitted with the emitters unchanged: while a kernel is being emitted, SlicePointer hands out a
// placeholder call in the kernel's entry block per slice (constants excepted: they stay the module's globals, so LLVM
// still folds what it loads from them); afterwards the function is rebuilt with one argument per
// placeholder. Parallel loops inside the kernel (ir_emitter_parallel.cc) capture the placeholders like any other
// value of their enclosing function.
#include "codegen/ir_emitter_internal.h"
#include "ir/kernel_calls.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace xlac::codegen::internal {
namespace {

constexpr const char* kSlicePlaceholder = "xlac.kernel.slice";

// Ops inside a kernel's computations that would tie it to the entry: runtime state the entry keeps (the rng
// counter), runtime calls found by their site, control flow.
bool Pure(const Computation& comp) {
  for (const auto& inst : comp.instructions()) {
    switch (inst->opcode()) {
      case Opcode::kRng:
      case Opcode::kRngGetAndUpdateState:
      case Opcode::kRngBitGenerator:
      case Opcode::kInfeed:
      case Opcode::kOutfeed:
      case Opcode::kSend:
      case Opcode::kSendDone:
      case Opcode::kRecv:
      case Opcode::kRecvDone:
      case Opcode::kWhile:
      case Opcode::kConditional:
      case Opcode::kCall:
        return false;
      case Opcode::kCustomCall:
        if (!IsElementwiseKernelCall(*inst)) return false;
        break;
      default:
        break;
    }
    for (const Computation* called : inst->called_computations()) {
      if (!Pure(*called)) return false;
    }
  }
  return true;
}

}  // namespace

bool IrEmitter::Outlinable(const Instruction& inst) const {
  if (!options_.outline_kernels) return false;
  const Opcode op = inst.opcode();
  const bool kernel = op == Opcode::kFusion || op == Opcode::kReduce || op == Opcode::kDot ||
                      op == Opcode::kConvolution || op == Opcode::kReduceWindow || op == Opcode::kSelectAndScatter ||
                      op == Opcode::kGather || op == Opcode::kScatter || op == Opcode::kSort || op == Opcode::kMap ||
                      IsDataMovement(op) || IsMiscOp(op) || IsElementwiseUnary(op) || IsElementwiseBinary(op) ||
                      op == Opcode::kCompare || op == Opcode::kSelect || op == Opcode::kClamp ||
                      op == Opcode::kConvert || op == Opcode::kReducePrecision || IsElementwiseKernelCall(inst);
  if (!kernel || IsCollective(op) || IsP2P(op) || IsLibraryCall(op)) return false;
  // Streamed results keep their tagged base (codegen/streaming_stores.h), which only the entry has.
  if (streamed_.values.contains(&inst)) return false;
  for (const Instruction* operand : inst.operands()) {
    if (streamed_.values.contains(operand)) return false;
  }
  for (const Computation* called : inst.called_computations()) {
    if (!Pure(*called)) return false;
  }
  return true;
}

absl::Status IrEmitter::EmitKernel(std::string_view name, bool outline, const std::function<absl::Status()>& body) {
  if (!outline || kernel_.has_value() || function_ != entry_function_ || row_) return body();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Function* outer = function_;
  auto* draft_type = llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false);
  llvm::Function* draft = llvm::Function::Create(draft_type, llvm::GlobalValue::InternalLinkage, "", llvm_module_);
  // Emitters read the target from the function they emit into (fast_math.cc: FMA or not).
  draft->addFnAttr(llvm::Attribute::NoUnwind);
  SetFunctionTargetAttributes(*draft, options_.target);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx(), "entry", draft);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx(), "body", draft);
  llvm::BranchInst::Create(start, entry);

  kernel_ = KernelCaptures{draft, {}, {}, {}};
  llvm::IRBuilderBase::InsertPoint saved = b_.saveIP();
  function_ = draft;
  entry_function_ = draft;  // parallel loops nest in the kernel; its second argument is the device
  b_.SetInsertPoint(start);
  absl::Status status = body();
  b_.CreateRetVoid();
  function_ = outer;
  entry_function_ = outer;
  b_.restoreIP(saved);
  KernelCaptures captures = std::move(*kernel_);
  kernel_.reset();
  if (!status.ok()) {
    draft->eraseFromParent();
    return status;
  }

  // A kernel that emitted nothing (a copy that buffer assignment made in place) needs no call.
  int64_t work = 0, returns = 0;
  for (llvm::BasicBlock& block : *draft) {
    for (llvm::Instruction& i : block) {
      if (llvm::isa<llvm::ReturnInst>(i)) ++returns;
      if (!i.isTerminator()) ++work;
    }
  }
  work -= static_cast<int64_t>(captures.placeholders.size());
  if (work == 0) {
    draft->eraseFromParent();
    return absl::OkStatus();
  }

  std::vector<llvm::Type*> params(2 + captures.slices.size(), ptr);
  llvm::Function* fn =
      llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false), llvm::GlobalValue::InternalLinkage,
                             fmt::format("xlac.k.{}", name), llvm_module_);
  fn->getArg(0)->setName("buffers");
  fn->getArg(1)->setName("dev");
  fn->copyAttributesFrom(draft);
  // Inlined back, kernels would rebuild the one huge entry function this avoids.
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  fn->splice(fn->end(), draft);
  draft->getArg(0)->replaceAllUsesWith(fn->getArg(0));
  draft->getArg(1)->replaceAllUsesWith(fn->getArg(1));
  for (size_t i = 0; i < captures.placeholders.size(); ++i) {
    captures.placeholders[i]->replaceAllUsesWith(fn->getArg(static_cast<unsigned>(2 + i)));
    captures.placeholders[i]->eraseFromParent();
  }
  for (size_t i = 0; i < captures.placeholders.size(); ++i) {
    fn->getArg(static_cast<unsigned>(2 + i))->setName(fmt::format("slice{}", i));
  }
  draft->eraseFromParent();
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyFunction(*fn, &os)) return absl::InternalError("codegen produced an invalid kernel: " + error);

  std::vector<llvm::Value*> args = {outer->getArg(0), outer->getArg(1)};
  for (const BufferSlice& slice : captures.slices) args.push_back(SlicePointer(slice));
  b_.CreateCall(fn, args);
  if (returns > 1) {
    // The kernel returned early because the device failed (xlac_rt_set_error): so does the entry.
    llvm::FunctionCallee failed =
        llvm_module_.getOrInsertFunction("xlac_rt_failed", llvm::FunctionType::get(b_.getInt32Ty(), {ptr}, false));
    llvm::Value* code = b_.CreateCall(failed, {outer->getArg(1)});
    llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx(), "kernel.fail", outer);
    llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx(), "kernel.ok", outer);
    b_.CreateCondBr(b_.CreateICmpNE(code, b_.getInt32(0)), fail, ok);
    b_.SetInsertPoint(fail);
    b_.CreateRetVoid();
    b_.SetInsertPoint(ok);
  }
  return absl::OkStatus();
}

llvm::Value* IrEmitter::KernelSlice(const BufferSlice& slice) {
  KernelCaptures& k = *kernel_;
  // Constants stay globals the kernel sees: LLVM folds loads of their values.
  if (assignment_.allocations()[static_cast<size_t>(slice.allocation)].kind == AllocationKind::kConstant) {
    llvm::Value* base = allocation_bases_.at(static_cast<size_t>(slice.allocation));
    return slice.offset == 0 ? base
                             : llvm::ConstantExpr::getInBoundsGetElementPtr(
                                   b_.getInt8Ty(), llvm::cast<llvm::Constant>(base), b_.getInt64(slice.offset));
  }
  auto [it, inserted] = k.slot_of.try_emplace({slice.allocation, slice.offset}, k.slices.size());
  if (!inserted) return k.placeholders[it->second];
  llvm::FunctionCallee placeholder = llvm_module_.getOrInsertFunction(
      kSlicePlaceholder, llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty()}, false));
  llvm::BasicBlock& entry = k.function->getEntryBlock();
  llvm::IRBuilder<> at(entry.getTerminator());
  k.placeholders.push_back(
      at.CreateCall(placeholder, {b_.getInt64(k.slices.size())}, fmt::format("slice{}", k.slices.size())));
  k.slices.push_back(slice);
  return k.placeholders.back();
}

void IrEmitter::FinishKernels() {
  if (llvm::Function* placeholder = llvm_module_.getFunction(kSlicePlaceholder)) {
    if (placeholder->use_empty()) placeholder->eraseFromParent();
  }
}

}  // namespace xlac::codegen::internal
