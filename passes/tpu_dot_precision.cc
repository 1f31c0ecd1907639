#include "passes/tpu_dot_precision.h"

#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/status_macros.h"
#include "ir/tpu_numerics.h"

namespace xlac {
namespace {

class Splitter {
 public:
  Splitter(Module& module, Computation& comp, const Instruction& original)
      : module_(module), comp_(comp), original_(original) {}

  Instruction* Add(Opcode opcode, PrimitiveType type, const std::vector<int64_t>& dims,
                   std::vector<Instruction*> operands) {
    Shape shape = Shape::Array(type, dims);
    shape.EnsureLayout();
    auto inst = Instruction::Create(opcode, module_.UniqueInstructionName(OpcodeName(opcode)), std::move(shape),
                                    std::move(operands));
    *inst->mutable_metadata() = original_.metadata();
    inst->set_loc(original_.loc());
    return comp_.AddInstruction(std::move(inst));
  }

  // {x_hi, x_lo} of an f32 array.
  std::pair<Instruction*, Instruction*> Split(Instruction* x) {
    const std::vector<int64_t>& dims = x->shape().dimensions;
    auto round = [&](Instruction* v) {
      return Add(Opcode::kConvert, PrimitiveType::kF32, dims, {Add(Opcode::kConvert, PrimitiveType::kBF16, dims, {v})});
    };
    Instruction* hi = round(x);
    Instruction* lo = round(Add(Opcode::kSubtract, PrimitiveType::kF32, dims, {x, hi}));
    Literal zero_value(Shape::Scalar(PrimitiveType::kF32));
    zero_value.Set<float>(0, 0.0f);
    auto zero = Instruction::CreateConstant(module_.UniqueInstructionName("constant"), std::move(zero_value));
    zero->set_loc(original_.loc());
    Instruction* z = comp_.AddInstruction(std::move(zero));
    Instruction* zeros = Add(Opcode::kBroadcast, PrimitiveType::kF32, dims, {z});
    zeros->SetAttr("dimensions", AttrValue::IntList({}));
    Instruction* finite = Add(Opcode::kIsFinite, PrimitiveType::kPred, dims, {hi});
    return {hi, Add(Opcode::kSelect, PrimitiveType::kF32, dims, {finite, lo, zeros})};
  }

  // `original_` on new operands at DEFAULT precision.
  Instruction* Pass(Instruction* a, Instruction* b) {
    Shape shape = original_.shape();
    shape.EnsureLayout();
    auto inst = Instruction::Create(original_.opcode(), module_.UniqueInstructionName(OpcodeName(original_.opcode())),
                                    std::move(shape), {a, b});
    inst->mutable_attrs() = original_.attrs();
    inst->mutable_attrs().Erase("algorithm");
    inst->mutable_attrs().Erase("operand_precision");  // DEFAULT
    *inst->mutable_metadata() = original_.metadata();
    inst->set_loc(original_.loc());
    return comp_.AddInstruction(std::move(inst));
  }

  Instruction* Sum(Instruction* x, Instruction* y) {
    return Add(Opcode::kAdd, PrimitiveType::kF32, original_.shape().dimensions, {x, y});
  }

 private:
  Module& module_;
  Computation& comp_;
  const Instruction& original_;
};

}  // namespace

absl::StatusOr<bool> RunTpuDotPrecision(Module& module) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    std::vector<Instruction*> targets;
    for (const auto& inst : comp->instructions()) {
      if ((inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) &&
          TpuDotModeOf(*inst) == TpuDotMode::kBf16x3) {
        targets.push_back(inst.get());
      }
    }
    for (Instruction* inst : targets) {
      Splitter s(module, *comp, *inst);
      auto [a_hi, a_lo] = s.Split(inst->operand(0));
      auto [b_hi, b_lo] = s.Split(inst->operand(1));
      Instruction* result = s.Sum(s.Sum(s.Pass(a_hi, b_lo), s.Pass(a_lo, b_hi)), s.Pass(a_hi, b_hi));
      result->set_sharding(inst->sharding());
      inst->ReplaceAllUsesWith(result);
      if (inst->control_predecessors().empty() && inst->control_successors().empty()) {
        XLAC_RETURN_IF_ERROR(comp->RemoveInstruction(inst));
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlac
