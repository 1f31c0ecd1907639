// Shape inference for ops defined by called computations: while, conditional, call, fusion, map, reduce,
// reduce-window, select-and-scatter, sort, custom-call and the async wrappers.
#include <set>

#include "ir/shape_inference_internal.h"
#include "ir/status_macros.h"
#include "ir/winograd.h"

namespace xlac::shape_inference_internal {
namespace {

absl::StatusOr<Shape> InferWhile(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 2));
  XLAC_ASSIGN_OR_RETURN(ProgramShape cond, CalledProgramShape(inst, 0));
  XLAC_ASSIGN_OR_RETURN(ProgramShape body, CalledProgramShape(inst, 1));
  if (cond.parameters.size() != 1)
    return OpError(inst, "condition must take 1 parameter, takes {}", cond.parameters.size());
  if (body.parameters.size() != 1) return OpError(inst, "body must take 1 parameter, takes {}", body.parameters.size());
  const Shape& init = inst.operand(0)->shape();
  if (!ShapesCompatible(cond.result, MakeShape(PrimitiveType::kPred, {}))) {
    return OpError(inst, "condition must return pred[], returns {}", Str(cond.result));
  }
  if (!ShapesCompatible(init, body.parameters[0])) {
    return OpError(inst, "operand shape {} does not match the body parameter {}", Str(init), Str(body.parameters[0]));
  }
  if (!ShapesCompatible(init, cond.parameters[0])) {
    return OpError(inst, "operand shape {} does not match the condition parameter {}", Str(init),
                   Str(cond.parameters[0]));
  }
  // Like XLA's verifier, the result is the body's; the body result is not compared with its parameter here.
  return body.result;
}

absl::StatusOr<Shape> InferConditional(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  const Shape& index = inst.operand(0)->shape();
  const int64_t branches = static_cast<int64_t>(inst.called_computations().size());
  if (!index.IsScalar() || (index.element_type != PrimitiveType::kPred && index.element_type != PrimitiveType::kS32)) {
    return OpError(inst, "branch selector must be pred[] or s32[], got {}", Str(index));
  }
  if (index.element_type == PrimitiveType::kPred && branches != 2) {
    return OpError(inst, "a pred-selected conditional needs 2 branch computations, got {}", branches);
  }
  if (branches < 1) return OpError(inst, "expected at least one branch computation");
  if (inst.operand_count() != branches + 1) {
    return OpError(inst, "expected {} operands (selector plus one per branch), got {}", branches + 1,
                   inst.operand_count());
  }
  Shape result;
  for (int64_t j = 0; j < branches; ++j) {
    XLAC_ASSIGN_OR_RETURN(ProgramShape branch, CalledProgramShape(inst, j));
    if (branch.parameters.size() != 1) {
      return OpError(inst, "branch computation {} must take 1 parameter, takes {}", j, branch.parameters.size());
    }
    if (!ShapesCompatible(branch.parameters[0], inst.operand(j + 1)->shape())) {
      return OpError(inst, "branch operand {} has shape {} but branch computation {} takes {}", j,
                     Str(inst.operand(j + 1)->shape()), j, Str(branch.parameters[0]));
    }
    if (j == 0) {
      result = branch.result;
    } else if (!ShapesCompatible(result, branch.result)) {
      return OpError(inst, "branch 0 returns {} but branch {} returns {}", Str(result), j, Str(branch.result));
    }
  }
  return result;
}

absl::StatusOr<Shape> InferCall(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  XLAC_ASSIGN_OR_RETURN(ProgramShape callee, CalledProgramShape(inst, 0));
  if (static_cast<int64_t>(callee.parameters.size()) != inst.operand_count()) {
    return OpError(inst, "called computation takes {} parameters but {} operands are passed", callee.parameters.size(),
                   inst.operand_count());
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!ShapesCompatible(inst.operand(i)->shape(), callee.parameters[i])) {
      return OpError(inst, "operand {} has shape {} but parameter {} of the called computation is {}", i,
                     Str(inst.operand(i)->shape()), i, Str(callee.parameters[i]));
    }
  }
  return callee.result;
}

// output_to_operand_aliasing (custom-call, fusion): each aliased output buffer must have its operand's shape.
absl::Status CheckOutputOperandAliasing(const Instruction& inst) {
  XLAC_ASSIGN_OR_RETURN(
      const std::vector<OutputOperandAlias>* aliasing,
      OptionalAttr<std::vector<OutputOperandAlias>>(inst, "output_to_operand_aliasing", AttrKind::kAliasing));
  if (aliasing == nullptr) return absl::OkStatus();
  for (const OutputOperandAlias& alias : *aliasing) {
    if (alias.operand < 0 || alias.operand >= inst.operand_count()) {
      return OpError(inst, "output_to_operand_aliasing names operand {} of {}", alias.operand, inst.operand_count());
    }
    const Shape* out = inst.shape().Subshape(alias.output_index);
    const Shape* in = inst.operand(alias.operand)->shape().Subshape(alias.operand_index);
    if (out == nullptr) {
      return OpError(inst, "output_to_operand_aliasing output index {} is invalid for {}",
                     ShapeIndexToString(alias.output_index), Str(inst.shape()));
    }
    if (in == nullptr) {
      return OpError(inst, "output_to_operand_aliasing operand index {} is invalid for {}",
                     ShapeIndexToString(alias.operand_index), Str(inst.operand(alias.operand)->shape()));
    }
    // A buffer aliases its element array: XLA's Pin/Unpin custom-calls turn f32[16] into b(f32[16]) and back in
    // place.
    auto unwrap = [](const Shape& s) { return s.IsBuffer() ? s.BufferElementShape() : s; };
    if (!ShapesCompatible(unwrap(*out), unwrap(*in))) {
      return OpError(inst, "aliased output {} {} and operand {} {} differ", ShapeIndexToString(alias.output_index),
                     Str(*out), alias.operand, Str(*in));
    }
  }
  return absl::OkStatus();
}

// Fusion parameters are numbered like operands but a fusion may pass more operands than it has parameters.
absl::StatusOr<Shape> InferFusion(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  XLAC_ASSIGN_OR_RETURN(ProgramShape fused, CalledProgramShape(inst, 0));
  if (static_cast<int64_t>(fused.parameters.size()) > inst.operand_count()) {
    return OpError(inst, "fused computation has {} parameters but the fusion has only {} operands",
                   fused.parameters.size(), inst.operand_count());
  }
  for (size_t i = 0; i < fused.parameters.size(); ++i) {
    if (!ShapesCompatible(inst.operand(i)->shape(), fused.parameters[i])) {
      return OpError(inst, "operand {} has shape {} but fused parameter {} is {}", i, Str(inst.operand(i)->shape()), i,
                     Str(fused.parameters[i]));
    }
  }
  XLAC_RETURN_IF_ERROR(CheckOutputOperandAliasing(inst));
  return fused.result;
}

absl::StatusOr<Shape> InferMap(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  XLAC_ASSIGN_OR_RETURN(ProgramShape fn, CalledProgramShape(inst, 0));
  const Shape* arg = &inst.operand(0)->shape();
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, s, fmt::format("operand {}", i)));
    if (SameDimensions(s, *arg)) continue;
    if (SameElementTypeIgnoringFpPrecision(s, *arg) && (s.IsScalar() || arg->IsScalar())) {
      if (arg->IsScalar()) arg = &s;
      continue;
    }
    return OpError(inst, "operands must have the same shape, got {} and {}", Str(*arg), Str(s));
  }
  XLAC_ASSIGN_OR_RETURN(std::vector<int64_t> dims, OptionalIntList(inst, "dimensions"));
  if (!dims.empty()) {
    // Only full-rank maps exist: dimensions, when given, must be 0..rank-1.
    bool identity = static_cast<int64_t>(dims.size()) == arg->rank();
    for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == static_cast<int64_t>(i);
    if (!identity) return OpError(inst, "dimensions must be {{0..{}}}, got {{{}}}", arg->rank() - 1, JoinInts(dims));
  }
  if (static_cast<int64_t>(fn.parameters.size()) != inst.operand_count()) {
    return OpError(inst, "mapped computation takes {} parameters but {} operands are passed", fn.parameters.size(),
                   inst.operand_count());
  }
  if (!fn.result.IsScalar()) return OpError(inst, "mapped computation must return a scalar, got {}", Str(fn.result));
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& p = fn.parameters[i];
    if (!p.IsScalar()) return OpError(inst, "mapped computation parameter {} must be a scalar, got {}", i, Str(p));
    if (!SameElementTypeIgnoringFpPrecision(p, inst.operand(i)->shape())) {
      return OpError(inst, "mapped computation parameter {} is {} but operand {} is {}", i, Str(p), i,
                     Str(inst.operand(i)->shape()));
    }
  }
  return MakeShape(fn.result.element_type, arg->dimensions, arg->dynamic_dimensions);
}

