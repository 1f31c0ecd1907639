// Per-core TPU HBM: buffer assignment's live ranges, sizes from TPU tiles. See tpu_memory.h for the model.
#include "passes/tpu_memory.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/computation.h"
#include "ir/tpu_layout.h"
#include "passes/alias_util.h"

namespace xlac {
namespace {

using Leaf = std::pair<const Instruction*, std::vector<int64_t>>;

// A buffer-assignment alias set with TPU sizes.
struct Set {
  const LiveValue* value = nullptr;
  int64_t start = 0;
  int64_t end = 0;
  int64_t padded = 0;
  int64_t unpadded = 0;
  // Where buffer assignment put it: (allocation, offset). Sets with one key live at once share bytes.
  std::pair<int64_t, int64_t> key;
  bool parameter = false;
  bool output = false;
  bool constant = false;
};

absl::StatusOr<std::vector<Set>> SizedSets(const Module& module, const BufferAssignment& assignment) {
  const Computation* entry = module.entry_computation();
  if (entry == nullptr) return absl::FailedPreconditionError("module has no entry computation");
  // The entry computation spans the whole schedule and ends with its root, then its virtual end.
  const std::vector<const Instruction*>& schedule = assignment.schedule();
  if (schedule.size() < 2 || schedule[schedule.size() - 2] != entry->root()) {
    return absl::FailedPreconditionError("the buffer assignment is not of this module");
  }
  const int64_t program_end = static_cast<int64_t>(schedule.size()) - 1;
  std::vector<Set> sets;
  sets.reserve(assignment.live_values().size());
  for (const LiveValue& value : assignment.live_values()) {
    Set& set = sets.emplace_back();
    set.value = &value;
    set.key = {value.slice.allocation, value.slice.offset};
    const auto& [inst, index] = value.leaves.front();
    const Shape& shape = *inst->shape().Subshape(index);
    std::optional<int64_t> padded = TpuPaddedByteSize(shape);
    std::optional<int64_t> unpadded = TpuUnpaddedByteSize(shape);
    if (!padded || !unpadded) {
      return absl::InvalidArgumentError(absl::StrCat("cannot size ", inst->name(), ShapeIndexToString(index), " (",
                                                     ShapeToString(shape), ") on a TPU: unbounded or too large"));
    }
    set.padded = *padded;
    set.unpadded = *unpadded;
    set.parameter = value.kind == AllocationKind::kParameter;
    set.constant = value.kind == AllocationKind::kConstant;
    for (const Leaf& leaf : value.leaves) set.output |= leaf.first == entry->root();
    // The caller owns the parameters for the whole call; constants are program data.
    set.start = set.parameter || set.constant ? 0 : value.start;
    set.end = set.parameter || set.constant ? program_end : value.end;
  }
  return sets;
}

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

std::string LeafLabel(const Leaf& leaf) {
  return leaf.second.empty() ? leaf.first->name() : absl::StrCat(leaf.first->name(), ShapeIndexToString(leaf.second));
}

// The instruction that writes a set's data, for the report: its entry parameter, else the first non-forwarding
// definition (not a while/conditional, whose buffer their bodies write).
const Leaf& Writer(const Set& set, const Computation* entry) {
  const Leaf* best = nullptr;
  for (const Leaf& leaf : set.value->leaves) {
    const Instruction* inst = leaf.first;
    if (set.parameter && inst->opcode() == Opcode::kParameter && inst->parent() == entry) return leaf;
    if (best != nullptr) continue;
    if (IsForwarding(*inst) || inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional ||
        inst->opcode() == Opcode::kParameter) {
      continue;
    }
    best = &leaf;
  }
  return best != nullptr ? *best : set.value->leaves.front();
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
  absl::StatusOr<std::vector<Set>> sized = SizedSets(module, assignment);
  if (!sized.ok()) return sized.status();
  const std::vector<Set>& sets = *sized;
  const std::vector<const Instruction*>& schedule = assignment.schedule();
  const int64_t positions = static_cast<int64_t>(schedule.size());

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
    if (schedule[p] != nullptr) {
      report.peak_at = schedule[p]->name();
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
    const auto& [writer, index] = Writer(*set, module.entry_computation());
    TpuLiveBuffer buffer;
    buffer.value = LeafLabel({writer, index});
    buffer.opcode = std::string(OpcodeName(writer->opcode()));
    buffer.op_name = writer->metadata().op_name;
    buffer.shape = ShapeToString(WithTpuLayouts(*writer->shape().Subshape(index)));
    buffer.padded_bytes = set->padded;
    buffer.unpadded_bytes = set->unpadded;
    if (set->parameter) {
      buffer.kind =
          absl::StrCat("parameter ", set->value->parameter_number, set->output ? " (donated to the output)" : "");
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
