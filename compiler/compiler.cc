#include "compiler/compiler.h"

#include <charconv>
#include <optional>
#include <string_view>

#include "frontend/module_input.h"
#include "ir/device_counts.h"
#include "passes/annotation_custom_calls.h"
#include "passes/codegen_prepare.h"
#include "passes/library_custom_calls.h"
#include "passes/pass.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/tt_custom_calls.h"
#include "passes/verifier.h"

namespace xlac {
namespace {

// The SPMD passes state an instruction's place as a "line:col: " prefix of their messages (they have no
// DiagnosticEngine of their own); it becomes the diagnostic's location.
void ReportMessage(Severity severity, std::string_view message, DiagnosticEngine& diags) {
  SourceLoc loc;
  const size_t colon = message.find(':');
  const size_t second = colon == std::string_view::npos ? colon : message.find(':', colon + 1);
  if (second != std::string_view::npos && second + 1 < message.size() && message[second + 1] == ' ') {
    int32_t line = 0, col = 0;
    auto [p1, e1] = std::from_chars(message.data(), message.data() + colon, line);
    auto [p2, e2] = std::from_chars(message.data() + colon + 1, message.data() + second, col);
    if (e1 == std::errc() && e2 == std::errc() && p1 == message.data() + colon && p2 == message.data() + second) {
      loc = SourceLoc{line, col};
      message = message.substr(second + 2);
    }
  }
  diags.Report(severity, loc, std::string(message));
}

// The partition stage's passes; spmd-partitioner is run directly for its report.
const std::vector<std::string>& PartitionSteps() {
  static const std::vector<std::string> kSteps = {"sharding-propagation", "spmd-partitioner"};
  return kSteps;
}

}  // namespace

std::unique_ptr<Module> LoadModule(const SourceFile& file, const CompilerOptions& options, DiagnosticEngine& diags,
                                   const std::function<void(const Module&)>& parsed) {
  HloParseOptions parse_options;
  parse_options.strict = options.strict;
  std::unique_ptr<Module> module = ParseModuleAnyFormat(file, diags, parse_options, options.entry_argument_shapes);
  if (module == nullptr) {
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "failed to parse the module");
    return nullptr;
  }
  if (parsed) parsed(*module);
  if (!ResolveDeviceCounts(*module, DeviceCountOptions{options.num_partitions, options.num_replicas}, diags) ||
      !VerifyModule(*module, diags) ||
      !RewriteAnnotationCustomCalls(*module, AnnotationCallOptions{options.custom_call_identity}, diags) ||
      !RewriteLibraryCustomCalls(*module, diags) || !RewriteTtCustomCalls(*module, diags)) {
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "module failed verification");
    return nullptr;
  }
  return module;
}

absl::StatusOr<bool> PartitionModule(Module& module, const CompilerOptions& options, SpmdReport& report,
                                     DiagnosticEngine& diags) {
  if (options.num_partitions > 0) module.mutable_config().num_partitions = options.num_partitions;
  if (options.num_replicas > 0) module.mutable_config().replica_count = options.num_replicas;
  if (module.config().num_partitions <= 1 || !NeedsPartitioning(module)) return false;
  // Fusion before partitioning (the design's order): the partitioner partitions each fusion as a unit.
  OptimizationOptions before = options.optimization;
  before.stage = OptimizationStage::kBeforePartitioning;
  if (absl::StatusOr<bool> optimized = RunOptimizationPipeline(module, before, diags); !optimized.ok()) {
    if (!diags.has_errors()) ReportMessage(Severity::kError, std::string(optimized.status().message()), diags);
    return optimized.status();
  }
  CompileObserver* observer = options.optimization.observer;
  for (const std::string& name : PartitionSteps()) {
    std::optional<ScopedPhase> phase(std::in_place, observer, "pass " + name, "pass");
    absl::StatusOr<bool> changed =
        name == "spmd-partitioner" ? RunSpmdPartitioner(module, options.spmd, &report) : FindPass(name)->run(module);
    phase.reset();
    if (changed.ok() && observer != nullptr) observer->DumpAfterPass(module, "spmd", name);
    if (!changed.ok()) {
      const std::string message(changed.status().message());
      ReportMessage(Severity::kError, message, diags);
      return absl::Status(changed.status().code(), diags.diagnostics().back().message);
    }
  }
  if (!VerifyModule(module, diags)) {
    diags.Error(SourceLoc{}, "internal error: the partitioned module does not verify");
    return absl::InternalError("the partitioned module does not verify");
  }
  // Work the partitioner could only do on whole arrays is never silent.
  for (const std::string& w : report.warnings) ReportMessage(Severity::kWarning, w, diags);
  return true;
}

std::vector<PipelineStep> DefaultPipeline(const OptimizationOptions& optimization) {
  std::vector<PipelineStep> steps;
  auto add = [&steps](const char* stage, const std::vector<std::string>& names) {
    for (const std::string& name : names) steps.push_back({stage, name});
  };
  OptimizationOptions stage = optimization;
  add("load", {"parse", "verify", "annotation-custom-calls", "library-custom-calls", "tt-custom-calls"});
  stage.stage = OptimizationStage::kBeforePartitioning;
  add("optimize", OptimizationPipeline(stage));
  add("partition", PartitionSteps());
  add("partition", {"verify"});
  stage.stage = OptimizationStage::kAfterPartitioning;
  add("layout", OptimizationPipeline(stage));
  add("prepare", CodegenPreparePipeline());
  add("prepare", {"buffer-assignment"});
  add("codegen", {"llvm-emit", "llvm-optimize", "machine-code"});
  return steps;
}

}  // namespace xlac
