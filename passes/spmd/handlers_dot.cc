// dot, convolution and reduce: the ops whose sharded form needs a reduction across cores.
//
// dot, in GSPMD's terms:
//  - no operand is sharded on a contracting dimension: each operand moves to the sharding the result's tiling implies
//    for it (batch and its own free dimensions tiled as in the result, everything else replicated) and the local dot
//    is this core's result shard (data parallel and column-parallel layers need no communication);
//  - an operand is sharded on contracting dimensions: the other operand follows it (free for a replicated one), the
//    local dot is a partial sum, and one all-reduce over the contracting axes completes it (a row-parallel layer).
// Padding in uneven contracting dimensions is zeroed first, on both sides (garbage could be inf or NaN).
#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"
#include "passes/spmd/windowed_einsum.h"

namespace xlac::spmd {

DotDims DotDimsOf(const Instruction& dot) {
  DotDims d;
  d.lhs_batch = dot.IntListAttr("lhs_batch_dims");
  d.rhs_batch = dot.IntListAttr("rhs_batch_dims");
  d.lhs_contracting = dot.IntListAttr("lhs_contracting_dims");
  d.rhs_contracting = dot.IntListAttr("rhs_contracting_dims");
  auto free_dims = [](int64_t rank, const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < rank; ++i) {
      if (std::find(a.begin(), a.end(), i) == a.end() && std::find(b.begin(), b.end(), i) == b.end()) out.push_back(i);
    }
    return out;
  };
  d.lhs_free = free_dims(dot.operand(0)->shape().rank(), d.lhs_batch, d.lhs_contracting);
  d.rhs_free = free_dims(dot.operand(1)->shape().rank(), d.rhs_batch, d.rhs_contracting);
  return d;
}

Instruction* LocalDot(ComputationBuilder& b, const Instruction& dot, const DotDims& d, Instruction* lhs,
                      Instruction* rhs, std::optional<PrimitiveType> type) {
  std::vector<int64_t> dims;
  for (int64_t i : d.lhs_batch) dims.push_back(lhs->shape().dimensions[i]);
  for (int64_t i : d.lhs_free) dims.push_back(lhs->shape().dimensions[i]);
  for (int64_t i : d.rhs_free) dims.push_back(rhs->shape().dimensions[i]);
  Shape shape = dot.shape();
  shape.dimensions = dims;
  if (type) shape.element_type = *type;
  return b.Clone(dot, shape, {lhs, rhs});
}

// The type partial sums cross the cores in. The unpartitioned dot of a narrow float type (bf16, f16, f8) accumulates
// in f32 and rounds once; partial results rounded to the narrow type and summed in it would round k + 1 times, and
// where the partials cancel that error is no longer small next to the total. So they travel in f32, and the sum is
// rounded once, after the collective.
PrimitiveType PartialSumType(PrimitiveType type) {
  return IsFloatingPointType(type) && BitWidth(type) < 32 ? PrimitiveType::kF32 : type;
}

Instruction* ConvertTo(ComputationBuilder& b, Instruction* value, PrimitiveType type) {
  if (value->shape().element_type == type) return value;
  Shape shape = value->shape();
  shape.element_type = type;
  return b.Add(Opcode::kConvert, std::move(shape), {value});
}

