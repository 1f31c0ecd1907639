// Module, computation and instruction printing (xla/hlo/ir/hlo_module.cc, hlo_computation.cc and
// HloInstruction::PrintWithCanonicalNameMap in hlo_instruction.cc), including XLA's instruction post order and
// computation post order, which fix the canonical print order.
#include "frontend/hlo/printer.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/hlo/print_internal.h"

namespace xlac {
namespace {

using hlo_print::NameRef;
using hlo_print::PrintableName;
using hlo_print::PrintShape;

bool HasChannelDependencies(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kRaggedAllToAll:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

// XLA's HloComputation::ForEachInstructionPostOrder: a DFS from every instruction without users (in program
// order) that visits control predecessors first, then operands first-to-last, then (except at the DFS root)
// earlier collectives with the same channel id.
std::vector<const Instruction*> InstructionPostOrder(const Computation& comp) {
  const auto& instructions = comp.instructions();
  absl::flat_hash_map<const Instruction*, size_t> index;
  for (size_t i = 0; i < instructions.size(); ++i) index[instructions[i].get()] = i;

  absl::flat_hash_map<const Instruction*, std::vector<const Instruction*>> channel_deps;
  absl::flat_hash_map<int64_t, std::vector<const Instruction*>> channel_groups;
  for (const auto& inst : instructions) {
    if (!HasChannelDependencies(inst->opcode())) continue;
    const AttrValue* channel = inst->FindAttr("channel_id");
    if (channel == nullptr || channel->kind != AttrKind::kInt) continue;
    auto& group = channel_groups[channel->get<int64_t>()];
    channel_deps[inst.get()] = group;
    group.push_back(inst.get());
  }

  enum State : uint8_t { kNew, kVisiting, kVisited };
  std::vector<State> state(instructions.size(), kNew);
  std::vector<const Instruction*> order;
  order.reserve(instructions.size());
  std::vector<const Instruction*> stack;
  auto push = [&](const Instruction* inst) {
    auto it = index.find(inst);
    if (it != index.end() && state[it->second] != kVisited) stack.push_back(inst);
  };
  auto dfs = [&](const Instruction* root) {
    stack.clear();
    push(root);
    while (!stack.empty()) {
      const Instruction* current = stack.back();
      size_t i = index.at(current);
      if (state[i] == kNew) {
        state[i] = kVisiting;
      } else {
        stack.pop_back();
        if (state[i] != kVisited) {
          state[i] = kVisited;
          order.push_back(current);
        }
        continue;
      }
      if (current != root) {
        if (auto it = channel_deps.find(current); it != channel_deps.end()) {
          for (const Instruction* dep : it->second) push(dep);
        }
      }
      const auto& operands = current->operands();
      for (auto it = operands.rbegin(); it != operands.rend(); ++it) push(*it);
      for (const Instruction* pred : current->control_predecessors()) push(pred);
    }
  };
  for (const auto& inst : instructions) {
    bool has_users = std::any_of(inst->users().begin(), inst->users().end(),
                                 [](const Instruction* user) { return user->parent() != nullptr; });
    if (!has_users) dfs(inst.get());
  }
  // Only reachable for malformed graphs (e.g. cycles through users); keep every instruction printable.
  for (const auto& inst : instructions) {
    if (state[index.at(inst.get())] != kVisited) order.push_back(inst.get());
  }
  return order;
}

// Called computations in the order XLA stores them, which fixes the computation print order. It matches the IR's
// order except for while, whose body XLA keeps before its condition.
std::vector<Computation*> XlaCalledComputationOrder(const Instruction& inst) {
  std::vector<Computation*> called = inst.called_computations();
  if (inst.opcode() == Opcode::kWhile && called.size() == 2) std::swap(called[0], called[1]);
  return called;
}

// Computations called by fusions: XLA's schedule (and hence program-order printing) excludes them.
absl::flat_hash_set<const Computation*> FusionComputations(const Module& module) {
  absl::flat_hash_set<const Computation*> out;
  for (const auto& comp : module.computations()) {
    if (comp->is_fusion_computation()) out.insert(comp.get());
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kFusion) continue;
      for (const Computation* callee : inst->called_computations()) out.insert(callee);
    }
  }
  return out;
}

// The order a computation's instructions print in: program order for the scheduled computations of a scheduled
// module, XLA's post order otherwise.
class PrintOrder {
 public:
  explicit PrintOrder(const Module* module) {
    if (module != nullptr && module->config().is_scheduled) {
      scheduled_ = true;
      fusions_ = FusionComputations(*module);
    }
  }
  std::vector<const Instruction*> operator()(const Computation& comp) const {
    if (scheduled_ && !fusions_.contains(&comp)) {
      std::vector<const Instruction*> order;
      for (const auto& inst : comp.instructions()) order.push_back(inst.get());
      return order;
    }
    return InstructionPostOrder(comp);
  }

