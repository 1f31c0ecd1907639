// dot with general batch/contracting dimensions.
//
// As in the interpreter, operands are converted to the result type and products are accumulated sequentially over
// the contracting dimensions (row-major in their listed order) in the result's compute type, starting from zero.
// For f32/f64/integer/pred results the loop nest is batch, lhs-free, contracting, rhs-free: each output element
// still sees its products in contracting order, and the innermost loop runs over contiguous output elements, which
// the loop vectorizer turns into vector FMA-free multiply/add (no reassociation is needed or allowed). Narrow float
// results accumulate in an f32 register and round once at the end.
// f32/f64/bf16/f16 dots with one contracting dimension and at most one free dimension per operand (matmuls, batched or
// not, in any layouts, matrix-vector) instead run the packed, register-tiled GEMM of ir_emitter_gemm.cc, which keeps
// the same per-element order.
#include <algorithm>

#include "codegen/ir_emitter_gemm.h"
#include "codegen/ir_emitter_internal.h"
#include "ir/tpu_numerics.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

}  // namespace

absl::StatusOr<bool> IrEmitter::TpuRoundsOperands(const Instruction& inst) {
  if (!options_.tpu_numerics) return false;
  std::string why;
  TpuDotMode mode = TpuDotModeOf(inst, &why);
  if (mode == TpuDotMode::kUnsupported) return Unimplemented(inst, "TPU numerics do not model {} yet", why);
  // The optimization pipeline rewrites these (passes/tpu_dot_precision.h) before codegen.
  if (mode == TpuDotMode::kBf16x3) return absl::InternalError(inst.name() + ": HIGH precision was not split");
  return mode == TpuDotMode::kBf16Operands;
}

