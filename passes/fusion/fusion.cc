#include "passes/fusion/fusion.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"
#include "passes/fusion/fusible.h"
#include "passes/fusion/fusion_builder.h"
#include "passes/fusion/fusion_cost.h"
#include "passes/fusion/fusion_internal.h"
#include "passes/layout_order.h"

namespace xlac {
namespace fusion_internal {

namespace {

// Shardings that put the same tiles on the same devices, whichever way their device lists are written (an explicit
// list or XLA's iota form, as sharding propagation writes them).
bool SameSharding(const Instruction& a, const Instruction& b) {
  const std::optional<Sharding>& x = a.sharding();
  const std::optional<Sharding>& y = b.sharding();
  if (x == y) return true;
  if (!x || !y || !x->IsTiled() || !y->IsTiled()) return false;
  Sharding u = *x, v = *y;
  u.device_ids = u.DeviceList();
  v.device_ids = v.DeviceList();
  u.iota.reset();
  v.iota.reset();
  return u == v;
}

}  // namespace

bool HasControlEdges(const Instruction& inst) {
  return !inst.control_predecessors().empty() || !inst.control_successors().empty();
}

bool OperandsAreParameterShaped(const Instruction& inst) {
  for (const Instruction* operand : inst.operands()) {
    const Shape& shape = operand->shape();
    if (!shape.IsArray() || IsComplexType(shape.element_type) || !shape.IsStatic()) return false;
  }
  return true;
}

bool IsFusibleReduce(const Instruction& inst) {
  if (inst.opcode() != Opcode::kReduce || inst.operand_count() != 2 || !inst.shape().IsArray() ||
      IsComplexType(inst.shape().element_type) || !inst.shape().IsStatic() || inst.called_computations().size() != 1) {
    return false;
  }
  const Computation* reducer = inst.called_computation(0);
  if (reducer->root() == nullptr) return false;
  for (const auto& op : reducer->instructions()) {
    if (!op->shape().IsScalar() || !IsElementalOp(*op) || !op->called_computations().empty()) return false;
  }
  return OperandsAreParameterShaped(inst);
}

const std::vector<Instruction*>& FusedParams(const FusionState& state, const Instruction& fusion) {
  if (state.growing != nullptr && state.growing->fusion() == &fusion) return state.growing->params();
  return fusion.called_computation(0)->parameters();
}

}  // namespace fusion_internal

namespace {

using fusion_internal::FusedParams;
using fusion_internal::FusionState;
using fusion_internal::HasControlEdges;
using fusion_internal::IsFusibleReduce;

constexpr std::string_view kLoop = "kLoop";
constexpr std::string_view kInput = "kInput";
constexpr std::string_view kOutput = "kOutput";

bool IsGemm(const Instruction& inst) { return inst.opcode() == Opcode::kDot || inst.opcode() == Opcode::kConvolution; }

// The kind `inst` has as a fusion root: the fusion's kind for one of ours, the kind wrapping it would give for a
// plain instruction, nothing if it cannot be (or grow) a fusion.
std::optional<std::string_view> ConsumerKind(const FusionState& state, const Instruction& inst) {
  if (inst.opcode() == Opcode::kFusion) {
    if (!state.ours.contains(&inst)) return std::nullopt;
    std::string_view kind = inst.StringAttr("kind");
    if (kind == kLoop) return kLoop;
    if (kind == kInput) return kInput;
    return kOutput;
  }
  if (HasControlEdges(inst) || inst.HasSideEffect() || inst.operand_count() == 0) return std::nullopt;
  // A bitcast moves no data; as the root of a loop fusion it would become a copy. So would a reshape or transpose
  // that relabels its operand's bytes in the layouts it has (layout assignment makes it a bitcast); left out, the
  // elementwise ops before it stay a dot's epilogue and their loop writes the bytes once.
  if (inst.opcode() == Opcode::kBitcast || IsBitcastInCurrentLayouts(inst)) return std::nullopt;
  if (IsFusibleReduce(inst)) return kInput;
  // A loop over one element saves nothing (loop counters, while conditions, scalar bookkeeping).
  if (IsElementalOp(inst) && inst.shape().ElementCount().value_or(0) > 1) return kLoop;
  return std::nullopt;
}

// The parameters of `fusion`'s computation that stand for `outer`.
std::vector<const Instruction*> ParamsFor(const FusionState& state, const Instruction& fusion,
                                          const Instruction* outer) {
  std::vector<const Instruction*> params;
  const std::vector<Instruction*>& fused = FusedParams(state, fusion);
  for (int64_t i = 0; i < fusion.operand_count(); ++i) {
    if (fusion.operand(i) == outer) params.push_back(fused[static_cast<size_t>(i)]);
  }
  return params;
}

// Whether `gemm`, fused into `consumer` (a kLoop root), leaves an epilogue the GEMM's output buffer can run in
// place (fusible.h's kOutput): its uses reach the root through same-index elementwise ops only.
bool IsEpilogueOf(const FusionState& state, const Instruction& consumer, const Instruction* gemm) {
  if (!gemm->shape().IsArray() || IsComplexType(gemm->shape().element_type) || !gemm->shape().IsStatic() ||
      !fusion_internal::OperandsAreParameterShaped(*gemm)) {
    return false;
  }
  if (consumer.opcode() != Opcode::kFusion) {
    return IsSameIndexElementwise(consumer) && SameArrayLayout(gemm->shape(), consumer.shape());
  }
  const Computation* fused = consumer.called_computation(0);
  const Instruction* root = fused->root();
  if (!SameArrayLayout(gemm->shape(), root->shape())) return false;
  for (const auto& inst : fused->instructions()) {
    if (IsGemm(*inst)) return false;
  }
  std::vector<const Instruction*> stack = ParamsFor(state, consumer, gemm);
  absl::flat_hash_set<const Instruction*> seen(stack.begin(), stack.end());
  while (!stack.empty()) {
    const Instruction* inst = stack.back();
    stack.pop_back();
    if (inst->opcode() != Opcode::kParameter && !IsSameIndexElementwise(*inst)) return false;
    if (inst->user_count() == 0 && inst != root) return false;
    for (const Instruction* user : inst->users()) {
      if (seen.insert(user).second) stack.push_back(user);
    }
  }
  return true;
}

// In a kOutput fusion the GEMM reads parameters only, so a producer of its operands stays outside.
bool FeedsGemm(const FusionState& state, const Instruction& fusion, const Instruction* producer) {
  for (const Instruction* param : ParamsFor(state, fusion, producer)) {
    for (const Instruction* user : param->users()) {
      if (IsGemm(*user)) return true;
    }
  }
  return false;
}

// Whether reading `producer`'s operands costs less than reading `producer` (broadcast, iota, constant, arithmetic on
// broadcasts): recomputing it in every consumer is never worse than materializing it.
bool ExpandsOperands(const Instruction& producer) {
  int64_t source_bytes = 0;
  for (const Instruction* operand : producer.operands()) {
    const Instruction* source = operand->opcode() == Opcode::kBroadcast ? operand->operand(0) : operand;
    if (source->opcode() == Opcode::kIota) continue;
    source_bytes += source->shape().ByteSizeOf().value_or(INT64_MAX / 4);
  }
  return source_bytes < producer.shape().ByteSizeOf().value_or(0);
}

bool IsLayoutOnly(const Instruction& inst) {
  switch (inst.opcode()) {
    case Opcode::kReshape:
    case Opcode::kBitcast:
    case Opcode::kTranspose:
    case Opcode::kCopy:
      return true;
    case Opcode::kFusion:
      for (const auto& fused : inst.called_computation(0)->instructions()) {
        if (fused->opcode() != Opcode::kParameter && !IsLayoutOnly(*fused)) return false;
      }
      return true;
    default:
      return false;
  }
}

// Whether `user` of `producer` could take a copy of it as well. Layout-only users (reshape, transpose, ...) are where
// a value is materialized for a GEMM or an output, so a producer that reaches one stays materialized anyway.
bool CanAbsorb(const FusionState& state, const Instruction& user, const Instruction* producer) {
  if (!fusion_internal::SameSharding(user, *producer) || IsLayoutOnly(user)) return false;
  std::optional<std::string_view> kind = ConsumerKind(state, user);
  return kind && !(*kind == kOutput && FeedsGemm(state, user, producer));
}

// A producer with several users is recomputed in a consumer only if it is cheap, and either costs no more to
// recompute than to read or will not need to be materialized at all (every user can take it).
bool MayDuplicate(const FusionState& state, const Instruction* producer) {
  if (!IsCheapToDuplicate(*producer)) return false;
  if (ExpandsOperands(*producer)) return true;
  if (producer == state.comp.root()) return false;
  for (const Instruction* user : producer->users()) {
    if (!CanAbsorb(state, *user, producer)) return false;
  }
  return true;
}

// The kind the consumer's fusion gets when `producer` (an operand of `consumer`) is fused into it, or nothing when
// it must not be.
std::optional<std::string_view> FusedKind(const FusionState& state, const Instruction& consumer,
                                          Instruction* producer) {
  std::optional<std::string_view> consumer_kind = ConsumerKind(state, consumer);
  if (!consumer_kind || producer->parent() != &state.comp) return std::nullopt;
  if (producer->opcode() == Opcode::kParameter || HasControlEdges(*producer) || producer->HasSideEffect()) {
    return std::nullopt;
  }
  if (!fusion_internal::SameSharding(*producer, consumer)) return std::nullopt;
  const bool shared = producer->user_count() > 1 || producer == state.comp.root();
  std::optional<std::string_view> kind;
  if (IsGemm(*producer)) {
    if (*consumer_kind != kLoop || shared || !IsEpilogueOf(state, consumer, producer)) return std::nullopt;
    kind = kOutput;
  } else {
    if (!IsElementalOp(*producer)) return std::nullopt;
    if (*consumer_kind == kOutput && FeedsGemm(state, consumer, producer)) return std::nullopt;
    if (shared && !MayDuplicate(state, producer)) return std::nullopt;
    kind = consumer_kind;
  }
  if (IsExpensiveOp(*producer)) {
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) != producer) continue;
      const Instruction* param =
          consumer.opcode() == Opcode::kFusion ? FusedParams(state, consumer)[static_cast<size_t>(i)] : nullptr;
      if (ReusesOperandElements(consumer, i, param)) return std::nullopt;
    }
  }
  // Size caps, counted as the fusion would be after this step.
  int64_t size = consumer.opcode() == Opcode::kFusion ? FusedInstructionCount(*consumer.called_computation(0)) : 1;
  if (size + 1 > kMaxFusedInstructions) return std::nullopt;
  absl::flat_hash_set<const Instruction*> params;
  for (const Instruction* operand : consumer.operands()) {
    if (operand != producer) params.insert(operand);
  }
  for (const Instruction* operand : producer->operands()) params.insert(operand);
  if (static_cast<int64_t>(params.size()) > kMaxFusionParameters) return std::nullopt;
  return kind;
}