namespace {

absl::StatusOr<PValue> OutputDrivenDot(ComputationBuilder& b, const Instruction& dot, const DotDims& d,
                                       const Tiling& out) {
  const int64_t nb = static_cast<int64_t>(d.lhs_batch.size());
  const int64_t nlf = static_cast<int64_t>(d.lhs_free.size());
  std::vector<std::vector<int64_t>> lhs_axes(dot.operand(0)->shape().rank()), rhs_axes(dot.operand(1)->shape().rank());
  for (int64_t i = 0; i < nb; ++i) {
    lhs_axes[d.lhs_batch[i]] = {i};
    rhs_axes[d.rhs_batch[i]] = {i};
  }
  for (int64_t k = 0; k < nlf; ++k) lhs_axes[d.lhs_free[k]] = {nb + k};
  for (size_t k = 0; k < d.rhs_free.size(); ++k) rhs_axes[d.rhs_free[k]] = {nb + nlf + static_cast<int64_t>(k)};
  const Tiling lhs_target = RegroupAxes(out, lhs_axes), rhs_target = RegroupAxes(out, rhs_axes);
  XLAC_ASSIGN_OR_RETURN(std::optional<PValue> windowed, WindowedAllGatherDot(b, dot, d, out, lhs_target, rhs_target));
  if (windowed) return *std::move(windowed);
  XLAC_ASSIGN_OR_RETURN(PValue lhs, b.ReshardToTiling(b.Get(dot.operand(0)), lhs_target, dot));
  XLAC_ASSIGN_OR_RETURN(PValue rhs, b.ReshardToTiling(b.Get(dot.operand(1)), rhs_target, dot));
  return PValue{LocalDot(b, dot, d, lhs.hlo, rhs.hlo), ToSharding(out), dot.shape()};
}

// `primary` (0 = lhs, 1 = rhs) is sharded on contracting dimensions; the other operand follows it.
absl::StatusOr<PValue> ContractingDot(ComputationBuilder& b, const Instruction& dot, const DotDims& d, int primary,
                                      const Tiling& pt, const Tiling& target) {
  const bool lhs_primary = primary == 0;
  const std::vector<int64_t>& p_batch = lhs_primary ? d.lhs_batch : d.rhs_batch;
  const std::vector<int64_t>& q_batch = lhs_primary ? d.rhs_batch : d.lhs_batch;
  const std::vector<int64_t>& p_contracting = lhs_primary ? d.lhs_contracting : d.rhs_contracting;
  const std::vector<int64_t>& q_contracting = lhs_primary ? d.rhs_contracting : d.lhs_contracting;
  const std::vector<int64_t>& p_free = lhs_primary ? d.lhs_free : d.rhs_free;
  const Instruction* q_inst = dot.operand(1 - primary);
  std::vector<std::vector<int64_t>> q_axes(q_inst->shape().rank());
  for (size_t i = 0; i < q_batch.size(); ++i) q_axes[q_batch[i]] = {p_batch[i]};
  for (size_t j = 0; j < q_contracting.size(); ++j) q_axes[q_contracting[j]] = {p_contracting[j]};
  Tiling qt = RegroupAxes(pt, q_axes);
  PValue p_value = b.Get(dot.operand(primary));
  XLAC_ASSIGN_OR_RETURN(PValue q_value, b.ReshardToTiling(b.Get(q_inst), qt, dot));

  PrimitiveType p_type = dot.operand(primary)->shape().element_type;
  PrimitiveType q_type = q_inst->shape().element_type;
  Instruction* p_hlo = b.MaskPadding(p_value.hlo, p_value.base, pt, p_contracting, b.Zero(p_type));
  Instruction* q_hlo = b.MaskPadding(q_value.hlo, q_value.base, qt, q_contracting, b.Zero(q_type));
  PrimitiveType out_type = dot.shape().element_type;
  const PrimitiveType sum_type = PartialSumType(out_type);
  Instruction* partial =
      lhs_primary ? LocalDot(b, dot, d, p_hlo, q_hlo, sum_type) : LocalDot(b, dot, d, q_hlo, p_hlo, sum_type);

  std::vector<int64_t> reduce_axes;
  for (int64_t c : p_contracting) {
    if (pt.tiles[c] > 1) reduce_axes.push_back(c);
  }
  Opcode combine = out_type == PrimitiveType::kPred ? Opcode::kOr : Opcode::kAdd;
  Computation* reducer = b.partitioner().ScalarReducer(combine, sum_type);
  // Result tiling: batch and the primary's free dimensions as the primary holds them.
  std::vector<std::vector<int64_t>> out_axes;
  for (int64_t i : p_batch) out_axes.push_back({i});
  const std::vector<int64_t>& lhs_free = d.lhs_free;
  const std::vector<int64_t>& rhs_free = d.rhs_free;
  for (size_t k = 0; k < lhs_free.size(); ++k) {
    out_axes.push_back(lhs_primary ? std::vector<int64_t>{p_free[k]} : std::vector<int64_t>{});
  }
  for (size_t k = 0; k < rhs_free.size(); ++k) {
    out_axes.push_back(lhs_primary ? std::vector<int64_t>{} : std::vector<int64_t>{p_free[k]});
  }
  // When the result is wanted tiled along one more dimension by exactly the contracting axis, a reduce-scatter
  // leaves each core only its block of the sum instead of all of it.
  if (reduce_axes.size() == 1) {
    const int64_t c = reduce_axes[0];
    const int64_t k = pt.tiles[c];
    for (size_t dim = 0; dim < out_axes.size(); ++dim) {
      std::vector<std::vector<int64_t>> refined = out_axes;
      refined[dim].push_back(c);
      Tiling candidate = RegroupAxes(pt, refined);
      if (candidate.tiles != target.tiles || candidate.devices != target.devices ||
          candidate.replication != target.replication || candidate.manual_subgroup != target.manual_subgroup) {
        continue;
      }
      const int64_t held = partial->shape().dimensions[dim];
      const bool whole = out_axes[dim].empty();
      if (!whole && held % k != 0) continue;  // block offsets would not line up
      const int64_t chunk = (held + k - 1) / k;
      const std::vector<std::vector<int64_t>> groups = GroupsAlongAxes(pt, {c});
      Instruction* windowed = lhs_primary
                                  ? WindowedReduceScatterDot(b, dot, d, p_hlo, q_hlo, sum_type, dim, chunk, groups)
                                  : WindowedReduceScatterDot(b, dot, d, q_hlo, p_hlo, sum_type, dim, chunk, groups);
      if (windowed != nullptr) return PValue{ConvertTo(b, windowed, out_type), ToSharding(candidate), dot.shape()};
      Instruction* x = partial;
      if (chunk * k != held) {
        std::vector<int64_t> high(partial->shape().dimensions.size(), 0);
        high[dim] = chunk * k - held;
        x = b.PadHigh(x, high);
      }
      Shape shape = x->shape();
      shape.dimensions[dim] = chunk;
      Instruction* rs = b.Add(Opcode::kReduceScatter, shape, {x});
      rs->set_called_computations({reducer});
      rs->SetAttr("dimensions", AttrValue::IntList({static_cast<int64_t>(dim)}));
      rs->SetAttr("replica_groups", AttrValue::Of(b.partitioner().GlobalGroups(groups)));
      rs->SetAttr("channel_id", AttrValue::Int(b.partitioner().NextChannelId()));
      rs->SetAttr("use_global_device_ids", AttrValue::Bool(true));
      b.partitioner().RecordCollective(dot, *rs, k);
      return PValue{ConvertTo(b, rs, out_type), ToSharding(candidate), dot.shape()};
    }
  }
  Instruction* sum = b.AllReduce(partial, reducer, GroupsAlongAxes(pt, reduce_axes), dot);
  return PValue{ConvertTo(b, sum, out_type), ToSharding(RegroupAxes(pt, out_axes)), dot.shape()};
}

bool ShardedOnAny(const Tiling& t, const std::vector<int64_t>& dims) {
  return std::any_of(dims.begin(), dims.end(), [&](int64_t d) { return t.tiles[d] > 1; });
}

}  // namespace

