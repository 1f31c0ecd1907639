// arith, math, tensor and shape ops that exporters leave in StableHLO modules (torch-mlir's `arith.constant`, JAX's
// scalar index arithmetic, onnx-mlir's extent tensors), each lowered to the HLO that computes the same values. MLIR's
// signless integers are HLO's signed types; the unsigned arith ops (divui, cmpi ult, extui, uitofp, ...) reinterpret
// the bits as unsigned around the operation. Only what maps onto HLO with static shapes is accepted; the rest is
// "unsupported op".
#include <limits>
#include <unordered_map>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

constexpr int64_t kDynamicIndex = std::numeric_limits<int64_t>::min();

PrimitiveType UnsignedOf(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kS2:
      return PrimitiveType::kU2;
    case PrimitiveType::kS4:
      return PrimitiveType::kU4;
    case PrimitiveType::kS8:
      return PrimitiveType::kU8;
    case PrimitiveType::kS16:
      return PrimitiveType::kU16;
    case PrimitiveType::kS32:
      return PrimitiveType::kU32;
    case PrimitiveType::kS64:
      return PrimitiveType::kU64;
    default:
      return t;  // already unsigned, pred, or not an integer
  }
}

Instruction* BitcastTo(Lowerer& l, Instruction* x, PrimitiveType type) {
  if (x->shape().element_type == type) return x;
  Shape shape = x->shape();
  shape.element_type = type;
  return l.Emit(Opcode::kBitcastConvert, std::move(shape), {x});
}

bool Operands(Lowerer& l, const Op& op, size_t n, std::vector<Instruction*>* out) {
  if (op.operands.size() != n) {
    return l.OpError(
        op, fmt::format("'{}' takes {} operand{}, but has {}", op.name, n, n == 1 ? "" : "s", op.operands.size()));
  }
  return l.LookupOperands(op, out);
}

// Binary ops: name -> (opcode, operate on the unsigned reinterpretation).
const std::unordered_map<std::string_view, std::pair<Opcode, bool>>& BinaryOps() {
  static const std::unordered_map<std::string_view, std::pair<Opcode, bool>> ops = {
      {"arith.addi", {Opcode::kAdd, false}},
      {"arith.addf", {Opcode::kAdd, false}},
      {"arith.subi", {Opcode::kSubtract, false}},
      {"arith.subf", {Opcode::kSubtract, false}},
      {"arith.muli", {Opcode::kMultiply, false}},
      {"arith.mulf", {Opcode::kMultiply, false}},
      {"arith.divf", {Opcode::kDivide, false}},
      {"arith.divsi", {Opcode::kDivide, false}},
      {"arith.divui", {Opcode::kDivide, true}},
      {"arith.remf", {Opcode::kRemainder, false}},
      {"arith.remsi", {Opcode::kRemainder, false}},
      {"arith.remui", {Opcode::kRemainder, true}},
      {"arith.maximumf", {Opcode::kMaximum, false}},
      {"arith.minimumf", {Opcode::kMinimum, false}},
      {"arith.maxsi", {Opcode::kMaximum, false}},
      {"arith.minsi", {Opcode::kMinimum, false}},
      {"arith.maxui", {Opcode::kMaximum, true}},
      {"arith.minui", {Opcode::kMinimum, true}},
      {"arith.andi", {Opcode::kAnd, false}},
      {"arith.ori", {Opcode::kOr, false}},
      {"arith.xori", {Opcode::kXor, false}},
      {"arith.shli", {Opcode::kShiftLeft, false}},
      {"arith.shrsi", {Opcode::kShiftRightArithmetic, false}},
      {"arith.shrui", {Opcode::kShiftRightLogical, false}},
      {"math.powf", {Opcode::kPower, false}},
      {"math.atan2", {Opcode::kAtan2, false}},
      {"math.ipowi", {Opcode::kPower, false}},
  };
  return ops;
}

