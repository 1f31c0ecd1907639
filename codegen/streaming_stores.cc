#include "codegen/streaming_stores.h"

#include <vector>

#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"

namespace xlac::codegen {
namespace {

constexpr char kStreamedBase[] = "xlac.streamed_base";

}  // namespace

StreamedResults ChooseStreamedResults(const Module& module, const BufferAssignment& assignment,
                                      const std::string& triple, int64_t min_bytes) {
  StreamedResults streamed;
  streamed.allocations.assign(assignment.allocations().size(), false);
  if (min_bytes <= 0 || !llvm::StringRef(triple).starts_with("x86_64")) return streamed;
  const Instruction* root = module.entry_computation()->root();
  std::vector<const Instruction*> leaves;
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* operand : root->operands()) leaves.push_back(operand);
  } else {
    leaves.push_back(root);
  }
  for (const Instruction* leaf : leaves) {
    bool loop = (leaf->opcode() == Opcode::kFusion && leaf->StringAttr("kind") == "kLoop") ||
                IsElementwiseUnary(leaf->opcode()) || IsElementwiseBinary(leaf->opcode());
    bool only_root = leaf == root || (leaf->users().size() == 1 && leaf->users()[0] == root);
    if (!loop || !only_root || !leaf->shape().IsArray() || !assignment.HasSlice(leaf)) continue;
    if (leaf->shape().ByteSizeOf().value_or(0) < min_bytes) continue;
    BufferSlice slice = assignment.GetSlice(leaf, {});
    const Allocation& alloc = assignment.allocations()[static_cast<size_t>(slice.allocation)];
    if (alloc.kind != AllocationKind::kTemp || slice.offset % 64 != 0) continue;
    streamed.values.insert(leaf);
    streamed.allocations[static_cast<size_t>(slice.allocation)] = true;
  }
  return streamed;
}

void TagStreamedBase(llvm::LoadInst& base) {
  llvm::LLVMContext& ctx = base.getContext();
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  base.setMetadata(llvm::LLVMContext::MD_align,
                   llvm::MDNode::get(ctx, llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(i64, 64))));
  base.setMetadata(kStreamedBase, llvm::MDNode::get(ctx, {}));
}

bool IsStreamedBase(const llvm::Value* value) {
  const auto* load = llvm::dyn_cast_or_null<llvm::LoadInst>(value);
  return load != nullptr && load->getMetadata(kStreamedBase) != nullptr;
}

int MarkStreamingStores(llvm::Module& module) {
  const llvm::DataLayout& layout = module.getDataLayout();
  int marked = 0;
  for (llvm::Function& fn : module) {
    bool streams = false;
    std::vector<llvm::ReturnInst*> returns;
    for (llvm::BasicBlock& block : fn) {
      for (llvm::Instruction& inst : block) {
        if (auto* ret = llvm::dyn_cast<llvm::ReturnInst>(&inst)) returns.push_back(ret);
        auto* store = llvm::dyn_cast<llvm::StoreInst>(&inst);
        if (store == nullptr || store->isVolatile() || !store->getValueOperand()->getType()->isVectorTy()) continue;
        uint64_t bytes = layout.getTypeStoreSize(store->getValueOperand()->getType()).getFixedValue();
        if (store->getAlign().value() < bytes || !IsStreamedBase(llvm::getUnderlyingObject(store->getPointerOperand())))
          continue;
        llvm::Metadata* one =
            llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(fn.getContext()), 1));
        store->setMetadata(llvm::LLVMContext::MD_nontemporal, llvm::MDNode::get(fn.getContext(), one));
        streams = true;
        ++marked;
      }
    }
    if (!streams) continue;
    // Non-temporal stores are weakly ordered: whoever learns that this function returned (the pool thread that
    // waits for it, the caller reading the results) must see them.
    for (llvm::ReturnInst* ret : returns) {
      llvm::IRBuilder<> b(ret);
      b.CreateIntrinsic(llvm::Intrinsic::x86_sse_sfence, {}, {});
    }
  }
  return marked;
}

}  // namespace xlac::codegen
