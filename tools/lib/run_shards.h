// xla-run --input-shards=DIR (docs/multihost.md): every device reads its own shards of the entry parameters instead
// of every process reading the global arrays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/literal.h"

namespace xlac {

// Device d's shard of parameter i: DIR/device_d/result_i.npy, the name `--per-device --output-dir=DIR` gives device
// d's result leaf i, so one run's sharded results are another's sharded inputs.
std::string InputShardPath(const std::string& dir, int64_t device, int64_t parameter);

// Per device of `devices`, the shards of `shard_entry`'s parameters (the partitioned program's entry): read for the
// devices in [begin, end), zero-filled for the others (devices of other processes, which this one never runs).
absl::StatusOr<std::vector<std::vector<Literal>>> ReadInputShards(const std::string& dir,
                                                                  const Computation& shard_entry, int64_t devices,
                                                                  int64_t begin, int64_t end);

}  // namespace xlac
