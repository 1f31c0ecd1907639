#include "passes/compile_observer.h"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace xlac {
namespace {

// File names keep letters, digits, '-', '_' and '.'; anything else (a module named "jit_f(x)") becomes '_'.
std::string Sanitize(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.';
    if (!ok) c = '_';
  }
  return out.empty() ? std::string("module") : out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<CompileObserver>> CompileObserver::Create(
    DumpOptions dump, std::string module_name, std::function<std::string(const Module&)> printer) {
  auto observer = std::make_unique<CompileObserver>();
  if (!dump.pass_regex.empty()) {
    try {
      observer->pass_regex_ = std::make_unique<std::regex>(dump.pass_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid --dump-pass-regex '", dump.pass_regex, "': ", std::string(e.what())));
    }
  }
  if (!dump.dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(dump.dir, ec);
    if (ec)
      return absl::InvalidArgumentError(absl::StrCat("cannot create dump directory '", dump.dir, "': ", ec.message()));
  }
  observer->dump_ = std::move(dump);
  observer->module_name_ = Sanitize(module_name);
  observer->printer_ = std::move(printer);
  return observer;
}

int64_t CompileObserver::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::string CompileObserver::FileName(std::string_view suffix) const {
  char id[16];
  std::snprintf(id, sizeof id, "%04lld", static_cast<long long>(dump_.module_id));
  return (std::filesystem::path(dump_.dir) / absl::StrCat("module_", id, ".", module_name_, ".", std::string(suffix)))
      .string();
}

void CompileObserver::Write(const std::string& path, std::string_view contents) {
  if (!status_.ok()) return;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) {
    status_ = absl::UnavailableError(absl::StrCat("cannot write dump file '", path, "'"));
    return;
  }
  files_.push_back(path);
}

void CompileObserver::DumpModule(const Module& module, std::string_view suffix) {
  if (!dumping() || !printer_) return;
  Write(FileName(suffix), printer_(module));
}

void CompileObserver::DumpText(std::string_view suffix, std::string_view contents) {
  if (!dumping()) return;
  Write(FileName(suffix), contents);
}

void CompileObserver::DumpAfterPass(const Module& module, std::string_view pipeline, std::string_view pass) {
  if (!dumping() || !printer_) return;
  if (pass_regex_ != nullptr && !std::regex_search(std::string(pass), *pass_regex_)) return;
  char seq[16];
  std::snprintf(seq, sizeof seq, "%04lld", static_cast<long long>(++pass_dumps_));
  DumpModule(module, absl::StrCat(seq, ".", Sanitize(pipeline), ".after_", Sanitize(pass), ".txt"));
}

void CompileObserver::RecordPhase(std::string name, std::string category, int64_t begin_ns, int64_t end_ns) {
  phases_.push_back(PhaseTiming{std::move(name), std::move(category), begin_ns, end_ns});
}

}  // namespace xlac
