// Shape inference entry point and the helpers shared by the per-family files.
#include "ir/shape_inference.h"

#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"

namespace xlac {
namespace shape_inference_internal {

absl::Status NotImplemented(const Instruction& inst) {
  return absl::UnimplementedError(fmt::format("shape inference not implemented for {}", OpcodeName(inst.opcode())));
}

std::string JoinInts(const std::vector<int64_t>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(values[i]);
  }
  return out;
}

Shape MakeShape(PrimitiveType type, std::vector<int64_t> dims, std::vector<bool> dynamic) {
  Shape shape;
  shape.element_type = type;
  if (dynamic.size() != dims.size()) dynamic.assign(dims.size(), false);
  // An unbounded size is only meaningful on a dynamic dimension.
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == Shape::kUnboundedSize) dynamic[i] = true;
  }
  shape.dimensions = std::move(dims);
  shape.dynamic_dimensions = std::move(dynamic);
  return shape;
}

Shape ChangeElementType(const Shape& shape, PrimitiveType type) {
  Shape result = StripLayout(shape);
  result.element_type = type;
  return result;
}

Shape StripLayout(const Shape& shape) {
  Shape result = shape;
  result.ClearLayout();
  return result;
}

bool DimsCompatible(int64_t a, int64_t b) { return a == b || a == Shape::kUnboundedSize || b == Shape::kUnboundedSize; }

bool SameDimensions(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!DimsCompatible(a.dimensions[i], b.dimensions[i])) return false;
  }
  return true;
}

bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b) {
  if (IsFloatingPointType(a.element_type) && IsFloatingPointType(b.element_type)) return true;
  return a.element_type == b.element_type;
}

bool ShapesCompatible(const Shape& a, const Shape& b, bool ignore_fp_precision) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
      if (!ShapesCompatible(a.tuple_shapes[i], b.tuple_shapes[i], ignore_fp_precision)) return false;
    }
    return true;
  }
  if (a.IsBuffer() || b.IsBuffer()) {
    return a.IsBuffer() && b.IsBuffer() &&
           ShapesCompatible(a.BufferElementShape(), b.BufferElementShape(), ignore_fp_precision);
  }
  if (!a.IsArray() || !b.IsArray()) return a.element_type == b.element_type;
  bool types_ok = ignore_fp_precision ? SameElementTypeIgnoringFpPrecision(a, b) : a.element_type == b.element_type;
  return types_ok && SameDimensions(a, b);
}

