#include "tools/lib/spmd_driver.h"

#include <charconv>
#include <string>
#include <vector>

#include "passes/pass.h"
#include "passes/verifier.h"

namespace xlac {
namespace {

// Partitioner errors and warnings start with "line:col: " when they point at an instruction.
void ReportMessage(Severity severity, std::string text, DiagnosticEngine& diags) {
  std::string_view message = text;
  SourceLoc loc;
  size_t colon = message.find(':');
  size_t second = colon == std::string_view::npos ? colon : message.find(':', colon + 1);
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

void ReportStatus(const absl::Status& status, DiagnosticEngine& diags) {
  ReportMessage(Severity::kError, std::string(status.message()), diags);
}

}  // namespace

const std::vector<std::string>& SpmdPipeline() {
  static const std::vector<std::string> kPipeline = {"sharding-propagation", "spmd-partitioner"};
  return kPipeline;
}

bool PartitionModule(Module& module, int64_t num_partitions, int64_t num_replicas, const SourceFile& file,
                     SpmdReport& report, bool& partitioned, std::ostream& err) {
  partitioned = false;
  if (num_partitions > 0) module.mutable_config().num_partitions = num_partitions;
  if (num_replicas > 0) module.mutable_config().replica_count = num_replicas;
  if (module.config().num_partitions <= 1 || !NeedsPartitioning(module)) return true;
  DiagnosticEngine diags;
  for (const std::string& name : SpmdPipeline()) {
    absl::StatusOr<bool> changed;
    if (name == "spmd-partitioner") {
      changed = RunSpmdPartitioner(module, SpmdOptions{}, &report);
    } else if (const PassInfo* pass = FindPass(name)) {
      changed = pass->run(module);
    } else {
      continue;
    }
    if (!changed.ok()) {
      ReportStatus(changed.status(), diags);
      err << diags.Render(file);
      return false;
    }
  }
  if (!VerifyModule(module, diags)) {
    diags.Error(SourceLoc{}, "internal error: the partitioned module does not verify");
    err << diags.Render(file);
    return false;
  }
  // Work the partitioner could only do on whole arrays is never silent.
  DiagnosticEngine warnings;
  for (const std::string& w : report.warnings) ReportMessage(Severity::kWarning, w, warnings);
  if (!report.warnings.empty()) err << warnings.Render(file);
  partitioned = true;
  return true;
}

}  // namespace xlac
