// Shape inference for dot, ragged-dot, convolution, fft, the linear-algebra ops and batch norm.
#include <algorithm>
#include <set>

#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"

namespace xlac::shape_inference_internal {
namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
};

// One N:M structured-sparsity descriptor of `sparsity=L.1@2:4_R.0@2:4`.
struct SparsityDescriptor {
  int index = 0;  // 0 = lhs, 1 = rhs
  int64_t dimension = 0;
  int64_t n = 1, m = 1;
};

absl::StatusOr<std::vector<SparsityDescriptor>> ParseSparsity(const Instruction& inst) {
  XLAC_ASSIGN_OR_RETURN(std::optional<std::string> text, OptionalText(inst, "sparsity"));
  std::vector<SparsityDescriptor> result;
  if (!text || text->empty()) return result;
  size_t pos = 0;
  while (pos <= text->size()) {
    size_t end = text->find('_', pos);
    if (end == std::string::npos) end = text->size();
    std::string item = text->substr(pos, end - pos);
    SparsityDescriptor d;
    long long dim = 0, n = 0, m = 0;
    char side = 0;
    int consumed = 0;
    if (std::sscanf(item.c_str(), "%c.%lld@%lld:%lld%n", &side, &dim, &n, &m, &consumed) != 4 ||
        consumed != static_cast<int>(item.size()) || (side != 'L' && side != 'R') || n <= 0 || m <= 0 || n > m) {
      return OpError(inst, "malformed sparsity descriptor '{}'", item);
    }
    d.index = side == 'L' ? 0 : 1;
    d.dimension = dim;
    d.n = n;
    d.m = m;
    result.push_back(d);
    pos = end + 1;
  }
  return result;
}

absl::StatusOr<DotDims> ReadDotDims(const Instruction& inst, const Shape& lhs, const Shape& rhs) {
  DotDims d;
  XLAC_ASSIGN_OR_RETURN(d.lhs_batch, OptionalIntList(inst, "lhs_batch_dims"));
  XLAC_ASSIGN_OR_RETURN(d.rhs_batch, OptionalIntList(inst, "rhs_batch_dims"));
  XLAC_ASSIGN_OR_RETURN(d.lhs_contracting, OptionalIntList(inst, "lhs_contracting_dims"));
  XLAC_ASSIGN_OR_RETURN(d.rhs_contracting, OptionalIntList(inst, "rhs_contracting_dims"));
  struct Item {
    const char* name;
    const std::vector<int64_t>* dims;
    const Shape* shape;
  };
  for (const Item& item : {Item{"lhs_batch_dims", &d.lhs_batch, &lhs}, Item{"rhs_batch_dims", &d.rhs_batch, &rhs},
                           Item{"lhs_contracting_dims", &d.lhs_contracting, &lhs},
                           Item{"rhs_contracting_dims", &d.rhs_contracting, &rhs}}) {
    for (int64_t dim : *item.dims) XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, item.name, dim, item.shape->rank()));
  }
  for (const auto& [batch, contracting, side] :
       {std::tuple{&d.lhs_batch, &d.lhs_contracting, "lhs"}, std::tuple{&d.rhs_batch, &d.rhs_contracting, "rhs"}}) {
    std::set<int64_t> seen;
    for (const std::vector<int64_t>* list : {batch, contracting}) {
      for (int64_t dim : *list) {
        if (!seen.insert(dim).second) return OpError(inst, "{} dimension {} is used more than once", side, dim);
      }
    }
  }
  if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
    return OpError(inst, "lhs and rhs must have the same number of contracting dimensions, got {} and {}",
                   d.lhs_contracting.size(), d.rhs_contracting.size());
  }
  if (d.lhs_batch.size() != d.rhs_batch.size()) {
    return OpError(inst, "lhs and rhs must have the same number of batch dimensions, got {} and {}", d.lhs_batch.size(),
                   d.rhs_batch.size());
  }
  for (size_t i = 0; i < d.lhs_batch.size(); ++i) {
    if (!DimsCompatible(lhs.dimensions[d.lhs_batch[i]], rhs.dimensions[d.rhs_batch[i]])) {
      return OpError(inst, "batch dimension sizes differ: lhs dimension {} of {} vs rhs dimension {} of {}",
                     d.lhs_batch[i], Str(lhs), d.rhs_batch[i], Str(rhs));
    }
  }
  return d;
}

