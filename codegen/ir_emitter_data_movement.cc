// Data movement: broadcast, reshape, copy, transpose, reverse, slice, dynamic-slice, dynamic-update-slice,
// concatenate, pad, iota, bitcast-convert. They move element bits (MoveType) and never compute, so they work for
// every element type, including the ones without arithmetic support.
#include <algorithm>

#include "codegen/ir_emitter_internal.h"

namespace xlac::codegen::internal {
namespace {

// Row-major (logical) linear index of `index` within `dims`, and its inverse.
llvm::Value* RowMajorLinear(llvm::IRBuilder<>& b, const std::vector<int64_t>& dims, const Index& index) {
  llvm::Value* linear = b.getInt64(0);
  for (size_t d = 0; d < dims.size(); ++d) {
    linear = b.CreateAdd(b.CreateMul(linear, b.getInt64(dims[d])), index[d]);
  }
  return linear;
}

Index RowMajorDelinearize(llvm::IRBuilder<>& b, const std::vector<int64_t>& dims, llvm::Value* linear) {
  Index index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = b.CreateURem(linear, b.getInt64(dims[d]));
    linear = b.CreateUDiv(linear, b.getInt64(dims[d]));
  }
  return index;
}

}  // namespace

bool IrEmitter::IsDataMovement(Opcode op) {
  switch (op) {
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kCopy:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kIota:
    case Opcode::kBitcastConvert:
      return true;
    default:
      return false;
  }
}

