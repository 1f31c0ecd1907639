// Parser for StableHLO MLIR text (pretty and generic op forms), producing the same HLO IR as the HLO parser, as
// XLA's StableHLO -> HLO translation (MHLO export) maps it.
//
// Mapping conventions:
//  - Each func.func becomes a computation (named after the function); func.call becomes `call` with to_apply.
//    Functions return their single result directly and several (or none) as a tuple. The entry computation is
//    @main, or the only function nothing calls; a file of several argument-less test functions without @main gets a
//    synthesized entry `main` that calls each of them and returns the tuple of their results.
//  - Regions become called computations (reduce bodies, sort comparators, scatter updates, while cond/body,
//    if/case branches, ...). Values a region uses from outside are cloned into it when they are constant
//    expressions; while/if/case pass other captured values as extra tuple elements, as XLA's export does.
//  - Multi-result ops produce a tuple-shaped instruction plus get-tuple-element for each result.
//  - mhlo.sharding strings on arguments, results and ops become shardings; mhlo.num_partitions / mhlo.num_replicas
//    become the module config; loc(...) becomes OpMetadata (op_name / source_file / source_line / source_column)
//    while each instruction's SourceLoc is the line/column of the op statement in the file.
//  - Shardy annotations (modern JAX): `sdy.mesh` definitions, `sdy.sharding` on arguments, results and ops, become
//    the HLO shardings XLA's Shardy export produces; sdy.sharding_constraint / sdy.reshard become custom-call
//    "Sharding" and a fully manual sdy.manual_computation the shard_map pattern (Sharding + SPMDFullToShardShape, the
//    body inlined, Sharding {manual} + SPMDShardToFullShape). See lower_sdy.cc.
//  - CHLO ops expand into HLO like StableHLO's CHLO legalization: lgamma, digamma, erfc, erf_inv, bessel_i1e,
//    zeta, polygamma, next_after, square, conj, is_*inf, the broadcasting binary ops, and the real-typed acos, acosh,
//    asin, asinh, atan, atanh, cosh, sinh and tan. Where HLO has an opcode the legalization would otherwise spell out
//    at length (complex acos/asin/..., erf, top_k, mulhi, ragged_dot, scan), the op maps to it. Others are reported
//    as "unsupported op 'chlo.foo'" at the op.
//  - Quantized types, unbounded dynamic dimensions and ops whose shapes depend on runtime values are rejected with a
//    diagnostic; the dynamic_* ops are accepted when their result type is static and shape operands are constants.
//  - Shape-polymorphic exports (jax.export with symbolic dimensions: `?` dims, get_dimension_size, shape_assertion,
//    the stablehlo.dynamic_* custom calls) are refined when StableHloParseOptions::entry_argument_shapes gives the
//    entry's argument shapes, as XLA's stablehlo-refine-shapes does on load: see lower_refine.cc.
//  - What exporters leave around StableHLO (lower_dialect_ops.cc): arith ops on tensors and scalars (signless integers
//    are signed; the unsigned ops reinterpret the bits), math ops with an HLO opcode, and the static tensor ops
//    (empty, cast, dim, extract, insert, from_elements, splat, expand/collapse_shape, reshape, concat,
//    extract/insert_slice). `dense_resource<key>` takes its value from the file's {-# dialect_resources #-} section.
//  - Attributes and types of dialects xlac does not know (#ttcore<...>, !ttcore.tile<...>, tensor encodings) are kept
//    as opaque text and dropped; a value of such a type, a sparse encoding or an op of such a dialect is a located
//    error naming it. A file of several top-level modules (a compiler log) uses its StableHLO modules (merged when
//    their functions differ, as split-input-file chunks) and skips the others with one warning.
//  - On the entry function, tf.aliasing_output becomes input_output_alias and jax.buffer_donor buffer_donor.
//  - The reference interpreter's ops are kept for a runner: `interpreter.run_parallel` becomes a side-effecting
//    custom-call "interpreter.run_parallel" whose called computations are the distinct programs, with backend_config
//    {"programs":[[i, ...], ...]} indexing them per replica (row) and partition (column); its operands and results
//    are the processes' arguments and results in grid order. `interpreter.probe` becomes a side-effecting identity
//    custom-call "interpreter.probe" with backend_config {"probe_id":"..."}.
//
// Test-harness checks (the StableHLO interpreter's `check` dialect and `stablehlo.custom_call @check.*`) become
// side-effecting custom-calls with result shape `()` and operands (actual, expected):
//  - custom_call_target is "check.expect_eq", "check.expect_almost_eq", "check.expect_close" or
//    "check.expect_serialized_eq" (the `_const` dialect forms drop the suffix; their expected dense<> value becomes
//    a constant operand).
//  - The check-dialect forms always carry their tolerances in backend_config as a JSON object, defaults filled in:
//    expect_almost_eq: {"tolerance":1e-4 or the given value}; expect_close: {"max_ulp_difference":N,
//    "min_ulp_difference":M} (defaults 1 and 0); expect_serialized_eq: {"probe_id":"...","iter":N}; expect_eq: none.
//  - `stablehlo.custom_call @check.*` keeps its target and its own backend_config (normally empty): a runner then
//    applies the testdata defaults (3 ULP for expect_close, absolute 1e-3 for expect_almost_eq, exact for
//    expect_eq). An empty backend_config therefore always means "custom-call defaults".
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xlac {

struct StableHloParseOptions {
  // Limits that keep hostile input from exhausting the stack or memory.
  int max_nesting_depth = 256;
  int64_t max_literal_bytes = int64_t{1} << 30;
  // The shapes of the entry function's arguments, for a module with unbounded `?` dimensions (a shape-polymorphic
  // export): each `?` takes the given size, and the module is lowered with every shape static (lower_refine.cc). A
  // given static size that differs from the declared one is an error at the argument; an element type of kInvalid
  // is not checked. Ignored for modules without `?` dimensions; empty: such a module is an error.
  std::vector<Shape> entry_argument_shapes;
};

// Parses a whole `module { func.func ... }` (or bare functions). On failure reports diagnostics (`file:line:col`
// at the offending token or op) and returns nullptr; nothing is partially returned.
std::unique_ptr<Module> ParseStableHloModule(const SourceFile& file, DiagnosticEngine& diags,
                                             const StableHloParseOptions& options = {});

// Convenience wrapper: the rendered diagnostics become the status message.
absl::StatusOr<std::unique_ptr<Module>> ParseStableHloModule(std::string_view text,
                                                             std::string_view source_name = "<text>",
                                                             const StableHloParseOptions& options = {});

}  // namespace xlac
