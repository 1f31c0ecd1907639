// reduce-window (variadic) and select-and-scatter, with every window attribute (size, stride, padding including
// negative, base and window dilation).
//
// Numerics are the interpreter's (runtime/interpreter/reduce.cc):
//  - reduce-window: each output element starts from the init values and applies the reducer (inline, every op
//    rounded to its type) to the in-bounds window elements in row-major window order; positions in padding or
//    base-dilation holes are skipped (the init values stand for them).
//  - select-and-scatter: the result starts as the init value everywhere; source elements are visited in row-major
//    order; for each, the first in-bounds window element is selected and every later one replaces it when
//    select(selected, candidate) is false; then result[selected] = scatter(result[selected], source element).
#include <functional>

#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {
namespace {

absl::Status CheckWindow(const Instruction& inst, const Window* window, int64_t rank) {
  if (window == nullptr || static_cast<int64_t>(window->dimensions.size()) != rank) {
    return Unimplemented(inst, "window rank differs from operand rank");
  }
  for (const WindowDimension& wd : window->dimensions) {
    if (wd.size < 0 || wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1) {
      return Unimplemented(inst, "negative window size or non-positive stride/dilation");
    }
  }
  return absl::OkStatus();
}

// The window attribute; a rank-0 operand may omit it (an empty window).
const Window* WindowOf(const Instruction& inst, int64_t rank) {
  static const Window kEmpty;
  const AttrValue* v = inst.FindAttr("window");
  if (v == nullptr || v->kind != AttrKind::kWindow) return rank == 0 ? &kEmpty : nullptr;
  return &v->get<Window>();
}

// Calls body(operand_index) for every in-bounds window element of output index `out_index` in row-major window order,
// skipping the others with branches.
void WindowNest(IrEmitter& e, const Window& window, const std::vector<int64_t>& operand_dims,
                const std::vector<int64_t>& output_dims, const Index& out_index,
                const std::function<void(const Index&)>& body) {
  llvm::IRBuilder<>& b = e.b();
  Index x(operand_dims.size(), nullptr);
  std::function<void(size_t)> level = [&](size_t d) {
    if (d == operand_dims.size()) {
      body(x);
      return;
    }
    e.ForLoop(0, window.dimensions[d].size, [&](llvm::Value* w) {
      WindowTap tap = EmitWindowTap(b, window.dimensions[d], operand_dims[d], output_dims[d], out_index[d], w);
      x[d] = tap.x;
      if (tap.valid == nullptr) {
        level(d + 1);
        return;
      }
      llvm::Function* fn = b.GetInsertBlock()->getParent();
      llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(e.ctx(), "window.tap", fn);
      llvm::BasicBlock* cont = llvm::BasicBlock::Create(e.ctx(), "window.next", fn);
      b.CreateCondBr(tap.valid, then_bb, cont);
      b.SetInsertPoint(then_bb);
      level(d + 1);
      b.CreateBr(cont);
      b.SetInsertPoint(cont);
    });
  };
  level(0);
}

}  // namespace

