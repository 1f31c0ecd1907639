// Per-core TPU HBM: liveness as buffer assignment computes it (re-derived here because the assignment exposes
// slices, not ranges), sizes from TPU tiles. See tpu_memory.h for the model.
#include "passes/tpu_memory.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/computation.h"
#include "ir/tpu_layout.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

struct Node {
  const Instruction* inst = nullptr;
  ShapeIndex index;
  int64_t set = -1;
};

struct Set {
  std::vector<int64_t> nodes;
  int64_t start = std::numeric_limits<int64_t>::max();
  int64_t end = std::numeric_limits<int64_t>::min();
  int64_t padded = 0;
  int64_t unpadded = 0;
  // Where buffer assignment put it: (allocation, offset). Sets with one key live at once share bytes.
  std::pair<int64_t, int64_t> key;
  bool parameter = false;
  bool output = false;
  bool constant = false;
  int64_t parameter_number = -1;
};

class Liveness {
 public:
  Liveness(const Module& module, const BufferAssignment& assignment) : module_(module), assignment_(assignment) {}

  absl::Status Run() {
    const Computation* entry = module_.entry_computation();
    if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");
    Linearize(entry);
    for (const Instruction* inst : schedule_) {
      if (inst == nullptr) continue;
      for (const ShapeIndex& index : ArrayLeafIndices(inst->shape())) {
        if (!assignment_.HasSlice(inst, index)) {
          return absl::FailedPreconditionError(absl::StrCat("no buffer for ", inst->name(), ShapeIndexToString(index),
                                                            ": the assignment is not of this module"));
        }
        if (!first_node_.contains(inst)) first_node_[inst] = static_cast<int64_t>(nodes_.size());
        nodes_.push_back({inst, index, -1});
      }
    }
    parent_.resize(nodes_.size());
    for (size_t i = 0; i < parent_.size(); ++i) parent_[i] = static_cast<int64_t>(i);
    UnionAliases();
    BuildSets();
    return Sizes();
  }

  const std::vector<Set>& sets() const { return sets_; }
  const std::vector<Node>& nodes() const { return nodes_; }
  int64_t positions() const { return static_cast<int64_t>(schedule_.size()); }
  const Instruction* at(int64_t position) const { return schedule_[position]; }

