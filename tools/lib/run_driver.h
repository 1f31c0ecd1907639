// The xla-run driver: parse an HLO or StableHLO module, verify it, evaluate its entry computation on the reference
// interpreter with .npy or seeded pseudo-random inputs, print / write the results and report the test-harness
// checks (runtime/harness/checks.h). tools/xla-run/main.cc only forwards argv. Output format: docs/cli.md.
#pragma once

#include <cstdint>
#include <ostream>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "ir/computation.h"
#include "ir/literal.h"
#include "tools/lib/run_mpi.h"
#include "tools/lib/run_options.h"

namespace xlac {

// The pseudo-random value of entry parameter `index` for `seed` (run_seeded.cc; formula in docs/cli.md): f32 and
// f64 arrays from a 32-bit counter hash that vectorizes, other types from interp::MakeRandomLiteral, each with a
// seed mixed from both, so each parameter differs and adding a parameter does not change the others.
Literal SeededParameterValue(const Shape& shape, uint64_t seed, int64_t index);

// One printed/written output: a leaf of the result tuple tree with its label ("result_0", "result_1_0", and
// "device_1/result_0" when several devices ran).
struct LabeledOutput {
  std::string label;
  const Literal* value = nullptr;
};

// Flattens the per-device results into labelled leaves, in device order then tuple order.
std::vector<LabeledOutput> LabelOutputs(const std::vector<Literal>& device_results);

// Runs the module `text` (named `input_name` in diagnostics) as `options` say, reading --input files and writing
// --output-dir files. Results and the check report go to `out`; diagnostics and errors to `err`. Returns the exit
// code: 0 if the run succeeded and no check failed, else 1.
int RunModule(const RunOptions& options, std::string_view input_name, std::string_view text, std::ostream& out,
              std::ostream& err);
// As above, as one of the processes of an MPI run (`mpi` null: one process): runs this process's share of the
// devices; process 0 prints / writes the global outputs and the comparison, the others only failed checks.
int RunModule(const RunOptions& options, std::string_view input_name, std::string_view text, std::ostream& out,
              std::ostream& err, MpiProcesses* mpi);

// The whole tool: parses `args` (argv without argv[0]), handles --help, reads the module file and runs RunModule.
int RunMain(std::span<const std::string_view> args, std::ostream& out, std::ostream& err);

// Convenience for main(): converts argv and uses the standard streams.
int RunMain(int argc, char** argv);

}  // namespace xlac
