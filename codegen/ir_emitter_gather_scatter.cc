// gather and scatter with full dimension numbers (including operand/indices batching dimensions), and map.
//
// As in the interpreter (runtime/interpreter/gather_scatter.cc): gather clamps every start index so the slice stays
// inside the operand; scatter copies its inputs to the results, then walks the update scatter indices and, inside
// each, the window row-major, skipping a whole window when any part of it would land outside the operand, and
// applies the update computation (inline scalar code) to (current results..., updates...). Start indices of an
// unsigned type above int64 max saturate to int64 max. indices_are_sorted/unique_indices change nothing.
#include <algorithm>
#include <cstdint>

#include "codegen/ir_emitter_internal.h"

namespace xlac::codegen::internal {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

bool AllStatic(const Instruction& inst) {
  if (!inst.shape().IsStatic()) return false;
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsStatic()) return false;
  }
  return true;
}

// Reads start-index vectors out of an indices array whose index vector lives in `index_vector_dim` (== rank means
// an implicit trailing dimension of size 1). `batch` has one entry per indices dimension other than that one.
class IndexReader {
 public:
  IndexReader(IrEmitter& e, IrArray indices, int64_t index_vector_dim)
      : e_(e), indices_(std::move(indices)), ivd_(index_vector_dim) {}

  int64_t BatchPosition(int64_t dim) const { return dim < ivd_ ? dim : dim - 1; }

  // Component j of the index vector at `batch`, as the interpreter's IndexValue reads it (i64).
  llvm::Value* Get(const Index& batch, int64_t j) {
    llvm::IRBuilder<>& b = e_.b();
    int64_t rank = indices_.shape.rank();
    Index idx(static_cast<size_t>(rank));
    size_t k = 0;
    for (int64_t d = 0; d < rank; ++d) idx[d] = d == ivd_ ? e_.I64(j) : batch[k++];
    llvm::Value* v = e_.LoadCompute(indices_, idx);
    PrimitiveType t = indices_.shape.element_type;
    if (IsSignedIntegralType(t)) return b.CreateSExt(v, b.getInt64Ty());
    v = b.CreateZExt(v, b.getInt64Ty());
    if (BitWidth(t) == 64) v = b.CreateSelect(b.CreateICmpSLT(v, e_.I64(0)), e_.I64(INT64_MAX), v);
    return v;
  }

 private:
  IrEmitter& e_;
  IrArray indices_;
  int64_t ivd_;
};

absl::Status CheckIndices(const Instruction& inst, const Shape& indices, int64_t ivd) {
  PrimitiveType t = indices.element_type;
  if (!IsIntegralType(t) || !IrEmitter::HasComputeType(t)) {
    return Unimplemented(inst, "start indices of type {}", PrimitiveTypeName(t));
  }
  if (ivd < 0 || ivd > indices.rank()) return Unimplemented(inst, "index_vector_dim {}", ivd);
  return absl::OkStatus();
}

}  // namespace

