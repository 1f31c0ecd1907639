// Shardings, op metadata, iota device lists and replica groups, following xla/hlo/ir/hlo_sharding.cc,
// tile_assignment.cc, collective_device_list.cc and hlo_op_metadata.cc.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "frontend/hlo/print_internal.h"
#include "frontend/hlo/printer.h"

namespace xlac {
namespace hlo_print {
namespace {

// XLA's CanonicalizeIotaDims: drops size-1 dimensions and merges runs of dimensions that the permutation keeps in
// major-to-minor order, until nothing changes. The merge indexes `dims` by permutation entries exactly as XLA does.
void CanonicalizeIotaDims(std::vector<int64_t>& dims, std::vector<int64_t>& perm) {
  if (dims.size() <= 1) return;
  while (true) {
    bool changed = false;
    std::vector<int64_t> old_to_new(dims.size());
    int64_t new_ndims = 0;
    for (size_t i = 0; i < dims.size(); ++i) old_to_new[i] = dims[i] == 1 ? -1 : new_ndims++;
    if (new_ndims != static_cast<int64_t>(dims.size())) {
      std::vector<int64_t> new_dims, new_perm;
      for (size_t i = 0; i < dims.size(); ++i) {
        if (old_to_new[i] >= 0) new_dims.push_back(dims[i]);
        int64_t mapped = old_to_new[perm[i]];
        if (mapped >= 0) new_perm.push_back(mapped);
      }
      dims = std::move(new_dims);
      perm = std::move(new_perm);
    }
    for (size_t i = 1, base = 0; i < dims.size(); ++i) {
      int64_t base_dim = perm[base];
      int64_t dim = perm[i];
      if (base_dim + static_cast<int64_t>(i - base) == dim) {
        dims[base_dim] *= dims[dim];
        dims[dim] = 1;
        changed = true;
      } else {
        base = i;
      }
    }
    if (!changed) break;
  }
}

std::string ShardGroupSuffix(const Sharding& sharding) {
  if (!sharding.shard_group_id) return "";
  return absl::StrCat(sharding.shard_group_is_shard_as ? " shard_as " : " shard_like ", *sharding.shard_group_id);
}

std::string MetadataSuffix(const Sharding& sharding, bool include_metadata) {
  if (!include_metadata || sharding.metadata.empty()) return "";
  std::string out = " metadata={";
  if (sharding.metadata.size() == 1) {
    out += OpMetadataToString(sharding.metadata.front());
  } else {
    for (size_t i = 0; i < sharding.metadata.size(); ++i) {
      if (i > 0) out += ", ";
      absl::StrAppend(&out, "{", OpMetadataToString(sharding.metadata[i]), "}");
    }
  }
  out += "}";
  return out;
}

const char* SubgroupTypeName(Sharding::SubgroupType type) {
  switch (type) {
    case Sharding::SubgroupType::kManual:
      return "manual";
    case Sharding::SubgroupType::kMaximal:
      return "maximal";
    case Sharding::SubgroupType::kReplicated:
      return "replicated";
    case Sharding::SubgroupType::kUnreduced:
      return "unreduced";
  }
  return "error_type.";
}

void AppendSharding(const Sharding& s, bool include_metadata, std::string& out) {
  if (s.kind == Sharding::Kind::kTuple) {
    if (s.tuple_elements.empty()) {
      out += "{}";
      return;
    }
    out += "{";
    for (size_t i = 0; i < s.tuple_elements.size(); ++i) {
      if (i > 0) out += i % 5 == 0 ? absl::StrCat(", /*index=", i, "*/") : ", ";
      AppendSharding(s.tuple_elements[i], include_metadata, out);
    }
    out += "}";
    return;
  }
  switch (s.kind) {
    case Sharding::Kind::kReplicated:
      out += "{replicated";
      break;
    case Sharding::Kind::kManual:
      out += "{manual";
      break;
    case Sharding::Kind::kUnknown:
      out += "{unknown";
      break;
    case Sharding::Kind::kUnreduced:
      out += "{unreduced";
      break;
    case Sharding::Kind::kMaximal:
      absl::StrAppend(&out, "{maximal device=", s.device);
      break;
    case Sharding::Kind::kTiled: {
      out += "{devices=";
      if (s.iota) {
        IotaList iota = *s.iota;
        if (iota.dims.empty()) iota.dims = s.tile_dims;
        out += IotaListToString(iota);
      } else {
        absl::StrAppend(&out, "[", absl::StrJoin(s.tile_dims, ","), "]", absl::StrJoin(s.device_ids, ","));
      }
      if (s.last_tile_dim_replicate) out += " last_tile_dim_replicate";
      if (!s.last_tile_dims.empty()) {
        out += " last_tile_dims={";
        for (size_t i = 0; i < s.last_tile_dims.size(); ++i) {
          if (i > 0) out += ", ";
          out += SubgroupTypeName(s.last_tile_dims[i]);
        }
        out += "}";
      }
      break;
    }
    case Sharding::Kind::kTuple:
      break;
  }
  out += ShardGroupSuffix(s);
  out += MetadataSuffix(s, include_metadata);
  out += "}";
}

}  // namespace

std::string IotaListToString(const IotaList& iota) {
  std::vector<int64_t> reshape = iota.reshape_dims;
  std::vector<int64_t> perm = iota.transpose_perm;
  if (perm.empty()) {
    perm.resize(reshape.size());
    std::iota(perm.begin(), perm.end(), 0);
  }
  // Only a true permutation can be canonicalized; anything else (rejected by the verifier) prints as stored.
  std::vector<int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  bool is_permutation = perm.size() == reshape.size();
  for (size_t i = 0; is_permutation && i < sorted.size(); ++i) is_permutation = sorted[i] == static_cast<int64_t>(i);
  if (!is_permutation) {
    std::string out = absl::StrCat("[", absl::StrJoin(iota.dims, ","), "]<=[", absl::StrJoin(iota.reshape_dims, ","),
                                   "]");
    if (!iota.transpose_perm.empty()) absl::StrAppend(&out, "T(", absl::StrJoin(iota.transpose_perm, ","), ")");
    return out;
  }
  CanonicalizeIotaDims(reshape, perm);
  if (reshape.empty()) {
    reshape = {1};
    perm = {0};
  }
  std::string out = absl::StrCat("[", absl::StrJoin(iota.dims, ","), "]<=[", absl::StrJoin(reshape, ","), "]");
  if (reshape.size() > 1) absl::StrAppend(&out, "T(", absl::StrJoin(perm, ","), ")");
  return out;
}

std::string ReplicaGroupsToString(const ReplicaGroups& groups) {
  if (groups.iota) return IotaListToString(*groups.iota);
  std::string out = "{";
  for (size_t i = 0; i < groups.groups.size(); ++i) {
    if (i > 0) out += ",";
    absl::StrAppend(&out, "{", absl::StrJoin(groups.groups[i], ","), "}");
  }
  out += "}";
  return out;
}

}  // namespace hlo_print

std::string ShardingToString(const Sharding& sharding, bool include_metadata) {
  std::string out;
  hlo_print::AppendSharding(sharding, include_metadata, out);
  return out;
}

// Field order follows xla::OpMetadataToString; fields XLA added after source_line (end line, columns,
// preserve_layout, stack frame) are placed where current XLA puts them.
std::string OpMetadataToString(const OpMetadata& m) {
  using hlo_print::CEscape;
  std::vector<std::string> parts;
  if (!m.op_type.empty()) parts.push_back(absl::StrCat("op_type=\"", CEscape(m.op_type), "\""));
  if (!m.op_name.empty()) parts.push_back(absl::StrCat("op_name=\"", CEscape(m.op_name), "\""));
  if (!m.source_file.empty()) parts.push_back(absl::StrCat("source_file=\"", CEscape(m.source_file), "\""));
  if (m.source_line != 0) parts.push_back(absl::StrCat("source_line=", m.source_line));
  if (m.source_end_line != 0) parts.push_back(absl::StrCat("source_end_line=", m.source_end_line));
  if (m.source_column != 0) parts.push_back(absl::StrCat("source_column=", m.source_column));
  if (m.source_end_column != 0) parts.push_back(absl::StrCat("source_end_column=", m.source_end_column));
  if (!m.profile_type.empty()) parts.push_back(absl::StrCat("profile_type={", absl::StrJoin(m.profile_type, ","), "}"));
  if (!m.deduplicated_name.empty()) {
    parts.push_back(absl::StrCat("deduplicated_name=\"", CEscape(m.deduplicated_name), "\""));
  }
  if (m.preserve_layout) parts.push_back("preserve_layout=true");
  // XLA does not escape scheduling_name.
  if (!m.scheduling_name.empty()) parts.push_back(absl::StrCat("scheduling_name=\"", m.scheduling_name, "\""));
  if (m.stack_frame_id != 0) parts.push_back(absl::StrCat("stack_frame_id=", m.stack_frame_id));
  return absl::StrJoin(parts, " ");
}

}  // namespace xlac
