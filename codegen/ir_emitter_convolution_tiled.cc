// f32/f64/bf16/f16 convolution through the packed, register-tiled GEMM (ir_emitter_gemm.cc), as an implicit im2col: the
// GEMM's packers read the convolution's operands directly, so no im2col matrix is ever materialized.
//
// Per feature group, out[pos, co] = sum over k of X[pos, k] * W[k, co], where pos enumerates output positions,
// k = (window position in row-major order, input feature) and X[pos, k] is the input element the window tap reads.
// That is exactly the interpreter's accumulation order (window positions, then input features) for every output
// element, from +0: in exact mode each product rounded then added, in the default mode one fused multiply-add per
// product (ir_emitter_gemm.h states the bound). Two output layouts map onto the GEMM's contiguous C rows:
//   - feature dimension most minor (NHWC-like): C = out with rows = the other output dimensions in layout order;
//   - batch and feature dimensions most major (NCHW-like): per batch element, C^T = W^T X^T with C's rows the output
//     features and its columns the spatial positions.
// bf16/f16 operands widen to f32 as they are packed and the f32 sums round once into the output, which is the
// interpreter's narrow-float convolution. Other layouts, batch groups, mixed operand types and other element types
// keep the loop nest (ir_emitter_convolution.cc).
//
// Taps that fall into padding or base-dilation holes pack as +0, where the interpreter skips them. Adding w * 0
// (rounded or fused) is exact for finite w: the accumulator starts at +0 and so is never -0 (x + y is -0 only when both
// are -0), hence acc + (+-0) == acc bit for bit. An inf or NaN weight would turn the skipped product into NaN, so
// convolutions that can have such taps check the kernel at run time and take the loop nest when any weight is not
// finite.
#include <algorithm>

#include "codegen/ir_emitter_gemm.h"
#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"

