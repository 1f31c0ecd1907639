#include "passes/simplify/algebraic_simplifier.h"

#include <cmath>
#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/status_macros.h"
#include "passes/simplify/simplifier_internal.h"

namespace xlac {
namespace simplify {

Instruction* Rewriter::Add(const Instruction& original, Opcode opcode, Shape shape,
                           std::vector<Instruction*> operands) {
  shape.EnsureLayout();
  auto inst = Instruction::Create(opcode, module_.UniqueInstructionName(OpcodeName(opcode)), std::move(shape),
                                  std::move(operands));
  inst->set_sharding(original.sharding());
  *inst->mutable_metadata() = original.metadata();
  *inst->mutable_frontend_attributes() = original.frontend_attributes();
  inst->set_loc(original.loc());
  return comp_.AddInstruction(std::move(inst));
}

Instruction* Rewriter::AddConstant(const Instruction& original, Literal literal) {
  Shape shape = literal.shape();
  shape.EnsureLayout();
  auto inst = Instruction::CreateConstant(module_.UniqueInstructionName("constant"), std::move(literal));
  inst->set_shape(std::move(shape));
  inst->set_sharding(original.sharding());
  *inst->mutable_metadata() = original.metadata();
  inst->set_loc(original.loc());
  return comp_.AddInstruction(std::move(inst));
}

bool SameShapeAndLayout(const Shape& a, const Shape& b) {
  if (!a.Compatible(b)) return false;
  if (!a.IsArray()) return a == b;
  Layout la = a.layout ? *a.layout : Layout::Default(a.rank());
  Layout lb = b.layout ? *b.layout : Layout::Default(b.rank());
  return la == lb;
}

bool Bypassable(const Instruction& inst) {
  return !inst.sharding().has_value() && inst.control_predecessors().empty() && inst.control_successors().empty();
}

std::optional<KnownValue> GetKnownValue(const Instruction& inst) {
  if (inst.opcode() == Opcode::kConstant && inst.has_literal() && !inst.literal().is_unknown() &&
      inst.shape().IsArray()) {
    return KnownValue{&inst.literal(), false};
  }
  if (inst.opcode() == Opcode::kBroadcast && inst.operand(0)->shape().IsScalar()) {
    const Instruction& scalar = *inst.operand(0);
    if (scalar.opcode() == Opcode::kConstant && scalar.has_literal() && !scalar.literal().is_unknown()) {
      return KnownValue{&scalar.literal(), true};
    }
  }
  return std::nullopt;
}

namespace {

template <typename Pred>
bool AllElements(const Instruction& inst, Pred pred) {
  std::optional<KnownValue> known = GetKnownValue(inst);
  if (!known) return false;
  const Literal& lit = *known->literal;
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (!pred(lit, i)) return false;
  }
  return true;
}

}  // namespace

bool IsAllInt(const Instruction& inst, int64_t value) {
  PrimitiveType type = inst.shape().element_type;
  if (!IsIntegralType(type) && !IsPredType(type)) return false;
  return AllElements(inst, [&](const Literal& lit, int64_t i) { return lit.GetAsInt64(i) == value; });
}

bool IsAllFloat(const Instruction& inst, double value) {
  if (!IsIeeeFloat(inst.shape().element_type)) return false;
  return AllElements(inst, [&](const Literal& lit, int64_t i) {
    double v = lit.GetAsDouble(i);
    return v == value && std::signbit(v) == std::signbit(value);
  });
}

bool IsAllOnesBits(const Instruction& inst) {
  PrimitiveType type = inst.shape().element_type;
  int64_t ones;
  if (IsPredType(type) || IsSignedIntegralType(type)) {
    ones = IsPredType(type) ? 1 : -1;
  } else if (IsUnsignedIntegralType(type)) {
    int bits = BitWidth(type);
    ones = bits >= 64 ? -1 : static_cast<int64_t>((uint64_t{1} << bits) - 1);
  } else {
    return false;
  }
  return AllElements(inst, [&](const Literal& lit, int64_t i) { return lit.GetAsInt64(i) == ones; });
}

bool IsIeeeFloat(PrimitiveType type) {
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 || type == PrimitiveType::kF32 ||
         type == PrimitiveType::kF64;
}

namespace {

constexpr int kMaxSweeps = 64;

bool Eligible(const Instruction& inst) {
  return !inst.HasSideEffect() && inst.control_predecessors().empty() && inst.control_successors().empty() &&
         inst.shape().IsArray() && inst.shape().IsStatic();
}

// Removes `inst` if dead, then operands that become dead, recording what went so the sweep skips it.
absl::Status RemoveDead(Computation& comp, Instruction* inst, absl::flat_hash_set<const Instruction*>& removed) {
  std::vector<Instruction*> worklist = {inst};
  while (!worklist.empty()) {
    Instruction* cur = worklist.back();
    worklist.pop_back();
    if (removed.contains(cur) || cur->user_count() != 0 || cur == comp.root() || cur->opcode() == Opcode::kParameter ||
        cur->HasSideEffect() || !cur->control_predecessors().empty() || !cur->control_successors().empty()) {
      continue;
    }
    std::vector<Instruction*> operands = cur->operands();
    cur->DetachFromOperandsAndEdges();
    removed.insert(cur);
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(cur));
    for (Instruction* operand : operands) worklist.push_back(operand);
  }
  return absl::OkStatus();
}

Instruction* TrySimplify(Rewriter& rw, Instruction* inst) {
  if (Instruction* v = SimplifyElementwise(rw, inst)) return v;
  if (Instruction* v = SimplifyShapeOp(rw, inst)) return v;
  return SimplifyDotOrReduce(rw, inst);
}

// An existing value may stand for `inst` only if nothing observable changes: same shape and layout, and the
// sharding annotation (if any) survives.
bool CanReplaceWithExisting(const Instruction& inst, const Instruction& value) {
  if (!SameShapeAndLayout(inst.shape(), value.shape())) return false;
  return !inst.sharding().has_value() || inst.sharding() == value.sharding();
}

absl::StatusOr<bool> SimplifyComputation(Module& module, Computation& comp) {
  Rewriter rw(module, comp);
  bool changed_any = false;
  for (int sweep = 0; sweep < kMaxSweeps; ++sweep) {
    bool changed = false;
    absl::flat_hash_set<const Instruction*> removed;  // membership only
    for (Instruction* inst : comp.MakePostOrder()) {
      if (removed.contains(inst) || (inst->user_count() == 0 && inst != comp.root()) || !Eligible(*inst)) continue;
      int64_t before = comp.instruction_count();
      Instruction* value = TrySimplify(rw, inst);
      if (value == nullptr) continue;
      bool is_new = comp.instruction_count() != before;
      if (is_new && !SameShapeAndLayout(inst->shape(), value->shape())) {
        return absl::InternalError(absl::StrCat("algebraic-simplifier: the replacement of ", inst->name(),
                                                " has shape ", ShapeToString(value->shape())));
      }
      if (!is_new && !CanReplaceWithExisting(*inst, *value)) continue;
      inst->ReplaceAllUsesWith(value);
      XLAC_RETURN_IF_ERROR(RemoveDead(comp, inst, removed));
      changed = true;
    }
    if (!changed) break;
    changed_any = true;
  }
  return changed_any;
}

}  // namespace
}  // namespace simplify

absl::StatusOr<bool> RunAlgebraicSimplifier(Module& module) {
  // A scheduled module's instruction order is its schedule, and new instructions can only be appended.
  if (module.config().is_scheduled) return false;
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    XLAC_ASSIGN_OR_RETURN(bool comp_changed, simplify::SimplifyComputation(module, *comp));
    changed |= comp_changed;
  }
  return changed;
}

}  // namespace xlac
