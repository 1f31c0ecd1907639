// Custom calls bound to C++ kernels (passes/custom_kernels.h). Elementwise kernels: one call of the kernel's function
// per element. The function's body comes from the kernel library that LowerToLlvm links into the module
// (codegen/clang/kernel_compiler.h); it is inlined there, so a fused loop around it vectorizes. Buffer kernels: one
// call of the entry point XLAC_BUFFER_KERNEL defines, with an XlacKernelFrame (include/xlac/custom_call.h) of the
// call's buffers, which layout assignment and layout-copies keep row-major.
#include "codegen/ir_emitter_internal.h"
#include "include/xlac/custom_call.h"
#include "ir/kernel_calls.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/MDBuilder.h"

namespace xlac::codegen::internal {

// How Clang passes a scalar of `type` on x86-64: the IR type of the C++ parameter and result types
// include/xlac/custom_call.h lists (bool is i1, the narrow floats are half / bfloat).
llvm::Type* IrEmitter::KernelScalarType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF16:
      return b_.getHalfTy();
    case PrimitiveType::kBF16:
      return b_.getBFloatTy();
    default:
      return ComputeType(type);
  }
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitElementwiseKernelCall(const Instruction& inst,
                                                                  absl::Span<llvm::Value* const> operands) {
  const std::string symbol(KernelSymbol(inst));
  if (symbol.empty()) return Unimplemented(inst, "custom call bound to a kernel without a symbol");
  std::vector<llvm::Type*> params;
  std::vector<llvm::Value*> args;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const PrimitiveType type = inst.operand(i)->shape().element_type;
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, type));
    llvm::Type* param = KernelScalarType(type);
    params.push_back(param);
    llvm::Value* v = operands[static_cast<size_t>(i)];
    args.push_back(v->getType() == param ? v : b_.CreateFPTrunc(v, param));
  }
  const PrimitiveType out = inst.shape().element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, out));
  llvm::FunctionType* type = llvm::FunctionType::get(KernelScalarType(out), params, /*isVarArg=*/false);
  llvm::FunctionCallee kernel = llvm_module_.getOrInsertFunction(symbol, type);
  llvm::Value* result = b_.CreateCall(kernel, args);
  llvm::Type* compute = ComputeType(out);
  return result->getType() == compute ? result : b_.CreateFPExt(result, compute);
}

namespace {

// Bytes the kernel may write its message into (XlacKernelFrame::error_capacity).
constexpr int64_t kKernelMessageBytes = 512;

bool IsRowMajor(const Shape& shape) {
  if (!shape.layout) return true;
  if (!shape.layout->HasOnlyMinorToMajor()) return false;
  // Dimensions of size 1 may sit anywhere: they do not move an element.
  std::vector<int64_t> order;
  for (int64_t d : shape.layout->minor_to_major) {
    if (shape.dimensions[d] != 1) order.push_back(d);
  }
  return std::is_sorted(order.rbegin(), order.rend());
}

}  // namespace

