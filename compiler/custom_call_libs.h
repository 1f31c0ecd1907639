// --custom-call-lib for the front doors (xla-run, xlac, the Python package): loading XLA FFI handler libraries
// (runtime/ffi/ffi_library.h), checking that every typed-FFI custom call of a module has a handler, and putting the
// libraries in front of an executor's own custom-call handler. docs/custom_calls.md describes the flag.
#pragma once

#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "runtime/ffi/ffi_library.h"
#include "runtime/harness/checks.h"

namespace xlac {

// The --custom-call-lib arguments, loaded in order; nullptr when there are none. Errors say which library could not
// be loaded and why (the dynamic loader's message).
absl::StatusOr<std::shared_ptr<const ffi::HandlerLibraries>> LoadCustomCallLibs(const std::vector<std::string>& specs);
// The same for a tool: the error goes to `err` as "TOOL: error: ..." and the result is false.
bool LoadCustomCallLibs(std::string_view tool, const std::vector<std::string>& specs,
                        std::shared_ptr<const ffi::HandlerLibraries>& libs, std::ostream& err);

// Reports an error diagnostic at every typed-FFI custom call (api_version = API_VERSION_TYPED_FFI) whose target no
// library provides (the first call of each target). Returns false if there was one; true without libraries.
bool CheckCustomCallLibs(const Module& module, const ffi::HandlerLibraries* libs, DiagnosticEngine& diags);
// The same for a tool: the diagnostics are rendered against `file` to `err`.
bool CheckCustomCallLibs(const Module& module, const ffi::HandlerLibraries* libs, const SourceFile& file,
                         std::ostream& err);

// The custom-call handler of an executor (interpreter or JIT): targets the libraries provide go to them, the rest to
// `fallback`. Without libraries, `fallback` itself. `source_name` names the module's file in handler errors.
ffi::CustomCallFn WithCustomCallLibs(const ffi::HandlerLibraries* libs, ffi::CustomCallFn fallback,
                                     std::string source_name);
// The tools' handler: the libraries' targets, then the test-harness checks (`check.*`) that `checks` collects.
ffi::CustomCallFn WithCustomCallLibs(const ffi::HandlerLibraries* libs, harness::CheckCollector& checks,
                                     std::string source_name);

}  // namespace xlac
