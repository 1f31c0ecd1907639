#include "passes/simplify/constant_folding.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/status_macros.h"
#include "ir/tpu_numerics.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

constexpr int64_t kMaxFoldedBytes = 64 * 1024;
// Folding evaluates iota and broadcast operands at their full shape: reduce(broadcast(c)) over a 16 GiB shape is a
// small result whose evaluation would allocate 16 GiB (and take as long) at compile time.
constexpr int64_t kMaxExpandedOperandBytes = 16 << 20;

bool IsFoldableOpcode(Opcode op) {
  if (HasSideEffectOpcode(op)) return false;
  switch (op) {
    // clang-format off
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kIota: case Opcode::kBroadcast:
    case Opcode::kRng: case Opcode::kRngBitGenerator: case Opcode::kRngGetAndUpdateState:
    case Opcode::kStochasticConvert: case Opcode::kCustomCall:
    case Opcode::kAllGather: case Opcode::kAllReduce: case Opcode::kAllToAll: case Opcode::kRaggedAllToAll:
    case Opcode::kCollectiveBroadcast: case Opcode::kCollectivePermute: case Opcode::kCollectiveReduce:
    case Opcode::kReduceScatter: case Opcode::kPartitionId: case Opcode::kReplicaId:
    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kRecv:
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall: case Opcode::kFusion: case Opcode::kScan:
    case Opcode::kMap:
    case Opcode::kAfterAll: case Opcode::kAddDependency: case Opcode::kOptimizationBarrier: case Opcode::kDomain:
    case Opcode::kTuple: case Opcode::kGetTupleElement: case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize: case Opcode::kDynamicReshape:
    // Their results depend on layouts or exist to separate buffers: not values worth baking in.
    case Opcode::kBitcast: case Opcode::kCopy: case Opcode::kCopyStart: case Opcode::kCopyDone:
      return false;
    // clang-format on
    default:
      return !IsAsyncOpcode(op);
  }
}

bool IsKnownConstant(const Instruction& inst) {
  return inst.opcode() == Opcode::kConstant && inst.has_literal() && !inst.literal().is_unknown() &&
         inst.shape().IsArray();
}

// Operands a fold may read, and how many bytes of literal data they stand for.
std::optional<int64_t> KnownOperandBytes(const Instruction& operand) {
  if (IsKnownConstant(operand)) return operand.literal().byte_size();
  if (operand.opcode() == Opcode::kIota && operand.shape().IsStatic()) return 0;
  if (operand.opcode() == Opcode::kBroadcast && IsKnownConstant(*operand.operand(0))) {
    return operand.operand(0)->literal().byte_size();
  }
  return std::nullopt;
}

// An f32 dot or convolution at DEFAULT precision computes what the target's matrix unit computes (bf16 operands
// under --tpu-numerics, ir/tpu_numerics.h); a target-independent pass must not fix its value.
bool DependsOnDotNumerics(const Instruction& inst) {
  return (inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution) &&
         TpuDotModeOf(inst) != TpuDotMode::kF32;
}

bool IsCandidate(const Instruction& inst, int64_t* source_bytes) {
  if (!IsFoldableOpcode(inst.opcode()) || inst.operand_count() == 0 || inst.HasSideEffect()) return false;
  if (DependsOnDotNumerics(inst)) return false;
  if (!inst.shape().IsArray() || !inst.shape().IsStatic()) return false;
  if (!inst.control_predecessors().empty() || !inst.control_successors().empty()) return false;
  for (const Computation* callee : inst.called_computations()) {
    for (const auto& callee_inst : callee->instructions()) {
      if (!callee_inst->called_computations().empty() || callee_inst->HasSideEffect() ||
          DependsOnDotNumerics(*callee_inst)) {
        return false;
      }
    }
  }
  int64_t bytes = 0;
  for (const Instruction* operand : inst.operands()) {
    std::optional<int64_t> b = KnownOperandBytes(*operand);
    if (!b) return false;
    if (operand->opcode() != Opcode::kConstant) {
      std::optional<int64_t> expanded = operand->shape().ByteSizeOf();
      if (!expanded || *expanded > kMaxExpandedOperandBytes) return false;
    }
    bytes += *b;
  }
  *source_bytes = bytes;
  std::optional<int64_t> result_bytes = inst.shape().ByteSizeOf();
  return result_bytes && *result_bytes <= std::max(kMaxFoldedBytes, bytes);
}

