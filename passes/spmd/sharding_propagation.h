// Sharding propagation (a simplified, sound XLA ShardingPropagation): completes partial `sharding=` annotations so
// that every value the SPMD partitioner sees has a sharding inferred from its neighbours instead of falling back to
// replication.
//
// Preconditions: the module verifies. Shardings the user wrote are never changed (a `Sharding` custom-call with
// `unspecified_dims` only has those dimensions refined); entry parameters and the entry result are only inferred
// where the module's allow_spmd_sharding_propagation_to_parameters / _to_output allow it. Propagation runs forward
// (operands to users) and backward (users to operands) to a fixed point, preferring more specific shardings (more
// tiles) and merging compatible partially replicated ones; ties go to the first candidate in a fixed order (operands
// in order, users by unique id), so the result is deterministic.
//
// Postconditions: every array- or tuple-valued instruction of the entry computation and of the computations it
// reaches through while, conditional and call has a sharding (tuples get tuple shardings; {replicated} where nothing
// could be inferred); a while's state and a conditional's result share one sharding with their body/branch values.
// Computations applied by reduce, sort, map, scatter, all-reduce, fusion, ... are left alone. `Sharding`,
// `ShardBarrierFrom` and `ShardBarrierTo` custom-calls stay in the module (the partitioner treats them as identities).
// A module without any sharding is left unchanged. An entry result that is a while or conditional the config does
// not let propagation shard gets a copy as the new root, so that the loop itself can still be sharded.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/sharding.h"

namespace xlac {

// Where one value (an array, or one leaf of a tuple) got its sharding.
struct ShardingOrigin {
  enum class Kind : uint8_t {
    kAnnotated,  // written in the input
    kOperand,    // inferred from a value flowing into it: an operand, a call argument or a callee's root
    kUser,       // inferred from an instruction that reads it
    kDefault,    // nothing to infer from: replicated
  };
  Kind kind = Kind::kDefault;
  std::string source;  // the neighbour it was inferred from (kOperand, kUser)
  // Set when the instruction shares its value with others (a loop's state, a conditional's result) and the
  // annotation or inference was on `via`, another of them.
  std::string via;

  // "user", "operand %x", "user %y" or "default replicated", followed by " (via %w)" when `via` is set.
  std::string ToString() const;
  bool operator==(const ShardingOrigin&) const = default;
};

struct ShardingExplanation {
  std::string computation;
  std::string instruction;
  Sharding sharding;                    // the sharding the instruction has after the pass
  std::vector<ShardingOrigin> origins;  // one per leaf (one for an array)
};

struct ShardingPropagationReport {
  // Computations in module order, instructions in program order; instructions left without a sharding (tokens,
  // empty tuples) are not listed.
  std::vector<ShardingExplanation> entries;

  // One line per entry: "%name: {sharding} <- origin". A tuple whose leaves came from different places lists one
  // origin per leaf: "<- {operand %a, default replicated}".
  std::string ToString() const;
};

// Returns whether the module changed.
absl::StatusOr<bool> RunShardingPropagation(Module& module);
// Same; when `report` is not null it is cleared and filled with where each sharding came from.
absl::StatusOr<bool> RunShardingPropagation(Module& module, ShardingPropagationReport* report);

}  // namespace xlac
