// XLA FFI handler libraries (`--custom-call-lib=libfoo.so`, CompileOptions::custom_call_libs): shared libraries
// that export XLA FFI handlers, called through XLA's stable C ABI (runtime/ffi/xla_ffi_c_api.h) for the custom calls
// whose targets they provide. docs/custom_calls.md, "XLA FFI handler libraries", is the user-facing description.
//
// Finding a target's handler, library by library in the order given (the first that has it wins):
//   1. a mapping in the library's spec, `FILE.so:TARGET=SYMBOL[,TARGET=SYMBOL...]`, names the symbol;
//   2. otherwise the exported symbol named exactly as the target (`dlsym(lib, target)`), defined by the library
//      itself (a symbol of one of its dependencies, such as libm's `tanh`, is not a handler);
//   3. a target that is not a C identifier (`tt.sparse_matmul`) is also looked up with every character other than
//      [A-Za-z0-9_] replaced by '_' (`tt_sparse_matmul`).
// The symbol is the handler for the execute stage (an XLA_FFI_Handler, what XLA_FFI_DEFINE_HANDLER_SYMBOL exports);
// optional SYMBOL_instantiate, SYMBOL_prepare and SYMBOL_initialize are the other stages' handlers. Each handler is
// probed once with the metadata extension, as XLA does when it registers one: a handler built for another major
// version of the API is refused, one that does not answer the probe (older than the extension) is used as is.
//
// Calling: operands and results are flattened to their array leaves (tokens become TOKEN buffers without data),
// dense row-major with their logical dimensions; attributes come from backend_config (runtime/ffi/ffi_attributes.h).
// The instantiate stage runs once per call site and executable, before its first execution; prepare, initialize and
// execute run for every execution, on the device thread that executes the call. A handler's error becomes a status
// with the handler's code, naming the custom call, its target and location, and the handler's message.
//
// Libraries stay loaded for the life of the process once opened (as in XLA: handlers may keep state and threads,
// and dlclose would pull them out from under the executables that use them).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/ffi/xla_ffi_c_api.h"

namespace xlac::ffi {

// The custom-call handler signature of the interpreter and the JIT (interp::InterpreterOptions::custom_call_handler,
// codegen::CustomCallHandler).
using CustomCallFn =
    std::function<absl::StatusOr<Literal>(const Instruction& custom_call, const std::vector<const Literal*>& operands)>;

// One library argument: `FILE` or `FILE:TARGET=SYMBOL[,TARGET=SYMBOL...]`.
struct HandlerLibrarySpec {
  std::string path;
  std::vector<std::pair<std::string, std::string>> symbols;  // target -> symbol
};
absl::StatusOr<HandlerLibrarySpec> ParseHandlerLibrarySpec(std::string_view text);

// The handlers of one target.
struct FfiHandler {
  XLA_FFI_Handler_Bundle bundle{};
  std::string library;  // the path as given
  std::string symbol;   // the execute-stage symbol
  int api_major = XLA_FFI_API_MAJOR;
  int api_minor = XLA_FFI_API_MINOR;
  bool answered_probe = false;
  XLA_FFI_Handler_Traits traits = 0;
};

// xlac's XLA_FFI_Api function table (one per process: handlers may keep the pointer).
const XLA_FFI_Api* HostFfiApi();

// Turns an error a handler returned into a status (and destroys it); OK for nullptr.
absl::Status ConsumeFfiError(XLA_FFI_Error* error);

class HandlerLibraries : public std::enable_shared_from_this<HandlerLibraries> {
 public:
  // Opens every library (each argument as ParseHandlerLibrarySpec reads it). A library that cannot be opened is an
  // InvalidArgument error naming it with the loader's reason; so is a mapping whose symbol the library lacks.
  static absl::StatusOr<std::shared_ptr<const HandlerLibraries>> Load(const std::vector<std::string>& specs);
  ~HandlerLibraries();

  // The target's handler, or NotFound saying which symbols were looked for in which libraries. Thread-safe; results
  // are cached.
  absl::StatusOr<const FfiHandler*> Find(std::string_view target) const;
  bool Has(std::string_view target) const { return Find(target).ok(); }

  // Every custom call of `module` that must have a handler and has none: typed-FFI calls (api_version =
  // API_VERSION_TYPED_FFI) whose target no library provides, unless `handled_elsewhere(target)`. The first call of
  // each such target, in module order, with why its handler was not found (or was refused).
  struct Missing {
    SourceLoc loc;
    std::string message;
  };
  std::vector<Missing> MissingHandlers(const Module& module,
                                       const std::function<bool(std::string_view)>& handled_elsewhere) const;

  // A handler for the interpreter or the JIT: calls to targets the libraries provide go to them, the rest to
  // `fallback` (or fail with Unimplemented "unsupported custom call target" when there is none). The returned
  // function owns the per-call-site state of the instantiate stage, so give each executable its own (the state is
  // destroyed with the function). `source_name` is the module's file name in error messages.
  CustomCallFn MakeCustomCallHandler(CustomCallFn fallback, std::string source_name) const;

  const std::vector<HandlerLibrarySpec>& specs() const { return specs_; }

 private:
  struct Library {
    HandlerLibrarySpec spec;
    void* handle = nullptr;
  };
  HandlerLibraries() = default;
  absl::StatusOr<FfiHandler> Resolve(std::string_view target) const;

  std::vector<HandlerLibrarySpec> specs_;
  std::vector<Library> libraries_;
  mutable std::mutex mu_;
  mutable std::map<std::string, absl::StatusOr<FfiHandler>, std::less<>> cache_;
};

// Calls one custom call's handler outside any executor: builds the call frame for `operands` and the result shape,
// runs the stages (instantiate included, state dropped afterwards) and returns the result. For tests and tools.
absl::StatusOr<Literal> CallFfiHandler(const FfiHandler& handler, const Instruction& custom_call,
                                       const std::vector<const Literal*>& operands, std::string_view source_name);

}  // namespace xlac::ffi
