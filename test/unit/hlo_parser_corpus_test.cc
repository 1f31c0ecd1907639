// Sweeps over the shared corpus (../shared/corpus/hlo): every HLO text file whose manifest says `ok` parses, XLA's
// parser tests that expect an error are rejected, and printing whatever parses is a fixed point (the long form of
// a parsed module parses again and prints the same text). Files that cannot be parsed standalone are listed with
// the reason.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "ir/module.h"

namespace xlac {
namespace {

std::filesystem::path CorpusRoot() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return std::filesystem::path(src) / ".." / "shared" / "corpus";
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" / "corpus";
}

// `ok` files that are not valid HLO on their own, or use syntax the IR cannot represent.
enum KnownReason {
  kTemplate,              // placeholders the C++ test substitutes (<<TYPE>>, {{STEP}}, $0, ...)
  kPrependedComputation,  // calls computations the C++ test prepends (scalar_add, ...)
  kTruncated,             // the test string was cut off when the corpus was extracted
};
struct KnownCorpusFailure {
  std::string_view file;  // relative to hlo/
  KnownReason reason;
};
// clang-format off
constexpr KnownCorpusFailure kKnownCorpusFailures[] = {
    {"cpu/service__cpu__tests__onednn_layer_norm_test/LayerNormTest.LayerNormTest0_BF16.hlo", kTruncated},
    {"cpu/service__cpu__tests__onednn_layer_norm_test/LayerNormTest.LayerNormTest0_BF16__2.hlo", kTruncated},
    {"cpu/service__cpu__tests__onednn_layer_norm_test/LayerNormTest.LayerNormTest0_F16.hlo", kTruncated},
    {"cpu/service__cpu__tests__onednn_layer_norm_test/LayerNormTest.LayerNormTest0_F16__2.hlo", kTruncated},
    {"cpu/service__cpu__tests__onednn_matmul_test/MatmulTest.BroadcastedAddAfterFusion__2.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsPhysicallyTransposing_LayoutChangingFusionProducer.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsPhysicallyTransposing_MixedLayoutProducer.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsPhysicallyTransposing_PhysicalTranspose.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsReduceInputFusion_ElementalReduction.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsReduceInputFusion_MultiOutputInputReduceFusion.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsReduceInputFusion_ReductionToVector.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.IsReduceInputFusion_SingleOutputLoopReduceFusion.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.ProducerConsumerFusionLoopFusionAndReduceFusion.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.ShapesCompatibleForMultiOutputFusion_DifferentLayouts.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.ShapesCompatibleForMultiOutputFusion_MultiOutputReduceFusion.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.ShapesCompatibleForMultiOutputFusion_NoReductionToVector.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__gpu_fusible_test/GpuFusibleTest.ShapesCompatibleForMultiOutputFusion_UnfusedOps.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__reduction_utils_test/ReductionUtilsTest.ReductionsAreMultioutputFusionCompatible.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__reduction_utils_test/ReductionUtilsTest.ReductionsAreNotMultioutputFusionCompatible_DifferentOperandShapes.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__reduction_utils_test/ReductionUtilsTest.ReductionsAreNotMultioutputFusionCompatible_DifferentOutputShapes.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__cublas_gemm_rewriter_test/CublasLtGemmRewriteTest.MatrixBiasMixTypeInPlace.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cublas_gemm_rewriter_test/CublasLtGemmRewriteTest.MatrixBiasMixTypeOutOfPlace.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cublas_gemm_rewriter_test/LegacyCublasGemmRewriteTest.MatrixBiasMixType.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cublas_gemm_rewriter_test/LegacyCublasGemmRewriteTest.MatrixBiasMixTypeBatched.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.DontFuseBiasWithDepthwiseConv.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.DontFuseScaledDepthwiseConv.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.Test3D.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.TestBias.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.TestBiasMultiCall.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.TestMatchMaxZeroOnly.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.TestRelu6OddChannels.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.TestScaledConvAndScaledSideInputWithBias.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__cudnn_fused_conv_rewriter_test/CudnnFusedConvRewriterTest.TestSideInputOnly.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.BatchedScaledABUnscaledDF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.DoNotRewriteOnPreAdaWithF32Output.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.Rank3ScaledABUnscaledDMatrixBiasPaddedF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABScaledDMatrixBiasWithDAmaxF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDBitcastF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDF32VectorBiasF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDF8Parameterized.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDF8ParameterizedBatched.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDPaddedF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDReluActivationF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDSelectF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.ScaledABUnscaledDVectorBiasThenReluActivationF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.UnscaledABInvScaledF32DF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.UnscaledABUnscaledDUnaryOpsWithConvertF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_fp8_test/ParameterizedFp8GemmRewriteTest.UnscaledABUnscaledDWithConvertF8.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__gemm_rewriter_test/ParameterizedGemmRewriteTest.GemmTypeCombinationCheck.hlo", kTemplate},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.DoNotGroupTooManyReductions.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.MultiOutputFusionDifferentReduceInputShapes.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.MultiOutputFusionDifferentReduceOutputShapes.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.MultiOutputFusionSiblingFusionCheckAgainstReduceOperand.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.MultiOutputFusionSiblingLoopsDifferentShapes.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.MultiOutputFusionSiblingReduceFusions.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.PreferFuseProducerIntoFusionConsumer.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.ProducerConsumerFusionAvoidsCycles.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.ProducerConsumerFusionDoNotFuseLoopReduceFusion.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.ProducerConsumerFusionElementwiseAndReduce.hlo", kPrependedComputation},
    {"gpu_pass_tests/service__gpu__transforms__multi_output_fusion_test/MultiOutputFusionTest.ProducerConsumerFusionLoopFusionAndReduce.hlo", kPrependedComputation},
    {"pass_tests/hlo__analysis__while_loop_analysis_test/line59.hlo", kTemplate},
    {"pass_tests/hlo__transforms__simplifiers__hlo_constant_folding_peak_heap_test/HloConstantFoldingTest.PeakHeapTest.hlo", kTruncated},
    {"pass_tests/service__hlo_verifier_test/HloVerifierTest.AllReduceDoneWithoutStart__2.hlo", kTemplate},
    {"pass_tests/service__hlo_verifier_test/HloVerifierTestAllowMixedPrecision.ReduceOperandComputationMismatch.hlo", kTemplate},
    {"pass_tests/service__latency_hiding_scheduler_test/LatencyHidingSchedulerTest.BalanceChainedCollectivePermutesLoopedEinsum3__2.hlo", kPrependedComputation},
    {"pass_tests/service__latency_hiding_scheduler_test/LatencyHidingSchedulerTest.BalanceChainedCollectivePermutesLoopedEinsum__2.hlo", kPrependedComputation},
    {"pass_tests/service__memory_space_assignment__memory_bound_loop_optimizer_test/LoopOptimizerBestFitHeapTest.TestRemoveChunk.hlo", kTruncated},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.Rewrite.hlo", kTruncated},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.RewriteReshape__2.hlo", kPrependedComputation},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.RewriteTranspose__2.hlo", kPrependedComputation},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.Rewrite__2.hlo", kPrependedComputation},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.RoundTripNoIota__2.hlo", kPrependedComputation},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.RoundTripOnlyIota__2.hlo", kPrependedComputation},
    {"pass_tests/service__topk_rewriter_test/TopkRewriterTest.RoundTripValueOnly__2.hlo", kPrependedComputation},
    {"pass_tests/service__while_loop_simplifier_test/WhileLoopSimplifierTest.RemoveConstantFromLoopCarry__2.hlo", kTemplate},
    {"pass_tests/service__while_loop_unroller_test/WhileLoopUnrollerTest.MatchShapeCoveringDSNested.hlo", kTemplate},
    {"pass_tests/service__while_loop_unroller_test/line121.hlo", kTemplate},
    {"pass_tests/service__while_loop_unroller_test/line364.hlo", kTemplate},
    {"xla_tests/tests__collective_ops_test/Fp8CollectiveOpsTest.AllGather_8BitFloat.hlo", kTemplate},
    {"xla_tests/tests__collective_pipeline_parallelism_test/CollectivePipelineParallelismTest.NaiveBFSMb5Cr2Replica4SendRecvPartiallyPipelined.hlo", kPrependedComputation},
    {"xla_tests/tests__collective_pipeline_parallelism_test/CollectivePipelineParallelismTest.NaiveBFSMicrobatch4CircularRepeat2Replica4.hlo", kPrependedComputation},
    {"xla_tests/tests__collective_pipeline_parallelism_test/CollectivePipelineParallelismTest.NaiveBFSMicrobatch4Replica4.hlo", kPrependedComputation},
    {"xla_tests/tests__collective_pipeline_parallelism_test/CollectivePipelineParallelismTest.NaiveWoDirectBufferDependencyBFSMicrobatch5CircularRepeat2Replica4.hlo", kPrependedComputation},
    {"xla_tests/tests__convolution_test/ConvolutionHloTest.TestFusedConv2D.hlo", kTruncated},
    {"xla_tests/tests__convolution_test/ConvolutionHloTest.TestFusedConv2D__2.hlo", kTruncated},
    {"xla_tests/tests__convolution_test/Transposed2DConvHloTest.Simple.hlo", kTruncated},
    {"xla_tests/tests__multioutput_fusion_test/MultiOutputFusionTest.MultiOutputReduceCanonicalizationIsSame.hlo", kPrependedComputation},
    {"xla_tests/tests__multioutput_fusion_test/MultiOutputFusionTest.MultiOutputReduceFusionMajorWithExtraOutput.hlo", kPrependedComputation},
    {"xla_tests/tests__multioutput_fusion_test/MultiOutputFusionTest.MultiOutputReduceFusionScalar.hlo", kPrependedComputation},
};
// clang-format on

