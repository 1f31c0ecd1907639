// get-dimension-size / set-dimension-size (static shapes: values always fill their bounds, as in the interpreter) and
// batch-norm-{training,inference,grad}, which compute in double in the interpreter's exact order
// (runtime/interpreter/linalg.cc EvalBatchNorm) and round once on store.
#include <algorithm>
#include <array>
#include <functional>

#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {

bool IrEmitter::IsMiscOp(Opcode op) {
  switch (op) {
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
    case Opcode::kRaggedDot:
      return true;
    default:
      return false;
  }
}

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

std::vector<int64_t> Identity(size_t n) {
  std::vector<int64_t> order(n);
  for (size_t d = 0; d < n; ++d) order[d] = static_cast<int64_t>(d);
  return order;
}

}  // namespace

absl::Status IrEmitter::EmitMiscOp(const Instruction& inst) {
  Opcode op = inst.opcode();
  if (op == Opcode::kGetDimensionSize) {
    const std::vector<int64_t>& dims = inst.dimensions();
    const Shape& in = inst.operand(0)->shape();
    if (dims.size() != 1 || dims[0] < 0 || dims[0] >= in.rank() || !inst.shape().IsArray()) {
      return Unimplemented(inst, "expected one dimension");
    }
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, inst.shape().element_type));
    llvm::Type* ct = ComputeType(inst.shape().element_type);
    if (!ct->isIntegerTy()) return Unimplemented(inst, "non-integer result");
    StoreCompute(ArrayFor(&inst), {}, llvm::ConstantInt::get(ct, static_cast<uint64_t>(in.dimensions[dims[0]])));
    return absl::OkStatus();
  }
  if (op == Opcode::kSetDimensionSize) {
    const Shape& in = inst.operand(0)->shape();
    if (!inst.shape().IsArray() || in.dimensions != inst.shape().dimensions) {
      return Unimplemented(inst, "set-dimension-size that changes the bounds");
    }
    IrArray src = ArrayFor(inst.operand(0));
    IrArray dst = ArrayFor(&inst);
    if (src.slice == dst.slice) return absl::OkStatus();
    if (src.strides == dst.strides) {
      MemCopy(dst.base, src.base, std::min(src.slice.size, dst.slice.size));
      return absl::OkStatus();
    }
    ShapeLoop(dst.shape, [&](const Index& idx) { StoreRaw(dst, idx, LoadRaw(src, idx)); });
    return absl::OkStatus();
  }
  if (op == Opcode::kRaggedDot) return EmitRaggedDot(inst);
  return EmitBatchNorm(inst);
}

// double -> float rounded to odd: truncated toward zero, the lowest bit set when inexact. Rounding that to a format
// with at least two fewer significand bits gives the correctly rounded (nearest-even) result of the double.
llvm::Value* IrEmitter::FloatRoundedToOdd(llvm::Value* d) {
  llvm::Value* f = b_.CreateFPTrunc(d, b_.getFloatTy());
  llvm::Value* back = b_.CreateFPExt(f, b_.getDoubleTy());
  llvm::Value* inexact = b_.CreateFCmpONE(back, d);
  llvm::Value* away = b_.CreateFCmpOGT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, back),
                                       b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, d));
  llvm::Value* bits = b_.CreateBitCast(f, b_.getInt32Ty());
  bits = b_.CreateSelect(b_.CreateAnd(inexact, away), b_.CreateSub(bits, b_.getInt32(1)), bits);
  bits = b_.CreateSelect(inexact, b_.CreateOr(bits, b_.getInt32(1)), bits);
  return b_.CreateBitCast(bits, b_.getFloatTy());
}

