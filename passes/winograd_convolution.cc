#include "passes/winograd_convolution.h"

#include <algorithm>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/shape_inference.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "ir/winograd.h"

namespace xlac {
namespace {

using Matrix = std::vector<std::vector<double>>;

class Builder {
 public:
  Builder(Module& module, Computation& comp, const Instruction& conv) : module_(module), comp_(comp), conv_(conv) {}

  absl::StatusOr<Instruction*> Add(Opcode opcode, std::vector<Instruction*> operands,
                                   std::vector<std::pair<std::string, AttrValue>> attrs) {
    auto inst = Instruction::Create(opcode, module_.UniqueInstructionName(OpcodeName(opcode)),
                                    Shape::Scalar(PrimitiveType::kF32), std::move(operands));
    for (auto& [name, value] : attrs) inst->SetAttr(std::move(name), std::move(value));
    XLAC_ASSIGN_OR_RETURN(Shape shape, InferShape(*inst));
    shape.EnsureLayout();
    inst->set_shape(std::move(shape));
    *inst->mutable_metadata() = conv_.metadata();
    inst->set_loc(conv_.loc());
    return comp_.AddInstruction(std::move(inst));
  }

  Instruction* Constant(const std::vector<int64_t>& dims, const std::vector<double>& values) {
    Shape shape = Shape::Array(PrimitiveType::kF32, dims);
    shape.EnsureLayout();
    Literal literal(shape);
    for (size_t i = 0; i < values.size(); ++i) {
      literal.Set<float>(static_cast<int64_t>(i), static_cast<float>(values[i]));
    }
    auto inst = Instruction::CreateConstant(module_.UniqueInstructionName("constant"), std::move(literal));
    inst->set_loc(conv_.loc());
    return comp_.AddInstruction(std::move(inst));
  }
  // M as [rows, cols], or replicated `copies` times as [copies, rows, cols] (the batched form of a dot).
  Instruction* MatrixConstant(const Matrix& m, int64_t copies = 0) {
    std::vector<double> values;
    for (int64_t c = 0; c < std::max<int64_t>(copies, 1); ++c) {
      for (const auto& row : m) values.insert(values.end(), row.begin(), row.end());
    }
    std::vector<int64_t> dims = {static_cast<int64_t>(m.size()), static_cast<int64_t>(m[0].size())};
    if (copies > 0) dims.insert(dims.begin(), copies);
    return Constant(dims, values);
  }

  // A Winograd custom call (ir/winograd.h) of `target` on `operands`, with the convolution's window and dim_labels.
  absl::StatusOr<Instruction*> WinogradCall(std::string_view target, std::vector<Instruction*> operands, Shape shape) {
    shape.EnsureLayout();
    const std::string_view name = target == kWinogradInputTarget    ? "winograd_input"
                                  : target == kWinogradOutputTarget ? "winograd_output"
                                                                    : "winograd_conv";
    auto inst = Instruction::Create(Opcode::kCustomCall, module_.UniqueInstructionName(std::string(name)),
                                    std::move(shape), std::move(operands));
    inst->SetAttr("custom_call_target", AttrValue::String(std::string(target)));
    inst->SetAttr("window", *conv_.FindAttr("window"));
    inst->SetAttr("dim_labels", *conv_.FindAttr("dim_labels"));
    *inst->mutable_metadata() = conv_.metadata();
    inst->set_loc(conv_.loc());
    XLAC_RETURN_IF_ERROR(CheckWinogradCall(*inst));
    return comp_.AddInstruction(std::move(inst));
  }

