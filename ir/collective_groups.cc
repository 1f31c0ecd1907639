#include "ir/collective_groups.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "fmt/format.h"

namespace xlac {
namespace {

template <typename... Args>
absl::Status GroupError(const Instruction& inst, fmt::format_string<Args...> format, Args&&... args) {
  return absl::InvalidArgumentError(fmt::format("{} ({}): {}", inst.name(), OpcodeName(inst.opcode()),
                                                fmt::format(format, std::forward<Args>(args)...)));
}

int64_t MaxId(const std::vector<std::vector<int64_t>>& lists) {
  int64_t max_id = -1;
  for (const auto& l : lists) {
    for (int64_t id : l) max_id = std::max(max_id, id);
  }
  return max_id;
}

std::vector<std::vector<int64_t>> PairsOf(const Instruction& inst) {
  const AttrValue* v = inst.FindAttr("source_target_pairs");
  if (v == nullptr || v->kind != AttrKind::kIntListList) return {};
  return v->get<std::vector<std::vector<int64_t>>>();
}

// The group of ids (in the mode's id space) containing `my_id`, or empty when it is in none. Overlapping groups are
// undefined in XLA; the last one wins here and ResolveDeviceGroups rejects them.
std::vector<int64_t> GroupContaining(const std::vector<std::vector<int64_t>>& groups, int64_t my_id) {
  std::vector<int64_t> group;
  for (const auto& g : groups) {
    if (std::find(g.begin(), g.end(), my_id) != g.end()) group = g;
  }
  return group;
}

struct Resolved {
  CollectiveGroupMode mode;
  std::vector<std::vector<int64_t>> groups;  // explicit groups, range-checked
  int64_t id_limit;
};

absl::StatusOr<Resolved> Resolve(const Instruction& inst, int64_t R, int64_t P) {
  Resolved r;
  r.groups = ReplicaGroupsOf(inst);
  r.mode = CollectiveGroupModeOf(inst, R, P, MaxId(r.groups));
  switch (r.mode) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      r.id_limit = R;
      break;
    case CollectiveGroupMode::kCrossPartition:
      r.id_limit = P;
      break;
    case CollectiveGroupMode::kFlattenedId:
      r.id_limit = R * P;
      break;
  }
  if (r.mode == CollectiveGroupMode::kCrossReplica && R == 1) {
    // Replica ids of a single replica: only 0 means anything (see CollectiveGroupModeOf).
    for (auto& g : r.groups) g.erase(std::remove_if(g.begin(), g.end(), [](int64_t id) { return id > 0; }), g.end());
    r.groups.erase(std::remove_if(r.groups.begin(), r.groups.end(), [](const auto& g) { return g.empty(); }),
                   r.groups.end());
  }
  for (const auto& g : r.groups) {
    for (int64_t id : g) {
      if (id < 0 || id >= r.id_limit) {
        return GroupError(inst, "replica group id {} is out of range for {} replicas x {} partitions", id, R, P);
      }
    }
  }
  return r;
}

// The participants of `device_id` given a resolved mode; empty when its id is in no group.
std::vector<int64_t> DevicesFor(const Resolved& r, int64_t R, int64_t P, int64_t device_id) {
  int64_t replica = device_id / P, partition = device_id % P;
  int64_t my_id = 0;
  switch (r.mode) {
    case CollectiveGroupMode::kCrossReplica:
    case CollectiveGroupMode::kCrossReplicaAndPartition:
      my_id = replica;
      break;
    case CollectiveGroupMode::kCrossPartition:
      my_id = partition;
      break;
    case CollectiveGroupMode::kFlattenedId:
      my_id = device_id;
      break;
  }
  std::vector<int64_t> group;
  if (r.groups.empty()) {
    for (int64_t i = 0; i < r.id_limit; ++i) group.push_back(i);
  } else {
    group = GroupContaining(r.groups, my_id);
  }
  std::vector<int64_t> devices;
  for (int64_t id : group) {
    switch (r.mode) {
      case CollectiveGroupMode::kCrossReplica:
        devices.push_back(id * P + partition);
        break;
      case CollectiveGroupMode::kCrossPartition:
        devices.push_back(replica * P + id);
        break;
      case CollectiveGroupMode::kCrossReplicaAndPartition:
        for (int64_t p = 0; p < P; ++p) devices.push_back(id * P + p);
        break;
      case CollectiveGroupMode::kFlattenedId:
        devices.push_back(id);
        break;
    }
  }
  return devices;
}

}  // namespace

CollectiveGroupMode StrictCollectiveGroupMode(const Instruction& inst) {
  bool channel = inst.FindAttr("channel_id") != nullptr;
  switch (inst.opcode()) {
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kReduceScatter:
      if (!channel) return CollectiveGroupMode::kCrossReplica;
      return inst.BoolAttr("use_global_device_ids", false) ? CollectiveGroupMode::kFlattenedId
                                                           : CollectiveGroupMode::kCrossReplicaAndPartition;
    default:
      return channel ? CollectiveGroupMode::kCrossPartition : CollectiveGroupMode::kCrossReplica;
  }
}

