// ElementalEmitter: the value of one element of a fused instruction, computed from operand elements at mapped
// indices. Index maps stay branch-free (clamped indices and selects) so cached values dominate every later use in
// the same loop body and the loops stay vectorizable.
#include "codegen/elemental_emitter.h"

#include <algorithm>
#include <cstring>

#include "ir/kernel_calls.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {
namespace {

bool IsElementwiseCompute(const Instruction& inst) {
  const Opcode op = inst.opcode();
  return IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kCompare || op == Opcode::kSelect ||
         op == Opcode::kClamp || op == Opcode::kConvert || op == Opcode::kReducePrecision ||
         IsElementwiseKernelCall(inst);
}

llvm::Value* Clamp(llvm::IRBuilder<>& b, llvm::Value* v, int64_t lo, int64_t hi) {
  v = b.CreateSelect(b.CreateICmpSLT(v, b.getInt64(lo)), b.getInt64(lo), v);
  return b.CreateSelect(b.CreateICmpSGT(v, b.getInt64(hi)), b.getInt64(hi), v);
}

}  // namespace

ElementalEmitter::ElementalEmitter(IrEmitter& e, const Instruction& fusion) : e_(e), b_(e.b()) {
  const Computation& comp = *fusion.called_computation(0);
  for (const Instruction* inst : comp.MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter) {
      const Instruction* operand = fusion.operand(inst->parameter_number());
      if (operand->shape().IsArray()) arrays_[inst] = e.ArrayFor(operand);
    } else if ((inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) &&
               e.assignment().HasSlice(inst)) {
      arrays_[inst] = e.ArrayFor(inst);
    } else if (inst->opcode() == Opcode::kConstant && !inst->shape().IsScalar() && inst->shape().IsArray() &&
               !inst->literal().is_unknown()) {
      arrays_[inst] = ConstantArray(inst);
    }
  }
}

// A non-scalar fused constant as a private global in row-major order (the literal's own order).
IrArray ElementalEmitter::ConstantArray(const Instruction* inst) {
  const Literal& lit = inst->literal();
  std::vector<uint8_t> bytes(static_cast<size_t>(std::max<int64_t>(lit.byte_size(), 1)), 0);
  if (lit.byte_size() > 0) std::memcpy(bytes.data(), lit.raw_data(), static_cast<size_t>(lit.byte_size()));
  llvm::Constant* init = llvm::ConstantDataArray::get(e_.ctx(), llvm::ArrayRef<uint8_t>(bytes));
  auto* global = new llvm::GlobalVariable(e_.llvm_module(), init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, "fused_constant." + inst->name());
  global->setAlignment(llvm::Align(64));
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  IrArray array;
  array.base = global;
  array.shape = inst->shape();
  array.shape.layout.reset();
  array.strides = LayoutStrides(array.shape);
  return array;
}

absl::StatusOr<llvm::Value*> ElementalEmitter::Emit(const Instruction* inst, const Index& index) {
  auto key = std::make_pair(inst, std::vector<llvm::Value*>(index.begin(), index.end()));
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  XLAC_ASSIGN_OR_RETURN(llvm::Value * v, EmitUncached(inst, index));
  cache_[key] = v;
  return v;
}

// Operands of rank 0 are read at the empty index (the permissive scalar broadcast EmitElementwise also accepts).
absl::StatusOr<llvm::Value*> ElementalEmitter::EmitOperandAt(const Instruction* inst, int64_t operand,
                                                             const Index& index) {
  const Instruction* op = inst->operand(operand);
  return Emit(op, op->shape().rank() == 0 ? Index{} : index);
}

// Reshape as groups of dimensions with equal element counts: within a group the row-major position is carried
// over; groups of one dimension on both sides (the common case) map the index unchanged.
absl::StatusOr<Index> ElementalEmitter::ReshapeIndex(const Shape& from, const Shape& to, const Index& index) {
  const std::vector<int64_t>& out = from.dimensions;  // the reshape's result
  const std::vector<int64_t>& in = to.dimensions;     // its operand
  Index src(in.size(), nullptr);
  size_t i = 0, j = 0;
  while (i < out.size() || j < in.size()) {
    // Size-1 dimensions map to index 0 / are ignored.
    if (j < in.size() && in[j] == 1) {
      src[j++] = e_.I64(0);
      continue;
    }
    if (i < out.size() && out[i] == 1) {
      ++i;
      continue;
    }
    if (i >= out.size() || j >= in.size()) return absl::InternalError("reshape with mismatched element counts");
    size_t i_end = i + 1, j_end = j + 1;
    int64_t p_out = out[i], p_in = in[j];
    while (p_out != p_in) {
      if (p_out < p_in) {
        if (i_end >= out.size()) return absl::InternalError("reshape with mismatched element counts");
        p_out *= out[i_end++];
      } else {
        if (j_end >= in.size()) return absl::InternalError("reshape with mismatched element counts");
        p_in *= in[j_end++];
      }
    }
    if (i_end - i == 1 && j_end - j == 1) {
      src[j] = index[i];
    } else {
      llvm::Value* linear = e_.I64(0);
      for (size_t k = i; k < i_end; ++k) linear = b_.CreateAdd(b_.CreateMul(linear, e_.I64(out[k])), index[k]);
      for (size_t k = j_end; k-- > j;) {
        src[k] = k == j ? linear : b_.CreateURem(linear, e_.I64(in[k]));
        if (k != j) linear = b_.CreateUDiv(linear, e_.I64(in[k]));
      }
    }
    i = i_end;
    j = j_end;
  }
  for (llvm::Value*& v : src) {
    if (v == nullptr) v = e_.I64(0);
  }
  return src;
}