// True when `init` is a constant that may be combined into every partial result: the identity of add / multiply,
// or anything for the idempotent max / min / and / or.
bool InitIsSafeToRepeat(const Instruction& reduce, const Instruction& init) {
  const Computation* reducer = reduce.called_computation(0);
  const Instruction* root = reducer->root();
  if (reducer->parameter_count() != 2 || root->operand_count() != 2) return false;
  bool on_params = root->operand(0)->opcode() == Opcode::kParameter &&
                   root->operand(1)->opcode() == Opcode::kParameter && root->operand(0) != root->operand(1);
  if (!on_params) return false;
  switch (root->opcode()) {
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
      return true;
    case Opcode::kAdd:
    case Opcode::kMultiply: {
      if (init.opcode() != Opcode::kConstant || !init.has_literal() || init.literal().is_unknown()) return false;
      double v = init.literal().GetAsDouble(0);
      return root->opcode() == Opcode::kAdd ? v == 0.0 : v == 1.0;
    }
    default:
      return false;
  }
}

absl::StatusOr<PValue> HandleDot(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() != Opcode::kDot || inst.operand_count() != 2) return absl::NotFoundError("");
  DotDims d = DotDimsOf(inst);
  XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, inst.shape().rank(), b.num_devices()));
  XLAC_ASSIGN_OR_RETURN(Tiling lt,
                        TilingOf(b.Get(inst.operand(0)).sharding, inst.operand(0)->shape().rank(), b.num_devices()));
  XLAC_ASSIGN_OR_RETURN(Tiling rt,
                        TilingOf(b.Get(inst.operand(1)).sharding, inst.operand(1)->shape().rank(), b.num_devices()));
  if (ShardedOnAny(lt, d.lhs_contracting)) return ContractingDot(b, inst, d, 0, lt, out);
  if (ShardedOnAny(rt, d.rhs_contracting)) return ContractingDot(b, inst, d, 1, rt, out);
  return OutputDrivenDot(b, inst, d, out);
}

