// Which devices take part in a collective, resolved from its replica_groups / source_target_pairs, channel_id and
// use_global_device_ids. Shared by the reference interpreter (which resolves per device at run time) and codegen
// (which resolves every group at compile time and passes global device ids to the runtime, so the runtime never
// needs to know the group mode).
//
// Devices are numbered replica * num_partitions + partition. The mode follows XLA's GetCollectiveOpGroupMode:
// without channel_id, replica_groups hold replica ids (within the device's partition); with channel_id,
// all-reduce/all-gather/reduce-scatter use replica ids across all partitions (use_global_device_ids=false) or
// flattened device ids (true), and the other collectives use partition ids. One leniency: when the ids name devices
// beyond an axis of size 1 while the other axis has several devices, they are read on that other axis (test programs
// often leave the axis implicit; tt-xla's all-reduce/all-gather/reduce-scatter with a channel but without
// use_global_device_ids name devices 0..P-1 where XLA would allow only replica 0). Participant lists are ordered as
// XLA's GetParticipatingDevices orders them; that order fixes all-gather concatenation, reduce-scatter chunks and
// all-reduce accumulation.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace xlac {

enum class CollectiveGroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };

// XLA's GetCollectiveOpGroupMode.
CollectiveGroupMode StrictCollectiveGroupMode(const Instruction& inst);
// The strict mode with the leniency above; `max_id` is the largest id the groups or pairs mention (-1 if none).
CollectiveGroupMode CollectiveGroupModeOf(const Instruction& inst, int64_t num_replicas, int64_t num_partitions,
                                          int64_t max_id);
// The explicit replica_groups (iota form expanded); empty when absent or `{}`.
std::vector<std::vector<int64_t>> ReplicaGroupsOf(const Instruction& inst);

// The global device ids taking part with `device_id`, in XLA's order (`device_id` among them). Fails when an id is
// out of range or when the device's id is in no replica group.
absl::StatusOr<std::vector<int64_t>> ParticipatingDevices(const Instruction& inst, int64_t num_replicas,
                                                          int64_t num_partitions, int64_t device_id);

// Every participant group of the collective as global device ids, each in XLA's order; groups are listed in the
// order of their lowest device. Devices whose id is in no replica group are in no group (collective-broadcast gives
// them zeros; the other collectives fail on them when they run). Fails when an id is out of range or a device would
// be in two groups.
absl::StatusOr<std::vector<std::vector<int64_t>>> ResolveDeviceGroups(const Instruction& inst, int64_t num_replicas,
                                                                      int64_t num_partitions);

// The devices that the pair ids of a collective-permute or send/recv refer to as seen from `device_id` (index = pair
// id): the device's partitions in cross-partition mode, else its replicas. `max_id` as for CollectiveGroupModeOf.
std::vector<int64_t> PairDomain(const Instruction& inst, int64_t num_replicas, int64_t num_partitions,
                                int64_t device_id, int64_t max_id);

// collective-permute's source_target_pairs as (source, target) global device ids over every domain, domains in
// order of their lowest device and pairs in attribute order within each. Fails when a pair is out of range.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ResolveSourceTargetPairs(const Instruction& inst,
                                                                                  int64_t num_replicas,
                                                                                  int64_t num_partitions);

}  // namespace xlac
