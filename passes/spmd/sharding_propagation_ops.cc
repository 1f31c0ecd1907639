// Sharding propagation: the order on shardings and the per-op rules that map a sharding across one instruction.
//
// Most rules are a dimension map: each target dimension takes the tiles of one source dimension, and the tiles of
// source dimensions no target dimension takes become replication (RegroupAxes). Replicated, maximal and manual
// shardings describe whole values, so they cross every mapped op unchanged.
#include <algorithm>
#include <limits>
#include <numeric>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ir/kernel_calls.h"
#include "passes/spmd/sharding_propagation_internal.h"

namespace xlac::spmd {
namespace {

// Per target dimension, the source dimension whose tiles it takes, or -1.
using DimMap = std::vector<int64_t>;

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

DimMap IdentityMap(int64_t rank) {
  DimMap map(static_cast<size_t>(rank));
  std::iota(map.begin(), map.end(), 0);
  return map;
}

// The inverse of `map` for a source of rank `source_rank` (maps are injective).
DimMap Invert(const DimMap& map, int64_t source_rank) {
  DimMap inverse(static_cast<size_t>(source_rank), -1);
  for (size_t j = 0; j < map.size(); ++j) {
    if (map[j] >= 0 && map[j] < source_rank) inverse[map[j]] = static_cast<int64_t>(j);
  }
  return inverse;
}

std::vector<int64_t> TilesOf(const Sharding& sharding, int64_t rank) {
  if (std::optional<Tiling> t = TilingOfTiled(sharding); t && t->rank() == rank) return t->tiles;
  return std::vector<int64_t>(static_cast<size_t>(rank), 1);
}

std::optional<Sharding> MapSharding(const Sharding& sharding, const DimMap& map) {
  if (!sharding.IsTiled()) return Canonical(sharding);
  std::optional<Tiling> t = TilingOfTiled(sharding);
  if (!t) return std::nullopt;
  std::vector<std::vector<int64_t>> axes(map.size());
  for (size_t j = 0; j < map.size(); ++j) {
    if (map[j] < 0) continue;
    if (map[j] >= t->rank()) return std::nullopt;
    axes[j] = {map[j]};
  }
  Tiling mapped = RegroupAxes(*t, axes);
  // When no tiled dimension carries over there is nothing to propagate: replicated is the default anyway, and
  // proposing it would only claim an origin for it.
  if (mapped.num_tiles() == 1 && t->num_tiles() > 1) return std::nullopt;
  return ToSharding(mapped);
}

// Reshape from `source` to `target` dims: the dimensions split into groups whose element counts match (size-1
// dimensions ignored). A group of one dimension on each side maps directly. Otherwise only the group's most major
// source dimension may map, to the group's most major target dimension, and only if its tile count t divides both:
// then each tile is one contiguous block of the group's elements on both sides. Anything else maps nowhere.
DimMap ReshapeMap(const std::vector<int64_t>& source, const std::vector<int64_t>& target,
                  const std::vector<int64_t>& source_tiles) {
  DimMap map(target.size(), -1);
  for (const std::vector<int64_t>* dims : {&source, &target}) {
    // Zero-size (and unbounded dynamic) dimensions have no meaningful grouping.
    for (int64_t d : *dims) {
      if (d <= 0) return map;
    }
  }
  size_t i = 0;
  size_t j = 0;
  while (true) {
    while (i < source.size() && source[i] == 1) ++i;
    while (j < target.size() && target[j] == 1) ++j;
    if (i == source.size() || j == target.size()) break;
    const size_t group_i = i;
    const size_t group_j = j;
    int64_t source_product = source[i++];
    int64_t target_product = target[j++];
    while (source_product != target_product) {
      if (source_product < target_product) {
        if (i == source.size()) return map;
        source_product *= source[i++];
      } else {
        if (j == target.size()) return map;
        target_product *= target[j++];
      }
    }
    const int64_t t = source_tiles[group_i];
    const bool one_to_one = i - group_i == 1 && j - group_j == 1;
    if (one_to_one || (t > 1 && source[group_i] % t == 0 && target[group_j] % t == 0)) {
      map[group_j] = static_cast<int64_t>(group_i);
    }
  }
  return map;
}

// A reshape's whole tiling carried from `from` to `to` (either direction) when every device's elements stay where
// they are (ReshapeTiling: merged dimensions take the product of their tiles, split ones share them out); nullopt
// otherwise, and ReshapeMap then carries what it can.
std::optional<Sharding> ReshapedSharding(const Instruction& inst, const Sharding& sharding, const Shape& from,
                                         const Shape& to) {
  if (inst.opcode() != Opcode::kReshape || !from.IsArray() || !to.IsArray()) return std::nullopt;
  std::optional<Tiling> t = TilingOfTiled(sharding);
  if (!t || t->num_tiles() == 1) return std::nullopt;
  std::optional<Tiling> reshaped = ReshapeTiling(from.dimensions, to.dimensions, *t);
  if (!reshaped) return std::nullopt;
  return ToSharding(*reshaped);
}

bool IsElementwiseLike(const Instruction& inst) {
  const Opcode op = inst.opcode();
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return true;
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kCopy:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
    case Opcode::kMap:
    case Opcode::kAllReduce:
    case Opcode::kCollectivePermute:
      return true;
    case Opcode::kCustomCall:
      return IsElementwiseKernelCallOfOneShape(inst);
    default:
      return false;
  }
}

// Number of data inputs of the variadic ops whose results are one array per input.
int64_t VariadicInputs(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
      return inst.operand_count() / 2;
    case Opcode::kScatter:
      return (inst.operand_count() - 1) / 2;
    case Opcode::kSort:
    case Opcode::kAllReduce:
      return inst.operand_count();
    default:
      return 0;
  }
}