absl::StatusOr<Shape> InferReduce(const Instruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (n == 0 || inst.operand_count() % 2 != 0) {
    return OpError(inst, "expected N inputs followed by N init values, got {} operands", inst.operand_count());
  }
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  const Shape& arg = inst.operand(0)->shape();
  std::vector<const Shape*> inits;
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, input, fmt::format("input {}", i)));
    if (!SameDimensions(input, arg)) {
      return OpError(inst, "all inputs must have the same dimensions, got {} and {}", Str(arg), Str(input));
    }
    types.push_back(input.element_type);
    inits.push_back(&inst.operand(n + i)->shape());
  }
  XLAC_ASSIGN_OR_RETURN(const std::vector<int64_t>* dims, RequiredIntList(inst, "dimensions"));
  std::set<int64_t> reduced;
  for (int64_t d : *dims) {
    XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "dimensions entry", d, arg.rank()));
    if (!reduced.insert(d).second) return OpError(inst, "dimension {} is reduced twice", d);
  }
  XLAC_ASSIGN_OR_RETURN(ProgramShape reducer, CalledProgramShape(inst, 0));
  XLAC_RETURN_IF_ERROR(VerifyReducerShape(inst, reducer, inits, types));
  std::vector<int64_t> kept;
  std::vector<bool> kept_dynamic;
  for (int64_t i = 0; i < arg.rank(); ++i) {
    if (reduced.count(i)) continue;
    kept.push_back(arg.dimensions[i]);
    kept_dynamic.push_back(arg.dynamic_dimensions[i]);
  }
  if (reducer.result.IsArray()) return MakeShape(reducer.result.element_type, kept, kept_dynamic);
  std::vector<Shape> elements;
  for (const Shape& s : reducer.result.tuple_shapes) elements.push_back(MakeShape(s.element_type, kept, kept_dynamic));
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> InferReduceWindow(const Instruction& inst) {
  const int64_t n = inst.operand_count() / 2;
  if (n == 0 || inst.operand_count() % 2 != 0) {
    return OpError(inst, "expected N inputs followed by N init values, got {} operands", inst.operand_count());
  }
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  // Scalar inputs have a zero-dimensional window, which the text omits.
  XLAC_ASSIGN_OR_RETURN(const Window* window_attr, OptionalAttr<Window>(inst, "window", AttrKind::kWindow));
  const Window window = window_attr != nullptr ? *window_attr : Window{};
  std::vector<const Shape*> inits;
  std::vector<PrimitiveType> types;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& input = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, input, fmt::format("input {}", i)));
    if (!SameDimensions(input, inst.operand(0)->shape())) {
      return OpError(inst, "all inputs must have the same dimensions, got {} and {}", Str(inst.operand(0)->shape()),
                     Str(input));
    }
    types.push_back(input.element_type);
    inits.push_back(&inst.operand(n + i)->shape());
  }
  XLAC_ASSIGN_OR_RETURN(ProgramShape reducer, CalledProgramShape(inst, 0));
  XLAC_RETURN_IF_ERROR(VerifyReducerShape(inst, reducer, inits, types));
  std::vector<Shape> outputs;
  for (int64_t i = 0; i < n; ++i) {
    XLAC_ASSIGN_OR_RETURN(Shape out,
                          InferWindowOutputShape(inst, inst.operand(i)->shape(), window, inits[i]->element_type));
    outputs.push_back(std::move(out));
  }
  // A reducer returning a 1-tuple makes a 1-tuple result.
  if (reducer.result.IsArray()) return outputs[0];
  return Shape::Tuple(std::move(outputs));
}

absl::StatusOr<Shape> InferSelectAndScatter(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 3));
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 2));
  const Shape& operand = inst.operand(0)->shape();
  const Shape& source = inst.operand(1)->shape();
  const Shape& init = inst.operand(2)->shape();
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, operand, "the operand"));
  XLAC_RETURN_IF_ERROR(ExpectArray(inst, source, "the source"));
  XLAC_ASSIGN_OR_RETURN(const Window* window_attr, OptionalAttr<Window>(inst, "window", AttrKind::kWindow));
  const Window window = window_attr != nullptr ? *window_attr : Window{};
  XLAC_ASSIGN_OR_RETURN(ProgramShape select, CalledProgramShape(inst, 0));
  XLAC_ASSIGN_OR_RETURN(ProgramShape scatter, CalledProgramShape(inst, 1));
  if (select.parameters.size() != 2) {
    return OpError(inst, "select computation must take 2 parameters, takes {}", select.parameters.size());
  }
  if (!ShapesCompatible(select.result, MakeShape(PrimitiveType::kPred, {}))) {
    return OpError(inst, "select computation must return pred[], returns {}", Str(select.result));
  }
  const Shape element = MakeShape(operand.element_type, {});
  for (int i = 0; i < 2; ++i) {
    if (!ShapesCompatible(element, select.parameters[i], /*ignore_fp_precision=*/true)) {
      return OpError(inst, "select computation parameter {} is {} but the operand element is {}", i,
                     Str(select.parameters[i]), Str(element));
    }
  }
  XLAC_RETURN_IF_ERROR(VerifyReducerShape(inst, scatter, {&init}, {source.element_type}));
  XLAC_ASSIGN_OR_RETURN(Shape windowed, InferWindowOutputShape(inst, operand, window, operand.element_type));
  if (!ShapesCompatible(source, windowed, /*ignore_fp_precision=*/true)) {
    return OpError(inst, "source shape {} does not match the windowed operand shape {}", Str(source), Str(windowed));
  }
  return StripLayout(operand);
}

