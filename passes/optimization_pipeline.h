// The default optimization pipeline: the named steps that run on a verified (and, when sharded, already
// partitioned) module before codegen preparation (passes/codegen_prepare.h). The list is the one place that says
// which optimizations run and in what order; `xla-opt --passes=` runs any of them by name.
//
// Every step preserves the module's numerics exactly (no reassociation: that belongs to codegen's default mode,
// docs/numerics.md), so the pipeline runs in exact mode too; the one exception, winograd-convolution, runs only
// when `exact` is false.
//
// Precondition: the module verifies. A failure is an error of the named pass.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/compile_observer.h"

namespace xlac {

// Which part of the optimization pipeline to run. The design's order puts fusion before the SPMD partitioner and
// layout assignment after it: kBeforePartitioning is simplification, sharding propagation and fusion
// (compiler/compiler.h's partition step runs it on a sharded module, so the partitioner partitions fusions),
// kAfterPartitioning is layout assignment and a late fusion for what partitioning and layout assignment created.
// kWhole is for a module that is not partitioned, in the same order: simplification, fusion, layout assignment, late
// fusion.
enum class OptimizationStage { kWhole, kBeforePartitioning, kAfterPartitioning };

struct OptimizationOptions {
  OptimizationStage stage = OptimizationStage::kWhole;
  int opt_level = 2;  // 0 runs nothing but tpu-dot-precision; 1 and above run the whole list
  // TPU dot numerics (ir/tpu_numerics.h): tpu-dot-precision first, at every level, so that HIGH precision dots are
  // the 3-pass split before anything else looks at them.
  bool tpu_numerics = false;
  // Exact numerics (codegen's CompileOptions::exact). false (codegen's default mode) also runs the rewrites that
  // change rounding: winograd-convolution first. true by default, so that callers that do not compile (the TPU
  // step model) see the module's own arithmetic.
  bool exact = true;
  // Times and dumps each step (passes/compile_observer.h); not owned, may be null.
  CompileObserver* observer = nullptr;
  // Verify the module after every step (PassManagerOptions::verify_each).
  bool verify_each = true;
};

// The pass names, in order, for `options`.
std::vector<std::string> OptimizationPipeline(const OptimizationOptions& options);

// Runs OptimizationPipeline(options) through the pass manager (verifying after each step); returns whether the
// module changed.
absl::StatusOr<bool> RunOptimizationPipeline(Module& module, const OptimizationOptions& options,
                                             DiagnosticEngine& diags);

}  // namespace xlac
