// Shape refinement of shape-polymorphic exports (jax.export with symbolic dimensions), as XLA does on load with
// stablehlo-refine-shapes, stablehlo-canonicalize-dynamism and its shape-assertions pass:
//  - The entry function's `?` dimensions take the sizes StableHloParseOptions::entry_argument_shapes gives.
//  - Every op is lowered as usual; a result type with `?` then takes the shape HLO shape inference derives from the
//    (static) operands (RefineNewInstructions), and a declared static size that disagrees is an error at the op.
//  - get_dimension_size of a static dimension is a constant, and integer arithmetic over such values is evaluated
//    while lowering (FoldConstant), so the shape operands of the dynamic ops and of the stablehlo.dynamic_* custom
//    calls are known: those become their static HLO ops.
//  - func.call specializes its callee to the call's argument shapes and to the constant dimension variables it
//    passes (JAX's _wrapped_jax_export_main(%dimsize, %arg)), one computation per distinct specialization.
//  - shape_assertion is checked when its operands are known: a false one is the export's own error message.
#include <algorithm>
#include <functional>
#include <limits>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"
#include "ir/shape_inference.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

// Shape operands are short vectors; anything larger is data, not shape arithmetic.
constexpr int64_t kMaxFoldElements = 1024;
constexpr int kMaxFoldDepth = 200;

bool IsUnboundedDim(const Type& type, size_t i) {
  return type.dims[i] == Type::kDynamic && (type.bounds.size() != type.dims.size() || type.bounds[i] == Type::kDynamic);
}

bool IsIntOrPred(PrimitiveType t) { return IsIntegralType(t) || IsPredType(t); }

// The multi-index of linear (row-major) position `linear` in `dims`.
std::vector<int64_t> Unravel(int64_t linear, const std::vector<int64_t>& dims) {
  std::vector<int64_t> index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] == 0 ? 0 : linear % dims[d];
    linear = dims[d] == 0 ? 0 : linear / dims[d];
  }
  return index;
}

int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t linear = 0;
  for (size_t d = 0; d < dims.size(); ++d) linear = linear * dims[d] + index[d];
  return linear;
}

// HLO's integer semantics on values normalized to `type` (sign- or zero-extended): wrapping arithmetic, division
// truncating towards zero with x/0 = -1 and x%0 = x, INT_MIN/-1 = INT_MIN and INT_MIN%-1 = 0.
std::optional<int64_t> IntBinary(Opcode op, PrimitiveType type, int64_t a, int64_t b) {
  const bool is_unsigned = IsUnsignedIntegralType(type);
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  switch (op) {
    case Opcode::kAdd:
      return static_cast<int64_t>(ua + ub);
    case Opcode::kSubtract:
      return static_cast<int64_t>(ua - ub);
    case Opcode::kMultiply:
      return static_cast<int64_t>(ua * ub);
    case Opcode::kDivide:
      if (b == 0) return -1;
      if (is_unsigned) return static_cast<int64_t>(ua / ub);
      if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;
      return a / b;
    case Opcode::kRemainder:
      if (b == 0) return a;
      if (is_unsigned) return static_cast<int64_t>(ua % ub);
      if (b == -1) return 0;
      return a % b;
    case Opcode::kMaximum:
      return is_unsigned ? static_cast<int64_t>(std::max(ua, ub)) : std::max(a, b);
    case Opcode::kMinimum:
      return is_unsigned ? static_cast<int64_t>(std::min(ua, ub)) : std::min(a, b);
    case Opcode::kAnd:
      return a & b;
    case Opcode::kOr:
      return a | b;
    case Opcode::kXor:
      return a ^ b;
    default:
      return std::nullopt;
  }
}

std::optional<bool> IntCompare(std::string_view direction, bool is_unsigned, int64_t a, int64_t b) {
  const uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (direction == "EQ") return a == b;
  if (direction == "NE") return a != b;
  if (direction == "LT") return is_unsigned ? ua < ub : a < b;
  if (direction == "LE") return is_unsigned ? ua <= ub : a <= b;
  if (direction == "GT") return is_unsigned ? ua > ub : a > b;
  if (direction == "GE") return is_unsigned ? ua >= ub : a >= b;
  return std::nullopt;
}