  absl::StatusOr<Instruction*> Reshape(Instruction* x, std::vector<int64_t> dims) {
    auto inst = Instruction::Create(Opcode::kReshape, module_.UniqueInstructionName("reshape"),
                                    Shape::Array(x->shape().element_type, std::move(dims)), {x});
    inst->mutable_shape()->EnsureLayout();
    *inst->mutable_metadata() = conv_.metadata();
    inst->set_loc(conv_.loc());
    return comp_.AddInstruction(std::move(inst));
  }
  absl::StatusOr<Instruction*> Broadcast(Instruction* x, std::vector<int64_t> dims, std::vector<int64_t> mapping) {
    auto inst = Instruction::Create(Opcode::kBroadcast, module_.UniqueInstructionName("broadcast"),
                                    Shape::Array(x->shape().element_type, std::move(dims)), {x});
    inst->mutable_shape()->EnsureLayout();
    inst->SetAttr("dimensions", AttrValue::IntList(std::move(mapping)));
    inst->set_loc(conv_.loc());
    return comp_.AddInstruction(std::move(inst));
  }
  absl::StatusOr<Instruction*> Transpose(Instruction* x, std::vector<int64_t> perm) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<int64_t>(i);
    if (identity) return x;
    return Add(Opcode::kTranspose, {x}, {{"dimensions", AttrValue::IntList(std::move(perm))}});
  }
  // dot(a, b) with the given batch and contracting dimensions.
  absl::StatusOr<Instruction*> Dot(Instruction* a, Instruction* b, std::vector<int64_t> batch, int64_t a_contract,
                                   int64_t b_contract, std::vector<int64_t> b_batch = {}) {
    if (b_batch.empty()) b_batch = batch;
    std::vector<std::pair<std::string, AttrValue>> attrs = {{"lhs_contracting_dims", AttrValue::IntList({a_contract})},
                                                            {"rhs_contracting_dims", AttrValue::IntList({b_contract})}};
    if (!batch.empty()) {
      attrs.push_back({"lhs_batch_dims", AttrValue::IntList(batch)});
      attrs.push_back({"rhs_batch_dims", AttrValue::IntList(b_batch)});
    }
    return Add(Opcode::kDot, {a, b}, std::move(attrs));
  }
  // The separable transform M x M^T of the two leading dimensions of x: x is [k, k, rest...] (any k), M is
  // [rows, k]; the result is [rows, rows, rest...]. Two GEMMs: M [rows, k] x [k, k * rest] (contracting the first
  // dimension), then, batched over its rows, M [rows, k] x [k, rest] (contracting the second).
  absl::StatusOr<Instruction*> Separable(Instruction* x, const Matrix& m) {
    std::vector<int64_t> dims = x->shape().dimensions;
    int64_t rows = static_cast<int64_t>(m.size()), k = dims[0], rest = 1;
    for (size_t i = 2; i < dims.size(); ++i) rest *= dims[i];
    XLAC_ASSIGN_OR_RETURN(Instruction * flat, Reshape(x, {k, k * rest}));
    XLAC_ASSIGN_OR_RETURN(Instruction * first, Dot(MatrixConstant(m), flat, {}, 1, 0));
    XLAC_ASSIGN_OR_RETURN(Instruction * split, Reshape(first, {rows, k, rest}));
    XLAC_ASSIGN_OR_RETURN(Instruction * second, Dot(MatrixConstant(m, rows), split, {0}, 2, 1));
    std::vector<int64_t> out = {rows, rows};
    out.insert(out.end(), dims.begin() + 2, dims.end());
    return Reshape(second, out);
  }