absl::Status IrEmitter::EmitGather(const Instruction& inst) {
  if (inst.operand_count() != 2 || !inst.shape().IsArray() || !AllStatic(inst)) {
    return Unimplemented(inst, "gather with dynamic shapes");
  }
  IrArray operand = ArrayFor(inst.operand(0)), indices = ArrayFor(inst.operand(1)), out = ArrayFor(&inst);
  const std::vector<int64_t>& offset_dims = inst.IntListAttr("offset_dims");
  const std::vector<int64_t>& collapsed = inst.IntListAttr("collapsed_slice_dims");
  const std::vector<int64_t>& start_index_map = inst.IntListAttr("start_index_map");
  const std::vector<int64_t>& slice_sizes = inst.IntListAttr("slice_sizes");
  const std::vector<int64_t>& operand_batching = inst.IntListAttr("operand_batching_dims");
  const std::vector<int64_t>& indices_batching = inst.IntListAttr("start_indices_batching_dims");
  int64_t ivd = inst.IntAttr("index_vector_dim", indices.shape.rank());
  XLAC_RETURN_IF_ERROR(CheckIndices(inst, indices.shape, ivd));
  const std::vector<int64_t>& od = operand.shape.dimensions;
  size_t rank = od.size();
  if (slice_sizes.size() != rank) return Unimplemented(inst, "slice_sizes of the wrong rank");
  for (size_t d = 0; d < rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > od[d]) return Unimplemented(inst, "slice larger than the operand");
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d) {
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != offset_dims.size()) return Unimplemented(inst, "offset_dims mismatch");
  std::vector<int64_t> batch_out_dims;
  for (int64_t d = 0; d < out.shape.rank(); ++d) {
    if (!Contains(offset_dims, d)) batch_out_dims.push_back(d);
  }
  IndexReader reader(*this, indices, ivd);
  ShapeLoop(out.shape, [&](const Index& out_index) {
    Index batch;
    for (int64_t d : batch_out_dims) batch.push_back(out_index[d]);
    Index start(rank, I64(0));
    for (size_t j = 0; j < start_index_map.size(); ++j) {
      start[start_index_map[j]] = reader.Get(batch, static_cast<int64_t>(j));
    }
    for (size_t k = 0; k < operand_batching.size(); ++k) {
      start[operand_batching[k]] = batch[reader.BatchPosition(indices_batching[k])];
    }
    for (size_t d = 0; d < rank; ++d) {
      int64_t max_start = std::max<int64_t>(od[d] - slice_sizes[d], 0);
      llvm::Value* v = b_.CreateSelect(b_.CreateICmpSLT(start[d], I64(0)), I64(0), start[d]);
      start[d] = b_.CreateSelect(b_.CreateICmpSGT(v, I64(max_start)), I64(max_start), v);
    }
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      int64_t d = window_operand_dims[k];
      start[d] = b_.CreateNSWAdd(start[d], out_index[offset_dims[k]]);
    }
    StoreRaw(out, out_index, LoadRaw(operand, start));
  });
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitScatter(const Instruction& inst) {
  if (inst.operand_count() < 3 || inst.operand_count() % 2 == 0 || inst.called_computations().empty()) {
    return Unimplemented(inst, "malformed scatter");
  }
  if (!AllStatic(inst)) return Unimplemented(inst, "scatter with dynamic shapes");
  size_t n = static_cast<size_t>(inst.operand_count() - 1) / 2;
  std::vector<IrArray> inputs, updates, results;
  for (size_t i = 0; i < n; ++i) {
    inputs.push_back(ArrayFor(inst.operand(static_cast<int64_t>(i))));
    updates.push_back(ArrayFor(inst.operand(static_cast<int64_t>(n + 1 + i))));
    results.push_back(inst.shape().IsTuple() ? ArrayFor(&inst, {static_cast<int64_t>(i)}) : ArrayFor(&inst));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, results.back().shape.element_type));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, updates.back().shape.element_type));
  }
  IrArray indices = ArrayFor(inst.operand(static_cast<int64_t>(n)));
  const std::vector<int64_t>& update_window_dims = inst.IntListAttr("update_window_dims");
  const std::vector<int64_t>& inserted = inst.IntListAttr("inserted_window_dims");
  const std::vector<int64_t>& to_operand = inst.IntListAttr("scatter_dims_to_operand_dims");
  const std::vector<int64_t>& input_batching = inst.IntListAttr("input_batching_dims");
  const std::vector<int64_t>& indices_batching = inst.IntListAttr("scatter_indices_batching_dims");
  int64_t ivd = inst.IntAttr("index_vector_dim", indices.shape.rank());
  XLAC_RETURN_IF_ERROR(CheckIndices(inst, indices.shape, ivd));
  const std::vector<int64_t>& od = inputs[0].shape.dimensions;
  const std::vector<int64_t>& ud = updates[0].shape.dimensions;
  size_t rank = od.size();
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d) {
    if (!Contains(inserted, d) && !Contains(input_batching, d)) window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != update_window_dims.size()) {
    return Unimplemented(inst, "update_window_dims mismatch");
  }
  std::vector<int64_t> scatter_dims, scatter_sizes, window_sizes;
  for (int64_t d = 0; d < static_cast<int64_t>(ud.size()); ++d) {
    if (!Contains(update_window_dims, d)) {
      scatter_dims.push_back(d);
      scatter_sizes.push_back(ud[d]);
    }
  }
  std::vector<int64_t> extent(rank, 1);
  for (size_t k = 0; k < update_window_dims.size(); ++k) {
    window_sizes.push_back(ud[update_window_dims[k]]);
    extent[window_operand_dims[k]] = window_sizes.back();
  }
  // The results start as copies of the inputs.
  for (size_t i = 0; i < n; ++i) {
    if (inputs[i].slice == results[i].slice && inputs[i].strides == results[i].strides) continue;
    if (inputs[i].strides == results[i].strides) {
      MemCopy(results[i].base, inputs[i].base, *results[i].shape.ByteSizeOf());
    } else {
      IrArray& in = inputs[i];
      IrArray& res = results[i];
      ShapeLoop(res.shape, [&](const Index& index) { StoreRaw(res, index, LoadRaw(in, index)); });
    }
  }
  IndexReader reader(*this, indices, ivd);
  const Computation& combiner = *inst.called_computation(0);
  auto row_major = [](size_t count) {
    std::vector<int64_t> order(count);
    for (size_t i = 0; i < count; ++i) order[i] = static_cast<int64_t>(i);
    return order;
  };
  absl::Status status;
  LoopNest(scatter_sizes, row_major(scatter_sizes.size()), [&](const Index& sidx) {
    if (!status.ok()) return;
    Index start(rank, I64(0));
    for (size_t j = 0; j < to_operand.size(); ++j) start[to_operand[j]] = reader.Get(sidx, static_cast<int64_t>(j));
    for (size_t k = 0; k < input_batching.size(); ++k) {
      start[input_batching[k]] = sidx[reader.BatchPosition(indices_batching[k])];
    }
    llvm::Value* in_bounds = b_.getTrue();
    for (size_t d = 0; d < rank; ++d) {
      int64_t max_start = od[d] - extent[d];
      // 0 <= start <= max_start, as one unsigned comparison; never when the window is larger than the operand.
      llvm::Value* ok = max_start < 0 ? b_.getFalse() : b_.CreateICmpULE(start[d], I64(max_start));
      in_bounds = b_.CreateAnd(in_bounds, ok);
    }
    llvm::BasicBlock* apply = llvm::BasicBlock::Create(ctx(), "scatter.apply", function_);
    llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx(), "scatter.next", function_);
    b_.CreateCondBr(in_bounds, apply, next);
    b_.SetInsertPoint(apply);
    LoopNest(window_sizes, row_major(window_sizes.size()), [&](const Index& widx) {
      if (!status.ok()) return;
      Index dst = start;
      Index usrc(ud.size());
      for (size_t k = 0; k < scatter_dims.size(); ++k) usrc[scatter_dims[k]] = sidx[k];
      for (size_t k = 0; k < widx.size(); ++k) {
        dst[window_operand_dims[k]] = b_.CreateNSWAdd(dst[window_operand_dims[k]], widx[k]);
        usrc[update_window_dims[k]] = widx[k];
      }
      std::vector<llvm::Value*> args;
      for (size_t i = 0; i < n; ++i) args.push_back(LoadCompute(results[i], dst));
      for (size_t i = 0; i < n; ++i) args.push_back(LoadCompute(updates[i], usrc));
      absl::StatusOr<std::vector<llvm::Value*>> r = EmitScalarComputation(combiner, args);
      if (!r.ok()) {
        status = r.status();
        return;
      }
      if (r->size() != n) {
        status = Unimplemented(inst, "update computation result arity");
        return;
      }
      for (size_t i = 0; i < n; ++i) StoreCompute(results[i], dst, (*r)[i]);
    });
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
  });
  return status;
}

