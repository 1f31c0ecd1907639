// The HLO verifier, after XLA's HloVerifier: module/computation structure, then every instruction's shape against
// shape inference (ir/shape_inference.h) and the other per-instruction invariants (verifier_instruction.cc), then
// module-level configuration (verifier_module.cc).
#include "passes/verifier.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "fmt/format.h"
#include "ir/shape_inference.h"
#include "ir/shape_inference_internal.h"
#include "passes/verifier_internal.h"

namespace xlac {
namespace verifier_internal {
namespace {
Layout NormalizedLayout(const Shape& shape) { return shape.layout ? *shape.layout : Layout::Default(shape.rank()); }
}  // namespace

// Layout equality for arrays (recursing through tuples); absent layouts count as the default descending one.
bool LayoutsMatch(const Shape& a, const Shape& b, bool ignore_tiles_and_memory_space) {
  if (a.IsTuple() && b.IsTuple()) {
    if (a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
      if (!LayoutsMatch(a.tuple_shapes[i], b.tuple_shapes[i], ignore_tiles_and_memory_space)) return false;
    }
    return true;
  }
  if (!a.IsArray() || !b.IsArray()) return true;
  Layout la = NormalizedLayout(a);
  Layout lb = NormalizedLayout(b);
  if (ignore_tiles_and_memory_space) {
    la.tiles.clear();
    lb.tiles.clear();
    la.memory_space = lb.memory_space = 0;
    la.tail_padding_alignment_in_elements = lb.tail_padding_alignment_in_elements = 1;
  }
  return la == lb;
}

}  // namespace verifier_internal

namespace {

using shape_inference_internal::ShapeProblem;
using shape_inference_internal::ShapesCompatible;
using verifier_internal::LayoutsMatch;
using verifier_internal::Reporter;
using verifier_internal::Str;
using verifier_internal::StrWithLayout;
using verifier_internal::VerifyInstructionInvariants;
using verifier_internal::VerifyModuleConfig;

// Ops whose result XLA compares exactly with what their operands/callees imply (they only move data around); all
// other ops may change floating-point precision (mixed-precision HLO), as XLA's verifier allows in its tests.
bool RequiresExactShape(Opcode op) {
  switch (op) {
    case Opcode::kBitcast:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kConstant:
    case Opcode::kCopyDone:
    case Opcode::kCopyStart:
    case Opcode::kCustomCall:
    case Opcode::kGetTupleElement:
    case Opcode::kInfeed:
    case Opcode::kOutfeed:
    case Opcode::kOptimizationBarrier:
    case Opcode::kParameter:
    case Opcode::kRecv:
    case Opcode::kRecvDone:
    case Opcode::kSend:
    case Opcode::kSendDone:
    case Opcode::kTuple:
    case Opcode::kWhile:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kFusion:
      return true;
    default:
      return false;
  }
}

// Ops that may carry called computations (XLA's HloInstruction::MightHaveCalledComputations).
bool MayCallComputations(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveReduce:
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kCustomCall:
    case Opcode::kFusion:
    case Opcode::kMap:
    case Opcode::kReduce:
    case Opcode::kReduceWindow:
    case Opcode::kScatter:
    case Opcode::kSelectAndScatter:
    case Opcode::kSort:
    case Opcode::kWhile:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kScan:
      return true;
    default:
      return false;
  }
}

// Ops whose shape comes from called computations, for wording the mismatch message.
bool ShapeComesFromCallee(Opcode op) {
  switch (op) {
    case Opcode::kCall:
    case Opcode::kConditional:
    case Opcode::kWhile:
    case Opcode::kFusion:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

class Verifier {
 public:
  Verifier(const Module& module, DiagnosticEngine& diags, const VerifierOptions& options)
      : module_(module), options_(options), reporter_(diags) {}

  bool Run();

 private:
  void Error(SourceLoc loc, std::string message) { reporter_.Error(loc, std::move(message)); }
  void InstError(const Instruction& inst, std::string_view message) { reporter_.InstError(inst, message); }

  void VerifyComputation(const Computation& comp);
  bool VerifyInstructionStructure(const Computation& comp, const Instruction& inst);
  void VerifyNoCycles(const Computation& comp);
  void VerifyCallGraphIsAcyclic();
  void VerifyInstructionShape(const Instruction& inst);
  void VerifyLayoutsOfPassThrough(const Instruction& inst);

  const Module& module_;
  const VerifierOptions& options_;
  Reporter reporter_;
  std::unordered_set<const Computation*> module_computations_;
  // Computations whose own structure is broken (no root, bad parameters); callers skip shape inference on them so
  // that one defect is reported once.
  std::unordered_set<const Computation*> broken_computations_;
  std::unordered_map<std::string, const Instruction*> instruction_names_;  // of the current computation
  // Instructions with structural defects (bad operands, foreign callees, ...); only their structure is checked.
  std::unordered_set<const Instruction*> bad_instructions_;
};

bool Verifier::Run() {
  for (const auto& comp : module_.computations()) module_computations_.insert(comp.get());
  const Computation* entry = module_.entry_computation();
  if (entry == nullptr) {
    Error({}, "module has no entry computation");
  } else if (!module_computations_.count(entry)) {
    Error({}, fmt::format("entry computation '{}' is not part of the module", entry->name()));
    entry = nullptr;
  } else if (entry->is_fusion_computation()) {
    Error(entry->loc(), fmt::format("entry computation '{}' cannot be a fusion computation", entry->name()));
  }

  // Structure first (for every computation), so shape checks can rely on callees having roots and parameters.
  std::set<std::string> computation_names;
  for (const auto& comp : module_.computations()) {
    if (!computation_names.insert(comp->name()).second) {
      Error(comp->loc(), fmt::format("computation name '{}' is used more than once", comp->name()));
    }
    VerifyComputation(*comp);
  }
  VerifyCallGraphIsAcyclic();
  for (const auto& comp : module_.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (bad_instructions_.count(inst.get())) continue;
      VerifyInstructionShape(*inst);
      VerifyInstructionInvariants(*inst, module_, options_, reporter_);
    }
  }
  if (entry != nullptr && !broken_computations_.count(entry)) VerifyModuleConfig(module_, options_, reporter_);
  return reporter_.ok();
}

void Verifier::VerifyComputation(const Computation& comp) {
  if (comp.parent() != &module_) {
    Error(comp.loc(), fmt::format("computation '{}' does not point back to its module", comp.name()));
  }
  bool broken = false;
  if (comp.root() == nullptr) {
    Error(comp.loc(), fmt::format("computation '{}' has no root instruction", comp.name()));
    broken = true;
  } else if (comp.root()->parent() != &comp) {
    Error(comp.loc(), fmt::format("root '{}' of computation '{}' is not one of its instructions", comp.root()->name(),
                                  comp.name()));
    broken = true;
  }

  // Parameters must be numbered 0..n-1, each exactly once.
  std::map<int64_t, const Instruction*> by_number;
  int64_t count = 0;
  for (const auto& inst : comp.instructions()) {
    if (inst->opcode() != Opcode::kParameter) continue;
    ++count;
    auto [it, inserted] = by_number.emplace(inst->parameter_number(), inst.get());
    if (!inserted) {
      Error(inst->loc(), fmt::format("parameter number {} of computation '{}' is used by both '{}' and '{}'",
                                     inst->parameter_number(), comp.name(), it->second->name(), inst->name()));
      broken = true;
    } else if (inst->parameter_number() < 0) {
      Error(inst->loc(), fmt::format("parameter '{}' has negative number {}", inst->name(), inst->parameter_number()));
      broken = true;
    }
  }
  for (int64_t i = 0; i < count && !broken; ++i) {
    if (!by_number.count(i)) {
      Error(comp.loc(), fmt::format("computation '{}' has {} parameters but none numbered {}", comp.name(), count, i));
      broken = true;
    }
  }
  if (!broken && comp.parameter_count() != count) {
    Error(comp.loc(), fmt::format("computation '{}' lists {} parameters but has {} parameter instructions", comp.name(),
                                  comp.parameter_count(), count));
    broken = true;
  }
  if (broken) broken_computations_.insert(&comp);

  bool instructions_ok = true;
  instruction_names_.clear();
  for (const auto& inst : comp.instructions()) {
    if (!VerifyInstructionStructure(comp, *inst)) instructions_ok = false;
  }
  // Cycle detection follows operand pointers, which is only safe once they are known to stay in this computation.
  if (instructions_ok) VerifyNoCycles(comp);
}

bool Verifier::VerifyInstructionStructure(const Computation& comp, const Instruction& inst) {
  bool ok = true;
  auto fail = [&](std::string message) {
    InstError(inst, std::move(message));
    ok = false;
  };
  if (inst.parent() != &comp) fail(fmt::format("does not point back to its computation '{}'", comp.name()));
  // XLA uniquifies names across the module when it loads text; we keep names as written, so only a clash within one
  // computation (which the text could not have expressed) is an error.
  bool inserted = instruction_names_.emplace(inst.name(), &inst).second;
  if (!inserted)
    InstError(inst, fmt::format("name is used by more than one instruction in computation '{}'", comp.name()));

  std::optional<int> arity = OpcodeArity(inst.opcode());
  // A sparse dot carries one metadata operand per sparsity descriptor.
  bool sparse_dot = inst.opcode() == Opcode::kDot && inst.FindAttr("sparsity") != nullptr;
  if (arity && !sparse_dot && inst.operand_count() != *arity) {
    fail(fmt::format("{} takes {} operand{} but has {}", OpcodeName(inst.opcode()), *arity, *arity == 1 ? "" : "s",
                     inst.operand_count()));
  }
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    const Instruction* operand = inst.operand(i);
    if (operand == nullptr) {
      fail(fmt::format("operand {} is null", i));
    } else if (operand->parent() != &comp) {
      fail(fmt::format("operand {} ('{}') belongs to computation '{}', not '{}'", i, operand->name(),
                       operand->parent() != nullptr ? operand->parent()->name() : "<none>", comp.name()));
    }
  }
  for (const Instruction* pred : inst.control_predecessors()) {
    if (pred == nullptr || pred->parent() != &comp) {
      fail(fmt::format("control predecessor '{}' is not in computation '{}'", pred ? pred->name() : "<null>",
                       comp.name()));
    }
  }
  for (const Instruction* succ : inst.control_successors()) {
    if (succ == nullptr || succ->parent() != &comp) {
      fail(fmt::format("control successor '{}' is not in computation '{}'", succ ? succ->name() : "<null>",
                       comp.name()));
    }
  }
  if (!inst.called_computations().empty() && !MayCallComputations(inst.opcode())) {
    fail(fmt::format("{} cannot call computations", OpcodeName(inst.opcode())));
  }
  for (const Computation* callee : inst.called_computations()) {
    if (callee == nullptr || !module_computations_.count(callee)) {
      fail(fmt::format("calls computation '{}', which is not in the module", callee ? callee->name() : "<null>"));
    } else if (callee == &comp) {
      fail(fmt::format("calls its own computation '{}'", comp.name()));
    }
  }
  if (std::optional<std::string> problem = ShapeProblem(inst.shape())) {
    fail(fmt::format("malformed shape {}: {}", StrWithLayout(inst.shape()), *problem));
  }
  if (!ok) bad_instructions_.insert(&inst);
  return ok;
}

void Verifier::VerifyNoCycles(const Computation& comp) {
  // Iterative three-colour DFS over operands and control predecessors, seeded in program order.
  enum : uint8_t { kUnvisited = 0, kActive = 1, kDone = 2 };
  std::unordered_map<const Instruction*, uint8_t> state;
  for (const auto& seed : comp.instructions()) {
    if (state[seed.get()] != kUnvisited) continue;
    std::vector<std::pair<const Instruction*, size_t>> stack = {{seed.get(), 0}};
    state[seed.get()] = kActive;
    while (!stack.empty()) {
      auto& [inst, next] = stack.back();
      const size_t num_operands = inst->operands().size();
      const size_t total = num_operands + inst->control_predecessors().size();
      if (next == total) {
        state[inst] = kDone;
        stack.pop_back();
        continue;
      }
      const Instruction* dep =
          next < num_operands ? inst->operand(next) : inst->control_predecessors()[next - num_operands];
      ++next;
      uint8_t& s = state[dep];
      if (s == kActive) {
        InstError(*dep,
                  fmt::format("is part of a cycle in computation '{}' (through '{}')", comp.name(), inst->name()));
        return;
      }
      if (s == kUnvisited) {
        s = kActive;
        stack.push_back({dep, 0});
      }
    }
  }
}

// HLO has no recursion: a computation may not (transitively) call itself.
void Verifier::VerifyCallGraphIsAcyclic() {
  enum : uint8_t { kUnvisited = 0, kActive = 1, kDone = 2 };
  std::unordered_map<const Computation*, uint8_t> state;
  for (const auto& seed : module_.computations()) {
    if (state[seed.get()] != kUnvisited) continue;
    // Frames walk (instruction, callee) positions of one computation.
    struct Frame {
      const Computation* comp;
      size_t inst = 0;
      size_t callee = 0;
    };
    std::vector<Frame> stack = {{seed.get()}};
    state[seed.get()] = kActive;
    while (!stack.empty()) {
      Frame& f = stack.back();
      const Computation* next = nullptr;
      const Instruction* caller = nullptr;
      while (f.inst < f.comp->instructions().size()) {
        const Instruction& inst = *f.comp->instructions()[f.inst];
        if (f.callee < inst.called_computations().size()) {
          next = inst.called_computations()[f.callee++];
          caller = &inst;
          break;
        }
        ++f.inst;
        f.callee = 0;
      }
      if (next == nullptr) {
        state[f.comp] = kDone;
        stack.pop_back();
        continue;
      }
      if (!module_computations_.count(next)) continue;  // reported by the structure checks
      uint8_t& s = state[next];
      if (s == kActive) {
        InstError(*caller,
                  fmt::format("calls computation '{}', which is already on the call stack (recursion)", next->name()));
        return;
      }
      if (s == kUnvisited) {
        s = kActive;
        stack.push_back({next});
      }
    }
  }
}

void Verifier::VerifyInstructionShape(const Instruction& inst) {
  if (ShapeProblem(inst.shape())) return;  // already reported
  for (const Computation* callee : inst.called_computations()) {
    if (broken_computations_.count(callee)) return;
  }
  absl::StatusOr<Shape> inferred = InferShape(inst);
  if (!inferred.ok()) {
    // Opcodes without an inference rule are not compared (the error is not the module's fault).
    if (inferred.status().code() == absl::StatusCode::kUnimplemented) return;
    InstError(inst, std::string(inferred.status().message()));
    return;
  }
  const bool exact = RequiresExactShape(inst.opcode());
  if (!ShapesCompatible(inst.shape(), *inferred, /*ignore_fp_precision=*/!exact)) {
    Error(inst.loc(),
          fmt::format("instruction '{}' has shape {} but its {} imply {}", inst.name(), Str(inst.shape()),
                      ShapeComesFromCallee(inst.opcode()) ? "called computations" : "operands", Str(*inferred)));
    return;
  }
  if (options_.check_layouts) VerifyLayoutsOfPassThrough(inst);
}

// With layouts assigned, ops that only forward buffers must keep the layouts of what they forward.
void Verifier::VerifyLayoutsOfPassThrough(const Instruction& inst) {
  const Shape* expected = nullptr;
  Shape tuple;
  switch (inst.opcode()) {
    case Opcode::kTuple: {
      std::vector<Shape> elements;
      for (const Instruction* operand : inst.operands()) elements.push_back(operand->shape());
      tuple = Shape::Tuple(std::move(elements));
      expected = &tuple;
      break;
    }
    case Opcode::kGetTupleElement: {
      int64_t index = inst.IntAttr("index");
      const Shape& operand = inst.operand(0)->shape();
      if (index >= 0 && index < static_cast<int64_t>(operand.tuple_shapes.size())) {
        expected = &operand.tuple_shapes[index];
      }
      break;
    }
    case Opcode::kCall:
    case Opcode::kFusion:
      expected = &inst.called_computation(0)->root()->shape();
      break;
    case Opcode::kWhile:
      expected = &inst.called_computation(1)->root()->shape();
      break;
    case Opcode::kConditional:
      for (const Computation* branch : inst.called_computations()) {
        if (!LayoutsMatch(inst.shape(), branch->root()->shape(), false)) {
          Error(inst.loc(),
                fmt::format("instruction '{}' has layout {} but branch '{}' returns {}", inst.name(),
                            StrWithLayout(inst.shape()), branch->name(), StrWithLayout(branch->root()->shape())));
          return;
        }
      }
      return;
    case Opcode::kOptimizationBarrier:
      expected = &inst.operand(0)->shape();
      break;
    default:
      return;
  }
  if (expected != nullptr && !LayoutsMatch(inst.shape(), *expected, false)) {
    Error(inst.loc(), fmt::format("instruction '{}' has layout {} but forwards {}", inst.name(),
                                  StrWithLayout(inst.shape()), StrWithLayout(*expected)));
  }
}

}  // namespace

bool VerifyModule(const Module& module, DiagnosticEngine& diags, const VerifierOptions& options) {
  return Verifier(module, diags, options).Run();
}

}  // namespace xlac