absl::Status IrEmitter::EmitBatchNorm(const Instruction& inst) {
  Opcode op = inst.opcode();
  const Shape& x_shape = inst.operand(0)->shape();
  PrimitiveType t = x_shape.element_type;
  // The interpreter rounds its double results straight to the element type (once). f32 is an fptrunc; bf16 and f16
  // go through float rounded to odd, which keeps a double rounding from ever differing from a single one (float
  // has more than two extra bits over both).
  if (t != PrimitiveType::kF32 && t != PrimitiveType::kF64 && t != PrimitiveType::kBF16 && t != PrimitiveType::kF16) {
    return Unimplemented(inst, "batch norm on {}", PrimitiveTypeName(t));
  }
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray()) return Unimplemented(inst, "non-array operand");
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, operand->shape().element_type));
  }
  int64_t feature = inst.IntAttr("feature_index", 0);
  if (feature < 0 || feature >= x_shape.rank()) return Unimplemented(inst, "feature_index out of range");
  double eps = 0;
  if (const AttrValue* e = inst.FindAttr("epsilon"); e != nullptr && e->kind == AttrKind::kFloat) {
    eps = static_cast<float>(e->get<double>());
  }
  const std::vector<int64_t>& dims = x_shape.dimensions;
  int64_t features = dims[feature];
  int64_t total = 1;
  for (int64_t d : dims) total *= d;
  double count = static_cast<double>(features == 0 ? 0 : total / features);
  llvm::Type* f64 = b_.getDoubleTy();
  auto dconst = [&](double v) { return llvm::ConstantFP::get(f64, v); };
  auto widen = [&](const IrArray& a, llvm::Value* v) -> llvm::Value* {
    if (v->getType()->isDoubleTy()) return v;
    if (v->getType()->isFloatTy()) return b_.CreateFPExt(v, f64);
    return IsSignedIntegralType(a.shape.element_type) ? b_.CreateSIToFP(v, f64) : b_.CreateUIToFP(v, f64);
  };
  auto narrow = [&](const IrArray& a, llvm::Value* v) {
    PrimitiveType type = a.shape.element_type;
    if (type == PrimitiveType::kF32) v = b_.CreateFPTrunc(v, b_.getFloatTy());
    if (type == PrimitiveType::kBF16 || type == PrimitiveType::kF16) v = FloatRoundedToOdd(v);
    return v;
  };
  // The per-feature operands and results (scale, offset, mean, variance and their gradients), at feature f.
  auto load_f = [&](const IrArray& a, llvm::Value* f) { return widen(a, LoadCompute(a, {f})); };
  auto store_f = [&](const IrArray& a, llvm::Value* f, llvm::Value* v) { StoreCompute(a, {f}, narrow(a, v)); };
  // The arrays of x's shape (x, dy, the normalized output or x's gradient) at one element: `At` gives the element's
  // offset in an array's layout.
  using At = std::function<llvm::Value*(const IrArray&)>;
  auto flat = [&](const IrArray& a) {
    IrArray view = a;
    view.shape.dimensions = {total};
    view.strides = {1};
    return view;
  };
  auto load = [&](const IrArray& a, const At& at) { return widen(a, LoadCompute(flat(a), {at(a)})); };
  auto store = [&](const IrArray& a, const At& at, llvm::Value* v) { StoreCompute(flat(a), {at(a)}, narrow(a, v)); };
  // One feature's elements: the other dimensions in row-major order, so a per-feature sum sees its elements in the
  // interpreter's order (it sums over the whole array in row-major order, one accumulator per feature). Features are
  // independent and run in parallel; a feature's sums live in registers.
  //
  // When, in every array of x's shape, the dimensions before the feature dimension and those after it are each
  // contiguous (NCHW and NHWC both are), a feature's elements are `outer` runs of `inner`, and the parallel loop reads
  // those counts and the arrays' three strides as values of the kernel (frozen constants) instead of constants: the
  // loop bodies of every batch norm of one kind and element type are then the same function, which LLVM merges
  // before optimizing it (a CNN has dozens of batch norms of different sizes).
  std::vector<const IrArray*> big;
  IrArray x = ArrayFor(inst.operand(0));
  big.push_back(&x);
  // Stride of the dimensions [lo, hi) except `feature` walked as one run, or -1 when they are not contiguous.
  auto run_stride = [&](const IrArray& a, int64_t lo, int64_t hi) -> int64_t {
    int64_t stride = 0, expected = -1;
    for (int64_t d = hi; d-- > lo;) {
      if (d == feature || dims[d] == 1) continue;
      if (expected < 0) {
        stride = a.strides[d];
        expected = stride;
      } else if (a.strides[d] != expected) {
        return -1;
      }
      expected *= dims[d];
    }
    return stride;
  };
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < static_cast<int64_t>(dims.size()); ++d) {
    if (d < feature) outer *= dims[d];
    if (d > feature) inner *= dims[d];
  }
  // Set when the parallel loop walks the runs: their lengths, and each array's run and feature strides.
  llvm::Value* outer_v = nullptr;
  llvm::Value* inner_v = nullptr;
  std::vector<std::pair<const IrArray*, std::array<llvm::Value*, 3>>> run_strides;
  std::vector<int64_t> other_dims = dims;
  other_dims[feature] = 1;
  std::vector<int64_t> order = Identity(dims.size());
  auto over_feature = [&](llvm::Value* f, const std::function<void(const At&)>& body) {
    if (outer_v != nullptr) {
      ForRange(I64(0), outer_v, [&](llvm::Value* o) {
        ForRange(I64(0), inner_v, [&](llvm::Value* i) {
          body([&](const IrArray& a) -> llvm::Value* {
            for (const auto& [array, s] : run_strides) {
              if (array != &a) continue;
              return b_.CreateNSWAdd(b_.CreateNSWAdd(b_.CreateNSWMul(o, s[0]), b_.CreateNSWMul(i, s[1])),
                                     b_.CreateNSWMul(f, s[2]));
            }
            return I64(0);  // not reached: every array of x's shape has its strides
          });
        });
      });
      return;
    }
    LoopNest(other_dims, order, [&](const Index& at) {
      Index idx = at;
      idx[feature] = f;
      body([&](const IrArray& a) { return LinearIndex(a, idx); });
    });
  };
  // Frozen: IRBuilder folds no freeze, so these stay values of the kernel that the parallel loop captures.
  auto opaque = [&](llvm::Value* v) { return b_.CreateFreeze(v); };
  llvm::Value* count_v = dconst(count);
  llvm::Value* eps_v = dconst(eps);
  auto per_feature = [&](const std::function<void(llvm::Value*)>& body) -> absl::Status {
    if (!CanParallelize(total)) {
      ForLoop(0, features, body);
      return absl::OkStatus();
    }
    std::vector<std::array<int64_t, 3>> strides;
    for (const IrArray* a : big) {
      strides.push_back({run_stride(*a, 0, feature), run_stride(*a, feature + 1, static_cast<int64_t>(dims.size())),
                         a->strides[feature]});
    }
    if (std::all_of(strides.begin(), strides.end(), [](const auto& s) { return s[0] >= 0 && s[1] >= 0; })) {
      outer_v = opaque(I64(outer));
      inner_v = opaque(I64(inner));
      for (size_t i = 0; i < big.size(); ++i) {
        run_strides.push_back(
            {big[i], {opaque(I64(strides[i][0])), opaque(I64(strides[i][1])), opaque(I64(strides[i][2]))}});
      }
      count_v = opaque(count_v);
      eps_v = opaque(eps_v);
    }
    return ParallelFor(features, "batchnorm." + inst.name(), [&](llvm::Value* begin, llvm::Value* end) {
      ForRange(begin, end, body);
      return absl::OkStatus();
    });
  };
  // A double sum over one feature's elements, from +0.
  auto sum = [&](llvm::Value* f, const std::function<llvm::Value*(const At&)>& term) -> llvm::Value* {
    llvm::BasicBlock& entry_block = b_.GetInsertBlock()->getParent()->getEntryBlock();
    llvm::IRBuilder<> entry(&entry_block, entry_block.begin());
    llvm::AllocaInst* acc = entry.CreateAlloca(f64, nullptr, "bn.acc");
    b_.CreateStore(dconst(0), acc);
    over_feature(f, [&](const At& at) { b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(f64, acc), term(at)), acc); });
    return b_.CreateLoad(f64, acc);
  };
  // (x - mean) / sqrt(var + eps) * scale + offset, per element, in that order.
  auto normalize = [&](llvm::Value* f, const IrArray& out, llvm::Value* mean, llvm::Value* var, const IrArray& scale,
                       const IrArray& offset) {
    llvm::Value* sd = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, b_.CreateFAdd(var, eps_v));
    llvm::Value* g = load_f(scale, f);
    llvm::Value* o = load_f(offset, f);
    over_feature(f, [&](const At& at) {
      llvm::Value* r = b_.CreateFMul(b_.CreateFDiv(b_.CreateFSub(load(x, at), mean), sd), g);
      store(out, at, b_.CreateFAdd(r, o));
    });
  };
  switch (op) {
    case Opcode::kBatchNormTraining: {
      if (inst.operand_count() != 3 || !inst.shape().IsTuple()) return Unimplemented(inst, "malformed batch norm");
      IrArray scale = ArrayFor(inst.operand(1)), offset = ArrayFor(inst.operand(2));
      IrArray out = ArrayFor(&inst, {0}), mean_out = ArrayFor(&inst, {1}), var_out = ArrayFor(&inst, {2});
      big.push_back(&out);
      return per_feature([&](llvm::Value* f) {
        llvm::Value* mean = b_.CreateFDiv(sum(f, [&](const At& at) { return load(x, at); }), count_v);
        llvm::Value* var = b_.CreateFDiv(sum(f,
                                             [&](const At& at) {
                                               llvm::Value* c = b_.CreateFSub(load(x, at), mean);
                                               return b_.CreateFMul(c, c);
                                             }),
                                         count_v);
        store_f(mean_out, f, mean);
        store_f(var_out, f, var);
        normalize(f, out, mean, var, scale, offset);
      });
    }
    case Opcode::kBatchNormInference: {
      if (inst.operand_count() != 5 || !inst.shape().IsArray()) return Unimplemented(inst, "malformed batch norm");
      IrArray scale = ArrayFor(inst.operand(1)), offset = ArrayFor(inst.operand(2));
      IrArray mean = ArrayFor(inst.operand(3)), var = ArrayFor(inst.operand(4));
      IrArray out = ArrayFor(&inst);
      big.push_back(&out);
      return per_feature([&](llvm::Value* f) { normalize(f, out, load_f(mean, f), load_f(var, f), scale, offset); });
    }
    case Opcode::kBatchNormGrad: {
      if (inst.operand_count() != 5 || !inst.shape().IsTuple()) return Unimplemented(inst, "malformed batch norm");
      IrArray scale = ArrayFor(inst.operand(1)), mean = ArrayFor(inst.operand(2));
      IrArray var = ArrayFor(inst.operand(3)), dy = ArrayFor(inst.operand(4));
      IrArray gx = ArrayFor(&inst, {0}), gscale = ArrayFor(&inst, {1}), goffset = ArrayFor(&inst, {2});
      big.push_back(&dy);
      big.push_back(&gx);
      return per_feature([&](llvm::Value* f) {
        llvm::Value* m = load_f(mean, f);
        llvm::Value* sum_dy = sum(f, [&](const At& at) { return load(dy, at); });
        llvm::Value* sum_dy_xc =
            sum(f, [&](const At& at) { return b_.CreateFMul(load(dy, at), b_.CreateFSub(load(x, at), m)); });
        llvm::Value* ve = b_.CreateFAdd(load_f(var, f), eps_v);
        llvm::Value* sd = b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, ve);
        llvm::Value* inv = b_.CreateFDiv(dconst(1), sd);
        llvm::Value* lhs = b_.CreateFDiv(b_.CreateFMul(load_f(scale, f), inv), count_v);
        over_feature(f, [&](const At& at) {
          llvm::Value* xc = b_.CreateFSub(load(x, at), m);
          llvm::Value* inner_term = b_.CreateFSub(b_.CreateFMul(count_v, load(dy, at)), sum_dy);
          inner_term = b_.CreateFSub(inner_term, b_.CreateFDiv(b_.CreateFMul(xc, sum_dy_xc), ve));
          store(gx, at, b_.CreateFMul(lhs, inner_term));
        });
        store_f(gscale, f, b_.CreateFDiv(sum_dy_xc, sd));
        store_f(goffset, f, sum_dy);
      });
    }
    default:
      return Unimplemented(inst, "no lowering for this opcode yet");
  }
}

