#include "passes/pass_manager.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace xlac {

absl::Status PassManager::AddPasses(const std::vector<std::string>& names) {
  std::vector<PassInfo> found;
  for (const std::string& name : names) {
    const PassInfo* pass = FindPass(name);
    if (pass == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown pass '", name, "' (see --list-passes)"));
    }
    found.push_back(*pass);
  }
  for (PassInfo& pass : found) passes_.push_back(std::move(pass));
  return absl::OkStatus();
}

absl::StatusOr<bool> PassManager::Run(Module& module, DiagnosticEngine& diags) {
  bool any_changed = false;
  for (const PassInfo& pass : passes_) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> changed = pass.run(module);
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (!changed.ok()) {
      return absl::Status(changed.status().code(),
                          absl::StrCat("pass '", pass.name, "' failed: ", changed.status().message()));
    }
    any_changed |= *changed;
    if (options_.observer != nullptr) {
      CompileObserver& observer = *options_.observer;
      int64_t end_ns = CompileObserver::NowNs();
      observer.RecordPhase(absl::StrCat("pass ", pass.name), "pass",
                           end_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed).count(), end_ns);
      observer.DumpAfterPass(module, options_.pipeline_name, pass.name);
    }
    if (options_.time_passes) {
      timings_.push_back({pass.name, std::chrono::duration_cast<std::chrono::nanoseconds>(elapsed), *changed});
    }
    if (options_.print_after_all != nullptr) {
      *options_.print_after_all << "// -----// IR Dump After " << pass.name << " //----- //\n";
      if (options_.printer) *options_.print_after_all << options_.printer(module);
      *options_.print_after_all << "\n";
    }
    if (options_.verify_each && !VerifyModule(module, diags, options_.verifier_options)) {
      return absl::InternalError(absl::StrCat("module failed verification after pass '", pass.name, "'"));
    }
  }
  return any_changed;
}

void PassManager::PrintTimingReport(std::ostream& os) const {
  std::chrono::nanoseconds total{0};
  for (const PassTiming& t : timings_) total += t.wall_time;
  auto seconds = [](std::chrono::nanoseconds ns) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6f", std::chrono::duration<double>(ns).count());
    return std::string(buf);
  };
  os << "===-------------------------------------------------------------------------===\n"
     << "                         ... Pass execution timing report ...\n"
     << "===-------------------------------------------------------------------------===\n"
     << "  Total Execution Time: " << seconds(total) << " seconds\n\n"
     << "  ----Wall Time----  ----Name----\n";
  for (const PassTiming& t : timings_) {
    double pct = total.count() > 0 ? 100.0 * t.wall_time.count() / total.count() : 0.0;
    char buf[64];
    std::snprintf(buf, sizeof(buf), "  %s (%5.1f%%)  ", seconds(t.wall_time).c_str(), pct);
    os << buf << t.pass_name << (t.changed ? "" : " (no change)") << "\n";
  }
  os << "  " << seconds(total) << " (100.0%)  Total\n";
}

}  // namespace xlac