// The result element type: the instruction's own (XLA's preferred_element_type, which lets the text pick a wider or
// mixed-precision result), or the operands' when the text gave no shape and the parser asks for one.
PrimitiveType ResultType(const Instruction& inst, const Shape& lhs, const Shape& rhs) {
  PrimitiveType own = inst.shape().element_type;
  return IsArrayType(own) ? own : HigherPrecisionElementType(lhs, rhs);
}

// Result dims in XLA's order: batch dims, lhs free dims, rhs free dims (minus `rhs_excluded`).
Shape DotResult(PrimitiveType type, const Shape& lhs, const Shape& rhs, const DotDims& d,
                const std::vector<int64_t>& rhs_excluded = {}) {
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t b : d.lhs_batch) {
    dims.push_back(lhs.dimensions[b]);
    dynamic.push_back(lhs.dynamic_dimensions[b]);
  }
  for (int64_t i = 0; i < lhs.rank(); ++i) {
    if (Contains(d.lhs_batch, i) || Contains(d.lhs_contracting, i)) continue;
    dims.push_back(lhs.dimensions[i]);
    dynamic.push_back(lhs.dynamic_dimensions[i]);
  }
  for (int64_t i = 0; i < rhs.rank(); ++i) {
    if (Contains(d.rhs_batch, i) || Contains(d.rhs_contracting, i) || Contains(rhs_excluded, i)) continue;
    dims.push_back(rhs.dimensions[i]);
    dynamic.push_back(rhs.dynamic_dimensions[i]);
  }
  return MakeShape(type, std::move(dims), std::move(dynamic));
}

absl::StatusOr<Shape> InferDot(const Instruction& inst) {
  XLAC_ASSIGN_OR_RETURN(std::vector<SparsityDescriptor> sparsity, ParseSparsity(inst));
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2 + static_cast<int64_t>(sparsity.size())));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, lhs, "the lhs"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, rhs, "the rhs"));
  XLAC_ASSIGN_OR_RETURN(DotDims d, ReadDotDims(inst, lhs, rhs));
  for (const SparsityDescriptor& s : sparsity) {
    const Shape& side = s.index == 0 ? lhs : rhs;
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "sparsity dimension", s.dimension, side.rank()));
  }
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    int64_t lhs_size = lhs.dimensions[d.lhs_contracting[i]];
    int64_t rhs_size = rhs.dimensions[d.rhs_contracting[i]];
    // A sparse operand stores N of every M elements of its contracting dimension.
    bool sparse = false;
    for (const SparsityDescriptor& s : sparsity) {
      const int64_t dim = s.index == 0 ? d.lhs_contracting[i] : d.rhs_contracting[i];
      if (s.dimension != dim || lhs_size == Shape::kUnboundedSize || rhs_size == Shape::kUnboundedSize) continue;
      std::optional<int64_t> a = CheckedMul(lhs_size, s.index == 0 ? s.m : s.n);
      std::optional<int64_t> b = CheckedMul(rhs_size, s.index == 0 ? s.n : s.m);
      if (!a || !b) return OpError(inst, "sparse contracting dimension overflows");
      lhs_size = *a;
      rhs_size = *b;
      sparse = true;
    }
    if (!DimsCompatible(lhs_size, rhs_size)) {
      return OpError(inst, "contracting dimension sizes differ: lhs dimension {} of {} vs rhs dimension {} of {}{}",
                     d.lhs_contracting[i], Str(lhs), d.rhs_contracting[i], Str(rhs),
                     sparse ? " (after applying the sparsity ratio)" : "");
    }
  }
  return DotResult(ResultType(inst, lhs, rhs), lhs, rhs, d);
}

