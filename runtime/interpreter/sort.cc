// sort (multi-operand, custom comparator; always stable, which is a valid result for unstable sorts too) and topk.
#include <algorithm>
#include <numeric>

#include "runtime/interpreter/kernels.h"

namespace xlac::interp {
namespace {

// Calls f(base_offset) for every 1-D row along `dim` of an array of `dims`; the row's elements are at
// base_offset + j * stride.
template <typename F>
absl::Status ForEachRow(const std::vector<int64_t>& dims, int64_t dim, F&& f) {
  std::vector<int64_t> outer = dims;
  outer[static_cast<size_t>(dim)] = 1;
  for (int64_t d : dims) {
    if (d == 0) return absl::OkStatus();
  }
  std::vector<int64_t> strides = RowMajorStrides(dims);
  std::vector<int64_t> index(dims.size(), 0);
  do {
    int64_t base = 0;
    for (size_t k = 0; k < index.size(); ++k) base += index[k] * strides[k];
    XLAC_RETURN_IF_ERROR(f(base, strides[static_cast<size_t>(dim)]));
  } while (NextIndex(index, outer));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const Instruction& inst, Operands operands, Evaluator& ev) {
  if (operands.empty() || inst.called_computations().empty()) return Error(inst, "malformed sort");
  const std::vector<int64_t>& dims = operands[0]->shape().dimensions;
  const std::vector<int64_t>& attr = IntList(inst, "dimensions");
  int64_t dim = attr.empty() ? static_cast<int64_t>(dims.size()) - 1 : attr[0];
  if (dims.empty()) {
    // Sorting a scalar is the identity.
    if (operands.size() == 1) return *operands[0];
    std::vector<Literal> copies;
    for (const Literal* op : operands) copies.push_back(*op);
    return Literal::CreateTuple(std::move(copies));
  }
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) return Error(inst, "bad sort dimension {}", dim);
  ScalarComputation less(ev, *inst.called_computation(0));
  std::vector<Literal> results;
  for (const Literal* op : operands) results.push_back(*op);
  int64_t len = dims[static_cast<size_t>(dim)];
  std::vector<int64_t> perm(static_cast<size_t>(len));
  std::vector<ScalarComputation::In> args(2 * operands.size());
  absl::Status status;
  XLAC_RETURN_IF_ERROR(ForEachRow(dims, dim, [&](int64_t base, int64_t stride) -> absl::Status {
    std::iota(perm.begin(), perm.end(), 0);
    std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
      if (!status.ok()) return false;
      for (size_t k = 0; k < operands.size(); ++k) {
        args[2 * k] = {operands[k], base + a * stride};
        args[2 * k + 1] = {operands[k], base + b * stride};
      }
      absl::StatusOr<bool> r = less.ApplyPred(args);
      if (!r.ok()) {
        status = r.status();
        return false;
      }
      return *r;
    });
    XLAC_RETURN_IF_ERROR(status);
    for (size_t k = 0; k < operands.size(); ++k) {
      int64_t w = ByteWidth(operands[k]->shape().element_type);
      for (int64_t j = 0; j < len; ++j)
        CopyElement(*operands[k], base + perm[j] * stride, results[k], base + j * stride, w);
    }
    return absl::OkStatus();
  }));
  if (!inst.shape().IsTuple()) return std::move(results[0]);
  return Literal::CreateTuple(std::move(results));
}

// topk along the last dimension: the k largest (or smallest) values, ties broken by lower index, NaNs ordered by
// the total order (so they count as largest); indices as s32.
absl::StatusOr<Literal> EvalTopK(const Instruction& inst, Operands operands) {
  const Literal& x = *operands[0];
  int64_t k = IntAttr(inst, "k", 0);
  bool largest = BoolAttr(inst, "largest", true);
  const std::vector<int64_t>& dims = x.shape().dimensions;
  if (dims.empty() || !inst.shape().IsTuple() || inst.shape().tuple_shapes.size() != 2) {
    return Error(inst, "malformed topk");
  }
  int64_t len = dims.back();
  if (k < 0 || k > len) return Error(inst, "k={} out of range for {} elements", k, len);
  Literal values(inst.shape().tuple_shapes[0]);
  Literal indices(inst.shape().tuple_shapes[1]);
  int64_t rows = len == 0 ? 0 : x.element_count() / len;
  PrimitiveType t = x.shape().element_type;
  int64_t w = ByteWidth(t);
  absl::Status status = DispatchKind(KindOf(t), [&](auto tag) -> absl::Status {
    using C = decltype(tag);
    CompareFn<C> gt = GetCompareFn<C>(largest ? CompareDirection::kGt : CompareDirection::kLt, true);
    if (gt == nullptr) return Unsupported(inst, "topk is not defined for {}", PrimitiveTypeName(t));
    std::vector<C> v = LoadAll<C>(x);
    std::vector<int64_t> perm(static_cast<size_t>(len));
    for (int64_t r = 0; r < rows; ++r) {
      std::iota(perm.begin(), perm.end(), 0);
      std::stable_sort(perm.begin(), perm.end(),
                       [&](int64_t a, int64_t b) { return gt(v[r * len + a], v[r * len + b]); });
      for (int64_t j = 0; j < k; ++j) {
        CopyElement(x, r * len + perm[j], values, r * k + j, w);
        indices.SetFromInt64(r * k + j, perm[j]);
      }
    }
    return absl::OkStatus();
  });
  XLAC_RETURN_IF_ERROR(status);
  std::vector<Literal> elements;
  elements.push_back(std::move(values));
  elements.push_back(std::move(indices));
  return Literal::CreateTuple(std::move(elements));
}

}  // namespace xlac::interp