std::optional<DimMap> DotMap(const Instruction& inst, int64_t k, const Shape& result) {
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const std::vector<int64_t>& lhs_batch = inst.IntListAttr("lhs_batch_dims");
  const std::vector<int64_t>& rhs_batch = inst.IntListAttr("rhs_batch_dims");
  const std::vector<int64_t>& lhs_contracting = inst.IntListAttr("lhs_contracting_dims");
  const std::vector<int64_t>& rhs_contracting = inst.IntListAttr("rhs_contracting_dims");
  auto free_dims = [](const Shape& s, const std::vector<int64_t>& batch, const std::vector<int64_t>& contracting) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < s.rank(); ++d) {
      if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
    }
    return free;
  };
  const std::vector<int64_t> lhs_free = free_dims(lhs, lhs_batch, lhs_contracting);
  const std::vector<int64_t> rhs_free = free_dims(rhs, rhs_batch, rhs_contracting);
  const size_t batch = lhs_batch.size();
  // Sparse and otherwise unusual dots have other result layouts; stay out of them.
  if (static_cast<size_t>(result.rank()) != batch + lhs_free.size() + rhs_free.size() || rhs_batch.size() != batch) {
    return std::nullopt;
  }
  DimMap map(static_cast<size_t>(result.rank()), -1);
  const std::vector<int64_t>& own_batch = k == 0 ? lhs_batch : rhs_batch;
  for (size_t b = 0; b < batch; ++b) map[b] = own_batch[b];
  const std::vector<int64_t>& own_free = k == 0 ? lhs_free : rhs_free;
  const size_t free_start = k == 0 ? batch : batch + lhs_free.size();
  for (size_t f = 0; f < own_free.size(); ++f) map[free_start + f] = own_free[f];
  return map;
}

