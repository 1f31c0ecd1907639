// The xla-opt driver: parse HLO text, verify, run passes, print. All of xla-opt's behaviour lives here so tests can
// run it in-process; tools/xla-opt/main.cc only forwards argv.
#pragma once

#include <cstdint>
#include <istream>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tools/lib/opt_options.h"

namespace xlac {

// One piece of a --split-input-file input: its text and how many lines of the file precede it.
struct InputChunk {
  std::string_view text;
  int32_t line_offset = 0;
};

// Splits `text` at lines consisting of "// -----" (surrounding whitespace allowed); the separator lines belong to
// no chunk. Always returns at least one chunk.
std::vector<InputChunk> SplitInputFile(std::string_view text);

// Processes `input` (called `input_name` in diagnostics) as `options` say: writes printed modules (each followed by
// its --explain-sharding report, if asked for) to `out` and diagnostics, dumps and timing reports to `err`. Ignores
// options.input_filename/output_filename/help/list_passes (OptMain handles those). Returns the process exit code: 0 on
// success, 1 on any user error.
int RunOpt(const OptOptions& options, std::string_view input_name, std::string_view input, std::ostream& out,
           std::ostream& err);

// The whole tool: parses `args` (argv without argv[0]), handles --help and --list-passes, reads the input file or
// `in` for "-", runs RunOpt, and writes the result to `out` or, only if everything succeeded, to the -o file.
int OptMain(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err);

// Convenience for main(): converts argv and uses the standard streams.
int OptMain(int argc, char** argv);

}  // namespace xlac
