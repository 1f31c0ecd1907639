// Runs a pipeline of registered passes over a module. The pass manager, not the passes, verifies the module after
// each pass, times the passes and dumps the module after each one; passes only transform.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/compile_observer.h"
#include "passes/pass.h"
#include "passes/verifier.h"

namespace xlac {

struct PassManagerOptions {
  // Verify after every pass; a pass that leaves an invalid module is a compiler bug, reported as such.
  bool verify_each = true;
  VerifierOptions verifier_options;
  // When set, each pass's module is written here after the pass runs, under the header
  // "// -----// IR Dump After <name> //----- //". `printer` renders the module (the pass library does not depend
  // on the HLO printer, so the caller supplies it).
  std::ostream* print_after_all = nullptr;
  std::function<std::string(const Module&)> printer;
  // Record the wall time of each pass (see PassManager::timings and PrintTimingReport).
  bool time_passes = false;
  // When set (not owned): each pass is recorded as a phase "pass NAME" and, when it dumps, the module is dumped
  // after each pass as a step of pipeline `pipeline_name` (passes/compile_observer.h).
  CompileObserver* observer = nullptr;
  std::string pipeline_name = "passes";
};

struct PassTiming {
  std::string pass_name;
  std::chrono::nanoseconds wall_time{0};
  bool changed = false;
};

class PassManager {
 public:
  explicit PassManager(PassManagerOptions options = {}) : options_(std::move(options)) {}

  void AddPass(PassInfo pass) { passes_.push_back(std::move(pass)); }
  // Appends the registered passes named in `names`, in order. Unknown names are a user error (InvalidArgument)
  // and add nothing.
  absl::Status AddPasses(const std::vector<std::string>& names);
  const std::vector<PassInfo>& passes() const { return passes_; }

  // Runs every pass in order and returns whether any changed the module. Stops at the first failure: a pass error
  // is returned as is (prefixed with the pass name); a verification failure after a pass reports the verifier's
  // diagnostics to `diags` and returns an Internal error naming the pass.
  absl::StatusOr<bool> Run(Module& module, DiagnosticEngine& diags);

  // One entry per pass run so far (only when time_passes is set), in run order.
  const std::vector<PassTiming>& timings() const { return timings_; }
  // A human-readable table of `timings()`.
  void PrintTimingReport(std::ostream& os) const;

 private:
  PassManagerOptions options_;
  std::vector<PassInfo> passes_;
  std::vector<PassTiming> timings_;
};

}  // namespace xlac