// ragged-dot in the interpreter's order (runtime/interpreter/dot_conv.cc EvalRaggedDot): one accumulator per output
// element over the contracting coordinates in row-major order of lhs_contracting_dims, in the result's compute type.
absl::Status IrEmitter::EmitRaggedDot(const Instruction& inst) {
  if (inst.operand_count() != 3 || !inst.shape().IsArray()) return Unimplemented(inst, "malformed ragged-dot");
  PrimitiveType t = inst.shape().element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, t));
  if (inst.operand(0)->shape().element_type != t || inst.operand(1)->shape().element_type != t) {
    return Unimplemented(inst, "operand types that differ from the result type");
  }
  const Shape& sizes_shape = inst.operand(2)->shape();
  if (!IsIntegralType(sizes_shape.element_type) || sizes_shape.element_type == PrimitiveType::kPred ||
      !HasComputeType(sizes_shape.element_type)) {
    return Unimplemented(inst, "group sizes of type {}", PrimitiveTypeName(sizes_shape.element_type));
  }
  const std::vector<int64_t>& ld = inst.operand(0)->shape().dimensions;
  const std::vector<int64_t>& rd = inst.operand(1)->shape().dimensions;
  const std::vector<int64_t>& lb = inst.IntListAttr("lhs_batch_dims");
  const std::vector<int64_t>& rb = inst.IntListAttr("rhs_batch_dims");
  const std::vector<int64_t>& lc = inst.IntListAttr("lhs_contracting_dims");
  const std::vector<int64_t>& rc = inst.IntListAttr("rhs_contracting_dims");
  const std::vector<int64_t>& ragged_dims = inst.IntListAttr("lhs_ragged_dims");
  const std::vector<int64_t>& group_dims = inst.IntListAttr("rhs_group_dims");
  if (ragged_dims.size() != 1 || lb.size() != rb.size() || lc.size() != rc.size()) {
    return Unimplemented(inst, "malformed dimension numbers");
  }
  int64_t ragged = ragged_dims[0];
  enum {
    kBatch,
    kNonContracting,
    kContracting
  } mode = Contains(lb, ragged) ? kBatch : (Contains(lc, ragged) ? kContracting : kNonContracting);
  if (mode == kNonContracting && group_dims.size() != 1) return Unimplemented(inst, "expected one rhs_group_dims");
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < static_cast<int64_t>(ld.size()); ++d) {
    if (!Contains(lb, d) && !Contains(lc, d)) lf.push_back(d);
  }
  for (int64_t d = 0; d < static_cast<int64_t>(rd.size()); ++d) {
    if (!Contains(rb, d) && !Contains(rc, d) && !(mode == kNonContracting && Contains(group_dims, d))) rf.push_back(d);
  }
  // Result dimensions: [groups (contracting mode)], batch..., lhs free..., rhs free... (the interpreter's order).
  int64_t lead = mode == kContracting ? 1 : 0;
  if (inst.shape().rank() != lead + static_cast<int64_t>(lb.size() + lf.size() + rf.size())) {
    return Unimplemented(inst, "unexpected result rank");
  }
  int64_t groups = sizes_shape.dimensions.empty() ? 1 : sizes_shape.dimensions.back();
  bool per_batch = sizes_shape.rank() > 1;
  if (per_batch) {
    // Leading group_sizes dimensions must be the batch dimensions, so (batch coords..., g) indexes them.
    if (sizes_shape.rank() - 1 != static_cast<int64_t>(lb.size())) return Unimplemented(inst, "group_sizes shape");
    for (size_t q = 0; q < lb.size(); ++q) {
      if (sizes_shape.dimensions[q] != ld[lb[q]]) return Unimplemented(inst, "group_sizes shape");
    }
  }
  if (mode != kBatch && groups == 0) return Unimplemented(inst, "no groups");
  IrArray lhs = ArrayFor(inst.operand(0)), rhs = ArrayFor(inst.operand(1)), sizes = ArrayFor(inst.operand(2));
  IrArray out = ArrayFor(&inst);
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ct = ComputeType(t);
  llvm::BasicBlock& entry = function_->getEntryBlock();
  llvm::IRBuilder<> at_entry(&entry, entry.begin());
  llvm::Value* acc_slot = at_entry.CreateAlloca(ct, nullptr, "ragged.acc");
  llvm::Value* count_slot = at_entry.CreateAlloca(i64, nullptr, "ragged.count");
  llvm::Value* cum_slot = at_entry.CreateAlloca(i64, nullptr, "ragged.cum");
  auto size_at = [&](const Index& batch, llvm::Value* g) {
    Index idx = per_batch ? batch : Index{};
    if (!sizes_shape.dimensions.empty()) idx.push_back(g);
    llvm::Value* v = LoadCompute(sizes, idx);
    llvm::Value* w;
    if (IsSignedIntegralType(sizes_shape.element_type)) {
      w = b_.CreateSExt(v, i64);
    } else {
      w = b_.CreateZExt(v, i64);
      w = b_.CreateSelect(b_.CreateICmpSLT(w, I64(0)), I64(INT64_MAX), w);  // interp::IndexValue saturates
    }
    return b_.CreateSelect(b_.CreateICmpSGT(w, I64(0)), w, I64(0));
  };
  std::vector<int64_t> k_dims;
  for (int64_t d : lc) k_dims.push_back(ld[d]);
  for (int64_t d : ld) {
    if (d == 0) return Unimplemented(inst, "empty operand");  // nothing to read; the interpreter writes zeros
  }
  ShapeLoop(out.shape, [&](const Index& o) {
    Index batch(o.begin() + lead, o.begin() + lead + static_cast<int64_t>(lb.size()));
    Index lidx(ld.size()), ridx(rd.size());
    for (size_t q = 0; q < lb.size(); ++q) {
      lidx[lb[q]] = batch[q];
      ridx[rb[q]] = batch[q];
    }
    for (size_t q = 0; q < lf.size(); ++q) lidx[lf[q]] = o[lead + lb.size() + q];
    for (size_t q = 0; q < rf.size(); ++q) ridx[rf[q]] = o[lead + lb.size() + lf.size() + q];
    llvm::Value* valid = b_.getTrue();
    llvm::Value* lo = nullptr;
    llvm::Value* hi = nullptr;
    if (mode == kNonContracting) {
      // The lhs row's group is the number of cumulative clamped sizes at or below the row (upper_bound).
      b_.CreateStore(I64(0), cum_slot);
      b_.CreateStore(I64(0), count_slot);
      ForLoop(0, groups, [&](llvm::Value* g) {
        llvm::Value* next = b_.CreateAdd(b_.CreateLoad(i64, cum_slot), size_at(batch, g));
        b_.CreateStore(next, cum_slot);
        llvm::Value* inc = b_.CreateZExt(b_.CreateICmpSLE(next, lidx[ragged]), i64);
        b_.CreateStore(b_.CreateAdd(b_.CreateLoad(i64, count_slot), inc), count_slot);
      });
      llvm::Value* grp = b_.CreateLoad(i64, count_slot);
      valid = b_.CreateICmpSLT(grp, I64(groups));
      ridx[group_dims[0]] = b_.CreateSelect(valid, grp, I64(0));
    } else if (mode == kContracting) {
      // This output's group o[0] contracts only [bounds[grp], bounds[grp + 1]) of the ragged dimension.
      b_.CreateStore(I64(0), cum_slot);
      ForLoop(0, groups, [&](llvm::Value* g) {
        llvm::Value* cum = b_.CreateLoad(i64, cum_slot);
        b_.CreateStore(b_.CreateSelect(b_.CreateICmpSLT(g, o[0]), b_.CreateAdd(cum, size_at(batch, g)), cum), cum_slot);
      });
      lo = b_.CreateLoad(i64, cum_slot);
      hi = b_.CreateAdd(lo, size_at(batch, o[0]));
    }
    llvm::Value* zero = ct->isFloatingPointTy() ? llvm::ConstantFP::get(ct, 0.0) : llvm::ConstantInt::get(ct, 0);
    b_.CreateStore(zero, acc_slot);
    LoopNest(k_dims, Identity(k_dims.size()), [&](const Index& k) {
      for (size_t q = 0; q < lc.size(); ++q) {
        lidx[lc[q]] = k[q];
        ridx[rc[q]] = k[q];
      }
      llvm::Value* acc = b_.CreateLoad(ct, acc_slot);
      llvm::Value* a = LoadCompute(lhs, lidx);
      llvm::Value* c = LoadCompute(rhs, ridx);
      llvm::Value* next;
      if (t == PrimitiveType::kPred) {
        next = b_.CreateOr(acc, b_.CreateAnd(a, c));
      } else if (ct->isFloatingPointTy()) {
        next = b_.CreateFAdd(acc, b_.CreateFMul(a, c));
      } else {
        next = b_.CreateAdd(acc, b_.CreateMul(a, c));
      }
      if (mode == kContracting) {
        llvm::Value* coord = lidx[ragged];
        next = b_.CreateSelect(b_.CreateAnd(b_.CreateICmpSGE(coord, lo), b_.CreateICmpSLT(coord, hi)), next, acc);
      }
      b_.CreateStore(next, acc_slot);
    });
    llvm::Value* result = b_.CreateLoad(ct, acc_slot);
    // Rows past the last group are zero (the rhs group index was clamped so its loads stay in bounds).
    StoreCompute(out, o, b_.CreateSelect(valid, result, zero));
  });
  return absl::OkStatus();
}

}  // namespace xlac::codegen::internal