absl::StatusOr<Shape> InferRaggedDot(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 3));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  const Shape& group_sizes = inst.operand(2)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, lhs, "the lhs"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, rhs, "the rhs"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, group_sizes, "the group sizes"));
  if (group_sizes.rank() < 1 || !IsIntegralType(group_sizes.element_type)) {
    return OpError(inst, "group sizes must be an integral array of rank >= 1, got {}", Str(group_sizes));
  }
  XLAC_ASSIGN_OR_RETURN(DotDims d, ReadDotDims(inst, lhs, rhs));
  for (size_t i = 0; i < d.lhs_contracting.size(); ++i) {
    if (!DimsCompatible(lhs.dimensions[d.lhs_contracting[i]], rhs.dimensions[d.rhs_contracting[i]])) {
      return OpError(inst, "contracting dimension sizes differ: {} and {}", Str(lhs), Str(rhs));
    }
  }
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> ragged, OptionalIntList(inst, "lhs_ragged_dims"));
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> group, OptionalIntList(inst, "rhs_group_dims"));
  if (ragged.size() != 1) return OpError(inst, "expected exactly one lhs_ragged_dims entry, got {}", ragged.size());
  XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "lhs_ragged_dims", ragged[0], lhs.rank()));
  const int64_t num_groups = group_sizes.dimensions.back();
  const bool ragged_contracting = Contains(d.lhs_contracting, ragged[0]);
  const bool ragged_batch = Contains(d.lhs_batch, ragged[0]);
  if (!ragged_contracting && !ragged_batch) {
    // Ragged non-contracting dim: each group of lhs rows uses its own rhs matrix, selected along the group dim.
    if (group.size() != 1) return OpError(inst, "expected exactly one rhs_group_dims entry, got {}", group.size());
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "rhs_group_dims", group[0], rhs.rank()));
    if (Contains(d.rhs_batch, group[0]) || Contains(d.rhs_contracting, group[0])) {
      return OpError(inst, "rhs_group_dims {} must not be a batch or contracting dimension", group[0]);
    }
    if (!DimsCompatible(rhs.dimensions[group[0]], num_groups)) {
      return OpError(inst, "rhs group dimension of {} does not match the {} groups of {}", Str(rhs), num_groups,
                     Str(group_sizes));
    }
    return DotResult(ResultType(inst, lhs, rhs), lhs, rhs, d, group);
  }
  if (!group.empty()) return OpError(inst, "rhs_group_dims must be empty unless the ragged dim is non-contracting");
  Shape result = DotResult(ResultType(inst, lhs, rhs), lhs, rhs, d);
  if (ragged_contracting) {
    // One output per group.
    result.dimensions.insert(result.dimensions.begin(), num_groups);
    result.dynamic_dimensions.insert(result.dynamic_dimensions.begin(), false);
  }
  return result;
}

