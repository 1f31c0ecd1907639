// Custom-calls that only annotate, rewritten to what they mean before anything else looks at the module.
//
// Exporters leave custom-calls in modules whose meaning is known and does not depend on the backend: XLA's host
// offload and memory placement (MoveToHost, MoveToDevice, annotate_device_placement, ...), LayoutConstraint, Shardy's
// HLO round-trip markers (xla.sdy.FuncResultSharding, xla.sdy.PropagationBarrier, xla.sdy.ShardingGroup), and
// framework markers the user names (PyTorch/XLA's tt.mark_argument). This pass turns
//  - every identity annotation (IsAnnotationIdentityTarget) and every target in `identity_targets` into its
//    operand: its users read the operand directly when the call has no sharding, layout or control edge of its own
//    and is no computation's root; otherwise into a copy of the operand that keeps the call's name, sharding,
//    metadata and frontend attributes (the sharding stays a constraint for the partitioner). The partitioner
//    partitions copies as elementwise ops, so an identity never forces an all-gather;
//  - xla.sdy.ShardingGroup (a propagation hint whose value is an empty tuple) into an empty tuple, and drops it when
//    nothing reads it;
//  - XLA's AllocateBuffer (no operands; a buffer that host offloading fills by dynamic-update-slice, undefined until
//    written) into a broadcast zero, so that every backend reads the same values.
// "Sharding", the propagation barriers ShardBarrierFrom/ShardBarrierTo and the shard_map boundaries stay: the SPMD
// passes give them their meaning. Shardy's round-trip shard_map boundaries (xla.sdy.GlobalToLocalShape /
// xla.sdy.LocalToGlobalShape) are identities when their shapes agree; otherwise their shardings live in Shardy's
// frontend attributes, which xlac does not read in HLO text, and the pass reports them.
//
// A call that is not an identity (not one operand, or a result shape other than the operand's) is an error at the
// instruction: "line:col: message" as the other passes report instruction errors.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

struct AnnotationCallOptions {
  // Custom-call targets the user declares to be identities (--custom-call-identity, CompileOptions, Python).
  std::vector<std::string> identity_targets;
};

// The pass (registered as annotation-custom-calls, with no user targets). Returns whether the module changed.
absl::StatusOr<bool> RunAnnotationCustomCalls(Module& module, const AnnotationCallOptions& options = {});

// For drivers: runs the pass and reports its error as a located diagnostic to `diags`. Returns false on error.
bool RewriteAnnotationCustomCalls(Module& module, const AnnotationCallOptions& options, DiagnosticEngine& diags);

// Splits a --custom-call-identity value ("a,b") into `targets`, appending; an empty name is an error.
absl::Status AppendCustomCallIdentities(std::string_view list, std::vector<std::string>& targets);

}  // namespace xlac
