// Infeed asks the host for its data: xlac_rt_infeed(dev, site, leaves) (runtime/cpu/xlac_runtime.h), which
// dispatches to the device group's infeed handler.
//
// ABI of the call: `leaves` is an array of pointers to the array leaves of the infeed's data (element 0 of its
// (data, token) result; depth first, each buffer in its shape's layout), or NULL when the data has no array leaf.
// `site` points to a per-infeed constant C string (the instruction's name) that is also an exported symbol named
// InfeedSiteSymbol(entry, instruction unique id), so a host handler can tell infeeds apart by address (the JIT does:
// codegen/jit.cc). The token needs no code.
#include "codegen/custom_call_abi.h"
#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen {

std::string InfeedSiteSymbol(const std::string& entry_name, int64_t unique_id) {
  return fmt::format("{}.infeed.{}", entry_name, unique_id);
}

namespace internal {
namespace {

// Shape indices (within the infeed's result) of the data's array leaves, depth first.
void DataLeaves(const Shape& shape, std::vector<int64_t>& index, std::vector<std::vector<int64_t>>& out) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      index.push_back(static_cast<int64_t>(i));
      DataLeaves(shape.tuple_shapes[i], index, out);
      index.pop_back();
    }
  } else if (shape.IsArray()) {
    out.push_back(index);
  }
}

}  // namespace

absl::Status IrEmitter::EmitInfeed(const Instruction& inst) {
  if (!inst.shape().IsTuple() || inst.shape().tuple_shapes.size() != 2) {
    return Unimplemented(inst, "infeed of shape {}", ShapeToString(inst.shape()));
  }
  std::vector<std::vector<int64_t>> leaves;
  std::vector<int64_t> index = {0};
  DataLeaves(inst.shape().tuple_shapes[0], index, leaves);
  llvm::Value* leaf_array = llvm::ConstantPointerNull::get(b_.getPtrTy());
  if (!leaves.empty()) {
    // In the entry block, so an infeed inside a loop does not grow the stack.
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    leaf_array = entry.CreateAlloca(b_.getPtrTy(), I64(static_cast<int64_t>(leaves.size())), "infeed.leaves");
    for (size_t i = 0; i < leaves.size(); ++i) {
      b_.CreateStore(ArrayFor(&inst, leaves[i]).base, b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), leaf_array, i));
    }
  }
  llvm::Constant* site_init = llvm::ConstantDataArray::getString(ctx(), inst.name());
  auto* site = new llvm::GlobalVariable(llvm_module_, site_init->getType(), /*isConstant=*/true,
                                        llvm::GlobalValue::ExternalLinkage, site_init,
                                        InfeedSiteSymbol(options_.entry_name, inst.unique_id()));
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      "xlac_rt_infeed", llvm::FunctionType::get(b_.getInt32Ty(), {b_.getPtrTy(), b_.getPtrTy(), b_.getPtrTy()}, false));
  llvm::Value* code = b_.CreateCall(fn, {function_->getArg(1), site, leaf_array});
  ReturnIfFailed(code, {});
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace xlac::codegen
