#include "passes/fusion/fusion_builder.h"

#include <algorithm>
#include <cassert>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

// A fused computation under construction: parameters for distinct outer operands, in first-use order.
class FusedBuilder {
 public:
  FusedBuilder() : comp_(std::make_unique<Computation>("fused_computation")) {}

  // The parameter that stands for `outer`, created on first use.
  Instruction* Param(Instruction* outer) {
    auto [it, inserted] = index_.emplace(outer, static_cast<int64_t>(operands_.size()));
    if (!inserted) return params_[static_cast<size_t>(it->second)];
    int64_t number = static_cast<int64_t>(operands_.size());
    operands_.push_back(outer);
    params_.push_back(
        comp_->AddInstruction(Instruction::CreateParameter(number, absl::StrCat("param_", number), outer->shape())));
    return params_.back();
  }

  // A copy of `inst` on `operands`, or the identical instruction already built: a producer duplicated into a
  // fusion through two of its users (both later fused) is computed once. Reduces stay distinct: each is an output.
  Instruction* Clone(const Instruction& inst, std::vector<Instruction*> operands) {
    std::unique_ptr<Instruction> copy = CloneWithOperands(inst, inst.name(), std::move(operands));
    if (!copy->HasSideEffect() && copy->opcode() != Opcode::kReduce) {
      for (const auto& existing : comp_->instructions()) {
        if (existing->opcode() != Opcode::kParameter && existing->IdenticalIgnoringName(*copy)) {
          copy->DetachFromOperandsAndEdges();
          return existing.get();
        }
      }
    }
    return comp_->AddInstruction(std::move(copy));
  }

  Instruction* Add(std::unique_ptr<Instruction> inst) { return comp_->AddInstruction(std::move(inst)); }

  // Copies `fused`'s instructions (except parameters, which map through `param_value`, and, when `skip_root`, the
  // root); returns the copy of each instruction.
  template <typename ParamValue>
  absl::flat_hash_map<const Instruction*, Instruction*> CloneBody(const Computation& fused, ParamValue param_value,
                                                                  bool skip_root) {
    absl::flat_hash_map<const Instruction*, Instruction*> map;
    for (Instruction* inst : fused.MakePostOrder()) {
      if (inst->opcode() == Opcode::kParameter) {
        map[inst] = param_value(inst->parameter_number());
        continue;
      }
      if (skip_root && inst == fused.root()) continue;
      std::vector<Instruction*> operands;
      for (Instruction* operand : inst->operands()) operands.push_back(map.at(operand));
      map[inst] = Clone(*inst, std::move(operands));
    }
    return map;
  }

  const std::vector<Instruction*>& operands() const { return operands_; }

  Computation* Finish(FusionContext& ctx, Instruction* root) {
    comp_->set_root(root);
    comp_->set_is_fusion_computation(true);
    return ctx.Own(std::move(comp_));
  }

 private:
  std::unique_ptr<Computation> comp_;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> params_;
  absl::flat_hash_map<Instruction*, int64_t> index_;
};

Instruction* AddGetTupleElement(Module& module, Computation& comp, Instruction* tuple, int64_t index) {
  auto gte = Instruction::Create(Opcode::kGetTupleElement, module.UniqueInstructionName("get-tuple-element"),
                                 tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
  gte->SetAttr("index", AttrValue::Int(index));
  return comp.AddInstruction(std::move(gte));
}

absl::Status RemoveFusion(FusionContext& ctx, Computation& comp, Instruction* fusion) {
  Computation* fused = fusion->called_computation(0);
  XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(fusion));
  ctx.Drop(fused);
  return absl::OkStatus();
}