 private:
  bool scheduled_ = false;
  absl::flat_hash_set<const Computation*> fusions_;
};

// XLA's HloComputation::MakeEmbeddedComputationsList: computations reachable from `comp`'s instructions, callees
// before callers, each instruction's callees visited first to last. Two deliberate differences:
//  - Instructions are visited in print order, not in the order they were created. XLA's text is printed in post
//    order, so for text XLA printed the two agree; visiting in creation order would make the computation order
//    depend on how the text was written, and printing the parse of printed text would not reproduce it.
//  - A callee is expanded when the depth-first walk reaches it. XLA marks callees visited when it stacks them, so
//    a computation called both by an instruction and by a sibling callee of it (a condition shared by a while
//    and a nested while of its body) is emitted after that sibling, its caller, and the text does not parse
//    back. Where XLA's order is callee-before-caller the two orders are the same.
std::vector<const Computation*> EmbeddedComputations(const Computation& comp, const PrintOrder& print_order) {
  absl::flat_hash_set<const Computation*> visited;
  std::vector<const Computation*> post_order;
  struct Frame {
    const Computation* comp;
    std::vector<const Instruction*> instructions;
    size_t next_instruction = 0;
    std::vector<Computation*> callees;  // of the instruction before next_instruction
    size_t next_callee = 0;
  };
  std::vector<Frame> stack;
  stack.push_back(Frame{&comp, print_order(comp), 0, {}, 0});
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next_callee < top.callees.size()) {
      const Computation* callee = top.callees[top.next_callee++];
      if (callee != nullptr && visited.insert(callee).second) {
        stack.push_back(Frame{callee, print_order(*callee), 0, {}, 0});  // invalidates `top`
      }
      continue;
    }
    if (top.next_instruction < top.instructions.size()) {
      top.callees = XlaCalledComputationOrder(*top.instructions[top.next_instruction++]);
      top.next_callee = 0;
      continue;
    }
    if (stack.size() > 1) post_order.push_back(top.comp);  // `comp` itself is not embedded in itself
    stack.pop_back();
  }
  return post_order;
}

// XLA's HloModule::MakeComputationPostOrder over the computations in module order.
std::vector<const Computation*> ComputationPostOrder(const Module& module, const PrintOrder& print_order) {
  absl::flat_hash_set<const Computation*> called;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      for (const Computation* c : inst->called_computations()) called.insert(c);
    }
  }
  absl::flat_hash_set<const Computation*> added;
  std::vector<const Computation*> order;
  for (const auto& comp : module.computations()) {
    if (called.contains(comp.get())) continue;
    for (const Computation* embedded : EmbeddedComputations(*comp, print_order)) {
      if (added.insert(embedded).second) order.push_back(embedded);
    }
    if (added.insert(comp.get()).second) order.push_back(comp.get());
  }
  // Computations only reachable through call cycles (invalid, but printable).
  for (const auto& comp : module.computations()) {
    if (added.insert(comp.get()).second) order.push_back(comp.get());
  }
  return order;
}