// Windowed dimensions tiled like the output need the `lo` elements before and `hi` after each core's input block:
// they come from the neighbouring cores by collective-permute, one per neighbour a halo reaches into (`fill` at the
// edges; zeros, the convolution's own padding, when null), and the local op then runs unpadded on that dimension.

absl::StatusOr<Instruction*> ExchangeHalos(ComputationBuilder& b, const Instruction& conv, Instruction* input,
                                           const Tiling& input_tiling, int64_t dim, int64_t lo, int64_t hi,
                                           Instruction* fill) {
  PrimitiveType type = input->shape().element_type;
  Instruction* x = input;
  const std::vector<int64_t> dims = x->shape().dimensions;
  const int64_t shard = dims[dim];
  std::vector<std::vector<int64_t>> groups = GroupsAlongAxes(input_tiling, {dim});
  const int64_t group_size = static_cast<int64_t>(groups.at(0).size());
  if (shard <= 0 || lo > shard * (group_size - 1) || hi > shard * (group_size - 1)) {
    return absl::InternalError("halo wider than the other blocks together");
  }
  // The elements [start, start + size) of the block `hops` cores before (to_next) or after this one.
  auto piece = [&](int64_t start, int64_t size, int64_t hops, bool to_next) {
    std::vector<SliceRange> ranges;
    std::vector<int64_t> out = dims;
    for (size_t d = 0; d < dims.size(); ++d) ranges.push_back(SliceRange{0, dims[d], 1});
    ranges[dim] = SliceRange{start, start + size, 1};
    out[dim] = size;
    Instruction* slice = b.Add(Opcode::kSlice, Shape::Array(type, out), {x});
    slice->SetAttr("slice", AttrValue::Of(std::move(ranges)));
    std::vector<std::pair<int64_t, int64_t>> pairs;
    for (const std::vector<int64_t>& g : groups) {
      for (size_t k = 0; k + hops < g.size(); ++k) {
        pairs.push_back(to_next ? std::make_pair(g[k], g[k + hops]) : std::make_pair(g[k + hops], g[k]));
      }
    }
    Instruction* halo = b.CollectivePermute(slice, pairs, conv);
    if (fill == nullptr) return halo;
    // The cores within `hops` of the dimension's edge received nothing: they see the padding value instead.
    std::vector<int64_t> at_edge(static_cast<size_t>(b.num_devices()), 0);
    for (const std::vector<int64_t>& g : groups) {
      for (int64_t k = 0; k < hops; ++k) at_edge[to_next ? g[k] : g[g.size() - 1 - k]] = 1;
    }
    Instruction* flag = b.TableLookup(at_edge);
    Instruction* is_edge = b.Add(Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred), {flag, b.ConstantS32(1)});
    is_edge->SetAttr("direction", AttrValue::Enum("EQ"));
    return b.Add(Opcode::kSelect, halo->shape(),
                 {b.Broadcast(is_edge, halo->shape()), b.Broadcast(fill, halo->shape()), halo});
  };
  std::vector<Instruction*> pieces;
  // Before the block: the farthest neighbour's part first.
  for (int64_t hops = (lo + shard - 1) / shard; hops >= 1; --hops) {
    int64_t size = std::min(shard, lo - (hops - 1) * shard);
    pieces.push_back(piece(shard - size, size, hops, /*to_next=*/true));
  }
  pieces.push_back(x);
  for (int64_t hops = 1; (hops - 1) * shard < hi; ++hops) {
    pieces.push_back(piece(0, std::min(shard, hi - (hops - 1) * shard), hops, /*to_next=*/false));
  }
  if (pieces.size() == 1) return x;
  std::vector<int64_t> out = dims;
  out[dim] = dims[dim] + lo + hi;
  Instruction* concat = b.Add(Opcode::kConcatenate, Shape::Array(type, out), pieces);
  concat->SetAttr("dimensions", AttrValue::IntList({dim}));
  return concat;
}

