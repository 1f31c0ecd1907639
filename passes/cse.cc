#include "passes/cse.h"

#include <cstddef>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/status_macros.h"

namespace xlac {
namespace {

void HashCombine(size_t& seed, size_t value) { seed ^= value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2); }

// A hash consistent with IdenticalIgnoringName: equal instructions hash equally. Uses unique ids, not pointers, so
// the bucket contents (and thus which instruction survives) never depend on allocation addresses.
size_t CseHash(const Instruction& inst) {
  size_t h = static_cast<size_t>(inst.opcode());
  HashCombine(h, static_cast<size_t>(inst.shape().element_type));
  for (int64_t d : inst.shape().dimensions) HashCombine(h, static_cast<size_t>(d));
  HashCombine(h, inst.shape().tuple_shapes.size());
  HashCombine(h, static_cast<size_t>(inst.operand_count()));
  for (const Instruction* operand : inst.operands()) HashCombine(h, static_cast<size_t>(operand->unique_id()));
  for (const Computation* callee : inst.called_computations()) {
    HashCombine(h, static_cast<size_t>(callee->unique_id()));
  }
  if (inst.has_literal()) HashCombine(h, inst.literal().Hash());
  return h;
}

// An elided constant (`constant({...})`) stands for values we do not know, so it equals no other constant.
bool HasUnknownValues(const Literal& literal) {
  if (literal.is_unknown()) return true;
  for (const Literal& element : literal.tuple_elements()) {
    if (HasUnknownValues(element)) return true;
  }
  return false;
}

bool IsCandidate(const Instruction& inst) {
  if (inst.opcode() == Opcode::kParameter || inst.HasSideEffect()) return false;
  // Merging would move ordering constraints onto the survivor, which can create cycles.
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  if (inst.has_literal() && HasUnknownValues(inst.literal())) return false;
  return true;
}

absl::StatusOr<bool> RunCseOnComputation(Computation& comp) {
  // Buckets hold candidates in post order; lookups only, never iterated into output.
  absl::flat_hash_map<size_t, std::vector<Instruction*>> buckets;
  bool changed = false;
  // Post order: an instruction's operands have already been merged, so identical expressions become identical
  // operand pointers and merge bottom-up in one sweep.
  for (Instruction* inst : comp.MakePostOrder()) {
    if (!IsCandidate(*inst)) continue;
    std::vector<Instruction*>& bucket = buckets[CseHash(*inst)];
    Instruction* survivor = nullptr;
    for (Instruction* candidate : bucket) {
      if (candidate->IdenticalIgnoringName(*inst)) {
        survivor = candidate;
        break;
      }
    }
    if (survivor == nullptr) {
      bucket.push_back(inst);
      continue;
    }
    inst->ReplaceAllUsesWith(survivor);
    inst->DetachFromOperandsAndEdges();
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(inst));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RunCse(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    XLAC_ASSIGN_OR_RETURN(bool comp_changed, RunCseOnComputation(*comp));
    changed |= comp_changed;
  }
  return changed;
}

}  // namespace xlac