// Wrapped computations of async ops printed with the syntax sugar, which XLA leaves out of the module text. One
// that something else also refers to (another caller, or being the entry) is printed all the same: the sugared
// async op then no longer refers to it, and every other reference still resolves.
absl::flat_hash_set<const Computation*> SugaredAsyncComputations(const Module& module, const HloPrintOptions& options) {
  absl::flat_hash_set<const Computation*> sugared;
  absl::flat_hash_set<const Computation*> needed;
  if (module.entry_computation() != nullptr) needed.insert(module.entry_computation());
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      const Computation* wrapped = hlo_print::AsyncWrappedComputation(*inst);
      const bool sugar = wrapped != nullptr && hlo_print::UsesAsyncSyntaxSugar(*inst, options);
      if (sugar) sugared.insert(wrapped);
      for (const Computation* callee : inst->called_computations()) {
        if (!(sugar && callee == wrapped)) needed.insert(callee);
      }
    }
  }
  absl::flat_hash_set<const Computation*> out;
  for (const Computation* comp : sugared) {
    if (!needed.contains(comp)) out.insert(comp);
  }
  return out;
}

std::string OperandsText(const Instruction& inst, const HloPrintOptions& options) {
  if (inst.opcode() == Opcode::kParameter) return std::to_string(inst.parameter_number());
  if (inst.opcode() == Opcode::kConstant) {
    if (!inst.has_literal() || inst.literal().is_unknown()) return "{...}";
    const Shape& shape = inst.shape();
    bool small = shape.IsArray() && shape.ElementCount().value_or(INT64_MAX) <= 10;
    if (small || options.print_large_constants) return hlo_print::LiteralText(inst.literal(), /*print_shape=*/false);
    return "{...}";
  }
  std::string out;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (i > 0) {
      int64_t interval = options.operand_index_annotation_interval;
      out += interval != 0 && i % interval == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
    }
    const Instruction* operand = inst.operand(i);
    if (operand == nullptr) {
      out += "null ";
      continue;
    }
    if (options.print_operand_shape) {
      out += PrintShape(operand->shape(), options.print_layout);
      out += " ";
    }
    out += NameRef(operand->name(), options);
  }
  return out;
}

const std::string* FindExtra(const StringMap& map, std::string_view name) {
  for (const auto& [key, value] : map) {
    if (key == name) return &value;
  }
  return nullptr;
}

// Shape layouts of a ComputationLayout: "(p0, p1, /*index=5*/p5)->result".
std::string ComputationLayoutToString(const std::vector<Shape>& parameters, const Shape& result) {
  std::string out = "(";
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (i > 0) out += i % 5 == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
    out += PrintShape(parameters[i], /*print_layout=*/true);
  }
  return out + ")->" + PrintShape(result, /*print_layout=*/true);
}

// XLA's HloModule::PrintStackFrameIndex.
std::string StackFrameIndexText(const StackFrameIndex& index) {
  std::string out = "\n\nFileNames\n";
  for (size_t i = 0; i < index.file_names.size(); ++i) {
    absl::StrAppend(&out, i + 1, " \"", hlo_print::CEscape(index.file_names[i]), "\"\n");
  }
  out += "\nFunctionNames\n";
  for (size_t i = 0; i < index.function_names.size(); ++i) {
    absl::StrAppend(&out, i + 1, " \"", hlo_print::CEscape(index.function_names[i]), "\"\n");
  }
  out += "\nFileLocations\n";
  for (size_t i = 0; i < index.file_locations.size(); ++i) {
    const StackFrameIndex::FileLocation& l = index.file_locations[i];
    absl::StrAppend(&out, i + 1, " {file_name_id=", l.file_name_id, " function_name_id=", l.function_name_id,
                    " line=", l.line, " end_line=", l.end_line, " column=", l.column, " end_column=", l.end_column,
                    "}\n");
  }
  out += "\nStackFrames\n";
  for (size_t i = 0; i < index.stack_frames.size(); ++i) {
    const StackFrameIndex::StackFrame& f = index.stack_frames[i];
    absl::StrAppend(&out, i + 1, " {file_location_id=", f.file_location_id, " parent_frame_id=", f.parent_frame_id,
                    "}\n");
  }
  return out;
}

