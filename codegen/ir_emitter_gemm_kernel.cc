// The register-tile micro-kernels of the blocked GEMM (codegen/ir_emitter_gemm.h): their type, the emitter every
// kernel shares (accumulators, the k loop, B's prefetches) and the f32/f64 kernels of one broadcast A element times
// one B vector per register. The bf16 pair kernel is in ir_emitter_gemm_bf16.cc.
#include <cassert>
#include <string>
#include <vector>

#include "codegen/ir_emitter_gemm.h"
#include "fmt/format.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace xlac::codegen::internal {

void EmitGemmPrefetch(llvm::IRBuilder<>& b, llvm::Value* base, int64_t element_bytes, llvm::Value* element_offset,
                      int64_t bytes) {
  llvm::Value* first = b.CreateGEP(b.getInt8Ty(), base, b.CreateMul(element_offset, b.getInt64(element_bytes)));
  for (int64_t offset = 0; offset < bytes; offset += 64) {
    b.CreateIntrinsic(
        llvm::Intrinsic::prefetch, {b.getPtrTy()},
        {b.CreateGEP(b.getInt8Ty(), first, b.getInt64(offset)), b.getInt32(0), b.getInt32(2), b.getInt32(1)});
  }
}

namespace {

// The trip count of a full k block (t.kc), from the kernel's `steps` (one per k, or per pair of k).
int64_t NominalSteps(llvm::IRBuilder<>& b, const GemmTiling& t, const GemmKernelSteps& steps) {
  auto* folded = llvm::dyn_cast<llvm::ConstantInt>(steps(b, b.getInt64(t.kc)));
  assert(folded != nullptr && "a kernel's steps of a constant kc must fold");
  return folded->getSExtValue();
}

// Prefetches into L1, spread over the k loop, the C tile mr rows below this one: the tile the next call of the
// blocked nest updates (its innermost loop walks down the rows of one B panel; EmitGemmBody). C's rows are ldc
// apart, a page or more on large outputs, and between two k blocks the whole of C's block column passes through the
// cache: without this each call's first steps waited for its 16 C lines from L3 (a one-core 1024^3 model ran at 102
// GFLOP/s with C in place, 109 with the next tile prefetched, 113 without C; Zen 4). Lines at steps
// period / 2, period * 3 / 2, ..., the period the largest power of two that spreads the tile's lines over a full k
// block. The last call of a block column prefetches rows that belong to a later block (or lie past C: prefetches do
// not fault).
void EmitNextTilePrefetch(llvm::IRBuilder<>& b, const GemmTiling& t, llvm::Type* element, llvm::Value* c,
                          llvm::Value* ldc, llvm::Value* k, int64_t nominal_steps) {
  const int64_t row_bytes = t.nr * static_cast<int64_t>(element->getPrimitiveSizeInBits() / 8);
  const int64_t lines_per_row = (row_bytes + 63) / 64;
  const int64_t lines = t.mr * lines_per_row;
  int64_t period = 1;
  while (period * 2 * lines <= nominal_steps) period *= 2;
  llvm::LLVMContext& ctx = b.getContext();
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::BasicBlock* prefetch = llvm::BasicBlock::Create(ctx, "prefetch.c", fn);
  llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx, "latch.c", fn);
  llvm::Value* slot = b.CreateICmpEQ(b.CreateAnd(k, b.getInt64(period - 1)), b.getInt64(period / 2));
  b.CreateCondBr(b.CreateAnd(slot, b.CreateICmpSLT(k, b.getInt64(lines * period))), prefetch, latch);
  b.SetInsertPoint(prefetch);
  llvm::Value* q = b.CreateUDiv(k, b.getInt64(period));
  llvm::Value* row = b.CreateAdd(b.getInt64(t.mr), b.CreateUDiv(q, b.getInt64(lines_per_row)));
  llvm::Value* row_start = b.CreateGEP(element, c, b.CreateMul(row, ldc));
  llvm::Value* line =
      b.CreateGEP(b.getInt8Ty(), row_start, b.CreateMul(b.CreateURem(q, b.getInt64(lines_per_row)), b.getInt64(64)));
  b.CreateIntrinsic(llvm::Intrinsic::prefetch, {b.getPtrTy()}, {line, b.getInt32(0), b.getInt32(3), b.getInt32(1)});
  b.CreateBr(latch);
  b.SetInsertPoint(latch);
}

}  // namespace

