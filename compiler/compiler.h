// The one compile pipeline of xlac. Every front door (xlac, xla-run, the C++ JIT API in api/jit.cc, the Python
// package) runs the same steps, in this order, through the functions below and codegen's back half:
//
//   load       LoadModule: parse (HLO or StableHLO text), device counts, verify, annotation, library and tt.* custom
//              calls
//   optimize   simplification and fusion (passes/optimization_pipeline.h, OptimizationStage::kBeforePartitioning)
//   partition  sharding-propagation, spmd-partitioner, verify
//   layout     layout assignment and a late fusion (OptimizationStage::kAfterPartitioning)
//
// For a sharded module on more than one partition, PartitionModule runs the optimize and partition stages and the
// front door compiles the result with codegen::CompileOptions::partitioned, so that codegen::PrepareModule runs
// only the layout stage. Any other module goes to codegen whole (OptimizationStage::kWhole), in the same order:
// simplification, fusion, layout assignment, late fusion.
// Then:
//   prepare    passes/codegen_prepare.h, run by codegen::PrepareModule, then buffer assignment
//   codegen    codegen::JitExecutable::Compile (ORC JIT) or codegen::CompileAot (object, assembly, LLVM IR)
//
// DefaultPipeline() names these steps as `xla-opt --list-pipeline` prints them. Front doors add checks of their
// own between the steps (custom-call kernels bound, TPU memory, elided constants given values), never passes: a
// pass list or a partitioning step outside this folder and codegen/pipeline.cc is a bug. No LLVM here (xla-opt
// links this library); C++ custom-call kernels, which need Clang, are compiler/kernel_sources.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/optimization_pipeline.h"
#include "passes/spmd/spmd_partitioner.h"

namespace xlac {

// What the front half of the pipeline needs to know; every front door fills one from its flags or arguments.
struct CompilerOptions {
  // Device counts given by the user (0: the module's, or what its collectives and shardings imply).
  int64_t num_partitions = 0;
  int64_t num_replicas = 0;
  // Custom-call targets declared to be identities (--custom-call-identity).
  std::vector<std::string> custom_call_identity;
  // Reject HLO text that XLA's parser rejects even where exporters write it with one meaning (--strict,
  // HloParseOptions::strict); otherwise such text is read with a warning.
  bool strict = false;
  // The entry arguments' shapes, which refine a shape-polymorphic StableHLO export (xla-run: the --input files'
  // shapes; xlac: --arg-shape). See StableHloParseOptions::entry_argument_shapes.
  std::vector<Shape> entry_argument_shapes;
  // The SPMD partitioner's options (--spmd-windowed-einsum-threshold-mib); its num_partitions is ignored (the
  // count above, or the module's, is written into the module first).
  SpmdOptions spmd;
  // The optimization steps the partition step runs before partitioning (opt level, numerics mode, observer); its
  // `stage` is ignored. Codegen runs the rest (codegen::CompileOptions::partitioned).
  OptimizationOptions optimization;
};

// Parses `file` (HLO text or StableHLO, by content), settles the device counts, verifies, and turns annotation-only
// custom calls, framework runtimes' library calls (passes/library_custom_calls.h) and Tenstorrent's tt.* calls
// (passes/tt_custom_calls.h) into what they mean. Returns null with the errors in `diags`; warnings and notes (a
// device count inferred, exporters' leniencies) are in `diags` either way. `parsed`, when given, is called once the
// module is parsed and before it is verified (a front door's observer starts there: it needs the module's name).
std::unique_ptr<Module> LoadModule(const SourceFile& file, const CompilerOptions& options, DiagnosticEngine& diags,
                                   const std::function<void(const Module&)>& parsed = nullptr);

// The partition step: when `module` has shardings and more than one partition (options' counts win over the
// module's), runs the optimization steps that come before partitioning (simplification, sharding propagation,
// fusion), then sharding propagation and the SPMD partitioner on it in place, verifies the result and fills
// `report`. Returns whether it partitioned; compile a module it partitioned with codegen::CompileOptions::partitioned.
// Errors (located at the instruction when the partitioner names one) are in `diags` and the status carries the
// message. Work the partitioner could only do on whole arrays becomes warnings in `diags` (the report keeps them,
// and its notes, for --emit=spmd-report).
absl::StatusOr<bool> PartitionModule(Module& module, const CompilerOptions& options, SpmdReport& report,
                                     DiagnosticEngine& diags);

// One step of the default pipeline: the stage it belongs to and its name (a pass name where it is a pass).
struct PipelineStep {
  std::string stage;
  std::string name;
};

// The default pipeline as it runs for `optimization` (opt level, numerics), stage by stage.
std::vector<PipelineStep> DefaultPipeline(const OptimizationOptions& optimization);

}  // namespace xlac
