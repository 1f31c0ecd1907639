#include "passes/alias_util.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"

namespace xlac {
namespace {

void CollectLeaves(const Shape& shape, ShapeIndex& prefix, std::vector<ShapeIndex>& out) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      prefix.push_back(static_cast<int64_t>(i));
      CollectLeaves(shape.tuple_shapes[i], prefix, out);
      prefix.pop_back();
    }
  } else if (shape.IsArray()) {
    out.push_back(prefix);
  }
}

}  // namespace

std::vector<ShapeIndex> ArrayLeafIndices(const Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  CollectLeaves(shape, prefix, out);
  return out;
}

bool IsForwarding(const Instruction& inst) {
  return inst.opcode() == Opcode::kTuple || inst.opcode() == Opcode::kGetTupleElement ||
         (inst.opcode() == Opcode::kBitcast && inst.shape().IsArray() && inst.operand(0)->shape().IsArray());
}

Leaf SourceOf(Instruction* inst, ShapeIndex index) {
  while (true) {
    if (inst->opcode() == Opcode::kTuple && !index.empty()) {
      inst = inst->operand(index.front());
      index.erase(index.begin());
    } else if (inst->opcode() == Opcode::kGetTupleElement) {
      index.insert(index.begin(), inst->IntAttr("index"));
      inst = inst->operand(0);
    } else if (IsForwarding(*inst) && inst->opcode() == Opcode::kBitcast) {
      inst = inst->operand(0);
    } else {
      return {inst, std::move(index)};
    }
  }
}

LeafUses UsesOf(const Leaf& source) {
  LeafUses uses;
  absl::flat_hash_set<const Instruction*> seen_readers;
  std::vector<Leaf> work = {source};
  const Instruction* root = source.inst->parent()->root();
  while (!work.empty()) {
    Leaf leaf = std::move(work.back());
    work.pop_back();
    uses.members.push_back(leaf);
    if (leaf.inst == root) uses.root_indices.push_back(leaf.index);
    for (Instruction* user : leaf.inst->users()) {
      if (user->opcode() == Opcode::kTuple) {
        for (int64_t k = 0; k < user->operand_count(); ++k) {
          if (user->operand(k) != leaf.inst) continue;
          ShapeIndex index = {k};
          index.insert(index.end(), leaf.index.begin(), leaf.index.end());
          work.push_back({user, std::move(index)});
        }
      } else if (user->opcode() == Opcode::kGetTupleElement) {
        if (!leaf.index.empty() && leaf.index.front() == user->IntAttr("index")) {
          work.push_back({user, ShapeIndex(leaf.index.begin() + 1, leaf.index.end())});
        }
      } else if (IsForwarding(*user)) {
        work.push_back({user, leaf.index});
      } else if (seen_readers.insert(user).second) {
        uses.readers.push_back(user);
      }
    }
  }
  return uses;
}

bool Reaches(const Instruction* from, const Instruction* to) {
  absl::flat_hash_set<const Instruction*> seen = {from};
  std::vector<const Instruction*> stack = {from};
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (inst == to) return true;
    for (const Instruction* next : inst->users()) {
      if (seen.insert(next).second) stack.push_back(next);
    }
    for (const Instruction* next : inst->control_successors()) {
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
  return false;
}

bool IsInPlaceCapable(const Instruction& inst) {
  if (!inst.shape().IsArray()) return false;
  return IsElementwiseUnary(inst.opcode()) || IsElementwiseBinary(inst.opcode()) || inst.opcode() == Opcode::kSelect ||
         inst.opcode() == Opcode::kClamp;
}

bool ReadsOnlyAtWrittenIndex(const Instruction* from, const Instruction* root) {
  if (from == root) return true;
  for (const Instruction* user : from->users()) {
    if (!IsInPlaceCapable(*user) || user->shape().dimensions != from->shape().dimensions) return false;
    if (!ReadsOnlyAtWrittenIndex(user, root)) return false;
  }
  return true;
}

bool CanWriteOver(const Instruction& inst, int64_t operand) {
  if (IsInPlaceCapable(inst)) return true;
  if (inst.opcode() != Opcode::kFusion || inst.StringAttr("kind") != "kLoop" || !inst.shape().IsArray()) return false;
  const Computation* fused = inst.called_computation(0);
  if (operand >= fused->parameter_count()) return false;
  return ReadsOnlyAtWrittenIndex(fused->parameter(operand), fused->root());
}

bool SameArrayLayout(const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray() || !a.Compatible(b)) return false;
  Layout la = a.layout ? *a.layout : Layout::Default(a.rank());
  Layout lb = b.layout ? *b.layout : Layout::Default(b.rank());
  return la == lb;
}

