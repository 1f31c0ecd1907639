// Buffer assignment, analysis half: the schedule, the alias sets, their live ranges and the checks that the
// module meets the preconditions. Packing and the dump are in buffer_assignment_layout.cc.
#include "passes/buffer_assignment.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <map>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "passes/alias_util.h"
#include "passes/buffer_assignment_internal.h"
#include "passes/verifier.h"

namespace xlac {

using buffer_assignment_internal::AliasSet;
using buffer_assignment_internal::Node;
using buffer_assignment_internal::State;

namespace {

std::string LeafName(const Instruction* inst, const ShapeIndex& index) {
  return absl::StrCat(inst->name(), ShapeIndexToString(index));
}

class Analysis {
 public:
  explicit Analysis(State& state) : s_(state) {}

  absl::Status Run() {
    XLAC_RETURN_IF_ERROR(CheckCallGraph());
    Linearize(s_.module->entry_computation());
    XLAC_RETURN_IF_ERROR(BuildNodes());
    UnionAliases();
    BuildSets();
    XLAC_RETURN_IF_ERROR(ClassifySets());
    XLAC_RETURN_IF_ERROR(CheckWriterOrder());
    ComputeRanges();
    return absl::OkStatus();
  }

 private:
  absl::Status CheckCallGraph();
  void Linearize(const Computation* comp);
  absl::Status BuildNodes();
  void UnionAliases();
  void BuildSets();
  absl::Status ClassifySets();
  absl::Status CheckWriterOrder();
  void ComputeRanges();

  int64_t NodeOf(const Instruction* inst, const ShapeIndex& index) const {
    auto it = first_node_.find(inst);
    assert(it != first_node_.end());
    for (int64_t n = it->second; n < static_cast<int64_t>(s_.nodes.size()) && s_.nodes[n].inst == inst; ++n) {
      if (s_.nodes[n].index == index) return n;
    }
    assert(false && "no such array leaf");
    return -1;
  }
  int64_t Find(int64_t n) {
    while (parent_[n] != n) n = parent_[n] = parent_[parent_[n]];
    return n;
  }
  void Union(int64_t a, int64_t b) {
    a = Find(a);
    b = Find(b);
    if (a != b) parent_[std::max(a, b)] = std::min(a, b);
  }
  // Where a leaf's data is defined: parameters at their segment's start.
  int64_t DefPosition(const Instruction* inst) const {
    if (inst->opcode() == Opcode::kParameter) return segment_.at(inst->parent()).first;
    return position_.at(inst);
  }
  bool IsWriter(const Instruction& inst) const {
    return !IsForwarding(inst) && inst.opcode() != Opcode::kParameter && inst.opcode() != Opcode::kConstant &&
           inst.opcode() != Opcode::kWhile && inst.opcode() != Opcode::kConditional;
  }

  State& s_;
  std::vector<const Computation*> sequential_;
  // Lookups only (never iterated into output).
  absl::flat_hash_map<const Instruction*, int64_t> position_;
  absl::flat_hash_map<const Computation*, std::pair<int64_t, int64_t>> segment_;  // virtual start, virtual end
  absl::flat_hash_map<const Instruction*, int64_t> first_node_;
  absl::flat_hash_set<const Computation*> conditions_;  // while conditions: their root is read by the loop
  std::vector<int64_t> parent_;
};

absl::Status Analysis::CheckCallGraph() {
  const Computation* entry = s_.module->entry_computation();
  if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");
  absl::flat_hash_map<const Computation*, const Instruction*> caller;
  std::vector<const Computation*> stack = {entry};
  while (!stack.empty()) {
    const Computation* comp = stack.back();
    stack.pop_back();
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCall) {
        return absl::FailedPreconditionError(
            absl::StrCat("call ", inst->name(), " in ", comp->name(), " is not inlined; run call-inliner first"));
      }
      if (inst->opcode() != Opcode::kWhile && inst->opcode() != Opcode::kConditional) continue;
      for (const Computation* callee : inst->called_computations()) {
        auto [it, inserted] = caller.emplace(callee, inst.get());
        if (!inserted) {
          return absl::FailedPreconditionError(absl::StrCat("computation ", callee->name(), " is called by both ",
                                                            it->second->name(), " and ", inst->name(),
                                                            "; run flatten-call-graph first"));
        }
        if (callee == entry) return absl::FailedPreconditionError("the entry computation is called by " + inst->name());
        stack.push_back(callee);
      }
    }
  }
  return absl::OkStatus();
}

