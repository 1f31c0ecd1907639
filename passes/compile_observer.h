// What one compilation reports besides its result: dumps of the module as it goes through the pipeline (XLA's
// --xla_dump_to layout, docs/observability.md) and the wall time of each phase. The tools create an observer and
// hand it down through typed options (PassManagerOptions::observer, codegen::CompileOptions::observer); the pass
// manager and the codegen pipeline report to it, passes never do. Without an observer nothing is timed or written.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

struct DumpOptions {
  std::string dir;  // empty: dump nothing
  // Empty: a file after every pass. Otherwise only after the passes whose name this ECMAScript regex matches
  // (anywhere in the name); the before/after-optimizations, buffer-assignment, LLVM IR and object dumps are always
  // written.
  std::string pass_regex;
  int64_t module_id = 1;  // the NNNN of module_NNNN: one per compilation in a process
};

// One timed phase, in the steady clock's nanoseconds (the runtime's trace events use the same clock).
struct PhaseTiming {
  std::string name;      // "parse", "pass algebraic-simplifier", "llvm optimize", ...
  std::string category;  // "frontend", "pass", "codegen", "llvm", "jit"
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
};

class CompileObserver {
 public:
  // `printer` renders a module for the dumps (the pass library does not depend on the HLO printer). Invalid
  // `dump.pass_regex` is reported by Create.
  static absl::StatusOr<std::unique_ptr<CompileObserver>> Create(DumpOptions dump, std::string module_name,
                                                                 std::function<std::string(const Module&)> printer);
  // Times phases only.
  CompileObserver() = default;

  bool dumping() const { return !dump_.dir.empty(); }
  // Writes "module_NNNN.NAME.<suffix>" (e.g. suffix "before_optimizations.txt"). The first I/O error is kept in
  // status(); later dumps are skipped, the compilation goes on.
  void DumpModule(const Module& module, std::string_view suffix);
  void DumpText(std::string_view suffix, std::string_view contents);
  // After pass `pass` of pipeline `pipeline`: "module_NNNN.NAME.SSSS.PIPELINE.after_PASS.txt", SSSS counting the
  // per-pass dumps of this module. Nothing when the pass does not match pass_regex.
  void DumpAfterPass(const Module& module, std::string_view pipeline, std::string_view pass);
  // The files written so far (full paths), in order.
  const std::vector<std::string>& files() const { return files_; }
  const absl::Status& status() const { return status_; }

  void RecordPhase(std::string name, std::string category, int64_t begin_ns, int64_t end_ns);
  const std::vector<PhaseTiming>& phases() const { return phases_; }

  static int64_t NowNs();

 private:
  std::string FileName(std::string_view suffix) const;
  void Write(const std::string& path, std::string_view contents);

  DumpOptions dump_;
  std::string module_name_;
  std::function<std::string(const Module&)> printer_;
  std::unique_ptr<std::regex> pass_regex_;
  int64_t pass_dumps_ = 0;
  std::vector<std::string> files_;
  absl::Status status_;
  std::vector<PhaseTiming> phases_;
};

// Times a scope as one phase of `observer` (nothing when null).
class ScopedPhase {
 public:
  ScopedPhase(CompileObserver* observer, std::string name, std::string category)
      : observer_(observer),
        name_(std::move(name)),
        category_(std::move(category)),
        begin_ns_(observer != nullptr ? CompileObserver::NowNs() : 0) {}
  ~ScopedPhase() {
    if (observer_ != nullptr)
      observer_->RecordPhase(std::move(name_), std::move(category_), begin_ns_, CompileObserver::NowNs());
  }
  ScopedPhase(const ScopedPhase&) = delete;
  ScopedPhase& operator=(const ScopedPhase&) = delete;

 private:
  CompileObserver* observer_;
  std::string name_, category_;
  int64_t begin_ns_;
};

}  // namespace xlac