namespace {

absl::StatusOr<PValue> HandleConvolutionImpl(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() != Opcode::kConvolution || inst.operand_count() != 2) return absl::NotFoundError("");
  const AttrValue* dnums_attr = inst.FindAttr("dim_labels");
  if (dnums_attr == nullptr) return absl::NotFoundError("");
  const auto& dn = dnums_attr->get<ConvolutionDimensionNumbers>();
  const AttrValue* window_attr = inst.FindAttr("window");
  Window window = window_attr != nullptr ? window_attr->get<Window>() : Window{};
  XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, inst.shape().rank(), b.num_devices()));
  if (inst.IntAttr("batch_group_count", 1) != 1) return absl::NotFoundError("");
  if (inst.IntAttr("feature_group_count", 1) != 1 && out.tiles[dn.output_feature_dimension] > 1) {
    return absl::NotFoundError("");
  }
  const Shape& lhs_shape = inst.operand(0)->shape();
  if (inst.IntAttr("feature_group_count", 1) == 1) {
    // Input features tiled (the contraction of a convolution; a filter gradient's batch): the kernel follows, each
    // core convolves its features, and one all-reduce sums the partial results.
    XLAC_ASSIGN_OR_RETURN(Tiling lt, TilingOf(b.Get(inst.operand(0)).sharding, lhs_shape.rank(), b.num_devices()));
    if (lt.tiles[dn.input_feature_dimension] > 1 && lt.manual_subgroup == 1) {
      std::vector<std::vector<int64_t>> lhs_keep(lhs_shape.rank()), rhs_axes(inst.operand(1)->shape().rank());
      lhs_keep[dn.input_batch_dimension] = {dn.input_batch_dimension};
      lhs_keep[dn.input_feature_dimension] = {dn.input_feature_dimension};
      Tiling lhs_tiling = RegroupAxes(lt, lhs_keep);  // spatial dims whole
      // Axis numbering of lhs_tiling: its dims keep their positions.
      rhs_axes[dn.kernel_input_feature_dimension] = {dn.input_feature_dimension};
      Tiling rhs_tiling = RegroupAxes(lhs_tiling, rhs_axes);
      XLAC_ASSIGN_OR_RETURN(PValue lhs, b.ReshardToTiling(b.Get(inst.operand(0)), lhs_tiling, inst));
      XLAC_ASSIGN_OR_RETURN(PValue rhs, b.ReshardToTiling(b.Get(inst.operand(1)), rhs_tiling, inst));
      Instruction* l =
          b.MaskPadding(lhs.hlo, lhs_shape, lhs_tiling, {dn.input_feature_dimension}, b.Zero(lhs_shape.element_type));
      Instruction* r = b.MaskPadding(rhs.hlo, inst.operand(1)->shape(), rhs_tiling, {dn.kernel_input_feature_dimension},
                                     b.Zero(inst.operand(1)->shape().element_type));
      std::vector<std::vector<int64_t>> out_axes(inst.shape().rank());
      out_axes[dn.output_batch_dimension] = {dn.input_batch_dimension};
      Tiling partial_tiling = RegroupAxes(lhs_tiling, out_axes);
      PrimitiveType type = inst.shape().element_type;
      Shape partial_shape = ShardShape(inst.shape(), partial_tiling);
      partial_shape.element_type = PartialSumType(type);
      Instruction* partial = b.Clone(inst, partial_shape, {l, r});
      Opcode combine = type == PrimitiveType::kPred ? Opcode::kOr : Opcode::kAdd;
      Instruction* sum = b.AllReduce(partial, b.partitioner().ScalarReducer(combine, partial_shape.element_type),
                                     GroupsAlongAxes(lhs_tiling, {dn.input_feature_dimension}), inst);
      return PValue{ConvertTo(b, sum, type), ToSharding(partial_tiling), inst.shape()};
    }
  }
  std::vector<int64_t> halo_dims;  // indices into the spatial dimension lists
  std::vector<WindowPlan> plans;
  for (size_t i = 0; i < dn.output_spatial_dimensions.size(); ++i) {
    if (out.tiles[dn.output_spatial_dimensions[i]] == 1) continue;
    if (i >= window.dimensions.size()) return absl::NotFoundError("");
    const WindowDimension& w = window.dimensions[i];
    if (w.base_dilation != 1 || w.stride < 1 || w.window_dilation < 1) return absl::NotFoundError("");
    // Each core computes the output windows of its block (a block wholly past the end computes padding).
    const int64_t tiles = out.tiles[dn.output_spatial_dimensions[i]];
    const int64_t out_size = inst.shape().dimensions[dn.output_spatial_dimensions[i]];
    const int64_t out_shard = (out_size + tiles - 1) / tiles;
    std::vector<int64_t> first(static_cast<size_t>(tiles), -1);
    for (int64_t t = 0; t < tiles; ++t) {
      if (t * out_shard < out_size) first[t] = t * out_shard;
    }
    std::optional<WindowPlan> plan =
        PlanWindows(lhs_shape.dimensions[dn.input_spatial_dimensions[i]], tiles, std::move(first), out_shard, w.stride,
                    (w.size - 1) * w.window_dilation + 1, w.padding_low);
    if (!plan) return absl::NotFoundError("");
    halo_dims.push_back(static_cast<int64_t>(i));
    plans.push_back(*std::move(plan));
  }
  std::vector<std::vector<int64_t>> lhs_axes(lhs_shape.rank()), rhs_axes(inst.operand(1)->shape().rank());
  lhs_axes[dn.input_batch_dimension] = {dn.output_batch_dimension};
  for (int64_t i : halo_dims) lhs_axes[dn.input_spatial_dimensions[i]] = {dn.output_spatial_dimensions[i]};
  rhs_axes[dn.kernel_output_feature_dimension] = {dn.output_feature_dimension};
  Tiling lhs_tiling = RegroupAxes(out, lhs_axes);
  XLAC_ASSIGN_OR_RETURN(PValue lhs, b.ReshardToTiling(b.Get(inst.operand(0)), lhs_tiling, inst));
  XLAC_ASSIGN_OR_RETURN(PValue rhs, b.ReshardToTiling(b.Get(inst.operand(1)), RegroupAxes(out, rhs_axes), inst));
  // Garbage past the end of an uneven last shard must read as the zero padding it stands for.
  std::vector<int64_t> spatial_tiled;
  for (int64_t i : halo_dims) spatial_tiled.push_back(dn.input_spatial_dimensions[i]);
  Instruction* zero = b.Zero(lhs_shape.element_type);
  Instruction* input = b.MaskPadding(lhs.hlo, lhs_shape, lhs_tiling, spatial_tiled, zero);
  for (size_t k = 0; k < halo_dims.size(); ++k) {
    const int64_t i = halo_dims[k];
    XLAC_ASSIGN_OR_RETURN(WindowedBlock block,
                          WindowedInput(b, inst, input, lhs_tiling, dn.input_spatial_dimensions[i], plans[k], zero));
    input = block.value;
    window.dimensions[i].padding_low = 0;
    window.dimensions[i].padding_high = 0;
  }
  Instruction* conv = b.Clone(inst, ShardShape(inst.shape(), out), {input, rhs.hlo});
  if (!halo_dims.empty()) conv->SetAttr("window", AttrValue::Of(window));
  return PValue{conv, ToSharding(out), inst.shape()};
}

}  // namespace