// Positions: each sequential computation is a segment [virtual start, its post order..., virtual end]; a while's
// condition and body segments (a conditional's branches) come right before the while itself, so everything live
// across the while is live across them.
void Analysis::Linearize(const Computation* comp) {
  sequential_.push_back(comp);
  int64_t start = static_cast<int64_t>(s_.schedule.size());
  s_.schedule.push_back(nullptr);
  s_.schedule_comp.push_back(comp);
  s_.schedule_begin.push_back(true);
  for (const Instruction* inst : comp->MakePostOrder()) {
    if (inst->opcode() == Opcode::kWhile) conditions_.insert(inst->called_computation(0));
    if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional) {
      for (const Computation* callee : inst->called_computations()) Linearize(callee);
    }
    position_[inst] = static_cast<int64_t>(s_.schedule.size());
    s_.schedule.push_back(inst);
    s_.schedule_comp.push_back(comp);
    s_.schedule_begin.push_back(false);
  }
  segment_[comp] = {start, static_cast<int64_t>(s_.schedule.size())};
  s_.schedule.push_back(nullptr);
  s_.schedule_comp.push_back(comp);
  s_.schedule_begin.push_back(false);
}

absl::Status Analysis::BuildNodes() {
  for (const Instruction* inst : s_.schedule) {
    if (inst == nullptr) continue;
    const std::vector<ShapeIndex> leaves = ArrayLeafIndices(inst->shape());
    if (leaves.empty()) continue;
    first_node_[inst] = static_cast<int64_t>(s_.nodes.size());
    for (const ShapeIndex& index : leaves) {
      std::optional<int64_t> size = inst->shape().Subshape(index)->ByteSizeOf();
      if (!size) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot assign a buffer to ", LeafName(inst, index), ": its size is unbounded or overflows"));
      }
      s_.nodes.push_back({const_cast<Instruction*>(inst), index, *size, -1});
    }
  }
  parent_.resize(s_.nodes.size());
  for (size_t i = 0; i < parent_.size(); ++i) parent_[i] = static_cast<int64_t>(i);
  return absl::OkStatus();
}

void Analysis::UnionAliases() {
  for (const Instruction* inst : s_.schedule) {
    if (inst == nullptr) continue;
    switch (inst->opcode()) {
      case Opcode::kTuple:
        for (int64_t k = 0; k < inst->operand_count(); ++k) {
          for (const ShapeIndex& index : ArrayLeafIndices(inst->operand(k)->shape())) {
            ShapeIndex outer = {k};
            outer.insert(outer.end(), index.begin(), index.end());
            Union(NodeOf(inst, outer), NodeOf(inst->operand(k), index));
          }
        }
        break;
      case Opcode::kGetTupleElement:
        for (const ShapeIndex& index : ArrayLeafIndices(inst->shape())) {
          ShapeIndex outer = {inst->IntAttr("index")};
          outer.insert(outer.end(), index.begin(), index.end());
          Union(NodeOf(inst, index), NodeOf(inst->operand(0), outer));
        }
        break;
      case Opcode::kBitcast:
        if (IsForwarding(*inst)) Union(NodeOf(inst, {}), NodeOf(inst->operand(0), {}));
        break;
      case Opcode::kWhile: {
        const Computation* cond = inst->called_computation(0);
        const Computation* body = inst->called_computation(1);
        for (const ShapeIndex& index : ArrayLeafIndices(inst->shape())) {
          int64_t n = NodeOf(inst, index);
          Union(n, NodeOf(inst->operand(0), index));
          Union(n, NodeOf(cond->parameter(0), index));
          Union(n, NodeOf(body->parameter(0), index));
          Union(n, NodeOf(body->root(), index));
        }
        break;
      }
      case Opcode::kConditional:
        for (int64_t b = 0; b < static_cast<int64_t>(inst->called_computations().size()); ++b) {
          const Computation* branch = inst->called_computation(b);
          for (const ShapeIndex& index : ArrayLeafIndices(inst->shape())) {
            Union(NodeOf(inst, index), NodeOf(branch->root(), index));
          }
          if (branch->parameter_count() != 1) continue;
          for (const ShapeIndex& index : ArrayLeafIndices(branch->parameter(0)->shape())) {
            Union(NodeOf(branch->parameter(0), index), NodeOf(inst->operand(b + 1), index));
          }
        }
        break;
      default:
        break;
    }
  }
  const Computation* entry = s_.module->entry_computation();
  for (const InputOutputAlias& alias : s_.module->config().input_output_alias) {
    Union(NodeOf(entry->parameter(alias.parameter_number), alias.parameter_index),
          NodeOf(entry->root(), alias.output_index));
  }
}

