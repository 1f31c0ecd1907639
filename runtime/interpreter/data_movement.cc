// Data movement: broadcast, reshape, transpose, reverse, slice, dynamic-slice, dynamic-update-slice, concatenate,
// pad, iota, copy, bitcast and the dynamic-shape ops. All of them move element bytes; none computes.
#include <algorithm>
#include <cstring>

#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

// result[r] = src[base + sum_d r[d] * coef[d]] for every result index r (row-major).
Literal AffineGather(const Literal& src, const Shape& out_shape, int64_t base, const std::vector<int64_t>& coef) {
  Literal result = Literal::CreateUninitialized(out_shape);
  int64_t n = result.element_count();
  if (n == 0) return result;
  int64_t w = ByteWidth(out_shape.element_type);
  size_t rank = out_shape.dimensions.size();
  const uint8_t* in = src.raw_data();
  uint8_t* out = result.mutable_raw_data();
  if (rank == 0) {
    std::memcpy(out, in + base * w, static_cast<size_t>(w));
    return result;
  }
  // Row by row: the innermost dimension is a strided copy with a typed element move.
  int64_t inner = out_shape.dimensions[rank - 1], step = coef[rank - 1];
  auto copy_row = [&](auto tag, uint8_t* dst, const uint8_t* row) {
    using E = decltype(tag);
    E* d = reinterpret_cast<E*>(dst);
    for (int64_t j = 0; j < inner; ++j) std::memcpy(d + j, row + j * step * w, sizeof(E));
  };
  std::vector<int64_t> index(rank - 1, 0);
  std::vector<int64_t> outer(out_shape.dimensions.begin(), out_shape.dimensions.end() - 1);
  int64_t offset = base;
  for (int64_t i = 0; i < n; i += inner) {
    const uint8_t* row = in + offset * w;
    switch (w) {
      case 1:
        copy_row(uint8_t{}, out + i * w, row);
        break;
      case 2:
        copy_row(uint16_t{}, out + i * w, row);
        break;
      case 4:
        copy_row(uint32_t{}, out + i * w, row);
        break;
      case 8:
        copy_row(uint64_t{}, out + i * w, row);
        break;
      default:
        for (int64_t j = 0; j < inner; ++j) {
          std::memcpy(out + (i + j) * w, row + j * step * w, static_cast<size_t>(w));
        }
    }
    for (size_t d = rank - 1; d-- > 0;) {
      offset += coef[d];
      if (++index[d] < outer[d]) break;
      offset -= coef[d] * index[d];
      index[d] = 0;
    }
  }
  return result;
}

// Row-major bytes are the same for every shape of the same elements: the result shares them (copy on write), so
// a reshape or copy of a 1 GiB embedding table costs no memory and no time.
Literal Reshaped(const Literal& src, const Shape& shape) { return src.ViewAs(shape); }

absl::StatusOr<Literal> Broadcast(const Instruction& inst, const Literal& x) {
  const std::vector<int64_t>& dims = IntList(inst, "dimensions");
  const Shape& out = inst.shape();
  if (dims.size() != x.shape().dimensions.size()) {
    // A scalar broadcast may omit dimensions={}.
    if (x.element_count() != 1) return Error(inst, "dimensions do not match the operand rank");
    return AffineGather(x, out, 0, std::vector<int64_t>(out.dimensions.size(), 0));
  }
  std::vector<int64_t> strides = RowMajorStrides(x.shape().dimensions);
  std::vector<int64_t> coef(out.dimensions.size(), 0);
  for (size_t k = 0; k < dims.size(); ++k) {
    if (x.shape().dimensions[k] != 1) coef[static_cast<size_t>(dims[k])] = strides[k];
  }
  return AffineGather(x, out, 0, coef);
}

absl::StatusOr<Literal> Transpose(const Instruction& inst, const Literal& x) {
  const std::vector<int64_t>& perm = IntList(inst, "dimensions");
  std::vector<int64_t> strides = RowMajorStrides(x.shape().dimensions);
  std::vector<int64_t> coef(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) coef[i] = strides[static_cast<size_t>(perm[i])];
  return AffineGather(x, inst.shape(), 0, coef);
}

absl::StatusOr<Literal> Reverse(const Instruction& inst, const Literal& x) {
  std::vector<int64_t> strides = RowMajorStrides(x.shape().dimensions);
  std::vector<int64_t> coef = strides;
  int64_t base = 0;
  for (int64_t d : IntList(inst, "dimensions")) {
    coef[d] = -strides[d];
    base += (x.shape().dimensions[d] - 1) * strides[d];
  }
  return AffineGather(x, inst.shape(), base, coef);
}

absl::StatusOr<Literal> Slice(const Instruction& inst, const Literal& x) {
  const AttrValue* attr = inst.FindAttr("slice");
  if (attr == nullptr || attr->kind != AttrKind::kSlice) return Error(inst, "missing slice attribute");
  const auto& ranges = attr->get<std::vector<SliceRange>>();
  std::vector<int64_t> strides = RowMajorStrides(x.shape().dimensions);
  std::vector<int64_t> coef(ranges.size());
  int64_t base = 0;
  for (size_t d = 0; d < ranges.size(); ++d) {
    base += ranges[d].start * strides[d];
    coef[d] = ranges[d].stride * strides[d];
  }
  return AffineGather(x, inst.shape(), base, coef);
}