absl::StatusOr<Shape> InferSort(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(ExpectMinOperandCount(inst, 1));
  XLAC_RETURN_IF_ERROR(ExpectCalledCount(inst, 1));
  const Shape& keys = inst.operand(0)->shape();
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Shape& s = inst.operand(i)->shape();
    XLAC_RETURN_IF_ERROR(ExpectArray(inst, s, fmt::format("operand {}", i)));
    if (!SameDimensions(keys, s)) {
      return OpError(inst, "all operands must have the same dimensions, got {} and {}", Str(keys), Str(s));
    }
  }
  XLAC_ASSIGN_OR_RETURN(int64_t dim, SingleDimension(inst));
  XLAC_RETURN_IF_ERROR(CheckDimIndex(inst, "dimension", dim, keys.rank()));
  XLAC_ASSIGN_OR_RETURN(ProgramShape compare, CalledProgramShape(inst, 0));
  if (!ShapesCompatible(compare.result, MakeShape(PrimitiveType::kPred, {}))) {
    return OpError(inst, "comparator must return pred[], returns {}", Str(compare.result));
  }
  if (static_cast<int64_t>(compare.parameters.size()) != 2 * inst.operand_count()) {
    return OpError(inst, "comparator must take {} parameters, takes {}", 2 * inst.operand_count(),
                   compare.parameters.size());
  }
  for (size_t p = 0; p < compare.parameters.size(); ++p) {
    Shape expected = MakeShape(inst.operand(p / 2)->shape().element_type, {});
    if (!ShapesCompatible(expected, compare.parameters[p], /*ignore_fp_precision=*/true)) {
      return OpError(inst, "comparator parameter {} is {} but should be {}", p, Str(compare.parameters[p]),
                     Str(expected));
    }
  }
  if (inst.operand_count() == 1) return StripLayout(keys);
  std::vector<Shape> elements;
  for (const Instruction* operand : inst.operands()) elements.push_back(StripLayout(operand->shape()));
  return Shape::Tuple(std::move(elements));
}

// The result is whatever the target produces; only the declared aliasing can be checked against operands.
absl::StatusOr<Shape> InferCustomCall(const Instruction& inst) {
  XLAC_RETURN_IF_ERROR(CheckOutputOperandAliasing(inst));
  // The built-in Winograd transforms (ir/winograd.h) must be well formed: codegen and the interpreter rely on it.
  if (IsWinogradTarget(inst.StringAttr("custom_call_target"))) XLAC_RETURN_IF_ERROR(CheckWinogradCall(inst));
  return StripLayout(inst.shape());
}

// async-start's shape is ((operands...), result, context...); the context elements are free-form.
absl::StatusOr<Shape> AsyncShape(const Instruction& inst, const Shape& context_source) {
  // async-update/-done may omit calls=; they share the wrapped computation of the async-start they continue.
  const Instruction* owner = &inst;
  for (int depth = 0; owner->called_computations().empty() && depth < 1000; ++depth) {
    if (owner->operand_count() != 1 ||
        (owner->operand(0)->opcode() != Opcode::kAsyncStart && owner->operand(0)->opcode() != Opcode::kAsyncUpdate)) {
      break;
    }
    owner = owner->operand(0);
  }
  if (owner->called_computations().size() != 1) {
    return OpError(inst, "expected 1 wrapped computation, got {}", owner->called_computations().size());
  }
  XLAC_ASSIGN_OR_RETURN(ProgramShape wrapped, ComputeProgramShape(inst, owner->called_computation(0)));
  std::vector<Shape> elements = {Shape::Tuple(wrapped.parameters), wrapped.result};
  if (!context_source.IsTuple() || context_source.tuple_shapes.size() < 2) {
    return OpError(inst, "async shape must be a tuple of at least two elements, got {}", Str(context_source));
  }
  for (size_t i = 2; i < context_source.tuple_shapes.size(); ++i) {
    elements.push_back(StripLayout(context_source.tuple_shapes[i]));
  }
  return Shape::Tuple(std::move(elements));
}