absl::Status IrEmitter::EmitReduceWindow(const Instruction& inst) {
  size_t n = static_cast<size_t>(inst.operand_count()) / 2;
  if (n == 0 || inst.called_computations().empty()) return Unimplemented(inst, "malformed reduce-window");
  const Computation& reducer = *inst.called_computation(0);
  std::vector<IrArray> inputs, inits, outputs;
  for (size_t i = 0; i < n; ++i) {
    inputs.push_back(ArrayFor(inst.operand(static_cast<int64_t>(i))));
    inits.push_back(ArrayFor(inst.operand(static_cast<int64_t>(n + i))));
    outputs.push_back(inst.shape().IsTuple() ? ArrayFor(&inst, {static_cast<int64_t>(i)}) : ArrayFor(&inst));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, inputs.back().shape.element_type));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, outputs.back().shape.element_type));
  }
  const std::vector<int64_t>& in_dims = inputs[0].shape.dimensions;
  const Window* window = WindowOf(inst, static_cast<int64_t>(in_dims.size()));
  XLAC_RETURN_IF_ERROR(CheckWindow(inst, window, static_cast<int64_t>(in_dims.size())));
  std::vector<llvm::AllocaInst*> accs;
  {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    for (size_t i = 0; i < n; ++i) {
      accs.push_back(entry.CreateAlloca(ComputeType(outputs[i].shape.element_type), nullptr, "rw.acc"));
    }
  }
  absl::Status status;
  ShapeLoop(outputs[0].shape, [&](const Index& out_index) {
    for (size_t i = 0; i < n; ++i) b_.CreateStore(LoadCompute(inits[i], {}), accs[i]);
    WindowNest(*this, *window, in_dims, outputs[0].shape.dimensions, out_index, [&](const Index& in_index) {
      if (!status.ok()) return;
      std::vector<llvm::Value*> args;
      for (size_t i = 0; i < n; ++i) args.push_back(b_.CreateLoad(accs[i]->getAllocatedType(), accs[i]));
      for (size_t i = 0; i < n; ++i) args.push_back(LoadCompute(inputs[i], in_index));
      absl::StatusOr<std::vector<llvm::Value*>> r = EmitScalarComputation(reducer, args);
      if (!r.ok()) {
        status = r.status();
        return;
      }
      if (r->size() != n) {
        status = Unimplemented(inst, "reducer result arity");
        return;
      }
      for (size_t i = 0; i < n; ++i) b_.CreateStore((*r)[i], accs[i]);
    });
    for (size_t i = 0; i < n; ++i) {
      StoreCompute(outputs[i], out_index, b_.CreateLoad(accs[i]->getAllocatedType(), accs[i]));
    }
  });
  return status;
}