std::optional<DimMap> ConvolutionMap(const Instruction& inst, int64_t k, const Shape& result) {
  const AttrValue* attr = inst.FindAttr("dim_labels");
  if (attr == nullptr || attr->kind != AttrKind::kConvDnums) return std::nullopt;
  const auto& dn = attr->get<ConvolutionDimensionNumbers>();
  DimMap map(static_cast<size_t>(result.rank()), -1);
  auto set = [&](int64_t result_dim, int64_t operand_dim) {
    if (result_dim >= 0 && result_dim < result.rank()) map[result_dim] = operand_dim;
  };
  if (k == 0) {
    // With batch groups the result batch is a fraction of the input batch.
    if (inst.IntAttr("batch_group_count", 1) == 1) set(dn.output_batch_dimension, dn.input_batch_dimension);
    if (dn.input_spatial_dimensions.size() != dn.output_spatial_dimensions.size()) return std::nullopt;
    for (size_t i = 0; i < dn.input_spatial_dimensions.size(); ++i) {
      set(dn.output_spatial_dimensions[i], dn.input_spatial_dimensions[i]);
    }
  } else {
    set(dn.output_feature_dimension, dn.kernel_output_feature_dimension);
  }
  return map;
}

// Gather: operand dimensions sliced whole pass through to their offset dimensions (clamping makes their start 0),
// explicit batching dimensions to the result batch dimension of their indices dimension; every indices dimension
// but index_vector_dim is a result batch dimension.
std::optional<DimMap> GatherMap(const Instruction& inst, int64_t k, const Shape& result) {
  const Shape& operand = inst.operand(0)->shape();
  const Shape& indices = inst.operand(1)->shape();
  const std::vector<int64_t>& offset_dims = inst.IntListAttr("offset_dims");
  const std::vector<int64_t>& collapsed = inst.IntListAttr("collapsed_slice_dims");
  const std::vector<int64_t>& slice_sizes = inst.IntListAttr("slice_sizes");
  const std::vector<int64_t>& operand_batching = inst.IntListAttr("operand_batching_dims");
  const std::vector<int64_t>& indices_batching = inst.IntListAttr("start_indices_batching_dims");
  const int64_t index_vector_dim = inst.IntAttr("index_vector_dim", indices.rank());
  if (static_cast<int64_t>(slice_sizes.size()) != operand.rank()) return std::nullopt;
  // Result batch dimension of each indices dimension (-1 for index_vector_dim).
  std::vector<int64_t> batch_of_indices_dim(static_cast<size_t>(indices.rank()), -1);
  int64_t indices_dim = 0;
  for (int64_t r = 0; r < result.rank(); ++r) {
    if (Contains(offset_dims, r)) continue;
    if (indices_dim == index_vector_dim) ++indices_dim;
    if (indices_dim >= indices.rank()) return std::nullopt;
    batch_of_indices_dim[indices_dim++] = r;
  }
  DimMap map(static_cast<size_t>(result.rank()), -1);
  if (k == 1) {
    for (int64_t d = 0; d < indices.rank(); ++d) {
      if (batch_of_indices_dim[d] >= 0) map[batch_of_indices_dim[d]] = d;
    }
    return map;
  }
  size_t offset = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(collapsed, d) || Contains(operand_batching, d)) continue;
    if (offset >= offset_dims.size()) return std::nullopt;
    const int64_t r = offset_dims[offset++];
    if (r >= 0 && r < result.rank() && slice_sizes[d] == operand.dimensions[d]) map[r] = d;
  }
  for (size_t b = 0; b < operand_batching.size() && b < indices_batching.size(); ++b) {
    const int64_t d = indices_batching[b];
    if (d >= 0 && d < indices.rank() && batch_of_indices_dim[d] >= 0) {
      map[batch_of_indices_dim[d]] = operand_batching[b];
    }
  }
  return map;
}