// Evaluates `inst` from its operands' values (all known, `ops`). nullopt where the op is not one shape arithmetic
// uses.
std::optional<Literal> Evaluate(const Instruction& inst, const std::vector<const Literal*>& ops) {
  const Shape& shape = inst.shape();
  Shape result_shape(shape.element_type, shape.dimensions);
  Literal out(result_shape);
  const int64_t n = out.element_count();
  const PrimitiveType type = shape.element_type;
  auto each = [&](const std::function<std::optional<int64_t>(int64_t)>& f) -> std::optional<Literal> {
    for (int64_t i = 0; i < n; ++i) {
      std::optional<int64_t> v = f(i);
      if (!v.has_value()) return std::nullopt;
      out.SetFromInt64(i, *v);
    }
    return std::move(out);
  };
  switch (inst.opcode()) {
    case Opcode::kConvert:
    case Opcode::kReshape:
    case Opcode::kCopy:
      if (!IsIntOrPred(ops[0]->shape().element_type) || ops[0]->element_count() != n) return std::nullopt;
      return each([&](int64_t i) -> std::optional<int64_t> {
        // A pred converts to 0/1; GetAsInt64 already reads it that way.
        return ops[0]->GetAsInt64(i);
      });
    case Opcode::kBroadcast: {
      const std::vector<int64_t>& dims = inst.dimensions();
      const std::vector<int64_t>& in_dims = ops[0]->shape().dimensions;
      if (dims.size() != in_dims.size()) return std::nullopt;
      return each([&](int64_t i) -> std::optional<int64_t> {
        std::vector<int64_t> index = Unravel(i, shape.dimensions), in_index(dims.size());
        for (size_t d = 0; d < dims.size(); ++d) in_index[d] = in_dims[d] == 1 ? 0 : index[dims[d]];
        return ops[0]->GetAsInt64(Ravel(in_index, in_dims));
      });
    }
    case Opcode::kConcatenate: {
      if (inst.dimensions().size() != 1) return std::nullopt;
      const size_t axis = static_cast<size_t>(inst.dimensions()[0]);
      return each([&](int64_t i) -> std::optional<int64_t> {
        std::vector<int64_t> index = Unravel(i, shape.dimensions);
        for (const Literal* part : ops) {
          const std::vector<int64_t>& dims = part->shape().dimensions;
          if (axis >= dims.size()) return std::nullopt;
          if (index[axis] < dims[axis]) return part->GetAsInt64(Ravel(index, dims));
          index[axis] -= dims[axis];
        }
        return std::nullopt;
      });
    }
    case Opcode::kSlice: {
      const AttrValue* attr = inst.FindAttr("slice");
      if (attr == nullptr || attr->kind != AttrKind::kSlice) return std::nullopt;
      const auto& ranges = attr->get<std::vector<SliceRange>>();
      const std::vector<int64_t>& in_dims = ops[0]->shape().dimensions;
      if (ranges.size() != in_dims.size()) return std::nullopt;
      return each([&](int64_t i) -> std::optional<int64_t> {
        std::vector<int64_t> index = Unravel(i, shape.dimensions);
        for (size_t d = 0; d < index.size(); ++d) index[d] = ranges[d].start + index[d] * ranges[d].stride;
        return ops[0]->GetAsInt64(Ravel(index, in_dims));
      });
    }
    case Opcode::kNegate:
      return each([&](int64_t i) -> std::optional<int64_t> {
        return static_cast<int64_t>(0 - static_cast<uint64_t>(ops[0]->GetAsInt64(i)));
      });
    case Opcode::kAbs:
      return each([&](int64_t i) -> std::optional<int64_t> {
        const int64_t v = ops[0]->GetAsInt64(i);
        return v < 0 ? static_cast<int64_t>(0 - static_cast<uint64_t>(v)) : v;
      });
    case Opcode::kSign:
      return each([&](int64_t i) -> std::optional<int64_t> {
        const int64_t v = ops[0]->GetAsInt64(i);
        return IsUnsignedIntegralType(type) ? int64_t{v != 0} : (v > 0) - (v < 0);
      });
    case Opcode::kNot:
      return each([&](int64_t i) -> std::optional<int64_t> {
        const int64_t v = ops[0]->GetAsInt64(i);
        return IsPredType(type) ? int64_t{v == 0} : ~v;
      });
    case Opcode::kAdd:
    case Opcode::kSubtract:
    case Opcode::kMultiply:
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      return each(
          [&](int64_t i) { return IntBinary(inst.opcode(), type, ops[0]->GetAsInt64(i), ops[1]->GetAsInt64(i)); });
    case Opcode::kCompare: {
      const std::string_view direction = inst.StringAttr("direction");
      const std::string_view compare_type = inst.StringAttr("type");
      const bool is_unsigned = compare_type == "UNSIGNED" ||
                               (compare_type != "SIGNED" && IsUnsignedIntegralType(ops[0]->shape().element_type)) ||
                               IsPredType(ops[0]->shape().element_type);
      return each([&](int64_t i) -> std::optional<int64_t> {
        std::optional<bool> r = IntCompare(direction, is_unsigned, ops[0]->GetAsInt64(i), ops[1]->GetAsInt64(i));
        if (!r.has_value()) return std::nullopt;
        return int64_t{*r};
      });
    }
    case Opcode::kSelect:
      return each([&](int64_t i) -> std::optional<int64_t> {
        const int64_t p = ops[0]->GetAsInt64(ops[0]->element_count() == 1 ? 0 : i);
        return p != 0 ? ops[1]->GetAsInt64(i) : ops[2]->GetAsInt64(i);
      });
    case Opcode::kClamp:
      return each([&](int64_t i) -> std::optional<int64_t> {
        auto at = [&](int k) { return ops[k]->GetAsInt64(ops[k]->element_count() == 1 ? 0 : i); };
        std::optional<int64_t> lo = IntBinary(Opcode::kMaximum, type, at(1), at(0));
        return IntBinary(Opcode::kMinimum, type, *lo, at(2));
      });
    default:
      return std::nullopt;
  }
}

