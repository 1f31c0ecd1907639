#include "ir/computation.h"

#include <algorithm>
#include <cassert>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/module.h"

namespace xlac {

std::vector<Instruction*> Computation::MakeInstructionList() const {
  std::vector<Instruction*> out;
  out.reserve(instructions_.size());
  for (const auto& inst : instructions_) out.push_back(inst.get());
  return out;
}

std::vector<Instruction*> Computation::MakePostOrder() const {
  // Iterative DFS (HLO graphs can be deep chains) seeded in program order; operands, then control predecessors.
  std::vector<Instruction*> order;
  order.reserve(instructions_.size());
  absl::flat_hash_map<const Instruction*, uint8_t> state;  // 1 = on stack, 2 = emitted
  std::vector<std::pair<Instruction*, size_t>> stack;
  for (const auto& seed : instructions_) {
    if (state[seed.get()] != 0) continue;
    stack.push_back({seed.get(), 0});
    state[seed.get()] = 1;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      size_t num_operands = inst->operands().size();
      size_t total = num_operands + inst->control_predecessors().size();
      if (next < total) {
        Instruction* dep = next < num_operands ? inst->operand(static_cast<int64_t>(next))
                                               : inst->control_predecessors()[next - num_operands];
        ++next;
        // Only follow edges inside this computation (malformed input may point elsewhere; cycles are skipped
        // here and reported by the verifier).
        if (dep->parent() != this || state[dep] != 0) continue;
        state[dep] = 1;
        stack.push_back({dep, 0});
        continue;
      }
      state[inst] = 2;
      order.push_back(inst);
      stack.pop_back();
    }
  }
  return order;
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> inst) {
  Instruction* raw = inst.get();
  raw->parent_ = this;
  if (raw->opcode() == Opcode::kParameter) {
    int64_t number = raw->parameter_number();
    assert(number >= 0 && number < (int64_t{1} << 24) && "parameter numbers are validated by the caller");
    if (static_cast<int64_t>(parameters_.size()) <= number) parameters_.resize(static_cast<size_t>(number) + 1);
    parameters_[static_cast<size_t>(number)] = raw;
  }
  if (parent_ != nullptr) parent_->RegisterInstruction(raw);
  instructions_.push_back(std::move(inst));
  return raw;
}

absl::Status Computation::RemoveInstruction(Instruction* inst) {
  if (inst->parent() != this) return absl::InvalidArgumentError(absl::StrCat(inst->name(), " is not in ", name_));
  if (inst->user_count() != 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot remove ", inst->name(), ": it still has users"));
  }
  if (inst == root_) return absl::FailedPreconditionError(absl::StrCat("cannot remove root ", inst->name()));
  if (inst->opcode() == Opcode::kParameter) {
    return absl::FailedPreconditionError(absl::StrCat("cannot remove parameter ", inst->name()));
  }
  inst->DetachFromOperandsAndEdges();
  auto it = std::find_if(instructions_.begin(), instructions_.end(),
                         [&](const std::unique_ptr<Instruction>& p) { return p.get() == inst; });
  instructions_.erase(it);
  return absl::OkStatus();
}

absl::Status Computation::RemoveInstructionAndUnusedOperands(Instruction* inst) {
  std::vector<Instruction*> worklist = {inst};
  absl::flat_hash_set<Instruction*> removed;
  while (!worklist.empty()) {
    Instruction* current = worklist.back();
    worklist.pop_back();
    if (removed.contains(current) || current->user_count() != 0 || current == root_ ||
        current->opcode() == Opcode::kParameter || (current != inst && current->HasSideEffect()) ||
        !current->control_successors().empty()) {
      continue;
    }
    std::vector<Instruction*> operands = current->operands();
    absl::Status status = RemoveInstruction(current);
    if (!status.ok()) return status;
    removed.insert(current);
    for (Instruction* operand : operands) {
      if (operand->parent() == this) worklist.push_back(operand);
    }
  }
  return absl::OkStatus();
}

Instruction* Computation::FindInstruction(std::string_view name) const {
  for (const auto& inst : instructions_) {
    if (inst->name() == name) return inst.get();
  }
  return nullptr;
}

bool Computation::is_entry() const { return parent_ != nullptr && parent_->entry_computation() == this; }

std::unique_ptr<Computation> Computation::Clone(const std::string& new_name) const {
  auto clone = std::make_unique<Computation>(new_name);
  clone->is_fusion_computation_ = is_fusion_computation_;
  clone->execution_thread_ = execution_thread_;
  clone->loc_ = loc_;
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (const Instruction* old : MakePostOrder()) {
    std::vector<Instruction*> operands;
    for (Instruction* operand : old->operands()) {
      auto it = map.find(operand);
      operands.push_back(it != map.end() ? it->second : operand);
    }
    std::unique_ptr<Instruction> copy(new Instruction(old->opcode_, old->name_, old->shape_));
    for (Instruction* operand : operands) copy->AppendOperand(operand);
    copy->called_computations_ = old->called_computations_;
    copy->attrs_ = old->attrs_;
    copy->parameter_number_ = old->parameter_number_;
    if (old->literal_) copy->literal_ = std::make_unique<Literal>(*old->literal_);
    copy->sharding_ = old->sharding_;
    copy->metadata_ = old->metadata_;
    copy->frontend_attributes_ = old->frontend_attributes_;
    copy->backend_config_ = old->backend_config_;
    copy->backend_config_is_raw_ = old->backend_config_is_raw_;
    copy->async_wrapped_opcode_ = old->async_wrapped_opcode_;
    copy->extra_attributes_ = old->extra_attributes_;
    copy->loc_ = old->loc_;
    map[old] = clone->AddInstruction(std::move(copy));
  }
  // Keep program order (post order may differ), then control edges.
  std::vector<std::unique_ptr<Instruction>> ordered;
  absl::flat_hash_map<Instruction*, size_t> position;
  for (size_t i = 0; i < clone->instructions_.size(); ++i) position[clone->instructions_[i].get()] = i;
  for (const auto& old : instructions_) {
    ordered.push_back(std::move(clone->instructions_[position[map[old.get()]]]));
  }
  clone->instructions_ = std::move(ordered);
  for (const auto& old : instructions_) {
    for (Instruction* succ : old->control_successors()) {
      auto it = map.find(succ);
      if (it != map.end()) map[old.get()]->AddControlDependencyTo(it->second);
    }
  }
  if (root_ != nullptr) clone->root_ = map[root_];
  return clone;
}

}  // namespace xlac