// For ops whose result array `result` (the instruction's shape, or one leaf of it for the variadic ops) and operand
// `k` (an array) correspond dimension by dimension: per result dimension, the operand dimension it comes from.
// `operand_tiles` only matter for reshape.
std::optional<DimMap> ResultFromOperand(const Instruction& inst, int64_t k, const Shape& result,
                                        const std::vector<int64_t>& operand_tiles) {
  const Shape& operand = inst.operand(k)->shape();
  if (!operand.IsArray() || !result.IsArray()) return std::nullopt;
  const int64_t variadic = VariadicInputs(inst);
  auto same_rank = [&]() -> std::optional<DimMap> {
    if (operand.rank() != result.rank()) return std::nullopt;
    return IdentityMap(result.rank());
  };
  if (IsElementwiseLike(inst)) {
    // Scalar operands of select/clamp broadcast; a bitcast-convert between widths changes the rank.
    if (operand.dimensions != result.dimensions) return std::nullopt;
    return IdentityMap(result.rank());
  }
  if (IsTopK(inst)) {
    // Both results keep the operand's batch dimensions; the top k of the last one are gathered whole.
    std::optional<DimMap> map = same_rank();
    if (map && !map->empty()) map->back() = -1;
    return map;
  }
  switch (inst.opcode()) {
    case Opcode::kSlice:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kDomain:
      return same_rank();
    case Opcode::kPad:
    case Opcode::kSelectAndScatter:
    case Opcode::kAddDependency:
      if (k != 0) return std::nullopt;
      return same_rank();
    case Opcode::kCustomCall: {
      // A buffer kernel's declared batch dimensions (or, elementwise, all of them) carry tiles across it.
      std::vector<int64_t> batch;
      const KernelCallSharding rule = KernelCallShardingOf(inst, &batch);
      if (rule == KernelCallSharding::kElementwise) {
        if (operand.dimensions != result.dimensions) return std::nullopt;
        return IdentityMap(result.rank());
      }
      if (rule == KernelCallSharding::kBatchDims) {
        DimMap map(static_cast<size_t>(result.rank()), -1);
        for (int64_t d : batch) {
          if (d < result.rank() && d < operand.rank()) map[d] = d;
        }
        return map;
      }
      if (k != 0 || !IsPassThroughCustomCall(inst)) return std::nullopt;
      return same_rank();
    }
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
      if (k >= variadic) return std::nullopt;
      return same_rank();
    case Opcode::kBroadcast: {
      DimMap map(static_cast<size_t>(result.rank()), -1);
      const std::vector<int64_t>& dims = inst.dimensions();
      for (size_t i = 0; i < dims.size() && static_cast<int64_t>(i) < operand.rank(); ++i) {
        if (dims[i] >= 0 && dims[i] < result.rank()) map[dims[i]] = static_cast<int64_t>(i);
      }
      return map;
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& perm = inst.dimensions();
      if (static_cast<int64_t>(perm.size()) != result.rank()) return std::nullopt;
      return perm;
    }
    case Opcode::kReshape:
      return ReshapeMap(operand.dimensions, result.dimensions, operand_tiles);
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      // The operand of a dynamic-update-slice is the result; elsewhere a dimension whose size changes is cut at a
      // position known only at run time, so its tiles become replication.
      const int64_t sliced = inst.opcode() == Opcode::kDynamicSlice ? 0 : 1;
      if (inst.opcode() == Opcode::kDynamicUpdateSlice && k == 0) return same_rank();
      if (k != sliced || operand.rank() != result.rank()) return std::nullopt;
      DimMap map(static_cast<size_t>(result.rank()), -1);
      for (int64_t d = 0; d < result.rank(); ++d) {
        if (operand.dimensions[d] == result.dimensions[d]) map[d] = d;
      }
      return map;
    }
    case Opcode::kReduce: {
      if (k >= variadic) return std::nullopt;
      const std::vector<int64_t>& reduced = inst.dimensions();
      DimMap map;
      for (int64_t d = 0; d < operand.rank(); ++d) {
        if (!Contains(reduced, d)) map.push_back(d);
      }
      if (static_cast<int64_t>(map.size()) != result.rank()) return std::nullopt;
      return map;
    }
    case Opcode::kSort: {
      // Sorting needs the whole sort dimension on one device.
      std::optional<DimMap> map = same_rank();
      if (!map) return std::nullopt;
      for (int64_t d : inst.dimensions()) {
        if (d >= 0 && d < result.rank()) (*map)[d] = -1;
      }
      return map;
    }
    case Opcode::kDot:
      if (k > 1) return std::nullopt;
      return DotMap(inst, k, result);
    case Opcode::kConvolution:
      if (k > 1) return std::nullopt;
      return ConvolutionMap(inst, k, result);
    case Opcode::kGather:
      return GatherMap(inst, k, result);
    case Opcode::kBatchNormInference: {
      // The activation maps elementwise; scale, offset, mean and variance along the feature dimension.
      if (k == 0) return same_rank();
      const int64_t feature = inst.IntAttr("feature_index");
      if (operand.rank() != 1 || feature < 0 || feature >= result.rank()) return std::nullopt;
      DimMap map(static_cast<size_t>(result.rank()), -1);
      map[feature] = 0;
      return map;
    }
    default:
      return std::nullopt;
  }
}

