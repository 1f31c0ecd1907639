// The pass pipeline that establishes buffer assignment's preconditions (passes/buffer_assignment.h) after
// async-to-sync, fusion-inliner and scan-expander (codegen lowers neither async ops, fusions nor scans; async-to-sync
// comes first because an async fusion-start/done becomes a fusion; scan-expander's calls of the scan body are inlined
// next): call-inliner, flatten-call-graph, layout-copies, dce, copy-insertion,
// verifying after each. Then every output fusion gets a fused computation of its own (buffer assignment aliases the
// fused dot to the fusion's buffer).
//
// Precondition: the module verifies. A failure is an error of the named pass (or a verification failure after it,
// which is a compiler bug; the verifier's first message is included).
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/module.h"
#include "passes/compile_observer.h"

namespace xlac {

// `observer` (may be null) times and dumps each step.
// The pass names PrepareForCodegen runs, in order.
const std::vector<std::string>& CodegenPreparePipeline();

absl::Status PrepareForCodegen(Module& module, CompileObserver* observer = nullptr, bool verify_each = true);

}  // namespace xlac