 private:
  void Linearize(const Computation* comp) {
    const int64_t start = static_cast<int64_t>(schedule_.size());
    schedule_.push_back(nullptr);
    for (const Instruction* inst : comp->MakePostOrder()) {
      if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional) {
        for (const Computation* callee : inst->called_computations()) Linearize(callee);
      }
      position_[inst] = static_cast<int64_t>(schedule_.size());
      schedule_.push_back(inst);
    }
    segment_[comp] = {start, static_cast<int64_t>(schedule_.size())};
    schedule_.push_back(nullptr);
  }

  int64_t NodeOf(const Instruction* inst, const ShapeIndex& index) const {
    auto it = first_node_.find(inst);
    assert(it != first_node_.end());
    for (int64_t n = it->second; n < static_cast<int64_t>(nodes_.size()) && nodes_[n].inst == inst; ++n) {
      if (nodes_[n].index == index) return n;
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

  // The same aliasing as buffer assignment (passes/buffer_assignment.cc, UnionAliases).
  void UnionAliases() {
    for (const Instruction* inst : schedule_) {
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
    const Computation* entry = module_.entry_computation();
    for (const InputOutputAlias& alias : module_.config().input_output_alias) {
      Union(NodeOf(entry->parameter(alias.parameter_number), alias.parameter_index),
            NodeOf(entry->root(), alias.output_index));
    }
  }

  void BuildSets() {
    std::vector<int64_t> set_of_root(nodes_.size(), -1);
    for (int64_t n = 0; n < static_cast<int64_t>(nodes_.size()); ++n) {
      int64_t root = Find(n);
      if (set_of_root[root] < 0) {
        set_of_root[root] = static_cast<int64_t>(sets_.size());
        sets_.emplace_back();
      }
      nodes_[n].set = set_of_root[root];
      sets_[set_of_root[root]].nodes.push_back(n);
    }
  }

  int64_t DefPosition(const Instruction* inst) const {
    if (inst->opcode() == Opcode::kParameter) return segment_.at(inst->parent()).first;
    return position_.at(inst);
  }

  absl::Status Sizes() {
    const Computation* entry = module_.entry_computation();
    const int64_t program_end = segment_.at(entry).second;
    for (Set& set : sets_) {
      const Node& first = nodes_[set.nodes.front()];
      const BufferSlice& slice = assignment_.GetSlice(first.inst, first.index);
      set.key = {slice.allocation, slice.offset};
      const Shape& shape = *first.inst->shape().Subshape(first.index);
      std::optional<int64_t> padded = TpuPaddedByteSize(shape);
      std::optional<int64_t> unpadded = TpuUnpaddedByteSize(shape);
      if (!padded || !unpadded) {
        return absl::InvalidArgumentError(absl::StrCat("cannot size ", first.inst->name(),
                                                       ShapeIndexToString(first.index), " (", ShapeToString(shape),
                                                       ") on a TPU: unbounded or too large"));
      }
      set.padded = *padded;
      set.unpadded = *unpadded;
      for (int64_t n : set.nodes) {
        const Node& node = nodes_[n];
        const Instruction* inst = node.inst;
        int64_t def = DefPosition(inst);
        set.start = std::min(set.start, def);
        set.end = std::max(set.end, def);
        for (const Instruction* user : inst->users()) {
          if (user->opcode() == Opcode::kGetTupleElement &&
              (node.index.empty() || node.index[0] != user->IntAttr("index"))) {
            continue;
          }
          auto it = position_.find(user);
          if (it != position_.end()) set.end = std::max(set.end, it->second);
        }
        if (inst == inst->parent()->root()) {
          set.end = std::max(set.end, segment_.at(inst->parent()).second);
          if (inst->parent() == entry) set.output = true;
        }
        if (inst->opcode() == Opcode::kParameter && inst->parent() == entry) {
          set.parameter = true;
          set.parameter_number = inst->parameter_number();
        }
        if (inst->opcode() == Opcode::kConstant) set.constant = true;
      }
      // The caller owns the parameters for the whole call; constants are program data.
      if (set.parameter || set.constant) {
        set.start = 0;
        set.end = program_end;
      }
    }
    return absl::OkStatus();
  }

  const Module& module_;
  const BufferAssignment& assignment_;
  std::vector<const Instruction*> schedule_;
  absl::flat_hash_map<const Instruction*, int64_t> position_;
  absl::flat_hash_map<const Computation*, std::pair<int64_t, int64_t>> segment_;
  absl::flat_hash_map<const Instruction*, int64_t> first_node_;
  std::vector<Node> nodes_;
  std::vector<int64_t> parent_;
  std::vector<Set> sets_;
};

// Live bytes at every position: each set over its range, minus what sets sharing one buffer-assignment slice
// double count where their ranges touch (an in-place write at the position where the overwritten value dies).
std::vector<int64_t> LiveBytes(const std::vector<Set>& sets, int64_t positions, bool padded) {
  std::vector<int64_t> diff(positions + 1, 0);
  auto add = [&](int64_t from, int64_t to, int64_t bytes) {
    diff[from] += bytes;
    diff[to + 1] -= bytes;
  };
  std::map<std::pair<int64_t, int64_t>, std::vector<const Set*>> by_key;
  for (const Set& set : sets) {
    int64_t bytes = padded ? set.padded : set.unpadded;
    if (bytes == 0) continue;
    add(set.start, set.end, bytes);
    by_key[set.key].push_back(&set);
  }
  for (auto& [key, group] : by_key) {
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end(), [](const Set* a, const Set* b) { return a->start < b->start; });
    for (size_t i = 1; i < group.size(); ++i) {
      const Set* a = group[i - 1];
      const Set* b = group[i];
      if (a->end < b->start) continue;
      int64_t shared = std::min(padded ? a->padded : a->unpadded, padded ? b->padded : b->unpadded);
      add(b->start, std::min(a->end, b->end), -shared);
    }
  }
  std::vector<int64_t> live(positions, 0);
  int64_t running = 0;
  for (int64_t p = 0; p < positions; ++p) {
    running += diff[p];
    live[p] = running;
  }
  return live;
}

std::string LeafLabel(const Node& node) {
  return node.index.empty() ? node.inst->name() : absl::StrCat(node.inst->name(), ShapeIndexToString(node.index));
}

// The instruction that writes a set's data, for the report: its entry parameter, else the first non-forwarding
// definition (not a while/conditional, whose buffer their bodies write).
const Node& Writer(const Set& set, const std::vector<Node>& nodes, const Computation* entry) {
  const Node* best = nullptr;
  for (int64_t n : set.nodes) {
    const Node& node = nodes[n];
    const Instruction* inst = node.inst;
    if (set.parameter && inst->opcode() == Opcode::kParameter && inst->parent() == entry) return node;
    if (best != nullptr) continue;
    if (IsForwarding(*inst) || inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional ||
        inst->opcode() == Opcode::kParameter) {
      continue;
    }
    best = &node;
  }
  return best != nullptr ? *best : nodes[set.nodes.front()];
}

std::string Trim(double value) {
  std::string text = absl::StrFormat("%.1f", value);
  if (text.size() > 2 && text.substr(text.size() - 2) == ".0") text.resize(text.size() - 2);
  return text;
}

}  // namespace

