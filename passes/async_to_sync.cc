#include "passes/async_to_sync.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

bool IsDone(Opcode op) {
  return op == Opcode::kAllReduceDone || op == Opcode::kAllGatherDone || op == Opcode::kCollectivePermuteDone ||
         op == Opcode::kAsyncDone;
}

// The done instructions that consume `start` (through async-update chains), plus the updates themselves; fails when
// anything else uses the start's tuple.
absl::Status CollectDones(Instruction* start, std::vector<Instruction*>& dones, std::vector<Instruction*>& updates) {
  for (Instruction* user : start->users()) {
    if (IsDone(user->opcode())) {
      dones.push_back(user);
    } else if (user->opcode() == Opcode::kAsyncUpdate) {
      updates.push_back(user);
      XLAC_RETURN_IF_ERROR(CollectDones(user, dones, updates));
    } else {
      return absl::UnimplementedError(absl::StrCat(
          "async-to-sync: the value of ", std::string(OpcodeName(start->opcode())), " ", start->name(), " is used by ",
          std::string(OpcodeName(user->opcode())), " ", user->name(), " (only its done is supported)"));
    }
  }
  return absl::OkStatus();
}

std::unique_ptr<Instruction> MakeSync(Module& module, const Instruction& start, Opcode opcode, const Shape& shape) {
  std::unique_ptr<Instruction> sync =
      Instruction::Create(opcode, UniqueCopyName(module, start.name()), shape, start.operands());
  for (const auto& [name, value] : start.attrs().entries()) sync->SetAttr(name, value);
  sync->set_called_computations(start.called_computations());
  sync->mutable_frontend_attributes()->assign(start.frontend_attributes().begin(), start.frontend_attributes().end());
  *sync->mutable_metadata() = start.metadata();
  sync->set_sharding(start.sharding());
  sync->set_backend_config(start.backend_config(), start.backend_config_is_raw());
  sync->set_loc(start.loc());
  return sync;
}

absl::Status Convert(Module& module, Computation& comp, Instruction* start) {
  Opcode sync_opcode;
  const Shape* shape = &start->shape();
  switch (start->opcode()) {
    case Opcode::kAllReduceStart:
      sync_opcode = Opcode::kAllReduce;
      break;
    case Opcode::kAllGatherStart:
      sync_opcode = Opcode::kAllGather;
      break;
    case Opcode::kCollectivePermuteStart:
      sync_opcode = Opcode::kCollectivePermute;
      if (start->operand_count() != 1) {
        return absl::UnimplementedError(
            absl::StrCat("async-to-sync: in-place collective-permute-start ", start->name()));
      }
      break;
    case Opcode::kAsyncStart:
      sync_opcode = start->async_wrapped_opcode().value_or(Opcode::kCall);
      if (!start->async_wrapped_opcode() && start->called_computations().size() != 1) {
        return absl::InvalidArgumentError(absl::StrCat("async-start ", start->name(), " wraps no computation"));
      }
      break;
    default:
      return absl::OkStatus();
  }
  if (start->opcode() != Opcode::kAllReduceStart) {
    if (!shape->IsTuple() || shape->tuple_shapes.size() < 2) {
      return absl::InvalidArgumentError(absl::StrCat("malformed shape of ", start->name()));
    }
    shape = &shape->tuple_shapes[1];
  }
  std::vector<Instruction*> dones, updates;
  if (start->opcode() == Opcode::kAllReduceStart) {
    for (Instruction* user : start->users()) {
      if (user->opcode() == Opcode::kAllReduceDone) dones.push_back(user);
    }
  } else {
    XLAC_RETURN_IF_ERROR(CollectDones(start, dones, updates));
  }
  if (!start->control_predecessors().empty() || !start->control_successors().empty()) {
    return absl::UnimplementedError(absl::StrCat("async-to-sync: control dependencies on ", start->name()));
  }
  for (Instruction* inst : dones) {
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) {
      return absl::UnimplementedError(absl::StrCat("async-to-sync: control dependencies on ", inst->name()));
    }
  }
  Instruction* sync = comp.AddInstruction(MakeSync(module, *start, sync_opcode, *shape));
  for (Instruction* done : dones) {
    done->ReplaceAllUsesWith(sync);
    if (comp.root() == done) comp.set_root(sync);
    done->DetachFromOperandsAndEdges();
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(done));
  }
  for (auto it = updates.rbegin(); it != updates.rend(); ++it) {
    if (!(*it)->users().empty()) continue;  // a duplicate listing of an update already removed
    (*it)->DetachFromOperandsAndEdges();
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(*it));
  }
  // all-reduce-start's value equals its result; any other users read the sync op.
  start->ReplaceAllUsesWith(sync);
  if (comp.root() == start) comp.set_root(sync);
  if (start->users().empty()) {
    start->DetachFromOperandsAndEdges();
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(start));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RunAsyncToSync(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    // Starts first: converting one removes its dones and updates, which must not be visited afterwards.
    std::vector<Instruction*> starts;
    for (Instruction* inst : comp->MakeInstructionList()) {
      Opcode op = inst->opcode();
      if (op == Opcode::kAllReduceStart || op == Opcode::kAllGatherStart || op == Opcode::kCollectivePermuteStart ||
          op == Opcode::kAsyncStart) {
        starts.push_back(inst);
      }
    }
    for (Instruction* start : starts) {
      XLAC_RETURN_IF_ERROR(Convert(module, *comp, start));
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlac
