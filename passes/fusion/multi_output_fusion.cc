// Sibling multi-output fusion of reductions: reduces that read the same array in the same way run as one pass over
// it (one kInput fusion with a tuple root).
#include <algorithm>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_cost.h"
#include "passes/fusion/fusion_internal.h"

namespace xlac::fusion_internal {
namespace {

// The reduce that fixes a candidate's loop structure (all reduces of a kInput fusion share it), or nullptr if
// `inst` is neither a kInput fusion of ours nor a fusible reduce.
const Instruction* RepresentativeReduce(const FusionState& state, const Instruction& inst) {
  if (HasControlEdges(inst) || inst.sharding().has_value()) return nullptr;
  if (inst.opcode() == Opcode::kReduce) return IsFusibleReduce(inst) ? &inst : nullptr;
  if (inst.opcode() != Opcode::kFusion || !state.ours.contains(&inst) || inst.StringAttr("kind") != "kInput") {
    return nullptr;
  }
  const Instruction* root = inst.called_computation(0)->root();
  return root->opcode() == Opcode::kTuple ? root->operand(0) : root;
}

int64_t SizeOf(const Instruction& inst) {
  return inst.opcode() == Opcode::kFusion ? FusedInstructionCount(*inst.called_computation(0)) : 1;
}

// Reaches (passes/alias_util.h) within one computation, given its post order: a path only climbs in post order, so
// the search skips everything after `to` instead of walking all of `from`'s transitive users, which made checking
// every sibling pair of a deep model quadratic.
bool ReachesInOrder(const Instruction* from, const Instruction* to,
                    const absl::flat_hash_map<const Instruction*, size_t>& position) {
  const size_t limit = position.at(to);
  if (position.at(from) > limit) return false;
  absl::flat_hash_set<const Instruction*> seen = {from};
  std::vector<const Instruction*> stack = {from};
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (inst == to) return true;
    for (const auto* next_list : {&inst->users(), &inst->control_successors()}) {
      for (const Instruction* next : *next_list) {
        if (position.at(next) <= limit && seen.insert(next).second) stack.push_back(next);
      }
    }
  }
  return false;
}

bool CanMerge(const FusionState& state, const Instruction* a, const Instruction* b,
              const absl::flat_hash_map<const Instruction*, size_t>& position) {
  const Instruction* ra = RepresentativeReduce(state, *a);
  const Instruction* rb = RepresentativeReduce(state, *b);
  if (ra == nullptr || rb == nullptr || a == b) return false;
  if (ra->operand(0)->shape().dimensions != rb->operand(0)->shape().dimensions ||
      ra->dimensions() != rb->dimensions()) {
    return false;
  }
  if (SizeOf(*a) + SizeOf(*b) + 1 > kMaxFusedInstructions) return false;
  absl::flat_hash_set<const Instruction*> operands(a->operands().begin(), a->operands().end());
  operands.insert(b->operands().begin(), b->operands().end());
  if (static_cast<int64_t>(operands.size()) > kMaxFusionParameters) return false;
  // One fused pass computes both, so neither may depend on the other.
  return !ReachesInOrder(a, b, position) && !ReachesInOrder(b, a, position);
}

absl::StatusOr<Instruction*> AsInputFusion(FusionState& state, Instruction* inst) {
  if (inst->opcode() == Opcode::kFusion) return inst;
  XLAC_ASSIGN_OR_RETURN(Instruction * fusion, WrapInFusion(state.ctx, state.comp, inst, "kInput"));
  state.ours.insert(fusion);
  return fusion;
}

// One merge, if any pair of candidates sharing an operand allows it.
absl::StatusOr<bool> MergeOnePair(FusionState& state) {
  std::vector<Instruction*> order = state.comp.MakePostOrder();
  absl::flat_hash_map<const Instruction*, size_t> position;
  for (size_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  for (Instruction* shared : order) {
    std::vector<Instruction*> candidates;
    for (Instruction* user : shared->users()) {
      if (RepresentativeReduce(state, *user) != nullptr) candidates.push_back(user);
    }
    // Outputs in program order, whatever order the users were created in.
    std::sort(candidates.begin(), candidates.end(),
              [&](const Instruction* a, const Instruction* b) { return position.at(a) < position.at(b); });
    for (size_t i = 0; i < candidates.size(); ++i) {
      for (size_t j = i + 1; j < candidates.size(); ++j) {
        if (!CanMerge(state, candidates[i], candidates[j], position)) continue;
        XLAC_ASSIGN_OR_RETURN(Instruction * a, AsInputFusion(state, candidates[i]));
        XLAC_ASSIGN_OR_RETURN(Instruction * b, AsInputFusion(state, candidates[j]));
        state.ours.erase(a);
        state.ours.erase(b);
        XLAC_ASSIGN_OR_RETURN(Instruction * merged, MergeSiblingFusions(state.ctx, state.comp, a, b, "kInput"));
        state.ours.insert(merged);
        return true;
      }
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<bool> MergeSiblingReduces(FusionState& state) {
  bool changed = false;
  for (;;) {
    XLAC_ASSIGN_OR_RETURN(bool merged, MergeOnePair(state));
    if (!merged) return changed;
    changed = true;
  }
}

}  // namespace xlac::fusion_internal
