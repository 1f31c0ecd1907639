// Parser for XLA's HLO text format.
#pragma once

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xlac {

struct HloParseOptions {
  // Name used for a module written without an `HloModule` header (XLA accepts bare computations).
  std::string default_module_name = "module";
  // Limits that keep hostile input from exhausting memory or stack.
  int max_nesting_depth = 256;
  int64_t max_literal_bytes = int64_t{1} << 30;
  // Reject what XLA's parser rejects even where real exporters write it with one unambiguous meaning (e.g.
  // `api_version=API_VERSION_UNSPECIFIED`, which PyTorch/XLA dumps carry); otherwise such text is read with a warning.
  bool strict = false;
};

// Parses a whole module. On failure returns nullptr after reporting at least one error to `diags`; nothing is
// partially returned. `file` supplies the name and text (and a line offset for split-input chunks).
std::unique_ptr<Module> ParseHloModule(const SourceFile& file, DiagnosticEngine& diags,
                                       const HloParseOptions& options = {});

// Convenience wrapper: the rendered diagnostics become the status message.
absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(std::string_view text, std::string_view source_name = "<text>",
                                                       const HloParseOptions& options = {});

// Parses a standalone shape ("f32[2,3]{1,0}"); for tests and tools.
absl::StatusOr<Shape> ParseShape(std::string_view text);

}  // namespace xlac