 private:
  Module& module_;
  Computation& comp_;
  const Instruction& conv_;
};

bool Eligible(const Instruction& conv, int64_t m, int64_t min_channels) {
  if (conv.opcode() != Opcode::kConvolution || conv.operand_count() != 2) return false;
  const Shape& out = conv.shape();
  const Shape& lhs = conv.operand(0)->shape();
  const Shape& rhs = conv.operand(1)->shape();
  for (const Shape* s : {&out, &lhs, &rhs}) {
    if (!s->IsArray() || s->element_type != PrimitiveType::kF32 || s->rank() != 4 || !s->IsStatic()) return false;
  }
  if (conv.IntAttr("feature_group_count", 1) != 1 || conv.IntAttr("batch_group_count", 1) != 1) return false;
  if (conv.FindAttr("operand_precision") != nullptr || conv.FindAttr("algorithm") != nullptr) return false;
  if (!conv.control_predecessors().empty() || !conv.control_successors().empty()) return false;
  const AttrValue* window = conv.FindAttr("window");
  const AttrValue* labels = conv.FindAttr("dim_labels");
  if (window == nullptr || labels == nullptr) return false;
  const auto& w = window->get<Window>();
  const auto& dn = labels->get<ConvolutionDimensionNumbers>();
  if (w.dimensions.size() != 2) return false;
  for (size_t i = 0; i < 2; ++i) {
    const WindowDimension& d = w.dimensions[i];
    if (d.size != 3 || d.stride != 1 || d.window_dilation != 1 || d.base_dilation != 1 || d.window_reversal ||
        d.padding_low < 0 || d.padding_high < 0 || out.dimensions[dn.output_spatial_dimensions[i]] < m) {
      return false;
    }
  }
  return lhs.dimensions[dn.input_feature_dimension] >= min_channels &&
         rhs.dimensions[dn.kernel_output_feature_dimension] >= min_channels;
}

// The filter transform U = G g G^T of the convolution's kernel: [n, n, K, C], or [n, n, C, K] with
// `input_features_first`.
absl::StatusOr<Instruction*> FilterTransform(Builder& b, const Instruction& conv, const WinogradMatrices& t,
                                             bool input_features_first = false) {
  const auto& dn = conv.FindAttr("dim_labels")->get<ConvolutionDimensionNumbers>();
  int64_t first = dn.kernel_output_feature_dimension, second = dn.kernel_input_feature_dimension;
  if (input_features_first) std::swap(first, second);
  XLAC_ASSIGN_OR_RETURN(
      Instruction * g,
      b.Transpose(conv.operand(1), {dn.kernel_spatial_dimensions[0], dn.kernel_spatial_dimensions[1], first, second}));
  return b.Separable(g, t.g);
}

// Whether the fused call beats the transforms around a batched dot (measured on one core and two, Zen 5,
// f32[N, C, S, S] -> K = C, padding 1, fused / separate ms): its kernel keeps two tile rows' transformed tiles in
// cache, one vector of 16 tiles per tile row (lanes past the row's tiles idle), and reads all of U for every pair of
// tile rows: C = 32 at 56 x 56 1.2 / 2.1 (one core), C = 64 at 60 4.5 / 7.1, at 112 4.3 / 5.7, C = 128 at 56
// 16.4 / 17.5 and 10.6 / 11.1 (two threads); but C = 256 at 56 (U 9 MiB, beyond the core's L2 and shared L3
// bandwidth) 31 / 29 and 27-30 / 19-21, and at 28 x 28 (7 of 16 lanes busy) the first kernel took 10.2 / 5.6.
bool FusedWinogradPays(int64_t channels, int64_t features, int64_t tiles_per_row) {
  const int64_t lanes = (tiles_per_row + 15) / 16 * 16;
  return 36 * channels * features * 4 <= (int64_t{5} << 19) && 4 * tiles_per_row >= 3 * lanes;
}

// The kernel form. F(4x4) where FusedWinogradPays (the runtime's vector code): one "xlac.winograd_conv" call on x and
// U as [n*n, C, K]. Otherwise: the built-in transforms of ir/winograd.h around one dot batched over the n^2
// transform points, [K, C] x [C, N * T0 * T1] each.
absl::StatusOr<Instruction*> RewriteWithKernels(Module& module, Computation& comp, Instruction& conv, int64_t m) {
  Builder b(module, comp, conv);
  const WinogradMatrices t = MakeWinogradMatrices(m);
  const int64_t n = m + 2;
  const auto& dn = conv.FindAttr("dim_labels")->get<ConvolutionDimensionNumbers>();
  const std::vector<int64_t>& in_dims = conv.operand(0)->shape().dimensions;
  const std::vector<int64_t>& out_dims = conv.shape().dimensions;
  const int64_t batch = in_dims[dn.input_batch_dimension], channels = in_dims[dn.input_feature_dimension];
  const int64_t features = out_dims[dn.output_feature_dimension];
  const int64_t tiles_per_row = (out_dims[dn.output_spatial_dimensions[1]] + m - 1) / m;
  if (m == 4 && FusedWinogradPays(channels, features, tiles_per_row)) {
    XLAC_ASSIGN_OR_RETURN(Instruction * u_full, FilterTransform(b, conv, t, /*input_features_first=*/true));
    XLAC_ASSIGN_OR_RETURN(Instruction * u, b.Reshape(u_full, {n * n, channels, features}));
    return b.WinogradCall(kWinogradConvTarget, {conv.operand(0), u}, conv.shape());
  }
  int64_t tile_count = batch;
  for (int i = 0; i < 2; ++i) tile_count *= (out_dims[dn.output_spatial_dimensions[i]] + m - 1) / m;
  XLAC_ASSIGN_OR_RETURN(Instruction * v,
                        b.WinogradCall(kWinogradInputTarget, {conv.operand(0)},
                                       Shape::Array(PrimitiveType::kF32, {n * n, channels, tile_count})));
  XLAC_ASSIGN_OR_RETURN(Instruction * u_full, FilterTransform(b, conv, t));
  XLAC_ASSIGN_OR_RETURN(Instruction * u, b.Reshape(u_full, {n * n, features, channels}));
  XLAC_ASSIGN_OR_RETURN(Instruction * product, b.Dot(u, v, {0}, 2, 1));  // [n * n, K, N * T0 * T1]
  return b.WinogradCall(kWinogradOutputTarget, {product}, conv.shape());
}

// The pure-HLO form, which the SPMD partitioner can shard like any other ops.
absl::StatusOr<Instruction*> Rewrite(Module& module, Computation& comp, Instruction& conv, int64_t m) {
  Builder b(module, comp, conv);
  const WinogradMatrices t = MakeWinogradMatrices(m);
  const int64_t n = m + 2;
  const auto& w = conv.FindAttr("window")->get<Window>();
  const auto& dn = conv.FindAttr("dim_labels")->get<ConvolutionDimensionNumbers>();
  const std::vector<int64_t>& in_dims = conv.operand(0)->shape().dimensions;
  const std::vector<int64_t>& out_dims = conv.shape().dimensions;
  const int64_t batch = in_dims[dn.input_batch_dimension], channels = in_dims[dn.input_feature_dimension];
  const int64_t features = out_dims[dn.output_feature_dimension];
  int64_t tiles[2], out_size[2];
  for (int i = 0; i < 2; ++i) {
    out_size[i] = out_dims[dn.output_spatial_dimensions[i]];
    tiles[i] = (out_size[i] + m - 1) / m;
  }

  // Input: [N, C, H, W] as N * C one-channel images [N * C, 1, H, W]. V = B^T d B of every tile is separable: two
  // convolutions with constant kernels, B^T's rows as n output features, window n at stride m along H, then along
  // W (the tiled convolution's implicit im2col reads the overlapping tiles and the padding in place):
  // [N * C, n, T0, m T1 + 2]; its rows then form one image [1, 1, N * C * n * T0, m T1 + 2] (the second
  // convolution is then one GEMM over all of them, not one tiny GEMM per image): [1, n, N * C * n * T0, T1], seen
  // as V [n (b), N, C, n (a), T0 * T1].
  XLAC_ASSIGN_OR_RETURN(Instruction * x,
                        b.Transpose(conv.operand(0), {dn.input_batch_dimension, dn.input_feature_dimension,
                                                      dn.input_spatial_dimensions[0], dn.input_spatial_dimensions[1]}));
  XLAC_ASSIGN_OR_RETURN(Instruction * images,
                        b.Reshape(x, {batch * channels, 1, in_dims[dn.input_spatial_dimensions[0]],
                                      in_dims[dn.input_spatial_dimensions[1]]}));
  ConvolutionDimensionNumbers nchw;
  nchw.input_batch_dimension = 0;
  nchw.input_feature_dimension = 1;
  nchw.input_spatial_dimensions = {2, 3};
  nchw.kernel_output_feature_dimension = 0;
  nchw.kernel_input_feature_dimension = 1;
  nchw.kernel_spatial_dimensions = {2, 3};
  nchw.output_batch_dimension = 0;
  nchw.output_feature_dimension = 1;
  nchw.output_spatial_dimensions = {2, 3};
  // B^T along spatial dimension `dim` of [images, 1, H, W]: window n at stride m, n output features.
  // The other dimension (window 1) is padded by other_low and other_high.
  auto transform = [&](Instruction* images, int dim, int64_t pad_low, int64_t pad_high, int64_t other_low,
                       int64_t other_high) {
    std::vector<double> kernel_values;
    for (int64_t a = 0; a < n; ++a) kernel_values.insert(kernel_values.end(), t.bt[a].begin(), t.bt[a].end());
    std::vector<int64_t> kernel_dims = {n, 1, 1, 1};
    kernel_dims[2 + dim] = n;
    Window window;
    window.dimensions.resize(2);
    window.dimensions[dim].size = n;
    window.dimensions[dim].stride = m;
    window.dimensions[dim].padding_low = pad_low;
    window.dimensions[dim].padding_high = pad_high;
    window.dimensions[1 - dim].padding_low = other_low;
    window.dimensions[1 - dim].padding_high = other_high;
    return b.Add(Opcode::kConvolution, {images, b.Constant(kernel_dims, kernel_values)},
                 {{"window", AttrValue::Of(std::move(window))}, {"dim_labels", AttrValue::Of(nchw)}});
  };
  int64_t pad_high[2];
  for (int i = 0; i < 2; ++i) {  // m * tiles + 2 rows and columns: >= the convolution's own padding_high
    pad_high[i] = m * tiles[i] + 2 - in_dims[dn.input_spatial_dimensions[i]] - w.dimensions[i].padding_low;
  }
  XLAC_ASSIGN_OR_RETURN(Instruction * rows, transform(images, 0, w.dimensions[0].padding_low, pad_high[0],
                                                      w.dimensions[1].padding_low, pad_high[1]));
  XLAC_ASSIGN_OR_RETURN(Instruction * row_images,
                        b.Reshape(rows, {1, 1, batch * channels * n * tiles[0], m * tiles[1] + 2}));
  XLAC_ASSIGN_OR_RETURN(Instruction * v_conv, transform(row_images, 1, 0, 0, 0, 0));
  XLAC_ASSIGN_OR_RETURN(Instruction * v,
                        b.Reshape(v_conv, {n, batch, channels, n, tiles[0] * tiles[1]}));  // [b, N, C, a, T0 T1]

  // Filter: [3, 3, K, C], U = G g G^T [n, n, K, C], broadcast over the batch: [n, n, N, K, C].
  XLAC_ASSIGN_OR_RETURN(Instruction * u_full, FilterTransform(b, conv, t));
  XLAC_ASSIGN_OR_RETURN(Instruction * u_batch, b.Broadcast(u_full, {n, n, batch, features, channels}, {0, 1, 3, 4}));

  // One GEMM per transform point (a, b) and image: [K, C] x [C, T0 * T1] -> M [n, n, N, K, T0 * T1].
  XLAC_ASSIGN_OR_RETURN(Instruction * product, b.Dot(u_batch, v, {0, 1, 2}, 4, 2, {3, 0, 1}));

  // Y = A^T M A for every tile as one GEMM with kron(A^T, A^T) [m * m, n * n]: [m, m, N, K, T0, T1].
  std::vector<double> kron_a;
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t q = 0; q < m; ++q) {
      for (int64_t a = 0; a < n; ++a) {
        for (int64_t bb = 0; bb < n; ++bb) kron_a.push_back(t.at[r][a] * t.at[q][bb]);
      }
    }
  }
  XLAC_ASSIGN_OR_RETURN(Instruction * flat, b.Reshape(product, {n * n, batch * features * tiles[0] * tiles[1]}));
  XLAC_ASSIGN_OR_RETURN(Instruction * y_flat, b.Dot(b.Constant({m * m, n * n}, kron_a), flat, {}, 1, 0));
  XLAC_ASSIGN_OR_RETURN(Instruction * y, b.Reshape(y_flat, {m, m, batch, features, tiles[0], tiles[1]}));
  XLAC_ASSIGN_OR_RETURN(Instruction * y_tiles, b.Transpose(y, {2, 3, 4, 0, 5, 1}));
  XLAC_ASSIGN_OR_RETURN(Instruction * result, b.Reshape(y_tiles, {batch, features, m * tiles[0], m * tiles[1]}));
  if (m * tiles[0] != out_size[0] || m * tiles[1] != out_size[1]) {
    std::vector<SliceRange> ranges = {{0, batch, 1}, {0, features, 1}, {0, out_size[0], 1}, {0, out_size[1], 1}};
    XLAC_ASSIGN_OR_RETURN(result, b.Add(Opcode::kSlice, {result}, {{"slice", AttrValue::Of(std::move(ranges))}}));
  }
  std::vector<int64_t> to_output(4);
  to_output[dn.output_batch_dimension] = 0;
  to_output[dn.output_feature_dimension] = 1;
  to_output[dn.output_spatial_dimensions[0]] = 2;
  to_output[dn.output_spatial_dimensions[1]] = 3;
  XLAC_ASSIGN_OR_RETURN(result, b.Transpose(result, to_output));
  result->set_shape(conv.shape());  // same dims; the convolution's layout
  return result;
}

