#include "codegen/loop_interleave.h"

#include <algorithm>

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Metadata.h"

namespace xlac::codegen {
namespace {

// Chain latencies (cycles) from which the loop is interleaved by 2 and by 4. The window holds about 160 vector
// operations, i.e. 160 / ops chains of a body of `ops` operations, so a vector takes latency * ops / 160 cycles when
// the window is the limit and ops / 2 when the two FMA pipes are: the window limits from a latency of ~80 cycles
// (measured: from ~60, a 20-FMA chain of 80 cycles ran 30 % under throughput, a 10-FMA chain of 40 at it).
constexpr int kInterleave2Latency = 40;
constexpr int kInterleave4Latency = 64;
// Interleaving splits every loop into VF * count elements per iteration plus a remainder: loops shorter than this
// keep the vectorizer's own choice.
constexpr int64_t kMinTripCount = 128;

bool IsFloat(const llvm::Value& v) { return v.getType()->getScalarType()->isFloatingPointTy(); }

// Latency in cycles of an operation on the chain (typical of current x86 cores; only the sum matters).
int Latency(const llvm::Instruction& inst) {
  if (const auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&inst)) {
    switch (intrinsic->getIntrinsicID()) {
      case llvm::Intrinsic::fma:
      case llvm::Intrinsic::fmuladd:
        return 4;
      case llvm::Intrinsic::sqrt:
        return 14;
      case llvm::Intrinsic::minnum:
      case llvm::Intrinsic::maxnum:
      case llvm::Intrinsic::minimum:
      case llvm::Intrinsic::maximum:
      case llvm::Intrinsic::fabs:
      case llvm::Intrinsic::copysign:
        return 2;
      default:
        return IsFloat(inst) ? 4 : 1;
    }
  }
  switch (inst.getOpcode()) {
    case llvm::Instruction::FAdd:
    case llvm::Instruction::FSub:
    case llvm::Instruction::FMul:
      return 4;
    case llvm::Instruction::FDiv:
    case llvm::Instruction::FRem:
      return 12;
    case llvm::Instruction::FNeg:
    case llvm::Instruction::FCmp:
    case llvm::Instruction::Select:
      return 2;
    case llvm::Instruction::Load:
    case llvm::Instruction::Store:
    case llvm::Instruction::PHI:
    case llvm::Instruction::GetElementPtr:
      return 0;
    default:
      return 1;
  }
}

}  // namespace

int InterleaveLongChains(llvm::BasicBlock& body, llvm::BranchInst& latch, int64_t trip_count) {
  if (trip_count < kMinTripCount || latch.getMetadata(llvm::LLVMContext::MD_loop) != nullptr) return 1;
  llvm::DenseMap<const llvm::Instruction*, int> depth;
  int longest = 0;
  for (const llvm::Instruction& inst : body) {
    // A floating-point value carried around the loop is a reduction: the vectorizer interleaves its accumulators.
    if (llvm::isa<llvm::PHINode>(inst) && IsFloat(inst)) return 1;
    int start = 0;
    for (const llvm::Value* operand : inst.operands()) {
      const auto* def = llvm::dyn_cast<llvm::Instruction>(operand);
      if (def != nullptr && def->getParent() == &body) {
        auto it = depth.find(def);
        if (it != depth.end()) start = std::max(start, it->second);
      }
    }
    int d = start + Latency(inst);
    depth[&inst] = d;
    longest = std::max(longest, d);
  }
  const int count = longest >= kInterleave4Latency ? 4 : longest >= kInterleave2Latency ? 2 : 1;
  if (count == 1) return 1;
  llvm::LLVMContext& ctx = body.getContext();
  llvm::Metadata* interleave[] = {
      llvm::MDString::get(ctx, "llvm.loop.interleave.count"),
      llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(ctx), count))};
  llvm::Metadata* operands[] = {nullptr, llvm::MDNode::get(ctx, interleave)};
  llvm::MDNode* self = llvm::MDNode::getDistinct(ctx, operands);
  self->replaceOperandWith(0, self);
  latch.setMetadata(llvm::LLVMContext::MD_loop, self);
  return count;
}

}  // namespace xlac::codegen
