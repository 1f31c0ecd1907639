// Data-movement rules: no-op reshapes, transposes, broadcasts, slices, pads and concatenates disappear, and chains
// of the same op collapse into one. All of them only move elements, so they are exact for every value.
#include <cstdint>
#include <vector>

#include "ir/instruction.h"
#include "passes/simplify/simplifier_internal.h"

namespace xlac::simplify {
namespace {

bool IsScalarBroadcast(const Instruction& inst) {
  return inst.opcode() == Opcode::kBroadcast && inst.operand(0)->shape().IsScalar() && Bypassable(inst);
}

// Any op that only rearranges a broadcast scalar yields the same broadcast scalar in its own shape.
Instruction* RebroadcastScalar(Rewriter& rw, Instruction* inst) {
  Instruction* operand = inst->operand(0);
  if (!IsScalarBroadcast(*operand)) return nullptr;
  Instruction* broadcast = rw.Add(*inst, Opcode::kBroadcast, inst->shape(), {operand->operand(0)});
  broadcast->SetAttr("dimensions", AttrValue::IntList({}));
  return broadcast;
}

bool IsIdentityPermutation(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Instruction* SimplifyReshape(Rewriter& rw, Instruction* inst) {
  Instruction* operand = inst->operand(0);
  if (operand->shape().dimensions == inst->shape().dimensions) return operand;
  if (operand->opcode() == Opcode::kReshape && Bypassable(*operand)) {
    Instruction* source = operand->operand(0);
    if (source->shape().dimensions == inst->shape().dimensions && SameShapeAndLayout(source->shape(), inst->shape())) {
      return source;
    }
    return rw.Add(*inst, Opcode::kReshape, inst->shape(), {source});
  }
  return RebroadcastScalar(rw, inst);
}

Instruction* SimplifyTranspose(Rewriter& rw, Instruction* inst) {
  const std::vector<int64_t>& perm = inst->dimensions();
  Instruction* operand = inst->operand(0);
  if (IsIdentityPermutation(perm)) {
    if (SameShapeAndLayout(operand->shape(), inst->shape())) return operand;
    return nullptr;
  }
  if (operand->opcode() == Opcode::kTranspose && Bypassable(*operand)) {
    // out dim i = inner dim perm[i] = source dim inner_perm[perm[i]].
    const std::vector<int64_t>& inner_perm = operand->dimensions();
    std::vector<int64_t> composed(perm.size());
    for (size_t i = 0; i < perm.size(); ++i) composed[i] = inner_perm[perm[i]];
    Instruction* source = operand->operand(0);
    if (IsIdentityPermutation(composed)) {
      if (SameShapeAndLayout(source->shape(), inst->shape())) return source;
      // Only the layout differs: that is what a copy does.
      return rw.Add(*inst, Opcode::kCopy, inst->shape(), {source});
    }
    Instruction* transpose = rw.Add(*inst, Opcode::kTranspose, inst->shape(), {source});
    transpose->SetAttr("dimensions", AttrValue::IntList(composed));
    return transpose;
  }
  return RebroadcastScalar(rw, inst);
}

Instruction* SimplifyBroadcast(Rewriter& rw, Instruction* inst) {
  Instruction* operand = inst->operand(0);
  const std::vector<int64_t>& dims = inst->dimensions();
  if (operand->shape().rank() == inst->shape().rank() && IsIdentityPermutation(dims)) return operand;
  if (operand->opcode() == Opcode::kBroadcast && Bypassable(*operand)) {
    // Source dim j -> inner dim inner_dims[j] -> outer dim dims[inner_dims[j]].
    const std::vector<int64_t>& inner_dims = operand->dimensions();
    std::vector<int64_t> composed(inner_dims.size());
    for (size_t j = 0; j < inner_dims.size(); ++j) composed[j] = dims[inner_dims[j]];
    Instruction* broadcast = rw.Add(*inst, Opcode::kBroadcast, inst->shape(), {operand->operand(0)});
    broadcast->SetAttr("dimensions", AttrValue::IntList(composed));
    return broadcast;
  }
  return nullptr;
}

int64_t SliceCount(const SliceRange& r) {
  return r.limit <= r.start ? 0 : (r.limit - r.start + r.stride - 1) / r.stride;
}

Instruction* AddSlice(Rewriter& rw, Instruction* inst, Instruction* source, std::vector<SliceRange> ranges) {
  Instruction* slice = rw.Add(*inst, Opcode::kSlice, inst->shape(), {source});
  slice->SetAttr("slice", AttrValue::Of(std::move(ranges)));
  return slice;
}

Instruction* SliceOfSlice(Rewriter& rw, Instruction* inst, const std::vector<SliceRange>& outer) {
  Instruction* inner_inst = inst->operand(0);
  const auto& inner = inner_inst->FindAttr("slice")->get<std::vector<SliceRange>>();
  std::vector<SliceRange> ranges(outer.size());
  for (size_t d = 0; d < outer.size(); ++d) {
    int64_t count = SliceCount(outer[d]);
    int64_t stride = inner[d].stride * outer[d].stride;
    int64_t start = inner[d].start + outer[d].start * inner[d].stride;
    ranges[d] = {start, count == 0 ? start : start + (count - 1) * stride + 1, stride};
  }
  return AddSlice(rw, inst, inner_inst->operand(0), std::move(ranges));
}

// A slice that reads only from one operand of a concatenate is a slice of that operand.
Instruction* SliceOfConcatenate(Rewriter& rw, Instruction* inst, const std::vector<SliceRange>& ranges) {
  Instruction* concat = inst->operand(0);
  int64_t dim = concat->dimensions()[0];
  const SliceRange& r = ranges[dim];
  int64_t count = SliceCount(r);
  if (count == 0) return nullptr;
  int64_t first = r.start;
  int64_t last = r.start + (count - 1) * r.stride;
  int64_t offset = 0;
  for (Instruction* piece : concat->operands()) {
    int64_t size = piece->shape().dimensions[dim];
    if (first >= offset && last < offset + size) {
      std::vector<SliceRange> shifted = ranges;
      shifted[dim].start -= offset;
      shifted[dim].limit = last - offset + 1;
      return AddSlice(rw, inst, piece, std::move(shifted));
    }
    offset += size;
  }
  return nullptr;
}

// A slice that reads no padding (in dimensions without interior padding) is a slice of the pad's operand.
Instruction* SliceOfPad(Rewriter& rw, Instruction* inst, const std::vector<SliceRange>& ranges) {
  Instruction* pad = inst->operand(0);
  Instruction* source = pad->operand(0);
  const auto& config = pad->FindAttr("padding")->get<PaddingConfig>().dimensions;
  std::vector<SliceRange> shifted(ranges.size());
  for (size_t d = 0; d < ranges.size(); ++d) {
    int64_t count = SliceCount(ranges[d]);
    if (config[d].interior_padding != 0 || count == 0) return nullptr;
    int64_t first = ranges[d].start - config[d].edge_padding_low;
    int64_t last = first + (count - 1) * ranges[d].stride;
    if (first < 0 || last >= source->shape().dimensions[d]) return nullptr;
    shifted[d] = {first, last + 1, ranges[d].stride};
  }
  return AddSlice(rw, inst, source, std::move(shifted));
}

Instruction* SimplifySlice(Rewriter& rw, Instruction* inst) {
  Instruction* operand = inst->operand(0);
  const auto& ranges = inst->FindAttr("slice")->get<std::vector<SliceRange>>();
  if (operand->shape().dimensions == inst->shape().dimensions) return operand;  // a full, unit-stride slice
  if (!Bypassable(*operand)) return nullptr;
  switch (operand->opcode()) {
    case Opcode::kSlice:
      return SliceOfSlice(rw, inst, ranges);
    case Opcode::kConcatenate:
      return SliceOfConcatenate(rw, inst, ranges);
    case Opcode::kPad:
      return SliceOfPad(rw, inst, ranges);
    default:
      return RebroadcastScalar(rw, inst);
  }
}

bool SamePaddingValue(const Instruction& a, const Instruction& b) {
  if (&a == &b) return true;
  std::optional<KnownValue> va = GetKnownValue(a);
  std::optional<KnownValue> vb = GetKnownValue(b);
  return va && vb && a.shape().IsScalar() && b.shape().IsScalar() && *va->literal == *vb->literal;
}

Instruction* SimplifyPad(Rewriter& rw, Instruction* inst) {
  Instruction* operand = inst->operand(0);
  const auto& outer = inst->FindAttr("padding")->get<PaddingConfig>().dimensions;
  bool all_zero = true;
  for (const PaddingDimension& p : outer) all_zero &= p == PaddingDimension{};
  if (all_zero) return operand;
  if (operand->opcode() != Opcode::kPad || !Bypassable(*operand) ||
      !SamePaddingValue(*operand->operand(1), *inst->operand(1))) {
    return nullptr;
  }
  // Edge padding of an edge- or interior-padded array extends it; negative edges (crops) or interior padding of
  // the outer pad would interleave with the inner one.
  const auto& inner = operand->FindAttr("padding")->get<PaddingConfig>().dimensions;
  PaddingConfig merged;
  for (size_t d = 0; d < outer.size(); ++d) {
    if (outer[d].interior_padding != 0 || outer[d].edge_padding_low < 0 || outer[d].edge_padding_high < 0 ||
        inner[d].edge_padding_low < 0 || inner[d].edge_padding_high < 0) {
      return nullptr;
    }
    merged.dimensions.push_back({inner[d].edge_padding_low + outer[d].edge_padding_low,
                                 inner[d].edge_padding_high + outer[d].edge_padding_high, inner[d].interior_padding});
  }
  Instruction* pad = rw.Add(*inst, Opcode::kPad, inst->shape(), {operand->operand(0), inst->operand(1)});
  pad->SetAttr("padding", AttrValue::Of(std::move(merged)));
  return pad;
}

}  // namespace

Instruction* SimplifyShapeOp(Rewriter& rw, Instruction* inst) {
  switch (inst->opcode()) {
    case Opcode::kReshape:
      return SimplifyReshape(rw, inst);
    case Opcode::kTranspose:
      return SimplifyTranspose(rw, inst);
    case Opcode::kBroadcast:
      return SimplifyBroadcast(rw, inst);
    case Opcode::kSlice:
      return SimplifySlice(rw, inst);
    case Opcode::kPad:
      return SimplifyPad(rw, inst);
    case Opcode::kConcatenate:
      return inst->operand_count() == 1 ? inst->operand(0) : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace xlac::simplify