std::string ModuleHeader(const Module& module, const HloPrintOptions& options) {
  const ModuleConfig& config = module.config();
  std::string out = "HloModule " + PrintableName(module.name(), /*after_percent=*/false);
  if (config.is_scheduled) out += ", is_scheduled=true";
  if (!config.input_output_alias.empty()) {
    // XLA keeps aliases in a ShapeTree over the output, so they print in output-index order.
    std::vector<InputOutputAlias> aliases = config.input_output_alias;
    std::sort(aliases.begin(), aliases.end(),
              [](const InputOutputAlias& a, const InputOutputAlias& b) { return a.output_index < b.output_index; });
    std::vector<std::string> parts;
    for (const InputOutputAlias& a : aliases) {
      parts.push_back(absl::StrCat(ShapeIndexToString(a.output_index), ": (", a.parameter_number, ", ",
                                   ShapeIndexToString(a.parameter_index), ", ",
                                   a.must_alias ? "must-alias" : "may-alias", ")"));
    }
    absl::StrAppend(&out, ", input_output_alias={ ", absl::StrJoin(parts, ", "), " }");
  }
  if (!config.buffer_donor.empty()) {
    std::vector<BufferDonor> donors = config.buffer_donor;
    std::sort(donors.begin(), donors.end(), [](const BufferDonor& a, const BufferDonor& b) {
      return std::tie(a.parameter_number, a.parameter_index) < std::tie(b.parameter_number, b.parameter_index);
    });
    donors.erase(std::unique(donors.begin(), donors.end()), donors.end());
    std::vector<std::string> parts;
    for (const BufferDonor& d : donors) {
      parts.push_back(absl::StrCat("(", d.parameter_number, ", ", ShapeIndexToString(d.parameter_index), ")"));
    }
    absl::StrAppend(&out, ", buffer_donor={ ", absl::StrJoin(parts, ", "), " }");
  }
  if (const std::string* passthrough = FindExtra(config.extra_attributes, "alias_passthrough_params")) {
    if (*passthrough == "true") out += ", alias_passthrough_params=true";
  }
  if (config.entry_computation_layout) {
    absl::StrAppend(
        &out, ", entry_computation_layout={",
        ComputationLayoutToString(config.entry_computation_layout->parameters, config.entry_computation_layout->result),
        "}");
  } else if (const Computation* entry = module.entry_computation(); entry != nullptr && entry->root() != nullptr) {
    std::vector<Shape> parameters;
    for (const Instruction* p : entry->parameters()) {
      if (p != nullptr) parameters.push_back(p->shape());  // numbering holes only occur in invalid modules
    }
    absl::StrAppend(&out, ", entry_computation_layout={", ComputationLayoutToString(parameters, entry->root()->shape()),
                    "}");
  }
  auto bools = [](const std::vector<bool>& v) {
    std::vector<std::string> parts;
    for (bool b : v) parts.push_back(b ? "true" : "false");
    return absl::StrJoin(parts, ",");
  };
  // XLA's default is {false}; an empty vector here means "not set".
  const auto& to_params = config.allow_spmd_sharding_propagation_to_parameters;
  if (!to_params.empty() && (to_params.size() != 1 || to_params.back())) {
    absl::StrAppend(&out, ", allow_spmd_sharding_propagation_to_parameters={", bools(to_params), "}");
  }
  const auto& to_output = config.allow_spmd_sharding_propagation_to_output;
  if (!to_output.empty() && (to_output.size() != 1 || to_output.back())) {
    absl::StrAppend(&out, ", allow_spmd_sharding_propagation_to_output={", bools(to_output), "}");
  }
  if (config.replica_count != 1) absl::StrAppend(&out, ", replica_count=", config.replica_count);
  if (config.num_partitions != 1) absl::StrAppend(&out, ", num_partitions=", config.num_partitions);
  if (!config.frontend_attributes.empty()) {
    absl::StrAppend(&out, ", frontend_attributes=", hlo_print::FrontendAttributesToString(config.frontend_attributes));
  }
  // XLA prints the recovery table on lines of its own, closed by a newline.
  if (const std::string* table = FindExtra(config.extra_attributes, "origin_recovery_table")) {
    absl::StrAppend(&out, ", origin_recovery_table=", *table, "\n");
  }
  for (const auto& [key, value] : config.extra_attributes) {
    if (key != "alias_passthrough_params" && key != "origin_recovery_table") {
      absl::StrAppend(&out, ", ", key, "=", value);
    }
  }
  if (options.print_metadata && config.stack_frame_index && !config.stack_frame_index->file_names.empty()) {
    out += StackFrameIndexText(*config.stack_frame_index);
  }
  return out;
}