absl::Status IrEmitter::EmitDataMovement(const Instruction& inst) {
  const Shape& out_shape = inst.shape();
  if (!out_shape.IsArray()) return Unimplemented(inst, "non-array result");
  if (!out_shape.IsStatic()) return Unimplemented(inst, "dynamic dimensions");
  IrArray out = ArrayFor(&inst);
  Opcode op = inst.opcode();
  if (op == Opcode::kIota) {
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, out_shape.element_type));
    int64_t dim = inst.IntAttr("iota_dimension");
    PrimitiveType t = out_shape.element_type;
    ShapeLoop(out_shape, [&](const Index& index) {
      llvm::Value* v = index[dim];
      llvm::Type* ct = ComputeType(t);
      // The interpreter converts the int64 position like an s64 value.
      if (t == PrimitiveType::kPred) {
        v = b_.CreateICmpNE(v, I64(0));
      } else if (IsComplexType(t)) {
        llvm::Type* part = ct->getScalarType();
        v = MakeComplex(b_.CreateSIToFP(v, part), llvm::ConstantFP::get(part, 0.0));
      } else if (ct->isFloatingPointTy()) {
        v = b_.CreateSIToFP(v, ct);
      } else {
        v = b_.CreateTrunc(v, ct);
      }
      StoreCompute(out, index, v);
    });
    return absl::OkStatus();
  }
  IrArray in = ArrayFor(inst.operand(0));
  const Shape& in_shape = in.shape;
  switch (op) {
    case Opcode::kCopy:
    case Opcode::kReshape:
    case Opcode::kBitcastConvert: {
      if (op == Opcode::kBitcastConvert && BitWidth(in_shape.element_type) == BitWidth(out_shape.element_type) &&
          BitWidth(out_shape.element_type) < 8) {
        return EmitSubByteBitcastConvert(inst);
      }
      if (op == Opcode::kBitcastConvert && BitWidth(in_shape.element_type) != BitWidth(out_shape.element_type)) {
        if (ByteWidth(in_shape.element_type) * 8 != BitWidth(in_shape.element_type) ||
            ByteWidth(out_shape.element_type) * 8 != BitWidth(out_shape.element_type) || !HasDefaultLayout(in_shape) ||
            !HasDefaultLayout(out_shape)) {
          return Unimplemented(inst, "bitcast-convert between sub-byte types or non-default layouts");
        }
        // Row-major little-endian storage: the narrower elements are the wider ones' bytes in order.
        MemCopy(out.base, in.base, *out_shape.ByteSizeOf());
        return absl::OkStatus();
      }
      if (op == Opcode::kBitcastConvert && out_shape.element_type == PrimitiveType::kPred) {
        ShapeLoop(out_shape, [&](const Index& index) {
          StoreRaw(out, index, b_.CreateZExt(b_.CreateICmpNE(LoadRaw(in, index), b_.getInt8(0)), b_.getInt8Ty()));
        });
        return absl::OkStatus();
      }
      if (op != Opcode::kReshape || (HasDefaultLayout(in_shape) && HasDefaultLayout(out_shape))) {
        if (op != Opcode::kReshape && LayoutStrides(in_shape) != LayoutStrides(out_shape)) break;
        if (!(out.slice == in.slice)) MemCopy(out.base, in.base, *out_shape.ByteSizeOf());
        return absl::OkStatus();
      }
      // Reshape between non-default layouts: through the logical row-major position.
      ShapeLoop(out_shape, [&](const Index& index) {
        llvm::Value* linear = RowMajorLinear(b_, out_shape.dimensions, index);
        StoreRaw(out, index, LoadRaw(in, RowMajorDelinearize(b_, in_shape.dimensions, linear)));
      });
      return absl::OkStatus();
    }
    default:
      break;
  }
  // Out-of-place copy with a layout change (copy / bitcast-convert of equal width).
  if (op == Opcode::kCopy || op == Opcode::kBitcastConvert) {
    std::vector<int64_t> identity(out_shape.dimensions.size());
    for (size_t d = 0; d < identity.size(); ++d) identity[d] = static_cast<int64_t>(d);
    XLAC_ASSIGN_OR_RETURN(bool tiled, EmitTiledRelayout(inst, in, out, identity));
    if (tiled) return absl::OkStatus();
    ShapeLoop(out_shape, [&](const Index& index) { StoreRaw(out, index, LoadRaw(in, index)); });
    return absl::OkStatus();
  }
  switch (op) {
    case Opcode::kBroadcast: {
      const std::vector<int64_t>& dims = inst.dimensions();
      ShapeLoop(out_shape, [&](const Index& index) {
        Index src;
        if (dims.size() == in_shape.dimensions.size()) {
          for (int64_t d : dims) src.push_back(index[d]);
        } else {
          src.assign(in_shape.dimensions.size(), I64(0));
        }
        StoreRaw(out, index, LoadRaw(in, src));
      });
      return absl::OkStatus();
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& perm = inst.dimensions();
      XLAC_ASSIGN_OR_RETURN(bool tiled, EmitTiledRelayout(inst, in, out, perm));
      if (tiled) return absl::OkStatus();
      ShapeLoop(out_shape, [&](const Index& index) {
        Index src(perm.size());
        for (size_t i = 0; i < perm.size(); ++i) src[perm[i]] = index[i];
        StoreRaw(out, index, LoadRaw(in, src));
      });
      return absl::OkStatus();
    }
    case Opcode::kReverse: {
      const std::vector<int64_t>& dims = inst.dimensions();
      ShapeLoop(out_shape, [&](const Index& index) {
        Index src = index;
        for (int64_t d : dims) src[d] = b_.CreateSub(I64(in_shape.dimensions[d] - 1), index[d]);
        StoreRaw(out, index, LoadRaw(in, src));
      });
      return absl::OkStatus();
    }
    case Opcode::kSlice: {
      const auto& ranges = inst.FindAttr("slice")->get<std::vector<SliceRange>>();
      ShapeLoop(out_shape, [&](const Index& index) {
        Index src(index.size());
        for (size_t d = 0; d < index.size(); ++d) {
          src[d] = b_.CreateAdd(I64(ranges[d].start), b_.CreateMul(index[d], I64(ranges[d].stride)));
        }
        StoreRaw(out, index, LoadRaw(in, src));
      });
      return absl::OkStatus();
    }
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice: {
      bool update = op == Opcode::kDynamicUpdateSlice;
      size_t first = update ? 2 : 1;
      const Shape& window = update ? inst.operand(1)->shape() : out_shape;
      size_t rank = in_shape.dimensions.size();
      bool vector_form = static_cast<size_t>(inst.operand_count()) == first + 1 &&
                         inst.operand(first)->shape().dimensions.size() == 1 && rank != 1;
      // Start indices clamped so the window stays inside the operand (unsigned values saturate to int64 max).
      Index starts(rank);
      for (size_t d = 0; d < rank; ++d) {
        const Instruction* operand = vector_form ? inst.operand(first) : inst.operand(first + d);
        IrArray idx = ArrayFor(operand);
        PrimitiveType t = idx.shape.element_type;
        if (!IsIntegralType(t) || !HasComputeType(t)) return Unimplemented(inst, "start index type");
        llvm::Value* v = LoadCompute(idx, vector_form ? Index{I64(static_cast<int64_t>(d))} : Index{});
        if (IsSignedIntegralType(t)) {
          v = b_.CreateSExt(v, b_.getInt64Ty());
        } else {
          v = b_.CreateZExt(v, b_.getInt64Ty());
          if (BitWidth(t) == 64) v = b_.CreateSelect(b_.CreateICmpSLT(v, I64(0)), I64(INT64_MAX), v);
        }
        int64_t max_start = std::max<int64_t>(in_shape.dimensions[d] - window.dimensions[d], 0);
        v = b_.CreateSelect(b_.CreateICmpSLT(v, I64(0)), I64(0), v);
        starts[d] = b_.CreateSelect(b_.CreateICmpSGT(v, I64(max_start)), I64(max_start), v);
      }
      if (!update) {
        ShapeLoop(out_shape, [&](const Index& index) {
          Index src(rank);
          for (size_t d = 0; d < rank; ++d) src[d] = b_.CreateAdd(starts[d], index[d]);
          StoreRaw(out, index, LoadRaw(in, src));
        });
        return absl::OkStatus();
      }
      if (!(out.slice == in.slice) || LayoutStrides(in_shape) != LayoutStrides(out_shape)) {
        if (LayoutStrides(in_shape) == LayoutStrides(out_shape)) {
          MemCopy(out.base, in.base, *out_shape.ByteSizeOf());
        } else {
          ShapeLoop(out_shape, [&](const Index& index) { StoreRaw(out, index, LoadRaw(in, index)); });
        }
      }
      IrArray upd = ArrayFor(inst.operand(1));
      ShapeLoop(upd.shape, [&](const Index& index) {
        Index dst(rank);
        for (size_t d = 0; d < rank; ++d) dst[d] = b_.CreateAdd(starts[d], index[d]);
        StoreRaw(out, dst, LoadRaw(upd, index));
      });
      return absl::OkStatus();
    }
    case Opcode::kConcatenate: {
      int64_t dim = inst.dimensions().at(0);
      int64_t offset = 0;
      for (const Instruction* operand : inst.operands()) {
        IrArray src = ArrayFor(operand);
        ShapeLoop(src.shape, [&](const Index& index) {
          Index dst = index;
          dst[dim] = b_.CreateAdd(index[dim], I64(offset));
          StoreRaw(out, dst, LoadRaw(src, index));
        });
        offset += src.shape.dimensions[dim];
      }
      return absl::OkStatus();
    }
    case Opcode::kPad: {
      const PaddingConfig& config = inst.FindAttr("padding")->get<PaddingConfig>();
      IrArray value = ArrayFor(inst.operand(1));
      llvm::Value* pad = LoadRaw(value, {});
      ShapeLoop(out_shape, [&](const Index& index) { StoreRaw(out, index, pad); });
      // Interior padding applies before edge padding, so negative edges cut into the interior-padded operand.
      ShapeLoop(in_shape, [&](const Index& index) {
        Index dst(index.size());
        llvm::Value* inside = b_.getTrue();
        for (size_t d = 0; d < index.size(); ++d) {
          const PaddingDimension& p = config.dimensions[d];
          dst[d] = b_.CreateAdd(I64(p.edge_padding_low), b_.CreateMul(index[d], I64(p.interior_padding + 1)));
          if (p.edge_padding_low < 0 || p.edge_padding_high < 0) {
            inside = b_.CreateAnd(inside, b_.CreateAnd(b_.CreateICmpSGE(dst[d], I64(0)),
                                                       b_.CreateICmpSLT(dst[d], I64(out_shape.dimensions[d]))));
          }
        }
        llvm::BasicBlock* store = llvm::BasicBlock::Create(ctx(), "pad.store", function_);
        llvm::BasicBlock* next = llvm::BasicBlock::Create(ctx(), "pad.next", function_);
        b_.CreateCondBr(inside, store, next);
        b_.SetInsertPoint(store);
        StoreRaw(out, dst, LoadRaw(in, index));
        b_.CreateBr(next);
        b_.SetInsertPoint(next);
      });
      return absl::OkStatus();
    }
    default:
      break;
  }
  return Unimplemented(inst, "no lowering for this opcode yet");
}