void Analysis::BuildSets() {
  std::vector<int64_t> set_of_root(s_.nodes.size(), -1);
  for (int64_t n = 0; n < static_cast<int64_t>(s_.nodes.size()); ++n) {
    int64_t root = Find(n);
    if (set_of_root[root] < 0) {
      set_of_root[root] = static_cast<int64_t>(s_.sets.size());
      s_.sets.emplace_back();
    }
    s_.nodes[n].set = set_of_root[root];
    s_.sets[set_of_root[root]].nodes.push_back(n);
  }
}

absl::Status Analysis::ClassifySets() {
  const Computation* entry = s_.module->entry_computation();
  auto copy_error = [](const std::string& what) {
    return absl::FailedPreconditionError(absl::StrCat(what, "; run copy-insertion first"));
  };
  for (AliasSet& set : s_.sets) {
    const Node& first = s_.nodes[set.nodes.front()];
    set.size = first.size;
    // instruction -> the one leaf of it allowed in this set (for while, conditional and the entry root).
    std::map<int64_t, const Node*> aggregate_leaf;
    const Node* writer = nullptr;
    for (int64_t n : set.nodes) {
      const Node& node = s_.nodes[n];
      const Instruction* inst = node.inst;
      if (node.size != set.size) {
        return absl::InvalidArgumentError(absl::StrCat("aliased values ", LeafName(first.inst, first.index), " and ",
                                                       LeafName(inst, node.index), " have different byte sizes"));
      }
      if (inst->opcode() == Opcode::kParameter && inst->parent() == entry) {
        if (set.parameter_node >= 0) {
          const Node& other = s_.nodes[set.parameter_node];
          return copy_error(absl::StrCat("entry parameter leaves ", LeafName(other.inst, other.index), " and ",
                                         LeafName(inst, node.index), " would share a buffer"));
        }
        set.parameter_node = n;
      } else if (inst->opcode() == Opcode::kConstant) {
        if (set.constant != nullptr) {
          return copy_error(
              absl::StrCat("constants ", set.constant->name(), " and ", inst->name(), " would share a buffer"));
        }
        set.constant = inst;
      } else if (IsWriter(*inst) && writer == nullptr) {
        writer = &node;
      }
      if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional || inst == entry->root()) {
        auto [it, inserted] = aggregate_leaf.emplace(inst->unique_id(), &node);
        if (!inserted) {
          return copy_error(absl::StrCat(LeafName(inst, it->second->index), " and ", LeafName(inst, node.index),
                                         " would share a buffer"));
        }
      }
    }
    if (set.parameter_node >= 0 && set.constant != nullptr) {
      return copy_error(absl::StrCat("entry parameter ", s_.nodes[set.parameter_node].inst->name(), " and constant ",
                                     set.constant->name(), " would share a buffer"));
    }
    if (set.constant != nullptr && writer != nullptr) {
      return copy_error(
          absl::StrCat(LeafName(writer->inst, writer->index), " would overwrite constant ", set.constant->name()));
    }
    if (set.parameter_node >= 0 && writer != nullptr) {
      const Node& param = s_.nodes[set.parameter_node];
      bool donated = false;
      for (const InputOutputAlias& alias : s_.module->config().input_output_alias) {
        donated |= alias.parameter_number == param.inst->parameter_number() && alias.parameter_index == param.index;
      }
      if (!donated) {
        return copy_error(absl::StrCat(LeafName(writer->inst, writer->index), " would overwrite entry parameter ",
                                       LeafName(param.inst, param.index), ", which is not donated"));
      }
    }
    set.kind = set.parameter_node >= 0   ? AllocationKind::kParameter
               : set.constant != nullptr ? AllocationKind::kConstant
                                         : AllocationKind::kTemp;
  }
  return absl::OkStatus();
}

