#include "passes/copy_insertion.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

enum class Role { kEntry, kCondition, kBody, kBranch };

class CopyInserter {
 public:
  explicit CopyInserter(Module& module) : module_(module) {}

  absl::StatusOr<bool> Run();

 private:
  absl::Status CollectRoles();
  void CopyWhileInits(Computation& comp);
  // Root rewrite shared by while bodies, branches and the entry. `destination(idx)` is the buffer the root leaf must
  // end up in (loop state or donated parameter), or nullopt for a fresh buffer.
  void CopyRootLeaves(Computation& comp, const std::function<std::optional<Leaf>(const ShapeIndex&)>& destination);

  Instruction* AddCopy(Computation& comp, Instruction* operand);
  // The instruction holding `index` of `value`: reuses tuple operands and existing get-tuple-elements.
  Instruction* LeafValue(Computation& comp, Instruction* value, const ShapeIndex& index);
  // `value` with the leaves in `replacements` swapped, rebuilding only the tuples above them.
  Instruction* Rebuild(Computation& comp, Instruction* value, ShapeIndex& prefix,
                       const std::map<ShapeIndex, Instruction*>& replacements);
  void AddControlEdge(Instruction* from, Instruction* to);

  Module& module_;
  std::vector<std::pair<Computation*, Role>> roles_;  // sequential computations in discovery order
  bool changed_ = false;
};

absl::Status CopyInserter::CollectRoles() {
  Computation* entry = module_.entry_computation();
  if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");
  absl::flat_hash_map<const Computation*, int> seen;
  std::vector<std::pair<Computation*, Role>> stack = {{entry, Role::kEntry}};
  while (!stack.empty()) {
    auto [comp, role] = stack.back();
    stack.pop_back();
    if (seen[comp]++ > 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "computation ", comp->name(), " has more than one sequential caller; run flatten-call-graph first"));
    }
    roles_.emplace_back(comp, role);
    std::vector<std::pair<Computation*, Role>> next;
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCall) {
        return absl::FailedPreconditionError(
            absl::StrCat("call ", inst->name(), " in ", comp->name(), " is not inlined; run call-inliner first"));
      }
      if (inst->opcode() == Opcode::kWhile) {
        next.emplace_back(inst->called_computation(0), Role::kCondition);
        next.emplace_back(inst->called_computation(1), Role::kBody);
      } else if (inst->opcode() == Opcode::kConditional) {
        for (Computation* branch : inst->called_computations()) next.emplace_back(branch, Role::kBranch);
      }
    }
    stack.insert(stack.end(), next.rbegin(), next.rend());
  }
  return absl::OkStatus();
}

Instruction* CopyInserter::AddCopy(Computation& comp, Instruction* operand) {
  changed_ = true;
  return comp.AddInstruction(
      Instruction::Create(Opcode::kCopy, module_.UniqueInstructionName("copy"), operand->shape(), {operand}));
}

void CopyInserter::AddControlEdge(Instruction* from, Instruction* to) {
  const auto& succs = from->control_successors();
  if (from != to && std::find(succs.begin(), succs.end(), to) == succs.end()) from->AddControlDependencyTo(to);
}

Instruction* CopyInserter::LeafValue(Computation& comp, Instruction* value, const ShapeIndex& index) {
  for (int64_t k : index) {
    if (value->opcode() == Opcode::kTuple) {
      value = value->operand(k);
      continue;
    }
    Instruction* gte = nullptr;
    for (Instruction* user : value->users()) {
      if (user->opcode() == Opcode::kGetTupleElement && user->IntAttr("index") == k) {
        gte = user;
        break;
      }
    }
    if (gte == nullptr) {
      auto created = Instruction::Create(Opcode::kGetTupleElement, module_.UniqueInstructionName("get-tuple-element"),
                                         value->shape().tuple_shapes[k], {value});
      created->SetAttr("index", AttrValue::Int(k));
      gte = comp.AddInstruction(std::move(created));
    }
    value = gte;
  }
  return value;
}