absl::StatusOr<llvm::Value*> ElementalEmitter::EmitUncached(const Instruction* inst, const Index& index) {
  const Shape& shape = inst->shape();
  if (!shape.IsArray() || !shape.IsStatic()) return Unimplemented(*inst, "non-array or dynamic value in a fusion");
  PrimitiveType type = shape.element_type;
  if (IsComplexType(type)) return Unimplemented(*inst, "complex values in a fusion");
  Opcode op = inst->opcode();
  if (auto it = arrays_.find(inst); it != arrays_.end()) {
    XLAC_RETURN_IF_ERROR(e_.CheckComputeType(*inst, type));
    return e_.LoadCompute(it->second, index);
  }
  if (IsElementwiseCompute(*inst)) {
    int64_t typed = op == Opcode::kSelect || op == Opcode::kClamp ? 1 : 0;
    std::vector<llvm::Value*> operands;
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      XLAC_ASSIGN_OR_RETURN(llvm::Value * v, EmitOperandAt(inst, i, index));
      operands.push_back(v);
    }
    XLAC_ASSIGN_OR_RETURN(llvm::Value * v,
                          e_.EmitScalarOp(*inst, inst->operand(typed)->shape().element_type, operands));
    return e_.RoundToType(v, type);
  }
  switch (op) {
    case Opcode::kParameter:
      return Unimplemented(*inst, "fusion parameter that is not an array");
    case Opcode::kConstant: {
      if (!shape.IsScalar() || inst->literal().is_unknown()) return Unimplemented(*inst, "constant with elided values");
      XLAC_RETURN_IF_ERROR(e_.CheckComputeType(*inst, type));
      return e_.ConstantCompute(type, inst->literal(), 0);
    }
    case Opcode::kIota: {
      XLAC_RETURN_IF_ERROR(e_.CheckComputeType(*inst, type));
      llvm::Value* v = index[inst->IntAttr("iota_dimension")];
      llvm::Type* ct = e_.ComputeType(type);
      if (type == PrimitiveType::kPred) return b_.CreateICmpNE(v, e_.I64(0));
      if (ct->isFloatingPointTy()) return e_.RoundToType(b_.CreateSIToFP(v, ct), type);
      return b_.CreateTrunc(v, ct);
    }
    case Opcode::kBitcastConvert: {
      XLAC_ASSIGN_OR_RETURN(llvm::Value * v, EmitOperandAt(inst, 0, index));
      return e_.EmitBitcastConvert(*inst, v);
    }
    case Opcode::kCopy:
      return Emit(inst->operand(0), index);
    case Opcode::kBroadcast: {
      const std::vector<int64_t>& dims = inst->dimensions();
      Index src;
      for (int64_t d : dims) src.push_back(index[d]);
      if (src.size() != static_cast<size_t>(inst->operand(0)->shape().rank())) {
        src.assign(static_cast<size_t>(inst->operand(0)->shape().rank()), e_.I64(0));
      }
      return Emit(inst->operand(0), src);
    }
    case Opcode::kReshape: {
      XLAC_ASSIGN_OR_RETURN(Index src, ReshapeIndex(shape, inst->operand(0)->shape(), index));
      return Emit(inst->operand(0), src);
    }
    case Opcode::kBitcast: {
      const Shape& in = inst->operand(0)->shape();
      if (HasDefaultLayout(shape) && HasDefaultLayout(in)) {
        XLAC_ASSIGN_OR_RETURN(Index src, ReshapeIndex(shape, in, index));
        return Emit(inst->operand(0), src);
      }
      // Same bytes: the physical position carries over.
      std::vector<int64_t> out_strides = LayoutStrides(shape), in_strides = LayoutStrides(in);
      llvm::Value* linear = e_.I64(0);
      for (size_t d = 0; d < index.size(); ++d) {
        linear = b_.CreateAdd(linear, b_.CreateMul(index[d], e_.I64(out_strides[d])));
      }
      Index src(in.dimensions.size());
      for (size_t d = 0; d < src.size(); ++d) {
        src[d] = b_.CreateURem(b_.CreateUDiv(linear, e_.I64(in_strides[d])), e_.I64(in.dimensions[d]));
      }
      return Emit(inst->operand(0), src);
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& perm = inst->dimensions();
      Index src(perm.size());
      for (size_t i = 0; i < perm.size(); ++i) src[perm[i]] = index[i];
      return Emit(inst->operand(0), src);
    }
    case Opcode::kReverse: {
      Index src = index;
      for (int64_t d : inst->dimensions()) src[d] = b_.CreateSub(e_.I64(shape.dimensions[d] - 1), index[d]);
      return Emit(inst->operand(0), src);
    }
    case Opcode::kSlice: {
      const auto& ranges = inst->FindAttr("slice")->get<std::vector<SliceRange>>();
      Index src(index.size());
      for (size_t d = 0; d < index.size(); ++d) {
        src[d] = ranges[d].stride == 1 ? index[d] : b_.CreateMul(index[d], e_.I64(ranges[d].stride));
        if (ranges[d].start != 0) src[d] = b_.CreateAdd(src[d], e_.I64(ranges[d].start));
      }
      return Emit(inst->operand(0), src);
    }
    case Opcode::kConcatenate: {
      int64_t dim = inst->dimensions().at(0);
      llvm::Value* result = nullptr;
      int64_t offset = 0;
      for (int64_t k = 0; k < inst->operand_count(); ++k) {
        int64_t size = inst->operand(k)->shape().dimensions[dim];
        if (size == 0) continue;
        Index src = index;
        src[dim] = Clamp(b_, b_.CreateSub(index[dim], e_.I64(offset)), 0, size - 1);
        XLAC_ASSIGN_OR_RETURN(llvm::Value * v, Emit(inst->operand(k), src));
        result = result == nullptr ? v : b_.CreateSelect(b_.CreateICmpSGE(index[dim], e_.I64(offset)), v, result);
        offset += size;
      }
      if (result == nullptr) return Unimplemented(*inst, "concatenate of empty operands");
      return result;
    }
    case Opcode::kPad: {
      const PaddingConfig& config = inst->FindAttr("padding")->get<PaddingConfig>();
      const Shape& in = inst->operand(0)->shape();
      XLAC_ASSIGN_OR_RETURN(llvm::Value * pad, Emit(inst->operand(1), {}));
      for (int64_t n : in.dimensions) {
        if (n == 0) return pad;
      }
      llvm::Value* valid = b_.getTrue();
      Index src(index.size());
      for (size_t d = 0; d < index.size(); ++d) {
        const PaddingDimension& p = config.dimensions[d];
        llvm::Value* pos = b_.CreateSub(index[d], e_.I64(p.edge_padding_low));
        int64_t step = p.interior_padding + 1;
        llvm::Value* nonneg = b_.CreateSelect(b_.CreateICmpSLT(pos, e_.I64(0)), e_.I64(0), pos);
        llvm::Value* q = step == 1 ? nonneg : b_.CreateUDiv(nonneg, e_.I64(step));
        llvm::Value* ok = b_.CreateAnd(b_.CreateICmpSGE(pos, e_.I64(0)), b_.CreateICmpSLT(q, e_.I64(in.dimensions[d])));
        if (step != 1) ok = b_.CreateAnd(ok, b_.CreateICmpEQ(b_.CreateURem(nonneg, e_.I64(step)), e_.I64(0)));
        valid = b_.CreateAnd(valid, ok);
        src[d] = Clamp(b_, q, 0, in.dimensions[d] - 1);
      }
      XLAC_ASSIGN_OR_RETURN(llvm::Value * v, Emit(inst->operand(0), src));
      return b_.CreateSelect(valid, v, pad);
    }
    case Opcode::kDynamicSlice: {
      const Shape& in = inst->operand(0)->shape();
      size_t rank = in.dimensions.size();
      bool vector_form = inst->operand_count() == 2 && inst->operand(1)->shape().rank() == 1 && rank != 1;
      Index src(rank);
      for (size_t d = 0; d < rank; ++d) {
        const Instruction* operand = vector_form ? inst->operand(1) : inst->operand(1 + static_cast<int64_t>(d));
        PrimitiveType t = operand->shape().element_type;
        if (!IsIntegralType(t) || !IrEmitter::HasComputeType(t)) return Unimplemented(*inst, "start index type");
        XLAC_ASSIGN_OR_RETURN(llvm::Value * v,
                              Emit(operand, vector_form ? Index{e_.I64(static_cast<int64_t>(d))} : Index{}));
        if (IsSignedIntegralType(t)) {
          v = b_.CreateSExt(v, b_.getInt64Ty());
        } else {
          v = b_.CreateZExt(v, b_.getInt64Ty());
          if (BitWidth(t) == 64) v = b_.CreateSelect(b_.CreateICmpSLT(v, e_.I64(0)), e_.I64(INT64_MAX), v);
        }
        int64_t max_start = std::max<int64_t>(in.dimensions[d] - shape.dimensions[d], 0);
        src[d] = b_.CreateAdd(Clamp(b_, v, 0, max_start), index[d]);
      }
      return Emit(inst->operand(0), src);
    }
    default:
      break;
  }
  return Unimplemented(*inst, "op inside a fused computation");
}

}  // namespace xlac::codegen::internal