// Points the users of `old` (a fusion whose outputs are now outputs offset.. of `merged`) at `merged`.
absl::Status RedirectOutputs(FusionContext& ctx, Computation& comp, Instruction* old, Instruction* merged,
                             int64_t offset) {
  if (!old->shape().IsTuple()) {
    Instruction* gte = AddGetTupleElement(ctx.module(), comp, merged, offset);
    gte->set_sharding(old->sharding());
    old->ReplaceAllUsesWith(gte);
    return RemoveFusion(ctx, comp, old);
  }
  for (Instruction* user : std::vector<Instruction*>(old->users())) {
    if (user->opcode() != Opcode::kGetTupleElement || !user->control_successors().empty()) continue;
    Instruction* gte = AddGetTupleElement(ctx.module(), comp, merged, offset + user->IntAttr("index"));
    gte->set_sharding(user->sharding());
    user->ReplaceAllUsesWith(gte);
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(user));
  }
  if (old->user_count() != 0 || old == comp.root()) {
    std::vector<Instruction*> elements;
    for (size_t i = 0; i < old->shape().tuple_shapes.size(); ++i) {
      elements.push_back(AddGetTupleElement(ctx.module(), comp, merged, offset + static_cast<int64_t>(i)));
    }
    Instruction* tuple = comp.AddInstruction(Instruction::Create(
        Opcode::kTuple, ctx.module().UniqueInstructionName("tuple"), old->shape(), std::move(elements)));
    old->ReplaceAllUsesWith(tuple);
  }
  return RemoveFusion(ctx, comp, old);
}

}  // namespace

absl::StatusOr<Instruction*> WrapInFusion(FusionContext& ctx, Computation& comp, Instruction* inst,
                                          std::string_view kind) {
  FusedBuilder builder;
  std::vector<Instruction*> params;
  for (Instruction* operand : inst->operands()) params.push_back(builder.Param(operand));
  Instruction* root = builder.Clone(*inst, std::move(params));
  Computation* fused = builder.Finish(ctx, root);
  auto fusion = Instruction::Create(Opcode::kFusion, ctx.module().UniqueInstructionName("fusion"), inst->shape(),
                                    builder.operands());
  fusion->set_called_computations({fused});
  fusion->SetAttr("kind", AttrValue::Enum(std::string(kind)));
  fusion->set_sharding(inst->sharding());
  *fusion->mutable_metadata() = inst->metadata();
  fusion->set_loc(inst->loc());
  Instruction* added = comp.AddInstruction(std::move(fusion));
  inst->ReplaceAllUsesWith(added);
  XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(inst));
  return added;
}

FusionGrowth::FusionGrowth(FusionContext& ctx, Computation& comp, Instruction* fusion)
    : ctx_(ctx), comp_(comp), fusion_(fusion) {
  Computation* old = fusion->called_computation(0);
  body_ = std::make_unique<Computation>(old->name());
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (Instruction* param : old->parameters()) {
    params_.push_back(
        body_->AddInstruction(Instruction::CreateParameter(param->parameter_number(), param->name(), param->shape())));
    map[param] = params_.back();
  }
  for (Instruction* inst : old->MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : inst->operands()) operands.push_back(map.at(operand));
    Instruction* copy = body_->AddInstruction(CloneWithOperands(*inst, inst->name(), std::move(operands)));
    order_[copy] = static_cast<int64_t>(order_.size());
    map[inst] = copy;
  }
  body_->set_root(map.at(old->root()));
  fusion->set_called_computations({body_.get()});
  ctx.Drop(old);
}