// Producer-consumer fusion over the computation in reverse post order: each consumer absorbs its producers (and,
// through them, whole chains) before the producers are looked at as consumers themselves.
absl::Status FuseProducersIntoConsumers(FusionState& state) {
  std::vector<Instruction*> order = state.comp.MakePostOrder();
  // Pointers of removed instructions may be reused by fusions created here; those are not in `live`.
  absl::flat_hash_set<const Instruction*> live(order.begin(), order.end());
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    if (!live.contains(*it)) continue;
    Instruction* consumer = *it;
    // Every step of one consumer grows the same fusion; its computation is final once no producer fits.
    std::optional<FusionGrowth> growth;
    absl::Status status = absl::OkStatus();
    for (bool progress = true; progress && status.ok();) {
      progress = false;
      for (int64_t i = 0; i < consumer->operand_count(); ++i) {
        Instruction* producer = consumer->operand(i);
        std::optional<std::string_view> kind = FusedKind(state, *consumer, producer);
        if (!kind) continue;
        if (!state.ours.contains(consumer)) {
          live.erase(consumer);
          absl::StatusOr<Instruction*> wrapped =
              WrapInFusion(state.ctx, state.comp, consumer, *ConsumerKind(state, *consumer));
          if (!wrapped.ok()) {
            status = wrapped.status();
            break;
          }
          consumer = *wrapped;
          state.ours.insert(consumer);
        }
        if (!growth) {
          growth.emplace(state.ctx, state.comp, consumer);
          state.growing = &*growth;
        }
        // Fuse removes a producer nothing else uses.
        if (producer->user_count() == 1 && producer != state.comp.root() && !HasControlEdges(*producer)) {
          live.erase(producer);
        }
        status = growth->Fuse(producer, *kind);
        progress = true;
        break;
      }
    }
    if (growth) {
      growth->Finish();
      state.growing = nullptr;
    }
    XLAC_RETURN_IF_ERROR(status);
  }
  return absl::OkStatus();
}