const std::unordered_map<std::string_view, Opcode>& UnaryOps() {
  static const std::unordered_map<std::string_view, Opcode> ops = {
      {"arith.negf", Opcode::kNegate},
      {"math.absf", Opcode::kAbs},
      {"math.absi", Opcode::kAbs},
      {"math.exp", Opcode::kExp},
      {"math.expm1", Opcode::kExpm1},
      {"math.log", Opcode::kLog},
      {"math.log1p", Opcode::kLog1p},
      {"math.sqrt", Opcode::kSqrt},
      {"math.rsqrt", Opcode::kRsqrt},
      {"math.cbrt", Opcode::kCbrt},
      {"math.tanh", Opcode::kTanh},
      {"math.tan", Opcode::kTan},
      {"math.sin", Opcode::kSin},
      {"math.cos", Opcode::kCos},
      {"math.floor", Opcode::kFloor},
      {"math.ceil", Opcode::kCeil},
      {"math.erf", Opcode::kErf},
      {"math.ctlz", Opcode::kClz},
      {"math.ctpop", Opcode::kPopulationCount},
      {"math.roundeven", Opcode::kRoundNearestEven},
      {"math.round", Opcode::kRoundNearestAfz},
  };
  return ops;
}

bool LowerBinary(Lowerer& l, const Op& op, Results* results) {
  const auto [opcode, is_unsigned] = BinaryOps().at(op.name);
  std::vector<Instruction*> x;
  if (!Operands(l, op, 2, &x)) return false;
  if (!x[0]->shape().Compatible(x[1]->shape())) {
    return l.OpError(op, fmt::format("the operands of '{}' have shapes {} and {}", op.name,
                                     ShapeToString(x[0]->shape(), false), ShapeToString(x[1]->shape(), false)));
  }
  const PrimitiveType type = x[0]->shape().element_type;
  if (is_unsigned && IsIntegralType(type)) {
    const PrimitiveType u = UnsignedOf(type);
    Instruction* r = l.Binary(opcode, BitcastTo(l, x[0], u), BitcastTo(l, x[1], u));
    results->push_back(BitcastTo(l, r, type));
  } else {
    results->push_back(l.Binary(opcode, x[0], x[1]));
  }
  return true;
}

bool LowerUnary(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  if (!Operands(l, op, 1, &x)) return false;
  results->push_back(l.Unary(UnaryOps().at(op.name), x[0]));
  return true;
}

bool LowerArithConstant(Lowerer& l, const Op& op, Results* results) {
  const Attr* value;
  Shape shape;
  if (!l.RequireAttr(op, "value", &value) || !l.ResultShape(op, 0, &shape)) return false;
  if (value->kind == Attr::Kind::kDense) {
    if (!shape.Compatible(value->dense->shape())) {
      return l.Error(value->pos, fmt::format("constant value has shape {}, but the result type is {}",
                                             ShapeToString(value->dense->shape(), false), ShapeToString(shape, false)));
    }
    results->push_back(l.EmitConstant(*value->dense));
    return true;
  }
  if (shape.rank() != 0) {
    return l.Error(value->pos, fmt::format("a scalar constant cannot have the type {}", ShapeToString(shape, false)));
  }
  Literal literal(shape);
  const PrimitiveType type = shape.element_type;
  if (value->kind == Attr::Kind::kBool || (value->kind == Attr::Kind::kInt && !IsFloatingPointType(type))) {
    if (IsPredType(type)) {
      literal.SetFromInt64(0, value->int_value != 0 ? 1 : 0);
    } else if (IsIntegralType(type)) {
      literal.SetFromInt64(0, value->int_value);
    } else {
      return l.Error(value->pos,
                     fmt::format("an integer constant cannot have the type {}", ShapeToString(shape, false)));
    }
  } else if (value->kind == Attr::Kind::kFloat || value->kind == Attr::Kind::kInt) {
    if (!IsFloatingPointType(type)) {
      return l.Error(value->pos, fmt::format("a float constant cannot have the type {}", ShapeToString(shape, false)));
    }
    literal.SetFromDouble(0, value->float_value);
  } else {
    return l.Error(value->pos, "arith.constant needs a number, a boolean or a dense<...> literal");
  }
  results->push_back(l.EmitConstant(std::move(literal)));
  return true;
}

