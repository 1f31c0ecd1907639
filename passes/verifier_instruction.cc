// Per-instruction invariants beyond shapes, after XLA's ShapeVerifier/InstructionVerifier: collective groups and
// pairs, -start/-done pairing, execution threads, sharding consistency and layout preservation.
#include <algorithm>
#include <map>
#include <set>
#include <vector>

#include "ir/shape_inference_internal.h"
#include "passes/verifier_internal.h"

namespace xlac::verifier_internal {
namespace {

using shape_inference_internal::ShapesCompatible;

const ReplicaGroups* FindReplicaGroups(const Instruction& inst) {
  const AttrValue* attr = inst.FindAttr("replica_groups");
  if (attr == nullptr || !std::holds_alternative<ReplicaGroups>(attr->value)) return nullptr;
  return &std::get<ReplicaGroups>(attr->value);
}

bool HasChannel(const Instruction& inst) { return inst.FindAttr("channel_id") != nullptr; }

// XLA's CheckReplicaGroups for the explicit list form: no empty group, no id twice, ids exactly 0..n-1, n equal to
// the participant count the group mode implies (when the module sets it), and (except for all-reduce) groups of
// equal size.
void VerifyReplicaGroups(const Instruction& inst, const Module& module, Reporter& r) {
  const Opcode op = inst.opcode();
  // all-to-all and ragged-all-to-all have no use_global_device_ids: with a channel they group partitions.
  const bool has_global_ids_attr = op != Opcode::kAllToAll && op != Opcode::kRaggedAllToAll;
  const bool global_ids = inst.BoolAttr("use_global_device_ids", false);
  const bool flattened = HasChannel(inst) && has_global_ids_attr && global_ids;
  const ReplicaGroups* groups = FindReplicaGroups(inst);
  if (groups == nullptr || (!groups->iota && groups->groups.empty())) {
    if (flattened) r.InstError(inst, "replica_groups must be given when use_global_device_ids=true");
    return;
  }
  if (groups->iota) return;  // well formed by construction
  std::set<int64_t> seen;
  for (const auto& group : groups->groups) {
    if (group.empty()) {
      r.InstError(inst, "has an empty replica group");
      return;
    }
    for (int64_t id : group) {
      if (!seen.insert(id).second) {
        r.InstError(inst, fmt::format("replica {} appears more than once in replica_groups", id));
        return;
      }
    }
  }
  const int64_t n = static_cast<int64_t>(seen.size());
  for (int64_t i = 0; i < n; ++i) {
    if (!seen.count(i)) {
      r.InstError(inst, fmt::format("replica_groups do not name replica {} (ids must be 0..{})", i, n - 1));
      return;
    }
  }
  const int64_t replicas = module.config().replica_count;
  const int64_t partitions = module.config().num_partitions;
  int64_t expected = replicas;
  std::string_view what = "replicas";
  if (flattened) {
    expected = replicas * partitions;
    what = "flattened device ids";
  } else if (HasChannel(inst) && !has_global_ids_attr) {
    expected = partitions;
    what = "partitions";
  }
  if (expected != 1 && n != expected) {
    r.InstError(inst, fmt::format("replica_groups name {} {} but the module has {}", n, what, expected));
    return;
  }
  if (op != Opcode::kAllReduce && op != Opcode::kAllReduceStart) {
    for (const auto& group : groups->groups) {
      if (group.size() != groups->groups[0].size()) {
        r.InstError(inst, "replica groups must all have the same size");
        return;
      }
    }
  }
}

// XLA's CheckDuplicatedSourceOrTarget. The in-place form moves one slice per entry of its offset tuples, so an id
// may then appear once per slice.
void VerifySourceTargetPairs(const Instruction& inst, const Module& module, Reporter& r) {
  const AttrValue* attr = inst.FindAttr("source_target_pairs");
  if (attr == nullptr || !std::holds_alternative<std::vector<std::vector<int64_t>>>(attr->value)) return;
  const auto& pairs = std::get<std::vector<std::vector<int64_t>>>(attr->value);
  size_t allowed = 1;
  if (inst.operand_count() == 4) {
    const Shape& offsets = inst.operand(2)->shape();
    if (inst.operand(0)->shape().IsArray() && offsets.IsTuple()) {
      allowed = offsets.tuple_shapes.size();
    } else if (offsets.IsTuple() && !offsets.tuple_shapes.empty() && offsets.tuple_shapes[0].IsTuple()) {
      allowed = offsets.tuple_shapes[0].tuple_shapes.size();
    }
  }
  const int64_t limit = HasChannel(inst) ? module.config().num_partitions : module.config().replica_count;
  std::map<int64_t, size_t> sources, targets;
  for (const auto& pair : pairs) {
    if (pair.size() != 2) {
      r.InstError(inst, "source_target_pairs entries must be {source,target} pairs");
      return;
    }
    for (int k = 0; k < 2; ++k) {
      const char* role = k == 0 ? "source" : "target";
      if (pair[k] < 0 || (limit > 1 && pair[k] >= limit)) {
        r.InstError(inst, fmt::format("{} {} in source_target_pairs is out of range [0, {})", role, pair[k], limit));
        return;
      }
      size_t& count = (k == 0 ? sources : targets)[pair[k]];
      if (++count > allowed) {
        r.InstError(
            inst, allowed == 1
                      ? fmt::format("{} {} appears more than once in source_target_pairs", role, pair[k])
                      : fmt::format("{} {} appears more than {} times in source_target_pairs", role, pair[k], allowed));
        return;
      }
    }
  }
}

// XLA's VerifyAsynchronousInstructionPairs: each -start feeds exactly one matching -done (or update).
void VerifyAsyncPairs(const Instruction& inst, Reporter& r) {
  auto single_user = [&](std::initializer_list<Opcode> allowed) {
    if (inst.user_count() != 1) {
      r.InstError(inst,
                  fmt::format("{} must have exactly one user, has {}", OpcodeName(inst.opcode()), inst.user_count()));
      return;
    }
    const Instruction* user = inst.users()[0];
    if (std::find(allowed.begin(), allowed.end(), user->opcode()) == allowed.end()) {
      r.InstError(inst, fmt::format("{} is used by {} '{}'", OpcodeName(inst.opcode()), OpcodeName(user->opcode()),
                                    user->name()));
    }
  };
  auto single_operand = [&](std::initializer_list<Opcode> allowed) {
    if (inst.operand_count() != 1) return;  // arity is reported elsewhere
    const Instruction* operand = inst.operand(0);
    if (std::find(allowed.begin(), allowed.end(), operand->opcode()) == allowed.end()) {
      r.InstError(inst, fmt::format("{} cannot consume {} '{}'", OpcodeName(inst.opcode()),
                                    OpcodeName(operand->opcode()), operand->name()));
    }
  };
  switch (inst.opcode()) {
    case Opcode::kAsyncStart:
      single_user({Opcode::kAsyncUpdate, Opcode::kAsyncDone});
      break;
    case Opcode::kAsyncUpdate:
      single_operand({Opcode::kAsyncStart, Opcode::kAsyncUpdate});
      single_user({Opcode::kAsyncUpdate, Opcode::kAsyncDone});
      break;
    case Opcode::kAsyncDone:
      single_operand({Opcode::kAsyncStart, Opcode::kAsyncUpdate});
      break;
    case Opcode::kAllReduceStart:
      single_user({Opcode::kAllReduceDone});
      break;
    case Opcode::kAllReduceDone:
      single_operand({Opcode::kAllReduceStart});
      break;
    case Opcode::kCopyStart:
      single_user({Opcode::kCopyDone});
      break;
    case Opcode::kCopyDone:
      single_operand({Opcode::kCopyStart});
      break;
    case Opcode::kCollectivePermuteStart:
      single_user({Opcode::kCollectivePermuteDone});
      break;
    case Opcode::kCollectivePermuteDone:
      single_operand({Opcode::kCollectivePermuteStart});
      break;
    default:
      break;
  }
}

// Callees run on their caller's execution thread, except that async ops hand their wrapped computation to the
// thread named by async_execution_thread (default "main") and custom-calls may call anything.
void VerifyExecutionThreads(const Instruction& inst, Reporter& r) {
  if (inst.called_computations().empty() || inst.opcode() == Opcode::kCustomCall) return;
  const bool is_async = inst.opcode() == Opcode::kAsyncStart || inst.opcode() == Opcode::kAsyncUpdate ||
                        inst.opcode() == Opcode::kAsyncDone;
  if (is_async && (inst.async_wrapped_opcode() || inst.called_computations().size() != 1)) return;
  std::string expected = inst.parent()->execution_thread();
  if (is_async) {
    // The chain's thread is written on its async-start (update/done may repeat it).
    const Instruction* start = &inst;
    for (int depth = 0; start->opcode() != Opcode::kAsyncStart && start->operand_count() == 1 && depth < 1000;
         ++depth) {
      start = start->operand(0);
    }
    std::string_view thread = inst.StringAttr("async_execution_thread");
    if (thread.empty()) thread = start->StringAttr("async_execution_thread");
    expected = thread.empty() ? "main" : std::string(thread);
  }
  for (const Computation* callee : inst.called_computations()) {
    if (callee->execution_thread() != expected) {
      r.InstError(inst, fmt::format("calls computation '{}' on execution thread \"{}\" but {} \"{}\"", callee->name(),
                                    callee->execution_thread(), is_async ? "async_execution_thread is" : "it runs on",
                                    expected));
      return;
    }
  }
}

// A loop's state and a conditional's result are one value, so all the places that carry it agree on sharding.
void VerifyConsistentSharding(const Instruction& inst, Reporter& r) {
  std::vector<const Instruction*> carriers = {&inst};
  if (inst.opcode() == Opcode::kWhile && inst.called_computations().size() == 2) {
    const Computation* cond = inst.called_computation(0);
    const Computation* body = inst.called_computation(1);
    carriers.push_back(body->root());
    if (body->parameter_count() == 1) carriers.push_back(body->parameter(0));
    if (cond->parameter_count() == 1) carriers.push_back(cond->parameter(0));
  } else if (inst.opcode() == Opcode::kConditional) {
    for (const Computation* branch : inst.called_computations()) carriers.push_back(branch->root());
  } else {
    return;
  }
  const Instruction* first = nullptr;
  for (const Instruction* carrier : carriers) {
    if (carrier == nullptr || !carrier->sharding()) continue;
    if (first == nullptr) {
      first = carrier;
    } else if (!(*carrier->sharding() == *first->sharding())) {
      r.InstError(inst, fmt::format("inconsistent {} sharding: '{}' and '{}' differ", OpcodeName(inst.opcode()),
                                    first->name(), carrier->name()));
      return;
    }
  }
}

void VerifyLayoutConstraints(const Instruction& inst, const VerifierOptions& options, Reporter& r) {
  const AttrValue* constraints = inst.FindAttr("operand_layout_constraints");
  if (constraints == nullptr || !std::holds_alternative<std::vector<Shape>>(constraints->value)) return;
  const auto& shapes = std::get<std::vector<Shape>>(constraints->value);
  if (static_cast<int64_t>(shapes.size()) != inst.operand_count()) {
    r.InstError(inst, fmt::format("operand_layout_constraints has {} shapes for {} operands", shapes.size(),
                                  inst.operand_count()));
    return;
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!ShapesCompatible(shapes[i], inst.operand(i)->shape())) {
      r.InstError(inst, fmt::format("operand {} has shape {} but its layout constraint is {}", i,
                                    Str(inst.operand(i)->shape()), Str(shapes[i])));
    } else if (options.check_layouts && !LayoutsMatch(shapes[i], inst.operand(i)->shape(), false)) {
      r.InstError(inst, fmt::format("operand {} has layout {} but its layout constraint is {}", i,
                                    StrWithLayout(inst.operand(i)->shape()), StrWithLayout(shapes[i])));
    }
  }
}

// XLA's LayoutAssignment::InstructionCanChangeLayout == false: the result keeps the layout of same-rank operands.
bool PreservesLayout(Opcode op) {
  switch (op) {
    case Opcode::kAbs:
    case Opcode::kAdd:
    case Opcode::kAddDependency:
    case Opcode::kAnd:
    case Opcode::kAtan2:
    case Opcode::kBitcastConvert:
    case Opcode::kCeil:
    case Opcode::kClamp:
    case Opcode::kClz:
    case Opcode::kCompare:
    case Opcode::kComplex:
    case Opcode::kConcatenate:
    case Opcode::kConvert:
    case Opcode::kCos:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kDivide:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kErf:
    case Opcode::kExp:
    case Opcode::kExpm1:
    case Opcode::kFft:
    case Opcode::kFloor:
    case Opcode::kImag:
    case Opcode::kIsFinite:
    case Opcode::kLog:
    case Opcode::kLog1p:
    case Opcode::kLogistic:
    case Opcode::kMap:
    case Opcode::kMaximum:
    case Opcode::kMinimum:
    case Opcode::kMultiply:
    case Opcode::kNegate:
    case Opcode::kNot:
    case Opcode::kOr:
    case Opcode::kXor:
    case Opcode::kPad:
    case Opcode::kPower:
    case Opcode::kReal:
    case Opcode::kReducePrecision:
    case Opcode::kReduceWindow:
    case Opcode::kRemainder:
    case Opcode::kReverse:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kRsqrt:
    case Opcode::kScatter:
    case Opcode::kSelect:
    case Opcode::kSelectAndScatter:
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kSign:
    case Opcode::kSin:
    case Opcode::kSlice:
    case Opcode::kSort:
    case Opcode::kSqrt:
    case Opcode::kCbrt:
    case Opcode::kSubtract:
    case Opcode::kTan:
    case Opcode::kTanh:
    case Opcode::kPopulationCount:
    case Opcode::kTriangularSolve:
    case Opcode::kCholesky:
    case Opcode::kSetDimensionSize:
    case Opcode::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

void VerifyLayoutPreserved(const Instruction& inst, Reporter& r) {
  const Shape& out = inst.shape();
  if (!PreservesLayout(inst.opcode()) || !out.IsArray() || !out.layout) return;
  // Element-size annotations may legitimately change where the element type does.
  const bool ignore_element_size = inst.opcode() == Opcode::kConvert || inst.opcode() == Opcode::kCompare ||
                                   inst.opcode() == Opcode::kIsFinite || inst.opcode() == Opcode::kSelect;
  for (const Instruction* operand : inst.operands()) {
    const Shape& in = operand->shape();
    if (!in.IsArray() || in.rank() != out.rank() || !in.layout) continue;
    const Layout& a = *out.layout;
    const Layout& b = *in.layout;
    if (a.minor_to_major != b.minor_to_major || a.dim_level_types != b.dim_level_types ||
        (!ignore_element_size && a.element_size_in_bits != b.element_size_in_bits)) {
      r.InstError(inst, fmt::format("{} cannot change layouts, but its result {} differs from operand '{}' {}",
                                    OpcodeName(inst.opcode()), StrWithLayout(out), operand->name(), StrWithLayout(in)));
      return;
    }
  }
}

}  // namespace

void VerifyInstructionInvariants(const Instruction& inst, const Module& module, const VerifierOptions& options,
                                 Reporter& r) {
  switch (inst.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kRaggedAllToAll:
      VerifyReplicaGroups(inst, module, r);
      break;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      VerifySourceTargetPairs(inst, module, r);
      break;
    case Opcode::kCustomCall:
      VerifyLayoutConstraints(inst, options, r);
      break;
    case Opcode::kWhile:
    case Opcode::kConditional:
      VerifyConsistentSharding(inst, r);
      break;
    default:
      break;
  }
  VerifyAsyncPairs(inst, r);
  VerifyExecutionThreads(inst, r);
  if (options.check_layouts) VerifyLayoutPreserved(inst, r);
}

}  // namespace xlac::verifier_internal