absl::Status IrEmitter::EmitMap(const Instruction& inst) {
  if (inst.called_computations().empty() || !inst.shape().IsArray() || !AllStatic(inst)) {
    return Unimplemented(inst, "map with dynamic shapes");
  }
  IrArray out = ArrayFor(&inst);
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, out.shape.element_type));
  std::vector<IrArray> operands;
  for (const Instruction* operand : inst.operands()) {
    operands.push_back(ArrayFor(operand));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, operands.back().shape.element_type));
    if (operands.back().shape.dimensions != out.shape.dimensions) return Unimplemented(inst, "operand shape");
  }
  const Computation& fn = *inst.called_computation(0);
  absl::Status status;
  // Each output element depends only on the operand elements at the same index, so walking the output's memory
  // order is safe even when the output overwrites an operand in place.
  ShapeLoop(out.shape, [&](const Index& index) {
    if (!status.ok()) return;
    std::vector<llvm::Value*> args;
    for (const IrArray& a : operands) args.push_back(LoadCompute(a, index));
    absl::StatusOr<std::vector<llvm::Value*>> r = EmitScalarComputation(fn, args);
    if (!r.ok()) {
      status = r.status();
      return;
    }
    if (r->size() != 1) {
      status = Unimplemented(inst, "map computation with a tuple result");
      return;
    }
    StoreCompute(out, index, (*r)[0]);
  });
  return status;
}

}  // namespace xlac::codegen::internal
