// Fusion instructions. A fusion is partitioned as a unit: its fused computation is partitioned, op by op with the
// ordinary handlers, into a scratch computation (the fused parameters take the operands' shardings, every fused op
// its own), and the scratch program is then copied into the caller re-fused. Without a collective the whole
// per-core program becomes one fusion of the original kind, so a loop fusion stays one loop over the shards. A
// collective cannot run inside a kernel: then the program is cut at the collectives (and at the few ops no fusion
// holds) and every collective-free stretch of two or more ops becomes a fusion of its own, kept only when codegen
// can emit it (a kInput fusion ending in the partial reduce, a kLoop epilogue after a dot's all-reduce); the rest is
// left unfused for the fusion pass. The report notes each such split.
#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"
#include "passes/fusion/fusible.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {
namespace {

bool IsCollective(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
      return true;
    default:
      return false;
  }
}

// A windowed einsum's while loop (windowed_einsum.h) runs collectives inside, so it cuts a fusion like one.
bool CutsFusion(const Instruction& inst) { return IsCollective(inst) || inst.opcode() == Opcode::kWhile; }

// Operand-less elemental values (constants, iotas) are copied into every fusion that reads them rather than passed
// in, as the fusion pass does.
bool IsFusedLeaf(const Instruction& inst) {
  return inst.operand_count() == 0 && inst.opcode() != Opcode::kParameter && IsElementalOp(inst);
}

// What a fusion cut at collectives may hold: what the three emittable kinds are made of.
bool FitsSplitFusion(const Instruction& inst) {
  if (inst.HasSideEffect()) return false;
  return IsElementalOp(inst) || inst.opcode() == Opcode::kReduce || inst.opcode() == Opcode::kDot ||
         inst.opcode() == Opcode::kConvolution;
}

std::string KindForSplitPart(const std::vector<Instruction*>& members, const std::vector<Instruction*>& outputs) {
  for (const Instruction* m : members) {
    if (m->opcode() == Opcode::kDot || m->opcode() == Opcode::kConvolution) return "kOutput";
  }
  if (std::all_of(outputs.begin(), outputs.end(),
                  [](const Instruction* o) { return o->opcode() == Opcode::kReduce; })) {
    return "kInput";
  }
  return "kLoop";
}

// One piece of the copied program: a fused group of scratch instructions, or a single instruction.
struct Unit {
  std::vector<Instruction*> members;  // creation order (operands first)
  bool fused = false;
};

class FusionPartitioner {
 public:
  FusionPartitioner(ComputationBuilder& b, const Instruction& fusion)
      : b_(b), p_(b.partitioner()), fusion_(fusion), fused_(*fusion.called_computation(0)), scratch_(fused_.name()) {}

  absl::StatusOr<PValue> Run(const Sharding& target);

 private:
  absl::Status PartitionIntoScratch(const Sharding& target);
  void FormUnits(Instruction* root);
  absl::Status EmitUnit(size_t unit);
  std::vector<Instruction*> Outputs(const Unit& unit) const;
  absl::StatusOr<Instruction*> EmitFusion(const Unit& unit, const std::vector<Instruction*>& outputs,
                                          const std::string& kind, bool like_original);
  Instruction* EmitSingle(Instruction* inst);
  Instruction* Outer(Instruction* scratch_inst) const { return outer_.at(scratch_inst); }

  ComputationBuilder& b_;
  Partitioner& p_;
  const Instruction& fusion_;
  const Computation& fused_;
  Computation scratch_;  // never part of the module
  PValue result_;
  bool split_ = false;
  std::vector<Unit> units_;
  absl::flat_hash_map<const Instruction*, size_t> unit_of_;
  absl::flat_hash_set<const Instruction*> live_;
  absl::flat_hash_map<const Instruction*, Instruction*> outer_;  // scratch instruction -> its value in the caller
  std::vector<std::string> parts_;                               // what the split produced, for the report
};