namespace xlac::codegen::internal {
namespace {

// Whether every tap of every output position of this window dimension reads an operand element (mirrors the
// static check of EmitWindowTap).
bool TapsAlwaysValid(const WindowDimension& wd, int64_t operand_size, int64_t output_size) {
  int64_t max_x = (output_size - 1) * wd.stride - wd.padding_low + (wd.size - 1) * wd.window_dilation;
  return wd.base_dilation == 1 && wd.padding_low <= 0 && max_x < operand_size;
}

// Row-major coordinates of `index` over `sizes` (constant divisors: multiply-shift, no division instruction).
std::vector<llvm::Value*> Decode(llvm::IRBuilder<>& b, llvm::Value* index, const std::vector<int64_t>& sizes) {
  std::vector<llvm::Value*> coords(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    if (i == 0) {
      coords[i] = index;
    } else {
      coords[i] = b.CreateURem(index, b.getInt64(sizes[i]));
      index = b.CreateUDiv(index, b.getInt64(sizes[i]));
    }
  }
  return coords;
}

}  // namespace

absl::Status IrEmitter::EmitConvolution(const Instruction& inst) {
  if (options_.tiled_convolution) {
    XLAC_ASSIGN_OR_RETURN(bool emitted, EmitTiledConvolution(inst));
    if (emitted) return absl::OkStatus();
  }
  return EmitConvolutionLoops(inst);
}

absl::StatusOr<bool> IrEmitter::EmitTiledConvolution(const Instruction& inst) {
  const AttrValue* dn_attr = inst.FindAttr("dim_labels");
  if (inst.operand_count() != 2 || dn_attr == nullptr || dn_attr->kind != AttrKind::kConvDnums) return false;
  const ConvolutionDimensionNumbers& dn = dn_attr->get<ConvolutionDimensionNumbers>();
  PrimitiveType type = inst.shape().element_type;
  IrArray lhs = ArrayFor(inst.operand(0)), rhs = ArrayFor(inst.operand(1)), out = ArrayFor(&inst);
  const bool narrow = type == PrimitiveType::kBF16 || type == PrimitiveType::kF16;
  if ((type != PrimitiveType::kF32 && type != PrimitiveType::kF64 && !narrow) || lhs.shape.element_type != type ||
      rhs.shape.element_type != type || inst.IntAttr("batch_group_count", 1) != 1) {
    return false;
  }
  const size_t spatial = dn.input_spatial_dimensions.size();
  Window window;
  if (const AttrValue* w = inst.FindAttr("window"); w != nullptr && w->kind == AttrKind::kWindow) {
    window = w->get<Window>();
  }
  if (window.dimensions.empty()) window.dimensions.resize(spatial);
  if (window.dimensions.size() != spatial) return false;
  const std::vector<int64_t>& ld = lhs.shape.dimensions;
  const std::vector<int64_t>& rd = rhs.shape.dimensions;
  const std::vector<int64_t>& od = out.shape.dimensions;
  const int64_t groups = inst.IntAttr("feature_group_count", 1);
  const int64_t input_z = ld[dn.input_feature_dimension], output_z = rd[dn.kernel_output_feature_dimension];
  if (groups < 1 || input_z % groups != 0 || output_z % groups != 0) return false;
  const int64_t in_group = input_z / groups, out_group = output_z / groups;
  std::vector<int64_t> window_sizes(spatial);
  int64_t window_positions = 1;
  bool taps_valid = true;
  for (size_t s = 0; s < spatial; ++s) {
    const WindowDimension& wd = window.dimensions[s];
    if (wd.size != rd[dn.kernel_spatial_dimensions[s]] || wd.stride < 1 || wd.base_dilation < 1 ||
        wd.window_dilation < 1) {
      return false;
    }
    window_sizes[s] = wd.size;
    window_positions *= wd.size;
    taps_valid =
        taps_valid && TapsAlwaysValid(wd, ld[dn.input_spatial_dimensions[s]], od[dn.output_spatial_dimensions[s]]);
  }
  const int64_t k = window_positions * in_group;
  if (k == 0 || out_group == 0 || std::any_of(od.begin(), od.end(), [](int64_t d) { return d == 0; })) return false;

  // Output positions: the GEMM rows (direct) or columns (transposed), in layout order so that C is contiguous.
  std::vector<int64_t> order = MajorToMinor(out.shape);
  const int64_t out_batch = dn.output_batch_dimension, out_feature = dn.output_feature_dimension;
  bool direct = order.back() == out_feature;
  bool transposed =
      !direct && order.size() >= 2 &&
      ((order[0] == out_batch && order[1] == out_feature) || (order[0] == out_feature && order[1] == out_batch));
  // The register tile spans 8 rows and two vectors of columns: too few output features per group (depthwise
  // convolutions) would leave most of it idle, and the loop nest is faster there.
  if (!(direct && out_group >= 8) && !(transposed && out_group >= 4)) return false;
  std::vector<int64_t> position_dims;
  for (int64_t d : order) {
    if (d != out_feature && (direct || d != out_batch)) position_dims.push_back(d);
  }
  std::vector<int64_t> position_sizes;
  int64_t positions = 1;
  for (int64_t d : position_dims) {
    position_sizes.push_back(od[d]);
    positions *= od[d];
  }

  llvm::Type* ct = ComputeType(type);  // f32 for bf16/f16
  const llvm::Align align(ct->getPrimitiveSizeInBits() / 8);
  llvm::Constant* zero = llvm::Constant::getNullValue(ct);
  // An operand element as a compute value: bf16/f16 widen exactly to f32, as the interpreter converts them.
  XLAC_ASSIGN_OR_RETURN(const bool tpu_bf16, TpuRoundsOperands(inst));
  GemmLoad load = narrow     ? WidenedGemmLoad(type == PrimitiveType::kF16)
                  : tpu_bf16 ? Bf16RoundedGemmLoad()
                             : NativeGemmLoad(ct);
  std::vector<int64_t> spatial_of_dim(od.size(), -1);
  for (size_t s = 0; s < spatial; ++s) spatial_of_dim[dn.output_spatial_dimensions[s]] = static_cast<int64_t>(s);
  const std::vector<int64_t> ls = lhs.strides, rs = rhs.strides;
  const int64_t batch_count = direct ? 1 : od[out_batch];

  // The GEMM's batch argument: the feature group (direct) or batch element * groups + group (transposed).
  auto split_batch = [=](llvm::IRBuilder<>& b, llvm::Value* arg) {
    if (direct) return std::pair<llvm::Value*, llvm::Value*>{nullptr, arg};
    return std::pair<llvm::Value*, llvm::Value*>{b.CreateUDiv(arg, b.getInt64(groups)),
                                                 b.CreateURem(arg, b.getInt64(groups))};
  };
  // X[pos, k]: the input element under window tap k of output position pos, +0 in padding and dilation holes.
  GemmPacker pack_input_scalar = [=](llvm::IRBuilder<>& b, llvm::Value* input, llvm::Value* arg, llvm::Value* i0,
                                     llvm::Value* count, llvm::Value* k0, llvm::Value* kc, llvm::Value* dst,
                                     int64_t width) {
    auto [batch, group] = split_batch(b, arg);
    auto store = [&](llvm::Value* kk, llvm::Value* r, llvm::Value* v) {
      b.CreateAlignedStore(v, b.CreateInBoundsGEP(ct, dst, b.CreateNSWAdd(b.CreateNSWMul(kk, b.getInt64(width)), r)),
                           align);
    };
    GemmLoop(
        b, b.getInt64(0), b.getInt64(width), 1,
        [&](llvm::Value* r) {
          GemmIf(
              b, b.CreateICmpSLT(r, count),
              [&] {
                std::vector<llvm::Value*> coords = Decode(b, b.CreateNSWAdd(i0, r), position_sizes);
                std::vector<llvm::Value*> o(spatial);
                llvm::Value* n = batch;
                for (size_t i = 0; i < position_dims.size(); ++i) {
                  if (position_dims[i] == out_batch) n = coords[i];
                  if (spatial_of_dim[position_dims[i]] >= 0) o[spatial_of_dim[position_dims[i]]] = coords[i];
                }
                llvm::Value* base =
                    b.CreateNSWAdd(b.CreateNSWMul(n, b.getInt64(ls[dn.input_batch_dimension])),
                                   b.CreateNSWMul(group, b.getInt64(in_group * ls[dn.input_feature_dimension])));
                llvm::Value* p_lo = b.CreateUDiv(k0, b.getInt64(in_group));
                llvm::Value* p_hi = b.CreateNSWAdd(
                    b.CreateUDiv(b.CreateNSWSub(b.CreateNSWAdd(k0, kc), b.getInt64(1)), b.getInt64(in_group)),
                    b.getInt64(1));
                GemmLoop(
                    b, p_lo, p_hi, 1,
                    [&](llvm::Value* p) {
                      std::vector<llvm::Value*> w = Decode(b, p, window_sizes);
                      llvm::Value* offset = base;
                      llvm::Value* valid = nullptr;
                      for (size_t s = 0; s < spatial; ++s) {
                        WindowTap tap = EmitWindowTap(b, window.dimensions[s], ld[dn.input_spatial_dimensions[s]],
                                                      od[dn.output_spatial_dimensions[s]], o[s], w[s]);
                        if (tap.valid != nullptr) valid = valid ? b.CreateAnd(valid, tap.valid) : tap.valid;
                        offset =
                            b.CreateAdd(offset, b.CreateMul(tap.x, b.getInt64(ls[dn.input_spatial_dimensions[s]])));
                      }
                      llvm::Value* first_k = b.CreateNSWMul(p, b.getInt64(in_group));  // k of input feature 0
                      llvm::Value* c_lo =
                          b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateNSWSub(k0, first_k), b.getInt64(0));
                      llvm::Value* c_hi = b.CreateBinaryIntrinsic(
                          llvm::Intrinsic::smin, b.CreateNSWSub(b.CreateNSWAdd(k0, kc), first_k), b.getInt64(in_group));
                      llvm::Value* kk0 = b.CreateNSWSub(first_k, k0);
                      auto features = [&](bool read) {
                        GemmLoop(
                            b, c_lo, c_hi, 1,
                            [&](llvm::Value* z) {
                              llvm::Value* v = zero;
                              if (read) {
                                llvm::Value* at =
                                    b.CreateAdd(offset, b.CreateNSWMul(z, b.getInt64(ls[dn.input_feature_dimension])));
                                v = load(b, input, at);
                              }
                              store(b.CreateNSWAdd(kk0, z), r, v);
                            },
                            read ? "im2col.z" : "im2col.pad");
                      };
                      if (valid == nullptr) {
                        features(true);
                      } else {
                        GemmIf(
                            b, valid, [&] { features(true); }, [&] { features(false); });
                      }
                    },
                    "im2col.p");
              },
              [&] {
                GemmLoop(
                    b, b.getInt64(0), kc, 1, [&](llvm::Value* kk) { store(kk, r, zero); }, "im2col.edge");
              });
        },
        "im2col.r");
  };
  // The same panel, one vector per k, when the panel's positions are consecutive along the innermost output
  // dimension within one row and that dimension reads the input contiguously (stride 1, no base dilation, input
  // stride 1: NCHW-like layouts, where positions are the GEMM's columns). Lane r then reads the input at x0 + r; lanes
  // in the padding are masked off and packed as +0, exactly as the scalar packer does.
  GemmPacker pack_input = pack_input_scalar;
  const int64_t last_dim = position_dims.empty() ? -1 : position_dims.back();
  const int64_t s_last = last_dim < 0 ? -1 : spatial_of_dim[last_dim];
  if (s_last >= 0 && window.dimensions[s_last].stride == 1 && window.dimensions[s_last].base_dilation == 1 &&
      ls[dn.input_spatial_dimensions[s_last]] == 1) {
    const WindowDimension last_wd = window.dimensions[s_last];
    const int64_t last_in = ld[dn.input_spatial_dimensions[s_last]], row = position_sizes.back();
    const bool f16 = type == PrimitiveType::kF16;
    pack_input = [=](llvm::IRBuilder<>& b, llvm::Value* input, llvm::Value* arg, llvm::Value* i0, llvm::Value* count,
                     llvm::Value* k0, llvm::Value* kc, llvm::Value* dst, int64_t width) {
      llvm::Value* in_row =
          b.CreateICmpSLE(b.CreateNSWAdd(b.CreateURem(i0, b.getInt64(row)), b.getInt64(width)), b.getInt64(row));
      GemmIf(
          b, b.CreateAnd(b.CreateICmpEQ(count, b.getInt64(width)), in_row),
          [&] {
            auto [batch, group] = split_batch(b, arg);
            const unsigned lanes = static_cast<unsigned>(width);
            llvm::Type* storage = narrow ? b.getInt16Ty() : ct;
            auto* storage_vector = llvm::FixedVectorType::get(storage, lanes);
            std::vector<llvm::Value*> coords = Decode(b, i0, position_sizes);
            std::vector<llvm::Value*> o(spatial);
            llvm::Value* n = batch;
            for (size_t i = 0; i < position_dims.size(); ++i) {
              if (position_dims[i] == out_batch) n = coords[i];
              if (spatial_of_dim[position_dims[i]] >= 0) o[spatial_of_dim[position_dims[i]]] = coords[i];
            }
            llvm::Value* base =
                b.CreateNSWAdd(b.CreateNSWMul(n, b.getInt64(ls[dn.input_batch_dimension])),
                               b.CreateNSWMul(group, b.getInt64(in_group * ls[dn.input_feature_dimension])));
            std::vector<llvm::Constant*> iota;
            for (unsigned r = 0; r < lanes; ++r) iota.push_back(b.getInt64(r));
            llvm::Value* p_lo = b.CreateUDiv(k0, b.getInt64(in_group));
            llvm::Value* p_hi = b.CreateNSWAdd(
                b.CreateUDiv(b.CreateNSWSub(b.CreateNSWAdd(k0, kc), b.getInt64(1)), b.getInt64(in_group)),
                b.getInt64(1));
            GemmLoop(
                b, p_lo, p_hi, 1,
                [&](llvm::Value* p) {
                  std::vector<llvm::Value*> w = Decode(b, p, window_sizes);
                  llvm::Value* offset = base;
                  llvm::Value* valid = b.getTrue();
                  for (size_t s = 0; s < spatial; ++s) {
                    if (static_cast<int64_t>(s) == s_last) continue;
                    WindowTap tap = EmitWindowTap(b, window.dimensions[s], ld[dn.input_spatial_dimensions[s]],
                                                  od[dn.output_spatial_dimensions[s]], o[s], w[s]);
                    if (tap.valid != nullptr) valid = b.CreateAnd(valid, tap.valid);
                    offset = b.CreateAdd(offset, b.CreateMul(tap.x, b.getInt64(ls[dn.input_spatial_dimensions[s]])));
                  }
                  // Lane 0's input coordinate along the row; lane r reads x0 + r.
                  llvm::Value* x0 = b.CreateNSWSub(
                      b.CreateNSWAdd(o[s_last], b.CreateNSWMul(w[s_last], b.getInt64(last_wd.window_dilation))),
                      b.getInt64(last_wd.padding_low));
                  offset = b.CreateAdd(offset, x0);
                  llvm::Value* xs = b.CreateAdd(b.CreateVectorSplat(lanes, x0), llvm::ConstantVector::get(iota));
                  llvm::Value* mask =
                      b.CreateAnd(b.CreateAnd(b.CreateICmpSGE(xs, llvm::Constant::getNullValue(xs->getType())),
                                              b.CreateICmpSLT(xs, b.CreateVectorSplat(lanes, b.getInt64(last_in)))),
                                  b.CreateVectorSplat(lanes, valid));
                  llvm::Value* first_k = b.CreateNSWMul(p, b.getInt64(in_group));
                  llvm::Value* c_lo =
                      b.CreateBinaryIntrinsic(llvm::Intrinsic::smax, b.CreateNSWSub(k0, first_k), b.getInt64(0));
                  llvm::Value* c_hi = b.CreateBinaryIntrinsic(
                      llvm::Intrinsic::smin, b.CreateNSWSub(b.CreateNSWAdd(k0, kc), first_k), b.getInt64(in_group));
                  llvm::Value* kk0 = b.CreateNSWSub(first_k, k0);
                  GemmLoop(
                      b, c_lo, c_hi, 1,
                      [&](llvm::Value* z) {
                        // Not inbounds: lane 0 may sit before the input when it is masked off.
                        llvm::Value* at = b.CreateGEP(
                            storage, input,
                            b.CreateAdd(offset, b.CreateNSWMul(z, b.getInt64(ls[dn.input_feature_dimension]))));
                        llvm::Value* v =
                            b.CreateMaskedLoad(storage_vector, at, llvm::Align(storage->getPrimitiveSizeInBits() / 8),
                                               mask, llvm::Constant::getNullValue(storage_vector));
                        if (narrow) {
                          auto* float_vector = llvm::FixedVectorType::get(ct, lanes);
                          if (f16) {
                            v = b.CreateFPExt(b.CreateBitCast(v, llvm::FixedVectorType::get(b.getHalfTy(), lanes)),
                                              float_vector);
                          } else {
                            auto* i32_vector = llvm::FixedVectorType::get(b.getInt32Ty(), lanes);
                            v = b.CreateBitCast(
                                b.CreateShl(b.CreateZExt(v, i32_vector), b.CreateVectorSplat(lanes, b.getInt32(16))),
                                float_vector);
                          }
                        } else if (tpu_bf16) {
                          v = EmitRoundToBf16(b, v);
                        }
                        llvm::Value* row_dst =
                            b.CreateInBoundsGEP(ct, dst, b.CreateNSWMul(b.CreateNSWAdd(kk0, z), b.getInt64(width)));
                        b.CreateAlignedStore(v, row_dst, align);
                      },
                      "im2col.row.z");
                },
                "im2col.row.p");
          },
          [&] { pack_input_scalar(b, input, arg, i0, count, k0, kc, dst, width); });
    };
  }
  // W[k, co] read as rows co: the kernel element of window position k / in_group (reversed where asked) and input
  // feature k % in_group, for output feature co of the group.
  GemmPacker pack_kernel = [=](llvm::IRBuilder<>& b, llvm::Value* kernel, llvm::Value* arg, llvm::Value* i0,
                               llvm::Value* count, llvm::Value* k0, llvm::Value* kc, llvm::Value* dst, int64_t width) {
    llvm::Value* group = split_batch(b, arg).second;
    llvm::Value* co_base = b.CreateNSWAdd(b.CreateNSWMul(group, b.getInt64(out_group)), i0);
    GemmLoop(
        b, b.getInt64(0), kc, 1,
        [&](llvm::Value* kk) {
          llvm::Value* kidx = b.CreateNSWAdd(k0, kk);
          std::vector<llvm::Value*> w = Decode(b, b.CreateUDiv(kidx, b.getInt64(in_group)), window_sizes);
          llvm::Value* offset = b.CreateNSWMul(b.CreateURem(kidx, b.getInt64(in_group)),
                                               b.getInt64(rs[dn.kernel_input_feature_dimension]));
          for (size_t s = 0; s < spatial; ++s) {
            llvm::Value* ws = w[s];
            if (window.dimensions[s].window_reversal) ws = b.CreateNSWSub(b.getInt64(window_sizes[s] - 1), ws);
            offset = b.CreateNSWAdd(offset, b.CreateNSWMul(ws, b.getInt64(rs[dn.kernel_spatial_dimensions[s]])));
          }
          llvm::Value* dst_row = b.CreateInBoundsGEP(ct, dst, b.CreateNSWMul(kk, b.getInt64(width)));
          GemmLoop(
              b, b.getInt64(0), b.getInt64(width), 1,
              [&](llvm::Value* r) {
                llvm::Value* inside = b.CreateICmpSLT(r, count);
                llvm::Value* co =
                    b.CreateNSWAdd(co_base, b.CreateSelect(inside, r, b.CreateNSWSub(count, b.getInt64(1))));
                llvm::Value* at =
                    b.CreateNSWAdd(offset, b.CreateNSWMul(co, b.getInt64(rs[dn.kernel_output_feature_dimension])));
                llvm::Value* v = load(b, kernel, at);
                b.CreateAlignedStore(b.CreateSelect(inside, v, zero), b.CreateInBoundsGEP(ct, dst_row, r), align);
              },
              "kernel.co");
        },
        "kernel.k");
  };

