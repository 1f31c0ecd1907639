// A modeled step time of one core's program on a TPU slice (docs/tpu_model.md), the roofline model of "How to
// Scale Your Model" (https://jax-ml.github.io/scaling-book/):
//  - each op or fusion takes max(FLOPs / matrix-unit peak, HBM bytes / HBM bandwidth): FLOPs are the dots' and
//    convolutions' 2 x multiply-adds (an f32 dot costs 1, 3 or 6 bf16 passes by its TPU precision, ir/tpu_numerics.h;
//    s8 x s8 dots run at the int8 peak where Google publishes one), bytes are the operands and results at their
//    TPU-padded sizes (ir/tpu_layout.h); elementwise work on the vector unit is not counted (memory-bound);
//  - each collective from its bytes, its device groups and the slice (ModelCollective);
//  - ops run one after another (no overlap of communication with compute): the step time is their sum, split by
//    what bounds each op into compute, memory and communication.
// While loops count their body and condition known_trip_count times (XLA's backend_config) or else once,
// conditionals their most expensive branch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/tpu_target.h"

namespace xlac {

enum class TpuCollectiveKind { kAllGather, kReduceScatter, kAllReduce, kAllToAll, kCollectivePermute };

struct TpuCollectiveCost {
  double seconds = 0;                // max(bandwidth, latency)
  double bandwidth_seconds = 0;      // bytes over the links the group spans
  double latency_seconds = 0;        // hops x per-hop latency
  double link_bytes_per_second = 0;  // the bandwidth the formula divides by
  std::string path;                  // "ring of 4 on x (wraparound)", "2 axes: x, y", "irregular group of 6"
};

// Per-hop ICI latency: [book] part 3, "roughly 1us per hop".
inline constexpr double kTpuIciHopSeconds = 1e-6;

// A collective over one group of slice devices (device ids of `topology`; for collective-permute the flattened
// (source, target) pairs). `bytes` is the array each device ends
// with (all-gather: the gathered result; reduce-scatter: the full operand; all-reduce and all-to-all: the operand;
// collective-permute: what each device sends).
//   group spanning whole axes or sub-rings of them: W = sum over spanned axes of 2 x link (a ring with wraparound,
//   both directions) or 1 x link (a line without); all-gather and reduce-scatter V / W, all-reduce 2V / W,
//   all-to-all V / (4W); latency = sum over axes of (k / 2 with wraparound, k - 1 without) hops;
//   other groups: a ring through the group in its order over one link direction, latency = the ring's hops;
//   collective-permute: the slowest pair, bytes / link and distance x hop latency.
TpuCollectiveCost ModelCollective(TpuCollectiveKind kind, int64_t bytes, const std::vector<int64_t>& group,
                                  const TpuTopology& topology);

struct TpuOpCost {
  std::string name;
  std::string opcode;
  double flops = 0;
  double bytes = 0;  // HBM bytes (ops) or bytes per device (collectives)
  double seconds = 0;
  enum class Bound { kCompute, kMemory, kCommunication } bound = Bound::kMemory;
  std::string detail;  // collectives: the group and formula
};

struct TpuStepReport {
  std::vector<TpuOpCost> ops;  // in program order
  double compute_seconds = 0;
  double memory_seconds = 0;
  double communication_seconds = 0;
  double flops = 0;
  double total_seconds() const { return compute_seconds + memory_seconds + communication_seconds; }
  // Totals, then the `top` most expensive ops.
  std::string ToString(int64_t top = 10) const;
};

// `module` is one core's program (partitioned when sharded), before codegen preparation so fusions are intact.
// Devices are replica * num_partitions + partition; there must be topology.num_devices() of them.
absl::StatusOr<TpuStepReport> ModelTpuStep(const Module& module, const TpuTopology& topology, int64_t num_replicas,
                                           int64_t num_partitions);

// ModelTpuStep on a clone of `module` after the default optimization pipeline (passes/optimization_pipeline.h; its
// fusion decides what one kernel reads and writes), at opt_level 2 with `tpu_numerics`. `partitioned`: `module`
// came out of the partition step (compiler/compiler.h), which ran the steps before partitioning already.
absl::StatusOr<TpuStepReport> ModelOptimizedTpuStep(const Module& module, const TpuTopology& topology,
                                                    int64_t num_replicas, int64_t num_partitions, bool tpu_numerics,
                                                    bool partitioned = false);

// 0.000373 -> "373 us", 2.5e-3 -> "2.50 ms".
std::string FormatSeconds(double seconds);

}  // namespace xlac