// The entry and the computations it runs as sequential code; not reducers, comparators or fused computations.
std::vector<Computation*> FusibleComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> embedded;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (CallsSequentially(*inst)) continue;
      for (const Computation* callee : inst->called_computations()) embedded.insert(callee);
    }
  }
  std::vector<Computation*> out;
  if (module.entry_computation() == nullptr) return out;
  absl::flat_hash_set<const Computation*> seen = {module.entry_computation()};
  std::vector<Computation*> stack = {module.entry_computation()};
  while (!stack.empty()) {
    Computation* comp = stack.back();
    stack.pop_back();
    if (!embedded.contains(comp) && !comp->is_fusion_computation()) out.push_back(comp);
    for (const auto& inst : comp->instructions()) {
      if (!CallsSequentially(*inst)) continue;
      for (Computation* callee : inst->called_computations()) {
        if (seen.insert(callee).second) stack.push_back(callee);
      }
    }
  }
  return out;
}

// Fuses every fusible computation; `fusions` collects the fusions made, in program order.
absl::Status FuseComputations(FusionContext& ctx, std::vector<Instruction*>& fusions) {
  for (Computation* comp : FusibleComputations(ctx.module())) {
    FusionState state{ctx, *comp, {}};
    XLAC_RETURN_IF_ERROR(FuseProducersIntoConsumers(state));
    XLAC_ASSIGN_OR_RETURN(bool merged, fusion_internal::MergeSiblingReduces(state));
    // A merged fusion's new parameters (the reduces' init values, say) can fuse in turn.
    if (merged) XLAC_RETURN_IF_ERROR(FuseProducersIntoConsumers(state));
    for (Instruction* inst : comp->MakePostOrder()) {
      if (!state.ours.contains(inst)) continue;
      fusions.push_back(inst);
      if (!IsEmittableFusion(*inst)) {
        return absl::InternalError(absl::StrCat("fusion formed ", inst->name(), ", which codegen cannot emit"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<bool> RunFusion(Module& module) {
  // A schedule fixes the program order, and fusion runs before scheduling (as in XLA): a scheduled module is already
  // optimized, and new fusions could not be placed in its order.
  if (module.config().is_scheduled) return false;
  FusionContext ctx(module);
  std::vector<Instruction*> fusions;
  absl::Status status = FuseComputations(ctx, fusions);
  ctx.Adopt(fusions);
  if (!status.ok()) return status;
  return !fusions.empty();
}

}  // namespace xlac
