// The SPMD partitioner: rewrites a module whose instructions carry `sharding=` annotations into the one program
// every partition (emulated core) runs on its shard, GSPMD style: `partition-id` selects the shard, and collectives
// (all-gather, all-reduce, dynamic-slice of replicated values) keep it equal to the unpartitioned program.
//
// Preconditions: the module verifies; shardings are complete or partial (an instruction without one is replicated;
// run sharding-propagation first for a better plan). The module's num_partitions is the number of partitions.
// Postconditions: the entry parameters and result have their shard shapes (entry_computation_layout is rewritten),
// no instruction carries a sharding any more, and `Sharding`/`SPMDFullToShardShape`/`SPMDShardToFullShape`
// custom-calls are gone. A module without any sharding, or with one partition, is left unchanged.
//
// Each handler produces a value in whatever sharding is natural for it and the driver reshards it to the
// instruction's annotated sharding; an op no handler knows is computed replicated (every operand all-gathered) and
// then sliced, which is always correct and reported as a warning.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/sharding.h"

namespace xlac {

struct SpmdOptions {
  // 0: the module's num_partitions.
  int64_t num_partitions = 0;
  // Windowed einsum (collective matmul, XLA's threshold_for_windowed_einsum_mib): a dot whose operand all-gather, or
  // whose result reduce-scatter, would move at least this many bytes per core becomes a while loop over the group's
  // ring of cores, one collective-permute and one partial dot per step (windowed_einsum.h). 0: never. The loop is
  // always a while loop, never unrolled, and one-directional (XLA's unroll / bidirectional knobs are not offered).
  int64_t windowed_einsum_threshold_bytes = 0;
};

// What the partitioner did, for `--emit=spmd-report` and for tools that shard inputs and assemble outputs.
struct SpmdReport {
  struct Collective {
    std::string source;  // the original instruction it was inserted for
    std::string opcode;  // all-gather, all-reduce, ...
    std::string name;    // the inserted instruction
    int64_t group_size = 0;
    int64_t bytes_per_core = 0;  // bytes each core sends (its operand shard)
  };
  std::vector<Collective> collectives;
  std::vector<std::string> warnings;  // "%name: why" — full rematerialization, replicated fallbacks
  std::vector<std::string> notes;     // "%name: what" — fusions split at the collectives they need
  // Shardings of the entry parameters and result as the partitioned program expects/produces them.
  std::vector<Sharding> parameter_shardings;
  Sharding result_sharding;
  int64_t num_partitions = 1;
};

// Returns whether the module changed. User errors (a sharding that does not fit its value, an unsupported manual
// subgroup) come back as InvalidArgument/Unimplemented whose message starts with "line:col: ".
absl::StatusOr<bool> RunSpmdPartitioner(Module& module, const SpmdOptions& options, SpmdReport* report);
absl::StatusOr<bool> RunSpmdPartitioner(Module& module);

// The report as text: one line per inserted collective, the bytes each core sends, then the warnings.
std::string FormatSpmdReport(const SpmdReport& report);

// The value of the tools' --spmd-windowed-einsum-threshold-mib=X (a non-negative decimal number of MiB: 64, 0.25)
// in bytes for SpmdOptions::windowed_einsum_threshold_bytes; 0 is off, any positive value at least one byte.
absl::StatusOr<int64_t> ParseWindowedEinsumThresholdMib(std::string_view text);

// True when some instruction of the module carries a sharding other than {replicated}.
bool HasShardings(const Module& module);

// True for a module XLA has already partitioned: its dumps after spmd-partitioning name the entry computation
// `..._spmd` and keep the shardings on the parameters (which then have per-device shapes and describe how the
// global arrays were split), and a program that reads partition-id outside any manual region computes per device.
// Partitioning it again would split the shards once more.
bool IsAlreadyPartitioned(const Module& module);

// HasShardings and not IsAlreadyPartitioned: what the SPMD partitioner has to do something for.
bool NeedsPartitioning(const Module& module);

}  // namespace xlac
