// Elementwise ops, constants, iota, compare, convert, select/clamp: one StableHLO op -> one HLO instruction.
#include <algorithm>
#include <unordered_map>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

// StableHLO name -> HLO opcode for ops whose operands and result map one to one.
const std::unordered_map<std::string_view, Opcode>& SimpleOps() {
  static const std::unordered_map<std::string_view, Opcode> ops = {
      {"abs", Opcode::kAbs},
      {"cbrt", Opcode::kCbrt},
      {"ceil", Opcode::kCeil},
      {"count_leading_zeros", Opcode::kClz},
      {"cosine", Opcode::kCos},
      {"exponential", Opcode::kExp},
      {"exponential_minus_one", Opcode::kExpm1},
      {"floor", Opcode::kFloor},
      {"imag", Opcode::kImag},
      {"is_finite", Opcode::kIsFinite},
      {"log", Opcode::kLog},
      {"log_plus_one", Opcode::kLog1p},
      {"logistic", Opcode::kLogistic},
      {"not", Opcode::kNot},
      {"negate", Opcode::kNegate},
      {"popcnt", Opcode::kPopulationCount},
      {"real", Opcode::kReal},
      {"round_nearest_afz", Opcode::kRoundNearestAfz},
      {"round_nearest_even", Opcode::kRoundNearestEven},
      {"rsqrt", Opcode::kRsqrt},
      {"sign", Opcode::kSign},
      {"sine", Opcode::kSin},
      {"sqrt", Opcode::kSqrt},
      {"tan", Opcode::kTan},
      {"tanh", Opcode::kTanh},
      {"reshape", Opcode::kReshape},
      // mhlo.copy: what XLA's HLO -> MHLO import makes of a copy; torch-xla's GSPMD exports put one, carrying the
      // sharding, before each SPMDFullToShardShape / SPMDShardToFullShape.
      {"copy", Opcode::kCopy},
      {"add", Opcode::kAdd},
      {"atan2", Opcode::kAtan2},
      {"complex", Opcode::kComplex},
      {"divide", Opcode::kDivide},
      {"maximum", Opcode::kMaximum},
      {"minimum", Opcode::kMinimum},
      {"multiply", Opcode::kMultiply},
      {"power", Opcode::kPower},
      {"remainder", Opcode::kRemainder},
      {"shift_left", Opcode::kShiftLeft},
      {"shift_right_arithmetic", Opcode::kShiftRightArithmetic},
      {"shift_right_logical", Opcode::kShiftRightLogical},
      {"subtract", Opcode::kSubtract},
      {"and", Opcode::kAnd},
      {"or", Opcode::kOr},
      {"xor", Opcode::kXor},
      {"clamp", Opcode::kClamp},
      {"select", Opcode::kSelect},
  };
  return ops;
}

bool CheckArity(Lowerer& l, const Op& op, size_t expected) {
  if (op.operands.size() == expected) return true;
  return l.OpError(op, fmt::format("'{}' takes {} operand{}, but has {}", op.name, expected, expected == 1 ? "" : "s",
                                   op.operands.size()));
}

bool LowerSimple(Lowerer& l, const Op& op, Results* results) {
  const Opcode opcode = SimpleOps().at(BaseOpName(op.name));
  std::vector<Instruction*> operands;
  if (!CheckArity(l, op, static_cast<size_t>(*OpcodeArity(opcode))) || !l.LookupOperands(op, &operands)) return false;
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  // StableHLO lets select's predicate be a scalar; HLO wants it broadcast (XlaBuilder's implicit broadcast).
  if (opcode == Opcode::kSelect && operands[0]->shape().rank() == 0 && shape.rank() > 0) {
    operands[0] = l.BroadcastTo(operands[0], shape, {});
  }
  results->push_back(l.Emit(opcode, std::move(shape), std::move(operands)));
  return true;
}