absl::Status IrEmitter::EmitSelectAndScatter(const Instruction& inst) {
  if (inst.operand_count() != 3 || inst.called_computations().size() != 2 || !inst.shape().IsArray()) {
    return Unimplemented(inst, "malformed select-and-scatter");
  }
  const Computation& select = *inst.called_computation(0);
  const Computation& scatter = *inst.called_computation(1);
  IrArray operand = ArrayFor(inst.operand(0)), source = ArrayFor(inst.operand(1)), init = ArrayFor(inst.operand(2));
  IrArray out = ArrayFor(&inst);
  PrimitiveType operand_type = operand.shape.element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, operand_type));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, source.shape.element_type));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, out.shape.element_type));
  const std::vector<int64_t>& in_dims = operand.shape.dimensions;
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  const Window* window = WindowOf(inst, rank);
  XLAC_RETURN_IF_ERROR(CheckWindow(inst, window, rank));
  llvm::AllocaInst *has, *selected;
  std::vector<llvm::AllocaInst*> selected_index;
  {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    has = entry.CreateAlloca(b_.getInt1Ty(), nullptr, "sas.has");
    selected = entry.CreateAlloca(ComputeType(operand_type), nullptr, "sas.value");
    for (int64_t d = 0; d < rank; ++d) selected_index.push_back(entry.CreateAlloca(b_.getInt64Ty(), nullptr, "sas.at"));
  }
  ShapeLoop(out.shape, [&](const Index& index) { StoreRaw(out, index, LoadRaw(init, {})); });
  absl::Status status;
  auto emit_if = [&](llvm::Value* cond, const std::function<void()>& then, const std::function<void()>& otherwise) {
    llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx(), "sas.then", function_);
    llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx(), "sas.else", function_);
    llvm::BasicBlock* cont = llvm::BasicBlock::Create(ctx(), "sas.cont", function_);
    b_.CreateCondBr(cond, then_bb, else_bb);
    b_.SetInsertPoint(then_bb);
    if (then) then();
    b_.CreateBr(cont);
    b_.SetInsertPoint(else_bb);
    if (otherwise) otherwise();
    b_.CreateBr(cont);
    b_.SetInsertPoint(cont);
  };
  // Source elements in row-major (logical) order: the scatter updates of overlapping windows happen in that order.
  std::vector<int64_t> src_order(static_cast<size_t>(source.shape.rank()));
  for (size_t d = 0; d < src_order.size(); ++d) src_order[d] = static_cast<int64_t>(d);
  LoopNest(source.shape.dimensions, src_order, [&](const Index& s) {
    b_.CreateStore(b_.getInt1(false), has);
    WindowNest(*this, *window, in_dims, source.shape.dimensions, s, [&](const Index& x) {
      if (!status.ok()) return;
      llvm::Value* candidate = LoadCompute(operand, x);
      auto take = [&]() {
        b_.CreateStore(candidate, selected);
        for (int64_t d = 0; d < rank; ++d) b_.CreateStore(x[d], selected_index[d]);
      };
      emit_if(
          b_.CreateLoad(b_.getInt1Ty(), has),
          [&]() {
            llvm::Value* current = b_.CreateLoad(selected->getAllocatedType(), selected);
            absl::StatusOr<std::vector<llvm::Value*>> keep = EmitScalarComputation(select, {current, candidate});
            if (!keep.ok() || keep->size() != 1 || !(*keep)[0]->getType()->isIntegerTy(1)) {
              status = keep.ok() ? Unimplemented(inst, "select computation must return pred[]") : keep.status();
              return;
            }
            emit_if((*keep)[0], nullptr, take);
          },
          [&]() {
            b_.CreateStore(b_.getInt1(true), has);
            take();
          });
    });
    if (!status.ok()) return;
    emit_if(
        b_.CreateLoad(b_.getInt1Ty(), has),
        [&]() {
          Index at;
          for (int64_t d = 0; d < rank; ++d) at.push_back(b_.CreateLoad(b_.getInt64Ty(), selected_index[d]));
          llvm::Value* current = LoadCompute(out, at);
          absl::StatusOr<std::vector<llvm::Value*>> r =
              EmitScalarComputation(scatter, {current, LoadCompute(source, s)});
          if (!r.ok() || r->size() != 1) {
            status = r.ok() ? Unimplemented(inst, "scatter computation must return one value") : r.status();
            return;
          }
          StoreCompute(out, at, (*r)[0]);
        },
        nullptr);
  });
  return status;
}

WindowTap EmitWindowTap(llvm::IRBuilder<>& b, const WindowDimension& wd, int64_t operand_size, int64_t output_size,
                        llvm::Value* o, llvm::Value* w) {
  llvm::Value* x =
      b.CreateNSWAdd(b.CreateNSWMul(o, b.getInt64(wd.stride)), b.CreateNSWMul(w, b.getInt64(wd.window_dilation)));
  x = b.CreateNSWSub(x, b.getInt64(wd.padding_low));
  WindowTap tap;
  int64_t max_x = (output_size - 1) * wd.stride - wd.padding_low + (wd.size - 1) * wd.window_dilation;
  if (wd.base_dilation == 1) {
    tap.x = x;
    if (-wd.padding_low >= 0 && max_x < operand_size) return tap;
    tap.valid = b.CreateAnd(b.CreateICmpSGE(x, b.getInt64(0)), b.CreateICmpSLT(x, b.getInt64(operand_size)));
    return tap;
  }
  llvm::Value* nonneg = b.CreateICmpSGE(x, b.getInt64(0));
  llvm::Value* on_grid = b.CreateICmpEQ(b.CreateURem(x, b.getInt64(wd.base_dilation)), b.getInt64(0));
  llvm::Value* below = b.CreateICmpSLT(x, b.getInt64(operand_size * wd.base_dilation));
  tap.valid = b.CreateAnd(b.CreateAnd(nonneg, on_grid), below);
  tap.x = b.CreateUDiv(x, b.getInt64(wd.base_dilation));
  return tap;
}

}  // namespace xlac::codegen::internal