// The refined form of a declared type (unbounded dims as Shape::kUnboundedSize) as text, for messages.
std::string DeclaredText(const Type& type) { return TypeToString(type); }

}  // namespace

bool HasUnboundedDims(const Shape& shape) {
  if (shape.IsTuple()) return std::any_of(shape.tuple_shapes.begin(), shape.tuple_shapes.end(), HasUnboundedDims);
  return std::find(shape.dimensions.begin(), shape.dimensions.end(), Shape::kUnboundedSize) != shape.dimensions.end();
}

bool TypeHasUnboundedDims(const Type& type) {
  if (type.kind == Type::Kind::kTensor) {
    for (size_t i = 0; i < type.dims.size(); ++i) {
      if (IsUnboundedDim(type, i)) return true;
    }
    return false;
  }
  return std::any_of(type.elements.begin(), type.elements.end(), TypeHasUnboundedDims) ||
         std::any_of(type.results.begin(), type.results.end(), TypeHasUnboundedDims);
}

bool SignatureHasUnboundedDims(const Func& func) {
  return std::any_of(func.args.begin(), func.args.end(),
                     [](const FuncArg& a) { return TypeHasUnboundedDims(a.type); }) ||
         std::any_of(func.results.begin(), func.results.end(),
                     [](const FuncResult& r) { return TypeHasUnboundedDims(r.type); });
}

bool ShapeRefines(const Shape& declared, const Shape& actual) {
  if (declared.IsTuple() || actual.IsTuple()) {
    if (!declared.IsTuple() || !actual.IsTuple() || declared.tuple_shapes.size() != actual.tuple_shapes.size()) {
      return false;
    }
    for (size_t i = 0; i < declared.tuple_shapes.size(); ++i) {
      if (!ShapeRefines(declared.tuple_shapes[i], actual.tuple_shapes[i])) return false;
    }
    return true;
  }
  if (!HasUnboundedDims(declared)) return declared.Compatible(actual);
  if (declared.element_type != actual.element_type || declared.is_buffer != actual.is_buffer ||
      declared.rank() != actual.rank()) {
    return false;
  }
  for (int64_t i = 0; i < declared.rank(); ++i) {
    if (declared.dimensions[i] == Shape::kUnboundedSize) continue;
    if (declared.dimensions[i] != actual.dimensions[i] ||
        declared.dynamic_dimensions[i] != actual.dynamic_dimensions[i]) {
      return false;
    }
  }
  return true;
}