// Start indices of dynamic-slice/-update-slice: one scalar operand per dimension (or one vector operand in the
// legacy form), clamped so the window stays inside the operand.
std::vector<int64_t> ClampedStarts(Operands operands, size_t first, const Shape& operand,
                                   const std::vector<int64_t>& sizes) {
  size_t rank = operand.dimensions.size();
  std::vector<int64_t> starts(rank, 0);
  bool vector_form = operands.size() == first + 1 && operands[first]->shape().dimensions.size() == 1 && rank != 1;
  for (size_t d = 0; d < rank; ++d) {
    int64_t s = vector_form ? IndexValue(*operands[first], static_cast<int64_t>(d))
                            : (first + d < operands.size() ? IndexValue(*operands[first + d], 0) : 0);
    starts[d] = std::clamp<int64_t>(s, 0, std::max<int64_t>(operand.dimensions[d] - sizes[d], 0));
  }
  return starts;
}

absl::StatusOr<Literal> DynamicSlice(const Instruction& inst, Operands operands) {
  const Literal& x = *operands[0];
  std::vector<int64_t> starts = ClampedStarts(operands, 1, x.shape(), inst.shape().dimensions);
  std::vector<int64_t> strides = RowMajorStrides(x.shape().dimensions);
  int64_t base = 0;
  for (size_t d = 0; d < starts.size(); ++d) base += starts[d] * strides[d];
  return AffineGather(x, inst.shape(), base, strides);
}

absl::StatusOr<Literal> DynamicUpdateSlice(const Instruction& inst, Operands operands) {
  const Literal& x = *operands[0];
  const Literal& update = *operands[1];
  std::vector<int64_t> starts = ClampedStarts(operands, 2, x.shape(), update.shape().dimensions);
  Literal result = Reshaped(x, inst.shape());
  int64_t n = update.element_count();
  if (n == 0) return result;
  int64_t w = ByteWidth(x.shape().element_type);
  std::vector<int64_t> strides = RowMajorStrides(x.shape().dimensions);
  std::vector<int64_t> index(starts.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t dst = 0;
    for (size_t d = 0; d < index.size(); ++d) dst += (starts[d] + index[d]) * strides[d];
    CopyElement(update, i, result, dst, w);
    NextIndex(index, update.shape().dimensions);
  }
  return result;
}

absl::StatusOr<Literal> Concatenate(const Instruction& inst, Operands operands) {
  const std::vector<int64_t>& dims = IntList(inst, "dimensions");
  if (dims.size() != 1) return Error(inst, "expected one concatenate dimension");
  size_t dim = static_cast<size_t>(dims[0]);
  Literal result(inst.shape());
  int64_t w = ByteWidth(inst.shape().element_type);
  const std::vector<int64_t>& out_dims = inst.shape().dimensions;
  // Row-major: each operand contributes contiguous runs of (its dim size x inner size) per outer index.
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < dim; ++d) outer *= out_dims[d];
  for (size_t d = dim + 1; d < out_dims.size(); ++d) inner *= out_dims[d];
  int64_t out_row = out_dims[dim] * inner;
  int64_t offset = 0;
  for (const Literal* op : operands) {
    int64_t run = op->shape().dimensions[dim] * inner;
    for (int64_t o = 0; o < outer; ++o) {
      CopyBytes(result.mutable_raw_data() + (o * out_row + offset) * w, op->raw_data() + o * run * w, run * w);
    }
    offset += run;
  }
  return result;
}

absl::StatusOr<Literal> Pad(const Instruction& inst, const Literal& x, const Literal& value) {
  const AttrValue* attr = inst.FindAttr("padding");
  if (attr == nullptr || attr->kind != AttrKind::kPaddingConfig) return Error(inst, "missing padding attribute");
  const PaddingConfig& config = attr->get<PaddingConfig>();
  Literal result(inst.shape());
  int64_t w = ByteWidth(inst.shape().element_type);
  for (int64_t i = 0; i < result.element_count(); ++i) CopyElement(value, 0, result, i, w);
  const std::vector<int64_t>& out_dims = inst.shape().dimensions;
  std::vector<int64_t> strides = RowMajorStrides(out_dims);
  std::vector<int64_t> index(x.shape().dimensions.size(), 0);
  // Interior padding applies before edge padding, so negative edges cut into the interior-padded operand.
  for (int64_t i = 0; i < x.element_count(); ++i) {
    int64_t dst = 0;
    bool inside = true;
    for (size_t d = 0; d < index.size(); ++d) {
      const PaddingDimension& p = config.dimensions[d];
      int64_t t = p.edge_padding_low + index[d] * (p.interior_padding + 1);
      if (t < 0 || t >= out_dims[d]) {
        inside = false;
        break;
      }
      dst += t * strides[d];
    }
    if (inside) CopyElement(x, i, result, dst, w);
    NextIndex(index, x.shape().dimensions);
  }
  return result;
}