Instruction* CopyInserter::Rebuild(Computation& comp, Instruction* value, ShapeIndex& prefix,
                                   const std::map<ShapeIndex, Instruction*>& replacements) {
  if (auto it = replacements.find(prefix); it != replacements.end()) return it->second;
  if (!value->shape().IsTuple()) return value;
  // Anything to replace below this prefix?
  auto below = replacements.lower_bound(prefix);
  if (below == replacements.end() || !std::equal(prefix.begin(), prefix.end(), below->first.begin())) return value;
  std::vector<Instruction*> elements;
  for (int64_t k = 0; k < static_cast<int64_t>(value->shape().tuple_shapes.size()); ++k) {
    prefix.push_back(k);
    elements.push_back(Rebuild(comp, LeafValue(comp, value, {k}), prefix, replacements));
    prefix.pop_back();
  }
  return comp.AddInstruction(
      Instruction::Create(Opcode::kTuple, module_.UniqueInstructionName("tuple"), value->shape(), elements));
}

void CopyInserter::CopyWhileInits(Computation& comp) {
  // Collect the loops first: the loop below removes init tuples, and one created after its while (layout-copies
  // does that) would still be in a snapshot of all instructions when it is freed.
  std::vector<Instruction*> loops;
  for (Instruction* inst : comp.MakeInstructionList()) {
    if (inst->opcode() == Opcode::kWhile) loops.push_back(inst);
  }
  for (Instruction* loop : loops) {
    Instruction* init = loop->operand(0);
    std::vector<Leaf> sources;
    std::map<ShapeIndex, Instruction*> replacements;
    for (const ShapeIndex& index : ArrayLeafIndices(init->shape())) {
      Leaf source = SourceOf(init, index);
      bool copy = std::find(sources.begin(), sources.end(), source) != sources.end() ||
                  source.inst->opcode() == Opcode::kParameter || source.inst->opcode() == Opcode::kConstant;
      sources.push_back(source);
      if (!copy) {
        // Readers the loop depends on run before it; any other reader may need the value after the loop changed it.
        LeafUses uses = UsesOf(source);
        copy = !uses.root_indices.empty() ||
               std::any_of(uses.readers.begin(), uses.readers.end(),
                           [&](const Instruction* r) { return r != loop && !Reaches(r, loop); });
      }
      if (copy) replacements[index] = AddCopy(comp, LeafValue(comp, init, index));
    }
    if (replacements.empty()) continue;
    ShapeIndex prefix;
    loop->ReplaceOperandWith(0, Rebuild(comp, init, prefix, replacements));
    if (init->opcode() == Opcode::kTuple && init->user_count() == 0 && init != comp.root() &&
        init->control_predecessors().empty() && init->control_successors().empty()) {
      (void)comp.RemoveInstruction(init);
    }
  }
}