// arith.cmpi / arith.cmpf: the predicate is a keyword (pretty form) or its enum number (generic form).
bool LowerArithCompare(Lowerer& l, const Op& op, Results* results) {
  static const char* kIntPredicates[] = {"eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"};
  static const char* kFloatPredicates[] = {"false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord",
                                           "ueq",   "ugt", "uge", "ult", "ule", "une", "uno", "true"};
  const bool is_float = op.name == "arith.cmpf";
  const Attr* attr;
  if (!l.RequireAttr(op, "predicate", &attr)) return false;
  std::string predicate;
  if (attr->kind == Attr::Kind::kInt) {
    const int64_t n = attr->int_value;
    const int64_t count = is_float ? 16 : 10;
    if (n < 0 || n >= count) return l.Error(attr->pos, fmt::format("invalid {} predicate {}", op.name, n));
    predicate = is_float ? kFloatPredicates[n] : kIntPredicates[n];
  } else if (attr->kind == Attr::Kind::kKeyword || attr->kind == Attr::Kind::kString) {
    predicate = attr->str;
  } else {
    return l.Error(attr->pos, "expected a comparison predicate");
  }
  std::vector<Instruction*> x;
  if (!Operands(l, op, 2, &x)) return false;
  if (!x[0]->shape().Compatible(x[1]->shape())) {
    return l.OpError(op, fmt::format("the operands of '{}' have shapes {} and {}", op.name,
                                     ShapeToString(x[0]->shape(), false), ShapeToString(x[1]->shape(), false)));
  }
  Instruction* a = x[0];
  Instruction* b = x[1];
  auto direction_of = [](std::string_view p) -> std::string {
    if (p == "eq") return "EQ";
    if (p == "ne") return "NE";
    if (p == "lt") return "LT";
    if (p == "le") return "LE";
    if (p == "gt") return "GT";
    return "GE";
  };
  if (!is_float) {
    bool known = false;
    for (const char* p : kIntPredicates) known = known || predicate == p;
    if (!known) return l.Error(attr->pos, fmt::format("unknown arith.cmpi predicate '{}'", predicate));
    if (predicate[0] == 'u') {
      a = BitcastTo(l, a, UnsignedOf(a->shape().element_type));
      b = BitcastTo(l, b, UnsignedOf(b->shape().element_type));
    }
    std::string_view rel = predicate.size() == 3 ? std::string_view(predicate).substr(1) : std::string_view(predicate);
    results->push_back(l.Compare(a, b, direction_of(rel)));
    return true;
  }
  bool known = false;
  for (const char* p : kFloatPredicates) known = known || predicate == p;
  if (!known) return l.Error(attr->pos, fmt::format("unknown arith.cmpf predicate '{}'", predicate));
  if (predicate == "false" || predicate == "true") {
    Shape shape = a->shape();
    shape.element_type = PrimitiveType::kPred;
    Instruction* c = l.ConstScalar(PrimitiveType::kPred, predicate == "true" ? 1 : 0);
    results->push_back(shape.rank() == 0 ? c : l.BroadcastTo(c, shape, {}));
    return true;
  }
  // HLO's float comparisons are false on NaN except NE, which is true: the ordered (o*) and unordered (u*) forms
  // are built from them and `ord`.
  auto ordered = [&]() { return l.Binary(Opcode::kAnd, l.Compare(a, a, "EQ"), l.Compare(b, b, "EQ")); };
  Instruction* r;
  if (predicate == "ord") {
    r = ordered();
  } else if (predicate == "uno") {
    r = l.Unary(Opcode::kNot, ordered());
  } else if (predicate == "one") {
    r = l.Binary(Opcode::kAnd, l.Compare(a, b, "NE"), ordered());
  } else if (predicate == "une") {
    r = l.Compare(a, b, "NE");
  } else if (predicate == "ueq") {
    r = l.Binary(Opcode::kOr, l.Compare(a, b, "EQ"), l.Unary(Opcode::kNot, ordered()));
  } else if (predicate[0] == 'o') {
    r = l.Compare(a, b, direction_of(std::string_view(predicate).substr(1)));
  } else {
    // ugt = !(a <= b), uge = !(a < b), ult = !(a >= b), ule = !(a > b): true on NaN.
    static const std::unordered_map<std::string_view, const char*> kNegated = {
        {"ugt", "LE"}, {"uge", "LT"}, {"ult", "GE"}, {"ule", "GT"}};
    r = l.Unary(Opcode::kNot, l.Compare(a, b, kNegated.at(predicate)));
  }
  results->push_back(r);
  return true;
}