bool CompatibleIgnoringElementType(const Shape& a, const Shape& b) {
  if (a.IsTuple() || b.IsTuple()) {
    if (!a.IsTuple() || !b.IsTuple() || a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
      if (!CompatibleIgnoringElementType(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
    }
    return true;
  }
  if (a.IsBuffer() != b.IsBuffer()) return false;
  if (a.IsBuffer()) return CompatibleIgnoringElementType(a.BufferElementShape(), b.BufferElementShape());
  if (a.IsArray() != b.IsArray()) return false;
  return !a.IsArray() || SameDimensions(a, b);
}

PrimitiveType HigherPrecisionElementType(const Shape& a, const Shape& b) {
  PrimitiveType ta = a.element_type;
  PrimitiveType tb = b.element_type;
  if (ta == tb || !IsFloatingPointType(ta) || !IsFloatingPointType(tb)) return ta;
  if (BitWidth(ta) != BitWidth(tb)) return BitWidth(ta) > BitWidth(tb) ? ta : tb;
  // Equal widths (f16 vs bf16, f8 variants): prefer more significand bits, then more exponent bits.
  FloatFormat fa = GetFloatFormat(ta);
  FloatFormat fb = GetFloatFormat(tb);
  if (fa.mantissa_bits != fb.mantissa_bits) return fa.mantissa_bits > fb.mantissa_bits ? ta : tb;
  return fa.exponent_bits >= fb.exponent_bits ? ta : tb;
}

bool IsPermutation(const std::vector<int64_t>& perm, int64_t size) {
  if (static_cast<int64_t>(perm.size()) != size) return false;
  std::vector<bool> seen(perm.size(), false);
  for (int64_t p : perm) {
    if (p < 0 || p >= size || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

std::optional<std::string> ShapeProblem(const Shape& shape) {
  if (shape.IsTuple()) {
    if (!shape.dimensions.empty()) return std::string("a tuple shape has dimensions");
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      if (std::optional<std::string> p = ShapeProblem(shape.tuple_shapes[i])) {
        return fmt::format("tuple element {}: {}", i, *p);
      }
    }
    return std::nullopt;
  }
  if (shape.IsBuffer()) {
    if (!IsArrayType(shape.element_type)) return std::string("a buffer holds a non-array shape");
    if (std::optional<std::string> p = ShapeProblem(shape.BufferElementShape())) return "buffer element: " + *p;
    return std::nullopt;
  }
  if (!shape.IsArray()) {
    if (!shape.IsToken() && !shape.IsOpaque()) return std::string("invalid element type");
    if (!shape.dimensions.empty())
      return fmt::format("a {} shape has dimensions", PrimitiveTypeName(shape.element_type));
    return std::nullopt;
  }
  if (shape.dynamic_dimensions.size() != shape.dimensions.size()) {
    return fmt::format("{} dynamic-dimension flags for {} dimensions", shape.dynamic_dimensions.size(),
                       shape.dimensions.size());
  }
  for (size_t i = 0; i < shape.dimensions.size(); ++i) {
    int64_t d = shape.dimensions[i];
    if (d == Shape::kUnboundedSize ? !shape.dynamic_dimensions[i] : d < 0) {
      return fmt::format("dimension {} has invalid size {}", i, d);
    }
  }
  if (shape.layout && !IsPermutation(shape.layout->minor_to_major, shape.rank())) {
    return fmt::format("layout {} is not a permutation of the {} dimensions", LayoutToString(*shape.layout),
                       shape.rank());
  }
  return std::nullopt;
}

std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

absl::Status ExpectOperandCount(const Instruction& inst, int64_t count) {
  if (inst.operand_count() != count) {
    return OpError(inst, "expected {} operand{}, got {}", count, count == 1 ? "" : "s", inst.operand_count());
  }
  return absl::OkStatus();
}

absl::Status ExpectMinOperandCount(const Instruction& inst, int64_t count) {
  if (inst.operand_count() < count) {
    return OpError(inst, "expected at least {} operand{}, got {}", count, count == 1 ? "" : "s", inst.operand_count());
  }
  return absl::OkStatus();
}

absl::Status ExpectArray(const Instruction& inst, const Shape& shape, std::string_view what) {
  if (!shape.IsArray()) return OpError(inst, "expected an array for {}, got {}", what, Str(shape));
  return absl::OkStatus();
}

absl::Status CheckDimIndex(const Instruction& inst, std::string_view attr, int64_t dim, int64_t rank) {
  if (dim < 0 || dim >= rank) return OpError(inst, "{} {} out of range for rank {}", attr, dim, rank);
  return absl::OkStatus();
}

namespace {
std::string_view AttrKindName(AttrKind kind) {
  switch (kind) {
    case AttrKind::kInt:
      return "an integer";
    case AttrKind::kBool:
      return "a boolean";
    case AttrKind::kFloat:
      return "a float";
    case AttrKind::kString:
      return "a string";
    case AttrKind::kEnum:
      return "an enum";
    case AttrKind::kIntList:
      return "an integer list";
    case AttrKind::kIntListList:
      return "a list of integer lists";
    case AttrKind::kEnumList:
      return "an enum list";
    case AttrKind::kWindow:
      return "a window";
    case AttrKind::kConvDnums:
      return "convolution dimension labels";
    case AttrKind::kPaddingConfig:
      return "a padding config";
    case AttrKind::kSlice:
      return "a slice";
    case AttrKind::kReplicaGroups:
      return "replica groups";
    case AttrKind::kShapeList:
      return "a shape list";
    case AttrKind::kLiteral:
      return "a literal";
    case AttrKind::kAliasing:
      return "an aliasing list";
    case AttrKind::kRaw:
      return "raw text";
  }
  return "a value";
}
}  // namespace

absl::Status AttrKindError(const Instruction& inst, std::string_view name, AttrKind expected) {
  return OpError(inst, "attribute '{}' must be {}", name, AttrKindName(expected));
}

absl::StatusOr<const std::vector<int64_t>*> RequiredIntList(const Instruction& inst, std::string_view name) {
  return RequiredAttr<std::vector<int64_t>>(inst, name, AttrKind::kIntList);
}

absl::StatusOr<std::vector<int64_t>> OptionalIntList(const Instruction& inst, std::string_view name) {
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* list,
                        OptionalAttr<std::vector<int64_t>>(inst, name, AttrKind::kIntList));
  if (list == nullptr) return std::vector<int64_t>{};
  return *list;
}

absl::StatusOr<int64_t> RequiredInt(const Instruction& inst, std::string_view name) {
  XLAC_ASSIGN_OR_RETURN(const int64_t* value, RequiredAttr<int64_t>(inst, name, AttrKind::kInt));
  return *value;
}

absl::StatusOr<std::optional<int64_t>> OptionalInt(const Instruction& inst, std::string_view name) {
  XLAC_ASSIGN_OR_RETURN(const int64_t* value, OptionalAttr<int64_t>(inst, name, AttrKind::kInt));
  if (value == nullptr) return std::optional<int64_t>();
  return std::optional<int64_t>(*value);
}

absl::StatusOr<bool> OptionalBool(const Instruction& inst, std::string_view name, bool fallback) {
  XLAC_ASSIGN_OR_RETURN(const bool* value, OptionalAttr<bool>(inst, name, AttrKind::kBool));
  return value == nullptr ? fallback : *value;
}

absl::StatusOr<std::optional<std::string>> OptionalText(const Instruction& inst, std::string_view name) {
  const AttrValue* value = inst.FindAttr(name);
  if (value == nullptr) return std::optional<std::string>();
  if ((value->kind != AttrKind::kEnum && value->kind != AttrKind::kString && value->kind != AttrKind::kRaw) ||
      !std::holds_alternative<std::string>(value->value)) {
    return AttrKindError(inst, name, AttrKind::kEnum);
  }
  return std::optional<std::string>(std::get<std::string>(value->value));
}

absl::StatusOr<int64_t> SingleDimension(const Instruction& inst) {
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, RequiredIntList(inst, "dimensions"));
  if (dims->size() != 1) return OpError(inst, "expected exactly one entry in dimensions, got {}", dims->size());
  return (*dims)[0];
}

absl::StatusOr<ProgramShape> ComputeProgramShape(const Instruction& inst, const Computation* comp) {
  if (comp == nullptr) return OpError(inst, "called computation is null");
  if (comp->root() == nullptr) return OpError(inst, "called computation '{}' has no root", comp->name());
  ProgramShape ps;
  ps.result = StripLayout(comp->root()->shape());
  const std::vector<Instruction*>& params = comp->parameters();
  ps.parameters.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr || params[i]->parameter_number() != static_cast<int64_t>(i)) {
      return OpError(inst, "called computation '{}' has no parameter {}", comp->name(), i);
    }
    ps.parameters.push_back(StripLayout(params[i]->shape()));
  }
  return ps;
}