CollectiveGroupMode CollectiveGroupModeOf(const Instruction& inst, int64_t num_replicas, int64_t num_partitions,
                                          int64_t max_id) {
  CollectiveGroupMode mode = StrictCollectiveGroupMode(inst);
  // Without a channel and with one replica, larger ids are read as partitions, but only when the groups name every
  // partition (the single-axis exporters' habit); otherwise they are replica ids as XLA reads them, where only 0
  // exists (XLA checks no group against a single replica).
  if (mode == CollectiveGroupMode::kCrossReplica && max_id >= num_replicas && num_replicas == 1) {
    const std::vector<std::vector<int64_t>> groups = ReplicaGroupsOf(inst);
    std::vector<bool> named(static_cast<size_t>(num_partitions), false);
    int64_t count = 0;
    for (const auto& g : groups) {
      for (int64_t id : g) {
        if (id >= 0 && id < num_partitions && !named[static_cast<size_t>(id)]) {
          named[static_cast<size_t>(id)] = true;
          ++count;
        }
      }
    }
    if (groups.empty() || count == num_partitions) return CollectiveGroupMode::kCrossPartition;
  }
  if (mode == CollectiveGroupMode::kCrossPartition && max_id >= num_partitions && num_partitions == 1) {
    return CollectiveGroupMode::kCrossReplica;
  }
  // With one replica the strict mode's only valid group is {0} (every partition); tt-xla's manual computations
  // write device ids there (channel_handle without use_global_device_ids), so read larger ids as device ids.
  if (mode == CollectiveGroupMode::kCrossReplicaAndPartition && max_id >= num_replicas && num_replicas == 1) {
    return CollectiveGroupMode::kFlattenedId;
  }
  return mode;
}

std::vector<std::vector<int64_t>> ReplicaGroupsOf(const Instruction& inst) {
  const AttrValue* v = inst.FindAttr("replica_groups");
  if (v == nullptr || v->kind != AttrKind::kReplicaGroups) return {};
  return v->get<ReplicaGroups>().Expanded();
}

absl::StatusOr<std::vector<int64_t>> ParticipatingDevices(const Instruction& inst, int64_t num_replicas,
                                                          int64_t num_partitions, int64_t device_id) {
  absl::StatusOr<Resolved> r = Resolve(inst, num_replicas, num_partitions);
  if (!r.ok()) return r.status();
  std::vector<int64_t> devices = DevicesFor(*r, num_replicas, num_partitions, device_id);
  if (devices.empty() && !r->groups.empty()) {
    int64_t my_id = r->mode == CollectiveGroupMode::kCrossPartition ? device_id % num_partitions
                    : r->mode == CollectiveGroupMode::kFlattenedId  ? device_id
                                                                    : device_id / num_partitions;
    return GroupError(inst, "id {} of device {} is in no replica group", my_id, device_id);
  }
  return devices;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> ResolveDeviceGroups(const Instruction& inst, int64_t num_replicas,
                                                                      int64_t num_partitions) {
  absl::StatusOr<Resolved> r = Resolve(inst, num_replicas, num_partitions);
  if (!r.ok()) return r.status();
  int64_t num_devices = num_replicas * num_partitions;
  std::vector<int64_t> group_of(static_cast<size_t>(num_devices), -1);
  std::vector<std::vector<int64_t>> groups;
  for (int64_t d = 0; d < num_devices; ++d) {
    std::vector<int64_t> devices = DevicesFor(*r, num_replicas, num_partitions, d);
    if (devices.empty()) continue;
    int64_t existing = group_of[static_cast<size_t>(d)];
    if (existing >= 0) {
      // Disjoint groups give every member the same participant list; anything else would deadlock at run time.
      if (groups[static_cast<size_t>(existing)] != devices) {
        return GroupError(inst, "device {} is in two different participant groups", d);
      }
      continue;
    }
    for (int64_t m : devices) {
      if (group_of[static_cast<size_t>(m)] >= 0 || std::count(devices.begin(), devices.end(), m) != 1) {
        return GroupError(inst, "device {} is in two different participant groups", m);
      }
      group_of[static_cast<size_t>(m)] = static_cast<int64_t>(groups.size());
    }
    groups.push_back(std::move(devices));
  }
  return groups;
}

std::vector<int64_t> PairDomain(const Instruction& inst, int64_t num_replicas, int64_t num_partitions,
                                int64_t device_id, int64_t max_id) {
  int64_t replica = device_id / num_partitions, partition = device_id % num_partitions;
  std::vector<int64_t> devices;
  if (CollectiveGroupModeOf(inst, num_replicas, num_partitions, max_id) == CollectiveGroupMode::kCrossPartition) {
    for (int64_t p = 0; p < num_partitions; ++p) devices.push_back(replica * num_partitions + p);
  } else {
    for (int64_t r = 0; r < num_replicas; ++r) devices.push_back(r * num_partitions + partition);
  }
  return devices;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ResolveSourceTargetPairs(const Instruction& inst,
                                                                                  int64_t num_replicas,
                                                                                  int64_t num_partitions) {
  std::vector<std::vector<int64_t>> pairs = PairsOf(inst);
  int64_t max_id = MaxId(pairs);
  std::vector<std::pair<int64_t, int64_t>> resolved;
  std::vector<bool> done(static_cast<size_t>(num_replicas * num_partitions), false);
  for (int64_t d = 0; d < num_replicas * num_partitions; ++d) {
    if (done[static_cast<size_t>(d)]) continue;
    std::vector<int64_t> domain = PairDomain(inst, num_replicas, num_partitions, d, max_id);
    for (int64_t m : domain) done[static_cast<size_t>(m)] = true;
    int64_t size = static_cast<int64_t>(domain.size());
    for (const auto& pair : pairs) {
      if (pair.size() != 2 || pair[0] < 0 || pair[1] < 0 || pair[0] >= size || pair[1] >= size) {
        return GroupError(inst, "source_target_pair out of range for {} participants", size);
      }
      resolved.emplace_back(domain[static_cast<size_t>(pair[0])], domain[static_cast<size_t>(pair[1])]);
    }
  }
  return resolved;
}

}  // namespace xlac
