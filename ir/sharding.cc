#include "ir/sharding.h"

namespace xlac {

bool IsShardingIdentityTarget(std::string_view target) {
  return target == "Sharding" || target == "ShardBarrierFrom" || target == "ShardBarrierTo" ||
         IsAnnotationIdentityTarget(target);
}

bool IsAnnotationIdentityTarget(std::string_view target) {
  static constexpr std::string_view kTargets[] = {
      "MoveToHost",         "MoveToDevice",     "PinToDevice",
      "PinToDeviceSram",    "AnnotateMemorySpace", "annotate_device_placement",
      "LayoutConstraint",   "xla.sdy.FuncResultSharding", "xla.sdy.PropagationBarrier",
  };
  for (std::string_view t : kTargets) {
    if (t == target) return true;
  }
  return false;
}

std::vector<int64_t> Sharding::DeviceList() const {
  if (iota) return iota->ToList();
  return device_ids;
}

int64_t Sharding::NumDataTileDims() const {
  int64_t n = static_cast<int64_t>(tile_dims.size());
  if (last_tile_dim_replicate) return n - 1;
  return n - static_cast<int64_t>(last_tile_dims.size());
}

}  // namespace xlac
