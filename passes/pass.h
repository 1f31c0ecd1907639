// The pass interface and registry. A pass is a free function that transforms a module and reports whether it
// changed anything; the pass manager (not the pass) verifies, times and dumps.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

// Returns true if the module changed. Errors are internal failures or user errors the pass cannot handle.
using PassFn = std::function<absl::StatusOr<bool>(Module&)>;

struct PassInfo {
  std::string name;         // the --passes= name
  std::string description;  // one line for --list-passes
  PassFn run;
};

// All registered passes, sorted by name. The table lives in passes/registry.cc.
const std::vector<PassInfo>& RegisteredPasses();
const PassInfo* FindPass(std::string_view name);

}  // namespace xlac
