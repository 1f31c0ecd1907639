// xla-run's inputs: files and the entry arguments (tools/lib/run_arguments.cc).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/literal.h"
#include "tools/lib/run_options.h"

namespace xlac {

// Reads a whole file (a regular file in one read, anything else to its end). False with `error` set otherwise.
bool ReadFile(const std::string& path, std::string& contents, std::string& error);

// The shapes of the --input .npy files (element type kInvalid: the parameter's decides how the file reads), which
// refine a shape-polymorphic StableHLO module (CompilerOptions::entry_argument_shapes). Empty when there are no
// inputs or a header cannot be read: BuildArguments then reports the file's problem.
std::vector<Shape> InputShapes(const RunOptions& options);

// Builds the entry arguments from options.inputs (.npy, one per parameter, checked against its shape) or, without
// them, seeded values (docs/cli.md, xla-run step 3). Returns false after printing an error to `err`.
bool BuildArguments(const RunOptions& options, const Computation& entry, std::vector<Literal>& args, std::ostream& err);

}  // namespace xlac