// Per dimension of operand `k`, the result dimension it takes its tiles from; `result_tiles` only matter for
// reshape, the one op whose map depends on the sharding.
std::optional<DimMap> OperandFromResult(const Instruction& inst, int64_t k, const Shape& result,
                                        const std::vector<int64_t>& result_tiles) {
  const Shape& operand = inst.operand(k)->shape();
  if (inst.opcode() == Opcode::kReshape) {
    if (!operand.IsArray() || !result.IsArray()) return std::nullopt;
    return ReshapeMap(result.dimensions, operand.dimensions, result_tiles);
  }
  std::optional<DimMap> forward =
      ResultFromOperand(inst, k, result, std::vector<int64_t>(static_cast<size_t>(operand.rank()), 1));
  if (!forward) return std::nullopt;
  return Invert(*forward, operand.rank());
}

// Ops that pass every leaf of operand 0 through unchanged (in both directions unless a barrier says otherwise).
bool PassesLeavesThrough(const Instruction& inst, int64_t k) {
  switch (inst.opcode()) {
    case Opcode::kWhile:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return true;
    case Opcode::kAddDependency:
      return k == 0;
    case Opcode::kCustomCall:
      return k == 0 && IsPassThroughCustomCall(inst);
    default:
      return false;
  }
}

void CopyLeaves(const LeafShardings& from, int64_t from_first, int64_t to_first, int64_t count,
                std::vector<Proposal>& out) {
  for (int64_t i = 0; i < count; ++i) {
    const size_t index = static_cast<size_t>(from_first + i);
    if (index >= from.size() || !from[index]) continue;
    if (std::optional<Sharding> s = Canonical(*from[index])) out.push_back({to_first + i, *std::move(s)});
  }
}

}  // namespace

bool IsTopK(const Instruction& inst) {
  if (inst.operand_count() != 1 || !inst.shape().IsTuple() || inst.shape().tuple_shapes.size() != 2) return false;
  return inst.opcode() == Opcode::kTopK ||
         (inst.opcode() == Opcode::kCustomCall && inst.StringAttr("custom_call_target") == "TopK");
}

bool IsPassThroughCustomCall(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCustomCall || inst.operand_count() != 1) return false;
  const std::string_view target = inst.StringAttr("custom_call_target");
  if (!IsShardingIdentityTarget(target) && target != "LayoutConstraint" && target != "MoveToHost" &&
      target != "MoveToDevice") {
    return false;
  }
  return inst.operand(0)->shape().Compatible(inst.shape());
}

