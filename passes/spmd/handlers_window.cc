// Windowed ops tiled along windowed dimensions: reduce-window and select-and-scatter (convolution uses the same
// WindowedInput from handlers_dot.cc). As in GSPMD, each core extends its block by halos from its neighbours
// (collective-permutes; a neutral value outside the array) until it holds the whole input of the windows it needs,
// slices that range out at a per-core offset (strides make it differ from core to core) and runs the op unpadded.
//  - reduce-window: a core computes the windows of its output block; the padding value is the init value.
//  - select-and-scatter: a core computes every window that overlaps its output block (those windows' selections
//    need operand elements of the neighbours), scatters into an extended block and keeps its own part. Padding must
//    never be selected: the operand is extended with the select's losing extreme (-inf / lowest for GE and GT, +inf /
//    max for LE and LT), as XLA does; exact unless the operand itself holds that extreme where a window crosses the
//    array's edge.
#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {
namespace {

int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

bool TrivialWindow(const WindowDimension& w) {
  return w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 && w.window_dilation == 1 &&
         w.base_dilation == 1;
}

// Tile index of every device along `dim`.
std::vector<int64_t> TileIndexPerDevice(const Tiling& tiling, int64_t dim, int64_t num_devices) {
  std::vector<int64_t> out(static_cast<size_t>(num_devices), 0);
  for (int64_t dev = 0; dev < num_devices; ++dev) {
    std::optional<std::vector<int64_t>> c = DeviceCoordinates(tiling, dev);
    if (c) out[dev] = (*c)[dim];
  }
  return out;
}

// The value a select computation never prefers to a real element: the extreme it loses to, for a select that is a
// GE/GT/LE/LT comparison of its two parameters. nullopt otherwise.
std::optional<Literal> LosingExtreme(const Computation& select, PrimitiveType type) {
  const Instruction* root = select.root();
  if (root->opcode() != Opcode::kCompare || select.parameter_count() != 2 || root->operand_count() != 2) {
    return std::nullopt;
  }
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  if (a->opcode() != Opcode::kParameter || b->opcode() != Opcode::kParameter || a == b) return std::nullopt;
  std::string_view dir = root->StringAttr("direction");
  bool greater;  // the select keeps the current element when it is the greater one
  if (dir == "GE" || dir == "GT") {
    greater = true;
  } else if (dir == "LE" || dir == "LT") {
    greater = false;
  } else {
    return std::nullopt;
  }
  if (a->parameter_number() == 1) greater = !greater;
  Literal v(Shape::Scalar(type));
  if (IsFloatingPointType(type)) {
    FloatFormat f = GetFloatFormat(type);
    if (!f.has_infinity || f.is_unsigned) return std::nullopt;
    v.SetFromDouble(0, greater ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity());
  } else if (IsSignedIntegralType(type) || IsUnsignedIntegralType(type)) {
    int bits = BitWidth(type);
    if (bits > 64 || bits < 2) return std::nullopt;
    bool sign = IsSignedIntegralType(type);
    if (bits == 64) {
      v.SetFromInt64(0, greater ? (sign ? std::numeric_limits<int64_t>::min() : 0)
                                : (sign ? std::numeric_limits<int64_t>::max() : -1));
    } else {
      int64_t lo = sign ? -(int64_t{1} << (bits - 1)) : 0;
      int64_t hi = sign ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
      v.SetFromInt64(0, greater ? lo : hi);
    }
  } else {
    return std::nullopt;
  }
  return v;
}

// A value the scatter computation leaves every element unchanged with, bit for bit: -0 for a float add (x + -0 is
// x, also for x = -0), 0 for an integer add; nullopt for other scatters.
std::optional<Literal> ScatterIdentity(const Computation& scatter, PrimitiveType type) {
  const Instruction* root = scatter.root();
  if (root->opcode() != Opcode::kAdd || scatter.parameter_count() != 2 || root->operand_count() != 2 ||
      root->operand(0)->opcode() != Opcode::kParameter || root->operand(1)->opcode() != Opcode::kParameter ||
      root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  Literal v(Shape::Scalar(type));
  if (IsFloatingPointType(type)) {
    if (!GetFloatFormat(type).has_negative_zero) return std::nullopt;
    v.SetFromDouble(0, -0.0);
  } else if (!IsIntegralType(type)) {
    return std::nullopt;
  }
  return v;
}

}  // namespace

std::optional<WindowPlan> PlanWindows(int64_t global_size, int64_t tiles, std::vector<int64_t> first, int64_t count,
                                      int64_t stride, int64_t size, int64_t pad_lo) {
  WindowPlan plan;
  plan.shard = CeilDiv(global_size, tiles);
  const int64_t span = (count - 1) * stride + size;
  bool any = false;
  for (int64_t t = 0; t < tiles; ++t) {
    if (first[t] < 0) continue;
    any = true;
    int64_t start = first[t] * stride - pad_lo;
    plan.lo = std::max(plan.lo, t * plan.shard - start);
    plan.hi = std::max(plan.hi, start + span - (t * plan.shard + plan.shard));
  }
  // Halos may span several neighbours' blocks, but not more than the others hold together.
  const int64_t others = plan.shard * (tiles - 1);
  if (!any || count <= 0 || plan.lo > others || plan.hi > others) return std::nullopt;
  plan.first = std::move(first);
  plan.count = count;
  plan.stride = stride;
  plan.size = size;
  plan.pad_lo = pad_lo;
  plan.global_size = global_size;
  return plan;
}

absl::StatusOr<WindowedBlock> WindowedInput(ComputationBuilder& b, const Instruction& source, Instruction* input,
                                            const Tiling& tiling, int64_t dim, const WindowPlan& plan,
                                            Instruction* fill) {
  const int64_t shard = plan.shard;
  const int64_t span = (plan.count - 1) * plan.stride + plan.size;
  if (input->shape().dimensions[dim] != shard) return absl::InternalError("windowed input is not a block");
  XLAC_ASSIGN_OR_RETURN(Instruction * x, ExchangeHalos(b, source, input, tiling, dim, plan.lo, plan.hi, fill));
  WindowedBlock out;
  out.lo = plan.lo;
  out.extended = shard + plan.lo + plan.hi;
  std::vector<int64_t> tile_of = TileIndexPerDevice(tiling, dim, b.num_devices());
  std::vector<int64_t> base(static_cast<size_t>(b.num_devices()), 0);
  for (size_t dev = 0; dev < base.size(); ++dev) {
    int64_t t = tile_of[dev];
    if (plan.first[t] >= 0) base[dev] = plan.first[t] * plan.stride - plan.pad_lo - (t * shard - plan.lo);
  }
  out.base = b.TableLookup(base);
  if (span == out.extended && std::all_of(base.begin(), base.end(), [](int64_t v) { return v == 0; })) {
    out.value = x;
    out.whole = true;
    return out;
  }
  std::vector<Instruction*> starts;
  std::vector<int64_t> sizes = x->shape().dimensions;
  sizes[dim] = span;
  for (size_t d = 0; d < sizes.size(); ++d) {
    starts.push_back(static_cast<int64_t>(d) == dim ? out.base : b.ConstantS32(0));
  }
  out.value = b.DynamicSlice(x, starts, sizes);
  return out;
}

absl::StatusOr<PValue> HandleReduceWindow(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() != Opcode::kReduceWindow || inst.operand_count() != 2 || !inst.shape().IsArray()) {
    return absl::NotFoundError("");
  }
  const AttrValue* window_attr = inst.FindAttr("window");
  if (window_attr == nullptr) return absl::NotFoundError("");
  Window window = window_attr->get<Window>();
  const Shape& in_shape = inst.operand(0)->shape();
  const int64_t rank = in_shape.rank();
  if (static_cast<int64_t>(window.dimensions.size()) != rank || !inst.shape().IsStatic()) {
    return absl::NotFoundError("");
  }
  XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, rank, b.num_devices()));
  std::vector<int64_t> halo_dims;
  std::vector<WindowPlan> plans;
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[d];
    if (out.tiles[d] == 1 || TrivialWindow(w)) continue;
    // Halos and uneven padding are filled with the init value, which then enters windows it did not before.
    if (w.base_dilation != 1 || w.stride < 1 || w.window_dilation < 1 || !InitIsSafeToRepeat(inst, *inst.operand(1))) {
      return absl::NotFoundError("");
    }
    // Each core computes the windows of its output block; a block wholly past the end computes padding.
    const int64_t tiles = out.tiles[d];
    const int64_t out_size = inst.shape().dimensions[d];
    const int64_t out_shard = CeilDiv(out_size, tiles);
    std::vector<int64_t> first(static_cast<size_t>(tiles), -1);
    for (int64_t t = 0; t < tiles; ++t) {
      if (t * out_shard < out_size) first[t] = t * out_shard;
    }
    std::optional<WindowPlan> plan = PlanWindows(in_shape.dimensions[d], tiles, std::move(first), out_shard, w.stride,
                                                 (w.size - 1) * w.window_dilation + 1, w.padding_low);
    if (!plan) return absl::NotFoundError("");
    halo_dims.push_back(d);
    plans.push_back(*std::move(plan));
  }
  XLAC_ASSIGN_OR_RETURN(PValue operand, b.ReshardToTiling(b.Get(inst.operand(0)), out, inst));
  XLAC_ASSIGN_OR_RETURN(PValue init, b.Reshard(b.Get(inst.operand(1)), Sharding::Replicated(), inst));
  // Padding past the end of an uneven last shard stands for the window's padding: the init value.
  Instruction* x = b.MaskPadding(operand.hlo, in_shape, out, halo_dims, init.hlo);
  for (size_t i = 0; i < halo_dims.size(); ++i) {
    XLAC_ASSIGN_OR_RETURN(WindowedBlock block, WindowedInput(b, inst, x, out, halo_dims[i], plans[i], init.hlo));
    x = block.value;
    window.dimensions[halo_dims[i]].padding_low = 0;
    window.dimensions[halo_dims[i]].padding_high = 0;
  }
  Instruction* rw = b.Clone(inst, ShardShape(inst.shape(), out), {x, init.hlo});
  rw->SetAttr("window", AttrValue::Of(window));
  return PValue{rw, ToSharding(out), inst.shape()};
}

