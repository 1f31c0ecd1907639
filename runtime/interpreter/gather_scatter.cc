// gather and scatter with full dimension numbers, including batching dimensions.
//
// gather clamps each start index so the slice stays inside the operand; scatter skips an update window entirely
// when any part of it would land outside the operand (both as XLA does).
#include <algorithm>

#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// Reads start-index vectors out of an indices array whose index vector lives in `index_vector_dim` (== rank
// means an implicit trailing dimension of size 1).
struct IndexReader {
  const Literal& indices;
  int64_t index_vector_dim;
  std::vector<int64_t> strides;
  std::vector<int64_t> batch_dims;  // dims of `indices` other than index_vector_dim, in order

  IndexReader(const Literal& lit, int64_t ivd) : indices(lit), index_vector_dim(ivd) {
    strides = RowMajorStrides(lit.shape().dimensions);
    for (int64_t d = 0; d < static_cast<int64_t>(lit.shape().dimensions.size()); ++d) {
      if (d != ivd) batch_dims.push_back(d);
    }
  }
  // Position among batch dims of indices dimension `dim`.
  int64_t BatchPosition(int64_t dim) const { return dim < index_vector_dim ? dim : dim - 1; }
  // Component j of the index vector at batch index `batch` (one entry per batch dim).
  int64_t Get(const std::vector<int64_t>& batch, int64_t j) const {
    int64_t off = 0;
    for (size_t k = 0; k < batch_dims.size(); ++k) off += batch[k] * strides[static_cast<size_t>(batch_dims[k])];
    if (index_vector_dim < static_cast<int64_t>(strides.size())) off += j * strides[index_vector_dim];
    return IndexValue(indices, off);
  }
};

}  // namespace

absl::StatusOr<Literal> EvalGather(const Instruction& inst, Operands operands) {
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const std::vector<int64_t>& offset_dims = IntList(inst, "offset_dims");
  const std::vector<int64_t>& collapsed = IntList(inst, "collapsed_slice_dims");
  const std::vector<int64_t>& start_index_map = IntList(inst, "start_index_map");
  const std::vector<int64_t>& slice_sizes = IntList(inst, "slice_sizes");
  const std::vector<int64_t>& operand_batching = IntList(inst, "operand_batching_dims");
  const std::vector<int64_t>& indices_batching = IntList(inst, "start_indices_batching_dims");
  int64_t ivd = IntAttr(inst, "index_vector_dim", static_cast<int64_t>(indices.shape().dimensions.size()));
  const std::vector<int64_t>& od = operand.shape().dimensions;
  size_t rank = od.size();
  if (slice_sizes.size() != rank) return Error(inst, "slice_sizes has the wrong rank");
  IndexReader reader(indices, ivd);
  // Operand dims receiving the output's offset dims, in increasing order.
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d) {
    if (!Contains(collapsed, d) && !Contains(operand_batching, d)) window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != offset_dims.size()) return Error(inst, "offset_dims do not match the slice");
  const std::vector<int64_t>& out_dims = inst.shape().dimensions;
  std::vector<int64_t> batch_out_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(out_dims.size()); ++d) {
    if (!Contains(offset_dims, d)) batch_out_dims.push_back(d);
  }
  Literal result(inst.shape());
  int64_t w = ByteWidth(inst.shape().element_type);
  std::vector<int64_t> ostrides = RowMajorStrides(od);
  std::vector<int64_t> out(out_dims.size(), 0), batch(batch_out_dims.size()), start(rank);
  for (int64_t i = 0; i < result.element_count(); ++i, NextIndex(out, out_dims)) {
    for (size_t k = 0; k < batch_out_dims.size(); ++k) batch[k] = out[static_cast<size_t>(batch_out_dims[k])];
    std::fill(start.begin(), start.end(), 0);
    for (size_t j = 0; j < start_index_map.size(); ++j) {
      start[static_cast<size_t>(start_index_map[j])] = reader.Get(batch, static_cast<int64_t>(j));
    }
    for (size_t k = 0; k < operand_batching.size(); ++k) {
      start[static_cast<size_t>(operand_batching[k])] =
          batch[static_cast<size_t>(reader.BatchPosition(indices_batching[k]))];
    }
    int64_t src = 0;
    for (size_t d = 0; d < rank; ++d) {
      start[d] = std::clamp<int64_t>(start[d], 0, std::max<int64_t>(od[d] - slice_sizes[d], 0));
    }
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      start[static_cast<size_t>(window_operand_dims[k])] += out[static_cast<size_t>(offset_dims[k])];
    }
    for (size_t d = 0; d < rank; ++d) src += start[d] * ostrides[d];
    CopyElement(operand, src, result, i, w);
  }
  return result;
}

