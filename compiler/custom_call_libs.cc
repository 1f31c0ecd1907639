#include "compiler/custom_call_libs.h"

#include <utility>

namespace xlac {

absl::StatusOr<std::shared_ptr<const ffi::HandlerLibraries>> LoadCustomCallLibs(const std::vector<std::string>& specs) {
  if (specs.empty()) return std::shared_ptr<const ffi::HandlerLibraries>();
  return ffi::HandlerLibraries::Load(specs);
}

bool LoadCustomCallLibs(std::string_view tool, const std::vector<std::string>& specs,
                        std::shared_ptr<const ffi::HandlerLibraries>& libs, std::ostream& err) {
  absl::StatusOr<std::shared_ptr<const ffi::HandlerLibraries>> loaded = LoadCustomCallLibs(specs);
  if (!loaded.ok()) {
    err << tool << ": error: " << loaded.status().message() << "\n";
    return false;
  }
  libs = *std::move(loaded);
  return true;
}

bool CheckCustomCallLibs(const Module& module, const ffi::HandlerLibraries* libs, DiagnosticEngine& diags) {
  if (libs == nullptr) return true;
  std::vector<ffi::HandlerLibraries::Missing> missing = libs->MissingHandlers(module, nullptr);
  for (const ffi::HandlerLibraries::Missing& m : missing) diags.Error(m.loc, m.message);
  return missing.empty();
}

bool CheckCustomCallLibs(const Module& module, const ffi::HandlerLibraries* libs, const SourceFile& file,
                         std::ostream& err) {
  DiagnosticEngine diags;
  if (CheckCustomCallLibs(module, libs, diags)) return true;
  err << diags.Render(file);
  return false;
}

ffi::CustomCallFn WithCustomCallLibs(const ffi::HandlerLibraries* libs, ffi::CustomCallFn fallback,
                                     std::string source_name) {
  if (libs == nullptr) return fallback;
  return libs->MakeCustomCallHandler(std::move(fallback), std::move(source_name));
}

ffi::CustomCallFn WithCustomCallLibs(const ffi::HandlerLibraries* libs, harness::CheckCollector& checks,
                                     std::string source_name) {
  return WithCustomCallLibs(
      libs,
      [&checks](const Instruction& inst, const std::vector<const Literal*>& operands) {
        return checks.Handle(inst, operands);
      },
      std::move(source_name));
}

}  // namespace xlac
