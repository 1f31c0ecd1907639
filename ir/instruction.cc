#include "ir/instruction.h"

#include <algorithm>
#include <cassert>

#include "ir/computation.h"

namespace xlac {

Instruction::Instruction(Opcode opcode, std::string name, Shape shape)
    : opcode_(opcode), name_(std::move(name)), shape_(std::move(shape)) {}

Instruction::~Instruction() = default;

std::unique_ptr<Instruction> Instruction::Create(Opcode opcode, std::string name, Shape shape,
                                                 std::vector<Instruction*> operands) {
  std::unique_ptr<Instruction> inst(new Instruction(opcode, std::move(name), std::move(shape)));
  for (Instruction* operand : operands) inst->AppendOperand(operand);
  return inst;
}

std::unique_ptr<Instruction> Instruction::CreateParameter(int64_t number, std::string name, Shape shape) {
  std::unique_ptr<Instruction> inst(new Instruction(Opcode::kParameter, std::move(name), std::move(shape)));
  inst->parameter_number_ = number;
  return inst;
}

std::unique_ptr<Instruction> Instruction::CreateConstant(std::string name, Literal literal) {
  Shape shape = literal.shape();
  std::unique_ptr<Instruction> inst(new Instruction(Opcode::kConstant, std::move(name), std::move(shape)));
  inst->set_literal(std::move(literal));
  return inst;
}

void Instruction::set_literal(Literal literal) { literal_ = std::make_unique<Literal>(std::move(literal)); }

void Instruction::AddUser(Instruction* user) {
  if (std::find(users_.begin(), users_.end(), user) == users_.end()) users_.push_back(user);
}

void Instruction::RemoveUserIfUnused(Instruction* user) {
  if (std::find(user->operands_.begin(), user->operands_.end(), this) != user->operands_.end()) return;
  users_.erase(std::remove(users_.begin(), users_.end(), user), users_.end());
}

void Instruction::AppendOperand(Instruction* operand) {
  assert(operand != nullptr);
  operands_.push_back(operand);
  operand->AddUser(this);
}

void Instruction::ReplaceOperandWith(int64_t index, Instruction* new_operand) {
  assert(index >= 0 && index < operand_count() && new_operand != nullptr);
  Instruction* old = operands_[index];
  if (old == new_operand) return;
  operands_[index] = new_operand;
  new_operand->AddUser(this);
  old->RemoveUserIfUnused(this);
}

void Instruction::ReplaceUsesOfOperand(Instruction* old_operand, Instruction* new_operand) {
  if (old_operand == new_operand) return;
  bool replaced = false;
  for (Instruction*& operand : operands_) {
    if (operand == old_operand) {
      operand = new_operand;
      replaced = true;
    }
  }
  if (!replaced) return;
  new_operand->AddUser(this);
  old_operand->RemoveUserIfUnused(this);
}

void Instruction::ReplaceAllUsesWith(Instruction* replacement) {
  assert(replacement != this);
  // Copy: ReplaceUsesOfOperand edits users_.
  std::vector<Instruction*> users = users_;
  for (Instruction* user : users) user->ReplaceUsesOfOperand(this, replacement);
  if (parent_ != nullptr && parent_->root() == this) parent_->set_root(replacement);
}

void Instruction::DetachFromOperandsAndEdges() {
  std::vector<Instruction*> operands = std::move(operands_);
  operands_.clear();
  for (Instruction* operand : operands) operand->RemoveUserIfUnused(this);
  for (Instruction* pred : control_predecessors_) {
    auto& s = pred->control_successors_;
    s.erase(std::remove(s.begin(), s.end(), this), s.end());
  }
  for (Instruction* succ : control_successors_) {
    auto& p = succ->control_predecessors_;
    p.erase(std::remove(p.begin(), p.end(), this), p.end());
  }
  control_predecessors_.clear();
  control_successors_.clear();
}

void Instruction::AddControlDependencyTo(Instruction* successor) {
  if (std::find(control_successors_.begin(), control_successors_.end(), successor) != control_successors_.end()) {
    return;
  }
  control_successors_.push_back(successor);
  successor->control_predecessors_.push_back(this);
}

void Instruction::RemoveControlDependencyTo(Instruction* successor) {
  control_successors_.erase(std::remove(control_successors_.begin(), control_successors_.end(), successor),
                            control_successors_.end());
  auto& p = successor->control_predecessors_;
  p.erase(std::remove(p.begin(), p.end(), this), p.end());
}

int64_t Instruction::IntAttr(std::string_view name, int64_t default_value) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr || v->kind != AttrKind::kInt) return default_value;
  return v->get<int64_t>();
}

bool Instruction::BoolAttr(std::string_view name, bool default_value) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr || v->kind != AttrKind::kBool) return default_value;
  return v->get<bool>();
}

const std::vector<int64_t>& Instruction::IntListAttr(std::string_view name) const {
  static const std::vector<int64_t> kEmpty;
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr || v->kind != AttrKind::kIntList) return kEmpty;
  return v->get<std::vector<int64_t>>();
}

std::string_view Instruction::StringAttr(std::string_view name) const {
  const AttrValue* v = attrs_.Find(name);
  if (v == nullptr) return {};
  if (v->kind != AttrKind::kString && v->kind != AttrKind::kEnum && v->kind != AttrKind::kRaw) return {};
  return v->get<std::string>();
}

namespace {

bool HasSideEffectImpl(const Instruction& inst, int depth) {
  if (HasSideEffectOpcode(inst.opcode())) return true;
  if (inst.opcode() == Opcode::kCustomCall && inst.BoolAttr("custom_call_has_side_effect")) return true;
  // Malformed modules may have call cycles; the verifier rejects them, this only must not recurse forever.
  if (depth > 64) return true;
  for (const Computation* comp : inst.called_computations()) {
    for (const auto& callee_inst : comp->instructions()) {
      if (HasSideEffectImpl(*callee_inst, depth + 1)) return true;
    }
  }
  return false;
}

}  // namespace

bool Instruction::HasSideEffect() const { return HasSideEffectImpl(*this, 0); }

bool Instruction::IdenticalIgnoringName(const Instruction& other) const {
  if (opcode_ != other.opcode_ || !(shape_ == other.shape_) || operands_ != other.operands_ ||
      called_computations_ != other.called_computations_ || parameter_number_ != other.parameter_number_ ||
      !(attrs_ == other.attrs_) || sharding_ != other.sharding_ || backend_config_ != other.backend_config_ ||
      backend_config_is_raw_ != other.backend_config_is_raw_ ||
      async_wrapped_opcode_ != other.async_wrapped_opcode_ || extra_attributes_ != other.extra_attributes_) {
    return false;
  }
  if ((literal_ == nullptr) != (other.literal_ == nullptr)) return false;
  if (literal_ != nullptr && !(*literal_ == *other.literal_)) return false;
  return true;
}

}  // namespace xlac
