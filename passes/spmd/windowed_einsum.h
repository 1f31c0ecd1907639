// Windowed einsum (collective matmul): a sharded dot whose single all-gather of an operand, or reduce-scatter of its
// result, would move at least SpmdOptions::windowed_einsum_threshold_bytes per core becomes a while loop over the N
// cores of the collective's group, each iteration computing the dot of one shard and passing a shard (all-gather
// case) or the partial-sum accumulator (reduce-scatter case) to the neighbour by collective-permute. On a TPU the
// permute of one iteration overlaps the dot of the same iteration; the collectives move the same bytes as the single
// collective would. Also the dot helpers handlers_dot.cc shares with it. Not a public header.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "passes/spmd/partitioner_internal.h"

namespace xlac::spmd {

struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting, lhs_free, rhs_free;
};

DotDims DotDimsOf(const Instruction& dot);

// The local dot of two shards: the result shape follows from the operand shards; `type` overrides the element type.
Instruction* LocalDot(ComputationBuilder& b, const Instruction& dot, const DotDims& d, Instruction* lhs,
                      Instruction* rhs, std::optional<PrimitiveType> type = std::nullopt);

// The type partial sums cross the cores in (f32 for narrow floats, see handlers_dot.cc).
PrimitiveType PartialSumType(PrimitiveType type);

Instruction* ConvertTo(ComputationBuilder& b, Instruction* value, PrimitiveType type);

// The all-gather case. `out` is the result's tiling and `lhs_target` / `rhs_target` the tilings the output-driven
// dot moves its operands to. When one operand needs only an all-gather along one of its free dimensions to reach
// its target, over a ring of at least two cores, and that gather moves at least the threshold, returns the result
// in `out` computed by the loop (the other operand resharded as usual); nullopt otherwise.
absl::StatusOr<std::optional<PValue>> WindowedAllGatherDot(ComputationBuilder& b, const Instruction& dot,
                                                           const DotDims& d, const Tiling& out,
                                                           const Tiling& lhs_target, const Tiling& rhs_target);

// The reduce-scatter case. `lhs` / `rhs` are the operand shards the local dot would take (padding of the contracting
// dimensions zeroed), `groups` the reduce-scatter's partition groups and `dim` / `chunk` the result dimension it
// scatters and each core's chunk of it (the local result's `dim` padded to chunk * group size). When the partial
// result is at least the threshold, returns this core's chunk of the sum in `sum_type`; nullptr otherwise.
Instruction* WindowedReduceScatterDot(ComputationBuilder& b, const Instruction& dot, const DotDims& d, Instruction* lhs,
                                      Instruction* rhs, PrimitiveType sum_type, int64_t dim, int64_t chunk,
                                      const std::vector<std::vector<int64_t>>& groups);

}  // namespace xlac::spmd
