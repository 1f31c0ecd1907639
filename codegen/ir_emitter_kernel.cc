// Custom calls bound to C++ elementwise kernels (passes/custom_kernels.h): one call of the kernel's function per
// element. The function's body comes from the kernel library that LowerToLlvm links into the module
// (codegen/clang/kernel_compiler.h); it is inlined there, so a fused loop around it vectorizes.
#include "codegen/ir_emitter_internal.h"
#include "ir/kernel_calls.h"

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

}  // namespace xlac::codegen::internal