absl::StatusOr<Literal> EvalScatter(const Instruction& inst, Operands operands, Evaluator& ev) {
  if (operands.size() < 3 || operands.size() % 2 == 0 || inst.called_computations().empty()) {
    return Error(inst, "malformed scatter");
  }
  size_t n = (operands.size() - 1) / 2;
  Operands inputs = operands.subspan(0, n);
  const Literal& indices = *operands[n];
  Operands updates = operands.subspan(n + 1);
  const std::vector<int64_t>& update_window_dims = IntList(inst, "update_window_dims");
  const std::vector<int64_t>& inserted = IntList(inst, "inserted_window_dims");
  const std::vector<int64_t>& to_operand = IntList(inst, "scatter_dims_to_operand_dims");
  const std::vector<int64_t>& input_batching = IntList(inst, "input_batching_dims");
  const std::vector<int64_t>& indices_batching = IntList(inst, "scatter_indices_batching_dims");
  int64_t ivd = IntAttr(inst, "index_vector_dim", static_cast<int64_t>(indices.shape().dimensions.size()));
  const std::vector<int64_t>& od = inputs[0]->shape().dimensions;
  const std::vector<int64_t>& ud = updates[0]->shape().dimensions;
  size_t rank = od.size();
  IndexReader reader(indices, ivd);

  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < static_cast<int64_t>(rank); ++d) {
    if (!Contains(inserted, d) && !Contains(input_batching, d)) window_operand_dims.push_back(d);
  }
  if (window_operand_dims.size() != update_window_dims.size()) {
    return Error(inst, "update_window_dims do not match the operand");
  }
  std::vector<int64_t> scatter_dims, scatter_sizes, window_sizes;
  for (int64_t d = 0; d < static_cast<int64_t>(ud.size()); ++d) {
    if (!Contains(update_window_dims, d)) {
      scatter_dims.push_back(d);
      scatter_sizes.push_back(ud[static_cast<size_t>(d)]);
    }
  }
  // Extent of the update window along each operand dim (1 for inserted and batching dims).
  std::vector<int64_t> extent(rank, 1);
  for (size_t k = 0; k < update_window_dims.size(); ++k) {
    window_sizes.push_back(ud[static_cast<size_t>(update_window_dims[k])]);
    extent[static_cast<size_t>(window_operand_dims[k])] = window_sizes.back();
  }

  std::vector<Literal> results;
  for (size_t i = 0; i < n; ++i) {
    Shape s = inst.shape().IsTuple() ? inst.shape().tuple_shapes[i] : inst.shape();
    Literal lit(s);
    CopyBytes(lit.mutable_raw_data(), inputs[i]->raw_data(), lit.byte_size());
    results.push_back(std::move(lit));
  }
  ScalarComputation combiner(ev, *inst.called_computation(0));
  std::vector<int64_t> ostrides = RowMajorStrides(od), ustrides = RowMajorStrides(ud);
  std::vector<ScalarComputation::In> args(2 * n);
  std::vector<ScalarComputation::Out> outs(n);
  std::vector<int64_t> sidx(scatter_dims.size(), 0), widx(update_window_dims.size(), 0), start(rank);
  bool any_scatter = std::none_of(scatter_sizes.begin(), scatter_sizes.end(), [](int64_t s) { return s == 0; });
  bool any_window = std::none_of(window_sizes.begin(), window_sizes.end(), [](int64_t s) { return s == 0; });
  if (!any_scatter || !any_window) {
    return inst.shape().IsTuple() ? Literal::CreateTuple(std::move(results)) : std::move(results[0]);
  }
  do {
    std::fill(start.begin(), start.end(), 0);
    for (size_t j = 0; j < to_operand.size(); ++j) {
      start[static_cast<size_t>(to_operand[j])] = reader.Get(sidx, static_cast<int64_t>(j));
    }
    for (size_t k = 0; k < input_batching.size(); ++k) {
      start[static_cast<size_t>(input_batching[k])] =
          sidx[static_cast<size_t>(reader.BatchPosition(indices_batching[k]))];
    }
    bool in_bounds = true;
    for (size_t d = 0; d < rank; ++d) {
      if (start[d] < 0 || start[d] > od[d] - extent[d]) in_bounds = false;
    }
    if (!in_bounds) continue;
    int64_t base = 0, ubase = 0;
    for (size_t d = 0; d < rank; ++d) base += start[d] * ostrides[d];
    for (size_t k = 0; k < scatter_dims.size(); ++k) ubase += sidx[k] * ustrides[static_cast<size_t>(scatter_dims[k])];
    std::fill(widx.begin(), widx.end(), 0);
    do {
      int64_t dst = base, usrc = ubase;
      for (size_t k = 0; k < widx.size(); ++k) {
        dst += widx[k] * ostrides[static_cast<size_t>(window_operand_dims[k])];
        usrc += widx[k] * ustrides[static_cast<size_t>(update_window_dims[k])];
      }
      for (size_t i = 0; i < n; ++i) {
        args[i] = {&results[i], dst};
        args[n + i] = {updates[i], usrc};
        outs[i] = {&results[i], dst};
      }
      XLAC_RETURN_IF_ERROR(combiner.Apply(args, outs));
    } while (NextIndex(widx, window_sizes));
  } while (NextIndex(sidx, scatter_sizes));
  return inst.shape().IsTuple() ? Literal::CreateTuple(std::move(results)) : std::move(results[0]);
}

}  // namespace xlac::interp
