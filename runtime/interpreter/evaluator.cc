// The computation walk (post order over live instructions, freeing values after their last use), opcode dispatch
// and control flow (call, while, conditional, fusion, async wrappers).
#include <algorithm>
#include <chrono>

#include "ir/kernel_calls.h"
#include "ir/sharding.h"
#include "ir/winograd.h"
#include "runtime/interpreter/fast_kernels.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

// Per-computation schedule: which instructions to run, where their operands live, and when values die.
struct Evaluator::Plan {
  std::vector<const Instruction*> order;
  std::vector<std::vector<int32_t>> operand_slots;
  std::vector<int32_t> last_use;  // position after which an owned value may be freed; INT32_MAX = keep
  // Values that are another slot's literal: get-tuple-element (a view into its operand's storage) and elided scalar
  // broadcasts (see TakesScalarOperands); that slot, else -1.
  std::vector<int32_t> alias_of;
  std::vector<uint8_t> elided_broadcast;  // a broadcast of one element whose users all take it as that element
  int32_t root = -1;
};

namespace {

int64_t SteadyNowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Elementwise ops whose kernels (elementwise.cc) read an operand of one element as that element broadcast to the
// result's shape: binary ops, compare, select (array form) and clamp.
bool TakesScalarOperands(const Instruction& inst) {
  if (inst.shape().IsTuple()) return false;
  Opcode op = inst.opcode();
  return IsElementwiseBinary(op) || op == Opcode::kCompare || op == Opcode::kSelect || op == Opcode::kClamp;
}

// A broadcast of a one-element array is never materialized when every user takes one-element operands (the ReLU6
// bounds and zeros of a training step: 3 G elements, 12 GB written and read again in a MobileNetV2 step). Its users
// read the operand's element wherever they would have read the broadcast: the same value, so the same results.
bool ElidableBroadcast(const Instruction& inst, const Computation& comp) {
  if (inst.opcode() != Opcode::kBroadcast || inst.operand_count() != 1 || &inst == comp.root()) return false;
  const Shape& in = inst.operand(0)->shape();
  if (!in.IsArray() || ElementCount(in) != 1 || in.element_type != inst.shape().element_type) return false;
  if (inst.users().empty()) return false;
  for (const Instruction* user : inst.users()) {
    if (!TakesScalarOperands(*user)) return false;
  }
  return true;
}

std::optional<int64_t> ByteSizeRecursive(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& e : shape.tuple_shapes) {
      std::optional<int64_t> b = ByteSizeRecursive(e);
      if (!b) return std::nullopt;
      total += *b;
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  return shape.ByteSizeOf();
}

absl::Status CheckResultBytes(const Instruction& inst, const InterpreterOptions& options) {
  std::optional<int64_t> bytes = ByteSizeRecursive(inst.shape());
  if (!bytes || *bytes > options.max_result_bytes) {
    return Error(inst, "result {} is larger than the interpreter's limit of {} bytes", ShapeToString(inst.shape()),
                 options.max_result_bytes);
  }
  return absl::OkStatus();
}

}  // namespace

absl::flat_hash_set<const Instruction*> LiveInstructions(const Computation& comp) {
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> work;
  auto mark = [&](const Instruction* inst) {
    if (live.insert(inst).second) work.push_back(inst);
  };
  if (comp.root() != nullptr) mark(comp.root());
  for (const Instruction* inst : comp.MakePostOrder()) {
    if (inst->HasSideEffect()) mark(inst);
  }
  while (!work.empty()) {
    const Instruction* inst = work.back();
    work.pop_back();
    for (const Instruction* op : inst->operands()) mark(op);
    for (const Instruction* op : inst->control_predecessors()) mark(op);
  }
  return live;
}

Evaluator::Evaluator(const Module& module, DeviceContext& device) : module_(module), device_(device) {}
Evaluator::~Evaluator() = default;

int64_t Evaluator::NextOccurrence(const Instruction& inst) { return occurrences_[&inst]++; }

