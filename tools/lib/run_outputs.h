// Writing a run's outputs: every array leaf as <dir>/<label>.npy (xla-run --output-dir).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "tools/lib/run_driver.h"

namespace xlac {

// All files are written under temporary names first and renamed only when every one was written, so a failure
// leaves no partial set of outputs behind. Errors go to `err`; returns false on failure.
bool WriteOutputs(const std::string& dir, const std::vector<LabeledOutput>& outputs, std::ostream& err);

}  // namespace xlac