absl::StatusOr<Literal> Iota(const Instruction& inst) {
  Literal result(inst.shape());
  int64_t dim = IntAttr(inst, "iota_dimension", 0);
  const std::vector<int64_t>& dims = inst.shape().dimensions;
  if (dim < 0 || dim >= static_cast<int64_t>(dims.size())) return Error(inst, "bad iota_dimension {}", dim);
  std::vector<int64_t> strides = RowMajorStrides(dims);
  PrimitiveType t = inst.shape().element_type;
  DispatchKind(KindOf(t), [&](auto tag) {
    using C = decltype(tag);
    for (int64_t i = 0; i < result.element_count(); ++i) {
      int64_t v = (i / strides[dim]) % dims[dim];
      if constexpr (kIsComplex<C>)
        StoreOne<C>(result, i, C(static_cast<typename C::value_type>(v), 0));
      else
        StoreOne<C>(result, i, static_cast<C>(v));
    }
  });
  return result;
}

// bitcast reinterprets the physical buffer: element order follows each shape's layout.
absl::StatusOr<Literal> Bitcast(const Instruction& inst, const Literal& x) {
  const Shape& in_shape = inst.operand_count() > 0 ? inst.operand(0)->shape() : x.shape();
  const Shape& out_shape = inst.shape();
  const int64_t out_bytes = out_shape.IsArray() ? out_shape.ByteSizeOf().value_or(-1) : 0;
  if (out_bytes != x.byte_size()) {
    return Error(inst, "bitcast changes the buffer size from {} to {} bytes", x.byte_size(), out_bytes);
  }
  if (!HasNonDefaultLayout(in_shape) && !HasNonDefaultLayout(out_shape) && x.shape().IsArray() && out_shape.IsArray()) {
    return x.ViewAs(out_shape);
  }
  Literal result = Literal::CreateUninitialized(out_shape);
  int64_t win = ByteWidth(in_shape.element_type), wout = ByteWidth(out_shape.element_type);
  std::vector<uint8_t> physical(static_cast<size_t>(x.byte_size()));
  std::vector<int64_t> in_order = PhysicalToLogical(in_shape);
  for (size_t p = 0; p < in_order.size(); ++p) {
    std::memcpy(&physical[p * win], x.raw_data() + in_order[p] * win, static_cast<size_t>(win));
  }
  std::vector<int64_t> out_order = PhysicalToLogical(out_shape);
  for (size_t p = 0; p < out_order.size(); ++p) {
    std::memcpy(result.mutable_raw_data() + out_order[p] * wout, &physical[p * wout], static_cast<size_t>(wout));
  }
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kBroadcast:
      return Broadcast(inst, *operands[0]);
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kSetDimensionSize:
      // A tuple copy copies its leaves (Reshaped only moves array data).
      if (inst.opcode() == Opcode::kCopy && inst.shape().IsTuple()) return *operands[0];
      // The result's byte size (Literal::CreateUninitialized's), without building a zero-filled literal for it.
      if (operands[0]->byte_size() != (inst.shape().IsArray() ? inst.shape().ByteSizeOf().value_or(-1) : 0)) {
        return Error(inst, "element count changes from {}", operands[0]->element_count());
      }
      return Reshaped(*operands[0], inst.shape());
    case Opcode::kDynamicReshape: {
      Literal result(inst.shape());
      if (result.byte_size() != operands[0]->byte_size()) {
        return Unsupported(inst, "dynamic-reshape that changes the element count (runtime sizes are not tracked)");
      }
      return Reshaped(*operands[0], inst.shape());
    }
    case Opcode::kTranspose:
      return Transpose(inst, *operands[0]);
    case Opcode::kReverse:
      return Reverse(inst, *operands[0]);
    case Opcode::kSlice:
      return Slice(inst, *operands[0]);
    case Opcode::kDynamicSlice:
      return DynamicSlice(inst, operands);
    case Opcode::kDynamicUpdateSlice:
      return DynamicUpdateSlice(inst, operands);
    case Opcode::kConcatenate:
      return Concatenate(inst, operands);
    case Opcode::kPad:
      return Pad(inst, *operands[0], *operands[1]);
    case Opcode::kIota:
      return Iota(inst);
    case Opcode::kBitcast:
      return Bitcast(inst, *operands[0]);
    case Opcode::kGetDimensionSize: {
      const std::vector<int64_t>& dims = IntList(inst, "dimensions");
      if (dims.size() != 1) return Error(inst, "expected one dimension");
      // Runtime sizes of dynamic dimensions are not tracked: values always fill their bounds.
      return ScalarS64(inst.shape().element_type, operands[0]->shape().dimensions.at(static_cast<size_t>(dims[0])));
    }
    default:
      return Unsupported(inst, "not a data movement op");
  }
}

}  // namespace xlac::interp
