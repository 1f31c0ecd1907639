// Building and growing fusion instructions for the fusion pass. Every function, and FusionGrowth once finished, keeps
// the module valid: operands are deduplicated, unused producers are removed, and the old fused computation is dropped.
#pragma once

#include <cassert>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

// The module being fused, and the fused computations built for it so far. Those stay outside the module until
// Adopt: adding and removing a module computation at every step would scan the whole module each time.
class FusionContext {
 public:
  explicit FusionContext(Module& module) : module_(module) {}
  Module& module() { return module_; }
  Computation* Own(std::unique_ptr<Computation> comp);
  void Drop(const Computation* comp);
  // Moves every computation still owned into the module: those of `fusions` (the fusions made, in program order)
  // named XLA's way (fused_computation, fused_computation.1, ...), with instruction names made module-unique while
  // every other instruction keeps its name.
  void Adopt(const std::vector<Instruction*>& fusions);

 private:
  Module& module_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<Computation>> owned_;
};

// Replaces `inst` (a single-result instruction of `comp`) by a fusion of kind `kind` that computes exactly it.
absl::StatusOr<Instruction*> WrapInFusion(FusionContext& ctx, Computation& comp, Instruction* inst,
                                          std::string_view kind);

// Grows one fusion of `comp` producer by producer in place. Rebuilding the fused computation at every step made a
// chain of k fusions cost O(k^2) clones; here a step costs about the producer's neighbourhood. While it grows, the
// fusion calls a working computation whose parameters are numbered in creation order, not by operand position:
// params() is the position-to-parameter map to use instead of Computation::parameter. Finish gives the fusion the
// computation that rebuilding at every step would have produced (same operands, parameter numbers, names and
// program order), so the result does not depend on how the fusion was grown.
class FusionGrowth {
 public:
  // `fusion` is a fusion of `comp` whose computation `ctx` owns.
  FusionGrowth(FusionContext& ctx, Computation& comp, Instruction* fusion);
  FusionGrowth(const FusionGrowth&) = delete;
  FusionGrowth& operator=(const FusionGrowth&) = delete;
  ~FusionGrowth() { assert(body_ == nullptr && "FusionGrowth::Finish not called"); }

  Instruction* fusion() const { return fusion_; }
  // The fused computation's parameter for each operand of the fusion.
  const std::vector<Instruction*>& params() const { return params_; }

  // Moves a copy of `producer` (an operand of the fusion) into the fused computation and sets the fusion's kind.
  // The producer itself is removed when nothing else uses it.
  absl::Status Fuse(Instruction* producer, std::string_view kind);

  // Replaces the working computation by the final one (owned by the context).
  void Finish();

 private:
  // Merges instructions that became identical once `fused` replaced a parameter, into the earliest in program order
  // (as rebuilding, which clones in program order and reuses an identical instruction, does).
  absl::Status Deduplicate(Instruction* fused);

  FusionContext& ctx_;
  Computation& comp_;
  Instruction* fusion_;
  std::unique_ptr<Computation> body_;
  std::vector<Instruction*> params_;
  // Program order of the non-parameter instructions: a fused producer goes first, so keys only decrease.
  absl::flat_hash_map<Instruction*, int64_t> order_;
  int64_t first_key_ = 0;
};

// One kind-`kind` fusion computing both `a` and `b` (fusions of `comp`, neither reaching the other) with a tuple
// root of their outputs (flattened); their users read it through get-tuple-element. Returns the new fusion.
absl::StatusOr<Instruction*> MergeSiblingFusions(FusionContext& ctx, Computation& comp, Instruction* a, Instruction* b,
                                                 std::string_view kind);

}  // namespace xlac
