#include "ir/sharding.h"

namespace xlac {

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