absl::Status IrEmitter::EmitDot(const Instruction& inst) {
  if (inst.FindAttr("sparsity") != nullptr || inst.operand_count() != 2) return Unimplemented(inst, "sparse dot");
  PrimitiveType type = inst.shape().element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, type));
  IrArray lhs = ArrayFor(inst.operand(0)), rhs = ArrayFor(inst.operand(1)), out = ArrayFor(&inst);
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, lhs.shape.element_type));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, rhs.shape.element_type));
  XLAC_ASSIGN_OR_RETURN(const bool tpu_bf16, TpuRoundsOperands(inst));
  const std::vector<int64_t>& lb = inst.IntListAttr("lhs_batch_dims");
  const std::vector<int64_t>& rb = inst.IntListAttr("rhs_batch_dims");
  const std::vector<int64_t>& lc = inst.IntListAttr("lhs_contracting_dims");
  const std::vector<int64_t>& rc = inst.IntListAttr("rhs_contracting_dims");
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < lhs.shape.rank(); ++d) {
    if (!Contains(lb, d) && !Contains(lc, d)) lf.push_back(d);
  }
  for (int64_t d = 0; d < rhs.shape.rank(); ++d) {
    if (!Contains(rb, d) && !Contains(rc, d)) rf.push_back(d);
  }
  // Virtual iteration space: [batch..., lhs free..., rhs free..., contracting...].
  std::vector<int64_t> dims;
  for (int64_t d : lb) dims.push_back(lhs.shape.dimensions[d]);
  for (int64_t d : lf) dims.push_back(lhs.shape.dimensions[d]);
  for (int64_t d : rf) dims.push_back(rhs.shape.dimensions[d]);
  for (int64_t d : lc) dims.push_back(lhs.shape.dimensions[d]);
  size_t nb = lb.size(), nlf = lf.size(), nrf = rf.size(), nc = lc.size();
  size_t out_rank = nb + nlf + nrf;
  auto lhs_index = [&](const Index& v) {
    Index idx(lhs.shape.dimensions.size());
    for (size_t i = 0; i < nb; ++i) idx[lb[i]] = v[i];
    for (size_t i = 0; i < nlf; ++i) idx[lf[i]] = v[nb + i];
    for (size_t i = 0; i < nc; ++i) idx[lc[i]] = v[out_rank + i];
    return idx;
  };
  auto rhs_index = [&](const Index& v) {
    Index idx(rhs.shape.dimensions.size());
    for (size_t i = 0; i < nb; ++i) idx[rb[i]] = v[i];
    for (size_t i = 0; i < nrf; ++i) idx[rf[i]] = v[nb + nlf + i];
    for (size_t i = 0; i < nc; ++i) idx[rc[i]] = v[out_rank + i];
    return idx;
  };
  auto out_index = [&](const Index& v) { return Index(v.begin(), v.begin() + static_cast<int64_t>(out_rank)); };
  absl::Status status;
  // Operand element converted to the result type (rounded to it), in the result's compute type.
  auto operand_value = [&](const IrArray& a, const Index& idx) -> llvm::Value* {
    llvm::Value* v = LoadCompute(a, idx);
    if (tpu_bf16) return EmitRoundToBf16(b_, v);  // f32 operands and result
    if (a.shape.element_type == type) return v;
    absl::StatusOr<llvm::Value*> c = EmitConvert(inst, v, a.shape.element_type, type);
    if (!c.ok()) {
      status = c.status();
      return llvm::UndefValue::get(ComputeType(type));
    }
    return RoundToType(*c, type);
  };
  llvm::Type* ct = ComputeType(type);
  bool is_float = ct->isFloatingPointTy();
  auto accumulate = [&](llvm::Value* acc, llvm::Value* a, llvm::Value* c) -> llvm::Value* {
    if (type == PrimitiveType::kPred) return b_.CreateOr(acc, b_.CreateAnd(a, c));
    if (IsComplexType(type)) return EmitComplexMultiplyAdd(type, acc, a, c);
    if (is_float) return b_.CreateFAdd(acc, b_.CreateFMul(a, c));
    return b_.CreateAdd(acc, b_.CreateMul(a, c));
  };
  const bool narrow_gemm = type == PrimitiveType::kBF16 || type == PrimitiveType::kF16;
  // bf16 or f16 operands with an f32 result (preferred_element_type=f32: PyTorch/XLA's and JAX's mixed-precision
  // matmuls): the operands widen exactly to f32 as they are packed, as the interpreter converts them to the result
  // type, and the f32 sums are the output. (The loop nest below took 188 s for one 544 x 16032 x 2048 dot that the
  // GEMM does in well under a second.) At TPU DEFAULT precision bf16 values round to themselves; f16 ones do not.
  const PrimitiveType operand_type = lhs.shape.element_type;
  const bool widened_gemm =
      type == PrimitiveType::kF32 && rhs.shape.element_type == operand_type &&
      (operand_type == PrimitiveType::kBF16 || (operand_type == PrimitiveType::kF16 && !tpu_bf16));
  if (options_.tiled_dot && (type == PrimitiveType::kF32 || type == PrimitiveType::kF64 || narrow_gemm) &&
      ((operand_type == type && rhs.shape.element_type == type) || widened_gemm) && nc == 1 && nlf <= 1 && nrf <= 1) {
    int64_t batch = 1, m = 1, n = 1, k = dims[out_rank];
    for (size_t i = 0; i < nb; ++i) batch *= dims[i];
    if (nlf == 1) m = dims[nb];
    if (nrf == 1) n = dims[nb + nlf];
    GemmSpec spec;
    spec.element = ct;
    spec.fma = !options_.exact;
    spec.m = m;
    spec.n = n;
    spec.k = k;
    spec.a_m = nlf == 1 ? lhs.strides[lf[0]] : 0;
    spec.a_k = lhs.strides[lc[0]];
    spec.b_k = rhs.strides[rc[0]];
    spec.b_n = nrf == 1 ? rhs.strides[rf[0]] : 0;
    int64_t c_m = nlf == 1 ? out.strides[nb] : 0;
    int64_t c_n = nrf == 1 ? out.strides[nb + nlf] : 0;
    spec.c_m = c_m;
    // The kernel stores rows of C contiguously; when only C's m stride is 1 (or n is 1 and m is not), computing
    // C^T = B^T A^T has the same products in the same order.
    bool direct = n == 1 || c_n == 1;
    bool transposed = m == 1 || c_m == 1;
    bool swap = transposed && (!direct || (n == 1 && m > 1));
    if (swap) {
      spec.m = n;
      spec.n = m;
      spec.a_m = nrf == 1 ? rhs.strides[rf[0]] : 0;
      spec.a_k = rhs.strides[rc[0]];
      spec.b_k = lhs.strides[lc[0]];
      spec.b_n = nlf == 1 ? lhs.strides[lf[0]] : 0;
      spec.c_m = c_n;
      spec.b_times_a = true;
    }
    if (tpu_bf16) spec.load = GemmOperandLoad::kRoundBf16;
    if (widened_gemm) {
      spec.load = operand_type == PrimitiveType::kF16 ? GemmOperandLoad::kWidenF16 : GemmOperandLoad::kWidenBf16;
    }
    if ((direct || transposed) && batch > 0 && m > 0 && n > 0 && k > 0) {
      // bf16/f16: operands widen to f32 as they are packed, the f32 sums land in a temporary with the output's
      // layout and round once into the output (the interpreter's narrow-float dot).
      llvm::Value* c_base = out.base;
      if (narrow_gemm) {
        spec.load = type == PrimitiveType::kF16 ? GemmOperandLoad::kWidenF16 : GemmOperandLoad::kWidenBf16;
        int64_t elements = batch * m * n;
        c_base = AllocTemp(elements * 4);
      }
      spec.bf16_pairs = spec.fma && options_.target.has_avx512_bf16 &&
                        (spec.load == GemmOperandLoad::kWidenBf16 || spec.load == GemmOperandLoad::kRoundBf16);
      // One or two register tiles of rows (decode-like dots) read bf16 B in place, widened, with the f32 kernel:
      // the pair kernel needs B packed as pairs, and with so few rows the packing costs more than the products
      // (8 x 4096 x 4096 on one Zen 4 core: 62 GFLOP/s as pairs). Numerics: docs/numerics.md.
      if (spec.bf16_pairs && spec.load == GemmOperandLoad::kWidenBf16) {
        GemmSpec widened = spec;
        widened.bf16_pairs = false;
        if (GemmReadsBInPlace(widened, options_.target)) spec.bf16_pairs = false;
      }
      llvm::Function* gemm = EmitGemmFunction(llvm_module_, "xlac.gemm." + inst.name(), spec, options_.target);
      // Problem p's batch index, row-major over the batch dimensions.
      XLAC_RETURN_IF_ERROR(EmitGemmCalls(gemm, spec, "gemm." + inst.name(), batch, [&](llvm::Value* p) {
        llvm::Value* a_off = I64(0);
        llvm::Value* b_off = I64(0);
        llvm::Value* c_off = I64(0);
        llvm::Value* rest = p;
        for (size_t i = nb; i-- > 0;) {
          llvm::Value* bi = i == 0 ? rest : b_.CreateURem(rest, I64(dims[i]));
          if (i > 0) rest = b_.CreateUDiv(rest, I64(dims[i]));
          a_off = b_.CreateNSWAdd(a_off, b_.CreateNSWMul(bi, I64(lhs.strides[lb[i]])));
          b_off = b_.CreateNSWAdd(b_off, b_.CreateNSWMul(bi, I64(rhs.strides[rb[i]])));
          c_off = b_.CreateNSWAdd(c_off, b_.CreateNSWMul(bi, I64(out.strides[i])));
        }
        llvm::Type* storage = narrow_gemm || widened_gemm ? b_.getInt16Ty() : ct;
        GemmOperands ops{b_.CreateInBoundsGEP(storage, lhs.base, a_off), b_.CreateInBoundsGEP(storage, rhs.base, b_off),
                         b_.CreateInBoundsGEP(ct, c_base, c_off), I64(0)};
        if (swap) std::swap(ops.a, ops.b);
        return ops;
      }));
      if (narrow_gemm) {
        ShapeLoop(out.shape, [&](const Index& index) {
          StoreCompute(
              out, index,
              b_.CreateAlignedLoad(ct, b_.CreateInBoundsGEP(ct, c_base, LinearIndex(out, index)), llvm::Align(4)));
        });
        FreeTemp(c_base);
      }
      return absl::OkStatus();
    }
  }
  llvm::Value* zero = llvm::Constant::getNullValue(ct);
  if (!RoundsOnStore(type)) {
    ShapeLoop(out.shape, [&](const Index& index) { StoreCompute(out, index, zero); });
    // Loop order: batch, lhs free, contracting, rhs free (innermost over contiguous output when row-major).
    std::vector<int64_t> order;
    for (size_t i = 0; i < nb + nlf; ++i) order.push_back(static_cast<int64_t>(i));
    for (size_t i = 0; i < nc; ++i) order.push_back(static_cast<int64_t>(out_rank + i));
    for (size_t i = 0; i < nrf; ++i) order.push_back(static_cast<int64_t>(nb + nlf + i));
    LoopNest(dims, order, [&](const Index& v) {
      Index o = out_index(v);
      llvm::Value* a = operand_value(lhs, lhs_index(v));
      llvm::Value* c = operand_value(rhs, rhs_index(v));
      StoreCompute(out, o, accumulate(LoadCompute(out, o), a, c));
    });
    return status;
  }
  llvm::AllocaInst* acc;
  {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    acc = entry.CreateAlloca(ct, nullptr, "dot.acc");
  }
  std::vector<int64_t> outer_dims(dims.begin(), dims.begin() + static_cast<int64_t>(out_rank));
  std::vector<int64_t> inner_dims(dims.begin() + static_cast<int64_t>(out_rank), dims.end());
  std::vector<int64_t> outer_order = MajorToMinor(out.shape), inner_order;
  for (size_t i = 0; i < nc; ++i) inner_order.push_back(static_cast<int64_t>(i));
  LoopNest(outer_dims, outer_order, [&](const Index& o) {
    b_.CreateStore(zero, acc);
    LoopNest(inner_dims, inner_order, [&](const Index& k) {
      Index v = o;
      v.insert(v.end(), k.begin(), k.end());
      llvm::Value* a = operand_value(lhs, lhs_index(v));
      llvm::Value* c = operand_value(rhs, rhs_index(v));
      b_.CreateStore(accumulate(b_.CreateLoad(ct, acc), a, c), acc);
    });
    StoreCompute(out, o, b_.CreateLoad(ct, acc));
  });
  return status;
}

}  // namespace xlac::codegen::internal
