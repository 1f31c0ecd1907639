// Helpers shared by the shape_inference_*.cc files; not part of the IR API.
//
// Everything here treats the instruction as untrusted input: operand counts, attribute kinds and attribute values
// are validated before use, and dimension arithmetic is overflow-checked, so a hostile module yields an error
// status rather than undefined behaviour.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "fmt/format.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/shape.h"

namespace xlac::shape_inference_internal {

// "<op>: <message>" as an InvalidArgument error.
template <typename... Args>
absl::Status OpError(const Instruction& inst, fmt::format_string<Args...> format, Args&&... args) {
  return absl::InvalidArgumentError(
      fmt::format("{}: {}", OpcodeName(inst.opcode()), fmt::format(format, std::forward<Args>(args)...)));
}

// The status every family function returns for opcodes it does not handle; the verifier skips these.
absl::Status NotImplemented(const Instruction& inst);

inline std::string Str(const Shape& shape) { return ShapeToString(shape, /*print_layout=*/false); }
std::string JoinInts(const std::vector<int64_t>& values);

// Array shape with explicit dynamic flags (all static when `dynamic` is empty).
Shape MakeShape(PrimitiveType type, std::vector<int64_t> dims, std::vector<bool> dynamic = {});
Shape ChangeElementType(const Shape& shape, PrimitiveType type);
// The shape without layouts (recursively).
Shape StripLayout(const Shape& shape);

// XLA's comparison helpers. Dimensions compare equal when equal or when either is unbounded (`?`); dynamic flags
// and layouts are ignored, as in XLA's ShapeUtil::Compatible.
bool DimsCompatible(int64_t a, int64_t b);
bool SameDimensions(const Shape& a, const Shape& b);
bool SameElementTypeIgnoringFpPrecision(const Shape& a, const Shape& b);
bool ShapesCompatible(const Shape& a, const Shape& b, bool ignore_fp_precision = false);
bool CompatibleIgnoringElementType(const Shape& a, const Shape& b);
PrimitiveType HigherPrecisionElementType(const Shape& a, const Shape& b);
bool IsPermutation(const std::vector<int64_t>& perm, int64_t size);

// Describes why `shape` is malformed (dims negative, dynamic flags of the wrong length, a layout that is not a
// permutation, dims on a tuple/token, ...); nullopt when it is well formed. Inference and the verifier both refuse
// to reason about malformed shapes.
std::optional<std::string> ShapeProblem(const Shape& shape);

// Overflow-checked dimension arithmetic.
std::optional<int64_t> CheckedAdd(int64_t a, int64_t b);
std::optional<int64_t> CheckedMul(int64_t a, int64_t b);

absl::Status ExpectOperandCount(const Instruction& inst, int64_t count);
absl::Status ExpectMinOperandCount(const Instruction& inst, int64_t count);
absl::Status ExpectArray(const Instruction& inst, const Shape& shape, std::string_view what);
// Validates that `dim` indexes a dimension of a rank-`rank` shape.
absl::Status CheckDimIndex(const Instruction& inst, std::string_view attr, int64_t dim, int64_t rank);

// Typed attribute access with kind checking. `Required*` fail when absent; `Optional*` return the fallback.
absl::StatusOr<const std::vector<int64_t>*> RequiredIntList(const Instruction& inst, std::string_view name);
absl::StatusOr<std::vector<int64_t>> OptionalIntList(const Instruction& inst, std::string_view name);
absl::StatusOr<int64_t> RequiredInt(const Instruction& inst, std::string_view name);
absl::StatusOr<std::optional<int64_t>> OptionalInt(const Instruction& inst, std::string_view name);
absl::StatusOr<bool> OptionalBool(const Instruction& inst, std::string_view name, bool fallback);
// kEnum / kString / kRaw attribute text; nullopt when absent.
absl::StatusOr<std::optional<std::string>> OptionalText(const Instruction& inst, std::string_view name);
// A single-element `dimensions={d}` (concatenate, sort, all-gather, get-dimension-size, ...).
absl::StatusOr<int64_t> SingleDimension(const Instruction& inst);
template <typename T>
absl::StatusOr<const T*> RequiredAttr(const Instruction& inst, std::string_view name, AttrKind kind);
template <typename T>
absl::StatusOr<const T*> OptionalAttr(const Instruction& inst, std::string_view name, AttrKind kind);

// A called computation's signature.
struct ProgramShape {
  std::vector<Shape> parameters;
  Shape result;
};
absl::StatusOr<ProgramShape> ComputeProgramShape(const Instruction& inst, const Computation* comp);
// Validates the number of called computations and returns the i-th one's signature.
absl::Status ExpectCalledCount(const Instruction& inst, int64_t count);
absl::StatusOr<ProgramShape> CalledProgramShape(const Instruction& inst, int64_t index);
std::string ProgramShapeToString(const ProgramShape& ps);

// XLA's VerifyReducerShape: `reducer` must map (acc..., x...) -> acc for `inputs` inputs.
absl::Status VerifyReducerShape(const Instruction& inst, const ProgramShape& reducer,
                                const std::vector<const Shape*>& init_values,
                                const std::vector<PrimitiveType>& input_types);

// Output dims of sliding `window` over `base` (reduce-window, select-and-scatter, convolution).
absl::StatusOr<Shape> InferWindowOutputShape(const Instruction& inst, const Shape& base, const Window& window,
                                             PrimitiveType type);

// Family entry points; each returns NotImplemented(inst) for opcodes outside its family.
absl::StatusOr<Shape> InferElementwiseShape(const Instruction& inst);
absl::StatusOr<Shape> InferDataMovementShape(const Instruction& inst);
absl::StatusOr<Shape> InferGatherScatterShape(const Instruction& inst);
absl::StatusOr<Shape> InferConvDotShape(const Instruction& inst);
absl::StatusOr<Shape> InferControlShape(const Instruction& inst);
absl::StatusOr<Shape> InferCollectiveShape(const Instruction& inst);

// ---- template definitions ----

absl::Status AttrKindError(const Instruction& inst, std::string_view name, AttrKind expected);

template <typename T>
absl::StatusOr<const T*> OptionalAttr(const Instruction& inst, std::string_view name, AttrKind kind) {
  const AttrValue* value = inst.FindAttr(name);
  if (value == nullptr) return static_cast<const T*>(nullptr);
  if (value->kind != kind || !std::holds_alternative<T>(value->value)) return AttrKindError(inst, name, kind);
  return &std::get<T>(value->value);
}

template <typename T>
absl::StatusOr<const T*> RequiredAttr(const Instruction& inst, std::string_view name, AttrKind kind) {
  absl::StatusOr<const T*> value = OptionalAttr<T>(inst, name, kind);
  if (!value.ok()) return value.status();
  if (*value == nullptr) return OpError(inst, "missing required attribute '{}'", name);
  return value;
}

}  // namespace xlac::shape_inference_internal
