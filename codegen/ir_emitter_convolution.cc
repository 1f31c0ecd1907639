// convolution: any dim_labels, window strides, padding (negative included), lhs (base) and rhs (window) dilation,
// window reversal, feature_group_count and batch_group_count; operands of other element types are converted to the
// result type first.
//
// Numerics are the interpreter's (runtime/interpreter/dot_conv.cc): every output element starts from zero and
// accumulates a*b in the result's compute type over the in-bounds window positions in row-major order, then over
// the input features of its group; narrow float results round once at the end.
//
// Loop structure. For f32/f64/integer/pred results the nest is: output dimensions except the most minor one (in
// layout order), window positions, input features, and innermost the most minor output dimension, accumulating in
// the output buffer (zeroed first). Each output element still sees its products in the interpreter's order, and the
// innermost loop walks contiguous output elements so the loop vectorizer can widen it. Window positions that fall
// into padding or base-dilation holes are skipped with a branch as soon as the loop indices that decide them are
// bound. When the innermost dimension is a spatial one, its loop runs over the range of in-bounds outputs of each
// window position instead (or, with base dilation, tests each element with a select).
// Narrow float results accumulate per element in an f32 register, output dimensions outermost.
// This is also the fallback of the tiled f32/f64 path (ir_emitter_convolution_tiled.cc), which keeps the same
// per-element order.
#include <algorithm>
#include <functional>

#include "codegen/ir_emitter_gemm.h"
#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {

absl::Status IrEmitter::EmitConvolutionLoops(const Instruction& inst) {
  const AttrValue* dn_attr = inst.FindAttr("dim_labels");
  if (inst.operand_count() != 2 || dn_attr == nullptr || dn_attr->kind != AttrKind::kConvDnums) {
    return Unimplemented(inst, "convolution without dim_labels");
  }
  const ConvolutionDimensionNumbers& dn = dn_attr->get<ConvolutionDimensionNumbers>();
  PrimitiveType type = inst.shape().element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, type));
  IrArray lhs = ArrayFor(inst.operand(0)), rhs = ArrayFor(inst.operand(1)), out = ArrayFor(&inst);
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, lhs.shape.element_type));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, rhs.shape.element_type));
  const size_t spatial = dn.input_spatial_dimensions.size();
  Window window;
  if (const AttrValue* w = inst.FindAttr("window"); w != nullptr && w->kind == AttrKind::kWindow) {
    window = w->get<Window>();
  }
  if (window.dimensions.size() != spatial) {
    if (!window.dimensions.empty()) return Unimplemented(inst, "window rank differs from the spatial rank");
    window.dimensions.resize(spatial);
  }
  const std::vector<int64_t>& ld = lhs.shape.dimensions;
  const std::vector<int64_t>& rd = rhs.shape.dimensions;
  const std::vector<int64_t>& od = out.shape.dimensions;
  int64_t feature_groups = inst.IntAttr("feature_group_count", 1);
  int64_t batch_groups = inst.IntAttr("batch_group_count", 1);
  int64_t input_z = ld[dn.input_feature_dimension];
  int64_t input_batch = ld[dn.input_batch_dimension];
  int64_t output_z = rd[dn.kernel_output_feature_dimension];
  if (feature_groups < 1 || batch_groups < 1 || input_z % feature_groups != 0 || input_batch % batch_groups != 0 ||
      output_z % feature_groups != 0 || output_z % batch_groups != 0) {
    return Unimplemented(inst, "group counts that do not divide the feature/batch dimensions");
  }
  int64_t batch_group_size = input_batch / batch_groups;
  int64_t in_group = input_z / feature_groups;
  int64_t out_group = std::max<int64_t>(output_z / feature_groups, 1);
  int64_t depthwise_multiplier = std::max<int64_t>(output_z / batch_groups, 1);
  for (size_t s = 0; s < spatial; ++s) {
    if (window.dimensions[s].size != rd[dn.kernel_spatial_dimensions[s]]) {
      return Unimplemented(inst, "window size differs from the kernel");
    }
    if (window.dimensions[s].stride < 1 || window.dimensions[s].base_dilation < 1 ||
        window.dimensions[s].window_dilation < 1) {
      return Unimplemented(inst, "non-positive window stride or dilation");
    }
  }

  // Virtual iteration space: [0, R) output dimensions, [R, R + S) window positions, R + S input feature in group.
  const int64_t rank = out.shape.rank();
  const int64_t kWin = rank, kFeature = rank + static_cast<int64_t>(spatial);
  std::vector<int64_t> vdims(od.begin(), od.end());
  for (size_t s = 0; s < spatial; ++s) vdims.push_back(window.dimensions[s].size);
  vdims.push_back(in_group);

  bool narrow = RoundsOnStore(type);
  std::vector<int64_t> out_order = MajorToMinor(out.shape);
  std::vector<int64_t> order;
  int64_t inner = -1;  // output dimension of the innermost loop (accumulating path only)
  if (narrow) {
    order = out_order;
    for (size_t s = 0; s <= spatial; ++s) order.push_back(kWin + static_cast<int64_t>(s));
  } else {
    inner = out_order.back();
    order.assign(out_order.begin(), out_order.end() - 1);
    for (size_t s = 0; s <= spatial; ++s) order.push_back(kWin + static_cast<int64_t>(s));
    order.push_back(inner);
  }
  std::vector<size_t> position(vdims.size());
  for (size_t k = 0; k < order.size(); ++k) position[order[k]] = k;
  // Spatial dimensions whose validity is tested by a branch once both of their indices are bound (at level
  // guards_at); those of the innermost output dimension are handled in the innermost loop.
  std::vector<std::vector<size_t>> guards_at(order.size());
  std::vector<size_t> select_dims;
  for (size_t s = 0; s < spatial; ++s) {
    if (dn.output_spatial_dimensions[s] == inner) {
      select_dims.push_back(s);
    } else {
      guards_at[std::max(position[dn.output_spatial_dimensions[s]], position[kWin + s])].push_back(s);
    }
  }

  // Without base dilation, the in-bounds outputs of the innermost spatial dimension form a range per window
  // position: the innermost loop runs over just that range and needs no select (contiguous loads when unstrided).
  int64_t ranged = -1;
  if (select_dims.size() == 1 && window.dimensions[select_dims[0]].base_dilation == 1) {
    ranged = static_cast<int64_t>(select_dims[0]);
    select_dims.clear();
  }

  absl::Status status;
  llvm::Type* ct = ComputeType(type);
  llvm::Value* zero = llvm::Constant::getNullValue(ct);
  // Operand element converted to the result type (rounded to it), in the result's compute type.
  XLAC_ASSIGN_OR_RETURN(const bool tpu_bf16, TpuRoundsOperands(inst));
  auto operand_value = [&](const IrArray& a, const Index& idx) -> llvm::Value* {
    llvm::Value* v = LoadCompute(a, idx);
    if (tpu_bf16) return EmitRoundToBf16(b_, v);  // f32 operands and result
    if (a.shape.element_type == type) return v;
    absl::StatusOr<llvm::Value*> c = EmitConvert(inst, v, a.shape.element_type, type);
    if (!c.ok()) {
      status = c.status();
      return llvm::UndefValue::get(ct);
    }
    return RoundToType(*c, type);
  };
  auto accumulate = [&](llvm::Value* acc, llvm::Value* a, llvm::Value* c) -> llvm::Value* {
    if (type == PrimitiveType::kPred) return b_.CreateOr(acc, b_.CreateAnd(a, c));
    if (IsComplexType(type)) return EmitComplexMultiplyAdd(type, acc, a, c);
    if (ct->isFloatingPointTy()) return b_.CreateFAdd(acc, b_.CreateFMul(a, c));
    return b_.CreateAdd(acc, b_.CreateMul(a, c));
  };
  auto tap_of = [&](size_t s, const Index& v) {
    return EmitWindowTap(b_, window.dimensions[s], ld[dn.input_spatial_dimensions[s]],
                         od[dn.output_spatial_dimensions[s]], v[dn.output_spatial_dimensions[s]], v[kWin + s]);
  };

  Index v(vdims.size(), nullptr);
  std::vector<llvm::Value*> xs(spatial, nullptr);  // input spatial coordinates
  llvm::AllocaInst* acc = nullptr;
  if (narrow) {
    llvm::BasicBlock& entry_block = b_.GetInsertBlock()->getParent()->getEntryBlock();
    llvm::IRBuilder<> entry(&entry_block, entry_block.begin());
    acc = entry.CreateAlloca(ct, nullptr, "conv.acc");
  }

  // One product: input feature z of the feature group, input batch of the batch group, kernel at the (possibly
  // reversed) window position.
  auto body = [&]() {
    llvm::Value* valid = nullptr;
    if (ranged >= 0) xs[ranged] = tap_of(static_cast<size_t>(ranged), v).x;
    for (size_t s : select_dims) {
      WindowTap tap = tap_of(s, v);
      xs[s] = tap.x;
      if (tap.valid == nullptr) continue;
      xs[s] = b_.CreateSelect(tap.valid, tap.x, I64(0));
      valid = valid ? b_.CreateAnd(valid, tap.valid) : tap.valid;
    }
    llvm::Value* oz = v[dn.output_feature_dimension];
    llvm::Value* iz = v[kFeature];
    llvm::Value* z = iz;
    if (feature_groups > 1) z = b_.CreateNSWAdd(b_.CreateNSWMul(b_.CreateUDiv(oz, I64(out_group)), I64(in_group)), iz);
    llvm::Value* batch = v[dn.output_batch_dimension];
    if (batch_groups > 1) {
      batch =
          b_.CreateNSWAdd(batch, b_.CreateNSWMul(b_.CreateUDiv(oz, I64(depthwise_multiplier)), I64(batch_group_size)));
    }
    Index li(ld.size()), ri(rd.size());
    li[dn.input_batch_dimension] = batch;
    li[dn.input_feature_dimension] = z;
    ri[dn.kernel_output_feature_dimension] = oz;
    ri[dn.kernel_input_feature_dimension] = iz;
    for (size_t s = 0; s < spatial; ++s) {
      li[dn.input_spatial_dimensions[s]] = xs[s];
      llvm::Value* w = v[kWin + s];
      if (window.dimensions[s].window_reversal) w = b_.CreateNSWSub(I64(window.dimensions[s].size - 1), w);
      ri[dn.kernel_spatial_dimensions[s]] = w;
    }
    llvm::Value* a = operand_value(lhs, li);
    llvm::Value* c = operand_value(rhs, ri);
    if (narrow) {
      b_.CreateStore(accumulate(b_.CreateLoad(ct, acc), a, c), acc);
      return;
    }
    Index o(v.begin(), v.begin() + rank);
    llvm::Value* old = LoadCompute(out, o);
    llvm::Value* updated = accumulate(old, a, c);
    if (valid != nullptr) updated = b_.CreateSelect(valid, updated, old);
    StoreCompute(out, o, updated);
  };

  // floor(n / d) for d > 0 (sdiv truncates toward zero).
  auto floor_div = [&](llvm::Value* n, int64_t d) {
    llvm::Value* q = b_.CreateSDiv(n, I64(d));
    llvm::Value* inexact_negative =
        b_.CreateAnd(b_.CreateICmpSLT(n, I64(0)), b_.CreateICmpNE(b_.CreateMul(q, I64(d)), n));
    return b_.CreateSelect(inexact_negative, b_.CreateSub(q, I64(1)), q);
  };
  // Outputs o in [lo, hi) with 0 <= o * stride - padding_low + w * window_dilation < operand_size.
  auto valid_range = [&](const WindowDimension& wd, int64_t operand_size, int64_t output_size, llvm::Value* w) {
    llvm::Value* shift = b_.CreateNSWSub(I64(wd.padding_low), b_.CreateNSWMul(w, I64(wd.window_dilation)));
    llvm::Value* lo = floor_div(b_.CreateNSWAdd(shift, I64(wd.stride - 1)), wd.stride);
    lo = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smax, lo, I64(0));
    llvm::Value* hi = b_.CreateNSWAdd(floor_div(b_.CreateNSWAdd(shift, I64(operand_size - 1)), wd.stride), I64(1));
    hi = b_.CreateBinaryIntrinsic(llvm::Intrinsic::smin, hi, I64(output_size));
    return std::pair<llvm::Value*, llvm::Value*>{lo, hi};
  };
  std::function<void(size_t)> level = [&](size_t k) {
    if (k == order.size()) {
      body();
      return;
    }
    int64_t d = order[k];
    auto loop = [&](const std::function<void(llvm::Value*)>& f) {
      if (ranged >= 0 && d == inner) {
        auto [lo, hi] =
            valid_range(window.dimensions[ranged], ld[dn.input_spatial_dimensions[ranged]], vdims[d], v[kWin + ranged]);
        ForRange(lo, hi, f);
      } else {
        ForLoop(0, vdims[d], f);
      }
    };
    loop([&](llvm::Value* iv) {
      v[d] = iv;
      llvm::Value* valid = nullptr;
      for (size_t s : guards_at[k]) {
        WindowTap tap = tap_of(s, v);
        xs[s] = tap.x;
        if (tap.valid != nullptr) valid = valid ? b_.CreateAnd(valid, tap.valid) : tap.valid;
      }
      bool outputs_bound = narrow && k + 1 == static_cast<size_t>(rank);
      if (outputs_bound) b_.CreateStore(zero, acc);
      if (valid == nullptr) {
        level(k + 1);
      } else {
        llvm::Function* fn = b_.GetInsertBlock()->getParent();
        llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx(), "conv.tap", fn);
        llvm::BasicBlock* cont = llvm::BasicBlock::Create(ctx(), "conv.next", fn);
        b_.CreateCondBr(valid, then_bb, cont);
        b_.SetInsertPoint(then_bb);
        level(k + 1);
        b_.CreateBr(cont);
        b_.SetInsertPoint(cont);
      }
      if (outputs_bound) StoreCompute(out, Index(v.begin(), v.begin() + rank), b_.CreateLoad(ct, acc));
    });
  };
  for (int64_t d : od) {
    if (d == 0) return absl::OkStatus();
  }
  if (!narrow) ShapeLoop(out.shape, [&](const Index& index) { StoreCompute(out, index, zero); });
  // An empty window or feature range leaves the zeros (narrow results still need theirs stored).
  bool empty = std::any_of(vdims.begin() + rank, vdims.end(), [](int64_t n) { return n == 0; });
  if (empty) {
    if (narrow) ShapeLoop(out.shape, [&](const Index& index) { StoreCompute(out, index, zero); });
    return absl::OkStatus();
  }
  level(0);
  return status;
}

}  // namespace xlac::codegen::internal