absl::StatusOr<PValue> HandleSelectAndScatter(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() != Opcode::kSelectAndScatter || inst.operand_count() != 3 || !inst.shape().IsArray() ||
      inst.called_computations().size() != 2) {
    return absl::NotFoundError("");
  }
  const AttrValue* window_attr = inst.FindAttr("window");
  if (window_attr == nullptr) return absl::NotFoundError("");
  Window window = window_attr->get<Window>();
  const Shape& op_shape = inst.operand(0)->shape();
  const Shape& src_shape = inst.operand(1)->shape();
  const int64_t rank = op_shape.rank();
  if (static_cast<int64_t>(window.dimensions.size()) != rank || !inst.shape().IsStatic()) {
    return absl::NotFoundError("");
  }
  XLAC_ASSIGN_OR_RETURN(Tiling out, TilingOf(target, rank, b.num_devices()));
  std::vector<int64_t> halo_dims;
  std::vector<WindowPlan> op_plans, src_plans;
  std::vector<std::vector<int64_t>> firsts;
  std::optional<Literal> src_fill = ScatterIdentity(*inst.called_computation(1), src_shape.element_type);
  // A source that is whole along the windowed dimensions (often: it is much smaller) is sliced, not exchanged.
  XLAC_ASSIGN_OR_RETURN(Tiling src_in, TilingOf(b.Get(inst.operand(1)).sharding, rank, b.num_devices()));
  bool src_whole = !src_in.manual;
  std::vector<int64_t> active(static_cast<size_t>(b.num_devices()), 1);
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[d];
    if (out.tiles[d] == 1 || TrivialWindow(w)) continue;
    if (w.base_dilation != 1 || w.window_dilation != 1 || w.stride < 1) return absl::NotFoundError("");
    src_whole = src_whole && src_in.tiles[d] == 1;
  }
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[d];
    if (out.tiles[d] == 1 || TrivialWindow(w)) continue;
    const int64_t tiles = out.tiles[d];
    const int64_t n = op_shape.dimensions[d];
    const int64_t m = src_shape.dimensions[d];
    const int64_t shard = CeilDiv(n, tiles);
    // Per tile, the windows that overlap its valid elements [rs, re): [jlo, jhi].
    std::vector<int64_t> jlo(static_cast<size_t>(tiles), -1), jhi(static_cast<size_t>(tiles), -2);
    int64_t count = 0;
    for (int64_t t = 0; t < tiles; ++t) {
      int64_t rs = t * shard, re = std::min(n, t * shard + shard);
      if (rs >= re) continue;
      jlo[t] = std::max<int64_t>(0, CeilDiv(rs + w.padding_low - w.size + 1, w.stride));
      jhi[t] = std::min(m - 1, FloorDiv(re - 1 + w.padding_low, w.stride));
      count = std::max(count, jhi[t] - jlo[t] + 1);
    }
    if (count <= 0) return absl::NotFoundError("");
    // Every core computes `count` windows from its first one; the extra ones lie wholly beside its block. Past the
    // last window they do not exist: their source is the scatter's identity when it has one, else the core's
    // windows end at the last one instead (larger halos on the left).
    std::optional<WindowPlan> op_plan, src_plan;
    std::vector<int64_t> first(static_cast<size_t>(tiles), -1);
    for (bool right : {true, false}) {
      if (right && !src_fill) continue;
      for (int64_t t = 0; t < tiles; ++t) {
        if (jlo[t] <= jhi[t]) first[t] = right ? jlo[t] : std::min(jlo[t], m - count);
      }
      op_plan = PlanWindows(n, tiles, first, count, w.stride, w.size, w.padding_low);
      src_plan = src_whole ? WindowPlan{} : PlanWindows(m, tiles, first, count, 1, 1, 0);
      if (op_plan && src_plan) break;
    }
    if (!op_plan || !src_plan) return absl::NotFoundError("");
    firsts.push_back(first);
    std::vector<int64_t> tile_of = TileIndexPerDevice(out, d, b.num_devices());
    for (size_t dev = 0; dev < active.size(); ++dev) {
      if (first[tile_of[dev]] < 0) active[dev] = 0;
    }
    halo_dims.push_back(d);
    op_plans.push_back(*std::move(op_plan));
    src_plans.push_back(*std::move(src_plan));
  }
  Instruction* fill = nullptr;
  if (!halo_dims.empty()) {
    std::optional<Literal> extreme = LosingExtreme(*inst.called_computation(0), op_shape.element_type);
    if (!extreme) return absl::NotFoundError("");
    fill = b.ScalarConstant(*extreme);
  }
  XLAC_ASSIGN_OR_RETURN(PValue operand, b.ReshardToTiling(b.Get(inst.operand(0)), out, inst));
  std::vector<std::vector<int64_t>> src_axes;
  for (int64_t d = 0; d < rank; ++d) {
    bool halo = src_whole && std::find(halo_dims.begin(), halo_dims.end(), d) != halo_dims.end();
    src_axes.push_back(halo ? std::vector<int64_t>{} : std::vector<int64_t>{d});
  }
  const Tiling src_tiling = RegroupAxes(out, src_axes);
  XLAC_ASSIGN_OR_RETURN(PValue src, b.ReshardToTiling(b.Get(inst.operand(1)), src_tiling, inst));
  XLAC_ASSIGN_OR_RETURN(PValue init, b.Reshard(b.Get(inst.operand(2)), Sharding::Replicated(), inst));
  Instruction* x = fill ? b.MaskPadding(operand.hlo, op_shape, out, halo_dims, fill) : operand.hlo;
  Instruction* s_fill = src_fill ? b.ScalarConstant(*src_fill) : b.Zero(src_shape.element_type);
  Instruction* s = src_fill && !src_whole ? b.MaskPadding(src.hlo, src_shape, out, halo_dims, s_fill) : src.hlo;
  if (src_whole && !halo_dims.empty()) {
    // Windows past the last one (when the extra windows run to the right) read the scatter's identity.
    std::vector<int64_t> dims = s->shape().dimensions;
    std::vector<Instruction*> starts;
    std::vector<int64_t> sizes = dims;
    PaddingConfig config;
    for (int64_t d = 0; d < rank; ++d) {
      auto it = std::find(halo_dims.begin(), halo_dims.end(), d);
      if (it == halo_dims.end()) {
        config.dimensions.push_back(PaddingDimension{0, 0, 0});
        starts.push_back(b.ConstantS32(0));
        continue;
      }
      const size_t i = static_cast<size_t>(it - halo_dims.begin());
      const int64_t count = (op_plans[i].count);
      config.dimensions.push_back(PaddingDimension{0, src_fill ? count : 0, 0});
      dims[d] += src_fill ? count : 0;
      sizes[d] = count;
      std::vector<int64_t> tile_of = TileIndexPerDevice(out, d, b.num_devices());
      std::vector<int64_t> table(tile_of.size(), 0);
      for (size_t dev = 0; dev < table.size(); ++dev) table[dev] = std::max<int64_t>(0, firsts[i][tile_of[dev]]);
      starts.push_back(b.TableLookup(table));
    }
    if (src_fill) {
      Instruction* pad = b.Add(Opcode::kPad, Shape::Array(src_shape.element_type, dims), {s, s_fill});
      pad->SetAttr("padding", AttrValue::Of(std::move(config)));
      s = pad;
    }
    s = b.DynamicSlice(s, starts, sizes);
  }
  std::vector<WindowedBlock> blocks;
  for (size_t i = 0; i < halo_dims.size(); ++i) {
    const int64_t d = halo_dims[i];
    XLAC_ASSIGN_OR_RETURN(WindowedBlock ob, WindowedInput(b, inst, x, out, d, op_plans[i], fill));
    x = ob.value;
    if (!src_whole) {
      XLAC_ASSIGN_OR_RETURN(WindowedBlock sb, WindowedInput(b, inst, s, out, d, src_plans[i], s_fill));
      s = sb.value;
    }
    blocks.push_back(ob);
    window.dimensions[d].padding_low = 0;
    window.dimensions[d].padding_high = 0;
  }
  Instruction* local = b.Clone(inst, x->shape(), {x, s, init.hlo});
  local->SetAttr("window", AttrValue::Of(window));
  if (halo_dims.empty()) return PValue{local, ToSharding(out), inst.shape()};
  // Scatter into this core's extended block (init where no window reached), then keep the core's own part.
  Shape result_shape = ShardShape(inst.shape(), out);
  const bool whole = std::all_of(blocks.begin(), blocks.end(), [](const WindowedBlock& wb) { return wb.whole; });
  Instruction* placed = local;
  if (!whole) {
    std::vector<int64_t> extended = x->shape().dimensions;
    std::vector<Instruction*> offsets;
    for (int64_t d = 0; d < rank; ++d) offsets.push_back(nullptr);
    for (size_t i = 0; i < halo_dims.size(); ++i) {
      extended[halo_dims[i]] = blocks[i].extended;
      offsets[halo_dims[i]] = blocks[i].base;
    }
    for (Instruction*& o : offsets) {
      if (o == nullptr) o = b.ConstantS32(0);
    }
    Instruction* canvas = b.Broadcast(init.hlo, Shape::Array(inst.shape().element_type, extended));
    std::vector<Instruction*> dus_operands = {canvas, local};
    dus_operands.insert(dus_operands.end(), offsets.begin(), offsets.end());
    placed = b.Add(Opcode::kDynamicUpdateSlice, canvas->shape(), dus_operands);
  }
  std::vector<SliceRange> ranges;
  for (int64_t d = 0; d < rank; ++d) ranges.push_back(SliceRange{0, result_shape.dimensions[d], 1});
  for (size_t i = 0; i < halo_dims.size(); ++i) {
    int64_t d = halo_dims[i];
    ranges[d] = SliceRange{blocks[i].lo, blocks[i].lo + result_shape.dimensions[d], 1};
  }
  Instruction* result = b.Add(Opcode::kSlice, result_shape, {placed});
  result->SetAttr("slice", AttrValue::Of(std::move(ranges)));
  if (std::any_of(active.begin(), active.end(), [](int64_t v) { return v == 0; })) {
    // A core whose block holds no valid element has no windows of its own.
    Instruction* flag = b.TableLookup(active);
    Instruction* is_active = b.Add(Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred), {flag, b.ConstantS32(1)});
    is_active->SetAttr("direction", AttrValue::Enum("EQ"));
    result = b.Add(Opcode::kSelect, result_shape,
                   {b.Broadcast(is_active, result_shape), result, b.Broadcast(init.hlo, result_shape)});
  }
  return PValue{result, ToSharding(out), inst.shape()};
}

}  // namespace xlac::spmd