absl::Status FusionGrowth::Fuse(Instruction* producer, std::string_view kind) {
  const std::vector<Instruction*> operands = fusion_->operands();
  auto at = std::find(operands.begin(), operands.end(), producer);
  assert(at != operands.end() && "the producer is an operand of the fusion");
  Instruction* producer_param = params_[static_cast<size_t>(at - operands.begin())];
  // The producer's operands take the producer's place in the operand order. Operand lists are short (the pass
  // caps them), so linear lookups beat hashing here.
  std::vector<Instruction*> new_operands;
  std::vector<Instruction*> new_params;
  auto place = [&](Instruction* outer) {
    if (std::find(new_operands.begin(), new_operands.end(), outer) != new_operands.end()) return;
    auto it = std::find(operands.begin(), operands.end(), outer);
    Instruction* param = nullptr;
    if (it != operands.end()) {
      param = params_[static_cast<size_t>(it - operands.begin())];
    } else {
      int64_t slot = body_->parameter_count();
      param = body_->AddInstruction(Instruction::CreateParameter(slot, absl::StrCat("param_", slot), outer->shape()));
    }
    new_operands.push_back(outer);
    new_params.push_back(param);
  };
  for (Instruction* operand : operands) {
    if (operand != producer) {
      place(operand);
      continue;
    }
    for (Instruction* inner : producer->operands()) place(inner);
  }
  std::vector<Instruction*> producer_operands;
  for (Instruction* inner : producer->operands()) {
    auto it = std::find(new_operands.begin(), new_operands.end(), inner);
    producer_operands.push_back(new_params[static_cast<size_t>(it - new_operands.begin())]);
  }
  Instruction* fused =
      body_->AddInstruction(CloneWithOperands(*producer, producer->name(), std::move(producer_operands)));
  order_[fused] = --first_key_;
  // The producer's parameter stays behind unused; Finish leaves it out.
  producer_param->ReplaceAllUsesWith(fused);
  params_ = std::move(new_params);
  XLAC_RETURN_IF_ERROR(Deduplicate(fused));

  // Use lists are vectors, so rewriting every operand would cost the users of every operand at each step; the
  // operands before the producer's position stay.
  if (new_operands.size() >= operands.size()) {
    for (size_t i = static_cast<size_t>(at - operands.begin()); i < new_operands.size(); ++i) {
      if (i < operands.size()) {
        fusion_->ReplaceOperandWith(static_cast<int64_t>(i), new_operands[i]);
      } else {
        fusion_->AppendOperand(new_operands[i]);
      }
    }
  } else {
    fusion_->DetachFromOperandsAndEdges();
    for (Instruction* operand : new_operands) fusion_->AppendOperand(operand);
  }
  fusion_->SetAttr("kind", AttrValue::Enum(std::string(kind)));
  if (producer->user_count() == 0 && producer != comp_.root() && producer->control_successors().empty()) {
    XLAC_RETURN_IF_ERROR(comp_.RemoveInstruction(producer));
  }
  return absl::OkStatus();
}

absl::Status FusionGrowth::Deduplicate(Instruction* fused) {
  // Only `fused` and instructions whose operands changed can have become identical to another; they are visited in
  // program order, so a merge's effect on later users is seen when those come up.
  std::map<int64_t, Instruction*> worklist = {{order_.at(fused), fused}};
  for (Instruction* user : fused->users()) worklist.emplace(order_.at(user), user);
  while (!worklist.empty()) {
    Instruction* inst = worklist.begin()->second;
    worklist.erase(worklist.begin());
    std::vector<Instruction*> candidates;
    if (inst->operand_count() > 0) {
      candidates = inst->operand(0)->users();
    } else {
      for (const auto& other : body_->instructions()) {
        if (other->opcode() != Opcode::kParameter && other->operand_count() == 0) candidates.push_back(other.get());
      }
    }
    for (Instruction* other : candidates) {
      if (other == inst || !other->IdenticalIgnoringName(*inst)) continue;
      Instruction* keep = order_.at(other) < order_.at(inst) ? other : inst;
      Instruction* drop = keep == other ? inst : other;
      // Every reduce is an output of its own.
      if (drop->HasSideEffect() || drop->opcode() == Opcode::kReduce) break;
      drop->ReplaceAllUsesWith(keep);
      for (Instruction* user : keep->users()) worklist.emplace(order_.at(user), user);
      worklist.erase(order_.at(drop));
      order_.erase(drop);
      XLAC_RETURN_IF_ERROR(body_->RemoveInstruction(drop));
      if (drop == inst) break;
    }
  }
  return absl::OkStatus();
}

void FusionGrowth::Finish() {
  FusedBuilder builder;
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (size_t i = 0; i < params_.size(); ++i)
    map[params_[i]] = builder.Param(fusion_->operand(static_cast<int64_t>(i)));
  std::vector<std::pair<int64_t, Instruction*>> ordered;
  for (const auto& [inst, key] : order_) ordered.push_back({key, inst});
  std::sort(ordered.begin(), ordered.end());
  for (const auto& [key, inst] : ordered) {
    std::vector<Instruction*> operands;
    for (Instruction* operand : inst->operands()) operands.push_back(map.at(operand));
    map[inst] = builder.Add(CloneWithOperands(*inst, inst->name(), std::move(operands)));
  }
  fusion_->set_called_computations({builder.Finish(ctx_, map.at(body_->root()))});
  body_.reset();
}