// The async-start of the chain `inst` belongs to (itself for an async-start).
const Instruction* AsyncChainStart(const Instruction& inst) {
  const Instruction* start = &inst;
  for (int depth = 0; start->opcode() != Opcode::kAsyncStart && depth < 1000; ++depth) {
    if (start->operand_count() != 1 ||
        (start->operand(0)->opcode() != Opcode::kAsyncStart && start->operand(0)->opcode() != Opcode::kAsyncUpdate)) {
      break;
    }
    start = start->operand(0);
  }
  return start;
}

// `op-start`/`op-update`/`op-done` syntax keeps the wrapped op inline (its attributes on the async-start) instead of
// in a wrapped computation, so only the operand and tuple structure can be checked.
absl::StatusOr<Shape> InferInlineAsync(const Instruction& inst) {
  if (inst.opcode() == Opcode::kAsyncStart) {
    const Shape& own = inst.shape();
    if (!own.IsTuple() || own.tuple_shapes.size() < 2) {
      return OpError(inst, "async shape must be a tuple of at least two elements, got {}", Str(own));
    }
    std::vector<Shape> operands;
    for (const Instruction* operand : inst.operands()) operands.push_back(StripLayout(operand->shape()));
    std::vector<Shape> elements = {Shape::Tuple(std::move(operands))};
    for (size_t i = 1; i < own.tuple_shapes.size(); ++i) elements.push_back(StripLayout(own.tuple_shapes[i]));
    return Shape::Tuple(std::move(elements));
  }
  XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.IsTuple() || operand.tuple_shapes.size() < 2) {
    return OpError(inst, "operand must be an async tuple of at least two elements, got {}", Str(operand));
  }
  if (inst.opcode() == Opcode::kAsyncUpdate) return StripLayout(operand);
  return StripLayout(operand.tuple_shapes[1]);
}

absl::StatusOr<Shape> InferAsync(const Instruction& inst) {
  if (inst.async_wrapped_opcode() || AsyncChainStart(inst)->async_wrapped_opcode()) return InferInlineAsync(inst);
  switch (inst.opcode()) {
    case Opcode::kAsyncStart: {
      XLAC_ASSIGN_OR_RETURN(Shape shape, AsyncShape(inst, inst.shape()));
      const Shape& params = shape.tuple_shapes[0];
      if (static_cast<int64_t>(params.tuple_shapes.size()) != inst.operand_count()) {
        return OpError(inst, "wrapped computation takes {} parameters but {} operands are passed",
                       params.tuple_shapes.size(), inst.operand_count());
      }
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        if (!ShapesCompatible(params.tuple_shapes[i], inst.operand(i)->shape())) {
          return OpError(inst, "operand {} has shape {} but the wrapped computation takes {}", i,
                         Str(inst.operand(i)->shape()), Str(params.tuple_shapes[i]));
        }
      }
      return shape;
    }
    case Opcode::kAsyncUpdate:
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      return AsyncShape(inst, inst.operand(0)->shape());
    case Opcode::kAsyncDone: {
      XLAC_RETURN_IF_ERROR(ExpectOperandCount(inst, 1));
      XLAC_ASSIGN_OR_RETURN(Shape shape, AsyncShape(inst, inst.operand(0)->shape()));
      if (!ShapesCompatible(shape, inst.operand(0)->shape())) {
        return OpError(inst, "operand shape {} does not match the wrapped computation, which implies {}",
                       Str(inst.operand(0)->shape()), Str(shape));
      }
      return shape.tuple_shapes[1];
    }
    default:
      return NotImplemented(inst);
  }
}

}  // namespace

absl::StatusOr<Shape> InferControlShape(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kWhile:
      return InferWhile(inst);
    case Opcode::kConditional:
      return InferConditional(inst);
    case Opcode::kCall:
      return InferCall(inst);
    case Opcode::kFusion:
      return InferFusion(inst);
    case Opcode::kMap:
      return InferMap(inst);
    case Opcode::kReduce:
      return InferReduce(inst);
    case Opcode::kReduceWindow:
      return InferReduceWindow(inst);
    case Opcode::kSelectAndScatter:
      return InferSelectAndScatter(inst);
    case Opcode::kSort:
      return InferSort(inst);
    case Opcode::kCustomCall:
      return InferCustomCall(inst);
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return InferAsync(inst);
    default:
      return NotImplemented(inst);
  }
}

}  // namespace xlac::shape_inference_internal