bool LowerArithSelect(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  if (!Operands(l, op, 3, &x)) return false;
  if (x[0]->shape().element_type != PrimitiveType::kPred) {
    return l.Error(op.operands[0].pos, "the condition of arith.select must be i1");
  }
  if (!x[1]->shape().Compatible(x[2]->shape())) {
    return l.OpError(op, "the values of arith.select have different shapes");
  }
  Instruction* pred = x[0];
  if (pred->shape().rank() == 0 && x[1]->shape().rank() > 0) pred = l.BroadcastTo(pred, x[1]->shape(), {});
  results->push_back(l.Select(pred, x[1], x[2]));
  return true;
}

// The casts: extf, truncf, extsi, extui, trunci, sitofp, uitofp, fptosi, fptoui, index_cast(ui), bitcast.
bool LowerArithCast(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  Shape shape;
  if (!Operands(l, op, 1, &x) || !l.ResultShape(op, 0, &shape)) return false;
  Instruction* in = x[0];
  if (in->shape().dimensions != shape.dimensions) {
    return l.OpError(op, fmt::format("'{}' cannot change the shape {} to {}", op.name,
                                     ShapeToString(in->shape(), false), ShapeToString(shape, false)));
  }
  const PrimitiveType from = in->shape().element_type;
  const PrimitiveType to = shape.element_type;
  const std::string_view name = op.name;
  if (name == "arith.bitcast") {
    if (BitWidth(from) != BitWidth(to)) return l.OpError(op, "arith.bitcast needs types of the same width");
    results->push_back(BitcastTo(l, in, to));
    return true;
  }
  const bool from_unsigned = name == "arith.extui" || name == "arith.uitofp" || name == "arith.index_castui";
  const bool to_unsigned = name == "arith.fptoui";
  if (IsPredType(from) && (name == "arith.extsi" || name == "arith.index_cast" || name == "arith.sitofp")) {
    // A signed i1 is 0 or -1.
    Instruction* zero = l.ConstLike(0, l.Convert(in, to));
    results->push_back(l.Select(in, l.ConstLike(-1, zero), zero));
    return true;
  }
  if (IsPredType(to) && IsIntegralType(from)) {
    // Truncation keeps the low bit.
    Instruction* low = l.Binary(Opcode::kAnd, in, l.ConstLike(1, in));
    results->push_back(l.Compare(low, l.ConstLike(0, in), "NE"));
    return true;
  }
  if (from_unsigned && IsIntegralType(from)) in = BitcastTo(l, in, UnsignedOf(from));
  if (to_unsigned && IsIntegralType(to)) {
    results->push_back(BitcastTo(l, l.Convert(in, UnsignedOf(to)), to));
    return true;
  }
  if (from_unsigned && IsIntegralType(to) && BitWidth(to) > BitWidth(from)) {
    // Zero extension: widen as unsigned, then reinterpret.
    results->push_back(BitcastTo(l, l.Convert(in, UnsignedOf(to)), to));
    return true;
  }
  results->push_back(l.Convert(in, to));
  return true;
}

// ---- tensor ----

bool LowerTensorEmpty(Lowerer& l, const Op& op, Results* results) {
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  if (!op.operands.empty()) return l.OpError(op, "tensor.empty with dynamic sizes is not supported");
  // The contents are undefined; zeros are one valid choice.
  Instruction* zero = l.ConstScalar(shape.element_type, 0);
  results->push_back(shape.rank() == 0 ? zero : l.BroadcastTo(zero, shape, {}));
  return true;
}

// With static shapes a dimension size is a constant; the dimension must be one too (it always is in exporters'
// output: an arith.constant index).
bool LowerTensorDim(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  Shape shape;
  if (!Operands(l, op, 2, &x) || !l.ResultShape(op, 0, &shape)) return false;
  const Instruction* index = x[1];
  while (index->opcode() == Opcode::kConvert || index->opcode() == Opcode::kReshape) index = index->operand(0);
  if (index->opcode() != Opcode::kConstant || index->shape().rank() != 0) {
    return l.Error(op.operands[1].pos, "tensor.dim needs a constant dimension");
  }
  if (index->literal().is_unknown()) {
    return l.Error(op.operands[1].pos, "tensor.dim needs a constant dimension, but the print elided its value");
  }
  const int64_t d = index->literal().GetAsInt64(0);
  if (d < 0 || d >= x[0]->shape().rank()) {
    return l.Error(op.operands[1].pos,
                   fmt::format("dimension {} is out of range for rank {}", d, x[0]->shape().rank()));
  }
  Literal literal(shape);
  literal.SetFromInt64(0, x[0]->shape().dimensions[static_cast<size_t>(d)]);
  results->push_back(l.EmitConstant(std::move(literal)));
  return true;
}

