// Parallel loops inside one device: the loop body becomes an outlined function
//   void xlac.par.<name>(i64 begin, i64 end, ptr captures)
// that xlac_rt_device_parallel_for (runtime/cpu/xlac_runtime.h) calls on disjoint ranges of [0, n) from the
// device's threads. The body is emitted directly into the outlined function; every value of the enclosing function it
// uses (buffer bases, loop-invariant addresses) is then rewritten to a load from a captures struct that the enclosing
// function fills right before the call (closure conversion after the fact, so the emitters' closures need no
// changes). Loops split only over independent outputs, never inside one output element's computation, so the
// number of threads and the way the runtime chunks a range never change a result.
#include <algorithm>

#include "codegen/ir_emitter_gemm.h"
#include "codegen/ir_emitter_internal.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/Verifier.h"

namespace xlac::codegen::internal {
namespace {

// Below this many elements (or multiply-adds) a loop stays inline: waking a worker costs about as much as the
// loop itself.
constexpr int64_t kMinParallelWork = int64_t{1} << 15;
// Units a parallel loop nest is cut into: a few per thread on the largest machines we expect, so the runtime can
// balance them, but none smaller than kMinUnitWork (a unit's loop must stay long enough to vectorize and to pay
// for its share of the scheduling).
constexpr int64_t kTargetUnits = 64;
constexpr int64_t kMinUnitWork = 1024;
// Bytes of row data a block of a row group may touch (codegen/row_groups.h): most of a 32-48 KiB L1.
constexpr int64_t kRowBlockBytes = int64_t{24} << 10;
// A multiply-add of a GEMM counts as this fraction of an element of a loop nest: GEMMs run about this much faster
// per multiply-add than a loop nest per element, and each unit packs its own panels.
constexpr int64_t kGemmWorkDivisor = 8;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

void IrEmitter::ForRange(llvm::Value* start, llvm::Value* end, const std::function<void(llvm::Value*)>& body,
                         bool vectorize) {
  llvm::Function* fn = b_.GetInsertBlock()->getParent();
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx(), "range", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx(), "range.exit", fn);
  b_.CreateCondBr(b_.CreateICmpSLT(start, end), loop, exit);
  b_.SetInsertPoint(loop);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, "iv");
  iv->addIncoming(start, preheader);
  body(iv);
  llvm::Value* next = b_.CreateNSWAdd(iv, I64(1));
  iv->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(next, end), loop, exit);
  if (!vectorize) KeepLoopScalar(*latch, /*unroll=*/true);
  b_.SetInsertPoint(exit);
}

bool IrEmitter::CanParallelize(int64_t work) const {
  return options_.parallel && function_ == entry_function_ && !row_ && work >= kMinParallelWork;
}

