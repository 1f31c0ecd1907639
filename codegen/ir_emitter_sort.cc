// sort: multi-operand, any dimension, the comparator emitted inline as scalar code.
//
// The interpreter (runtime/interpreter/sort.cc) std::stable_sorts every row with the comparator, whatever
// is_stable says. For a comparator that is a strict weak ordering the stably sorted row is unique, so any stable
// algorithm reproduces it; this one is a bottom-up merge sort that takes from the right run only when
// less(right, left). Each row is copied into a contiguous scratch buffer (one per operand, heap-allocated once per
// sort; allocation failure reports a runtime error and stops), sorted by ping-ponging between two halves, and copied
// out. A comparator that is not a strict weak ordering (say LT on floats with NaNs) may order rows differently from
// libstdc++'s std::stable_sort; XLA's own sorts use TOTALORDER comparisons, which are strict weak orderings.
#include <algorithm>
#include <cstdint>

#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Intrinsics.h"

namespace xlac::codegen::internal {

absl::Status IrEmitter::EmitSort(const Instruction& inst) {
  if (inst.operand_count() == 0 || inst.called_computations().empty()) return Unimplemented(inst, "malformed sort");
  size_t n = static_cast<size_t>(inst.operand_count());
  std::vector<IrArray> inputs, outputs;
  for (size_t k = 0; k < n; ++k) {
    inputs.push_back(ArrayFor(inst.operand(static_cast<int64_t>(k))));
    outputs.push_back(inst.shape().IsTuple() ? ArrayFor(&inst, {static_cast<int64_t>(k)}) : ArrayFor(&inst));
    if (!inputs.back().shape.IsStatic() || !outputs.back().shape.IsStatic()) {
      return Unimplemented(inst, "sort with dynamic shapes");
    }
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, inputs.back().shape.element_type));
  }
  const std::vector<int64_t>& dims = inputs[0].shape.dimensions;
  int64_t rank = static_cast<int64_t>(dims.size());
  const std::vector<int64_t>& attr = inst.dimensions();
  int64_t dim = attr.empty() ? rank - 1 : attr[0];
  if (rank > 0 && (dim < 0 || dim >= rank)) return Unimplemented(inst, "sort dimension {}", dim);
  int64_t len = rank == 0 ? 1 : dims[dim];
  for (int64_t d : dims) {
    if (d == 0) return absl::OkStatus();
  }
  if (rank == 0 || len == 1) {
    for (size_t k = 0; k < n; ++k) {
      IrArray& in = inputs[k];
      IrArray& out = outputs[k];
      ShapeLoop(out.shape, [&](const Index& index) { StoreRaw(out, index, LoadRaw(in, index)); });
    }
    return absl::OkStatus();
  }
  const Computation& less = *inst.called_computation(0);
  // Scratch: for operand k, two runs of `len` elements at offsets[k] and offsets[k] + len * width.
  std::vector<int64_t> offsets;
  int64_t scratch_bytes = 0;
  for (size_t k = 0; k < n; ++k) {
    offsets.push_back(scratch_bytes);
    scratch_bytes += 2 * len * ByteWidth(inputs[k].shape.element_type);
  }
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::FunctionCallee malloc_fn =
      llvm_module_.getOrInsertFunction("malloc", llvm::FunctionType::get(ptr, {i64}, false));
  llvm::FunctionCallee free_fn =
      llvm_module_.getOrInsertFunction("free", llvm::FunctionType::get(b_.getVoidTy(), {ptr}, false));
  llvm::Value* scratch = b_.CreateCall(malloc_fn, {I64(scratch_bytes)}, "sort.scratch");
  llvm::BasicBlock* sort_bb = llvm::BasicBlock::Create(ctx(), "sort.body", function_);
  llvm::BasicBlock* oom_bb = llvm::BasicBlock::Create(ctx(), "sort.oom", function_);
  llvm::BasicBlock* done_bb = llvm::BasicBlock::Create(ctx(), "sort.done", function_);
  b_.CreateCondBr(b_.CreateIsNull(scratch), oom_bb, sort_bb);
  b_.SetInsertPoint(oom_bb);
  {
    llvm::FunctionCallee set_error = llvm_module_.getOrInsertFunction(
        "xlac_rt_set_error", llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr}, false));
    llvm::Value* message = b_.CreateGlobalString("sort: out of memory for the scratch buffer", "sort.oom.msg");
    b_.CreateCall(set_error, {function_->getArg(1), message});
    b_.CreateRetVoid();  // a failed device stops (runtime/cpu/xlac_runtime.h)
  }
  b_.SetInsertPoint(sort_bb);

  // Loop variables live in entry-block allocas (mem2reg makes them registers).
  auto var = [&](const char* name) {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    return entry.CreateAlloca(i64, nullptr, name);
  };
  llvm::AllocaInst *width_v = var("sort.width"), *src_v = var("sort.src"), *lo_v = var("sort.lo"), *i_v = var("sort.i"),
                   *j_v = var("sort.j"), *k_v = var("sort.k");
  auto load = [&](llvm::AllocaInst* v) { return b_.CreateLoad(i64, v); };
  // while (cond()) body();
  auto while_loop = [&](const std::function<llvm::Value*()>& cond, const std::function<void()>& body) {
    llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx(), "sort.cond", function_);
    llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx(), "sort.loop", function_);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx(), "sort.exit", function_);
    b_.CreateBr(header);
    b_.SetInsertPoint(header);
    b_.CreateCondBr(cond(), body_bb, exit);
    b_.SetInsertPoint(body_bb);
    body();
    b_.CreateBr(header);
    b_.SetInsertPoint(exit);
  };
  // Operand k's two scratch halves as one array of 2 * len elements; element e of half h is at(h, e).
  auto scratch_array = [&](size_t k) {
    IrArray a;
    a.shape = Shape::Array(inputs[k].shape.element_type, {2 * len});
    a.strides = {1};
    a.base = b_.CreateInBoundsGEP(b_.getInt8Ty(), scratch, I64(offsets[k]));
    return a;
  };
  auto at = [&](llvm::Value* half, llvm::Value* e) { return b_.CreateNSWAdd(b_.CreateNSWMul(half, I64(len)), e); };

  absl::Status status;
  // Moves one element into dst[k] from the runs src[i..mid) and src[j..hi): from the right run only when
  // less(right, left), so equal elements keep their order.
  auto merge_step = [&](const std::vector<IrArray>& runs, llvm::Value* src, llvm::Value* dst, llvm::Value* mid,
                        llvm::Value* hi) {
    llvm::Value* i = load(i_v);
    llvm::Value* j = load(j_v);
    llvm::Value* both = b_.CreateAnd(b_.CreateICmpSLT(i, mid), b_.CreateICmpSLT(j, hi));
    llvm::Value* left_done = b_.CreateICmpSGE(i, mid);
    llvm::BasicBlock* from = b_.GetInsertBlock();
    llvm::BasicBlock* cmp_bb = llvm::BasicBlock::Create(ctx(), "sort.compare", function_);
    llvm::BasicBlock* take_bb = llvm::BasicBlock::Create(ctx(), "sort.take", function_);
    b_.CreateCondBr(both, cmp_bb, take_bb);
    b_.SetInsertPoint(cmp_bb);
    std::vector<llvm::Value*> args;
    for (size_t k = 0; k < n; ++k) {
      args.push_back(LoadCompute(runs[k], {at(src, j)}));
      args.push_back(LoadCompute(runs[k], {at(src, i)}));
    }
    llvm::Value* right_first = b_.getFalse();
    absl::StatusOr<std::vector<llvm::Value*>> r = EmitScalarComputation(less, args);
    if (!r.ok()) {
      status = r.status();
    } else if (r->size() != 1 || !(*r)[0]->getType()->isIntegerTy(1)) {
      status = Unimplemented(inst, "comparator that does not return pred");
    } else {
      right_first = (*r)[0];
    }
    llvm::BasicBlock* cmp_end = b_.GetInsertBlock();
    b_.CreateBr(take_bb);
    b_.SetInsertPoint(take_bb);
    llvm::PHINode* take_right = b_.CreatePHI(b_.getInt1Ty(), 2);
    // When one run is exhausted, take from the other.
    take_right->addIncoming(left_done, from);
    take_right->addIncoming(right_first, cmp_end);
    llvm::Value* pick = b_.CreateSelect(take_right, j, i);
    llvm::Value* k_pos = load(k_v);
    for (size_t k = 0; k < n; ++k) StoreRaw(runs[k], {at(dst, k_pos)}, LoadRaw(runs[k], {at(src, pick)}));
    llvm::Value* step = b_.CreateZExt(take_right, i64);
    b_.CreateStore(b_.CreateNSWAdd(j, step), j_v);
    b_.CreateStore(b_.CreateNSWAdd(i, b_.CreateXor(step, I64(1))), i_v);
    b_.CreateStore(b_.CreateNSWAdd(k_pos, I64(1)), k_v);
  };
  // One bottom-up pass: merges adjacent runs of `width` elements from half src into half dst.
  auto merge_pass = [&](const std::vector<IrArray>& runs, llvm::Value* src, llvm::Value* dst, llvm::Value* width) {
    b_.CreateStore(I64(0), lo_v);
    while_loop(
        [&] { return b_.CreateICmpSLT(load(lo_v), I64(len)); },
        [&] {
          llvm::Value* lo = load(lo_v);
          llvm::Value* mid = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, b_.CreateNSWAdd(lo, width), I64(len));
          llvm::Value* hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                                     b_.CreateNSWAdd(lo, b_.CreateNSWMul(width, I64(2))), I64(len));
          b_.CreateStore(lo, i_v);
          b_.CreateStore(mid, j_v);
          b_.CreateStore(lo, k_v);
          while_loop([&] { return b_.CreateICmpSLT(load(k_v), hi); }, [&] { merge_step(runs, src, dst, mid, hi); });
          b_.CreateStore(hi, lo_v);
        });
  };
  std::vector<int64_t> outer = dims;
  outer[dim] = 1;
  LoopNest(outer, MajorToMinor(outputs[0].shape), [&](const Index& row) {
    if (!status.ok()) return;
    std::vector<IrArray> runs;
    for (size_t k = 0; k < n; ++k) runs.push_back(scratch_array(k));
    // Row -> scratch half 0.
    ForLoop(0, len, [&](llvm::Value* e) {
      Index idx = row;
      idx[dim] = e;
      for (size_t k = 0; k < n; ++k) StoreRaw(runs[k], {e}, LoadRaw(inputs[k], idx));
    });
    b_.CreateStore(I64(1), width_v);
    b_.CreateStore(I64(0), src_v);
    while_loop([&] { return b_.CreateICmpSLT(load(width_v), I64(len)); },
               [&] {
                 llvm::Value* width = load(width_v);
                 llvm::Value* src = load(src_v);
                 llvm::Value* dst = b_.CreateXor(src, I64(1));
                 merge_pass(runs, src, dst, width);
                 b_.CreateStore(dst, src_v);
                 b_.CreateStore(b_.CreateNSWMul(width, I64(2)), width_v);
               });
    // Sorted half -> row.
    llvm::Value* src = load(src_v);
    ForLoop(0, len, [&](llvm::Value* e) {
      Index idx = row;
      idx[dim] = e;
      for (size_t k = 0; k < n; ++k) StoreRaw(outputs[k], idx, LoadRaw(runs[k], {at(src, e)}));
    });
  });
  b_.CreateCall(free_fn, {scratch});
  b_.CreateBr(done_bb);
  b_.SetInsertPoint(done_bb);
  return status;
}

}  // namespace xlac::codegen::internal