bool LowerTensorCast(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  Shape shape;
  if (!Operands(l, op, 1, &x) || !l.ResultShape(op, 0, &shape)) return false;
  if (op.name == "tensor.bitcast") {
    results->push_back(BitcastTo(l, x[0], shape.element_type));
    return true;
  }
  if (!shape.Compatible(x[0]->shape())) {
    return l.OpError(op, fmt::format("tensor.cast of {} to the incompatible {}", ShapeToString(x[0]->shape(), false),
                                     ShapeToString(shape, false)));
  }
  results->push_back(x[0]);
  return true;
}

// The indices of tensor.extract / tensor.insert as HLO dynamic-slice start indices (s64 scalars).
bool StartIndices(Lowerer& l, const Op& op, const std::vector<Instruction*>& values, size_t first, int64_t rank,
                  std::vector<Instruction*>* out) {
  if (static_cast<int64_t>(values.size() - first) != rank) {
    return l.OpError(op, fmt::format("'{}' needs {} indices, but has {}", op.name, rank, values.size() - first));
  }
  for (size_t i = first; i < values.size(); ++i) {
    if (values[i]->shape().rank() != 0 || !IsIntegralType(values[i]->shape().element_type)) {
      return l.Error(op.operands[i].pos, "an index must be an integer scalar");
    }
    out->push_back(l.Convert(values[i], PrimitiveType::kS64));
  }
  return true;
}

bool LowerTensorExtract(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  if (op.operands.empty()) return l.OpError(op, "tensor.extract needs a tensor operand");
  if (!l.LookupOperands(op, &x)) return false;
  Instruction* t = x[0];
  std::vector<Instruction*> operands = {t};
  if (!StartIndices(l, op, x, 1, t->shape().rank(), &operands)) return false;
  if (t->shape().rank() == 0) {
    results->push_back(t);
    return true;
  }
  Shape one(t->shape().element_type, std::vector<int64_t>(static_cast<size_t>(t->shape().rank()), 1));
  Instruction* ds = l.Emit(Opcode::kDynamicSlice, one, std::move(operands));
  ds->SetAttr("dynamic_slice_sizes", AttrValue::IntList(one.dimensions));
  results->push_back(l.Emit(Opcode::kReshape, Shape::Scalar(t->shape().element_type), {ds}));
  return true;
}

bool LowerTensorInsert(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  if (op.operands.size() < 2) return l.OpError(op, "tensor.insert needs a scalar and a tensor");
  if (!l.LookupOperands(op, &x)) return false;
  Instruction* dest = x[1];
  std::vector<Instruction*> operands;
  const Shape one(dest->shape().element_type, std::vector<int64_t>(static_cast<size_t>(dest->shape().rank()), 1));
  if (x[0]->shape().rank() != 0 || x[0]->shape().element_type != dest->shape().element_type) {
    return l.Error(op.operands[0].pos, "tensor.insert needs a scalar of the tensor's element type");
  }
  operands = {dest, l.Emit(Opcode::kReshape, one, {x[0]})};
  if (!StartIndices(l, op, x, 2, dest->shape().rank(), &operands)) return false;
  if (dest->shape().rank() == 0) {
    results->push_back(x[0]);
    return true;
  }
  results->push_back(l.Emit(Opcode::kDynamicUpdateSlice, dest->shape(), std::move(operands)));
  return true;
}

bool LowerTensorFromElements(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  Shape shape;
  if (!l.LookupOperands(op, &x) || !l.ResultShape(op, 0, &shape)) return false;
  std::optional<int64_t> count = shape.ElementCount();
  if (!count.has_value() || *count != static_cast<int64_t>(x.size())) {
    return l.OpError(op,
                     fmt::format("tensor.from_elements has {} elements for {}", x.size(), ShapeToString(shape, false)));
  }
  if (x.empty()) {
    results->push_back(l.EmitConstant(Literal(shape)));
    return true;
  }
  std::vector<Instruction*> parts;
  const Shape one(shape.element_type, {1});
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i]->shape().rank() != 0 || x[i]->shape().element_type != shape.element_type) {
      return l.Error(op.operands[i].pos, "tensor.from_elements needs scalars of the result's element type");
    }
    parts.push_back(l.Emit(Opcode::kReshape, one, {x[i]}));
  }
  Instruction* flat = parts[0];
  if (parts.size() > 1) {
    flat = l.Emit(Opcode::kConcatenate, Shape(shape.element_type, {static_cast<int64_t>(parts.size())}), parts);
    flat->SetAttr("dimensions", AttrValue::IntList({0}));
  }
  results->push_back(l.Emit(Opcode::kReshape, shape, {flat}));
  return true;
}