absl::Status FusionPartitioner::PartitionIntoScratch(const Sharding& target) {
  ComputationBuilder sb(p_, &scratch_);
  for (int64_t k = 0; k < fusion_.operand_count(); ++k) {
    const PValue& operand = b_.Get(fusion_.operand(k));
    const Instruction* param = fused_.parameter(k);
    Instruction* local = scratch_.AddInstruction(
        Instruction::CreateParameter(k, p_.module().UniqueInstructionName(param->name()), operand.hlo->shape()));
    outer_[local] = operand.hlo;
    sb.Set(param, PValue{local, operand.sharding, operand.base});
  }
  for (Instruction* inst : fused_.MakePostOrder()) {
    if (inst->opcode() == Opcode::kParameter) continue;
    // The root keeps the sharding propagation gave it; a different one for the fusion's users is reached by the
    // driver's reshard after the fusion, outside the kernel.
    Sharding want = inst == fused_.root() && !inst->sharding().has_value() ? target : p_.TargetSharding(*inst);
    absl::StatusOr<PValue> value = DispatchInstruction(sb, *inst, want);
    if (value.ok()) value = sb.Reshard(*value, want, *inst);
    if (!value.ok()) return LocatePartitionError(*inst, want, value.status());
    sb.Set(inst, *std::move(value));
  }
  result_ = sb.Get(fused_.root());
  return absl::OkStatus();
}

void FusionPartitioner::FormUnits(Instruction* root) {
  std::vector<Instruction*> order = scratch_.MakeInstructionList();  // creation order: operands first
  // What the result needs, and every collective (recorded in the report, so it must reach the caller; DCE drops
  // an unused one at the end).
  std::vector<Instruction*> stack = {root};
  for (Instruction* inst : order) {
    if (CutsFusion(*inst)) stack.push_back(inst);
  }
  while (!stack.empty()) {
    Instruction* inst = stack.back();
    stack.pop_back();
    if (!live_.insert(inst).second) continue;
    for (Instruction* operand : inst->operands()) stack.push_back(operand);
  }
  // Collectives that only move the fusion's operands (a reshard to the sharding the fused ops want) run before the
  // fusion and do not split it; only a collective of a value computed inside does.
  absl::flat_hash_set<const Instruction*> on_operands;
  for (Instruction* inst : order) {
    if (!live_.contains(inst) || !CutsFusion(*inst)) continue;
    const bool moves_operands =
        std::all_of(inst->operands().begin(), inst->operands().end(),
                    [&](const Instruction* o) { return o->operand_count() == 0 || on_operands.contains(o); });
    if (moves_operands) {
      on_operands.insert(inst);
    } else {
      split_ = true;
    }
  }
  auto member = [&](const Instruction* inst) {
    // partition-id and replica-id are not elemental: they stay outside and come in as operands.
    if (!live_.contains(inst) || inst->operand_count() == 0 || CutsFusion(*inst)) return false;
    return !split_ || FitsSplitFusion(*inst);
  };
  std::vector<std::vector<Instruction*>> groups;
  if (!split_) {
    groups.emplace_back();
    for (Instruction* inst : order) {
      if (member(inst)) groups.back().push_back(inst);
    }
  } else {
    // A member's level counts the cuts (collectives, ops no fusion holds) on its longest path from the fusion's
    // operands. Members of one level form a convex group: a path leaving it through a cut ends at a higher level.
    absl::flat_hash_map<const Instruction*, int64_t> level;
    for (Instruction* inst : order) {
      if (!live_.contains(inst)) continue;
      int64_t l = 0;
      for (const Instruction* operand : inst->operands()) {
        const bool cut = !member(operand) && operand->operand_count() > 0 && !on_operands.contains(operand);
        l = std::max(l, level[operand] + (cut ? 1 : 0));
      }
      level[inst] = l;
    }
    // Members sink to the latest level their users allow (still at or above their own): a broadcast of the bias
    // belongs to the epilogue after a dot's all-reduce, not to the dot's part. Levels stay non-decreasing along
    // every path and rise across every cut, so the groups stay convex.
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Instruction* inst = *it;
      if (!member(inst) || inst == root) continue;
      int64_t l = std::numeric_limits<int64_t>::max();
      for (const Instruction* user : inst->users()) {
        if (live_.contains(user)) l = std::min(l, level[user]);
      }
      if (l != std::numeric_limits<int64_t>::max()) level[inst] = std::max(level[inst], l);
    }
    std::map<int64_t, std::vector<Instruction*>> by_level;
    for (Instruction* inst : order) {
      if (member(inst)) by_level[level[inst]].push_back(inst);
    }
    for (auto& [l, members] : by_level) {
      // A kOutput fusion reads its dot's operands as parameters: what computes them inside the group (a slice of
      // a replicated weight) becomes a part of its own before it. Nothing of the rest feeds it, so both stay convex.
      absl::flat_hash_set<const Instruction*> feeds_dot;
      for (auto it = members.rbegin(); it != members.rend(); ++it) {
        const Instruction* m = *it;
        bool feeds = false;
        for (const Instruction* user : m->users()) {
          feeds |= feeds_dot.contains(user) || user->opcode() == Opcode::kDot || user->opcode() == Opcode::kConvolution;
        }
        if (feeds && std::find(members.begin(), members.end(), m) != members.end()) feeds_dot.insert(m);
      }
      std::vector<Instruction*> before, rest;
      for (Instruction* m : members) (feeds_dot.contains(m) ? before : rest).push_back(m);
      for (std::vector<Instruction*>* part : {&before, &rest}) {
        if (part->size() >= 2) groups.push_back(std::move(*part));  // a lone op needs no fusion of its own
      }
    }
  }
  for (std::vector<Instruction*>& members : groups) {
    if (members.empty()) continue;
    for (Instruction* m : members) unit_of_[m] = units_.size();
    units_.push_back(Unit{std::move(members), true});
  }
  for (Instruction* inst : order) {
    if (!live_.contains(inst) || inst->opcode() == Opcode::kParameter || unit_of_.contains(inst)) continue;
    unit_of_[inst] = units_.size();
    units_.push_back(Unit{{inst}, false});
  }
}

std::vector<Instruction*> FusionPartitioner::Outputs(const Unit& unit) const {
  absl::flat_hash_set<const Instruction*> in_unit(unit.members.begin(), unit.members.end());
  std::vector<Instruction*> outputs;
  for (Instruction* m : unit.members) {
    bool escapes = m == result_.hlo;
    for (const Instruction* user : m->users()) escapes |= live_.contains(user) && !in_unit.contains(user);
    if (escapes) outputs.push_back(m);
  }
  return outputs;
}

Instruction* FusionPartitioner::EmitSingle(Instruction* inst) {
  std::vector<Instruction*> operands;
  for (Instruction* operand : inst->operands()) operands.push_back(Outer(operand));
  Instruction* copy = b_.computation()->AddInstruction(CloneWithOperands(*inst, inst->name(), std::move(operands)));
  if (IsCollective(*inst)) p_.MoveCollective(inst, copy);
  outer_[inst] = copy;
  return copy;
}

absl::StatusOr<Instruction*> FusionPartitioner::EmitFusion(const Unit& unit, const std::vector<Instruction*>& outputs,
                                                           const std::string& kind, bool like_original) {
  Module& module = p_.module();
  auto body = std::make_unique<Computation>(module.UniqueComputationName(fused_.name()));
  body->set_is_fusion_computation(true);
  absl::flat_hash_map<const Instruction*, Instruction*> local;
  std::vector<Instruction*> operands;
  auto inside = [&](Instruction* value) -> Instruction* {
    if (auto it = local.find(value); it != local.end()) return it->second;
    Instruction* made = nullptr;
    if (IsFusedLeaf(*value)) {
      made = body->AddInstruction(CloneWithOperands(*value, UniqueCopyName(module, value->name()), {}));
    } else {
      const int64_t number = static_cast<int64_t>(operands.size());
      operands.push_back(Outer(value));
      made = body->AddInstruction(Instruction::CreateParameter(
          number, module.UniqueInstructionName(absl::StrCat("param_", number)), value->shape()));
    }
    local[value] = made;
    return made;
  };
  if (like_original) {
    // The fused computation keeps its parameter order, so the per-core fusion reads its operands as the original did.
    absl::flat_hash_set<const Instruction*> read;
    for (const Instruction* m : unit.members) read.insert(m->operands().begin(), m->operands().end());
    for (Instruction* param : scratch_.parameters()) {
      if (read.contains(param)) inside(param);
    }
  }
  for (Instruction* m : unit.members) {
    std::vector<Instruction*> ops;
    for (Instruction* operand : m->operands()) ops.push_back(inside(operand));
    local[m] = body->AddInstruction(CloneWithOperands(*m, m->name(), std::move(ops)));
  }
  Instruction* root = nullptr;
  if (outputs.size() == 1) {
    root = local.at(outputs[0]);
  } else {
    std::vector<Instruction*> elements;
    std::vector<Shape> shapes;
    for (Instruction* o : outputs) {
      elements.push_back(local.at(o));
      shapes.push_back(o->shape());
    }
    root = body->AddInstruction(Instruction::Create(Opcode::kTuple, module.UniqueInstructionName("tuple"),
                                                    Shape::Tuple(std::move(shapes)), elements));
  }
  body->set_root(root);
  Computation* called = module.AddComputation(std::move(body));
  Instruction* fusion = nullptr;
  if (like_original) {
    fusion = b_.Clone(fusion_, root->shape(), operands);
  } else {
    fusion = b_.Add(Opcode::kFusion, root->shape(), operands, "fusion");
    fusion->SetAttr("kind", AttrValue::Enum(kind));
    fusion->set_loc(fusion_.loc());
    *fusion->mutable_metadata() = fusion_.metadata();
  }
  fusion->set_called_computations({called});
  if (like_original) p_.KeepComputationName(called, fused_.name());
  if (!like_original && !IsEmittableFusion(*fusion)) {
    // Codegen would inline it again; the fusion pass may do better with the ops themselves.
    XLAC_RETURN_IF_ERROR(b_.computation()->RemoveInstruction(fusion));
    XLAC_RETURN_IF_ERROR(module.RemoveComputation(called));
    return nullptr;
  }
  if (outputs.size() == 1) {
    outer_[outputs[0]] = fusion;
  } else {
    for (size_t i = 0; i < outputs.size(); ++i) outer_[outputs[i]] = b_.Gte(fusion, static_cast<int64_t>(i));
  }
  return fusion;
}

absl::Status FusionPartitioner::EmitUnit(size_t index) {
  const Unit& unit = units_[index];
  if (unit.fused) {
    const std::vector<Instruction*> outputs = Outputs(unit);
    const std::string kind = split_ ? KindForSplitPart(unit.members, outputs) : std::string(fusion_.StringAttr("kind"));
    XLAC_ASSIGN_OR_RETURN(Instruction * fusion, EmitFusion(unit, outputs, kind, !split_));
    if (fusion != nullptr) {
      parts_.push_back(absl::StrCat(kind, " fusion of ", unit.members.size(), " ops"));
      return absl::OkStatus();
    }
  }
  for (Instruction* inst : unit.members) {
    EmitSingle(inst);
    const bool reads_partition_id = inst->opcode() == Opcode::kConvert && inst->operand(0)->operand_count() == 0;
    if (inst->operand_count() > 0 && !reads_partition_id) parts_.push_back(std::string(OpcodeName(inst->opcode())));
  }
  return absl::OkStatus();
}

absl::StatusOr<PValue> FusionPartitioner::Run(const Sharding& target) {
  XLAC_RETURN_IF_ERROR(PartitionIntoScratch(target));
  FormUnits(result_.hlo);
  // Units in an order where every unit follows the units it reads (the groups are convex, so the unit graph is
  // acyclic); a depth-first walk keeps the scratch program's order otherwise.
  std::vector<uint8_t> state(units_.size(), 0);
  std::function<absl::Status(size_t)> visit = [&](size_t u) -> absl::Status {
    if (state[u] != 0) return absl::OkStatus();
    state[u] = 1;
    for (const Instruction* m : units_[u].members) {
      for (const Instruction* operand : m->operands()) {
        auto it = unit_of_.find(operand);
        if (it != unit_of_.end() && it->second != u) XLAC_RETURN_IF_ERROR(visit(it->second));
      }
    }
    state[u] = 2;
    return EmitUnit(u);
  };
  for (size_t u = 0; u < units_.size(); ++u) XLAC_RETURN_IF_ERROR(visit(u));
  if (split_) {
    p_.Note(fusion_,
            absl::StrCat(std::string(fusion_.StringAttr("kind")),
                         " fusion split at the collectives its sharded form needs: ", absl::StrJoin(parts_, ", ")));
  }
  p_.MarkReplaced(&fused_);
  return PValue{Outer(result_.hlo), result_.sharding, fusion_.shape()};
}

}  // namespace

absl::StatusOr<PValue> HandleFusion(ComputationBuilder& b, const Instruction& inst, const Sharding& target) {
  if (inst.opcode() != Opcode::kFusion || inst.called_computations().size() != 1 ||
      inst.called_computation(0)->parameter_count() != inst.operand_count()) {
    return absl::NotFoundError("");
  }
  return FusionPartitioner(b, inst).Run(target);
}

}  // namespace xlac::spmd
