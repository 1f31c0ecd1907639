// reduce-window tiled along a windowed dimension: like a spatially tiled convolution, each core extends its block
// by halos from its neighbours (the padding value at the ends of the array) and reduces unpadded. Only stride 1,
// no dilation and size-preserving padding, where input and output blocks line up; anything else is computed whole.
#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {

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
  for (int64_t d = 0; d < rank; ++d) {
    const WindowDimension& w = window.dimensions[d];
    bool trivial = w.size == 1 && w.stride == 1 && w.padding_low == 0 && w.padding_high == 0 &&
                   w.window_dilation == 1 && w.base_dilation == 1;
    if (out.tiles[d] == 1 || trivial) continue;
    bool aligned = w.stride == 1 && w.window_dilation == 1 && w.base_dilation == 1 && w.padding_low >= 0 &&
                   w.padding_high >= 0 && w.padding_low + w.padding_high == w.size - 1 &&
                   in_shape.dimensions[d] == inst.shape().dimensions[d];
    if (!aligned) return absl::NotFoundError("");
    halo_dims.push_back(d);
  }
  XLAC_ASSIGN_OR_RETURN(PValue operand, b.ReshardToTiling(b.Get(inst.operand(0)), out, inst));
  XLAC_ASSIGN_OR_RETURN(PValue init, b.Reshard(b.Get(inst.operand(1)), Sharding::Replicated(), inst));
  // Padding past the end of an uneven last shard stands for the window's padding: the init value.
  Instruction* x = b.MaskPadding(operand.hlo, in_shape, out, halo_dims, init.hlo);
  for (int64_t d : halo_dims) {
    const WindowDimension& w = window.dimensions[d];
    if (w.padding_low > x->shape().dimensions[d] || w.padding_high > x->shape().dimensions[d]) {
      return absl::NotFoundError("");
    }
    XLAC_ASSIGN_OR_RETURN(x, ExchangeHalos(b, inst, x, out, d, w.padding_low, w.padding_high, init.hlo));
    window.dimensions[d].padding_low = 0;
    window.dimensions[d].padding_high = 0;
  }
  Instruction* rw = b.Clone(inst, ShardShape(inst.shape(), out), {x, init.hlo});
  rw->SetAttr("window", AttrValue::Of(window));
  return PValue{rw, ToSharding(out), inst.shape()};
}

}  // namespace xlac::spmd