bool LowerTensorSplat(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  if (op.operands.size() != 1) return l.OpError(op, "tensor.splat with dynamic sizes is not supported");
  if (!l.LookupOperands(op, &x)) return false;
  if (x[0]->shape().rank() != 0) return l.Error(op.operands[0].pos, "tensor.splat needs a scalar");
  results->push_back(l.BroadcastTo(x[0], shape, {}));
  return true;
}

// expand_shape, collapse_shape and a static tensor.reshape only reinterpret the row-major order.
bool LowerTensorReshape(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  Shape shape;
  if (op.operands.empty()) return l.OpError(op, fmt::format("'{}' needs an operand", op.name));
  if (!l.LookupOperands(op, &x) || !l.ResultShape(op, 0, &shape)) return false;
  if (op.name != "tensor.reshape" && x.size() != 1) {
    return l.OpError(op, fmt::format("'{}' with dynamic output sizes is not supported", op.name));
  }
  if (shape.ElementCount() != x[0]->shape().ElementCount()) {
    return l.OpError(op, fmt::format("'{}' cannot reshape {} to {}", op.name, ShapeToString(x[0]->shape(), false),
                                     ShapeToString(shape, false)));
  }
  results->push_back(l.Emit(Opcode::kReshape, std::move(shape), {x[0]}));
  return true;
}

bool LowerTensorConcat(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  int64_t dim;
  Shape shape;
  if (op.operands.empty()) return l.OpError(op, "tensor.concat needs operands");
  if (!l.LookupOperands(op, &x) || !l.GetInt(op, "dim", &dim) || !l.ResultShape(op, 0, &shape)) return false;
  Instruction* c = l.Emit(Opcode::kConcatenate, std::move(shape), std::move(x));
  c->SetAttr("dimensions", AttrValue::IntList({dim}));
  results->push_back(c);
  return true;
}

