#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "passes/spmd/spmd_partitioner.h"
#include "tools/lib/opt_options.h"

namespace xlac {
namespace {

// Flags that take no value, and where they store.
struct BoolFlag {
  std::string_view name;
  bool OptOptions::*field;
  bool value;
};

constexpr BoolFlag kBoolFlags[] = {
    {"no-verify", &OptOptions::verify, false},
    {"print-short", &OptOptions::print_short, true},
    {"strict", &OptOptions::strict, true},
    {"split-input-file", &OptOptions::split_input_file, true},
    {"verify-diagnostics", &OptOptions::verify_diagnostics, true},
    {"print-after-all", &OptOptions::print_after_all, true},
    {"time-passes", &OptOptions::time_passes, true},
    {"explain-sharding", &OptOptions::explain_sharding, true},
    {"list-passes", &OptOptions::list_passes, true},
    {"list-pipeline", &OptOptions::list_pipeline, true},
    {"help", &OptOptions::help, true},
    {"h", &OptOptions::help, true},
};

absl::Status SetPasses(std::string_view list, OptOptions& options) {
  if (list.empty()) return absl::InvalidArgumentError("--passes needs a comma-separated list of pass names");
  size_t start = 0;
  while (true) {
    size_t comma = list.find(',', start);
    std::string_view name =
        list.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (name.empty()) return absl::InvalidArgumentError("empty pass name in --passes=" + std::string(list));
    options.passes.emplace_back(name);
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<OptOptions> ParseOptArgs(std::span<const std::string_view> args) {
  OptOptions options;
  bool have_input = false;
  bool options_ended = false;
  auto set_input = [&](std::string_view arg) -> absl::Status {
    if (have_input) {
      return absl::InvalidArgumentError("more than one input file: '" + options.input_filename + "' and '" +
                                        std::string(arg) + "'");
    }
    have_input = true;
    options.input_filename = std::string(arg);
    return absl::OkStatus();
  };

  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (options_ended || arg == "-" || !arg.starts_with("-")) {
      if (absl::Status s = set_input(arg); !s.ok()) return s;
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    // LLVM tools accept both -flag and --flag.
    std::string_view body = arg.substr(arg.starts_with("--") ? 2 : 1);
    std::string_view name = body;
    std::string_view value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    // Options with a value take it after '=' or as the next argument.
    auto take_value = [&]() -> absl::StatusOr<std::string_view> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return absl::InvalidArgumentError("option '" + std::string(arg) + "' needs a value");
      return args[++i];
    };
    if (name == "passes") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (absl::Status s = SetPasses(*v, options); !s.ok()) return s;
      continue;
    }
    if (name == "dump-to" || name == "dump-pass-regex") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (v->empty()) return absl::InvalidArgumentError("--" + std::string(name) + " needs a value");
      (name == "dump-to" ? options.dump_to : options.dump_pass_regex) = std::string(*v);
      continue;
    }
    if (name == "spmd-windowed-einsum-threshold-mib") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      absl::StatusOr<int64_t> bytes = ParseWindowedEinsumThresholdMib(*v);
      if (!bytes.ok()) return bytes.status();
      options.spmd_windowed_einsum_threshold_bytes = *bytes;
      continue;
    }
    if (name == "o") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (v->empty()) return absl::InvalidArgumentError("-o needs a file name");
      options.output_filename = std::string(*v);
      continue;
    }
    bool matched = false;
    for (const BoolFlag& flag : kBoolFlags) {
      if (flag.name != name) continue;
      if (has_value) {
        return absl::InvalidArgumentError("option '--" + std::string(name) + "' does not take a value");
      }
      options.*flag.field = flag.value;
      matched = true;
      break;
    }
    if (!matched) {
      return absl::InvalidArgumentError("unknown option '" + std::string(arg) + "' (see --help)");
    }
  }
  return options;
}

std::string OptHelpText() {
  return R"(OVERVIEW: xla-opt: parse, verify, transform and print XLA HLO modules

USAGE: xla-opt [options] <input file | ->

  Reads an HLO or StableHLO module (from stdin when the input is '-' or absent), verifies it, runs the requested
  passes (verifying after each one) and prints the result to stdout as HLO text. Files ending in .mlir, or whose
  text starts with `module` / `func.func`, are StableHLO (converted as XLA's StableHLO-to-HLO translation does).

OPTIONS:
  --passes=<a,b,...>      Run these passes in order (see --list-passes)
  --no-verify             Do not verify the input or the module after each pass
  --print-short           Print in XLA's short parsable form (no '%', operand shapes, signatures or metadata)
  --strict                Reject HLO text XLA's parser rejects even where exporters write it with one meaning
                          (api_version=API_VERSION_UNSPECIFIED, ...), instead of reading it with a warning
  --split-input-file      Split the input at lines '// -----' and process each chunk independently
  --verify-diagnostics    Check that the errors produced match the '// expected-error {{...}}' comments
  --print-after-all       Print the module to stderr after each pass
  --time-passes           Print the time spent in each pass to stderr
  --dump-to=<dir>         Write the module after each pass to <dir>/module_0001.NAME.NNNN.xla-opt.after_PASS.txt
                          (NAME: the input file's name; docs/observability.md). XLAC_FLAGS adds flags too
  --dump-pass-regex=<re>  With --dump-to: only after the passes whose name matches <re>
  --explain-sharding      After each module, print '%name: {sharding} <- origin' per instruction: where
                          sharding-propagation (which must be in --passes) got its sharding
  --spmd-windowed-einsum-threshold-mib=<X>
                          spmd-partitioner: windowed einsum for dots whose all-gather or reduce-scatter moves at
                          least X MiB per core (decimals allowed; docs/spmd.md). 0 (default): off
  --list-passes           List the available passes and exit
  --list-pipeline         List the default compile pipeline xlac, xla-run and the APIs run, and exit
  -o <file>               Write the output to <file>, only if everything succeeded
  --help                  Print this help and exit

Exit status: 0 on success, 1 on any error in the input or options.
)";
}

}  // namespace xlac