llvm::FunctionType* GemmKernelType(llvm::LLVMContext& ctx, bool strided_b, bool copy_b) {
  assert(strided_b || !copy_b);
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type*> params = {ptr, ptr, ptr, i64, i64, llvm::Type::getInt1Ty(ctx), ptr};
  if (strided_b) params.push_back(i64);
  if (copy_b) params.push_back(ptr);
  return llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
}

llvm::Function* EmitGemmKernel(llvm::Module& module, const std::string& name, const GemmTiling& t, llvm::Type* element,
                               const TargetInfo& target, const GemmKernelSteps& steps, const GemmKernelStep& step,
                               int64_t in_place_b_bytes, bool copy_b) {
  const bool strided_b = in_place_b_bytes > 0;
  assert(strided_b || !copy_b);
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Function* fn =
      llvm::Function::Create(GemmKernelType(ctx, strided_b, copy_b), llvm::GlobalValue::InternalLinkage, name, module);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // One copy per module, compiled once: a call per tile is nothing next to its kc x mr x nr/vector_width FMAs.
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(kSharedFunctionAttribute);
  SetFunctionTargetAttributes(*fn, target);
  for (unsigned i = 0; i < 3; ++i) fn->addParamAttr(i, llvm::Attribute::NoAlias);
  if (copy_b) fn->addParamAttr(8, llvm::Attribute::NoAlias);
  llvm::Value* ap = fn->getArg(0);
  llvm::Value* bp = fn->getArg(1);
  llvm::Value* c = fn->getArg(2);
  llvm::Value* ldc = fn->getArg(3);
  llvm::Value* kc = fn->getArg(4);
  llvm::Value* first = fn->getArg(5);
  llvm::Value* pf = fn->getArg(6);
  llvm::Value* ldb = strided_b ? fn->getArg(7) : nullptr;
  llvm::Value* b_copy = copy_b ? fn->getArg(8) : nullptr;

  const int64_t vw = t.vector_width, cols = t.nr / t.vector_width;
  auto* vt = llvm::FixedVectorType::get(element, static_cast<unsigned>(vw));
  llvm::Align scalar_align(element->getPrimitiveSizeInBits() / 8);
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* init_load = llvm::BasicBlock::Create(ctx, "init.load", fn);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, "k", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, "store", fn);
  b.SetInsertPoint(entry);
  llvm::Value* trips = steps(b, kc);
  b.CreateCondBr(first, loop, init_load);

  auto c_address = [&](int64_t r, int64_t col) {
    llvm::Value* row = b.CreateInBoundsGEP(element, c, b.CreateNSWMul(ldc, b.getInt64(r)));
    return b.CreateInBoundsGEP(element, row, b.getInt64(col * vw));
  };
  b.SetInsertPoint(init_load);
  std::vector<llvm::Value*> loaded;
  for (int64_t r = 0; r < t.mr; ++r) {
    for (int64_t col = 0; col < cols; ++col) loaded.push_back(b.CreateAlignedLoad(vt, c_address(r, col), scalar_align));
  }
  b.CreateBr(loop);

  b.SetInsertPoint(loop);
  llvm::PHINode* k = b.CreatePHI(i64, 3, "k");
  k->addIncoming(b.getInt64(0), entry);
  k->addIncoming(b.getInt64(0), init_load);
  std::vector<llvm::PHINode*> acc_phis;
  std::vector<llvm::Value*> acc;
  llvm::Constant* zero = llvm::Constant::getNullValue(vt);  // +0.0, as the interpreter's accumulator starts
  for (size_t i = 0; i < loaded.size(); ++i) {
    llvm::PHINode* phi = b.CreatePHI(vt, 3, "acc");
    phi->addIncoming(zero, entry);
    phi->addIncoming(loaded[i], init_load);
    acc_phis.push_back(phi);
    acc.push_back(phi);
  }
  step(b, ap, bp, ldb, b_copy, k, acc);
  if (strided_b && !copy_b) {
    // Row k of the panel the next call reads in place (pf, rows ldb elements apart): B's rows a page or more apart
    // defeat the hardware prefetchers, and each one arrives a whole call (kc steps) before it is read. Into L2, not
    // L1 (EmitGemmPrefetch): 8 x 4096 x 4096 ran at 45 GFLOP/s prefetching into L1, 100 into L2 (one Zen 4 core).
    EmitGemmPrefetch(b, pf, in_place_b_bytes, b.CreateNSWMul(k, ldb), t.nr * in_place_b_bytes);
  } else {
    // Line k / kGemmPrefetchSteps of pf, at the first step of every kGemmPrefetchSteps: the next B block's source
    // arrives spread over the FMA-bound loop instead of stalling its packer (EmitGemmBody). A kernel that packs the
    // panel it reads (copy_b) is one of the packed kernels' calls of its block and prefetches like them.
    llvm::BasicBlock* prefetch_line = llvm::BasicBlock::Create(ctx, "prefetch", fn);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx, "latch", fn);
    b.CreateCondBr(b.CreateICmpEQ(b.CreateAnd(k, b.getInt64(kGemmPrefetchSteps - 1)), b.getInt64(0)), prefetch_line,
                   latch);
    b.SetInsertPoint(prefetch_line);
    EmitGemmPrefetch(b, pf, 64, b.CreateUDiv(k, b.getInt64(kGemmPrefetchSteps)), 64);
    b.CreateBr(latch);
    b.SetInsertPoint(latch);
    EmitNextTilePrefetch(b, t, element, c, ldc, k, NominalSteps(b, t, steps));
    if (copy_b) {
      // The row kGemmCopyPrefetchRows ahead of this step's in B's panel (past the block: the next k block's rows of
      // the same columns). The next block's source prefetched by the previous block's calls has left L2 by the time
      // it is read (the packed block and A's panels take it), and this call reads a whole panel in one pass: the
      // MLP's first calls on its panels ran 2.8x slower than the others without it, 1.6x with it (Zen 4, one core).
      EmitGemmPrefetch(b, bp, in_place_b_bytes,
                       b.CreateNSWMul(b.CreateNSWAdd(k, b.getInt64(kGemmCopyPrefetchRows)), ldb),
                       t.nr * in_place_b_bytes);
    }
  }
  llvm::BasicBlock* latch = b.GetInsertBlock();
  llvm::Value* next = b.CreateNSWAdd(k, b.getInt64(1));
  k->addIncoming(next, latch);
  for (size_t i = 0; i < acc.size(); ++i) acc_phis[i]->addIncoming(acc[i], latch);
  b.CreateCondBr(b.CreateICmpSLT(next, trips), loop, exit);

  b.SetInsertPoint(exit);
  for (int64_t r = 0; r < t.mr; ++r) {
    for (int64_t col = 0; col < cols; ++col) {
      b.CreateAlignedStore(acc[static_cast<size_t>(r * cols + col)], c_address(r, col), scalar_align);
    }
  }
  b.CreateRetVoid();
  return fn;
}

