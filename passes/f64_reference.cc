#include "passes/f64_reference.h"

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "passes/async_to_sync.h"

namespace xlac {
namespace {

Shape Promote(const Shape& shape) {
  Shape out = shape;
  if (shape.IsTuple()) {
    for (Shape& element : out.tuple_shapes) element = Promote(element);
    return out;
  }
  PrimitiveType type = F64ReferenceType(shape.element_type);
  if (type != shape.element_type) {
    out.element_type = type;
    // Sizes and tiles described the narrow type's storage; the interpreter stores f64 densely.
    if (out.layout.has_value()) {
      out.layout->element_size_in_bits = 0;
      out.layout->tiles.clear();
    }
  }
  return out;
}

bool TypesDiffer(const Shape& a, const Shape& b) {
  if (a.IsTuple() && b.IsTuple()) {
    if (a.tuple_shapes.size() != b.tuple_shapes.size()) return true;
    for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
      if (TypesDiffer(a.tuple_shapes[i], b.tuple_shapes[i])) return true;
    }
    return false;
  }
  return a.element_type != b.element_type;
}

// Bits of precision a value of `type` can need: the significand of a float (with its implicit bit), the magnitude
// bits of an integer. Exponent bits for floats.
struct Capacity {
  int significand = 0;
  int exponent = 0;
};

Capacity CapacityOf(PrimitiveType type) {
  type = ComplexComponentType(type);
  if (IsFloatingPointType(type)) {
    FloatFormat f = GetFloatFormat(type);
    return {f.mantissa_bits + 1, f.exponent_bits};
  }
  if (IsPredType(type)) return {1, 0};
  return {BitWidth(type) - (IsSignedIntegralType(type) ? 1 : 0), 0};
}

// Whether every value of `from` is exactly a value of the float (or complex) type `to`: then the convert only widens
// and is the identity on a promoted value.
bool Widens(PrimitiveType from, PrimitiveType to) {
  if (IsComplexType(from) && !IsComplexType(to)) return false;
  Capacity f = CapacityOf(from), t = CapacityOf(to);
  return f.significand <= t.significand && f.exponent <= t.exponent;
}

// Ops that must see their declared types: their result depends on the bits or the type itself, not only on the
// values (or, for custom-calls, the target's contract is unknown).
bool KeepsDeclaredTypes(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
    case Opcode::kScaledDot:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
      return true;
    case Opcode::kCustomCall: {
      std::string_view target = inst.StringAttr("custom_call_target");
      return !IsShardingIdentityTarget(target) && !IsShardMapBoundaryTarget(target) && target != "interpreter.probe";
    }
    default:
      return false;
  }
}

class Promoter {
 public:
  explicit Promoter(Module& module) : module_(module) {}

  absl::Status Run() {
    for (const auto& comp : module_.computations()) {
      for (const auto& inst : comp->instructions()) {
        if (KeepsDeclaredTypes(*inst) && !inst->called_computations().empty()) {
          return absl::UnimplementedError("f64-reference: " + inst->name() +
                                          " keeps its declared types but calls computations, which would be promoted");
        }
        original_[inst.get()] = inst->shape();
      }
    }
    for (Computation* comp : module_.MakeComputationPostOrder()) {
      for (Instruction* inst : comp->MakePostOrder()) Rewrite(*comp, inst);
    }
    // The results are f64 now: aliasing an argument of the declared type and the written entry layout no longer
    // describe the module.
    module_.mutable_config().input_output_alias.clear();
    module_.mutable_config().entry_computation_layout.reset();
    return absl::OkStatus();
  }

  bool changed() const { return changed_; }