std::string ComputationText(const Computation& comp, const HloPrintOptions& options, const PrintOrder& print_order) {
  std::string out = NameRef(comp.name(), options);
  out += " ";
  if (options.print_computation_signature) {
    std::vector<std::string> params;
    for (int64_t i = 0; i < comp.parameter_count(); ++i) {
      const Instruction* p = comp.parameter(i);
      if (p == nullptr) continue;
      params.push_back(
          absl::StrCat(PrintableName(p->name(), /*after_percent=*/true), ": ", PrintShape(p->shape(), false)));
    }
    std::string result = comp.root() != nullptr ? PrintShape(comp.root()->shape(), /*print_layout=*/false) : "()";
    absl::StrAppend(&out, "(", absl::StrJoin(params, ", "), ") -> ", result, " ");
  }
  out += "{\n";
  for (const Instruction* inst : print_order(comp)) {
    out += "  ";
    if (inst == comp.root()) out += "ROOT ";
    out += PrintInstruction(*inst, options);
    out += "\n";
  }
  out += "}";
  if (comp.execution_thread() != "main") absl::StrAppend(&out, ", execution_thread=\"", comp.execution_thread(), "\"");
  return out;
}

}  // namespace

std::string PrintInstruction(const Instruction& inst, const HloPrintOptions& options) {
  std::string out = NameRef(inst.name(), options);
  out += " = ";
  out += PrintShape(inst.shape(), options.print_layout);
  out += " ";
  if (hlo_print::UsesAsyncSyntaxSugar(inst, options)) {
    out += hlo_print::AsyncSugarOpcodeName(inst);
  } else {
    out += OpcodeName(inst.opcode());
  }
  absl::StrAppend(&out, "(", OperandsText(inst, options), ")");

  std::vector<std::string> attrs;
  hlo_print::AppendExtraAttributes(inst, options, attrs);
  for (const std::string& attr : attrs) absl::StrAppend(&out, ", ", attr);

  // XLA prints the original value right after the extra attributes; other whole-instruction attributes the IR
  // keeps verbatim follow it.
  for (const auto& [key, value] : inst.extra_attributes()) {
    if (key == "origin" || key == "original_value") absl::StrAppend(&out, ", ", key, "=", value);
  }
  for (const auto& [key, value] : inst.extra_attributes()) {
    if (key != "origin" && key != "original_value" && !hlo_print::IsPrintedWithExtraAttributes(key)) {
      absl::StrAppend(&out, ", ", key, "=", value);
    }
  }
  const OpMetadata& m = inst.metadata();
  if (options.print_metadata && (!m.op_type.empty() || !m.op_name.empty() || !m.source_file.empty() ||
                                 !m.scheduling_name.empty() || m.stack_frame_id != 0)) {
    absl::StrAppend(&out, ", metadata={", OpMetadataToString(m), "}");
  }
  if (options.print_backend_config && !inst.backend_config().empty()) {
    const std::string& config = inst.backend_config();
    // XLA prints configs that lex as a JSON dict unquoted, everything else as an escaped string.
    if (hlo_print::LexesAsJsonDict(config)) {
      absl::StrAppend(&out, ", backend_config=", config);
    } else {
      absl::StrAppend(&out, ", backend_config=\"", hlo_print::CEscape(config), "\"");
    }
  }
  return out;
}

std::string PrintComputation(const Computation& computation, const HloPrintOptions& options) {
  return ComputationText(computation, options, PrintOrder(computation.parent()));
}

std::string PrintModule(const Module& module, const HloPrintOptions& options) {
  std::string out = ModuleHeader(module, options);
  out += "\n\n";
  absl::flat_hash_set<const Computation*> sugared = SugaredAsyncComputations(module, options);
  const PrintOrder print_order(&module);
  for (const Computation* comp : ComputationPostOrder(module, print_order)) {
    if (sugared.contains(comp)) continue;
    if (comp == module.entry_computation()) out += "ENTRY ";
    out += ComputationText(*comp, options, print_order);
    out += "\n\n";
  }
  return out;
}

}  // namespace xlac