absl::Status ExpectCalledCount(const Instruction& inst, int64_t count) {
  int64_t have = static_cast<int64_t>(inst.called_computations().size());
  if (have != count) {
    return OpError(inst, "expected {} called computation{}, got {}", count, count == 1 ? "" : "s", have);
  }
  return absl::OkStatus();
}

absl::StatusOr<ProgramShape> CalledProgramShape(const Instruction& inst, int64_t index) {
  if (index < 0 || index >= static_cast<int64_t>(inst.called_computations().size())) {
    return OpError(inst, "missing called computation {}", index);
  }
  return ComputeProgramShape(inst, inst.called_computation(index));
}

std::string ProgramShapeToString(const ProgramShape& ps) {
  std::string out = "(";
  for (size_t i = 0; i < ps.parameters.size(); ++i) {
    if (i > 0) out += ", ";
    out += Str(ps.parameters[i]);
  }
  return out + ") -> " + Str(ps.result);
}

absl::Status VerifyReducerShape(const Instruction& inst, const ProgramShape& reducer,
                                const std::vector<const Shape*>& init_values,
                                const std::vector<PrimitiveType>& input_types) {
  const int64_t inputs = static_cast<int64_t>(input_types.size());
  if (static_cast<int64_t>(reducer.parameters.size()) != 2 * inputs) {
    return OpError(inst, "reduction computation must take {} parameters, but takes {}", 2 * inputs,
                   reducer.parameters.size());
  }
  std::vector<const Shape*> accumulators;
  if (reducer.result.IsArray()) {
    if (inputs != 1) {
      return OpError(inst, "reduction computation must produce a tuple with {} elements, but produces {}", inputs,
                     Str(reducer.result));
    }
    accumulators.push_back(&reducer.result);
  } else if (reducer.result.IsTuple()) {
    if (static_cast<int64_t>(reducer.result.tuple_shapes.size()) != inputs) {
      return OpError(inst, "reduction computation must produce a tuple with {} elements, but produces {}", inputs,
                     Str(reducer.result));
    }
    for (const Shape& element : reducer.result.tuple_shapes) accumulators.push_back(&element);
  } else {
    return OpError(inst, "reduction computation must produce a scalar or tuple of scalars, but produces {}",
                   Str(reducer.result));
  }
  for (const Shape* acc : accumulators) {
    if (!acc->IsArray() || acc->rank() != 0) {
      return OpError(inst, "reduction computation must return a scalar or tuple of scalars, but returns {}",
                     Str(reducer.result));
    }
  }
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& acc = *accumulators[i];
    if (!ShapesCompatible(acc, reducer.parameters[i])) {
      return OpError(inst, "reduction computation parameter {} has shape {} but its result {} is {}", i,
                     Str(reducer.parameters[i]), inputs == 1 ? std::string() : fmt::format("element {}", i), Str(acc));
    }
    if (!ShapesCompatible(acc, *init_values[i], /*ignore_fp_precision=*/true)) {
      return OpError(inst, "reduction computation accumulator {} has shape {} but the init value has shape {}", i,
                     Str(acc), Str(*init_values[i]));
    }
    Shape input_element = MakeShape(input_types[i], {});
    if (!ShapesCompatible(input_element, reducer.parameters[inputs + i], /*ignore_fp_precision=*/true)) {
      return OpError(inst, "reduction computation parameter {} has shape {} but the input element type is {}",
                     inputs + i, Str(reducer.parameters[inputs + i]), Str(input_element));
    }
    if (!ShapesCompatible(acc, reducer.parameters[inputs + i], /*ignore_fp_precision=*/true)) {
      return OpError(inst, "reduction computation parameter {} has shape {} but the accumulator is {}", inputs + i,
                     Str(reducer.parameters[inputs + i]), Str(acc));
    }
  }
  return absl::OkStatus();
}