 private:
  void Rewrite(Computation& comp, Instruction* inst) {
    const Shape& declared = original_.at(inst);
    const bool entry_parameter = inst->opcode() == Opcode::kParameter && comp.is_entry();
    if (entry_parameter || inst->opcode() == Opcode::kConstant) {
      WidenResult(comp, inst);
      return;
    }
    if (KeepsDeclaredTypes(*inst)) {
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        Instruction* operand = inst->operand(i);
        if (TypesDiffer(operand->shape(), original_.at(operand))) {
          inst->ReplaceOperandWith(i, ConvertTo(comp, operand, original_.at(operand), *inst));
        }
      }
      WidenResult(comp, inst);
      return;
    }
    if (inst->opcode() == Opcode::kConvert) {
      PrimitiveType to = declared.element_type;
      if ((IsFloatingPointType(to) || IsComplexType(to)) &&
          !Widens(original_.at(inst->operand(0)).element_type, to)) {
        WidenResult(comp, inst);  // rounds the f64 operand to the declared type, then widens it back
        return;
      }
    }
    Shape promoted = Promote(declared);
    if (TypesDiffer(promoted, declared)) {
      inst->set_shape(std::move(promoted));
      changed_ = true;
    }
    if (inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution ||
        inst->opcode() == Opcode::kRaggedDot) {
      changed_ |= inst->mutable_attrs().Erase("operand_precision");
      changed_ |= inst->mutable_attrs().Erase("algorithm");
    }
  }

  // Gives `inst`'s users (and its computation, if it is the root) the promoted value of `inst`.
  void WidenResult(Computation& comp, Instruction* inst) {
    Shape promoted = Promote(inst->shape());
    if (!TypesDiffer(promoted, inst->shape())) return;
    std::vector<Instruction*> users = inst->users();  // before the converts below become users too
    Instruction* widened = ConvertTo(comp, inst, promoted, *inst);
    // What its users' rules ask about is the value's declared type. Copied before inserting: the insertion may
    // rehash and would leave a reference into the map dangling.
    Shape declared = original_.at(inst);
    original_[widened] = std::move(declared);
    for (Instruction* user : users) user->ReplaceUsesOfOperand(inst, widened);
    if (comp.root() == inst) comp.set_root(widened);
    changed_ = true;
  }

  // `value` with the element types of `to` (same dimensions): converts, through tuples element by element.
  Instruction* ConvertTo(Computation& comp, Instruction* value, const Shape& to, const Instruction& origin) {
    const Shape& from = value->shape();
    if (!TypesDiffer(from, to)) return value;
    if (from.IsTuple()) {
      std::vector<Instruction*> elements;
      for (size_t i = 0; i < from.tuple_shapes.size(); ++i) {
        Instruction* element = Add(comp, Opcode::kGetTupleElement, from.tuple_shapes[i], {value}, origin);
        element->SetAttr("index", AttrValue::Int(static_cast<int64_t>(i)));
        elements.push_back(ConvertTo(comp, element, to.tuple_shapes[i], origin));
      }
      return Add(comp, Opcode::kTuple, to, std::move(elements), origin);
    }
    Shape shape = from;
    shape.element_type = to.element_type;
    shape.layout = to.layout;
    return Add(comp, Opcode::kConvert, std::move(shape), {value}, origin);
  }

  Instruction* Add(Computation& comp, Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   const Instruction& origin) {
    auto inst =
        Instruction::Create(opcode, module_.UniqueInstructionName(OpcodeName(opcode)), std::move(shape), operands);
    inst->set_loc(origin.loc());
    *inst->mutable_metadata() = origin.metadata();
    return comp.AddInstruction(std::move(inst));
  }

  Module& module_;
  absl::flat_hash_map<const Instruction*, Shape> original_;
  bool changed_ = false;
};

}  // namespace

PrimitiveType F64ReferenceType(PrimitiveType type) {
  if (type == PrimitiveType::kC64) return PrimitiveType::kC128;
  if (IsFloatingPointType(type)) return PrimitiveType::kF64;
  return type;
}

Shape F64ReferenceShape(const Shape& shape) { return Promote(shape); }

absl::StatusOr<bool> RunF64Reference(Module& module) {
  XLAC_ASSIGN_OR_RETURN(bool synchronized, RunAsyncToSync(module));
  Promoter promoter(module);
  XLAC_RETURN_IF_ERROR(promoter.Run());
  return synchronized || promoter.changed();
}

absl::StatusOr<std::unique_ptr<Module>> PromoteToF64(const Module& module) {
  std::unique_ptr<Module> copy = module.Clone();
  XLAC_RETURN_IF_ERROR(RunF64Reference(*copy).status());
  return copy;
}

}  // namespace xlac