void CopyInserter::CopyRootLeaves(Computation& comp,
                                  const std::function<std::optional<Leaf>(const ShapeIndex&)>& destination) {
  Instruction* root = comp.root();
  std::vector<ShapeIndex> indices = ArrayLeafIndices(root->shape());
  std::vector<Leaf> sources;
  for (const ShapeIndex& index : indices) sources.push_back(SourceOf(root, index));
  auto occurrences = [&](const Leaf& s) { return std::count(sources.begin(), sources.end(), s); };
  auto is_param_or_constant = [](const Leaf& s) {
    return s.inst->opcode() == Opcode::kParameter || s.inst->opcode() == Opcode::kConstant;
  };

  // Stage 1: copies into fresh buffers (they only read), including the temporaries of parameter-to-destination
  // moves, so that the readers computed in stage 2 include them.
  std::map<ShapeIndex, Instruction*> replacements;
  // Destination leaves: the value to move into the destination, and whether it is a stage-1 temporary.
  std::map<ShapeIndex, std::pair<Instruction*, bool>> staged;
  std::vector<Leaf> kept;
  for (size_t i = 0; i < indices.size(); ++i) {
    const ShapeIndex& index = indices[i];
    const Leaf& s = sources[i];
    std::optional<Leaf> dest = destination(index);
    if (!dest) {
      bool copy = is_param_or_constant(s) || std::find(kept.begin(), kept.end(), s) != kept.end();
      if (copy) {
        replacements[index] = AddCopy(comp, LeafValue(comp, root, index));
      } else {
        kept.push_back(s);
      }
      continue;
    }
    if (s == *dest) continue;
    Instruction* value = LeafValue(comp, root, index);
    bool from_parameter = s.inst->opcode() == Opcode::kParameter;
    staged[index] = {from_parameter ? AddCopy(comp, value) : value, from_parameter};
  }

  // Stage 2: moves into destinations, ordered after every reader of the destination's old contents.
  for (const auto& [index, staged_value] : staged) {
    auto [value, temporary] = staged_value;
    Leaf dest = *destination(index);
    std::vector<Instruction*> readers = UsesOf(dest).readers;
    const Leaf s = SourceOf(value, {});
    // A stage-1 temporary is not written in place of the destination: that would undo the swap protection.
    bool direct = !temporary && value == s.inst && s.index.empty() && value->shape().IsArray() &&
                  !is_param_or_constant(s) && value->opcode() != Opcode::kWhile &&
                  value->opcode() != Opcode::kConditional && occurrences(s) == 1;
    for (Instruction* reader : readers) {
      if (!direct) break;
      if (reader == value) {
        for (int64_t i = 0; i < value->operand_count(); ++i) {
          Instruction* operand = value->operand(i);
          if (SourceOf(operand, {}) != dest) continue;
          direct &= SameArrayLayout(operand->shape(), value->shape()) && CanWriteOver(*value, i);
        }
      } else if (Reaches(value, reader)) {
        direct = false;
      }
    }
    Instruction* writer = direct ? value : AddCopy(comp, value);
    for (Instruction* reader : readers) AddControlEdge(reader, writer);
    if (!direct) replacements[index] = writer;
  }
  if (replacements.empty()) return;
  ShapeIndex prefix;
  Instruction* new_root = Rebuild(comp, root, prefix, replacements);
  if (new_root == root) return;
  if (root->sharding() && !new_root->sharding()) new_root->set_sharding(root->sharding());
  comp.set_root(new_root);
  if (root->opcode() == Opcode::kTuple && root->user_count() == 0 && root->control_predecessors().empty() &&
      root->control_successors().empty()) {
    (void)comp.RemoveInstruction(root);
  }
}

absl::StatusOr<bool> CopyInserter::Run() {
  XLAC_RETURN_IF_ERROR(CollectRoles());
  // input_output_alias: output index -> parameter leaf.
  std::map<ShapeIndex, std::pair<int64_t, ShapeIndex>> donated;
  for (const InputOutputAlias& alias : module_.config().input_output_alias) {
    donated[alias.output_index] = {alias.parameter_number, alias.parameter_index};
  }
  for (auto& [comp, role] : roles_) {
    CopyWhileInits(*comp);
    switch (role) {
      case Role::kCondition:
        break;
      case Role::kBody: {
        Instruction* param = comp->parameter(0);
        CopyRootLeaves(*comp, [&](const ShapeIndex& index) -> std::optional<Leaf> { return Leaf{param, index}; });
        break;
      }
      case Role::kBranch:
        CopyRootLeaves(*comp, [](const ShapeIndex&) -> std::optional<Leaf> { return std::nullopt; });
        break;
      case Role::kEntry:
        CopyRootLeaves(*comp, [&](const ShapeIndex& index) -> std::optional<Leaf> {
          auto it = donated.find(index);
          if (it == donated.end()) return std::nullopt;
          return Leaf{comp->parameter(it->second.first), it->second.second};
        });
        break;
    }
  }
  return changed_;
}

}  // namespace

absl::StatusOr<bool> RunCopyInsertion(Module& module) { return CopyInserter(module).Run(); }

}  // namespace xlac
