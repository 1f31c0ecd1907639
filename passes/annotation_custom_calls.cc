#include "passes/annotation_custom_calls.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "passes/replace_call.h"

namespace xlac {
namespace {

struct CallError {
  SourceLoc loc;
  std::string message;
};

std::string Describe(const Instruction& inst) {
  return fmt::format("custom-call %{} (target \"{}\")", inst.name(),
                     std::string(inst.StringAttr("custom_call_target")));
}

std::optional<CallError> CheckIdentity(const Instruction& inst, std::string_view why) {
  if (inst.operand_count() != 1) {
    return CallError{inst.loc(), fmt::format("{} is {}, so it needs exactly one operand, but it has {}", Describe(inst),
                                             why, inst.operand_count())};
  }
  const Shape& operand = inst.operand(0)->shape();
  if (!operand.Compatible(inst.shape())) {
    return CallError{inst.loc(), fmt::format("{} is {}, so its result must have its operand's shape {}, but it is {}",
                                             Describe(inst), why, ShapeToString(operand, false),
                                             ShapeToString(inst.shape(), false))};
  }
  return std::nullopt;
}

// Rewrites one computation; stops at the first call that cannot be rewritten.
absl::StatusOr<bool> RewriteComputation(Module& module, Computation& comp, const AnnotationCallOptions& options,
                                        std::optional<CallError>& error) {
  bool changed = false;
  for (Instruction* inst : comp.MakeInstructionList()) {
    if (inst->opcode() != Opcode::kCustomCall) continue;
    const std::string_view target = inst->StringAttr("custom_call_target");
    const bool declared = std::find(options.identity_targets.begin(), options.identity_targets.end(), target) !=
                          options.identity_targets.end();
    if (target == "xla.sdy.ShardingGroup" && !declared) {
      // Only says that values should share a sharding; its own value is an empty tuple.
      if (inst->user_count() == 0 && comp.root() != inst) {
        inst->DetachFromOperandsAndEdges();
        XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(inst));
      } else {
        Instruction* empty = comp.AddInstruction(
            Instruction::Create(Opcode::kTuple, module.UniqueInstructionName("tuple"), Shape::Tuple({}), {}));
        inst->DetachFromOperandsAndEdges();
        XLAC_RETURN_IF_ERROR(ReplaceCall(comp, inst, empty));
      }
      changed = true;
      continue;
    }
    if (target == "AllocateBuffer" && !declared && inst->operand_count() == 0 && inst->shape().IsArray()) {
      // XLA's built-in buffer for host offloading and rematerialization (its contents undefined until written, by a
      // dynamic-update-slice): zeros, so that every backend reads the same values.
      auto zero = Instruction::Create(Opcode::kConstant, module.UniqueInstructionName("constant"),
                                      Shape::Scalar(inst->shape().element_type), {});
      zero->set_literal(Literal(Shape::Scalar(inst->shape().element_type)));
      Instruction* scalar = comp.AddInstruction(std::move(zero));
      auto broadcast =
          Instruction::Create(Opcode::kBroadcast, module.UniqueInstructionName("broadcast"), inst->shape(), {scalar});
      broadcast->SetAttr("dimensions", AttrValue::IntList({}));
      broadcast->set_sharding(inst->sharding());
      *broadcast->mutable_metadata() = inst->metadata();
      Instruction* added = comp.AddInstruction(std::move(broadcast));
      XLAC_RETURN_IF_ERROR(ReplaceCall(comp, inst, added));
      changed = true;
      continue;
    }
    std::string_view why;
    if (declared) {
      why = "declared an identity";
    } else if (IsAnnotationIdentityTarget(target)) {
      why = "an annotation";
    } else if (target == "xla.sdy.GlobalToLocalShape" || target == "xla.sdy.LocalToGlobalShape") {
      if (inst->operand_count() == 1 && inst->operand(0)->shape().Compatible(inst->shape())) {
        why = "a shard_map boundary that keeps its shape";
      } else {
        error = CallError{inst->loc(),
                          fmt::format("{} is a Shardy round-trip shard_map boundary that was not imported (module "
                                      "loaders read its frontend attributes from HLO text and StableHLO files): load "
                                      "the module from text, or export it with XLA's HLO shardings "
                                      "(SPMDFullToShardShape / SPMDShardToFullShape)",
                                      Describe(*inst))};
        return changed;
      }
    } else {
      continue;
    }
    if (std::optional<CallError> bad = CheckIdentity(*inst, why)) {
      error = std::move(bad);
      return changed;
    }
    // Nothing to keep (no sharding, no layout change, no ordering, not a computation's result): the users read the
    // operand itself, so marking a large weight costs no copy.
    if (!inst->sharding().has_value() && inst->operand(0)->shape() == inst->shape() && comp.root() != inst &&
        inst->control_predecessors().empty() && inst->control_successors().empty()) {
      inst->ReplaceAllUsesWith(inst->operand(0));
      XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(inst));
      changed = true;
      continue;
    }
    auto copy =
        Instruction::Create(Opcode::kCopy, module.UniqueInstructionName("copy"), inst->shape(), {inst->operand(0)});
    // The sharding stays a constraint for the partitioner; metadata and frontend attributes stay for reports.
    copy->set_sharding(inst->sharding());
    *copy->mutable_metadata() = inst->metadata();
    *copy->mutable_frontend_attributes() = inst->frontend_attributes();
    Instruction* added = comp.AddInstruction(std::move(copy));
    XLAC_RETURN_IF_ERROR(ReplaceCall(comp, inst, added));
    changed = true;
  }
  return changed;
}

absl::StatusOr<bool> Run(Module& module, const AnnotationCallOptions& options, std::optional<CallError>& error) {
  bool changed = false;
  for (const auto& comp : module.computations()) {
    XLAC_ASSIGN_OR_RETURN(bool c, RewriteComputation(module, *comp, options, error));
    changed |= c;
    if (error) break;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RunAnnotationCustomCalls(Module& module, const AnnotationCallOptions& options) {
  std::optional<CallError> error;
  XLAC_ASSIGN_OR_RETURN(bool changed, Run(module, options, error));
  if (error) {
    // Instruction errors start with "line:col: " so drivers print them at the instruction.
    return absl::InvalidArgumentError(error->loc.line > 0
                                          ? fmt::format("{}:{}: {}", error->loc.line, error->loc.col, error->message)
                                          : error->message);
  }
  return changed;
}

bool RewriteAnnotationCustomCalls(Module& module, const AnnotationCallOptions& options, DiagnosticEngine& diags) {
  std::optional<CallError> error;
  absl::StatusOr<bool> changed = Run(module, options, error);
  if (!changed.ok()) {
    diags.Error(SourceLoc{}, std::string(changed.status().message()));
    return false;
  }
  if (error) {
    diags.Error(error->loc, std::move(error->message));
    return false;
  }
  return true;
}

absl::Status AppendCustomCallIdentities(std::string_view list, std::vector<std::string>& targets) {
  size_t start = 0;
  while (true) {
    const size_t comma = list.find(',', start);
    const std::string_view name = list.substr(start, comma == std::string_view::npos ? list.npos : comma - start);
    if (name.empty()) {
      return absl::InvalidArgumentError(fmt::format(
          "--custom-call-identity needs custom-call target names separated by commas, got '{}'", std::string(list)));
    }
    targets.emplace_back(name);
    if (comma == std::string_view::npos) return absl::OkStatus();
    start = comma + 1;
  }
}

}  // namespace xlac