absl::Status IrEmitter::ParallelFor(int64_t n, std::string_view name,
                                    const std::function<absl::Status(llvm::Value*, llvm::Value*)>& body,
                                    bool one_range_per_thread) {
  if (n <= 0) return absl::OkStatus();
  if (n == 1 || function_ != entry_function_ || row_ || !options_.parallel) return body(I64(0), I64(n));
  llvm::Function* outer = function_;
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  auto* type = llvm::FunctionType::get(b_.getVoidTy(), {i64, i64, ptr}, false);
  llvm::Function* fn =
      llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, fmt::format("xlac.par.{}", name), llvm_module_);
  fn->getArg(0)->setName("begin");
  fn->getArg(1)->setName("end");
  fn->getArg(2)->setName("captures");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addParamAttr(2, llvm::Attribute::NoAlias);
  fn->addParamAttr(2, llvm::Attribute::ReadOnly);
  SetFunctionTargetAttributes(*fn, options_.target);

  llvm::IRBuilderBase::InsertPoint saved = b_.saveIP();
  function_ = fn;
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx(), "entry", fn);
  llvm::BasicBlock* start = llvm::BasicBlock::Create(ctx(), "body", fn);
  b_.SetInsertPoint(entry);
  b_.CreateBr(start);
  b_.SetInsertPoint(start);
  absl::Status status = body(fn->getArg(0), fn->getArg(1));
  b_.CreateRetVoid();
  function_ = outer;
  b_.restoreIP(saved);
  XLAC_RETURN_IF_ERROR(status);

  // Values of the enclosing function the body uses, in first-use order (deterministic output).
  llvm::MapVector<llvm::Value*, std::vector<llvm::Use*>> captures;
  for (llvm::BasicBlock& block : *fn) {
    for (llvm::Instruction& inst : block) {
      for (llvm::Use& use : inst.operands()) {
        llvm::Value* v = use.get();
        llvm::Function* owner = nullptr;
        if (auto* def = llvm::dyn_cast<llvm::Instruction>(v)) owner = def->getFunction();
        if (auto* arg = llvm::dyn_cast<llvm::Argument>(v)) owner = arg->getParent();
        if (owner == nullptr || owner == fn) continue;
        // Bugs in an emitter, not user errors: a value of another outlined function does not exist here, and a
        // stack slot of the enclosing function would be shared by every thread.
        if (owner != outer) return absl::InternalError(fmt::format("parallel loop {} uses a foreign value", name));
        if (llvm::isa<llvm::AllocaInst>(v)) {
          return absl::InternalError(fmt::format("parallel loop {} captures a stack slot", name));
        }
        captures[v].push_back(&use);
      }
    }
  }
  std::vector<llvm::Type*> fields;
  for (auto& [value, uses] : captures) fields.push_back(value->getType());
  llvm::StructType* frame = llvm::StructType::get(ctx(), fields);

  llvm::IRBuilder<> unpack(entry->getTerminator());
  unsigned field = 0;
  for (auto& [value, uses] : captures) {
    llvm::Value* slot = unpack.CreateStructGEP(frame, fn->getArg(2), field++);
    llvm::LoadInst* loaded = unpack.CreateLoad(value->getType(), slot, value->getName());
    // A streamed result's base (or a pointer into it) stays one inside the loop.
    if (value->getType()->isPointerTy() && IsStreamedBase(llvm::getUnderlyingObject(value))) {
      TagStreamedBase(*loaded);
    }
    for (llvm::Use* use : uses) use->set(loaded);
  }

  llvm::IRBuilder<> at_entry(&outer->getEntryBlock(), outer->getEntryBlock().begin());
  llvm::AllocaInst* slot = at_entry.CreateAlloca(frame, nullptr, fmt::format("par.{}", name));
  b_.CreateLifetimeStart(slot);
  field = 0;
  for (auto& [value, uses] : captures) b_.CreateStore(value, b_.CreateStructGEP(frame, slot, field++));
  llvm::FunctionCallee callee = llvm_module_.getOrInsertFunction(
      one_range_per_thread ? "xlac_rt_device_parallel_split" : "xlac_rt_device_parallel_for",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, ptr, ptr}, false));
  b_.CreateCall(callee, {entry_function_->getArg(1), I64(n), fn, slot});
  // The frame is dead after the call (a while loop may run this again: lifetime.start above).
  b_.CreateLifetimeEnd(slot);
  return absl::OkStatus();
}

absl::Status IrEmitter::ParallelLoopNest(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                                         const std::vector<bool>& splittable, int64_t work, std::string_view name,
                                         const std::function<void(const Index&)>& body) {
  for (int64_t d : dims) {
    if (d == 0) return absl::OkStatus();
  }
  if (row_) return RowLoopNest(dims, order, body);
  // Outermost splittable dimensions move out of the nest until there are enough units; the last one is cut into
  // blocks. Everything else keeps its place and order inside a unit.
  std::vector<int64_t> hoisted;
  int64_t units = 1, split = -1, blocks = 1, block = 1;
  const int64_t target = std::clamp<int64_t>(work / kMinUnitWork, 2, kTargetUnits);
  if (CanParallelize(work)) {
    for (int64_t d : order) {
      if (!splittable[static_cast<size_t>(d)] || dims[d] == 1) continue;
      if (units * dims[d] >= target) {
        split = d;
        blocks = std::min(dims[d], CeilDiv(target, units));
        block = CeilDiv(dims[d], blocks);
        blocks = CeilDiv(dims[d], block);
        break;
      }
      hoisted.push_back(d);
      units *= dims[d];
    }
  }
  if (units * blocks <= 1) {
    LoopNest(dims, order, body);
    return absl::OkStatus();
  }
  return ParallelFor(units * blocks, name, [&](llvm::Value* begin, llvm::Value* end) {
    ForRange(begin, end, [&](llvm::Value* unit) {
      Index index(dims.size(), nullptr);
      llvm::Value* rest = unit;
      llvm::Value* lo = nullptr;
      llvm::Value* hi = nullptr;
      if (split >= 0) {
        lo = b_.CreateNSWMul(b_.CreateURem(rest, I64(blocks)), I64(block));
        hi = b_.CreateSelect(b_.CreateICmpSLT(b_.CreateNSWAdd(lo, I64(block)), I64(dims[split])),
                             b_.CreateNSWAdd(lo, I64(block)), I64(dims[split]));
        rest = b_.CreateUDiv(rest, I64(blocks));
      }
      for (size_t k = hoisted.size(); k-- > 0;) {
        int64_t d = hoisted[k];
        index[d] = k == 0 ? rest : b_.CreateURem(rest, I64(dims[d]));
        if (k > 0) rest = b_.CreateUDiv(rest, I64(dims[d]));
      }
      std::vector<int64_t> inner;
      for (int64_t d : order) {
        if (std::find(hoisted.begin(), hoisted.end(), d) == hoisted.end()) inner.push_back(d);
      }
      std::function<void(size_t)> level = [&](size_t k) {
        if (k == inner.size()) return body(index);
        int64_t d = inner[k];
        auto next = [&](llvm::Value* iv) {
          index[d] = iv;
          level(k + 1);
        };
        if (d == split) {
          ForRange(lo, hi, next);
        } else {
          ForLoop(0, dims[d], next);
        }
      };
      level(0);
    });
    return absl::OkStatus();
  });
}