// extract_slice / insert_slice: offsets, sizes and strides from the static lists, SSA entries from the operands
// (operandSegmentSizes). Static strides; SSA offsets make a dynamic slice. A rank-reducing result drops unit dims.
bool LowerTensorSlice(Lowerer& l, const Op& op, Results* results) {
  const bool insert = op.name == "tensor.insert_slice";
  std::vector<Instruction*> x;
  std::vector<int64_t> offsets, sizes, strides, segments;
  Shape shape;
  if (!l.LookupOperands(op, &x) || !l.GetI64List(op, "static_offsets", &offsets) ||
      !l.GetI64List(op, "static_sizes", &sizes) || !l.GetI64List(op, "static_strides", &strides) ||
      !l.GetI64List(op, "operandSegmentSizes", &segments) || !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  const size_t fixed = insert ? 2 : 1;
  if (segments.size() != fixed + 3 || x.size() < fixed) return l.OpError(op, "malformed operandSegmentSizes");
  const Shape& full = insert ? x[1]->shape() : x[0]->shape();
  const int64_t rank = full.rank();
  if (static_cast<int64_t>(offsets.size()) != rank || static_cast<int64_t>(sizes.size()) != rank ||
      static_cast<int64_t>(strides.size()) != rank) {
    return l.OpError(op, fmt::format("'{}' needs {} offsets, sizes and strides", op.name, rank));
  }
  if (segments[fixed + 1] != 0 || segments[fixed + 2] != 0) {
    return l.OpError(op, fmt::format("'{}' with dynamic sizes or strides is not supported", op.name));
  }
  size_t next = fixed;
  bool dynamic = false;
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < rank; ++d) {
    if (offsets[d] == kDynamicIndex) {
      if (next >= x.size()) return l.OpError(op, "missing offset operand");
      if (x[next]->shape().rank() != 0 || !IsIntegralType(x[next]->shape().element_type)) {
        return l.Error(op.operands[next].pos, "an offset must be an integer scalar");
      }
      starts.push_back(l.Convert(x[next++], PrimitiveType::kS64));
      dynamic = true;
    } else {
      starts.push_back(nullptr);
    }
    if (sizes[d] < 0 || strides[d] < 1 || (offsets[d] != kDynamicIndex && offsets[d] < 0)) {
      return l.OpError(op, fmt::format("'{}' has an invalid offset, size or stride in dimension {}", op.name, d));
    }
    if (dynamic && strides[d] != 1) return l.OpError(op, "dynamic offsets need unit strides");
  }
  const Shape window(full.element_type, sizes);
  if (!insert) {
    Instruction* slice;
    if (dynamic) {
      std::vector<Instruction*> operands = {x[0]};
      for (int64_t d = 0; d < rank; ++d) {
        operands.push_back(starts[d] != nullptr ? starts[d] : l.ConstScalar(PrimitiveType::kS64, offsets[d]));
      }
      slice = l.Emit(Opcode::kDynamicSlice, window, std::move(operands));
      slice->SetAttr("dynamic_slice_sizes", AttrValue::IntList(sizes));
    } else {
      std::vector<SliceRange> ranges;
      std::vector<int64_t> dims;
      for (int64_t d = 0; d < rank; ++d) {
        const int64_t limit = offsets[d] + (sizes[d] == 0 ? 0 : (sizes[d] - 1) * strides[d] + 1);
        if (limit > full.dimensions[d]) return l.OpError(op, fmt::format("the slice leaves dimension {}", d));
        ranges.push_back({offsets[d], limit, strides[d]});
      }
      slice = l.Emit(Opcode::kSlice, window, {x[0]});
      slice->SetAttr("slice", AttrValue::Of(std::move(ranges)));
    }
    if (window.ElementCount() != shape.ElementCount()) {
      return l.OpError(op, fmt::format("the slice has shape {}, but the result is {}", ShapeToString(window, false),
                                       ShapeToString(shape, false)));
    }
    results->push_back(window.dimensions == shape.dimensions ? slice : l.Emit(Opcode::kReshape, shape, {slice}));
    return true;
  }
  for (int64_t d = 0; d < rank; ++d) {
    if (strides[d] != 1) return l.OpError(op, "tensor.insert_slice with strides is not supported");
  }
  if (window.ElementCount() != x[0]->shape().ElementCount()) {
    return l.OpError(op, "the inserted tensor does not fill the slice");
  }
  Instruction* update = window.dimensions == x[0]->shape().dimensions ? x[0] : l.Emit(Opcode::kReshape, window, {x[0]});
  std::vector<Instruction*> operands = {x[1], update};
  for (int64_t d = 0; d < rank; ++d) {
    operands.push_back(starts[d] != nullptr ? starts[d] : l.ConstScalar(PrimitiveType::kS64, offsets[d]));
  }
  results->push_back(l.Emit(Opcode::kDynamicUpdateSlice, x[1]->shape(), std::move(operands)));
  return true;
}

// ---- shape ----
// The extent tensors (tensor<Nxindex>) onnx-mlir computes broadcast shapes with. With static shapes every one is
// known while lowering: each becomes an s64 constant, which the dynamic ops' shape operands then fold from.

bool EmitExtents(Lowerer& l, const Op& op, const std::vector<int64_t>& extents, Results* results) {
  const Type& declared = op.result_types.empty() ? Type() : op.result_types[0];
  if (declared.kind == Type::Kind::kTensor &&
      (declared.dims.size() != 1 ||
       (declared.dims[0] != Type::kDynamic && declared.dims[0] != static_cast<int64_t>(extents.size())))) {
    return l.OpError(
        op, fmt::format("{} gives {} extents, but its result type is {}", op.name, extents.size(), declared.text));
  }
  Literal literal(Shape::Array(PrimitiveType::kS64, {static_cast<int64_t>(extents.size())}));
  for (size_t i = 0; i < extents.size(); ++i) literal.SetFromInt64(static_cast<int64_t>(i), extents[i]);
  results->push_back(l.EmitConstant(std::move(literal)));
  return true;
}

bool LowerShapeConstShape(Lowerer& l, const Op& op, Results* results) {
  std::vector<int64_t> extents;
  return l.GetI64List(op, "shape", &extents) && EmitExtents(l, op, extents, results);
}