absl::StatusOr<PValue> HandleConvolution(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  return HandleConvolutionImpl(b, inst, target);
}

namespace {

// The reducer's root opcode when it is add or multiply of its two parameters (nullopt otherwise).
std::optional<Opcode> AddOrMultiply(const Instruction& reduce) {
  const Computation* reducer = reduce.called_computation(0);
  const Instruction* root = reducer->root();
  if (reducer->parameter_count() != 2 || root->operand_count() != 2) return std::nullopt;
  if (root->operand(0)->opcode() != Opcode::kParameter || root->operand(1)->opcode() != Opcode::kParameter ||
      root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  if (root->opcode() != Opcode::kAdd && root->opcode() != Opcode::kMultiply) return std::nullopt;
  return root->opcode();
}

}  // namespace

// reduce (also variadic, e.g. argmax). Reduced dimensions not tiled: the inputs are sliced like the result and
// reduced locally. Tiled: padding is masked, each core reduces its block, and the partial results are combined
// across the reduced dimensions' tile axes:
//  - one input, an init value that may be repeated (0 for add, 1 for multiply, anything for max/min/and/or): one
//    all-reduce with the reducer;
//  - one input, add or multiply with another init value: the partial results start from the identity and the
//    init value is applied once after the all-reduce (init + sum, which only reassociates);
//  - several inputs: the partial results are all-gathered along a new leading dimension and reduced again with the
//    same reducer and init values (GSPMD's form: each partial starts from the init values, so they must be neutral
//    for the reducer, as for argmax's (-inf, 0)).
absl::StatusOr<PValue> HandleReduce(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  const int64_t k = inst.operand_count() / 2;
  if (inst.opcode() != Opcode::kReduce || k < 1 || inst.operand_count() != 2 * k) return absl::NotFoundError("");
  if (k == 1 ? !inst.shape().IsArray() : !inst.shape().IsTuple()) return absl::NotFoundError("");
  const Instruction* input = inst.operand(0);
  const int64_t rank = input->shape().rank();
  const std::vector<int64_t>& reduced = inst.dimensions();
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < rank; ++i) {
    if (std::find(reduced.begin(), reduced.end(), i) == reduced.end()) kept.push_back(i);
  }
  for (int64_t i = 0; i < k; ++i) {
    if (!inst.operand(i)->shape().IsArray() || inst.operand(i)->shape().rank() != rank) {
      return absl::NotFoundError("");
    }
  }
  PValue value = b.Get(input);
  XLAC_ASSIGN_OR_RETURN(Tiling in, TilingOf(value.sharding, rank, b.num_devices()));
  const bool sharded = ShardedOnAny(in, reduced);
  std::optional<Opcode> add_or_multiply;
  if (!sharded) {
    // Nothing to combine across cores: shard the input like the result first, so each core reduces only its part.
    Sharding element_target = target.IsTuple() ? target.tuple_elements.at(0) : target;
    XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(element_target, static_cast<int64_t>(kept.size()), b.num_devices()));
    std::vector<std::vector<int64_t>> axes(static_cast<size_t>(rank));
    for (size_t j = 0; j < kept.size(); ++j) axes[kept[j]] = {static_cast<int64_t>(j)};
    in = RegroupAxes(out, axes);
  } else if (k == 1 && !InitIsSafeToRepeat(inst, *inst.operand(1))) {
    add_or_multiply = AddOrMultiply(inst);
    if (!add_or_multiply) return absl::NotFoundError("");
  }
  std::vector<Instruction*> inputs, inits;
  for (int64_t i = 0; i < k; ++i) {
    XLAC_ASSIGN_OR_RETURN(PValue v, b.ReshardToTiling(b.Get(inst.operand(i)), in, inst));
    XLAC_ASSIGN_OR_RETURN(PValue init, b.Reshard(b.Get(inst.operand(k + i)), Sharding::Replicated(), inst));
    inputs.push_back(v.hlo);
    inits.push_back(init.hlo);
  }
  // With a non-neutral init value, partial results start from the identity instead.
  std::vector<Instruction*> local_inits = inits;
  if (add_or_multiply) {
    Literal one(Shape::Scalar(inst.shape().element_type));
    one.SetFromInt64(0, 1);
    local_inits[0] = *add_or_multiply == Opcode::kAdd ? b.Zero(inst.shape().element_type) : b.ScalarConstant(one);
  }
  std::vector<int64_t> dims;
  for (int64_t j : kept) dims.push_back(ShardDims(input->shape().dimensions, in)[j]);
  std::vector<Shape> local_shapes;
  std::vector<Instruction*> operands;
  for (int64_t i = 0; i < k; ++i) {
    operands.push_back(b.MaskPadding(inputs[i], inst.operand(i)->shape(), in, reduced, local_inits[i]));
    Shape shape = k == 1 ? inst.shape() : inst.shape().tuple_shapes[i];
    shape.dimensions = dims;
    local_shapes.push_back(shape);
  }
  operands.insert(operands.end(), local_inits.begin(), local_inits.end());
  Instruction* local = b.Clone(inst, k == 1 ? local_shapes[0] : Shape::Tuple(local_shapes), operands);
  std::vector<int64_t> sharded_reduced;
  for (int64_t r : reduced) {
    if (in.tiles[r] > 1) sharded_reduced.push_back(r);
  }
  std::vector<std::vector<int64_t>> out_axes;
  for (int64_t j : kept) out_axes.push_back({j});
  Sharding result_sharding = ToSharding(RegroupAxes(in, out_axes));
  if (k > 1) result_sharding = Sharding::Tuple(std::vector<Sharding>(static_cast<size_t>(k), result_sharding));
  if (sharded_reduced.empty()) return PValue{local, result_sharding, inst.shape()};
  std::vector<std::vector<int64_t>> groups = GroupsAlongAxes(in, sharded_reduced);
  if (k == 1) {
    local = b.AllReduce(local, inst.called_computation(0), groups, inst);
    if (add_or_multiply) {
      local = b.Add(*add_or_multiply, local->shape(), {b.Broadcast(inits[0], local->shape()), local});
    }
    return PValue{local, result_sharding, inst.shape()};
  }
  // Variadic: the partial results of the group side by side along a new leading dimension, reduced again.
  std::vector<Instruction*> gathered;
  for (int64_t i = 0; i < k; ++i) {
    Instruction* part = b.Gte(local, i);
    std::vector<int64_t> one_more = {1};
    one_more.insert(one_more.end(), dims.begin(), dims.end());
    Shape reshaped = Shape::Array(part->shape().element_type, one_more);
    Instruction* r = b.Add(Opcode::kReshape, reshaped, {part});
    gathered.push_back(b.AllGather(r, 0, groups, inst));
  }
  std::vector<Instruction*> final_operands = gathered;
  final_operands.insert(final_operands.end(), inits.begin(), inits.end());
  Instruction* combined = b.Clone(inst, local->shape(), final_operands);
  combined->SetAttr("dimensions", AttrValue::IntList({0}));
  return PValue{combined, result_sharding, inst.shape()};
}

}  // namespace xlac::spmd
