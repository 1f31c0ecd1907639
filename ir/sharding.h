// HLO shardings as XLA prints them: {replicated}, {maximal device=1}, {manual}, {devices=[2,1]0,1},
// {devices=[4,2]<=[8]}, {devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}, {devices=[..]...
// last_tile_dims={manual}}, tuple shardings {{replicated}, {maximal device=0}}, with optional metadata={...} and
// shard_as/shard_like.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attributes.h"

namespace xlac {

// Custom-call targets that only annotate their single operand and are identities on values: "Sharding"
// annotations, the sharding-propagation barriers "ShardBarrierFrom" / "ShardBarrierTo", and the annotations of
// IsAnnotationIdentityTarget (host offload, memory placement, Shardy round-trip markers).
bool IsShardingIdentityTarget(std::string_view target);
// Annotations besides shardings that real exporters leave in modules: XLA's host-offload and memory-placement calls
// (MoveToHost, MoveToDevice, PinToDevice, PinToDeviceSram, AnnotateMemorySpace, annotate_device_placement),
// LayoutConstraint, and Shardy's HLO round-trip markers xla.sdy.FuncResultSharding / xla.sdy.PropagationBarrier.
// The annotation-custom-calls pass rewrites them into copies; every backend also reads them as identities.
bool IsAnnotationIdentityTarget(std::string_view target);
// The boundaries of manual (shard_map) regions: SPMDFullToShardShape / SPMDShardToFullShape. The partitioner gives
// them their meaning; in a program that is not partitioned they are identities when their shapes agree.
inline bool IsShardMapBoundaryTarget(std::string_view target) {
  return target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape";
}

struct Sharding {
  enum class Kind : uint8_t { kReplicated, kMaximal, kManual, kUnknown, kUnreduced, kTiled, kTuple };
  // Types of the trailing subgroup dims of last_tile_dims={...}.
  enum class SubgroupType : uint8_t { kReplicated, kManual, kUnreduced, kMaximal };

  Kind kind = Kind::kReplicated;
  int64_t device = -1;  // kMaximal

  // kTiled: the tile assignment has shape `tile_dims`; device ids are either `device_ids` (row-major) or `iota`.
  std::vector<int64_t> tile_dims;
  std::vector<int64_t> device_ids;
  std::optional<IotaList> iota;  // iota->dims == tile_dims
  bool last_tile_dim_replicate = false;
  std::vector<SubgroupType> last_tile_dims;

  std::vector<Sharding> tuple_elements;  // kTuple
  std::vector<OpMetadata> metadata;

  // shard_as N / shard_like N
  std::optional<int64_t> shard_group_id;
  bool shard_group_is_shard_as = false;

  static Sharding Replicated() { return Sharding{}; }
  static Sharding Manual() {
    Sharding s;
    s.kind = Kind::kManual;
    return s;
  }
  static Sharding Maximal(int64_t device) {
    Sharding s;
    s.kind = Kind::kMaximal;
    s.device = device;
    return s;
  }
  static Sharding Tuple(std::vector<Sharding> elements) {
    Sharding s;
    s.kind = Kind::kTuple;
    s.tuple_elements = std::move(elements);
    return s;
  }

  bool IsTuple() const { return kind == Kind::kTuple; }
  bool IsTiled() const { return kind == Kind::kTiled; }
  // Device ids of the tile assignment in row-major order, expanding the iota form.
  std::vector<int64_t> DeviceList() const;
  // Number of leading tile dims that shard data dims (excludes replicate/subgroup dims).
  int64_t NumDataTileDims() const;
  bool operator==(const Sharding&) const = default;
};

}  // namespace xlac