bool LowerConvert(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!CheckArity(l, op, 1) || !l.LookupOperands(op, &operands)) return false;
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  Instruction* x = operands[0];
  // complex -> real conversion keeps the real part (StableHLO's semantics); HLO convert cannot drop the imaginary
  // part, so take it explicitly.
  if (IsComplexType(x->shape().element_type) && !IsComplexType(shape.element_type)) {
    Shape real_shape = x->shape();
    real_shape.element_type = ComplexComponentType(x->shape().element_type);
    x = l.Emit(Opcode::kReal, std::move(real_shape), {x});
    if (x->shape().element_type == shape.element_type) {
      results->push_back(x);
      return true;
    }
  }
  results->push_back(l.Emit(Opcode::kConvert, std::move(shape), {x}));
  return true;
}

PrimitiveType UnsignedOfWidth(int64_t bits) {
  switch (bits) {
    case 8:
      return PrimitiveType::kU8;
    case 16:
      return PrimitiveType::kU16;
    case 32:
      return PrimitiveType::kU32;
    case 64:
      return PrimitiveType::kU64;
    default:
      return PrimitiveType::kInvalid;
  }
}

// StableHLO's i1 is one bit wide, HLO's pred one byte: a bitcast between i1[..., N] and an N-bit type packs or
// unpacks the bits explicitly (element k is bit k).
bool LowerBitcastConvert(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!CheckArity(l, op, 1) || !l.LookupOperands(op, &operands)) return false;
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  Instruction* x = operands[0];
  const bool from_pred = IsPredType(x->shape().element_type);
  const bool to_pred = IsPredType(shape.element_type);
  if (from_pred == to_pred) {
    results->push_back(l.Emit(from_pred ? Opcode::kCopy : Opcode::kBitcastConvert, std::move(shape), {x}));
    return true;
  }
  const Shape& wide = from_pred ? x->shape() : shape;  // the shape with the trailing bit dimension
  const Shape& narrow = from_pred ? shape : x->shape();
  const int64_t bits = wide.rank() == 0 ? 0 : wide.dimensions.back();
  const PrimitiveType unsigned_type = UnsignedOfWidth(bits);
  if (unsigned_type == PrimitiveType::kInvalid || BitWidth(narrow.element_type) != bits ||
      wide.rank() != narrow.rank() + 1) {
    return l.OpError(op,
                     "bitcast_convert between i1 and another type needs a trailing dimension of the other "
                     "type's bit width");
  }
  Shape unsigned_wide = wide;
  unsigned_wide.element_type = unsigned_type;
  Instruction* iota = l.Emit(Opcode::kIota, unsigned_wide, {});
  iota->SetAttr("iota_dimension", AttrValue::Int(wide.rank() - 1));
  Shape unsigned_narrow = narrow;
  unsigned_narrow.element_type = unsigned_type;
  if (from_pred) {
    Instruction* shifted = l.Binary(Opcode::kShiftLeft, l.Convert(x, unsigned_type), iota);
    Instruction* zero = l.ConstScalar(unsigned_type, 0);
    Instruction* packed = l.Emit(Opcode::kReduce, unsigned_narrow, {shifted, zero});
    packed->SetAttr("dimensions", AttrValue::IntList({wide.rank() - 1}));
    packed->set_called_computations({l.ScalarBinaryComputation(Opcode::kOr, unsigned_type)});
    results->push_back(
        unsigned_type == shape.element_type ? packed : l.Emit(Opcode::kBitcastConvert, std::move(shape), {packed}));
    return true;
  }
  Instruction* as_unsigned =
      x->shape().element_type == unsigned_type ? x : l.Emit(Opcode::kBitcastConvert, unsigned_narrow, {x});
  std::vector<int64_t> dims(static_cast<size_t>(narrow.rank()));
  for (size_t i = 0; i < dims.size(); ++i) dims[i] = static_cast<int64_t>(i);
  Instruction* spread = l.BroadcastTo(as_unsigned, unsigned_wide, dims);
  Instruction* bit = l.Binary(Opcode::kAnd, l.Binary(Opcode::kShiftRightLogical, spread, iota), l.ConstLike(1, spread));
  results->push_back(l.Compare(bit, l.ConstLike(0, bit), "NE"));
  return true;
}

