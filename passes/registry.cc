// The one table of passes. Add a pass here (kept sorted by name) and document it in docs/passes.md.
#include <algorithm>

#include "passes/annotation_custom_calls.h"
#include "passes/async_to_sync.h"
#include "passes/call_inliner.h"
#include "passes/copy_insertion.h"
#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/f64_reference.h"
#include "passes/flatten_call_graph.h"
#include "passes/fusion/fusion.h"
#include "passes/fusion_inliner.h"
#include "passes/layout_assignment.h"
#include "passes/layout_copies.h"
#include "passes/library_custom_calls.h"
#include "passes/pass.h"
#include "passes/scan_expander.h"
#include "passes/simplify/algebraic_simplifier.h"
#include "passes/simplify/constant_folding.h"
#include "passes/split_donated_updates.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/tpu_dot_precision.h"
#include "passes/tpu_layouts.h"
#include "passes/tt_custom_calls.h"
#include "passes/winograd_convolution.h"

namespace xlac {

const std::vector<PassInfo>& RegisteredPasses() {
  static const std::vector<PassInfo>* const kPasses = [] {
    auto* passes = new std::vector<PassInfo>{
        {"algebraic-simplifier", "Rewrite exact algebraic identities and collapse chains of data-movement ops",
         RunAlgebraicSimplifier},
        {"annotation-custom-calls",
         "Rewrite custom-calls that only annotate (host offload, layout, Shardy round-trip markers) into copies",
         [](Module& module) { return RunAnnotationCustomCalls(module); }},
        {"async-to-sync", "Turn async collective start/done pairs and async-start/done into their synchronous forms",
         RunAsyncToSync},
        {"call-inliner", "Inline every call instruction (recursively) and drop the inlined callees", RunCallInliner},
        {"constant-folding", "Evaluate instructions whose operands are all constants into constants",
         RunConstantFolding},
        {"copy-insertion", "Add copies so that buffer assignment's aliasing never clobbers a live value",
         RunCopyInsertion},
        {"cse", "Merge identical side-effect-free instructions within each computation", RunCse},
        {"dce", "Remove unused side-effect-free instructions and computations unreachable from the entry", RunDce},
        {"f64-reference",
         "Compute every floating-point op in f64 (c64 in c128): the reference default-mode results are judged against",
         RunF64Reference},
        {"flatten-call-graph", "Clone sequentially called computations so each has exactly one call site",
         RunFlattenCallGraph},
        {"fusion", "Fuse elemental producers into consumers, reductions and GEMM epilogues (kLoop/kInput/kOutput)",
         RunFusion},
        {"fusion-inliner",
         "Replace every fusion codegen cannot emit as one kernel by its fused computation's instructions",
         RunFusionInliner},
        {"layout-assignment",
         "Choose the free instructions' layouts for the kernels; layout-only transposes and reshapes become bitcasts",
         RunLayoutAssignment},
        {"layout-copies",
         "Copy tuple operands and get-tuple-element results to their declared layouts where they differ",
         RunLayoutCopies},
        {"library-custom-calls",
         "Rewrite framework runtimes' custom calls whose meaning is an HLO op (JAX's CPU LAPACK potrf and trsm)",
         RunLibraryCustomCalls},
        {"scan-expander", "Rewrite every scan into a while loop that calls the scan body once per element",
         RunScanExpander},
        {"sharding-propagation", "Infer a sharding for every value from the annotated ones (forward and backward)",
         [](Module& module) { return RunShardingPropagation(module); }},
        {"split-donated-updates",
         "Split an output fusion that updates a donated parameter into its dot and a loop fusion writing in place",
         RunSplitDonatedUpdates},
        {"tpu-dot-precision",
         "Rewrite f32 dots and convolutions at HIGH precision into the 3-pass bf16 split a TPU runs",
         RunTpuDotPrecision},
        {"tpu-layouts",
         "Give every array the tiled layout a TPU stores it in (T(8,128) ...), for inspection; codegen never runs it",
         RunTpuLayouts},
        {"tt-custom-calls",
         "Rewrite Tenstorrent's tt.* custom calls (attention, KV-cache writes) into the HLO they mean",
         RunTtCustomCalls},
        {"winograd-convolution",
         "Rewrite stride-1 3x3 f32 convolutions with >= 32 channels as Winograd F(4x4,3x3) (changes rounding)",
         [](Module& module) { return RunWinogradConvolution(module); }},
        {"spmd-partitioner",
         "Rewrite a sharded module into the per-partition program, with the collectives that keep it equivalent",
         [](Module& module) { return RunSpmdPartitioner(module); }},
    };
    std::sort(passes->begin(), passes->end(), [](const PassInfo& a, const PassInfo& b) { return a.name < b.name; });
    return passes;
  }();
  return *kPasses;
}

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& pass : RegisteredPasses()) {
    if (pass.name == name) return &pass;
  }
  return nullptr;
}

}  // namespace xlac