std::string FormatBytes(int64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (int64_t{1} << 30)) return Trim(b / (1 << 30)) + " GiB";
  if (bytes >= (int64_t{1} << 20)) return Trim(b / (1 << 20)) + " MiB";
  if (bytes >= (int64_t{1} << 10)) return Trim(b / (1 << 10)) + " KiB";
  return absl::StrCat(bytes, " B");
}

absl::StatusOr<TpuMemoryReport> AnalyzeTpuMemory(const Module& module, const BufferAssignment& assignment,
                                                 const TpuChipSpec& chip) {
  Liveness liveness(module, assignment);
  absl::Status status = liveness.Run();
  if (!status.ok()) return status;
  const std::vector<Set>& sets = liveness.sets();
  const int64_t positions = liveness.positions();

  TpuMemoryReport report;
  report.chip = chip.name;
  report.hbm_bytes = chip.hbm_bytes / chip.devices_per_chip;
  std::vector<int64_t> padded = LiveBytes(sets, positions, /*padded=*/true);
  std::vector<int64_t> unpadded = LiveBytes(sets, positions, /*padded=*/false);
  int64_t peak = 0;
  for (int64_t p = 0; p < positions; ++p) {
    if (padded[p] > padded[peak]) peak = p;
  }
  report.peak_padded_bytes = positions > 0 ? padded[peak] : 0;
  report.peak_unpadded_bytes = positions > 0 ? *std::max_element(unpadded.begin(), unpadded.end()) : 0;
  // The instruction at or after the peak's position (a virtual segment boundary names the next instruction).
  for (int64_t p = peak; p < positions; ++p) {
    if (liveness.at(p) != nullptr) {
      report.peak_at = liveness.at(p)->name();
      break;
    }
  }

  // Buffers live at the peak, one per buffer-assignment slice.
  std::map<std::pair<int64_t, int64_t>, const Set*> at_peak;
  for (const Set& set : sets) {
    if (set.padded == 0 || set.start > peak || set.end < peak) continue;
    auto [it, inserted] = at_peak.emplace(set.key, &set);
    if (!inserted && set.padded > it->second->padded) it->second = &set;
  }
  for (const auto& [key, set] : at_peak) {
    const Node& writer = Writer(*set, liveness.nodes(), module.entry_computation());
    TpuLiveBuffer buffer;
    buffer.value = LeafLabel(writer);
    buffer.opcode = std::string(OpcodeName(writer.inst->opcode()));
    buffer.op_name = writer.inst->metadata().op_name;
    buffer.shape = ShapeToString(WithTpuLayouts(*writer.inst->shape().Subshape(writer.index)));
    buffer.padded_bytes = set->padded;
    buffer.unpadded_bytes = set->unpadded;
    if (set->parameter) {
      buffer.kind = absl::StrCat("parameter ", set->parameter_number, set->output ? " (donated to the output)" : "");
      report.parameter_bytes += set->padded;
    } else if (set->constant) {
      buffer.kind = "constant";
      report.temp_bytes += set->padded;
    } else if (set->output) {
      buffer.kind = "output";
      report.output_bytes += set->padded;
    } else {
      buffer.kind = "temp";
      report.temp_bytes += set->padded;
    }
    report.live_at_peak.push_back(std::move(buffer));
  }
  std::sort(report.live_at_peak.begin(), report.live_at_peak.end(), [](const TpuLiveBuffer& a, const TpuLiveBuffer& b) {
    return std::make_tuple(-a.padded_bytes, a.value) < std::make_tuple(-b.padded_bytes, b.value);
  });
  return report;
}