std::unique_ptr<Instruction> CloneInto(const Instruction& inst, std::vector<Instruction*> operands) {
  auto copy = Instruction::Create(inst.opcode(), inst.name(), inst.shape(), std::move(operands));
  copy->mutable_attrs() = inst.attrs();
  if (inst.has_literal()) copy->set_literal(inst.literal());
  return copy;
}

// Evaluates `inst` on its known operands with the interpreter, in a module of its own.
absl::StatusOr<Literal> Evaluate(const Instruction& inst) {
  Module scratch("constant_folding");
  Computation* entry = scratch.AddEntryComputation(std::make_unique<Computation>("main"));
  std::vector<Computation*> callees;
  for (const Computation* callee : inst.called_computations()) {
    callees.push_back(scratch.AddComputation(callee->Clone(callee->name())));
  }
  std::vector<Instruction*> operands;
  for (const Instruction* operand : inst.operands()) {
    std::vector<Instruction*> sources;
    if (operand->opcode() == Opcode::kBroadcast) {
      sources.push_back(entry->AddInstruction(CloneInto(*operand->operand(0), {})));
    }
    operands.push_back(entry->AddInstruction(CloneInto(*operand, std::move(sources))));
  }
  Instruction* root = entry->AddInstruction(CloneInto(inst, std::move(operands)));
  root->set_called_computations(std::move(callees));
  entry->set_root(root);
  interp::InterpreterOptions options;
  options.num_replicas = 1;
  options.num_partitions = 1;
  XLAC_ASSIGN_OR_RETURN(std::vector<Literal> results, interp::Evaluate(scratch, {}, options));
  return std::move(results[0]);
}

// Removes `inst` and then the sources only it read (constants, iotas, broadcasts: nothing with effects).
absl::Status RemoveDead(Computation& comp, Instruction* inst) {
  std::vector<Instruction*> worklist = {inst};
  absl::flat_hash_set<const Instruction*> removed;  // membership only: a source can be queued twice
  while (!worklist.empty()) {
    Instruction* cur = worklist.back();
    worklist.pop_back();
    if (removed.contains(cur) || cur->user_count() != 0 || cur == comp.root() || !cur->control_predecessors().empty() ||
        !cur->control_successors().empty()) {
      continue;
    }
    std::vector<Instruction*> operands = cur->operands();
    // An operand used twice must be queued once: it is deleted the first time round.
    std::sort(operands.begin(), operands.end(),
              [](const Instruction* a, const Instruction* b) { return a->unique_id() < b->unique_id(); });
    operands.erase(std::unique(operands.begin(), operands.end()), operands.end());
    cur->DetachFromOperandsAndEdges();
    removed.insert(cur);
    XLAC_RETURN_IF_ERROR(comp.RemoveInstruction(cur));
    for (Instruction* operand : operands) {
      Opcode op = operand->opcode();
      if (op == Opcode::kConstant || op == Opcode::kIota || op == Opcode::kBroadcast) worklist.push_back(operand);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> FoldComputation(Computation& comp) {
  bool changed = false;
  for (Instruction* inst : comp.MakePostOrder()) {
    int64_t source_bytes = 0;
    if (!IsCandidate(*inst, &source_bytes)) continue;
    absl::StatusOr<Literal> value = Evaluate(*inst);
    // Whatever the interpreter cannot evaluate here (an unsupported op, a bad value) is left for run time, where
    // it reports the problem in context.
    if (!value.ok()) continue;
    auto constant = Instruction::CreateConstant(inst->name(), *std::move(value));
    constant->set_shape(inst->shape());
    constant->set_sharding(inst->sharding());
    *constant->mutable_metadata() = inst->metadata();
    *constant->mutable_frontend_attributes() = inst->frontend_attributes();
    constant->set_loc(inst->loc());
    Instruction* folded = comp.AddInstruction(std::move(constant));
    inst->ReplaceAllUsesWith(folded);
    XLAC_RETURN_IF_ERROR(RemoveDead(comp, inst));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RunConstantFolding(Module& module) {
  // A scheduled module's instruction order is its schedule, and new instructions can only be appended.
  if (module.config().is_scheduled) return false;
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    XLAC_ASSIGN_OR_RETURN(bool comp_changed, FoldComputation(*comp));
    changed |= comp_changed;
  }
  return changed;
}

}  // namespace xlac