absl::StatusOr<Instruction*> MergeSiblingFusions(FusionContext& ctx, Computation& comp, Instruction* a, Instruction* b,
                                                 std::string_view kind) {
  FusedBuilder builder;
  for (Instruction* operand : a->operands()) builder.Param(operand);
  for (Instruction* operand : b->operands()) builder.Param(operand);
  std::vector<Instruction*> outputs;
  std::vector<Shape> output_shapes;
  int64_t a_outputs = 0;
  for (Instruction* part : {a, b}) {
    const Computation& fused = *part->called_computation(0);
    bool tuple_root = fused.root()->opcode() == Opcode::kTuple;
    auto map = builder.CloneBody(
        fused, [&](int64_t number) { return builder.Param(part->operand(number)); }, tuple_root);
    std::vector<Instruction*> roots = tuple_root ? fused.root()->operands() : std::vector<Instruction*>{fused.root()};
    for (Instruction* root : roots) {
      outputs.push_back(map.at(root));
      output_shapes.push_back(root->shape());
    }
    if (part == a) a_outputs = static_cast<int64_t>(outputs.size());
  }
  Shape shape = Shape::Tuple(output_shapes);
  Instruction* root = builder.Add(Instruction::Create(Opcode::kTuple, "tuple", shape, outputs));
  Computation* fused = builder.Finish(ctx, root);
  auto fusion =
      Instruction::Create(Opcode::kFusion, ctx.module().UniqueInstructionName("fusion"), shape, builder.operands());
  fusion->set_called_computations({fused});
  fusion->SetAttr("kind", AttrValue::Enum(std::string(kind)));
  *fusion->mutable_metadata() = a->metadata();
  fusion->set_loc(a->loc());
  Instruction* merged = comp.AddInstruction(std::move(fusion));
  XLAC_RETURN_IF_ERROR(RedirectOutputs(ctx, comp, a, merged, 0));
  XLAC_RETURN_IF_ERROR(RedirectOutputs(ctx, comp, b, merged, a_outputs));
  return merged;
}

Computation* FusionContext::Own(std::unique_ptr<Computation> comp) {
  Computation* raw = comp.get();
  owned_[raw] = std::move(comp);
  return raw;
}

void FusionContext::Drop(const Computation* comp) { owned_.erase(comp); }

void FusionContext::Adopt(const std::vector<Instruction*>& fusions) {
  absl::flat_hash_set<std::string> used;
  absl::flat_hash_set<std::string> used_computations;
  for (const auto& comp : module_.computations()) {
    used_computations.insert(comp->name());
    for (const auto& inst : comp->instructions()) used.insert(inst->name());
  }
  // Module::UniqueComputationName's choice (the first free fused_computation[.N]) without collecting every
  // computation name per fusion: names are only added here, so the first free suffix never decreases.
  int64_t suffix = 0;
  auto next_name = [&] {
    std::string name = "fused_computation";
    while (used_computations.contains(name)) name = absl::StrCat("fused_computation.", ++suffix);
    used_computations.insert(name);
    return name;
  };
  std::vector<Computation*> order;
  for (Instruction* fusion : fusions) order.push_back(fusion->called_computation(0));
  // Anything else still owned (only after an error) joins the module too, so no fusion points outside it.
  std::vector<Computation*> rest;
  for (const auto& [comp, owned] : owned_) {
    if (std::find(order.begin(), order.end(), comp) == order.end()) rest.push_back(owned.get());
  }
  std::sort(rest.begin(), rest.end(), [](const Computation* a, const Computation* b) { return a->name() < b->name(); });
  order.insert(order.end(), rest.begin(), rest.end());
  for (Computation* fused : order) {
    auto it = owned_.find(fused);
    if (it == owned_.end()) continue;
    fused->set_name(next_name());
    for (Instruction* inst : fused->MakePostOrder()) {
      while (used.contains(inst->name())) inst->set_name(UniqueCopyName(module_, inst->name()));
      used.insert(inst->name());
    }
    module_.AddComputation(std::move(it->second));
    owned_.erase(it);
  }
}

}  // namespace xlac