std::vector<Proposal> InferFromOperand(const Instruction& inst, int64_t k, const LeafShardings& operand_leaves) {
  std::vector<Proposal> out;
  const Shape& shape = inst.shape();
  const Shape& operand = inst.operand(k)->shape();
  if (inst.opcode() == Opcode::kCustomCall && inst.StringAttr("custom_call_target") == "ShardBarrierFrom") return out;
  if (inst.opcode() == Opcode::kTuple) {
    if (shape.IsTuple() && k < static_cast<int64_t>(shape.tuple_shapes.size())) {
      CopyLeaves(operand_leaves, 0, FirstLeaf(shape, k), LeafCount(operand), out);
    }
    return out;
  }
  if (inst.opcode() == Opcode::kGetTupleElement) {
    const int64_t index = inst.IntAttr("index");
    if (operand.IsTuple() && index >= 0 && index < static_cast<int64_t>(operand.tuple_shapes.size())) {
      CopyLeaves(operand_leaves, FirstLeaf(operand, index), 0, LeafCount(shape), out);
    }
    return out;
  }
  if (PassesLeavesThrough(inst, k)) {
    if (LeafCount(operand) == LeafCount(shape)) CopyLeaves(operand_leaves, 0, 0, LeafCount(shape), out);
    return out;
  }
  if (!operand.IsArray() || operand_leaves.empty() || !operand_leaves[0]) return out;
  const Sharding& source = *operand_leaves[0];
  const std::vector<int64_t> tiles = TilesOf(source, operand.rank());
  auto propose = [&](int64_t leaf, const Shape& result) {
    if (std::optional<Sharding> s = ReshapedSharding(inst, source, operand, result)) {
      out.push_back({leaf, *std::move(s)});
      return;
    }
    std::optional<DimMap> map = ResultFromOperand(inst, k, result, tiles);
    if (!map) return;
    if (std::optional<Sharding> s = MapSharding(source, *map)) out.push_back({leaf, *std::move(s)});
  };
  if (shape.IsArray()) {
    propose(0, shape);
  } else if (shape.IsTuple()) {
    // Variadic reduce, reduce-window and sort give every result the same layout of elements; scatter and a
    // tuple all-reduce pair each result with its own input.
    const bool all_results = inst.opcode() == Opcode::kReduce || inst.opcode() == Opcode::kReduceWindow ||
                             inst.opcode() == Opcode::kSort || IsTopK(inst);
    const int64_t n = static_cast<int64_t>(shape.tuple_shapes.size());
    if ((n != VariadicInputs(inst) && !IsTopK(inst)) || LeafCount(shape) != n) return out;
    for (int64_t leaf = 0; leaf < n; ++leaf) {
      if (all_results || leaf == k) propose(leaf, shape.tuple_shapes[leaf]);
    }
  }
  return out;
}

std::vector<Proposal> InferOperandFromUser(const Instruction& inst, int64_t k, const LeafShardings& leaves) {
  std::vector<Proposal> out;
  const Shape& shape = inst.shape();
  const Shape& operand = inst.operand(k)->shape();
  if (inst.opcode() == Opcode::kCustomCall && inst.StringAttr("custom_call_target") == "ShardBarrierTo") return out;
  if (inst.opcode() == Opcode::kTuple) {
    if (shape.IsTuple() && k < static_cast<int64_t>(shape.tuple_shapes.size())) {
      CopyLeaves(leaves, FirstLeaf(shape, k), 0, LeafCount(operand), out);
    }
    return out;
  }
  if (inst.opcode() == Opcode::kGetTupleElement) {
    const int64_t index = inst.IntAttr("index");
    if (operand.IsTuple() && index >= 0 && index < static_cast<int64_t>(operand.tuple_shapes.size())) {
      CopyLeaves(leaves, 0, FirstLeaf(operand, index), LeafCount(shape), out);
    }
    return out;
  }
  if (PassesLeavesThrough(inst, k)) {
    if (LeafCount(operand) == LeafCount(shape)) CopyLeaves(leaves, 0, 0, LeafCount(shape), out);
    return out;
  }
  if (!operand.IsArray()) return out;
  int64_t leaf = 0;
  const Shape* result = &shape;
  if (shape.IsTuple()) {
    const int64_t n = static_cast<int64_t>(shape.tuple_shapes.size());
    if (IsTopK(inst)) {
      leaf = 0;  // the values; the indices have the same layout
    } else {
      if (n != VariadicInputs(inst) || LeafCount(shape) != n || k >= n) return out;
      leaf = k;
    }
    result = &shape.tuple_shapes[k];
  }
  if (!result->IsArray() || static_cast<size_t>(leaf) >= leaves.size() || !leaves[leaf]) return out;
  const Sharding& source = *leaves[leaf];
  if (std::optional<Sharding> s = ReshapedSharding(inst, source, *result, operand)) {
    out.push_back({0, *std::move(s)});
    return out;
  }
  std::optional<DimMap> map = OperandFromResult(inst, k, *result, TilesOf(source, result->rank()));
  if (!map) return out;
  if (std::optional<Sharding> s = MapSharding(source, *map)) out.push_back({0, *std::move(s)});
  return out;
}

