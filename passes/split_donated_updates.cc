#include "passes/split_donated_updates.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"
#include "passes/fusion/fusible.h"

namespace xlac {
namespace {

// The one dot or convolution of an output fusion's computation, if it reads fused parameters only.
const Instruction* FusedGemm(const Computation& fused) {
  const Instruction* gemm = nullptr;
  for (const auto& inst : fused.instructions()) {
    if (inst->opcode() != Opcode::kDot && inst->opcode() != Opcode::kConvolution) continue;
    if (gemm != nullptr) return nullptr;
    gemm = inst.get();
  }
  if (gemm == nullptr || gemm == fused.root()) return nullptr;
  for (const Instruction* operand : gemm->operands()) {
    if (operand->opcode() != Opcode::kParameter) return nullptr;
  }
  return gemm;
}

// Whether `fusion` (an output fusion of the entry) is an update of entry parameter `param` that the split lets
// write over it: it reads `param` as an operand, and the fused parameters of those operands are read by the
// epilogue only, at the index it writes.
bool IsSplittableUpdate(const Instruction& fusion, const Instruction* param) {
  if (fusion.opcode() != Opcode::kFusion || fusion.StringAttr("kind") != "kOutput" || !fusion.shape().IsArray() ||
      !SameArrayLayout(fusion.shape(), param->shape()) || !fusion.control_predecessors().empty() ||
      !fusion.control_successors().empty()) {
    return false;
  }
  const Computation& fused = *fusion.called_computation(0);
  const Instruction* gemm = FusedGemm(fused);
  if (gemm == nullptr) return false;
  bool reads = false;
  for (int64_t k = 0; k < fusion.operand_count(); ++k) {
    if (!(SourceOf(fusion.operand(k), {}) == Leaf{const_cast<Instruction*>(param), {}})) continue;
    const Instruction* fused_param = fused.parameter(k);
    for (const Instruction* user : fused_param->users()) {
      if (user == gemm) return false;
    }
    if (!ReadsOnlyAtWrittenIndex(fused_param, fused.root())) return false;
    reads = true;
  }
  return reads;
}

// Replaces `fusion` by its dot or convolution as an instruction of the entry and a loop fusion of the rest, unless
// codegen could not emit that loop fusion as one kernel.
absl::StatusOr<bool> Split(Module& module, Computation& entry, Instruction* fusion) {
  const Computation& fused = *fusion->called_computation(0);
  const Instruction* gemm = FusedGemm(fused);
  std::vector<Instruction*> gemm_operands;
  for (const Instruction* operand : gemm->operands()) {
    gemm_operands.push_back(fusion->operand(operand->parameter_number()));
  }
  Instruction* product =
      entry.AddInstruction(CloneWithOperands(*gemm, UniqueCopyName(module, gemm->name()), std::move(gemm_operands)));

  auto body = std::make_unique<Computation>(module.UniqueComputationName("fused_computation"));
  std::vector<Instruction*> outer;  // the loop fusion's operands, one per parameter
  absl::flat_hash_map<const Instruction*, Instruction*> param_of;
  auto param_for = [&](Instruction* value) {
    auto [it, inserted] = param_of.emplace(value, nullptr);
    if (inserted) {
      const int64_t number = static_cast<int64_t>(outer.size());
      outer.push_back(value);
      it->second = body->AddInstruction(Instruction::CreateParameter(
          number, UniqueCopyName(module, "param_" + std::to_string(number)), value->shape()));
    }
    return it->second;
  };
  absl::flat_hash_map<const Instruction*, Instruction*> copy_of;
  auto value_of = [&](Instruction* inst) -> Instruction* {
    if (inst == gemm) return param_for(product);
    if (inst->opcode() == Opcode::kParameter) return param_for(fusion->operand(inst->parameter_number()));
    return copy_of.at(inst);
  };
  for (Instruction* inst : fused.MakePostOrder()) {
    if (inst == gemm || inst->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : inst->operands()) operands.push_back(value_of(operand));
    copy_of[inst] = body->AddInstruction(CloneWithOperands(*inst, UniqueCopyName(module, inst->name()), operands));
  }
  body->set_root(value_of(fused.root()));
  body->set_is_fusion_computation(true);
  Computation* epilogue = module.AddComputation(std::move(body));

  auto loop = Instruction::Create(Opcode::kFusion, module.UniqueInstructionName("fusion"), fusion->shape(), outer);
  loop->set_called_computations({epilogue});
  loop->SetAttr("kind", AttrValue::Enum("kLoop"));
  loop->set_sharding(fusion->sharding());
  *loop->mutable_metadata() = fusion->metadata();
  loop->set_loc(fusion->loc());
  Instruction* update = entry.AddInstruction(std::move(loop));
  if (!IsEmittableFusion(*update)) {
    XLAC_RETURN_IF_ERROR(entry.RemoveInstruction(update));
    XLAC_RETURN_IF_ERROR(entry.RemoveInstruction(product));
    XLAC_RETURN_IF_ERROR(module.RemoveComputation(epilogue));
    return false;
  }
  Computation* old = fusion->called_computation(0);
  fusion->ReplaceAllUsesWith(update);
  XLAC_RETURN_IF_ERROR(entry.RemoveInstruction(fusion));
  if (!IsCalled(module, old)) XLAC_RETURN_IF_ERROR(module.RemoveComputation(old));
  return true;
}

}  // namespace

absl::StatusOr<bool> RunSplitDonatedUpdates(Module& module) {
  Computation* entry = module.entry_computation();
  if (entry == nullptr) return false;
  bool changed = false;
  for (const InputOutputAlias& alias : module.config().input_output_alias) {
    if (!alias.parameter_index.empty() || alias.parameter_number >= entry->parameter_count()) continue;
    const Instruction* param = entry->parameter(alias.parameter_number);
    if (!param->shape().IsArray()) continue;
    Leaf leaf = SourceOf(entry->root(), alias.output_index);
    if (!leaf.index.empty() || leaf.inst == nullptr || !IsSplittableUpdate(*leaf.inst, param)) continue;
    XLAC_ASSIGN_OR_RETURN(bool split, Split(module, *entry, leaf.inst));
    changed |= split;
  }
  return changed;
}

}  // namespace xlac
