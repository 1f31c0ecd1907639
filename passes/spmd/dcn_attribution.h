// Hybrid meshes (xla-run --dcn-mesh=K, docs/multihost.md): the D = replicas x partitions devices form K DCN slices
// of D / K consecutive device ids (slice s holds devices [s * D / K, (s + 1) * D / K)), each slice an ICI mesh.
// Every collective's bytes are attributed to ICI (between devices of one slice) or DCN (between slices).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

struct DcnSplit {
  std::string name;
  std::string opcode;
  int64_t bytes_per_core = 0;  // what each core sends (its array operands), as the SPMD report counts
  // The same split by destination, averaged over the participating cores: a core of a group of n sends 1 / (n - 1)
  // of its bytes' worth towards each other member (all-gather, all-to-all and the ring passes of all-reduce and
  // reduce-scatter all move data evenly between members), so the share of members in other slices goes over DCN. A
  // collective-permute pair is DCN exactly when its source and target lie in different slices.
  double ici_bytes = 0;
  double dcn_bytes = 0;
};

// The split of one collective. InvalidArgument when D is not a multiple of `slices` or its groups do not resolve.
absl::StatusOr<DcnSplit> SplitCollectiveBytes(const Instruction& inst, int64_t num_replicas, int64_t num_partitions,
                                              int64_t slices);
// Every collective of `module` in program order (each computation's, as printed), or only those named in `names`
// when it is not empty.
absl::StatusOr<std::vector<DcnSplit>> SplitModuleCollectives(const Module& module, int64_t num_replicas,
                                                             int64_t num_partitions, int64_t slices,
                                                             const std::vector<std::string>& names = {});
// "dcn: K slices of S devices ..." then one line per collective and the totals.
std::string FormatDcnSplits(const std::vector<DcnSplit>& splits, int64_t devices, int64_t slices);

}  // namespace xlac