absl::StatusOr<Shape> InferConvolution(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& lhs = inst.operand(0)->shape();
  const Shape& rhs = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, lhs, "the lhs"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, rhs, "the rhs"));
  XLAC_ASSIGN_OR_RETURN(const ConvolutionDimensionNumbers* dn,
                        RequiredAttr<ConvolutionDimensionNumbers>(inst, "dim_labels", AttrKind::kConvDnums));
  XLAC_ASSIGN_OR_RETURN(const Window* window_attr, OptionalAttr<Window>(inst, "window", AttrKind::kWindow));
  const Window window = window_attr != nullptr ? *window_attr : Window{};
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> fgc, OptionalInt(inst, "feature_group_count"));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> bgc, OptionalInt(inst, "batch_group_count"));
  const int64_t feature_groups = fgc.value_or(1);
  const int64_t batch_groups = bgc.value_or(1);
  if (feature_groups <= 0) return OpError(inst, "feature_group_count must be positive, got {}", feature_groups);
  if (batch_groups <= 0) return OpError(inst, "batch_group_count must be positive, got {}", batch_groups);
  if (feature_groups > 1 && batch_groups > 1) {
    return OpError(inst, "feature_group_count {} and batch_group_count {} cannot both exceed 1", feature_groups,
                   batch_groups);
  }
  const size_t spatial = dn->input_spatial_dimensions.size();
  if (dn->kernel_spatial_dimensions.size() != spatial || dn->output_spatial_dimensions.size() != spatial) {
    return OpError(inst, "dim_labels must name the same number of spatial dimensions for input, kernel and output");
  }
  if (window.dimensions.size() != spatial) {
    return OpError(inst, "window has {} dimensions but dim_labels has {} spatial dimensions", window.dimensions.size(),
                   spatial);
  }
  const int64_t rank = static_cast<int64_t>(spatial) + 2;
  if (lhs.rank() != rank) return OpError(inst, "lhs {} must have rank {}", Str(lhs), rank);
  if (rhs.rank() != rank) return OpError(inst, "rhs {} must have rank {}", Str(rhs), rank);
  auto all = [](int64_t a, int64_t b, const std::vector<int64_t>& rest) {
    std::vector<int64_t> v = {a, b};
    v.insert(v.end(), rest.begin(), rest.end());
    return v;
  };
  for (const auto& [name, dims] :
       {std::pair{"input", all(dn->input_batch_dimension, dn->input_feature_dimension, dn->input_spatial_dimensions)},
        std::pair{"kernel", all(dn->kernel_input_feature_dimension, dn->kernel_output_feature_dimension,
                                dn->kernel_spatial_dimensions)},
        std::pair{"output",
                  all(dn->output_batch_dimension, dn->output_feature_dimension, dn->output_spatial_dimensions)}}) {
    if (!IsPermutation(dims, rank)) {
      return OpError(inst, "{} dimension labels must name each of the {} dimensions exactly once", name, rank);
    }
  }
  const int64_t input_batch = lhs.dimensions[dn->input_batch_dimension];
  const int64_t input_features = lhs.dimensions[dn->input_feature_dimension];
  const int64_t kernel_input_features = rhs.dimensions[dn->kernel_input_feature_dimension];
  const int64_t kernel_output_features = rhs.dimensions[dn->kernel_output_feature_dimension];
  const bool features_known = input_features != Shape::kUnboundedSize && kernel_input_features != Shape::kUnboundedSize;
  if (kernel_output_features != Shape::kUnboundedSize && kernel_output_features % batch_groups != 0) {
    return OpError(inst, "kernel output feature size {} is not a multiple of batch_group_count {}",
                   kernel_output_features, batch_groups);
  }
  if (features_known &&
      (input_features % feature_groups != 0 || input_features / feature_groups != kernel_input_features)) {
    return OpError(inst,
                   "input feature size {} divided by feature_group_count {} must equal the kernel input feature "
                   "size {}",
                   input_features, feature_groups, kernel_input_features);
  }
  if (kernel_output_features != Shape::kUnboundedSize && kernel_output_features % feature_groups != 0) {
    return OpError(inst, "kernel output feature size {} is not a multiple of feature_group_count {}",
                   kernel_output_features, feature_groups);
  }
  if (input_batch != Shape::kUnboundedSize && input_batch % batch_groups != 0) {
    return OpError(inst, "input batch size {} is not a multiple of batch_group_count {}", input_batch, batch_groups);
  }
  std::vector<int64_t> input_spatial;
  std::vector<bool> input_spatial_dynamic;
  for (size_t i = 0; i < spatial; ++i) {
    const int64_t kernel_size = rhs.dimensions[dn->kernel_spatial_dimensions[i]];
    if (!DimsCompatible(kernel_size, window.dimensions[i].size)) {
      return OpError(inst, "window size {} in dimension {} does not match kernel spatial size {} of {}",
                     window.dimensions[i].size, i, kernel_size, Str(rhs));
    }
    input_spatial.push_back(lhs.dimensions[dn->input_spatial_dimensions[i]]);
    input_spatial_dynamic.push_back(lhs.dynamic_dimensions[dn->input_spatial_dimensions[i]]);
  }
  XLAC_ASSIGN_OR_RETURN(Shape windowed,
                        InferWindowOutputShape(inst, MakeShape(lhs.element_type, input_spatial, input_spatial_dynamic),
                                               window, lhs.element_type));
  std::vector<int64_t> dims(rank);
  std::vector<bool> dynamic(rank, false);
  dims[dn->output_batch_dimension] = input_batch == Shape::kUnboundedSize ? input_batch : input_batch / batch_groups;
  dynamic[dn->output_batch_dimension] = lhs.dynamic_dimensions[dn->input_batch_dimension];
  dims[dn->output_feature_dimension] = kernel_output_features;
  for (size_t i = 0; i < spatial; ++i) {
    dims[dn->output_spatial_dimensions[i]] = windowed.dimensions[i];
    dynamic[dn->output_spatial_dimensions[i]] = windowed.dynamic_dimensions[i];
  }
  return MakeShape(ResultType(inst, lhs, rhs), std::move(dims), std::move(dynamic));
}

