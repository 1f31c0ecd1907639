#include "passes/spmd/dcn_attribution.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/strings/str_cat.h"
#include "ir/collective_groups.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/opcode.h"

namespace xlac {
namespace {

bool IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<DcnSplit> SplitCollectiveBytes(const Instruction& inst, int64_t num_replicas, int64_t num_partitions,
                                              int64_t slices) {
  const int64_t replicas = std::max<int64_t>(num_replicas, 1), partitions = std::max<int64_t>(num_partitions, 1);
  const int64_t devices = replicas * partitions;
  if (slices < 1 || devices % slices != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(devices, " devices cannot form ", slices, " DCN slices of equal size"));
  }
  const int64_t per_slice = devices / slices;
  auto slice = [&](int64_t d) { return d / per_slice; };
  DcnSplit split;
  split.name = inst.name();
  split.opcode = std::string(OpcodeName(inst.opcode()));
  for (const Instruction* operand : inst.operands()) {
    if (operand->shape().IsArray()) split.bytes_per_core += operand->shape().ByteSizeOf().value_or(0);
  }
  const double bytes = static_cast<double>(split.bytes_per_core);
  double dcn_fraction = 0;  // summed over the participating cores
  int64_t cores = 0;
  if (inst.opcode() == Opcode::kCollectivePermute || inst.opcode() == Opcode::kCollectivePermuteStart) {
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> pairs =
        ResolveSourceTargetPairs(inst, replicas, partitions);
    if (!pairs.ok()) return pairs.status();
    for (const auto& [source, target] : *pairs) {
      if (source == target) continue;
      dcn_fraction += slice(source) != slice(target) ? 1 : 0;
      ++cores;
    }
  } else {
    absl::StatusOr<std::vector<std::vector<int64_t>>> groups = ResolveDeviceGroups(inst, replicas, partitions);
    if (!groups.ok()) return groups.status();
    for (const std::vector<int64_t>& group : *groups) {
      const int64_t n = static_cast<int64_t>(group.size());
      if (n <= 1) continue;
      for (int64_t a : group) {
        int64_t elsewhere = 0;
        for (int64_t b : group) elsewhere += slice(a) != slice(b) ? 1 : 0;
        dcn_fraction += static_cast<double>(elsewhere) / static_cast<double>(n - 1);
        ++cores;
      }
    }
  }
  if (cores == 0) return split;  // nothing leaves any core
  split.dcn_bytes = bytes * dcn_fraction / static_cast<double>(cores);
  split.ici_bytes = bytes - split.dcn_bytes;
  return split;
}

absl::StatusOr<std::vector<DcnSplit>> SplitModuleCollectives(const Module& module, int64_t num_replicas,
                                                             int64_t num_partitions, int64_t slices,
                                                             const std::vector<std::string>& names) {
  std::set<std::string> wanted(names.begin(), names.end());
  std::vector<DcnSplit> splits;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (!IsCollective(inst->opcode())) continue;
      if (!wanted.empty() && !wanted.count(inst->name())) continue;
      absl::StatusOr<DcnSplit> split = SplitCollectiveBytes(*inst, num_replicas, num_partitions, slices);
      if (!split.ok()) return split.status();
      splits.push_back(*std::move(split));
    }
  }
  return splits;
}

std::string FormatDcnSplits(const std::vector<DcnSplit>& splits, int64_t devices, int64_t slices) {
  const int64_t per_slice = devices / std::max<int64_t>(slices, 1);
  std::string out = absl::StrCat("dcn: ", slices, " slices of ", per_slice, " devices (slice s: devices ", per_slice,
                                 "s to ", per_slice, "s+", per_slice - 1, "), bytes each core sends:\n");
  double ici = 0, dcn = 0;
  for (const DcnSplit& s : splits) {
    absl::StrAppend(&out, "  ", s.opcode, " %", s.name, ": ICI ", std::llround(s.ici_bytes), ", DCN ",
                    std::llround(s.dcn_bytes), "\n");
    ici += s.ici_bytes;
    dcn += s.dcn_bytes;
  }
  absl::StrAppend(&out, "  total: ICI ", std::llround(ici), ", DCN ", std::llround(dcn), " bytes per core per step\n");
  return out;
}

}  // namespace xlac
