// Command-line options of xla-opt, parsed into a typed struct so the driver can be called from tests.
//
// The parser is hand-written rather than llvm::cl because llvm::cl options are process-global objects, and the
// driver is a library that tests instantiate many times in one process.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace xlac {

struct OptOptions {
  std::string input_filename = "-";  // "-" reads stdin
  std::string output_filename;       // empty: stdout; otherwise written only if the whole run succeeds
  std::vector<std::string> passes;   // --passes=a,b in order
  bool verify = true;                // --no-verify turns off verification of the input and after each pass
  bool print_short = false;
  // --strict: HloParseOptions::strict (reject what XLA's parser rejects, instead of a warning).
  bool strict = false;
  bool split_input_file = false;
  bool verify_diagnostics = false;
  bool print_after_all = false;
  bool time_passes = false;
  std::string dump_to;          // --dump-to: the module after each pass, as XLA names its dumps
  std::string dump_pass_regex;  // --dump-pass-regex: only after the matching passes
  // After each printed module, say where sharding-propagation got every instruction's sharding (requires the pass
  // in `passes`).
  bool explain_sharding = false;
  // --spmd-windowed-einsum-threshold-mib: the spmd-partitioner pass's SpmdOptions::windowed_einsum_threshold_bytes.
  int64_t spmd_windowed_einsum_threshold_bytes = 0;
  bool list_passes = false;
  bool list_pipeline = false;  // --list-pipeline: the default compile pipeline, one step a line
  bool help = false;
};

// Parses the arguments after argv[0]. Accepts `-flag` and `--flag`, `--passes=a,b` or `--passes a,b`,
// `-o FILE` or `-o=FILE`, `-` for stdin, and `--` to end option parsing. At most one positional argument.
// Errors are user errors whose message is meant to be printed after "xla-opt: ".
absl::StatusOr<OptOptions> ParseOptArgs(std::span<const std::string_view> args);

// The --help text.
std::string OptHelpText();

}  // namespace xlac