std::vector<int64_t> OperandPriority(const Instruction& inst) {
  std::vector<int64_t> order(static_cast<size_t>(inst.operand_count()));
  std::iota(order.begin(), order.end(), 0);
  if (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) {
    // As XLA does, a tie between the two operands goes to the larger one: resharding it would cost more.
    auto bytes = [&](int64_t i) { return inst.operand(i)->shape().ByteSizeOf().value_or(0); };
    std::sort(order.begin(), order.end(),
              [&](int64_t a, int64_t b) { return bytes(a) != bytes(b) ? bytes(a) > bytes(b) : a < b; });
  }
  return order;
}

int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes) count += LeafCount(element);
  return count;
}

int64_t FirstLeaf(const Shape& tuple, int64_t element) {
  int64_t first = 0;
  for (int64_t i = 0; i < element; ++i) first += LeafCount(tuple.tuple_shapes[i]);
  return first;
}

absl::StatusOr<Tiling> TilingOfAnyDevices(const Sharding& sharding) {
  if (!sharding.IsTiled()) return absl::InvalidArgumentError("not a tiled sharding");
  if (sharding.NumDataTileDims() < 0) return absl::InvalidArgumentError("has no tile dimensions");
  for (int64_t t : sharding.tile_dims) {
    if (t <= 0) return absl::InvalidArgumentError("has a tile count below 1");
  }
  const std::vector<int64_t> ids = sharding.DeviceList();
  std::vector<int64_t> sorted = ids;
  std::sort(sorted.begin(), sorted.end());
  if ((!sorted.empty() && sorted.front() < 0) || std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    return absl::InvalidArgumentError("does not name distinct devices");
  }
  const int64_t n = static_cast<int64_t>(ids.size());
  if (sorted.empty() || sorted.back() == n - 1) return TilingOf(sharding, sharding.NumDataTileDims(), n);
  // XLA accepts any distinct device ids (a sharding over devices 0,1,4,5); TilingOf wants 0..n-1, so it sees their
  // ranks and the ids are put back afterwards.
  Sharding ranked = sharding;
  ranked.iota.reset();
  ranked.device_ids.clear();
  for (int64_t id : ids) {
    ranked.device_ids.push_back(std::lower_bound(sorted.begin(), sorted.end(), id) - sorted.begin());
  }
  absl::StatusOr<Tiling> tiling = TilingOf(ranked, sharding.NumDataTileDims(), n);
  if (!tiling.ok()) return tiling.status();
  for (int64_t& device : tiling->devices) device = sorted[device];
  return tiling;
}

std::optional<Tiling> TilingOfTiled(const Sharding& sharding) {
  if (!sharding.IsTiled()) return std::nullopt;
  absl::StatusOr<Tiling> tiling = TilingOfAnyDevices(sharding);
  if (!tiling.ok()) return std::nullopt;
  return *std::move(tiling);
}