// No sharding anywhere and one partition: the partitioner (which would not know how to shard the transforms' custom
// calls) has nothing to do; and the host runs the kernels' vector code.
bool KernelFormAllowed(const Module& module) {
  if (!WinogradTransformKernelsAreFast() || module.config().num_partitions > 1) return false;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->sharding().has_value()) return false;
      if (inst->opcode() == Opcode::kCustomCall) {
        const std::string_view target = inst->StringAttr("custom_call_target");
        if ((IsShardingIdentityTarget(target) && !IsAnnotationIdentityTarget(target)) ||
            IsShardMapBoundaryTarget(target)) {
          return false;
        }
      }
    }
  }
  return true;
}

}  // namespace

bool WinogradTransformKernelsAreFast() {
#if defined(__x86_64__) && (defined(__clang__) || defined(__GNUC__))
  static const bool fast = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") != 0;
  }();
  return fast;
#else
  return false;
#endif
}

absl::StatusOr<bool> RunWinogradConvolution(Module& module, int64_t tile_size, int64_t min_channels,
                                            WinogradForm form) {
  if (tile_size != 2 && tile_size != 4 && tile_size != 6) {
    return absl::InvalidArgumentError("winograd-convolution: the tile size must be 2, 4 or 6");
  }
  const bool kernels = form == WinogradForm::kKernels || (form == WinogradForm::kAuto && KernelFormAllowed(module));
  bool changed = false;
  for (const auto& comp : module.computations()) {
    if (comp->is_fusion_computation()) continue;
    std::vector<Instruction*> targets;
    for (const auto& inst : comp->instructions()) {
      if (Eligible(*inst, tile_size, min_channels)) targets.push_back(inst.get());
    }
    for (Instruction* conv : targets) {
      XLAC_ASSIGN_OR_RETURN(Instruction * result, kernels ? RewriteWithKernels(module, *comp, *conv, tile_size)
                                                          : Rewrite(module, *comp, *conv, tile_size));
      result->set_sharding(conv->sharding());
      conv->ReplaceAllUsesWith(result);
      XLAC_RETURN_IF_ERROR(comp->RemoveInstruction(conv));
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlac
