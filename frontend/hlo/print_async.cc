// Async syntax sugar: when an async-start / -update / -done prints as `<op>-start(...)` etc.
//
// XLA (HloInstruction::PrintWithCanonicalNameMap and HloAsyncStartInstruction::PrintExtraAttributesImpl) uses the
// sugar whenever HloPrintOptions::syntax_sugar_async_ops is set and the wrapped computation is only parameters and
// a root (HloComputation::CanExpandIntoSingleInstruction), and then leaves the wrapped computation out of the module
// text. The sugar is re-parsed (HloParserImpl::CreateInstruction) into a computation whose parameters are the
// async-start's operands, in order, and whose root is the wrapped opcode with the attributes written on the
// async-start; nothing else of the original computation survives. So XLA's rule alone prints text that does not
// parse back (`parameter-start(...)`, whose opcode cannot take operands) or that parses back as something else
// (an async wrapping `all-reduce` prints `all-reduce-start`, which is an opcode of its own; a root that reorders
// its parameters loses the order). The sugar is used here only where XLA uses it AND the re-parsed module says
// the same thing; otherwise the explicit `async-start(...), calls=...` form is printed, which always parses back.
#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/hlo/print_internal.h"
#include "ir/computation.h"

namespace xlac::hlo_print {
namespace {

Shape WithLayout(Shape shape) {
  shape.EnsureLayout();
  return shape;
}

bool SameShape(const Shape& a, const Shape& b) { return WithLayout(a) == WithLayout(b); }

std::string_view AsyncThread(const Instruction& start) {
  const AttrValue* thread = start.FindAttr("async_execution_thread");
  if (thread == nullptr || thread->kind != AttrKind::kString) return "main";
  return thread->get<std::string>();
}

std::string_view AttrName(std::string_view attr) { return attr.substr(0, attr.find('=')); }

// The names of the whole-instruction attributes `start` prints next to the wrapped instruction's attributes.
std::vector<std::string> OwnAttributeNames(const Instruction& start, const HloPrintOptions& options) {
  std::vector<std::string> names;
  if (AsyncThread(start) != "main") names.emplace_back("async_execution_thread");
  const AttrValue* aliasing = start.FindAttr("output_to_operand_aliasing");
  if (aliasing != nullptr && aliasing->kind == AttrKind::kAliasing &&
      !aliasing->get<std::vector<OutputOperandAlias>>().empty()) {
    names.emplace_back("output_to_operand_aliasing");
  }
  if (start.sharding()) names.emplace_back("sharding");
  if (!start.frontend_attributes().empty()) names.emplace_back("frontend_attributes");
  if (options.print_control_dependencies && !start.control_predecessors().empty()) {
    names.emplace_back("control-predecessors");
  }
  for (const auto& [key, value] : start.extra_attributes()) names.push_back(key);
  return names;
}

// True if printing `start`'s chain with the sugar re-parses to an equivalent module: see the file comment.
bool SugarRoundTrips(const Instruction& start, const Computation& wrapped, const HloPrintOptions& options) {
  if (!CanExpandIntoSingleInstruction(wrapped)) return false;
  const Instruction& root = *wrapped.root();
  const Opcode op = root.opcode();
  // The parser cannot build these from `<op>-start(operands)`; an async op cannot wrap another (XLA checks it),
  // and refusing it also keeps printing non-recursive.
  if (IsAsyncOpcode(op) || op == Opcode::kParameter || op == Opcode::kConstant) return false;
  // `all-reduce-start`, `copy-done`, `send-done`, ... name opcodes of their own, which the parser prefers.
  const std::string name(OpcodeName(op));
  for (std::string_view suffix : {"-start", "-update", "-done"}) {
    if (ParseOpcode(name + std::string(suffix)).has_value()) return false;
  }
  // The re-parsed parameters are the async-start's operands, used by the root once each and in order.
  const int64_t n = start.operand_count();
  if (wrapped.parameter_count() != n || root.operand_count() != n) return false;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* param = wrapped.parameter(i);
    if (param == nullptr || root.operand(i) != param || start.operand(i) == nullptr ||
        !SameShape(param->shape(), start.operand(i)->shape())) {
      return false;
    }
  }
  const Shape& start_shape = start.shape();
  if (!start_shape.IsTuple() || start_shape.tuple_shapes.size() < 2 ||
      !SameShape(root.shape(), start_shape.tuple_shapes[1])) {
    return false;
  }
  if (wrapped.execution_thread() != AsyncThread(start)) return false;
  for (const auto& inst : wrapped.instructions()) {
    if (!inst->control_predecessors().empty() || !inst->control_successors().empty()) return false;
  }
  // Metadata and backend_config print once, from the async-start; the parser copies them to the wrapped op.
  if (!root.metadata().empty() && !(root.metadata() == start.metadata())) return false;
  if (!root.backend_config().empty() && (root.backend_config() != start.backend_config() ||
                                         root.backend_config_is_raw() != start.backend_config_is_raw())) {
    return false;
  }
  // Whole-instruction attributes kept verbatim (origin=, ...) only print for the async-start.
  for (const auto& [key, value] : root.extra_attributes()) {
    if (!IsPrintedWithExtraAttributes(key) || key == "parameter_replication") return false;
  }
  // The wrapped op's attributes and the async-start's own share one attribute list: a name in both would be a
  // duplicate attribute.
  std::vector<std::string> root_attrs;
  AppendExtraAttributes(root, options, root_attrs);
  const std::vector<std::string> own = OwnAttributeNames(start, options);
  // The sugar has one attribute list, and the parser gives an aliasing the wrapped opcode also takes to the
  // wrapped op: the async-start's own would change owner (and place) when re-parsed.
  if (OpcodePrintsAttribute(op, "output_to_operand_aliasing") &&
      std::find(own.begin(), own.end(), "output_to_operand_aliasing") != own.end()) {
    return false;
  }
  for (const std::string& attr : root_attrs) {
    for (const std::string& name : own) {
      if (AttrName(attr) == name) return false;
    }
  }
  return true;
}

}  // namespace

const Instruction* AsyncChainStart(const Instruction& inst) {
  const Instruction* cur = &inst;
  while ((cur->opcode() == Opcode::kAsyncUpdate || cur->opcode() == Opcode::kAsyncDone) && cur->operand_count() > 0 &&
         cur->operand(0) != nullptr && IsAsyncOpcode(cur->operand(0)->opcode())) {
    cur = cur->operand(0);
  }
  return cur;
}

bool StoresWrappedInline(const Instruction& inst) {
  return AsyncChainStart(inst)->async_wrapped_opcode().has_value() || inst.async_wrapped_opcode().has_value();
}

const Computation* AsyncWrappedComputation(const Instruction& inst) {
  if (!IsAsyncOpcode(inst.opcode()) || StoresWrappedInline(inst)) return nullptr;
  const Instruction* start = AsyncChainStart(inst);
  if (start->opcode() == Opcode::kAsyncStart && !start->called_computations().empty()) {
    return start->called_computation(0);
  }
  if (!inst.called_computations().empty()) return inst.called_computation(0);
  return nullptr;
}

bool CanExpandIntoSingleInstruction(const Computation& comp) {
  for (const auto& inst : comp.instructions()) {
    if (inst.get() != comp.root() && inst->opcode() != Opcode::kParameter) return false;
  }
  return comp.root() != nullptr;
}

std::optional<Opcode> AsyncWrappedOpcode(const Instruction& inst) {
  if (const Computation* wrapped = AsyncWrappedComputation(inst); wrapped != nullptr && wrapped->root()) {
    return wrapped->root()->opcode();
  }
  if (auto op = AsyncChainStart(inst)->async_wrapped_opcode()) return op;
  return inst.async_wrapped_opcode();
}

bool UsesAsyncSyntaxSugar(const Instruction& inst, const HloPrintOptions& options) {
  if (!IsAsyncOpcode(inst.opcode())) return false;
  // An inline wrapped instruction has no computation to print as `calls=`, so it always uses the sugar.
  if (StoresWrappedInline(inst)) return AsyncWrappedOpcode(inst).has_value();
  if (!options.syntax_sugar_async_ops) return false;
  // The whole chain prints one way, decided at its async-start.
  const Instruction* start = AsyncChainStart(inst);
  if (start->opcode() != Opcode::kAsyncStart || start->called_computations().empty()) return false;
  const Computation* wrapped = start->called_computation(0);
  return wrapped != nullptr && SugarRoundTrips(*start, *wrapped, options);
}

std::string AsyncSugarOpcodeName(const Instruction& inst) {
  std::string_view suffix = inst.opcode() == Opcode::kAsyncStart    ? "-start"
                            : inst.opcode() == Opcode::kAsyncUpdate ? "-update"
                                                                    : "-done";
  return std::string(OpcodeName(*AsyncWrappedOpcode(inst))) + std::string(suffix);
}

}  // namespace xlac::hlo_print
