// Shared between the fusion pass's producer-consumer step (fusion.cc) and its multi-output step
// (multi_output_fusion.cc).
#pragma once

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/module.h"
#include "passes/fusion/fusion_builder.h"

namespace xlac::fusion_internal {

// One computation being fused, and the fusions this pass made in it (the only ones it grows or merges).
struct FusionState {
  FusionContext& ctx;
  Computation& comp;
  absl::flat_hash_set<const Instruction*> ours;
  // The fusion being grown, whose computation's parameters are only found through it.
  const FusionGrowth* growing = nullptr;
};

// The parameter of `fusion`'s computation for each of its operands.
const std::vector<Instruction*>& FusedParams(const FusionState& state, const Instruction& fusion);

bool HasControlEdges(const Instruction& inst);

// Every operand is a static array of a scalar compute type, as a fused computation's parameters must be.
bool OperandsAreParameterShaped(const Instruction& inst);

// A single-operand reduce to an array with a scalar elemental reducer: the root of a kInput fusion.
bool IsFusibleReduce(const Instruction& inst);

// Merges kInput fusions and reduces that read a common operand, have the same reduce signature and do not depend
// on each other into one kInput fusion with a tuple root (a layer norm's sum(x) and sum(x*x) in one pass).
absl::StatusOr<bool> MergeSiblingReduces(FusionState& state);

}  // namespace xlac::fusion_internal
