// Internals of the SPMD partitioner shared by its handler files (partitioner.cc drives, reshard.cc moves data between
// shardings, handlers_*.cc rewrite one op family each). Not a public header.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/spmd/tiling.h"

namespace xlac::spmd {

// A value of the per-core program: `hlo` holds this core's shard of a global value of shape `base` laid out by
// `sharding` (tuple shardings for tuple values).
struct PValue {
  Instruction* hlo = nullptr;
  Sharding sharding;
  Shape base;
};

class Partitioner;

// Builds one per-core computation. Owns the map from the original instructions to their partitioned values.
class ComputationBuilder {
 public:
  ComputationBuilder(Partitioner& partitioner, Computation* target) : p_(partitioner), comp_(target) {}

  Partitioner& partitioner() { return p_; }
  Computation* computation() { return comp_; }
  int64_t num_devices() const;

  // Appends an instruction; the name is derived from `name_hint` (the opcode name when empty).
  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands, std::string_view name_hint = "");
  Instruction* Clone(const Instruction& original, Shape shape, std::vector<Instruction*> operands);
  Instruction* ConstantS32(int64_t value);
  Instruction* ScalarConstant(const Literal& scalar);
  Instruction* Zero(PrimitiveType type);
  Instruction* Broadcast(Instruction* scalar, const Shape& shape);
  Instruction* Slice(Instruction* operand, const std::vector<int64_t>& limits);
  Instruction* DynamicSlice(Instruction* operand, const std::vector<Instruction*>& starts,
                            const std::vector<int64_t>& sizes);
  Instruction* PadHigh(Instruction* operand, const std::vector<int64_t>& high);
  Instruction* Gte(Instruction* tuple, int64_t index);
  Instruction* Tuple(const std::vector<Instruction*>& elements);
  // This core's partition id as an s32 scalar (one per computation).
  Instruction* PartitionId();
  // table[partition id] as an s32 scalar; a constant when every entry is equal.
  Instruction* TableLookup(const std::vector<int64_t>& table);
  // Per dimension, the element offset of this core's shard of an array of `dims` under `tiling`.
  std::vector<Instruction*> ShardOffsets(const std::vector<int64_t>& dims, const Tiling& tiling);
  // Replaces the padding elements of `value` (shard of `base` under `tiling`) along `dims` with `fill` (a scalar).
  Instruction* MaskPadding(Instruction* value, const Shape& base, const Tiling& tiling,
                           const std::vector<int64_t>& dims, Instruction* fill);

  // Records/looks up the partitioned value of an original instruction.
  void Set(const Instruction* original, PValue value) { values_[original] = std::move(value); }
  const PValue& Get(const Instruction* original) const { return values_.at(original); }

 private:
  // Cheap special cases of ReshardToTiling; nullptr when they do not apply.
  Instruction* TryCollectivePermute(const PValue& value, const Tiling& from, const Tiling& to,
                                    const Instruction& source);
  Instruction* TryAllToAll(const PValue& value, const Tiling& from, const Tiling& to, const Instruction& source);

 public:
  // Moves `value` to `target` (same structure as value.base) with the cheapest collectives this partitioner knows.
  // `source` names the original instruction for the report.
  absl::StatusOr<PValue> Reshard(const PValue& value, const Sharding& target, const Instruction& source);
  absl::StatusOr<PValue> ReshardToTiling(const PValue& value, const Tiling& target, const Instruction& source);

  // The collective instructions; each is recorded in the report against `source`.
  Instruction* AllGather(Instruction* operand, int64_t dim, const std::vector<std::vector<int64_t>>& groups,
                         const Instruction& source);
  Instruction* AllReduce(Instruction* operand, Computation* reducer, const std::vector<std::vector<int64_t>>& groups,
                         const Instruction& source);
  // Splits `operand` along `dim` into one chunk per group member, exchanges them and concatenates what arrives along
  // `dim` in group order (array all-to-all; the shape is unchanged).
  Instruction* AllToAll(Instruction* operand, int64_t dim, const std::vector<std::vector<int64_t>>& groups,
                        const Instruction& source);
  // Sends `operand` from each pair's source partition to its target; partitions no pair targets get zeros.
  Instruction* CollectivePermute(Instruction* operand, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                                 const Instruction& source);

 private:
  Partitioner& p_;
  Computation* comp_;
  absl::flat_hash_map<const Instruction*, PValue> values_;
  Instruction* partition_id_ = nullptr;
  std::map<std::vector<int64_t>, Instruction*> tables_;
};

// Module-wide state: options, the report, channel ids, reducer computations, partitioned callees.
class Partitioner {
 public:
  Partitioner(Module& module, const SpmdOptions& options, SpmdReport* report);

  Module& module() { return module_; }
  int64_t num_devices() const { return num_partitions_; }
  int64_t num_replicas() const { return num_replicas_; }
  SpmdReport* report() { return report_; }
  const SpmdOptions& options() const { return options_; }

  int64_t NextChannelId() { return next_channel_id_++; }
  // Replica groups of global device ids for partition `groups` (every replica gets the same groups).
  ReplicaGroups GlobalGroups(const std::vector<std::vector<int64_t>>& groups) const;
  // A scalar (T, T) -> T computation applying `op` (add, or, ...), created once per type.
  Computation* ScalarReducer(Opcode op, PrimitiveType type);

  // Partitions `original` into a new computation whose parameters arrive in `param_shardings` and whose root leaves
  // in `root_sharding`. Returns the new computation (added to the module).
  absl::StatusOr<Computation*> PartitionComputation(const Computation& original,
                                                    const std::vector<Sharding>& param_shardings,
                                                    const Sharding& root_sharding);

  // The sharding an original instruction should end up in: its annotation, else replicated (per tuple leaf).
  Sharding TargetSharding(const Instruction& inst) const;

  void Warn(const Instruction& source, std::string message);
  void RecordCollective(const Instruction& source, const Instruction& collective, int64_t group_size);
  // Names to restore once the original computations are gone: partitioned instruction -> original name.
  void KeepName(Instruction* partitioned, const std::string& name) { names_.emplace_back(partitioned, name); }
  const std::vector<std::pair<Instruction*, std::string>>& kept_names() const { return names_; }
  // Original computations that have a partitioned replacement, and the replacements' intended names.
  const std::vector<const Computation*>& replaced_computations() const { return replaced_; }
  const std::vector<std::pair<Computation*, std::string>>& kept_computation_names() const { return comp_names_; }
  // The inserted collectives, parallel to report()->collectives.
  const std::vector<const Instruction*>& collectives() const { return collectives_; }
  // A recorded collective was copied elsewhere (out of a scratch computation) and `from` is about to go away.
  void MoveCollective(const Instruction* from, const Instruction* to) {
    std::replace(collectives_.begin(), collectives_.end(), from, to);
  }
  // An original computation that no partitioned instruction calls any more (a fusion's, partitioned inline).
  void MarkReplaced(const Computation* original) { replaced_.push_back(original); }
  void KeepComputationName(Computation* partitioned, std::string name) {
    comp_names_.emplace_back(partitioned, std::move(name));
  }
  void Note(const Instruction& source, std::string message);
  // The entry result's sharding when the partitioned program changed it (manual leaves kept manual).
  const std::optional<Sharding>& entry_root_sharding() const { return entry_root_sharding_; }

 private:
  Module& module_;
  SpmdOptions options_;
  SpmdReport* report_;
  int64_t num_partitions_;
  int64_t num_replicas_;
  int64_t next_channel_id_ = 1;
  std::map<std::pair<Opcode, PrimitiveType>, Computation*> reducers_;
  std::vector<std::pair<Instruction*, std::string>> names_;
  std::vector<const Computation*> replaced_;
  std::vector<const Instruction*> collectives_;
  std::vector<std::pair<Computation*, std::string>> comp_names_;
  std::optional<Sharding> entry_root_sharding_;
};

// `target` with the leaves that are manual in `produced` and merely replicated in `target` made manual.
Sharding KeepManualLeaves(const Sharding& produced, const Sharding& target, const Shape& shape);

// Shape of a value's shard (tuples recursively). The sharding must fit the shape.
absl::StatusOr<Shape> ShardShapeOf(const Shape& base, const Sharding& sharding, int64_t num_devices);
// `sharding` as a tuple sharding matching `shape` (a non-tuple sharding applies to every leaf).
Sharding ExpandTupleSharding(const Sharding& sharding, const Shape& shape);

// The handlers. Each partitions `inst` (whose operands are already partitioned in `b`) and returns its value in any
// sharding (the driver reshards it to the target); nullopt-like NotFound means "not handled here".
absl::StatusOr<PValue> HandleElementwise(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
// A custom call bound to a C++ buffer kernel whose declared sharding rule is batch dimensions or elementwise
// (ir/kernel_calls.h): operands split along those dimensions, the kernel runs on the shards. NotFound otherwise
// (a replicated kernel is HandleReplicated's).
absl::StatusOr<PValue> HandleKernelCall(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleDot(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleConvolution(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleReduce(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleGatherScatter(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
// topk and the "TopK" custom call: local on batch shards; a tiled last dimension by local candidates, all-gathered
// and merged (handlers_topk.cc).
absl::StatusOr<PValue> HandleTopK(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleShapeOp(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleControlFlow(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
// infeed / outfeed: each core reads or writes its shard of the data in the instruction's sharding.
absl::StatusOr<PValue> HandleHostIo(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
// A fusion: its fused computation partitioned with the operands' shardings, re-fused between the collectives it needs
// (handlers_fusion.cc).
absl::StatusOr<PValue> HandleFusion(ComputationBuilder& b, const Instruction& inst, const Sharding& target);

// The per-core value of `inst` from the first handler that takes it (manual values and boundaries first, the
// replicated fallback last), in the handler's natural sharding; the caller reshards it to `target`.
absl::StatusOr<PValue> DispatchInstruction(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
// `status` from partitioning `inst`, prefixed with where and what unless it already says where.
absl::Status LocatePartitionError(const Instruction& inst, const Sharding& target, const absl::Status& status);
// Replicates every operand, runs the op on the whole value on every core, and leaves the result replicated.
absl::StatusOr<PValue> HandleReplicated(ComputationBuilder& b, const Instruction& inst);

absl::StatusOr<PValue> HandleReduceWindow(ComputationBuilder& b, const Instruction& inst, const Sharding& target);
absl::StatusOr<PValue> HandleSelectAndScatter(ComputationBuilder& b, const Instruction& inst, const Sharding& target);

// Along one tiled dimension (global length `global_size`, `tiles` tiles), tile t needs the windows
// [first[t], first[t] + count) (first[t] < 0: none), which read the input elements
// [first[t] * stride - pad_lo, + (count - 1) * stride + size). The plan: the halos every block needs.
struct WindowPlan {
  std::vector<int64_t> first;
  int64_t count = 0, stride = 1, size = 1, pad_lo = 0, global_size = 0, shard = 0;
  int64_t lo = 0, hi = 0;  // halo lengths before / after each block
};
// nullopt when no tile needs a window or a halo would be wider than the other tiles' blocks together.
std::optional<WindowPlan> PlanWindows(int64_t global_size, int64_t tiles, std::vector<int64_t> first, int64_t count,
                                      int64_t stride, int64_t size, int64_t pad_lo);

// This core's input range for its windows, cut out of its block extended by halos.
struct WindowedBlock {
  Instruction* value = nullptr;  // the range: (count - 1) * stride + size elements along the dimension
  Instruction* base = nullptr;   // s32 scalar: where the range starts in the extended block
  int64_t lo = 0;                // elements before this core's own block in the extended block
  int64_t extended = 0;          // length of the extended block
  bool whole = false;            // the range is the whole extended block on every core
};
// Extends every core's block of `input` along `dim` by the plan's halos from its neighbours (`fill` beyond the
// array's ends; the caller masks the padding of uneven shards) and slices each core's range at its offset.
absl::StatusOr<WindowedBlock> WindowedInput(ComputationBuilder& b, const Instruction& source, Instruction* input,
                                            const Tiling& tiling, int64_t dim, const WindowPlan& plan,
                                            Instruction* fill);

// Extends this core's block of `input` (tiled by `input_tiling`) along `dim` by the `lo` elements before it and the
// `hi` after it, fetched from the neighbouring cores by collective-permute. The cores at either end get `fill`
// there (zeros when null).
absl::StatusOr<Instruction*> ExchangeHalos(ComputationBuilder& b, const Instruction& source, Instruction* input,
                                           const Tiling& input_tiling, int64_t dim, int64_t lo, int64_t hi,
                                           Instruction* fill);

// True when the init value of `reduce` (a reduce or reduce-window) is a constant that may be combined into a result
// any number of times: the identity of add / multiply, or anything for the idempotent max / min / and / or.
bool InitIsSafeToRepeat(const Instruction& reduce, const Instruction& init);

// True if the handler family recognizes the opcode (the driver tries them in order).
bool IsElementwiseOp(const Instruction& inst);

}  // namespace xlac::spmd