TEST(HloParserCorpus, ParsesOkFilesAndRejectsParserErrors) {
  const std::filesystem::path root = CorpusRoot();
  std::ifstream manifest(root / "hlo" / "manifest.tsv");
  if (!manifest) GTEST_SKIP() << "corpus not found at " << root;
  std::set<std::string> known;
  for (const KnownCorpusFailure& k : kKnownCorpusFailures) known.insert("hlo/" + std::string(k.file));
  int ok_parsed = 0, ok_known = 0, errors_rejected = 0, errors_accepted_elsewhere = 0;
  std::string line;
  std::getline(manifest, line);
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() < 11 || (cols[2] != "hlo_module" && cols[2] != "hlo_no_header")) continue;
    if (cols[10].find("templated") != std::string::npos) continue;
    std::ifstream in(root / cols[0], std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    // Files XLA rejects are parsed with XLA's strictness; by default xlac reads what real exporters write with one
    // meaning (PyTorch/XLA's api_version=API_VERSION_UNSPECIFIED) with a warning.
    HloParseOptions options;
    options.strict = cols[3] != "ok";
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, cols[0], options);
    const bool parser_test = cols[0].find("hlo/parser_test/") == 0;
    if (cols[3] == "ok") {
      if (module.ok()) {
        ++ok_parsed;
      } else if (known.contains(cols[0]) && !parser_test) {
        ++ok_known;
      } else {
        ADD_FAILURE() << "expected to parse: " << module.status().message();
      }
    } else if (!module.ok()) {
      ++errors_rejected;
    } else if (parser_test) {
      ADD_FAILURE() << "XLA's parser rejects " << cols[0] << " but it parsed";
    } else {
      ++errors_accepted_elsewhere;  // rejected later by XLA (verifier, passes, runtime), not by its parser
    }
  }
  std::cout << "corpus: " << ok_parsed << " ok files parsed, " << ok_known << " known unparseable, " << errors_rejected
            << " error files rejected, " << errors_accepted_elsewhere << " error files left to later stages\n";
  EXPECT_GE(ok_parsed, 2500);  // guards against a moved or truncated corpus
}

