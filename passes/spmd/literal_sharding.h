// Splitting global values into the per-partition shards a partitioned program takes, and assembling its
// per-partition results back into global values: what xla-run and the JIT API do around an SPMD program.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "ir/sharding.h"

namespace xlac::spmd {

// Partition `partition`'s shard of `global` under `sharding` (tuple shardings for tuple values). Padding elements of
// uneven trailing shards are zero. Replicated and maximal shardings give the whole value.
absl::StatusOr<Literal> ShardLiteral(const Literal& global, const Sharding& sharding, int64_t partition,
                                     int64_t num_partitions);

// The global value of shape `global_shape` from every partition's shard (`shards[p]` for partition p). Replicated
// values are read from partition 0, maximal ones from their device.
absl::StatusOr<Literal> AssembleLiteral(const std::vector<const Literal*>& shards, const Sharding& sharding,
                                        const Shape& global_shape);

}  // namespace xlac::spmd