bool LowerConstant(Lowerer& l, const Op& op, Results* results) {
  const Attr* value;
  if (!l.RequireAttr(op, "value", &value)) return false;
  if (value->kind != Attr::Kind::kDense) return l.Error(value->pos, "the constant value must be a dense<...> literal");
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  if (!shape.Compatible(value->dense->shape())) {
    return l.Error(value->pos, fmt::format("constant value has shape {}, but the result type is {}",
                                           ShapeToString(value->dense->shape(), false), ShapeToString(shape, false)));
  }
  results->push_back(l.EmitConstant(*value->dense));
  return true;
}

bool LowerIota(Lowerer& l, const Op& op, Results* results) {
  int64_t dim;
  Shape shape;
  if (!l.GetInt(op, "iota_dimension", &dim) || !l.ResultShape(op, 0, &shape)) return false;
  // dynamic_iota with a static result: the shape operand is redundant.
  if (BaseOpName(op.name) == "dynamic_iota" && !CheckArity(l, op, 1)) return false;
  if (BaseOpName(op.name) == "dynamic_iota" && l.refining() && !l.RefineFromShapeOperand(op, 0, &shape)) {
    return false;
  }
  if (BaseOpName(op.name) == "iota" && !CheckArity(l, op, 0)) return false;
  if (dim < 0 || dim >= std::max<int64_t>(shape.rank(), 1)) {
    return l.OpError(op, fmt::format("iota dimension {} is out of range for rank {}", dim, shape.rank()));
  }
  Instruction* iota = l.Emit(Opcode::kIota, std::move(shape), {});
  iota->SetAttr("iota_dimension", AttrValue::Int(dim));
  results->push_back(iota);
  return true;
}

bool LowerCompare(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!CheckArity(l, op, 2) || !l.LookupOperands(op, &operands)) return false;
  std::string direction, type;
  if (!l.GetEnum(op, "comparison_direction", &direction) || !l.GetEnum(op, "compare_type", &type, "NOTYPE")) {
    return false;
  }
  static const char* kDirections[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  if (std::find(std::begin(kDirections), std::end(kDirections), direction) == std::end(kDirections)) {
    return l.Error(l.FindAttr(op, "comparison_direction")->pos,
                   fmt::format("unknown comparison direction {}", direction));
  }
  Shape shape;
  if (!l.ResultShape(op, 0, &shape)) return false;
  Instruction* cmp = l.Emit(Opcode::kCompare, std::move(shape), std::move(operands));
  cmp->SetAttr("direction", AttrValue::Enum(direction));
  if (type != "NOTYPE") {
    if (type != "FLOAT" && type != "TOTALORDER" && type != "SIGNED" && type != "UNSIGNED") {
      return l.Error(l.FindAttr(op, "compare_type")->pos, fmt::format("unknown comparison type {}", type));
    }
    cmp->SetAttr("type", AttrValue::Enum(type));
  }
  results->push_back(cmp);
  return true;
}

}  // namespace

void RegisterElementwiseOps(OpTable* table) {
  for (const auto& [name, opcode] : SimpleOps()) (*table)["stablehlo." + std::string(name)] = &LowerSimple;
  (*table)["stablehlo.convert"] = &LowerConvert;
  (*table)["stablehlo.bitcast_convert"] = &LowerBitcastConvert;
  (*table)["stablehlo.constant"] = &LowerConstant;
  (*table)["stablehlo.iota"] = &LowerIota;
  (*table)["stablehlo.dynamic_iota"] = &LowerIota;
  (*table)["stablehlo.compare"] = &LowerCompare;
}

}  // namespace xlac::shlo
