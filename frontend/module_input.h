// Reading a module whose format is inferred: HLO text or StableHLO MLIR text. Shared by xla-opt, xla-run and
// xlac so the three accept exactly the same inputs.
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "frontend/hlo/parser.h"
#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

enum class ModuleFormat { kHlo, kStableHlo };

// `.mlir` files are StableHLO; otherwise the first token after blanks and `//` comments decides: `module`,
// `func.func`, `"builtin.module"`, `"func.func"` or `#` (an MLIR alias) mean StableHLO, anything else HLO.
ModuleFormat DetectModuleFormat(std::string_view filename, std::string_view text);

// Parses `file` with the parser DetectModuleFormat picks (by the file's name and text). On failure the
// diagnostics hold at least one error and the result is nullptr. `hlo_options` apply to HLO text.
// `entry_argument_shapes` refine a shape-polymorphic StableHLO module (StableHloParseOptions::entry_argument_shapes);
// HLO text ignores them.
std::unique_ptr<Module> ParseModuleAnyFormat(const SourceFile& file, DiagnosticEngine& diags,
                                             const HloParseOptions& hlo_options = {},
                                             const std::vector<Shape>& entry_argument_shapes = {});

}  // namespace xlac