// One manifest row, split on tabs.
std::vector<std::vector<std::string>> ManifestRows(const std::filesystem::path& root) {
  std::vector<std::vector<std::string>> rows;
  std::ifstream manifest(root / "hlo" / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    rows.push_back(std::move(cols));
  }
  return rows;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The first differing line, for readable failures.
std::string FirstDifference(const std::string& a, const std::string& b) {
  std::stringstream sa(a), sb(b);
  std::string la, lb;
  for (int line = 1;; ++line) {
    bool more_a = static_cast<bool>(std::getline(sa, la));
    bool more_b = static_cast<bool>(std::getline(sb, lb));
    if (!more_a && !more_b) return "texts differ only in trailing newlines";
    if (!more_a || !more_b || la != lb) {
      return "line " + std::to_string(line) + "\n  first:  " + (more_a ? la : "<eof>") +
             "\n  second: " + (more_b ? lb : "<eof>");
    }
  }
}

// Printing must not depend on how the text was written: the print of a parsed module parses again (the printer
// only writes what the parser reads) and prints identically (computation and instruction order, async syntax
// sugar and every attribute are canonical). Long form only: the short form leaves control-predecessors out, which
// changes the instruction order of the re-parse. Every HLO text file that parses is checked, `error` ones too, and
// so is a Module::Clone of it.
TEST(HloParserCorpus, PrintingAParsedModuleIsAFixedPoint) {
  const std::filesystem::path root = CorpusRoot();
  const std::vector<std::vector<std::string>> rows = ManifestRows(root);
  if (rows.empty()) GTEST_SKIP() << "corpus not found at " << root;
  int checked = 0;
  for (const std::vector<std::string>& cols : rows) {
    if (cols.size() < 4 || (cols[2] != "hlo_module" && cols[2] != "hlo_no_header")) continue;
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(ReadFile(root / cols[0]), cols[0]);
    if (!module.ok()) continue;
    const std::string first = PrintModule(**module);
    absl::StatusOr<std::unique_ptr<Module>> reparsed = ParseHloModule(first, cols[0] + " (printed)");
    if (!reparsed.ok()) {
      ADD_FAILURE() << "the print of " << cols[0] << " does not parse:\n" << reparsed.status().message();
      continue;
    }
    const std::string second = PrintModule(**reparsed);
    EXPECT_EQ(first, second) << cols[0] << ": printing the re-parse differs at " << FirstDifference(first, second);
    // Module::Clone (what codegen compiles) must be indistinguishable from the original in print.
    const std::string cloned = PrintModule(*(*module)->Clone());
    EXPECT_EQ(first, cloned) << cols[0] << ": printing the clone differs at " << FirstDifference(first, cloned);
    ++checked;
  }
  std::cout << "corpus: " << checked << " printed modules re-parsed and re-printed identically\n";
  EXPECT_GE(checked, 2500);  // guards against a moved or truncated corpus
}

}  // namespace
}  // namespace xlac