bool LowerShapeOf(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  if (!Operands(l, op, 1, &x)) return false;
  if (!x[0]->shape().IsArray()) return l.Error(op.operands[0].pos, "shape.shape_of needs a tensor operand");
  return EmitExtents(l, op, x[0]->shape().dimensions, results);
}

// The values of an extent tensor operand, which must be known while lowering.
bool ExtentValues(Lowerer& l, const Op& op, size_t i, Instruction* x, std::vector<int64_t>* out) {
  const Literal* value = x->shape().IsArray() && x->shape().rank() == 1 && IsIntegralType(x->shape().element_type)
                             ? l.FoldConstant(x)
                             : nullptr;
  if (value == nullptr) {
    return l.Error(op.operands[i].pos,
                   fmt::format("{} needs an extent tensor known while lowering (static shapes)", op.name));
  }
  out->clear();
  for (int64_t k = 0; k < value->element_count(); ++k) out->push_back(value->GetAsInt64(k));
  return true;
}

bool LowerShapeToExtentTensor(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  std::vector<int64_t> extents;
  return Operands(l, op, 1, &x) && ExtentValues(l, op, 0, x[0], &extents) && EmitExtents(l, op, extents, results);
}

// numpy's rule: shapes align at their last dims; sizes must agree where neither is 1.
bool LowerShapeBroadcast(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> x;
  if (op.operands.empty() || !l.LookupOperands(op, &x)) {
    return op.operands.empty() ? l.OpError(op, "shape.broadcast needs operands") : false;
  }
  std::vector<int64_t> result;
  for (size_t i = 0; i < x.size(); ++i) {
    std::vector<int64_t> extents;
    if (!ExtentValues(l, op, i, x[i], &extents)) return false;
    if (extents.size() > result.size()) result.insert(result.begin(), extents.size() - result.size(), 1);
    const size_t offset = result.size() - extents.size();
    for (size_t d = 0; d < extents.size(); ++d) {
      int64_t& r = result[offset + d];
      if (extents[d] == 1 || extents[d] == r) continue;
      if (r != 1) {
        return l.Error(op.operands[i].pos,
                       fmt::format("shape.broadcast of incompatible extents {} and {}", r, extents[d]));
      }
      r = extents[d];
    }
  }
  return EmitExtents(l, op, result, results);
}

}  // namespace

void RegisterDialectOps(OpTable* table) {
  OpTable& t = *table;
  for (const auto& [name, unused] : BinaryOps()) t[std::string(name)] = &LowerBinary;
  for (const auto& [name, unused] : UnaryOps()) t[std::string(name)] = &LowerUnary;
  t["arith.constant"] = &LowerArithConstant;
  t["util.unfoldable_constant"] = &LowerArithConstant;
  t["arith.cmpi"] = &LowerArithCompare;
  t["arith.cmpf"] = &LowerArithCompare;
  t["arith.select"] = &LowerArithSelect;
  for (const char* cast :
       {"arith.extf", "arith.truncf", "arith.extsi", "arith.extui", "arith.trunci", "arith.sitofp", "arith.uitofp",
        "arith.fptosi", "arith.fptoui", "arith.index_cast", "arith.index_castui", "arith.bitcast"}) {
    t[cast] = &LowerArithCast;
  }
  t["tensor.empty"] = &LowerTensorEmpty;
  t["tensor.dim"] = &LowerTensorDim;
  t["tensor.cast"] = &LowerTensorCast;
  t["tensor.bitcast"] = &LowerTensorCast;
  t["tensor.extract"] = &LowerTensorExtract;
  t["tensor.insert"] = &LowerTensorInsert;
  t["tensor.from_elements"] = &LowerTensorFromElements;
  t["tensor.splat"] = &LowerTensorSplat;
  t["tensor.expand_shape"] = &LowerTensorReshape;
  t["tensor.collapse_shape"] = &LowerTensorReshape;
  t["tensor.reshape"] = &LowerTensorReshape;
  t["tensor.concat"] = &LowerTensorConcat;
  t["tensor.extract_slice"] = &LowerTensorSlice;
  t["shape.const_shape"] = &LowerShapeConstShape;
  t["shape.shape_of"] = &LowerShapeOf;
  t["shape.to_extent_tensor"] = &LowerShapeToExtentTensor;
  t["shape.broadcast"] = &LowerShapeBroadcast;
  t["tensor.insert_slice"] = &LowerTensorSlice;
}

}  // namespace xlac::shlo