namespace {

void AppendBuffers(std::string& out, const TpuMemoryReport& report, int64_t top) {
  int64_t shown = std::min<int64_t>(top, static_cast<int64_t>(report.live_at_peak.size()));
  for (int64_t i = 0; i < shown; ++i) {
    const TpuLiveBuffer& b = report.live_at_peak[i];
    int64_t extra = b.padded_bytes - b.unpadded_bytes;
    double expansion = b.unpadded_bytes > 0 ? static_cast<double>(b.padded_bytes) / b.unpadded_bytes : 1.0;
    absl::StrAppend(&out, "  ", i + 1, ". Size: ", FormatBytes(b.padded_bytes), "\n");
    absl::StrAppend(&out, "     Shape: ", b.shape, "\n");
    absl::StrAppend(&out, "     Unpadded size: ", FormatBytes(b.unpadded_bytes), "\n");
    absl::StrAppend(&out, "     Extra memory due to padding: ", FormatBytes(extra),
                    absl::StrFormat(" (%.1fx expansion)", expansion), "\n");
    absl::StrAppend(&out, "     Allocation type: ", b.kind, "\n");
    absl::StrAppend(&out, "     Instruction: ", b.value, " (", b.opcode, ")",
                    b.op_name.empty() ? "" : absl::StrCat(" op_name=\"", b.op_name, "\""), "\n");
  }
  if (shown < static_cast<int64_t>(report.live_at_peak.size())) {
    absl::StrAppend(&out, "  ... and ", report.live_at_peak.size() - shown, " smaller buffers\n");
  }
}

}  // namespace

std::string TpuMemoryReport::OverLimitMessage(int64_t top) const {
  std::string out =
      absl::StrCat("needs ", FormatBytes(peak_padded_bytes), " of HBM per core, ", chip, " has ",
                   FormatBytes(hbm_bytes), " (", FormatBytes(peak_unpadded_bytes),
                   " without TPU tile padding; peak at ", peak_at, ": parameters ", FormatBytes(parameter_bytes),
                   ", outputs ", FormatBytes(output_bytes), ", temps ", FormatBytes(temp_bytes), ")\n");
  absl::StrAppend(&out, "Largest live buffers at the peak:\n");
  AppendBuffers(out, *this, top);
  return out;
}

std::string TpuMemoryReport::Summary(int64_t top) const {
  std::string out = absl::StrCat("HBM per core: ", FormatBytes(peak_padded_bytes), " padded (", peak_padded_bytes,
                                 " bytes), ", FormatBytes(peak_unpadded_bytes), " unpadded (", peak_unpadded_bytes,
                                 " bytes), of ", FormatBytes(hbm_bytes), " on ", chip, "\n");
  absl::StrAppend(&out, "Peak at ", peak_at, ": parameters ", FormatBytes(parameter_bytes), ", outputs ",
                  FormatBytes(output_bytes), ", temps ", FormatBytes(temp_bytes), "\n");
  absl::StrAppend(&out, "Largest live buffers at the peak:\n");
  AppendBuffers(out, *this, top);
  return out;
}

absl::Status CheckTpuMemory(const TpuMemoryReport& report) {
  if (report.fits()) return absl::OkStatus();
  return absl::ResourceExhaustedError(report.OverLimitMessage());
}

}  // namespace xlac