absl::StatusOr<Shape> InferFft(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& in = inst.operand(0)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, in, "the operand"));
  XLAC_ASSIGN_OR_RETURN(std::optional<std::string> type_attr, OptionalText(inst, "fft_type"));
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* length, RequiredIntList(inst, "fft_length"));
  const std::string type = type_attr.value_or("FFT");
  const int64_t fft_rank = static_cast<int64_t>(length->size());
  if (fft_rank < 1 || fft_rank > 3) return OpError(inst, "fft_length must have 1 to 3 entries, got {}", fft_rank);
  if (in.rank() < fft_rank) return OpError(inst, "operand {} has rank below the FFT rank {}", Str(in), fft_rank);
  for (int64_t l : *length) {
    if (l < 0) return OpError(inst, "negative fft_length {}", l);
  }
  const int64_t first = in.rank() - fft_rank;
  if (type == "FFT" || type == "IFFT") {
    if (!IsComplexType(in.element_type)) return OpError(inst, "{} needs a complex operand, got {}", type, Str(in));
    return StripLayout(in);
  }
  if (type == "RFFT") {
    if (in.element_type != PrimitiveType::kF32 && in.element_type != PrimitiveType::kF64) {
      return OpError(inst, "RFFT needs an f32 or f64 operand, got {}", Str(in));
    }
    for (int64_t i = 0; i < fft_rank; ++i) {
      if (!DimsCompatible(in.dimensions[first + i], (*length)[i])) {
        return OpError(inst, "RFFT dimension {} of {} must equal fft_length {}", first + i, Str(in), (*length)[i]);
      }
    }
    Shape result =
        ChangeElementType(in, in.element_type == PrimitiveType::kF32 ? PrimitiveType::kC64 : PrimitiveType::kC128);
    if (length->back() != 0) result.dimensions.back() = length->back() / 2 + 1;
    return result;
  }
  if (type == "IRFFT") {
    if (!IsComplexType(in.element_type)) return OpError(inst, "IRFFT needs a complex operand, got {}", Str(in));
    for (int64_t i = 0; i + 1 < fft_rank; ++i) {
      if (!DimsCompatible(in.dimensions[first + i], (*length)[i])) {
        return OpError(inst, "IRFFT dimension {} of {} must equal fft_length {}", first + i, Str(in), (*length)[i]);
      }
    }
    const int64_t last = in.dimensions.back();
    if ((last != 0 || length->back() != 0) && !DimsCompatible(last, length->back() / 2 + 1)) {
      return OpError(inst, "IRFFT innermost dimension of {} must be fft_length/2+1 = {}", Str(in),
                     length->back() / 2 + 1);
    }
    Shape result = ChangeElementType(in, ComplexComponentType(in.element_type));
    result.dimensions.back() = length->back();
    return result;
  }
  return OpError(inst, "unknown fft_type '{}'", type);
}

