// The one table of passes. Add a pass here (kept sorted by name) and document it in docs/passes.md.
#include <algorithm>

#include "passes/cse.h"
#include "passes/dce.h"
#include "passes/pass.h"

namespace xlac {

const std::vector<PassInfo>& RegisteredPasses() {
  static const std::vector<PassInfo>* const kPasses = [] {
    auto* passes = new std::vector<PassInfo>{
        {"cse", "Merge identical side-effect-free instructions within each computation", RunCse},
        {"dce", "Remove unused side-effect-free instructions and computations unreachable from the entry", RunDce},
    };
    std::sort(passes->begin(), passes->end(), [](const PassInfo& a, const PassInfo& b) { return a.name < b.name; });
    return passes;
  }();
  return *kPasses;
}

const PassInfo* FindPass(std::string_view name) {
  for (const PassInfo& pass : RegisteredPasses()) {
    if (pass.name == name) return &pass;
  }
  return nullptr;
}

}  // namespace xlac
