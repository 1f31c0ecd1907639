// Internals of sharding propagation shared by its driver (sharding_propagation.cc) and its per-op rules and sharding
// order (sharding_propagation_ops.cc). Not a public header.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "ir/shape.h"
#include "ir/sharding.h"
#include "passes/spmd/tiling.h"

namespace xlac::spmd {

// The shardings of a value's leaves: one per non-tuple subshape in depth-first order (XLA's flat tuple shardings),
// one for an array. nullopt: not known yet.
using LeafShardings = std::vector<std::optional<Sharding>>;

int64_t LeafCount(const Shape& shape);
// Index of the first leaf of element `element` of a tuple shape.
int64_t FirstLeaf(const Shape& tuple, int64_t element);

// ---- The sharding order ----

// The tiling of a kTiled sharding over the devices it names, which need not be 0..n-1 (TilingOf's errors otherwise:
// InvalidArgument for malformed shardings, Unimplemented for manual or unreduced subgroups).
absl::StatusOr<Tiling> TilingOfAnyDevices(const Sharding& sharding);
// The same, nullopt for other kinds and for tiled shardings propagation does not reason about.
std::optional<Tiling> TilingOfTiled(const Sharding& sharding);
// The canonical form of a sharding propagation can reason about (no metadata, no shard group); nullopt for the
// others (unknown, unreduced, subgroups other than replication), which never propagate.
std::optional<Sharding> Canonical(const Sharding& sharding);
// True if `candidate` should replace `current`: replicated < maximal < tiled by number of tiles; manual only replaces
// replicated and is never replaced.
bool IsMoreSpecific(const Sharding& candidate, const Sharding& current);
// The sharding that refines both `current` and `candidate` (tiled, same rank and devices, each tiling the other's
// replicated dimensions consistently), if it has more tiles than `current`.
std::optional<Sharding> MergeRefinement(const Sharding& current, const Sharding& candidate);
// `sharding` (of an array of rank `rank`) with the tiles of `dims` moved to replication.
Sharding ReplicateDims(const Sharding& sharding, int64_t rank, const std::vector<int64_t>& dims);
// False if `sharding` tiles some dimension of `shape` unevenly (XLA's test for entry parameters and results whose
// sharding was inferred).
bool EvenlyPartitions(const Shape& shape, const Sharding& sharding);

// ---- Per-op rules ----

// A sharding proposed for one leaf of an instruction.
struct Proposal {
  int64_t leaf = 0;
  Sharding sharding;
};

// Shardings for the leaves of `inst` implied by `operand_leaves`, the shardings of its operand `operand`. Values
// entering called computations (call, conditional) are the driver's business, not the rules'.
std::vector<Proposal> InferFromOperand(const Instruction& inst, int64_t operand, const LeafShardings& operand_leaves);
// Shardings for the leaves of inst.operand(operand) implied by `leaves`, the shardings of `inst`.
std::vector<Proposal> InferOperandFromUser(const Instruction& inst, int64_t operand, const LeafShardings& leaves);
// The order in which operands are consulted; the first of equally specific incompatible proposals wins.
std::vector<int64_t> OperandPriority(const Instruction& inst);
// Identity-like custom-calls (sharding annotations, barriers, layout constraints, host offloading markers).
bool IsPassThroughCustomCall(const Instruction& inst);
// A top-k: the `topk` op or XLA's "TopK" custom call (one operand; values and s32 indices along the last dimension).
bool IsTopK(const Instruction& inst);

}  // namespace xlac::spmd