absl::Status IrEmitter::EmitBufferKernelCall(const Instruction& inst) {
  const std::string symbol(KernelSymbol(inst));
  if (symbol.empty()) return Unimplemented(inst, "custom call bound to a kernel without a symbol");
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  // XlacKernelBuffer and XlacKernelFrame, field for field.
  llvm::StructType* buffer_type = llvm::StructType::get(ctx(), {ptr, ptr, i64});
  llvm::StructType* frame_type = llvm::StructType::get(ctx(), {ptr, i64, ptr, i64, ptr, ptr, i64});
  static_assert(sizeof(XlacKernelBuffer) == 24 && sizeof(XlacKernelFrame) == 56, "the IR types mirror the C ABI");

  struct Leaf {
    llvm::Value* data;
    const Shape* shape;
  };
  std::vector<Leaf> operands, results;
  for (const Instruction* operand : inst.operands()) operands.push_back({ArrayFor(operand).base, &operand->shape()});
  if (inst.shape().IsTuple()) {
    for (size_t i = 0; i < inst.shape().tuple_shapes.size(); ++i) {
      results.push_back({ArrayFor(&inst, {static_cast<int64_t>(i)}).base, &inst.shape().tuple_shapes[i]});
    }
  } else {
    results.push_back({ArrayFor(&inst).base, &inst.shape()});
  }
  for (const std::vector<Leaf>* leaves : {&operands, &results}) {
    for (const Leaf& leaf : *leaves) {
      if (!leaf.shape->IsArray() || !IsRowMajor(*leaf.shape)) {
        return Unimplemented(inst,
                             "buffer kernel {} given {} (buffer kernels take row-major arrays; layout-copies should "
                             "have made it so)",
                             symbol, ShapeToString(*leaf.shape, true));
      }
    }
  }
  llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
  auto buffers = [&](const std::vector<Leaf>& leaves, const char* label) -> llvm::Value* {
    if (leaves.empty()) return llvm::ConstantPointerNull::get(b_.getPtrTy());
    llvm::Value* array = entry.CreateAlloca(buffer_type, I64(static_cast<int64_t>(leaves.size())), label);
    for (size_t i = 0; i < leaves.size(); ++i) {
      const Shape& shape = *leaves[i].shape;
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(buffer_type, array, i);
      b_.CreateStore(leaves[i].data, b_.CreateStructGEP(buffer_type, slot, 0));
      b_.CreateStore(ConstantI64Array(shape.dimensions, "kernel.dims"), b_.CreateStructGEP(buffer_type, slot, 1));
      b_.CreateStore(I64(shape.rank()), b_.CreateStructGEP(buffer_type, slot, 2));
    }
    return array;
  };
  llvm::Value* operand_array = buffers(operands, "kernel.operands");
  llvm::Value* result_array = buffers(results, "kernel.results");

  llvm::Value* attrs = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (std::string bytes = KernelAttrBytes(inst); !bytes.empty()) {
    llvm::Constant* init = llvm::ConstantDataArray::getRaw(bytes, bytes.size(), b_.getInt8Ty());
    auto* global = new llvm::GlobalVariable(llvm_module_, init->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, init, "kernel.attrs");
    global->setAlignment(llvm::Align(16));  // at least any scalar field's alignment
    attrs = global;
  }
  // The message goes after the call's description, so that a failure only has to fill in the description.
  const std::string prefix = DescribeKernelCall(inst) + " failed: ";
  const int64_t prefix_bytes = static_cast<int64_t>(prefix.size());
  llvm::Value* message = entry.CreateAlloca(b_.getInt8Ty(), I64(prefix_bytes + kKernelMessageBytes), "kernel.error");
  llvm::Value* kernel_message = b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), message, prefix_bytes);
  b_.CreateStore(b_.getInt8(0), kernel_message);

  llvm::Value* frame = entry.CreateAlloca(frame_type, nullptr, "kernel.frame");
  const std::vector<llvm::Value*> fields = {operand_array,
                                            I64(static_cast<int64_t>(operands.size())),
                                            result_array,
                                            I64(static_cast<int64_t>(results.size())),
                                            attrs,
                                            kernel_message,
                                            I64(kKernelMessageBytes - 1)};
  for (size_t i = 0; i < fields.size(); ++i) {
    b_.CreateStore(fields[i], b_.CreateStructGEP(frame_type, frame, static_cast<unsigned>(i)));
  }
  llvm::FunctionCallee kernel =
      llvm_module_.getOrInsertFunction(symbol, llvm::FunctionType::get(b_.getInt32Ty(), {ptr}, false));
  llvm::Value* code = b_.CreateCall(kernel, {frame});

  llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx(), "kernel.fail", function_);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx(), "kernel.ok", function_);
  b_.CreateCondBr(b_.CreateICmpNE(code, b_.getInt32(0)), fail, ok,
                  llvm::MDBuilder(ctx()).createUnlikelyBranchWeights());
  b_.SetInsertPoint(fail);
  // Terminated even when the kernel filled its whole capacity.
  b_.CreateStore(b_.getInt8(0),
                 b_.CreateConstInBoundsGEP1_64(b_.getInt8Ty(), message, prefix_bytes + kKernelMessageBytes - 1));
  llvm::Value* text = b_.CreateGlobalString(prefix, "kernel.call");
  b_.CreateMemCpy(message, llvm::MaybeAlign(1), text, llvm::MaybeAlign(1), I64(prefix_bytes));
  llvm::FunctionCallee set_error =
      llvm_module_.getOrInsertFunction("xlac_rt_set_error", llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false));
  b_.CreateCall(set_error, {function_->getArg(1), message});
  b_.CreateRetVoid();  // a failed device stops (runtime/cpu/xlac_runtime.h)
  b_.SetInsertPoint(ok);
  return absl::OkStatus();
}

}  // namespace xlac::codegen::internal