namespace {
// Size of a dim of `bound` elements with `dilation - 1` holes between elements; nullopt on overflow.
std::optional<int64_t> DilatedBound(int64_t bound, int64_t dilation) {
  if (bound == 0) return 0;
  std::optional<int64_t> gaps = CheckedMul(bound - 1, dilation);
  if (!gaps) return std::nullopt;
  return CheckedAdd(*gaps, 1);
}
}  // namespace

absl::StatusOr<Shape> InferWindowOutputShape(const Instruction& inst, const Shape& base, const Window& window,
                                             PrimitiveType type) {
  if (static_cast<int64_t>(window.dimensions.size()) != base.rank()) {
    return OpError(inst, "window has {} dimensions but the base shape {} has rank {}", window.dimensions.size(),
                   Str(base), base.rank());
  }
  std::vector<int64_t> dims(base.rank());
  std::vector<bool> dynamic(base.rank());
  for (int64_t i = 0; i < base.rank(); ++i) {
    const WindowDimension& wd = window.dimensions[i];
    if (wd.size <= 0) return OpError(inst, "window dimension {} has non-positive size {}", i, wd.size);
    if (wd.stride <= 0) return OpError(inst, "window dimension {} has non-positive stride {}", i, wd.stride);
    if (wd.base_dilation < 1) {
      return OpError(inst, "window dimension {} has non-positive base dilation {}", i, wd.base_dilation);
    }
    if (wd.window_dilation < 1) {
      return OpError(inst, "window dimension {} has non-positive window dilation {}", i, wd.window_dilation);
    }
    dynamic[i] = base.dynamic_dimensions.size() > static_cast<size_t>(i) && base.dynamic_dimensions[i];
    if (base.dimensions[i] == Shape::kUnboundedSize) {
      dims[i] = Shape::kUnboundedSize;
      continue;
    }
    std::optional<int64_t> dilated_base = DilatedBound(base.dimensions[i], wd.base_dilation);
    std::optional<int64_t> padded;
    if (dilated_base) padded = CheckedAdd(*dilated_base, wd.padding_low);
    if (padded) padded = CheckedAdd(*padded, wd.padding_high);
    std::optional<int64_t> dilated_window = DilatedBound(wd.size, wd.window_dilation);
    if (!padded || !dilated_window) return OpError(inst, "window dimension {} overflows", i);
    // XLA's StridedBound: the number of window positions that fit, never negative.
    if (*padded < *dilated_window) {
      dims[i] = 0;
    } else {
      dims[i] = (*padded - *dilated_window) / wd.stride + 1;
    }
  }
  return MakeShape(type, std::move(dims), std::move(dynamic));
}

}  // namespace shape_inference_internal

absl::StatusOr<Shape> InferShape(const Instruction& inst) {
  namespace internal = shape_inference_internal;
  // Malformed operand shapes are reported where those operands are defined; here they only stop inference. The
  // instruction's own shape is not validated: the rules that read it only copy it or index it after checks.
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (inst.operand(i) == nullptr) return internal::OpError(inst, "operand {} is null", i);
    if (std::optional<std::string> problem = internal::ShapeProblem(inst.operand(i)->shape())) {
      return internal::OpError(inst, "operand {} has a malformed shape: {}", i, *problem);
    }
  }
  // Each family reports kUnimplemented for opcodes it does not own; the first one that claims the opcode wins.
  for (auto family :
       {internal::InferElementwiseShape, internal::InferDataMovementShape, internal::InferGatherScatterShape,
        internal::InferConvDotShape, internal::InferControlShape, internal::InferCollectiveShape}) {
    absl::StatusOr<Shape> result = family(inst);
    if (result.ok() || result.status().code() != absl::StatusCode::kUnimplemented) return result;
  }
  return internal::NotImplemented(inst);
}

}  // namespace xlac