const Evaluator::Plan& Evaluator::GetPlan(const Computation& comp) {
  auto it = plans_.find(&comp);
  if (it != plans_.end()) return *it->second;
  auto plan = std::make_unique<Plan>();
  std::vector<Instruction*> post = comp.MakePostOrder();
  const absl::flat_hash_set<const Instruction*> live = LiveInstructions(comp);
  absl::flat_hash_map<const Instruction*, int32_t> slot;
  for (const Instruction* inst : post) {
    if (!live.contains(inst)) continue;
    slot[inst] = static_cast<int32_t>(plan->order.size());
    plan->order.push_back(inst);
  }
  size_t n = plan->order.size();
  plan->operand_slots.resize(n);
  plan->last_use.assign(n, -1);
  plan->alias_of.assign(n, -1);
  plan->elided_broadcast.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const Instruction* inst = plan->order[i];
    for (const Instruction* op : inst->operands()) plan->operand_slots[i].push_back(slot.at(op));
    if (inst->opcode() == Opcode::kGetTupleElement) plan->alias_of[i] = plan->operand_slots[i][0];
    if (ElidableBroadcast(*inst, comp)) {
      plan->alias_of[i] = plan->operand_slots[i][0];
      plan->elided_broadcast[i] = 1;
    }
  }
  auto owner = [&](int32_t s) {
    while (plan->alias_of[s] >= 0) s = plan->alias_of[s];
    return s;
  };
  for (size_t i = 0; i < n; ++i) {
    for (int32_t s : plan->operand_slots[i]) {
      int32_t o = owner(s);
      plan->last_use[o] = std::max(plan->last_use[o], static_cast<int32_t>(i));
    }
  }
  plan->root = slot.at(comp.root());
  plan->last_use[owner(plan->root)] = INT32_MAX;
  return *plans_.emplace(&comp, std::move(plan)).first->second;
}

absl::StatusOr<Literal> Evaluator::Call(const Computation& comp, Operands args) {
  if (static_cast<int64_t>(args.size()) != comp.parameter_count()) {
    return absl::InvalidArgumentError(fmt::format("computation {} takes {} parameters but got {} arguments",
                                                  comp.name(), comp.parameter_count(), args.size()));
  }
  if (++depth_ > 500) {
    --depth_;
    return absl::ResourceExhaustedError("computation nesting is deeper than 500 calls");
  }
  struct DepthGuard {
    int& d;
    ~DepthGuard() { --d; }
  } guard{depth_};
  const Plan& plan = GetPlan(comp);
  size_t n = plan.order.size();
  std::vector<Literal> owned(n);
  std::vector<const Literal*> value(n, nullptr);
  std::vector<const Literal*> operands;
  for (size_t i = 0; i < n; ++i) {
    const Instruction& inst = *plan.order[i];
    if (inst.opcode() == Opcode::kParameter) {
      value[i] = args[static_cast<size_t>(inst.parameter_number())];
      continue;
    }
    if (inst.opcode() == Opcode::kGetTupleElement) {
      const Literal* tuple = value[plan.operand_slots[i][0]];
      int64_t index = IntAttr(inst, "index", 0);
      if (!tuple->is_tuple() || index < 0 || index >= static_cast<int64_t>(tuple->tuple_elements().size())) {
        return Error(inst, "tuple index {} out of range for {}", index, ShapeToString(tuple->shape()));
      }
      value[i] = &tuple->tuple_elements()[static_cast<size_t>(index)];
      continue;
    }
    if (plan.elided_broadcast[i]) {
      XLAC_RETURN_IF_ERROR(CheckResultBytes(inst, *device_.options));  // refused as if it were materialized
      value[i] = value[plan.operand_slots[i][0]];
      continue;
    }
    operands.clear();
    for (int32_t s : plan.operand_slots[i]) operands.push_back(value[s]);
    const bool observed = depth_ == 1 && device_.options->on_instruction != nullptr;
    const int64_t begin_ns = observed ? SteadyNowNs() : 0;
    absl::StatusOr<Literal> result = EvalInstruction(inst, operands);
    if (!result.ok()) return result.status();
    if (observed) device_.options->on_instruction(device_.device_id, inst, begin_ns, SteadyNowNs());
    owned[i] = *std::move(result);
    value[i] = &owned[i];
    for (int32_t s : plan.operand_slots[i]) {
      while (plan.alias_of[s] >= 0) s = plan.alias_of[s];
      if (plan.last_use[s] == static_cast<int32_t>(i)) owned[s] = Literal();
    }
  }
  int32_t root = plan.root;
  if (value[root] == &owned[root]) return std::move(owned[root]);
  return *value[root];
}

namespace {

bool IsElementwiseOp(Opcode op) {
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op)) return true;
  switch (op) {
    case Opcode::kCompare:
    case Opcode::kSelect:
    case Opcode::kClamp:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<Literal> Evaluator::EvalInstruction(const Instruction& inst, Operands operands) {
  XLAC_RETURN_IF_ERROR(CheckResultBytes(inst, *device_.options));
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i]->is_unknown()) return Error(inst, "operand {} has no value", i);
  }
  Opcode op = inst.opcode();
  if (IsElementwiseOp(op)) return EvalElementwise(inst, operands, KernelThreads(device_));
  switch (op) {
    case Opcode::kConstant: {
      if (!inst.has_literal()) return Error(inst, "constant without a literal");
      if (!inst.literal().is_unknown()) return inst.literal();
      // Elided `{...}` values: deterministic per (seed, constant name).
      return ElidedConstantValue(inst.shape(), inst.name(), device_.options->seed);
    }
    case Opcode::kConvert:
    case Opcode::kBitcastConvert:
    case Opcode::kReducePrecision:
    case Opcode::kStochasticConvert:
      return EvalConvert(inst, operands);
    case Opcode::kBroadcast:
    case Opcode::kReshape:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kSlice:
    case Opcode::kDynamicSlice:
    case Opcode::kDynamicUpdateSlice:
    case Opcode::kConcatenate:
    case Opcode::kPad:
    case Opcode::kIota:
    case Opcode::kCopy:
    case Opcode::kBitcast:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
    case Opcode::kDynamicReshape:
      return EvalDataMovement(inst, operands);
    case Opcode::kReduce:
      return EvalReduce(inst, operands, *this);
    case Opcode::kReduceWindow:
      return EvalReduceWindow(inst, operands, *this);
    case Opcode::kSelectAndScatter:
      return EvalSelectAndScatter(inst, operands, *this);
    case Opcode::kMap:
      return EvalMap(inst, operands, *this);
    case Opcode::kScan:
      return EvalScan(inst, operands, *this);
    case Opcode::kRaggedDot:
      return EvalRaggedDot(inst, operands);
    case Opcode::kDot:
      return EvalDot(inst, operands, device_.options != nullptr && device_.options->tpu_numerics,
                     KernelThreads(device_));
    case Opcode::kConvolution:
      return EvalConvolution(inst, operands, device_.options != nullptr && device_.options->tpu_numerics,
                             KernelThreads(device_));
    case Opcode::kGather:
      return EvalGather(inst, operands);
    case Opcode::kScatter:
      return EvalScatter(inst, operands, *this);
    case Opcode::kSort:
      return EvalSort(inst, operands, *this);
    case Opcode::kTopK:
      return EvalTopK(inst, operands);
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
      return EvalRng(inst, operands, device_);
    case Opcode::kRngBitGenerator:
      return EvalRngBitGenerator(inst, operands);
    case Opcode::kFft:
      return EvalFft(inst, operands);
    case Opcode::kCholesky:
    case Opcode::kTriangularSolve:
      return EvalLinalg(inst, operands);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return EvalBatchNorm(inst, operands, KernelThreads(device_));
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kRaggedAllToAll:
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
      return EvalCollective(inst, operands, *this);
    case Opcode::kAllReduceDone:
      return *operands[0];
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
      return operands[0]->tuple_elements().at(1);
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return EvalAsync(inst, operands);
    default:
      return EvalControl(inst, operands);
  }
}

absl::StatusOr<Literal> Evaluator::EvalControl(const Instruction& inst, Operands operands) {
  switch (inst.opcode()) {
    case Opcode::kTuple: {
      std::vector<Literal> elements;
      elements.reserve(operands.size());
      for (const Literal* op : operands) elements.push_back(*op);
      return Literal::CreateTuple(std::move(elements));
    }
    case Opcode::kCall:
    case Opcode::kFusion:
      if (inst.called_computations().empty()) return Error(inst, "no called computation");
      return Call(*inst.called_computation(0), operands);
    case Opcode::kWhile: {
      if (inst.called_computations().size() != 2) return Error(inst, "expected condition and body");
      const Computation& cond = *inst.called_computation(0);
      const Computation& body = *inst.called_computation(1);
      Literal state = *operands[0];
      for (;;) {
        const Literal* arg = &state;
        absl::StatusOr<Literal> keep_going = Call(cond, Operands(&arg, 1));
        if (!keep_going.ok()) return keep_going.status();
        if (!LoadOne<bool>(*keep_going, 0)) break;
        absl::StatusOr<Literal> next = Call(body, Operands(&arg, 1));
        if (!next.ok()) return next.status();
        state = *std::move(next);
      }
      return state;
    }
    case Opcode::kConditional: {
      const Literal& selector = *operands[0];
      int64_t branches = static_cast<int64_t>(inst.called_computations().size());
      int64_t branch;
      if (selector.shape().element_type == PrimitiveType::kPred) {
        branch = LoadOne<bool>(selector, 0) ? 0 : 1;
      } else {
        branch = IndexValue(selector, 0);
        if (branch < 0 || branch >= branches) branch = branches - 1;  // XLA: out of range runs the last branch
      }
      if (branch + 1 >= static_cast<int64_t>(operands.size())) return Error(inst, "missing operand for branch");
      const Literal* arg = operands[static_cast<size_t>(branch + 1)];
      return Call(*inst.called_computation(branch), Operands(&arg, 1));
    }
    case Opcode::kCustomCall: {
      std::string_view target = TextAttr(inst, "custom_call_target");
      if (target == "interpreter.run_parallel" || target == "interpreter.probe" || IsWinogradTarget(target)) {
        return EvalInterpreterOp(inst, operands, *this);
      }
      // Sharding annotations and barriers are identities on values.
      if (IsShardingIdentityTarget(target) && operands.size() == 1 && operands[0]->shape().Compatible(inst.shape())) {
        return *operands[0];
      }
      // A shard_map boundary outside a partitioned program: the whole array is the one shard when shapes agree.
      if (IsShardMapBoundaryTarget(target) && operands.size() == 1) {
        if (operands[0]->shape().Compatible(inst.shape())) return *operands[0];
        return absl::InvalidArgumentError(fmt::format(
            "{}: {} turns {} into {}: a manual (shard_map) region's shapes are per-core, which only the partitioned "
            "program has; run it partitioned (more than one partition) rather than as one global program",
            inst.name(), std::string(target), ShapeToString(operands[0]->shape(), false),
            ShapeToString(inst.shape(), false)));
      }
      if (IsElementwiseKernelCall(inst)) return EvalElementwiseKernel(inst, operands, *device_.options);
      if (IsBufferKernelCall(inst)) return EvalBufferKernel(inst, operands, *device_.options);
      if (std::optional<absl::StatusOr<Literal>> linalg = EvalDecompositionCall(inst, operands)) return *linalg;
      if (device_.options->custom_call_handler) {
        absl::StatusOr<Literal> handled =
            device_.options->custom_call_handler(inst, std::vector<const Literal*>(operands.begin(), operands.end()));
        if (handled.ok() || handled.status().code() != absl::StatusCode::kUnimplemented) return handled;
      }
      // The identity hint only where an identity could stand: one operand of the result's shape.
      if (inst.operand_count() != 1 || !inst.operand(0)->shape().Compatible(inst.shape())) {
        return absl::UnimplementedError(
            fmt::format("{}: unsupported custom call target {} (C++ kernels: --custom-call-src, docs/custom_calls.md)",
                        inst.name(), std::string(target)));
      }
      return absl::UnimplementedError(fmt::format(
          "{}: unsupported custom call target {} (if it only annotates its operand, declare it an identity: "
          "--custom-call-identity={})",
          inst.name(), std::string(target), std::string(target)));
    }
    case Opcode::kAfterAll:
      return Literal(Shape::Token());
    case Opcode::kAddDependency:
    case Opcode::kOptimizationBarrier:
    case Opcode::kDomain:
      return *operands[0];
    case Opcode::kCopyStart: {
      std::vector<Literal> elements = {*operands[0], *operands[0], Literal(Shape::Scalar(PrimitiveType::kU32))};
      return Literal::CreateTuple(std::move(elements));
    }
    case Opcode::kCopyDone:
      return operands[0]->tuple_elements().at(0);
    case Opcode::kOutfeed:
      return Literal(Shape::Token());  // the data leaves the program; nothing to compute
    case Opcode::kInfeed: {
      // No host feeds the device: each execution of an infeed reads fresh seeded values, reproducible per
      // (seed, name, device, occurrence), like parameters a tool generates.
      if (!inst.shape().IsTuple() || inst.shape().tuple_shapes.size() != 2) return Error(inst, "malformed infeed");
      uint64_t occurrence = static_cast<uint64_t>(NextOccurrence(inst));
      std::vector<Literal> parts;
      parts.push_back(
          InfeedValue(inst.shape().tuple_shapes[0], inst.name(), device_.options->seed, device_.device_id, occurrence));
      parts.push_back(Literal(Shape::Token()));
      return Literal::CreateTuple(std::move(parts));
    }
    default:
      return Unsupported(inst, "opcode {} is not supported by the interpreter", OpcodeName(inst.opcode()));
  }
}

// async-start evaluates the wrapped computation at once; the value travels in element 1 of the async tuple
// ((operands), result, context...), which async-update passes on and async-done unwraps.
absl::StatusOr<Literal> Evaluator::EvalAsync(const Instruction& inst, Operands operands) {
  if (inst.opcode() == Opcode::kAsyncUpdate) return *operands[0];
  if (inst.opcode() == Opcode::kAsyncDone) return operands[0]->tuple_elements().at(1);
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes.size() < 2) return Error(inst, "malformed async shape");
  absl::StatusOr<Literal> result;
  if (std::optional<Opcode> wrapped = inst.async_wrapped_opcode()) {
    // `op-start` syntax: the wrapped op's attributes sit on this instruction. Evaluate a detached copy carrying
    // the wrapped opcode and result shape (no operands; family functions only read operand values).
    auto& detached = inline_async_ops_[&inst];
    if (!detached) {
      detached = Instruction::Create(*wrapped, inst.name(), shape.tuple_shapes[1], {});
      for (const auto& [name, value] : inst.attrs().entries()) detached->SetAttr(name, value);
      detached->set_called_computations(inst.called_computations());
      detached->mutable_frontend_attributes()->assign(inst.frontend_attributes().begin(),
                                                      inst.frontend_attributes().end());
    }
    result = EvalInstruction(*detached, operands);
  } else {
    if (inst.called_computations().empty()) return Error(inst, "async-start without a wrapped computation");
    result = Call(*inst.called_computation(0), operands);
  }
  if (!result.ok()) return result.status();
  std::vector<Literal> elements;
  std::vector<Literal> args;
  for (const Literal* op : operands) args.push_back(*op);
  elements.push_back(Literal::CreateTuple(std::move(args)));
  elements.push_back(*std::move(result));
  for (size_t i = 2; i < shape.tuple_shapes.size(); ++i) elements.emplace_back(shape.tuple_shapes[i]);
  return Literal::CreateTuple(std::move(elements));
}

}  // namespace xlac::interp