// Walking the output in memory order reads the input with a large stride: every element comes from another cache
// line (and often another page), which is evicted before its neighbours are read. Tiles of kRelayoutTile x
// kRelayoutTile over the two minor dimensions touch kRelayoutTile lines on each side, all of them used whole while
// in L1. Tiles run in parallel; the other dimensions stay outermost in the output's memory order.
absl::StatusOr<bool> IrEmitter::EmitTiledRelayout(const Instruction& inst, const IrArray& in, const IrArray& out,
                                                  const std::vector<int64_t>& in_dim_of) {
  constexpr int64_t kRelayoutTile = 32;
  const std::vector<int64_t>& dims = out.shape.dimensions;
  // In a kernel of the entry (where the device context is at hand), the runtime's relayout does the same tiled
  // walk with nothing to compile: a CNN's training step has a hundred of these copies, each a few thousand
  // instructions of unrolled loops and gathers when emitted here.
  const int64_t bytes = ByteWidth(out.shape.element_type);
  if (function_ == entry_function_ && !row_ && in_dim_of.size() == dims.size() &&
      ByteWidth(in.shape.element_type) == bytes &&
      (bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16)) {
    std::vector<int64_t> src_strides(dims.size());
    for (size_t d = 0; d < dims.size(); ++d) src_strides[d] = in.strides[in_dim_of[d]];
    llvm::Type* ptr = b_.getPtrTy();
    llvm::Type* i64 = b_.getInt64Ty();
    llvm::FunctionCallee relayout = llvm_module_.getOrInsertFunction(
        "xlac_rt_relayout", llvm::FunctionType::get(b_.getInt32Ty(), {ptr, ptr, ptr, i64, i64, ptr, ptr, ptr}, false));
    llvm::Value* dev = options_.parallel ? static_cast<llvm::Value*>(entry_function_->getArg(1))
                                         : llvm::ConstantPointerNull::get(b_.getPtrTy());
    b_.CreateCall(relayout, {dev, in.base, out.base, I64(bytes), I64(static_cast<int64_t>(dims.size())),
                             ConstantI64Array(dims, inst.name() + ".dims"),
                             ConstantI64Array(src_strides, inst.name() + ".src_strides"),
                             ConstantI64Array(out.strides, inst.name() + ".dst_strides")});
    return true;
  }
  auto minor = [](const Shape& shape) -> int64_t {
    std::vector<int64_t> order = MajorToMinor(shape);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (shape.dimensions[*it] != 1) return *it;
    }
    return -1;
  };
  const int64_t b = minor(out.shape), in_minor = minor(in.shape);
  if (b < 0 || in_minor < 0 || in_dim_of.size() != dims.size()) return false;
  int64_t a = -1;
  for (size_t d = 0; d < in_dim_of.size(); ++d) {
    if (in_dim_of[d] == in_minor) a = static_cast<int64_t>(d);
  }
  if (a < 0 || a == b || dims[a] < kRelayoutTile / 2 || dims[b] < kRelayoutTile / 2) return false;
  int64_t elements = 1;
  for (int64_t d : dims) elements *= d;
  std::vector<int64_t> tiles = dims;
  tiles[a] = (dims[a] + kRelayoutTile - 1) / kRelayoutTile;
  tiles[b] = (dims[b] + kRelayoutTile - 1) / kRelayoutTile;
  std::vector<int64_t> order;
  for (int64_t d : MajorToMinor(out.shape)) {
    if (d != a && d != b) order.push_back(d);
  }
  order.push_back(b);
  order.push_back(a);
  auto range = [&](llvm::Value* tile, int64_t d) {
    llvm::Value* begin = b_.CreateNSWMul(tile, I64(kRelayoutTile));
    llvm::Value* end = b_.CreateNSWAdd(begin, I64(kRelayoutTile));
    return std::pair{begin, b_.CreateSelect(b_.CreateICmpSLT(end, I64(dims[d])), end, I64(dims[d]))};
  };
  // Scalar inner loops: vectorizing one side of a transpose turns the other into gathers or scatters, which cost
  // more per element than scalar moves on the CPUs we target.
  auto move_tile = [&](const Index& tile) {
    auto [b0, b1] = range(tile[b], b);
    auto [a0, a1] = range(tile[a], a);
    ForRange(
        b0, b1,
        [&](llvm::Value* j) {
          ForRange(
              a0, a1,
              [&](llvm::Value* i) {
                Index index = tile;
                index[a] = i;
                index[b] = j;
                Index src(index.size());
                for (size_t d = 0; d < index.size(); ++d) src[in_dim_of[d]] = index[d];
                StoreRaw(out, index, LoadRaw(in, src));
              },
              /*vectorize=*/false);
        },
        /*vectorize=*/false);
  };
  XLAC_RETURN_IF_ERROR(
      ParallelLoopNest(tiles, order, std::vector<bool>(dims.size(), true), elements, inst.name(), move_tile));
  return true;
}

}  // namespace xlac::codegen::internal
