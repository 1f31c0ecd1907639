// Shape inference for gather and (variadic) scatter, including the batching dimensions of newer XLA.
#include <algorithm>
#include <set>

#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"

namespace xlac::shape_inference_internal {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// `name` entries must lie in [0, bound), be unique and (if `sorted`) ascending.
absl::Status CheckDimList(const Instruction& inst, std::string_view name, const std::vector<int64_t>& dims,
                          int64_t bound, bool sorted) {
  std::set<int64_t> seen;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0 || dims[i] >= bound) {
      return OpError(inst, "{} entry {} is out of range [0, {})", name, dims[i], bound);
    }
    if (!seen.insert(dims[i]).second) return OpError(inst, "{} repeats dimension {}", name, dims[i]);
    if (sorted && i > 0 && dims[i - 1] > dims[i]) {
      return OpError(inst, "{} must be sorted, got {{{}}}", name, JoinInts(dims));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDisjoint(const Instruction& inst, std::string_view a_name, const std::vector<int64_t>& a,
                           std::string_view b_name, const std::vector<int64_t>& b) {
  for (int64_t x : a) {
    if (Contains(b, x)) return OpError(inst, "dimension {} is in both {} and {}", x, a_name, b_name);
  }
  return absl::OkStatus();
}

// The indices shape with the implicit trailing index-vector dimension made explicit, as XLA does when
// index_vector_dim == rank(indices).
absl::StatusOr<std::vector<int64_t>> ExpandedIndices(const Instruction& inst, const Shape& indices,
                                                     int64_t index_vector_dim) {
  if (!indices.IsArray() || !IsIntegralType(indices.element_type)) {
    return OpError(inst, "indices must be an integral array, got {}", Str(indices));
  }
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return OpError(inst, "index_vector_dim {} out of range for indices of rank {}", index_vector_dim, indices.rank());
  }
  std::vector<int64_t> expanded = indices.dimensions;
  if (index_vector_dim == indices.rank()) expanded.push_back(1);
  return expanded;
}

absl::StatusOr<Shape> InferGather(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> offset_dims, OptionalIntList(inst, "offset_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> collapsed, OptionalIntList(inst, "collapsed_slice_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> start_index_map, OptionalIntList(inst, "start_index_map"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> operand_batching, OptionalIntList(inst, "operand_batching_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> indices_batching, OptionalIntList(inst, "start_indices_batching_dims"));
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* slice_sizes, RequiredIntList(inst, "slice_sizes"));
  XLAC_ASSIGN_OR_RETURN(int64_t index_vector_dim, RequiredInt(inst, "index_vector_dim"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> expanded, ExpandedIndices(inst, indices, index_vector_dim));

  const int64_t expanded_rank = static_cast<int64_t>(expanded.size());
  const int64_t result_rank = static_cast<int64_t>(offset_dims.size()) + expanded_rank - 1;
  XLAC_RETURN_IF_ERROR(CheckDimList(inst, "offset_dims", offset_dims, result_rank, /*sorted=*/true));
  if (static_cast<int64_t>(start_index_map.size()) != expanded[index_vector_dim]) {
    return OpError(inst, "start_index_map has {} entries but dimension index_vector_dim={} of the indices is {}",
                   start_index_map.size(), index_vector_dim, expanded[index_vector_dim]);
  }
  XLAC_RETURN_IF_ERROR(CheckDimList(inst, "start_index_map", start_index_map, operand.rank(), /*sorted=*/false));
  XLAC_RETURN_IF_ERROR(CheckDimList(inst, "collapsed_slice_dims", collapsed, operand.rank(), /*sorted=*/true));
  XLAC_RETURN_IF_ERROR(CheckDimList(inst, "operand_batching_dims", operand_batching, operand.rank(), /*sorted=*/true));
  XLAC_RETURN_IF_ERROR(
      CheckDisjoint(inst, "operand_batching_dims", operand_batching, "collapsed_slice_dims", collapsed));
  XLAC_RETURN_IF_ERROR(CheckDimList(inst, "start_indices_batching_dims", indices_batching, expanded_rank,
                                    /*sorted=*/false));
  if (Contains(indices_batching, index_vector_dim)) {
    return OpError(inst, "start_indices_batching_dims must not contain index_vector_dim {}", index_vector_dim);
  }
  if (indices_batching.size() != operand_batching.size()) {
    return OpError(inst, "operand_batching_dims and start_indices_batching_dims differ in length: {} vs {}",
                   operand_batching.size(), indices_batching.size());
  }
  if (static_cast<int64_t>(slice_sizes->size()) != operand.rank()) {
    return OpError(inst, "slice_sizes has {} entries but the operand {} has rank {}", slice_sizes->size(), Str(operand),
                   operand.rank());
  }
  if (slice_sizes->size() != offset_dims.size() + collapsed.size() + operand_batching.size()) {
    return OpError(inst,
                   "every operand dimension must be an offset, collapsed or batching dimension: {} slice sizes but "
                   "{} offset, {} collapsed and {} batching dims",
                   slice_sizes->size(), offset_dims.size(), collapsed.size(), operand_batching.size());
  }
  for (int64_t i = 0; i < operand.rank(); ++i) {
    int64_t size = (*slice_sizes)[i];
    if (size < 0 || (operand.dimensions[i] != Shape::kUnboundedSize && size > operand.dimensions[i])) {
      return OpError(inst, "slice size {} at index {} is out of range [0, {}]", size, i, operand.dimensions[i]);
    }
  }
  for (int64_t d : collapsed) {
    if ((*slice_sizes)[d] > 1)
      return OpError(inst, "collapsed dimension {} has slice size {} > 1", d, (*slice_sizes)[d]);
  }
  for (int64_t d : operand_batching) {
    if ((*slice_sizes)[d] > 1)
      return OpError(inst, "batching dimension {} has slice size {} > 1", d, (*slice_sizes)[d]);
  }

  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  int64_t operand_dim = 0;
  int64_t indices_dim = 0;
  for (int64_t i = 0; i < result_rank; ++i) {
    if (std::binary_search(offset_dims.begin(), offset_dims.end(), i)) {
      while (Contains(collapsed, operand_dim) || Contains(operand_batching, operand_dim)) ++operand_dim;
      int64_t size = (*slice_sizes)[operand_dim];
      dims.push_back(size);
      dynamic.push_back(size == operand.dimensions[operand_dim] && operand.dynamic_dimensions[operand_dim]);
      ++operand_dim;
    } else {
      if (indices_dim == index_vector_dim) ++indices_dim;
      dims.push_back(expanded[indices_dim]);
      dynamic.push_back(indices_dim < indices.rank() && indices.dynamic_dimensions[indices_dim]);
      ++indices_dim;
    }
  }
  return MakeShape(operand.element_type, std::move(dims), std::move(dynamic));
}

absl::StatusOr<Shape> InferScatter(const Instruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (inst.operand_count() < 3 || inst.operand_count() != 2 * n + 1) {
    return OpError(inst, "expected N operands, the indices and N updates (an odd count >= 3), got {} operands",
                   inst.operand_count());
  }
  const Shape& indices = inst.operand(n)->shape();
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> update_window_dims, OptionalIntList(inst, "update_window_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> inserted, OptionalIntList(inst, "inserted_window_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> to_operand, OptionalIntList(inst, "scatter_dims_to_operand_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> input_batching, OptionalIntList(inst, "input_batching_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> indices_batching, OptionalIntList(inst, "scatter_indices_batching_dims"));
  XLAC_ASSIGN_OR_RETURN(int64_t index_vector_dim, RequiredInt(inst, "index_vector_dim"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> expanded, ExpandedIndices(inst, indices, index_vector_dim));
  const int64_t expanded_rank = static_cast<int64_t>(expanded.size());

  std::vector<Shape> results;
  for (int64_t k = 0; k < n; ++k) {
    const Shape& operand = inst.operand(k)->shape();
    const Shape& updates = inst.operand(n + 1 + k)->shape();
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, fmt::format("operand {}", k)));
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, updates, fmt::format("updates {}", k)));
    if (k > 0 && !SameDimensions(operand, inst.operand(0)->shape())) {
      return OpError(inst, "operands must have the same dimensions, got {} and {}", Str(inst.operand(0)->shape()),
                     Str(operand));
    }
    const int64_t expected_updates_rank = expanded_rank - 1 + static_cast<int64_t>(update_window_dims.size());
    if (updates.rank() != expected_updates_rank) {
      return OpError(inst, "updates {} must have rank {}", Str(updates), expected_updates_rank);
    }
    // Newer XLA accepts update_window_dims in any order.
    XLAC_RETURN_IF_ERROR(
        CheckDimList(inst, "update_window_dims", update_window_dims, updates.rank(), /*sorted=*/false));
    XLAC_RETURN_IF_ERROR(CheckDimList(inst, "inserted_window_dims", inserted, operand.rank(), /*sorted=*/true));
    XLAC_RETURN_IF_ERROR(CheckDimList(inst, "input_batching_dims", input_batching, operand.rank(), /*sorted=*/true));
    XLAC_RETURN_IF_ERROR(CheckDisjoint(inst, "input_batching_dims", input_batching, "inserted_window_dims", inserted));
    if (update_window_dims.size() + inserted.size() + input_batching.size() != static_cast<size_t>(operand.rank())) {
      return OpError(inst, "window of {} update, {} inserted and {} batching dims does not match operand {} of rank {}",
                     update_window_dims.size(), inserted.size(), input_batching.size(), Str(operand), operand.rank());
    }
    if (static_cast<int64_t>(to_operand.size()) != expanded[index_vector_dim]) {
      return OpError(inst,
                     "scatter_dims_to_operand_dims has {} entries but dimension index_vector_dim={} of the indices "
                     "is {}",
                     to_operand.size(), index_vector_dim, expanded[index_vector_dim]);
    }
    XLAC_RETURN_IF_ERROR(
        CheckDimList(inst, "scatter_dims_to_operand_dims", to_operand, operand.rank(), /*sorted=*/false));
    XLAC_RETURN_IF_ERROR(CheckDimList(inst, "scatter_indices_batching_dims", indices_batching, expanded_rank,
                                      /*sorted=*/false));
    if (Contains(indices_batching, index_vector_dim)) {
      return OpError(inst, "scatter_indices_batching_dims must not contain index_vector_dim {}", index_vector_dim);
    }
    if (indices_batching.size() != input_batching.size()) {
      return OpError(inst, "input_batching_dims and scatter_indices_batching_dims differ in length: {} vs {}",
                     input_batching.size(), indices_batching.size());
    }
    // Window dims of the updates may not exceed the operand dims they map to.
    std::vector<int64_t> max_window;
    for (int64_t d = 0; d < operand.rank(); ++d) {
      if (!Contains(inserted, d) && !Contains(input_batching, d)) max_window.push_back(operand.dimensions[d]);
    }
    for (size_t i = 0; i < update_window_dims.size(); ++i) {
      int64_t size = updates.dimensions[update_window_dims[i]];
      if (size != Shape::kUnboundedSize && max_window[i] != Shape::kUnboundedSize && size > max_window[i]) {
        return OpError(inst, "updates window dimension {} has size {}, larger than the operand bound {}",
                       update_window_dims[i], size, max_window[i]);
      }
    }
    int64_t indices_dim = 0;
    for (int64_t d = 0; d < updates.rank(); ++d) {
      if (Contains(update_window_dims, d)) continue;
      if (indices_dim == index_vector_dim) ++indices_dim;
      if (!DimsCompatible(updates.dimensions[d], expanded[indices_dim])) {
        return OpError(inst, "updates scatter dimension {} has size {} but the indices dimension is {}", d,
                       updates.dimensions[d], expanded[indices_dim]);
      }
      ++indices_dim;
    }
    results.push_back(StripLayout(operand));
  }

  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  XLAC_ASSIGN_OR_RETURN(ProgramShape reducer, CalledProgramShape(inst, 0));
  std::vector<Shape> init_shapes;
  std::vector<const Shape*> inits;
  std::vector<PrimitiveType> update_types;
  init_shapes.reserve(n);
  for (int64_t k = 0; k < n; ++k) init_shapes.push_back(MakeShape(inst.operand(k)->shape().element_type, {}));
  for (int64_t k = 0; k < n; ++k) {
    inits.push_back(&init_shapes[k]);
    update_types.push_back(inst.operand(n + 1 + k)->shape().element_type);
  }
  XLAC_RETURN_IF_ERROR(VerifyReducerShape(inst, reducer, inits, update_types));
  if (n == 1) return results[0];
  return Shape::Tuple(std::move(results));
}

}  // namespace

absl::StatusOr<Shape> InferGatherScatterShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kGather:
      return InferGather(inst);
    case Opcode::kScatter:
      return InferScatter(inst);
    default:
      return NotImplemented(inst);
  }
}

}  // namespace xlac::shape_inference_internal