std::string FormatShapeAssertionMessage(std::string_view message, const std::vector<std::optional<int64_t>>& values) {
  std::string out;
  for (size_t i = 0; i < message.size();) {
    if (message.compare(i, 2, "{{") == 0) {
      out += '{';
      i += 2;
      continue;
    }
    if (message[i] == '{') {
      // {index[,layout][:format]}
      size_t j = i + 1;
      int64_t index = 0;
      while (j < message.size() && message[j] >= '0' && message[j] <= '9' && index < 1000000) {
        index = index * 10 + (message[j++] - '0');
      }
      const size_t close = message.find('}', j);
      if (j > i + 1 && close != std::string_view::npos &&
          (message[j] == '}' || message[j] == ',' || message[j] == ':') &&
          index < static_cast<int64_t>(values.size())) {
        const std::optional<int64_t>& v = values[static_cast<size_t>(index)];
        out += v.has_value() ? std::to_string(*v) : "?";
        i = close + 1;
        continue;
      }
    }
    out += message[i++];
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Setup

bool Lowerer::StartRefinement(const ModuleAst& ast, const Func** entry, FunctionSpecialization* spec) {
  *entry = nullptr;
  // Only a module that needs it is refined: for any other the given shapes are the caller's business (xla-run checks
  // its inputs against the parameters itself).
  bool dynamic = false;
  std::function<void(const Region&)> walk = [&](const Region& region) {
    for (const Block& block : region.blocks) {
      for (const BlockArg& arg : block.args) dynamic = dynamic || TypeHasUnboundedDims(arg.type);
      for (const Op& op : block.ops) {
        for (const Type& t : op.result_types) dynamic = dynamic || TypeHasUnboundedDims(t);
        for (const Type& t : op.operand_types) dynamic = dynamic || TypeHasUnboundedDims(t);
        for (const Region& nested : op.regions) walk(nested);
        if (dynamic) return;
      }
    }
  };
  for (const Func& f : ast.funcs) {
    dynamic = dynamic || SignatureHasUnboundedDims(f);
    if (!dynamic && f.has_body) walk(f.body);
  }
  if (!dynamic) return true;
  const Func* func = nullptr;
  if (auto it = funcs_.find("main"); it != funcs_.end() && it->second->has_body) {
    func = it->second;
  } else if (std::vector<const Func*> roots = UncalledFunctions(ast); roots.size() == 1) {
    func = roots[0];
  }
  // Without given shapes, a static entry signature gives them: the `?` are then inside (onnx-mlir broadcasts to
  // tensor<?x?xf32> from constant extent tensors), and refining fills them in as XLA's stablehlo-refine-shapes does.
  std::vector<Shape> declared_shapes;
  if (options_.entry_argument_shapes.empty()) {
    if (func == nullptr || SignatureHasUnboundedDims(*func)) return true;
    for (const FuncArg& arg : func->args) {
      declared_shapes.emplace_back();
      if (!ToShape(arg.type, arg.pos, &declared_shapes.back())) return false;
    }
  }
  refining_ = true;
  if (func == nullptr) {
    return Error(ast.pos, "shape refinement needs one entry function (@main, or the only function nothing calls)");
  }
  const std::vector<Shape>& given =
      options_.entry_argument_shapes.empty() ? declared_shapes : options_.entry_argument_shapes;
  if (given.size() != func->args.size()) {
    return Error(func->name_pos,
                 fmt::format("@{} takes {} argument{}, but {} argument shape{} given to refine its dynamic dimensions",
                             func->name, func->args.size(), func->args.size() == 1 ? "" : "s", given.size(),
                             given.size() == 1 ? " was" : "s were"));
  }
  for (size_t i = 0; i < given.size(); ++i) {
    const FuncArg& arg = func->args[i];
    Shape declared;
    if (!ToShape(arg.type, arg.pos, &declared)) return false;
    if (!declared.IsArray()) {
      if (HasUnboundedDims(declared)) {
        return Error(arg.pos, fmt::format("argument %{} of @{} has type {}: only array arguments can be refined",
                                          arg.name, func->name, DeclaredText(arg.type)));
      }
      spec->arg_shapes.push_back(declared);
      spec->arg_values.emplace_back();
      continue;
    }
    const Shape& shape = given[i];
    const std::string what = fmt::format("argument %{} of @{} has type {}, but its given shape is {}", arg.name,
                                         func->name, DeclaredText(arg.type), ShapeToString(shape, false));
    if (shape.element_type != PrimitiveType::kInvalid && shape.element_type != declared.element_type) {
      return Error(arg.pos, what + ": the element types differ");
    }
    if (shape.rank() != declared.rank()) return Error(arg.pos, what + ": the ranks differ");
    Shape refined = declared;
    for (int64_t d = 0; d < declared.rank(); ++d) {
      if (declared.dimensions[d] == Shape::kUnboundedSize) {
        refined.dimensions[d] = shape.dimensions[d];
        refined.dynamic_dimensions[d] = false;
      } else if (declared.dimensions[d] != shape.dimensions[d]) {
        return Error(arg.pos, fmt::format("{}: dimension {} is {}, not {}", what, d, declared.dimensions[d],
                                          shape.dimensions[d]));
      }
    }
    spec->arg_shapes.push_back(std::move(refined));
    spec->arg_values.emplace_back();
  }
  *entry = func;
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Folding

const Literal* Lowerer::FoldConstant(const Instruction* inst) {
  if (auto it = folded_.find(inst); it != folded_.end()) return it->second.has_value() ? &*it->second : nullptr;
  const Shape& shape = inst->shape();
  std::optional<Literal> value;
  const bool foldable =
      shape.IsArray() && IsIntOrPred(shape.element_type) && !HasUnboundedDims(shape) &&
      std::none_of(shape.dynamic_dimensions.begin(), shape.dynamic_dimensions.end(), [](bool b) { return b; }) &&
      shape.ElementCount().value_or(kMaxFoldElements + 1) <= kMaxFoldElements;
  if (!foldable) {
    // Not cached: nothing below could change that.
  } else if (inst->opcode() == Opcode::kConstant) {
    if (inst->has_literal() && !inst->literal().is_unknown()) value = inst->literal();
  } else if (inst->opcode() == Opcode::kGetDimensionSize) {
    const Shape& operand = inst->operand(0)->shape();
    const int64_t d = inst->dimensions().empty() ? -1 : inst->dimensions()[0];
    if (operand.IsArray() && d >= 0 && d < operand.rank() && !operand.dynamic_dimensions[d]) {
      value = Literal(Shape::Scalar(shape.element_type));
      value->SetFromInt64(0, operand.dimensions[d]);
    }
  } else if (fold_depth_ < kMaxFoldDepth && inst->operand_count() > 0 && !inst->HasSideEffect() &&
             inst->called_computations().empty()) {
    ++fold_depth_;
    std::vector<const Literal*> operands;
    for (const Instruction* operand : inst->operands()) {
      const Literal* v = FoldConstant(operand);
      if (v == nullptr) break;
      operands.push_back(v);
    }
    --fold_depth_;
    if (operands.size() == static_cast<size_t>(inst->operand_count())) value = Evaluate(*inst, operands);
  }
  auto [it, inserted] = folded_.emplace(inst, std::move(value));
  return it->second.has_value() ? &*it->second : nullptr;
}

bool Lowerer::RefineFromShapeOperand(const Op& op, size_t operand_index, Shape* shape) {
  if (operand_index >= op.operands.size()) {
    return OpError(op, fmt::format("'{}' needs a shape operand (operand {})", op.name, operand_index));
  }
  Instruction* operand = Lookup(op.operands[operand_index]);
  if (operand == nullptr) return false;
  const Literal* value = FoldConstant(operand);
  const size_t pos = op.operands[operand_index].pos;
  if (value == nullptr || value->shape().rank() != 1) {
    return Error(pos, fmt::format("the shape operand of '{}' is not a constant after shape refinement", op.name));
  }
  if (value->element_count() != shape->rank()) {
    return Error(pos, fmt::format("the shape operand of '{}' has {} elements for a rank-{} result", op.name,
                                  value->element_count(), shape->rank()));
  }
  for (int64_t d = 0; d < shape->rank(); ++d) {
    const int64_t size = value->GetAsInt64(d);
    if (size < 0)
      return Error(pos, fmt::format("the shape operand of '{}' gives dimension {} size {}", op.name, d, size));
    if (shape->dimensions[d] == Shape::kUnboundedSize) {
      shape->dimensions[d] = size;
      shape->dynamic_dimensions[d] = false;
    } else if (shape->dimensions[d] != size) {
      return Error(pos, fmt::format("the shape operand of '{}' gives dimension {} size {}, but the result type says {}",
                                    op.name, d, size, shape->dimensions[d]));
    }
  }
  return true;
}

bool Lowerer::RefineNewInstructions(const Op& op, size_t first) {
  const auto& instructions = scope_->comp->instructions();
  for (size_t i = first; i < instructions.size(); ++i) {
    Instruction* inst = instructions[i].get();
    if (!HasUnboundedDims(inst->shape())) continue;
    absl::StatusOr<Shape> inferred = InferShape(*inst);
    if (inferred.ok() && HasUnboundedDims(*inferred) &&
        (inst->opcode() == Opcode::kReshape || inst->opcode() == Opcode::kDynamicReshape)) {
      // One unknown size of a reshape follows from the element count.
      Shape s = *inferred;
      int64_t known = 1, unknown = 0;
      for (int64_t d : s.dimensions) {
        if (d == Shape::kUnboundedSize) {
          ++unknown;
        } else {
          known *= d;
        }
      }
      const Shape& in = inst->operand(0)->shape();
      const int64_t count = HasUnboundedDims(in) ? -1 : in.ElementCount().value_or(-1);
      if (unknown == 1 && known > 0 && count >= 0 && count % known == 0) {
        for (size_t d = 0; d < s.dimensions.size(); ++d) {
          if (s.dimensions[d] == Shape::kUnboundedSize) {
            s.dimensions[d] = count / known;
            s.dynamic_dimensions[d] = false;
          }
        }
        inferred = s;
      }
    }
    if (!inferred.ok()) {
      return OpError(op, fmt::format("cannot refine the result type of '{}': {}", op.name,
                                     std::string(inferred.status().message())));
    }
    if (HasUnboundedDims(*inferred)) {
      return OpError(op, fmt::format("cannot refine the result type of '{}' from its operands: it stays {}", op.name,
                                     ShapeToString(*inferred, false)));
    }
    if (!ShapeRefines(inst->shape(), *inferred)) {
      return OpError(op, fmt::format("'{}' produces {} once its operands are refined, but its result type says {}",
                                     op.name, ShapeToString(*inferred, false), ShapeToString(inst->shape(), false)));
    }
    Shape refined = *inferred;
    if (inst->shape().layout.has_value() && !refined.IsTuple()) refined.layout = inst->shape().layout;
    inst->set_shape(std::move(refined));
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Calls

Computation* Lowerer::CalleeFor(const std::string& name, const Op& call, const std::vector<Instruction*>& args) {
  auto f = funcs_.find(name);
  if (!refining_ || f == funcs_.end() || !f->second->has_body) return GetFunctionComputation(name, &call);
  const Func& func = *f->second;
  if (args.size() != func.args.size()) {
    return OpError(call,
                   fmt::format("@{} takes {} arguments, but the call passes {}", name, func.args.size(), args.size())),
           nullptr;
  }
  FunctionSpecialization spec;
  bool needed = SignatureHasUnboundedDims(func);
  std::string key = name;
  for (size_t i = 0; i < args.size(); ++i) {
    Shape declared;
    if (!ToShape(func.args[i].type, func.args[i].pos, &declared)) return nullptr;
    if (!ShapeRefines(declared, args[i]->shape())) {
      return Error(call.operands[i].pos,
                   fmt::format("argument {} of the call to @{} has shape {}, but @{} expects {}", i, name,
                               ShapeToString(args[i]->shape(), false), name, TypeToString(func.args[i].type))),
             nullptr;
    }
    spec.arg_shapes.push_back(args[i]->shape());
    key += "|" + ShapeToString(args[i]->shape(), true);
    std::optional<Literal> value;
    // Dimension variables are integer scalars.
    if (args[i]->shape().IsArray() && args[i]->shape().rank() == 0 && IsIntegralType(args[i]->shape().element_type)) {
      if (const Literal* v = FoldConstant(args[i])) {
        value = *v;
        key += "=" + std::to_string(v->GetAsInt64(0));
        needed = true;
      }
    }
    spec.arg_values.push_back(std::move(value));
  }
  if (!needed) return GetFunctionComputation(name, &call);
  if (auto it = specializations_.find(key); it != specializations_.end()) return it->second;
  Computation* comp = LowerFunctionChecked(func, call.name_pos, &spec);
  if (comp != nullptr) specializations_[key] = comp;
  return comp;
}

// ---------------------------------------------------------------------------------------------------------------
// Custom calls

bool Lowerer::IsRefinementCallTarget(std::string_view target) {
  return target == "shape_assertion" || target == "stablehlo.shape_assertion" || target == "stablehlo.dynamic_top_k" ||
         target == "stablehlo.dynamic_approx_top_k" || target == "stablehlo.dynamic_reduce_window" ||
         target == "stablehlo.dynamic_rng_bit_generator";
}

namespace {

// The known integer values of operand `i` of `op` (a shape or size operand of a dynamic custom call).
bool OperandInts(Lowerer& l, const Op& op, const std::vector<Instruction*>& operands, size_t i,
                 std::vector<int64_t>* out) {
  const Literal* value = l.FoldConstant(operands[i]);
  if (value == nullptr) {
    return l.Error(op.operands[i].pos,
                   fmt::format("operand {} of '{}' is not a constant after shape refinement", i, op.name));
  }
  out->clear();
  for (int64_t k = 0; k < value->element_count(); ++k) out->push_back(value->GetAsInt64(k));
  return true;
}

bool LowerShapeAssertion(Lowerer& l, const Op& op, const std::vector<Instruction*>& operands) {
  std::string message;
  if (!l.GetString(op, "error_message", &message)) return false;
  if (operands.empty() || !operands[0]->shape().IsArray() || operands[0]->shape().rank() != 0 ||
      !IsPredType(operands[0]->shape().element_type)) {
    return l.OpError(op, "shape_assertion needs a boolean scalar condition as its first operand");
  }
  const Literal* holds = l.FoldConstant(operands[0]);
  if (holds == nullptr) {
    return l.OpError(op, fmt::format("shape_assertion's condition is not a constant: the module's dimension sizes "
                                     "must be known when it is compiled ({})",
                                     l.refining() ? "its shapes were refined, but this value still depends on data"
                                                  : "give the entry arguments' shapes to refine them"));
  }
  if (holds->GetAsInt64(0) != 0) return true;
  std::vector<std::optional<int64_t>> values;
  for (size_t i = 1; i < operands.size(); ++i) {
    const Literal* v = l.FoldConstant(operands[i]);
    values.push_back(v != nullptr && v->element_count() == 1 ? std::optional<int64_t>(v->GetAsInt64(0)) : std::nullopt);
  }
  return l.OpError(op, FormatShapeAssertionMessage(message, values));
}

bool LowerDynamicTopK(Lowerer& l, const Op& op, const std::vector<Instruction*>& operands, Results* results) {
  if (operands.size() != 2) return l.OpError(op, "stablehlo.dynamic_top_k takes (operand, k)");
  std::vector<int64_t> k;
  if (!OperandInts(l, op, operands, 1, &k)) return false;
  const Shape& in = operands[0]->shape();
  if (k.size() != 1 || !in.IsArray() || in.rank() < 1 || k[0] < 0 || k[0] > in.dimensions.back()) {
    return l.OpError(op,
                     fmt::format("stablehlo.dynamic_top_k needs 0 <= k <= the operand's last dimension, but k "
                                 "is {} for {}",
                                 k.empty() ? std::string("empty") : std::to_string(k[0]), ShapeToString(in, false)));
  }
  Shape values(in.element_type, in.dimensions);
  values.dimensions.back() = k[0];
  Shape indices = values;
  indices.element_type = PrimitiveType::kS32;
  Instruction* topk = l.Emit(Opcode::kTopK, Shape::Tuple({values, indices}), {operands[0]});
  topk->SetAttr("k", AttrValue::Int(k[0]));
  topk->SetAttr("largest", AttrValue::Bool(true));
  *results = l.SplitTuple(topk, 2);
  return true;
}

// XLA's ApproxTopK custom call (passes/library_custom_calls.cc runs it) with top_k = k in its backend_config.
bool LowerDynamicApproxTopK(Lowerer& l, const Op& op, std::vector<Instruction*> operands, Results* results) {
  // indices_of_shape_operands: operands that only give the results' shapes (JAX's result_shapes).
  std::vector<int64_t> shape_indices;
  if (!l.GetI64List(op, "indices_of_shape_operands", &shape_indices, false)) return false;
  std::vector<std::vector<int64_t>> result_dims;
  std::vector<Instruction*> kept;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (std::find(shape_indices.begin(), shape_indices.end(), static_cast<int64_t>(i)) == shape_indices.end()) {
      kept.push_back(operands[i]);
      continue;
    }
    result_dims.emplace_back();
    if (!OperandInts(l, op, operands, i, &result_dims.back())) return false;
  }
  if (kept.size() < 3 || kept.size() % 2 != 1) {
    return l.OpError(op, "stablehlo.dynamic_approx_top_k takes (inputs..., init values..., k)");
  }
  const size_t n = (kept.size() - 1) / 2;
  const Literal* k_value = l.FoldConstant(kept.back());
  if (k_value == nullptr || k_value->element_count() != 1) {
    return l.OpError(op, "the k operand of stablehlo.dynamic_approx_top_k is not a constant after shape refinement");
  }
  const Attr* config = l.FindAttr(op, "mhlo.backend_config");
  if (config == nullptr || config->kind != Attr::Kind::kDict || config->Find("reduction_dim") == nullptr) {
    return l.OpError(op, "stablehlo.dynamic_approx_top_k needs an mhlo.backend_config with reduction_dim");
  }
  int64_t dim = 0;
  if (!l.DictInt(*config, "reduction_dim", &dim, 0)) return false;
  const Shape& first = kept[0]->shape();
  if (!first.IsArray() || dim < 0 || dim >= first.rank()) {
    return l.OpError(op, fmt::format("reduction_dim {} is out of range for {}", dim, ShapeToString(first, false)));
  }
  std::vector<Shape> shapes;
  for (size_t i = 0; i < n; ++i) {
    Shape s(kept[i]->shape().element_type, first.dimensions);
    if (!result_dims.empty()) {
      if (result_dims.size() != n || static_cast<int64_t>(result_dims[i].size()) != first.rank()) {
        return l.OpError(op, "indices_of_shape_operands must give one rank-matching shape per result");
      }
      s.dimensions = result_dims[i];
    } else {
      s.dimensions[static_cast<size_t>(dim)] = k_value->GetAsInt64(0);
    }
    shapes.push_back(std::move(s));
  }
  std::vector<Computation*> called;
  const Attr* comps = l.FindAttr(op, "called_computations");
  if (comps == nullptr || comps->kind != Attr::Kind::kArray || comps->elements.size() != 1 ||
      comps->elements[0]->kind != Attr::Kind::kSymbol) {
    return l.OpError(op, "stablehlo.dynamic_approx_top_k needs one comparator in called_computations");
  }
  Computation* comparator = l.GetFunctionComputation(comps->elements[0]->str, &op);
  if (comparator == nullptr) return false;
  kept.pop_back();
  Instruction* cc = l.Emit(Opcode::kCustomCall, n == 1 ? shapes[0] : Shape::Tuple(shapes), std::move(kept));
  cc->SetAttr("custom_call_target", AttrValue::String("ApproxTopK"));
  // The dictionary's source text with top_k added (ApproxTopK reads `key = value` entries from it).
  std::string text = config->str;
  const size_t brace = text.find('{');
  text = brace == std::string::npos
             ? fmt::format("{{top_k = {} : i64}}", k_value->GetAsInt64(0))
             : text.substr(0, brace + 1) + fmt::format("top_k = {} : i64, ", k_value->GetAsInt64(0)) +
                   text.substr(brace + 1);
  cc->set_backend_config(text, /*raw=*/true);
  cc->set_called_computations({comparator});
  if (n == 1) {
    results->push_back(cc);
  } else {
    *results = l.SplitTuple(cc, static_cast<int64_t>(n));
  }
  return true;
}

bool LowerDynamicReduceWindow(Lowerer& l, const Op& op, const std::vector<Instruction*>& operands, Results* results) {
  if (operands.size() < 7 || (operands.size() - 5) % 2 != 0) {
    return l.OpError(op,
                     "stablehlo.dynamic_reduce_window takes (inputs..., init values..., window_dimensions, "
                     "window_strides, base_dilations, window_dilations, padding)");
  }
  const size_t n = (operands.size() - 5) / 2;
  std::vector<int64_t> sizes, strides, base, window, padding;
  if (!OperandInts(l, op, operands, 2 * n, &sizes) || !OperandInts(l, op, operands, 2 * n + 1, &strides) ||
      !OperandInts(l, op, operands, 2 * n + 2, &base) || !OperandInts(l, op, operands, 2 * n + 3, &window) ||
      !OperandInts(l, op, operands, 2 * n + 4, &padding)) {
    return false;
  }
  const size_t rank = static_cast<size_t>(operands[0]->shape().rank());
  if (sizes.size() != rank || strides.size() != rank || base.size() != rank || window.size() != rank ||
      padding.size() != 2 * rank) {
    return l.OpError(op, fmt::format("the window operands of stablehlo.dynamic_reduce_window must have {} entries "
                                     "(padding {} x 2) for the rank-{} inputs",
                                     rank, rank, rank));
  }
  Window w;
  for (size_t d = 0; d < rank; ++d) {
    WindowDimension wd;
    wd.size = sizes[d];
    wd.stride = strides[d];
    wd.base_dilation = base[d];
    wd.window_dilation = window[d];
    wd.padding_low = padding[2 * d];
    wd.padding_high = padding[2 * d + 1];
    w.dimensions.push_back(wd);
  }
  const Attr* comps = l.FindAttr(op, "called_computations");
  if (comps == nullptr || comps->kind != Attr::Kind::kArray || comps->elements.size() != 1 ||
      comps->elements[0]->kind != Attr::Kind::kSymbol) {
    return l.OpError(op, "stablehlo.dynamic_reduce_window needs its body in called_computations");
  }
  Computation* body = l.GetFunctionComputation(comps->elements[0]->str, &op);
  if (body == nullptr) return false;
  std::vector<Shape> shapes;
  if (!l.ResultShapes(op, &shapes)) return false;
  if (shapes.size() != n) return l.OpError(op, "stablehlo.dynamic_reduce_window needs one result per input");
  std::vector<Instruction*> args(operands.begin(), operands.begin() + static_cast<int64_t>(2 * n));
  Instruction* rw = l.Emit(Opcode::kReduceWindow, n == 1 ? shapes[0] : Shape::Tuple(shapes), std::move(args));
  rw->SetAttr("window", AttrValue::Of(std::move(w)));
  rw->set_called_computations({body});
  if (n == 1) {
    results->push_back(rw);
  } else {
    *results = l.SplitTuple(rw, static_cast<int64_t>(n));
  }
  return true;
}

bool LowerDynamicRngBitGenerator(Lowerer& l, const Op& op, const std::vector<Instruction*>& operands,
                                 Results* results) {
  if (operands.size() != 2) return l.OpError(op, "stablehlo.dynamic_rng_bit_generator takes (state, output_shape)");
  std::vector<Shape> shapes;
  std::vector<int64_t> dims;
  std::string algorithm;
  if (!l.ResultShapes(op, &shapes) || !OperandInts(l, op, operands, 1, &dims) ||
      !l.GetEnum(op, "rng_algorithm", &algorithm, "DEFAULT")) {
    return false;
  }
  if (shapes.size() != 2) return l.OpError(op, "stablehlo.dynamic_rng_bit_generator has two results (state, output)");
  const std::string hlo_algorithm = algorithm == "DEFAULT"     ? "rng_default"
                                    : algorithm == "THREE_FRY" ? "rng_three_fry"
                                    : algorithm == "PHILOX"    ? "rng_philox"
                                                               : "";
  if (hlo_algorithm.empty()) return l.OpError(op, fmt::format("unknown rng algorithm {}", algorithm));
  Shape output(shapes[1].element_type, dims);
  if (!ShapeRefines(shapes[1], output)) {
    return l.OpError(op, fmt::format("the output_shape operand gives {}, but the result type says {}",
                                     ShapeToString(output, false), ShapeToString(shapes[1], false)));
  }
  Instruction* rng = l.Emit(Opcode::kRngBitGenerator, Shape::Tuple({operands[0]->shape(), output}), {operands[0]});
  rng->SetAttr("algorithm", AttrValue::Enum(hlo_algorithm));
  *results = l.SplitTuple(rng, 2);
  return true;
}

}  // namespace

bool Lowerer::LowerRefinementCall(const Op& op, std::string_view target, Results* results) {
  std::vector<Instruction*> operands;
  if (!LookupOperands(op, &operands)) return false;
  if (target == "shape_assertion" || target == "stablehlo.shape_assertion") {
    return LowerShapeAssertion(*this, op, operands);
  }
  if (target == "stablehlo.dynamic_top_k") return LowerDynamicTopK(*this, op, operands, results);
  if (target == "stablehlo.dynamic_approx_top_k") return LowerDynamicApproxTopK(*this, op, operands, results);
  if (target == "stablehlo.dynamic_reduce_window") return LowerDynamicReduceWindow(*this, op, operands, results);
  return LowerDynamicRngBitGenerator(*this, op, operands, results);
}

}  // namespace xlac::shlo