  GemmSpec spec;
  spec.element = ct;
  spec.fma = !options_.exact;
  spec.k = k;
  spec.bf16_pairs = spec.fma && options_.target.has_avx512_bf16 && (type == PrimitiveType::kBF16 || tpu_bf16);
  if (direct) {
    spec.m = positions;
    spec.n = out_group;
    spec.c_m = output_z;
    spec.pack_a = pack_input;
    spec.pack_b = pack_kernel;
  } else {
    spec.m = out_group;
    spec.n = positions;
    spec.c_m = out.strides[out_feature];
    spec.pack_a = pack_kernel;
    spec.pack_b = pack_input;
    spec.b_times_a = true;
  }
  llvm::Function* gemm = EmitGemmFunction(llvm_module_, "xlac.conv.gemm." + inst.name(), spec, options_.target);
  absl::Status status;
  auto tiled = [&] {
    // bf16/f16 accumulate in an f32 copy of the output (same layout) and round once at the end.
    int64_t elements = 1;
    for (int64_t d : od) elements *= d;
    llvm::Value* c_base = narrow ? AllocTemp(elements * 4) : out.base;
    // Problem p is (batch element p / groups, group p % groups).
    status = EmitGemmCalls(gemm, spec, "conv.gemm." + inst.name(), batch_count * groups, [&](llvm::Value* p) {
      llvm::Value* bg0 = b_.CreateUDiv(p, I64(groups));
      llvm::Value* bg1 = b_.CreateURem(p, I64(groups));
      llvm::Value* c_off = b_.CreateNSWMul(bg1, I64(out_group * out.strides[out_feature]));
      if (!direct) c_off = b_.CreateNSWAdd(c_off, b_.CreateNSWMul(bg0, I64(out.strides[out_batch])));
      llvm::Value* arg = direct ? bg1 : p;
      llvm::Value* a_ptr = direct ? lhs.base : rhs.base;
      llvm::Value* b_ptr = direct ? rhs.base : lhs.base;
      return GemmOperands{a_ptr, b_ptr, b_.CreateInBoundsGEP(ct, c_base, c_off), arg};
    });
    if (!status.ok()) return;
    if (narrow) {
      ShapeLoop(out.shape, [&](const Index& index) {
        llvm::Value* sum = b_.CreateAlignedLoad(ct, b_.CreateInBoundsGEP(ct, c_base, LinearIndex(out, index)), align);
        StoreCompute(out, index, sum);
      });
      FreeTemp(c_base);
    }
  };
  if (taps_valid) {
    tiled();
    XLAC_RETURN_IF_ERROR(status);
    return true;
  }
  // Some taps are skipped by the interpreter: the packed zeros are only exact for finite weights.
  llvm::BasicBlock& entry_block = b_.GetInsertBlock()->getParent()->getEntryBlock();
  llvm::IRBuilder<> entry(&entry_block, entry_block.begin());
  llvm::AllocaInst* finite = entry.CreateAlloca(b_.getInt1Ty(), nullptr, "conv.finite");
  b_.CreateStore(b_.getTrue(), finite);
  llvm::Value* infinity = llvm::ConstantFP::getInfinity(ct);
  int64_t weights = 1;
  for (int64_t d : rd) weights *= d;
  ForLoop(0, weights, [&](llvm::Value* i) {
    llvm::Value* w = load(b_, rhs.base, i);
    llvm::Value* is_finite = b_.CreateFCmpOLT(b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, w), infinity);
    b_.CreateStore(b_.CreateAnd(b_.CreateLoad(b_.getInt1Ty(), finite), is_finite), finite);
  });
  GemmIf(b_, b_.CreateLoad(b_.getInt1Ty(), finite), tiled, [&] {
    absl::Status loops = EmitConvolutionLoops(inst);
    if (status.ok()) status = loops;
  });
  XLAC_RETURN_IF_ERROR(status);
  return true;
}

}  // namespace xlac::codegen::internal