// The two minor dims of a batched matrix must be square.
absl::Status CheckSquareMatrix(const Instruction& inst, const Shape& a) {
  if (!IsFloatingPointType(a.element_type) && !IsComplexType(a.element_type)) {
    return OpError(inst, "expected a floating-point or complex operand, got {}", Str(a));
  }
  if (a.rank() < 2) return OpError(inst, "operand 'a' {} must have rank >= 2", Str(a));
  if (!DimsCompatible(a.dimensions[a.rank() - 2], a.dimensions[a.rank() - 1])) {
    return OpError(inst, "the two minor dimensions of 'a' {} must be equal", Str(a));
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferTriangularSolve(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 2));
  const Shape& a = inst.operand(0)->shape();
  const Shape& b = inst.operand(1)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, a, "operand 'a'"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, b, "operand 'b'"));
  if (a.element_type != b.element_type) {
    return OpError(inst, "operands must have the same element type, got {} and {}", Str(a), Str(b));
  }
  XLAC_RETURN_IF_ERROR(CheckSquareMatrix(inst, a));
  if (b.rank() != a.rank()) return OpError(inst, "operands must have equal rank, got {} and {}", Str(a), Str(b));
  XLAC_ASSIGN_OR_RETURN(bool left_side, OptionalBool(inst, "left_side", false));
  if (!DimsCompatible(a.dimensions.back(), b.dimensions[b.rank() - (left_side ? 2 : 1)])) {
    return OpError(inst, "the shared dimension of 'a' {} and 'b' {} does not match", Str(a), Str(b));
  }
  for (int64_t i = 0; i + 2 < a.rank(); ++i) {
    if (!DimsCompatible(a.dimensions[i], b.dimensions[i])) {
      return OpError(inst, "batch dimensions of {} and {} differ", Str(a), Str(b));
    }
  }
  XLAC_ASSIGN_OR_RETURN(std::optional<std::string> transpose, OptionalText(inst, "transpose_a"));
  if (transpose && *transpose != "NO_TRANSPOSE" && *transpose != "TRANSPOSE" && *transpose != "ADJOINT") {
    return OpError(inst, "invalid transpose_a value '{}'", *transpose);
  }
  return StripLayout(b);
}

absl::StatusOr<Shape> InferBatchNorm(const Instruction& inst) {
  const Opcode op = inst.opcode();
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, op == Opcode::kBatchNormTraining ? 3 : 5));
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, inst.operand(i)->shape(), fmt::format("operand {}", i)));
  }
  const Shape& operand = inst.operand(0)->shape();
  XLAC_ASSIGN_OR_RETURN(int64_t feature_index, RequiredInt(inst, "feature_index"));
  if (operand.rank() < 1) return OpError(inst, "operand {} must have rank >= 1", Str(operand));
  XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "feature_index", feature_index, operand.rank()));
  if (!IsFloatingPointType(operand.element_type)) {
    return OpError(inst, "operand must be floating-point, got {}", Str(operand));
  }
  const int64_t features = operand.dimensions[feature_index];
  // Operands other than the data (and, for grad, the output gradient at index 4) are per-feature vectors.
  for (int64_t i = 1; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    if (!SameElementTypeIgnoringFpPrecision(s, operand)) {
      return OpError(inst, "operand {} element type {} does not match the operand {}", i, Str(s), Str(operand));
    }
    if (op == Opcode::kBatchNormGrad && i == 4) {
      if (!SameDimensions(s, operand)) {
        return OpError(inst, "output gradient {} must match the operand {}", Str(s), Str(operand));
      }
      continue;
    }
    if (s.rank() != 1) return OpError(inst, "operand {} must have rank 1, got {}", i, Str(s));
    if (!DimsCompatible(s.dimensions[0], features)) {
      return OpError(inst, "operand {} has size {} but the feature count is {}", i, s.dimensions[0], features);
    }
  }
  if (op == Opcode::kBatchNormInference) return StripLayout(operand);
  Shape feature_shape = MakeShape(operand.element_type, {features});
  return Shape::Tuple({StripLayout(operand), feature_shape, feature_shape});
}

}  // namespace

absl::StatusOr<Shape> InferConvDotShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kDot:
      return InferDot(inst);
    case Opcode::kRaggedDot:
      return InferRaggedDot(inst);
    case Opcode::kConvolution:
      return InferConvolution(inst);
    case Opcode::kFft:
      return InferFft(inst);
    case Opcode::kTriangularSolve:
      return InferTriangularSolve(inst);
    case Opcode::kCholesky:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      XLAC_RETURN_IF_ERROR(ExpectArray(inst, inst.operand(0)->shape(), "the operand"));
      XLAC_RETURN_IF_ERROR(CheckSquareMatrix(inst, inst.operand(0)->shape()));
      return StripLayout(inst.operand(0)->shape());
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return InferBatchNorm(inst);
    default:
      return NotImplemented(inst);
  }
}

}  // namespace xlac::shape_inference_internal