bool SameLayouts(const Shape& a, const Shape& b) {
  if (a.IsTuple() && b.IsTuple()) {
    if (a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
      if (!SameLayouts(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
    }
    return true;
  }
  if (a.IsArray() && b.IsArray()) return SameArrayLayout(a, b);
  return true;
}

Instruction* CoerceLayouts(Module& module, Computation& comp, Instruction* value, const Shape& target) {
  const Shape& shape = value->shape();
  if (SameLayouts(shape, target)) return value;
  if (shape.IsArray()) {
    return comp.AddInstruction(
        Instruction::Create(Opcode::kCopy, UniqueCopyName(module, value->name()), target, {value}));
  }
  std::vector<Instruction*> elements;
  for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
    auto gte = Instruction::Create(Opcode::kGetTupleElement, module.UniqueInstructionName("get-tuple-element"),
                                   shape.tuple_shapes[i], {value});
    gte->SetAttr("index", AttrValue::Int(static_cast<int64_t>(i)));
    elements.push_back(CoerceLayouts(module, comp, comp.AddInstruction(std::move(gte)), target.tuple_shapes[i]));
  }
  return comp.AddInstruction(
      Instruction::Create(Opcode::kTuple, module.UniqueInstructionName("tuple"), target, std::move(elements)));
}

bool CallsSequentially(const Instruction& inst) {
  return inst.opcode() == Opcode::kWhile || inst.opcode() == Opcode::kConditional || inst.opcode() == Opcode::kCall;
}

std::string UniqueCopyName(Module& module, const std::string& name) {
  size_t dot = name.rfind('.');
  bool numbered = dot != std::string::npos && dot > 0 && dot + 1 < name.size() &&
                  std::all_of(name.begin() + dot + 1, name.end(), [](char c) { return c >= '0' && c <= '9'; });
  return module.UniqueInstructionName(numbered ? name.substr(0, dot) : name);
}

std::unique_ptr<Instruction> CloneWithOperands(const Instruction& inst, std::string name,
                                               std::vector<Instruction*> operands) {
  std::unique_ptr<Instruction> clone;
  if (inst.opcode() == Opcode::kParameter) {
    clone = Instruction::CreateParameter(inst.parameter_number(), std::move(name), inst.shape());
  } else {
    clone = Instruction::Create(inst.opcode(), std::move(name), inst.shape(), std::move(operands));
  }
  clone->set_called_computations(inst.called_computations());
  clone->mutable_attrs() = inst.attrs();
  if (inst.has_literal()) clone->set_literal(inst.literal());
  clone->set_sharding(inst.sharding());
  *clone->mutable_metadata() = inst.metadata();
  *clone->mutable_frontend_attributes() = inst.frontend_attributes();
  clone->set_backend_config(inst.backend_config(), inst.backend_config_is_raw());
  clone->set_async_wrapped_opcode(inst.async_wrapped_opcode());
  *clone->mutable_extra_attributes() = inst.extra_attributes();
  clone->set_loc(inst.loc());
  return clone;
}

absl::Status InlineCalledComputation(Module& module, Computation& caller, Instruction* call) {
  const Computation* callee = call->called_computation(0);
  if (callee->parameter_count() != call->operand_count()) {
    return absl::InvalidArgumentError(absl::StrCat(std::string(OpcodeName(call->opcode())), " ", call->name(),
                                                   " passes ", call->operand_count(), " operands to ", callee->name(),
                                                   ", which has ", callee->parameter_count(), " parameters"));
  }
  // Lookups only; iteration below follows the callee's post order.
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  std::vector<std::pair<const Instruction*, Instruction*>> cloned;
  for (const Instruction* old : callee->MakePostOrder()) {
    if (old->opcode() == Opcode::kParameter) {
      // The callee's code may depend on its parameters' declared layouts (a bitcast does): a copy where the caller
      // passes other layouts.
      map[old] = CoerceLayouts(module, caller, call->operand(old->parameter_number()), old->shape());
      continue;
    }
    std::vector<Instruction*> operands;
    for (Instruction* operand : old->operands()) operands.push_back(map.at(operand));
    Instruction* copy = caller.AddInstruction(CloneWithOperands(*old, UniqueCopyName(module, old->name()), operands));
    map[old] = copy;
    cloned.emplace_back(old, copy);
  }
  absl::flat_hash_set<const Instruction*> is_clone;
  for (const auto& [old, copy] : cloned) is_clone.insert(copy);
  for (const auto& [old, copy] : cloned) {
    for (const Instruction* succ : old->control_successors()) {
      if (succ->opcode() != Opcode::kParameter) copy->AddControlDependencyTo(map.at(succ));
    }
  }

  std::vector<Instruction*> preds = call->control_predecessors();
  std::vector<Instruction*> succs = call->control_successors();
  for (const auto& [old, copy] : cloned) {
    bool source = std::none_of(copy->operands().begin(), copy->operands().end(),
                               [&](Instruction* op) { return is_clone.contains(op); }) &&
                  copy->control_predecessors().empty();
    bool sink = copy->users().empty() && copy->control_successors().empty();
    if (source) {
      for (Instruction* pred : preds) pred->AddControlDependencyTo(copy);
    }
    if (sink) {
      for (Instruction* succ : succs) copy->AddControlDependencyTo(succ);
    }
  }
  if (cloned.empty()) {
    for (Instruction* pred : preds) {
      for (Instruction* succ : succs) pred->AddControlDependencyTo(succ);
    }
  }

  Instruction* new_root = CoerceLayouts(module, caller, map.at(callee->root()), call->shape());
  call->ReplaceAllUsesWith(new_root);
  call->DetachFromOperandsAndEdges();
  return caller.RemoveInstruction(call);
}

bool IsCalled(const Module& module, const Computation* comp) {
  for (const auto& c : module.computations()) {
    for (const auto& inst : c->instructions()) {
      const auto& callees = inst->called_computations();
      if (std::find(callees.begin(), callees.end(), comp) != callees.end()) return true;
    }
  }
  return false;
}

}  // namespace xlac