llvm::Function* GetKernel(llvm::Module& module, llvm::Type* element, const GemmTiling& t, bool b_times_a, bool fma,
                          const TargetInfo& target, bool strided_b, GemmOperandLoad b_load, bool copy_b) {
  assert(b_load == GemmOperandLoad::kNative ||
         (strided_b && element->isFloatTy() &&
          (b_load == GemmOperandLoad::kWidenBf16 || b_load == GemmOperandLoad::kWidenF16)));
  const bool widen = b_load != GemmOperandLoad::kNative;
  std::string name = fmt::format("xlac.gemm.kernel.{}.{}x{}{}{}{}{}", element->isFloatTy() ? "f32" : "f64", t.mr, t.nr,
                                 fma         ? ".fma"
                                 : b_times_a ? ".ba"
                                             : "",
                                 strided_b ? ".ldb" : "",
                                 !widen                                  ? ""
                                 : b_load == GemmOperandLoad::kWidenBf16 ? ".bf16"
                                                                         : ".f16",
                                 copy_b ? ".pack" : "");
  const int64_t vw = t.vector_width, cols = t.nr / t.vector_width;
  auto* vt = llvm::FixedVectorType::get(element, static_cast<unsigned>(vw));
  const uint64_t esize = element->getPrimitiveSizeInBits() / 8;
  llvm::Align scalar_align(esize), vector_align(esize * static_cast<uint64_t>(vw));
  auto steps = [](llvm::IRBuilder<>&, llvm::Value* kc) { return kc; };
  auto step = [=](llvm::IRBuilder<>& b, llvm::Value* ap, llvm::Value* bp, llvm::Value* ldb, llvm::Value* b_copy,
                  llvm::Value* k, std::vector<llvm::Value*>& acc) {
    std::vector<llvm::Value*> b_vec;
    if (widen) {
      // vw 16-bit elements per vector, widened exactly: bf16 bits shifted into an f32's high half, f16 extended.
      llvm::Value* b_row = b.CreateInBoundsGEP(b.getInt16Ty(), bp, b.CreateNSWMul(k, ldb));
      auto* narrow = llvm::FixedVectorType::get(b.getInt16Ty(), static_cast<unsigned>(vw));
      for (int64_t col = 0; col < cols; ++col) {
        llvm::Value* bits = b.CreateAlignedLoad(
            narrow, b.CreateInBoundsGEP(b.getInt16Ty(), b_row, b.getInt64(col * vw)), llvm::Align(2));
        if (b_load == GemmOperandLoad::kWidenBf16) {
          llvm::Value* wide = b.CreateShl(b.CreateZExt(bits, llvm::FixedVectorType::get(b.getInt32Ty(), vw)), 16);
          b_vec.push_back(b.CreateBitCast(wide, vt));
        } else {
          b_vec.push_back(b.CreateFPExt(b.CreateBitCast(bits, llvm::FixedVectorType::get(b.getHalfTy(), vw)), vt));
        }
      }
    } else {
      llvm::Value* b_row = b.CreateInBoundsGEP(element, bp, b.CreateNSWMul(k, ldb ? ldb : b.getInt64(t.nr)));
      for (int64_t col = 0; col < cols; ++col) {
        b_vec.push_back(b.CreateAlignedLoad(vt, b.CreateInBoundsGEP(element, b_row, b.getInt64(col * vw)),
                                            ldb ? scalar_align : vector_align));
      }
    }
    if (b_copy != nullptr) {
      // Row k of the packed panel: what the packer would have written (widened values for a narrow B).
      llvm::Value* packed_row = b.CreateInBoundsGEP(element, b_copy, b.CreateNSWMul(k, b.getInt64(t.nr)));
      for (int64_t col = 0; col < cols; ++col) {
        b.CreateAlignedStore(b_vec[col], b.CreateInBoundsGEP(element, packed_row, b.getInt64(col * vw)), vector_align);
      }
    }
    llvm::Value* a_row = b.CreateInBoundsGEP(element, ap, b.CreateNSWMul(k, b.getInt64(t.mr)));
    for (int64_t r = 0; r < t.mr; ++r) {
      llvm::Value* a = b.CreateAlignedLoad(element, b.CreateInBoundsGEP(element, a_row, b.getInt64(r)), scalar_align);
      llvm::Value* splat = b.CreateVectorSplat(static_cast<unsigned>(vw), a);
      for (int64_t col = 0; col < cols; ++col) {
        size_t i = static_cast<size_t>(r * cols + col);
        if (fma) {
          acc[i] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vt}, {splat, b_vec[col], acc[i]});
          continue;
        }
        llvm::Value* product = b_times_a ? b.CreateFMul(b_vec[col], splat) : b.CreateFMul(splat, b_vec[col]);
        acc[i] = b.CreateFAdd(acc[i], product);
      }
    }
  };
  return EmitGemmKernel(module, name, t, element, target, steps, step,
                        strided_b ? (widen ? 2 : static_cast<int64_t>(esize)) : 0, copy_b);
}

}  // namespace xlac::codegen::internal