std::optional<Sharding> Canonical(const Sharding& sharding) {
  switch (sharding.kind) {
    case Sharding::Kind::kReplicated:
      return Sharding::Replicated();
    case Sharding::Kind::kMaximal:
      return Sharding::Maximal(sharding.device);
    case Sharding::Kind::kManual:
      return Sharding::Manual();
    case Sharding::Kind::kTiled:
      if (std::optional<Tiling> t = TilingOfTiled(sharding)) return ToSharding(*t);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

namespace {

// replicated 0 < maximal 1 < tiled 1 + number of tiles; shardings propagation cannot reason about rank above all.
int64_t Specificity(const Sharding& sharding) {
  switch (sharding.kind) {
    case Sharding::Kind::kReplicated:
      return 0;
    case Sharding::Kind::kMaximal:
      return 1;
    case Sharding::Kind::kTiled:
      if (std::optional<Tiling> t = TilingOfTiled(sharding)) return t->num_tiles() > 1 ? 1 + t->num_tiles() : 0;
      return std::numeric_limits<int64_t>::max();
    default:
      return std::numeric_limits<int64_t>::max();
  }
}

}  // namespace

bool IsMoreSpecific(const Sharding& candidate, const Sharding& current) {
  if (current.kind == Sharding::Kind::kManual) return false;
  if (candidate.kind == Sharding::Kind::kManual) return Specificity(current) == 0;
  return Specificity(candidate) > Specificity(current);
}

std::optional<Sharding> MergeRefinement(const Sharding& current, const Sharding& candidate) {
  std::optional<Tiling> a = TilingOfTiled(current);
  std::optional<Tiling> b = TilingOfTiled(candidate);
  if (!a || !b || a->rank() != b->rank() || a->devices.size() != b->devices.size()) return std::nullopt;
  const int64_t rank = a->rank();
  const int64_t n = static_cast<int64_t>(a->devices.size());
  Tiling merged;
  merged.tiles.resize(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (a->tiles[d] > 1 && b->tiles[d] > 1 && a->tiles[d] != b->tiles[d]) return std::nullopt;
    merged.tiles[d] = std::max(a->tiles[d], b->tiles[d]);
  }
  const int64_t num_tiles = merged.num_tiles();
  if (num_tiles <= a->num_tiles() || n % num_tiles != 0) return std::nullopt;
  // Coordinates of every device in both device arrays.
  auto coordinates = [](const Tiling& t) {
    absl::flat_hash_map<int64_t, std::vector<int64_t>> coords;
    const std::vector<int64_t> sizes = t.AxisSizes();
    for (size_t linear = 0; linear < t.devices.size(); ++linear) {
      std::vector<int64_t> c(sizes.size());
      int64_t rest = static_cast<int64_t>(linear);
      for (size_t i = sizes.size(); i-- > 0;) {
        c[i] = rest % sizes[i];
        rest /= sizes[i];
      }
      coords[t.devices[linear]] = std::move(c);
    }
    return coords;
  };
  const absl::flat_hash_map<int64_t, std::vector<int64_t>> coords_a = coordinates(*a);
  const absl::flat_hash_map<int64_t, std::vector<int64_t>> coords_b = coordinates(*b);
  std::vector<std::vector<int64_t>> tile_devices(static_cast<size_t>(num_tiles));
  // Devices keep the current sharding's order within a tile, so the result does not depend on the candidate's.
  for (int64_t device : a->devices) {
    auto in_b = coords_b.find(device);
    if (in_b == coords_b.end()) return std::nullopt;  // different device sets
    const std::vector<int64_t>& ca = coords_a.at(device);
    const std::vector<int64_t>& cb = in_b->second;
    int64_t tile = 0;
    for (int64_t d = 0; d < rank; ++d) {
      if (a->tiles[d] > 1 && b->tiles[d] > 1 && ca[d] != cb[d]) return std::nullopt;
      tile = tile * merged.tiles[d] + (a->tiles[d] > 1 ? ca[d] : cb[d]);
    }
    tile_devices[tile].push_back(device);
  }
  merged.replication = n / num_tiles;
  for (const std::vector<int64_t>& devices : tile_devices) {
    if (static_cast<int64_t>(devices.size()) != merged.replication) return std::nullopt;
    merged.devices.insert(merged.devices.end(), devices.begin(), devices.end());
  }
  return ToSharding(merged);
}

Sharding ReplicateDims(const Sharding& sharding, int64_t rank, const std::vector<int64_t>& dims) {
  std::optional<Tiling> t = TilingOfTiled(sharding);
  if (!t || t->rank() != rank) return sharding;
  std::vector<std::vector<int64_t>> axes(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(dims, d)) axes[d] = {d};
  }
  return ToSharding(RegroupAxes(*t, axes));
}

bool EvenlyPartitions(const Shape& shape, const Sharding& sharding) {
  std::optional<Tiling> t = TilingOfTiled(sharding);
  if (!t || !shape.IsArray() || t->rank() != shape.rank()) return true;
  for (int64_t d = 0; d < shape.rank(); ++d) {
    if (shape.dimensions[d] % t->tiles[d] != 0) return false;
  }
  return true;
}

}  // namespace xlac::spmd