absl::Status IrEmitter::RowLoopNest(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                                    const std::function<void(const Index&)>& body) {
  const size_t k = row_->rows.size();
  std::vector<int64_t> head(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(std::min(k, order.size())));
  std::sort(head.begin(), head.end());
  for (size_t i = 0; i < k; ++i) {
    if (i >= head.size() || head[i] != static_cast<int64_t>(i) || dims[i] != row_->rows[i]) {
      return absl::InternalError("a row group member does not iterate the group's rows first");
    }
  }
  Index index(dims.size(), nullptr);
  std::function<void(size_t)> level = [&](size_t j) {
    if (j == order.size()) return body(index);
    int64_t d = order[j];
    ForLoop(0, dims[d], [&](llvm::Value* iv) {
      index[d] = iv;
      level(j + 1);
    });
  };
  ForRange(row_->begin, row_->end, [&](llvm::Value* row) {
    llvm::Value* rest = row;
    for (size_t i = k; i-- > 0;) {
      index[i] = i == 0 ? rest : b_.CreateURem(rest, I64(row_->rows[i]));
      if (i > 0) rest = b_.CreateUDiv(rest, I64(row_->rows[i]));
    }
    level(k);
  });
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitRowGroup(const RowGroup& group) {
  int64_t rows = 1;
  for (int64_t r : group.rows) rows *= r;
  // Elements the members touch, for the parallel threshold.
  int64_t work = 0;
  for (const Instruction* m : group.members) {
    for (const Instruction* operand : m->operands()) {
      int64_t elements = 1;
      for (int64_t d : operand->shape().dimensions) elements *= d;
      work += elements;
    }
  }
  // Members run over a block of rows in turn (each member's loop covers every row of the block before the next
  // member starts): a row's reduction, which ends in a horizontal step and a broadcast the next member waits for,
  // then overlaps with the other rows' work instead of stalling the pipeline once per row. The block stays within a
  // budget of L1 (what the members read and write per row), so rows are still re-read from L1.
  int64_t bytes = 0;
  for (const Instruction* m : group.members) {
    bytes += m->shape().ByteSizeOf().value_or(0);
    for (const Instruction* operand : m->operands()) bytes += operand->shape().ByteSizeOf().value_or(0);
  }
  const int64_t per_row = std::max<int64_t>(1, bytes / std::max<int64_t>(rows, 1));
  const int64_t block = std::clamp<int64_t>(kRowBlockBytes / per_row, 1, 64);
  const int64_t blocks = CeilDiv(rows, block);
  auto emit_blocks = [&](llvm::Value* begin, llvm::Value* end) {
    absl::Status status;
    ForRange(begin, end, [&](llvm::Value* index) {
      llvm::Value* first = b_.CreateNSWMul(index, I64(block));
      llvm::Value* next = b_.CreateNSWAdd(first, I64(block));
      llvm::Value* last = b_.CreateSelect(b_.CreateICmpSLT(next, I64(rows)), next, I64(rows));
      row_ = RowContext{group.rows, first, last};
      for (const Instruction* m : group.members) {
        if (status.ok()) status = EmitInstruction(*m);
      }
      row_.reset();
    });
    return status;
  };
  if (!CanParallelize(work)) return emit_blocks(I64(0), I64(blocks));
  return ParallelFor(blocks, "rows." + group.members.front()->name(), emit_blocks);
}

absl::Status IrEmitter::ParallelShapeLoop(const Shape& shape, std::string_view name,
                                          const std::function<void(const Index&)>& body) {
  int64_t work = 1;
  for (int64_t d : shape.dimensions) work *= d;
  return ParallelLoopNest(shape.dimensions, MajorToMinor(shape), std::vector<bool>(shape.dimensions.size(), true), work,
                          name, body);
}

absl::Status IrEmitter::EmitGemmCalls(llvm::Function* gemm, const GemmSpec& spec, std::string_view name,
                                      int64_t problems, const std::function<GemmOperands(llvm::Value*)>& operands) {
  auto call = [&](const GemmOperands& p, llvm::Value* m0, llvm::Value* m1, llvm::Value* n0, llvm::Value* n1) {
    std::vector<llvm::Value*> args = {p.a, p.b, p.c, p.batch, m0, m1, n0, n1};
    for (llvm::Value* v : GemmShapeArguments(b_, spec, *gemm, options_.target)) args.push_back(v);
    b_.CreateCall(gemm, args);
  };
  int64_t work = problems * spec.m * spec.n * spec.k;
  if (!CanParallelize(work / kGemmWorkDivisor)) {
    ForLoop(0, problems, [&](llvm::Value* p) { call(operands(p), I64(0), I64(spec.m), I64(0), I64(spec.n)); });
    return absl::OkStatus();
  }
  // Enough problems (batch elements) for every thread: one whole GEMM per unit.
  if (problems >= 4) {
    return ParallelFor(problems, name, [&](llvm::Value* begin, llvm::Value* end) {
      ForRange(begin, end, [&](llvm::Value* p) { call(operands(p), I64(0), I64(spec.m), I64(0), I64(spec.n)); });
      return absl::OkStatus();
    });
  }
  // Otherwise split the rows or the columns of C (whichever has more register tiles) into contiguous ranges of
  // whole tiles, one range per thread: each range packs its own panels (all of B when the rows are split), so the
  // default few ranges per thread packed the same B panels up to four times as often (Zen 5, two threads:
  // 1024^3 6.6 -> 5.7 ms, BERT's 1024 x 3072 x 768 14.0 -> 12.9 ms with one range per thread).
  GemmTiling t = ChooseGemmTiling(spec, options_.target);
  bool columns = CeilDiv(spec.n, t.nr) >= CeilDiv(spec.m, t.mr);
  int64_t extent = columns ? spec.n : spec.m;
  int64_t tile = columns ? t.nr : t.mr;
  int64_t target = std::clamp<int64_t>(work / (kGemmWorkDivisor * kMinUnitWork), 2, kTargetUnits);
  int64_t unit = tile * std::max<int64_t>(1, CeilDiv(CeilDiv(extent, tile), target));
  int64_t units = CeilDiv(extent, unit);
  absl::Status status;
  ForLoop(0, problems, [&](llvm::Value* p) {
    GemmOperands ops = operands(p);
    absl::Status s = ParallelFor(
        units, name,
        [&](llvm::Value* begin, llvm::Value* end) {
          llvm::Value* lo = b_.CreateNSWMul(begin, I64(unit));
          llvm::Value* hi = b_.CreateNSWMul(end, I64(unit));
          hi = b_.CreateSelect(b_.CreateICmpSLT(hi, I64(extent)), hi, I64(extent));
          if (columns) {
            call(ops, I64(0), I64(spec.m), lo, hi);
          } else {
            call(ops, lo, hi, I64(0), I64(spec.n));
          }
          return absl::OkStatus();
        },
        /*one_range_per_thread=*/true);
    if (status.ok()) status = s;
  });
  return status;
}

}  // namespace xlac::codegen::internal
