// Automatic sharding (issue 28, docs/spmd.md "Automatic sharding"): choose HLO shardings for a module's
// unannotated entry parameters that minimize the modeled TPU step time (passes/tpu_cost_model.h, what
// `xlac --emit=tpu-report` prints) subject to per-core HBM.
//
// The search, in the spirit of XLA's auto-sharding and Alpa's intra-operator pass but greedy instead of an ILP:
//   1. Candidates per searched parameter: replicated, and every assignment of mesh axes to the parameter's
//      dimensions (an axis to at most one dimension, several axes on one dimension in either order) whose product
//      divides the dimension; unused axes become last_tile_dim_replicate. Parameters the user annotated are fixed;
//      parameters smaller than `small_fraction` of the largest keep the start plan's sharding.
//   2. Score of a full assignment: a clone of the module with those parameter shardings goes through the compile
//      pipeline's partition step (compiler.h's PartitionModule: sharding propagation fills in every other
//      instruction, the SPMD partitioner inserts the collectives), then ModelOptimizedTpuStep; an assignment the
//      partitioner rejects, or whose per-core bytes exceed the chip's HBM, is infeasible. Scores are cached by
//      assignment.
//   3. Start: the best of the seed plans (data-parallel, FSDP and Megatron-style plans built from the mesh, the
//      caller's own plans, and "everything left to propagation"), so the result is never worse than any of them.
//   4. Coordinate descent, largest parameter first: each parameter tries its candidates (and its current sharding)
//      with the others fixed and keeps the fastest; a further sweep runs while a sweep changed something (at most
//      `max_sweeps`). Then one try of handing every small parameter to propagation, one of replicating them all.
//      The descent runs from each of the `max_starts` fastest start plans; the best result wins.
// Cost: one partition + cost-model run per distinct assignment (~20-50 ms for a BERT layer on 8 cores).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/sharding.h"
#include "ir/tpu_target.h"

namespace xlac {

// A start plan: one sharding per entry parameter (nullopt: unannotated, propagation decides).
struct AutoShardPlan {
  std::string name;
  std::vector<std::optional<Sharding>> parameters;
};

struct AutoShardConfig {
  // The mesh: axis sizes, and its device ids row-major (empty: 0..n-1). Partition ids of the program.
  std::vector<int64_t> mesh_shape;
  std::vector<int64_t> device_ids;
  std::vector<std::string> axis_names;  // for explanations; empty: axes by index
  const TpuChipSpec* chip = nullptr;    // required
  // Plans to start from besides the built-in data-parallel / FSDP / Megatron-style / propagation-only ones (e.g. the
  // user's hand plans). Their annotations of user-annotated parameters are ignored.
  std::vector<AutoShardPlan> seeds;
  // Per-core HBM bytes of a partitioned module; called only for an assignment about to be accepted. Unset: the
  // per-core bytes of the entry parameters and results (a lower bound of the peak).
  std::function<absl::StatusOr<int64_t>(const Module& partitioned)> per_core_bytes;
  int max_sweeps = 2;
  // The descent runs from this many of the fastest start plans and keeps the best result.
  int max_starts = 2;
  // Parameters with fewer bytes than this fraction of the largest one are not searched one by one.
  double small_fraction = 1.0 / 256;
  // Only plans that shard some parameter (after propagation) are feasible: "every core runs the whole program" is
  // otherwise a plan like any other, and the fastest when communication costs more than the compute it splits.
  bool require_sharded = false;
};

// One searched parameter's decision.
struct AutoShardChoice {
  int64_t parameter = 0;
  std::string name;   // the parameter instruction's name
  std::string shape;  // f32[4096,4096]
  std::string spec;   // the chosen partition spec, as Python writes it: (None, 1), ((0, 1), None), replicated
  std::string sharding;  // its HLO sharding text
  double seconds = 0;    // modeled step time with it
  std::string runner_up_spec;  // the next-best feasible candidate ("" when there was none)
  double runner_up_seconds = 0;
  double replicated_seconds = 0;  // with the parameter replicated (0: not evaluated/infeasible)
  int64_t candidates = 0;
  int64_t infeasible = 0;
  int sweep = 0;
  bool changed = false;  // differs from the sharding it had before this step
};

struct AutoShardResult {
  std::vector<std::optional<Sharding>> parameters;  // the chosen plan (user annotations included)
  double seconds = 0;                               // its modeled step time
  int64_t per_core_bytes = 0;
  std::vector<std::pair<std::string, double>> seed_seconds;  // every seed plan's modeled time (inf: infeasible)
  std::string start;                                         // the seed the descent started from
  std::vector<AutoShardChoice> choices;                      // in search order, every sweep
  int64_t evaluations = 0;  // distinct assignments partitioned and modeled
  double search_seconds = 0;
  // Human-readable lines: the seeds, each choice and why, the result (what --explain-sharding prints).
  std::vector<std::string> explanation;
};

// Runs the search on `module` (loaded and verified, compiler.h's LoadModule; not yet partitioned). The mesh size
// becomes the partition count. InvalidArgument for a bad mesh, a missing chip or a module with no entry.
absl::StatusOr<AutoShardResult> AutoShardModule(const Module& module, const AutoShardConfig& config);

}  // namespace xlac
