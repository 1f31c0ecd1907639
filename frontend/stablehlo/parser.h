// Parser for StableHLO MLIR text (pretty and generic op forms), producing the same HLO IR as the HLO parser, as
// XLA's StableHLO -> HLO translation maps it.
#pragma once

#include <memory>

#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

struct StableHloParseOptions {
  int max_nesting_depth = 256;
  int64_t max_literal_bytes = int64_t{1} << 30;
};

// Parses a whole `module { func.func ... }` (or bare functions). On failure reports diagnostics (with the same
// `file:line:col` quality as the HLO parser) and returns nullptr.
std::unique_ptr<Module> ParseStableHloModule(const SourceFile& file, DiagnosticEngine& diags,
                                             const StableHloParseOptions& options = {});

}  // namespace xlac
