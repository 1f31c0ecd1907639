#include "passes/f64_reference.h"

#include <cassert>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "passes/async_to_sync.h"

namespace xlac {
namespace {

Shape Promote(const Shape& shape, PrimitiveType target) {
  Shape out = shape;
  if (shape.IsTuple()) {
    for (Shape& element : out.tuple_shapes) element = Promote(element, target);
    return out;
  }
  PrimitiveType type = ReferenceType(shape.element_type, target);
  if (type != shape.element_type) {
    out.element_type = type;
    // Sizes and tiles described the narrow type's storage; the interpreter stores the wider type densely.
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

// Ops that only move values: on operands that are exact values of the target type (kept in their narrower declared
// type), their result is too, so they run in the declared type. Broadcasts are not among them: the interpreter never
// materializes a broadcast scalar its elementwise users read, which a widening convert after it would.
bool MovesValues(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kGather:
    case Opcode::kCopy:
    case Opcode::kConcatenate:
    case Opcode::kReverse:
    case Opcode::kGetTupleElement:
    case Opcode::kTuple:
    case Opcode::kAllToAll:
    case Opcode::kAllGather:
    case Opcode::kCollectivePermute:
      return true;
    case Opcode::kCustomCall: {
      std::string_view target = inst.StringAttr("custom_call_target");
      return IsShardingIdentityTarget(target) || IsShardMapBoundaryTarget(target);
    }
    default:
      return false;
  }
}

class Promoter {
 public:
  Promoter(Module& module, PrimitiveType target) : module_(module), target_(target) {}

  absl::Status Run() {
    for (const auto& comp : module_.computations()) {
      for (const auto& inst : comp->instructions()) {
        if (KeepsDeclaredTypes(*inst) && !inst->called_computations().empty()) {
          return absl::UnimplementedError(std::string(PrimitiveTypeName(target_)) + "-reference: " + inst->name() +
                                          " keeps its declared types but calls computations, which would be promoted");
        }
        original_[inst.get()] = inst->shape();
      }
    }
    for (Computation* comp : module_.MakeComputationPostOrder()) {
      for (Instruction* inst : comp->MakePostOrder()) Rewrite(*comp, inst);
      // Callers and the comparison see the promoted types.
      if (comp->root() != nullptr && narrow_.contains(comp->root())) comp->set_root(Widened(*comp, comp->root()));
    }
    // The results are promoted now: aliasing an argument of the declared type and the written entry layout no longer
    // describe the module.
    module_.mutable_config().input_output_alias.clear();
    module_.mutable_config().entry_computation_layout.reset();
    return absl::OkStatus();
  }

  bool changed() const { return changed_; }

 private:
  void Rewrite(Computation& comp, Instruction* inst) {
    const Shape declared = original_.at(inst);  // a copy: Widened below may rehash original_
    const bool promotable = TypesDiffer(Promote(declared, target_), declared);
    const bool entry_parameter = inst->opcode() == Opcode::kParameter && comp.is_entry();
    if (entry_parameter || inst->opcode() == Opcode::kConstant) {
      if (promotable) narrow_.insert(inst);
      return;
    }
    if (MovesValues(*inst)) {
      bool all_narrow = true;
      for (const Instruction* operand : inst->operands()) {
        const Shape& type = original_.at(operand);
        all_narrow &= narrow_.contains(operand) || !TypesDiffer(Promote(type, target_), type);
      }
      if (all_narrow) {
        // A non-float result (the s32 element of a narrow tuple) reads the narrow value as it is.
        if (promotable) narrow_.insert(inst);
        return;
      }
    }
    // Narrow operands are widened where an op computes with them. Kept ops want them as they are, a convert takes
    // any type, and the interpreter's f32 and f64 dots read a narrower real float operand as its widening convert
    // would (a bf16 weight matrix of a large model is never widened whole).
    const PrimitiveType promoted_type = Promote(declared, target_).element_type;
    const bool dot_reads_narrow = inst->opcode() == Opcode::kDot &&
                                  (promoted_type == PrimitiveType::kF32 || promoted_type == PrimitiveType::kF64);
    if (!KeepsDeclaredTypes(*inst) && inst->opcode() != Opcode::kConvert) {
      for (int64_t i = 0; i < inst->operand_count(); ++i) {
        Instruction* operand = inst->operand(i);
        if (!narrow_.contains(operand)) continue;
        if (dot_reads_narrow && IsFloatingPointType(operand->shape().element_type)) continue;
        inst->ReplaceOperandWith(i, Widened(comp, operand));
      }
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
      if ((IsFloatingPointType(to) || IsComplexType(to)) && !Widens(original_.at(inst->operand(0)).element_type, to)) {
        WidenResult(comp, inst);  // rounds the promoted operand to the declared type, then widens it back
        return;
      }
    }
    Shape promoted = Promote(declared, target_);
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

  // The promoted value of the narrow value `value`: one convert, shared by its users.
  Instruction* Widened(Computation& comp, Instruction* value) {
    if (auto it = widened_.find(value); it != widened_.end()) return it->second;
    Instruction* widened = ConvertTo(comp, value, Promote(value->shape(), target_), *value);
    Shape declared = original_.at(value);  // copied: the insertion below may rehash
    original_[widened] = std::move(declared);
    widened_.emplace(value, widened);
    changed_ = true;
    return widened;
  }

  // Gives `inst`'s users (and its computation, if it is the root) the promoted value of `inst`.
  void WidenResult(Computation& comp, Instruction* inst) {
    Shape promoted = Promote(inst->shape(), target_);
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
  const PrimitiveType target_;
  absl::flat_hash_map<const Instruction*, Shape> original_;
  // Values kept in their declared type although it is promoted: entry parameters, constants, and what only moves
  // their values (MovesValues). Each is exactly a value of the target type; a convert widens it where an op computes
  // with it, so a large model's weight tables are not held widened (Qwen2's bf16[201088,2880] would be 4.6 GB per
  // device in f64, above the interpreter's limit per value).
  absl::flat_hash_set<const Instruction*> narrow_;
  absl::flat_hash_map<const Instruction*, Instruction*> widened_;
  bool changed_ = false;
};

}  // namespace

PrimitiveType ReferenceType(PrimitiveType type, PrimitiveType target) {
  if (target == PrimitiveType::kF64) {
    if (type == PrimitiveType::kC64) return PrimitiveType::kC128;
    if (IsFloatingPointType(type)) return PrimitiveType::kF64;
    return type;
  }
  assert(target == PrimitiveType::kF32 && "a reference computes in f64 or f32");
  if (IsFloatingPointType(type) && BitWidth(type) < 32) return PrimitiveType::kF32;
  return type;
}

PrimitiveType F64ReferenceType(PrimitiveType type) { return ReferenceType(type, PrimitiveType::kF64); }

Shape ReferenceShape(const Shape& shape, PrimitiveType target) { return Promote(shape, target); }

Shape F64ReferenceShape(const Shape& shape) { return Promote(shape, PrimitiveType::kF64); }

absl::StatusOr<bool> RunFloatPromotion(Module& module, PrimitiveType target) {
  XLAC_ASSIGN_OR_RETURN(bool synchronized, RunAsyncToSync(module));
  Promoter promoter(module, target);
  XLAC_RETURN_IF_ERROR(promoter.Run());
  return synchronized || promoter.changed();
}

absl::StatusOr<bool> RunF64Reference(Module& module) { return RunFloatPromotion(module, PrimitiveType::kF64); }

absl::StatusOr<std::unique_ptr<Module>> PromoteFloats(const Module& module, PrimitiveType target) {
  std::unique_ptr<Module> copy = module.Clone();
  XLAC_RETURN_IF_ERROR(RunFloatPromotion(*copy, target).status());
  return copy;
}

absl::StatusOr<std::unique_ptr<Module>> PromoteToF64(const Module& module) {
  return PromoteFloats(module, PrimitiveType::kF64);
}

}  // namespace xlac