// Within one set, the data is defined by several instructions over time (an init and a loop body's root, a
// donated parameter and the result that replaces it...). Each writer must come after the last read of every value
// defined earlier in the set; reading and writing at the same position is allowed only for in-place-capable
// elementwise ops.
absl::Status Analysis::CheckWriterOrder() {
  for (const AliasSet& set : s_.sets) {
    struct Source {
      const Node* node;
      int64_t def;
      int64_t last_read;
    };
    std::vector<Source> sources;
    bool any_writer = false;
    for (int64_t n : set.nodes) {
      const Node& node = s_.nodes[n];
      const Instruction* inst = node.inst;
      if (IsForwarding(*inst) || inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional) continue;
      any_writer |= IsWriter(*inst);
      sources.push_back({&node, DefPosition(inst), DefPosition(inst)});
    }
    if (!any_writer || sources.size() < 2) continue;
    for (Source& source : sources) {
      LeafUses uses = UsesOf({source.node->inst, source.node->index});
      for (const Instruction* reader : uses.readers) {
        if (reader->opcode() != Opcode::kWhile) source.last_read = std::max(source.last_read, position_.at(reader));
      }
      const Computation* comp = source.node->inst->parent();
      bool root_is_read = comp == s_.module->entry_computation() || conditions_.contains(comp);
      if (!uses.root_indices.empty() && root_is_read) {
        source.last_read = std::max(source.last_read, segment_.at(comp).second);
      }
    }
    for (const Source& writer : sources) {
      const Instruction* w = writer.node->inst;
      if (!IsWriter(*w)) continue;
      for (const Source& earlier : sources) {
        if (&earlier == &writer || earlier.def >= writer.def || earlier.last_read < writer.def) continue;
        // Writing over data it reads itself: only as an array operand it reads at the index it writes.
        bool in_place = earlier.last_read == writer.def && (IsInPlaceCapable(*w) || w->opcode() == Opcode::kFusion);
        for (int64_t i = 0; i < w->operand_count(); ++i) {
          const Instruction* operand = w->operand(i);
          Leaf src = SourceOf(const_cast<Instruction*>(operand), {});
          if (src.inst == earlier.node->inst && src.index == earlier.node->index) {
            in_place &= SameArrayLayout(operand->shape(), w->shape()) && CanWriteOver(*w, i);
          } else if (!operand->shape().IsArray()) {
            in_place = false;  // a tuple operand may hold the data at a leaf
          }
        }
        if (!in_place) {
          return absl::FailedPreconditionError(absl::StrCat(
              LeafName(w, writer.node->index), " overwrites the buffer of ",
              LeafName(earlier.node->inst, earlier.node->index), " while it is still read (last read at ",
              s_.schedule[earlier.last_read] ? s_.schedule[earlier.last_read]->name() : "the end of the computation",
              "); run copy-insertion first"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// A set is live from its first definition to its last use. A use is any user reading the leaf (a
// get-tuple-element of another index does not), and the root of a computation is used at the segment's end.
void Analysis::ComputeRanges() {
  for (AliasSet& set : s_.sets) {
    set.start = std::numeric_limits<int64_t>::max();
    set.end = std::numeric_limits<int64_t>::min();
    for (int64_t n : set.nodes) {
      const Node& node = s_.nodes[n];
      int64_t def = DefPosition(node.inst);
      set.start = std::min(set.start, def);
      set.end = std::max(set.end, def);
      for (const Instruction* user : node.inst->users()) {
        if (user->opcode() == Opcode::kGetTupleElement &&
            (node.index.empty() || node.index[0] != user->IntAttr("index"))) {
          continue;
        }
        set.end = std::max(set.end, position_.at(user));
      }
      if (node.inst == node.inst->parent()->root())
        set.end = std::max(set.end, segment_.at(node.inst->parent()).second);
    }
  }
}

}  // namespace

const BufferSlice& BufferAssignment::GetSlice(const Instruction* inst, const std::vector<int64_t>& index) const {
  auto it = slices_.find({inst->unique_id(), index});
  assert(it != slices_.end() && "no slice: not an array leaf of an instruction in a sequential computation");
  return it->second;
}

bool BufferAssignment::HasSlice(const Instruction* inst, const std::vector<int64_t>& index) const {
  return slices_.contains({inst->unique_id(), index});
}

int64_t BufferAssignment::temp_bytes() const { return temp_allocation_ >= 0 ? allocations_[temp_allocation_].size : 0; }

std::string BufferAssignment::ToString() const { return dump_; }

absl::StatusOr<BufferAssignment> AssignBuffers(const Module& module, const BufferAssignmentOptions& options) {
  if (options.alignment <= 0 || (options.alignment & (options.alignment - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat("alignment must be a power of two, not ", options.alignment));
  }
  DiagnosticEngine diags;
  if (!VerifyModule(module, diags)) {
    std::string first = diags.diagnostics().empty() ? "" : diags.diagnostics().front().message;
    return absl::InvalidArgumentError(absl::StrCat("buffer assignment needs a module that verifies: ", first));
  }
  State state;
  state.module = &module;
  state.options = options;
  XLAC_RETURN_IF_ERROR(Analysis(state).Run());
  buffer_assignment_internal::LayOut(state);

  BufferAssignment result;
  result.dump_ = buffer_assignment_internal::Dump(state);
  result.allocations_ = std::move(state.allocations);
  result.temp_allocation_ = state.temp_allocation;
  result.peak_live_bytes_ = state.peak_live_bytes;
  for (const Node& node : state.nodes) {
    result.slices_[{node.inst->unique_id(), node.index}] = state.set_slices[node.set];
  }
  result.schedule_ = state.schedule;
  result.live_values_.reserve(state.sets.size());
  for (size_t i = 0; i < state.sets.size(); ++i) {
    const AliasSet& set = state.sets[i];
    LiveValue& value = result.live_values_.emplace_back();
    for (int64_t n : set.nodes) value.leaves.emplace_back(state.nodes[n].inst, state.nodes[n].index);
    value.kind = set.kind;
    if (set.parameter_node >= 0) value.parameter_number = state.nodes[set.parameter_node].inst->parameter_number();
    value.start = set.start;
    value.end = set.end;
    value.slice = state.set_slices[i];
  }
  // An output fusion's dot or convolution writes the fusion's own buffer and reads its operands' buffers
  // (codegen/ir_emitter_fusion.cc), so those fused instructions alias the slices: no bytes of their own. Only when
  // the dot's result has the fusion's shape and layout, and the fused computation has this one caller.
  for (const Node& node : state.nodes) {
    const Instruction* fusion = node.inst;
    if (fusion->opcode() != Opcode::kFusion || !node.index.empty() || fusion->StringAttr("kind") != "kOutput") continue;
    const Computation* fused = fusion->called_computation(0);
    const Instruction* gemm = nullptr;
    int64_t gemms = 0;
    for (const auto& inst : fused->instructions()) {
      if (inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) {
        gemm = inst.get();
        ++gemms;
      }
    }
    int64_t callers = 0;
    for (const auto& comp : module.computations()) {
      for (const auto& inst : comp->instructions()) {
        for (const Computation* callee : inst->called_computations()) callers += callee == fused ? 1 : 0;
      }
    }
    if (gemms != 1 || callers != 1 || !SameArrayLayout(gemm->shape(), fusion->shape())) continue;
    for (const Instruction* operand : gemm->operands()) {
      if (operand->opcode() != Opcode::kParameter) continue;
      const Instruction* outer = fusion->operand(operand->parameter_number());
      if (outer->shape().IsArray() && result.HasSlice(outer)) {
        result.slices_[{operand->unique_id(), {}}] = result.GetSlice(outer);
      }
    }
    result.slices_[{gemm->unique_id(), {}}] = result.GetSlice(fusion);
  }
  const Instruction* root = module.entry_computation()->root();
  for (const ShapeIndex& index : ArrayLeafIndices(root->shape())) {
    result.entry_result_slices_.push_back(result.GetSlice(root, index));
  }
  return result;
}

}  // namespace xlac
