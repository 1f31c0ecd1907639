// Parsing a standalone HLO sharding ("{devices=[2,1]0,1}", "{replicated}", ...) outside of an HLO module, e.g. the
// mhlo.sharding strings of StableHLO.
#pragma once

#include <optional>
#include <string_view>

#include "ir/diagnostics.h"
#include "ir/sharding.h"

namespace xlac {

// Parses `text` as one sharding in HLO syntax followed by end of input. On failure reports one error to `diags`
// (line/column relative to `text`) and returns nullopt.
std::optional<Sharding> ParseShardingText(std::string_view text, DiagnosticEngine& diags);

}  // namespace xlac
