#include "tools/lib/opt_driver.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "compiler/compiler.h"
#include "frontend/hlo/printer.h"
#include "frontend/module_input.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/pass_manager.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/verifier.h"
#include "tools/lib/expected_diagnostics.h"
#include "tools/lib/observe_flags.h"

namespace xlac {
namespace {

constexpr std::string_view kSplitMarker = "// -----";
constexpr std::string_view kShardingPropagation = "sharding-propagation";

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// Pass errors about one instruction carry its location as "line:col: " after the pass manager's
// "pass 'name' failed: "; they are reported at that location.
void ReportPassError(const absl::Status& status, DiagnosticEngine& diags) {
  std::string message(status.message());
  constexpr std::string_view kFailed = "' failed: ";
  if (size_t start = message.find(kFailed); start != std::string::npos) {
    start += kFailed.size();
    if (std::optional<LocatedMessage> located = SplitLeadingLocation(std::string_view(message).substr(start))) {
      diags.Error(located->loc, message.substr(0, start) + located->message);
      return;
    }
  }
  diags.Error(SourceLoc{}, std::move(message));
}

// Processes one module's text; appends its printed form (and, when `sharding_report` is set, the explanation the
// pipeline's sharding-propagation left in it) to `out` on success and reports problems to `diags`. Returns true on
// success.
bool ProcessModule(const OptOptions& options, const SourceFile& file, PassManager& pass_manager,
                   const HloPrintOptions& print_options, ShardingPropagationReport* sharding_report,
                   DiagnosticEngine& diags, std::string& out) {
  HloParseOptions parse_options;
  parse_options.strict = options.strict;
  std::unique_ptr<Module> module = ParseModuleAnyFormat(file, diags, parse_options);
  if (module == nullptr) {
    // The parser promises at least one error; make sure a broken promise still fails loudly.
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "failed to parse the module");
    return false;
  }
  if (options.verify && !VerifyModule(*module, diags)) {
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "module failed verification");
    return false;
  }
  if (sharding_report != nullptr) sharding_report->entries.clear();
  absl::StatusOr<bool> changed = pass_manager.Run(*module, diags);
  if (!changed.ok()) {
    ReportPassError(changed.status(), diags);
    return false;
  }
  out += PrintModule(*module, print_options);
  if (sharding_report != nullptr) out += sharding_report->ToString();
  return true;
}

// Adds the --passes pipeline. With --explain-sharding, sharding-propagation runs through its reporting entry point
// so that `sharding_report` holds the explanation of its last run.
absl::Status AddPipeline(const OptOptions& options, PassManager& pass_manager,
                         ShardingPropagationReport* sharding_report) {
  for (const std::string& name : options.passes) {
    if (name == "spmd-partitioner" && options.spmd_windowed_einsum_threshold_bytes > 0) {
      PassInfo pass = *FindPass(name);
      SpmdOptions spmd;
      spmd.windowed_einsum_threshold_bytes = options.spmd_windowed_einsum_threshold_bytes;
      pass.run = [spmd](Module& module) { return RunSpmdPartitioner(module, spmd, nullptr); };
      pass_manager.AddPass(std::move(pass));
      continue;
    }
    if (sharding_report == nullptr || name != kShardingPropagation) {
      if (absl::Status s = pass_manager.AddPasses({name}); !s.ok()) return s;
      continue;
    }
    PassInfo pass = *FindPass(name);
    pass.run = [sharding_report](Module& module) { return RunShardingPropagation(module, sharding_report); };
    pass_manager.AddPass(std::move(pass));
  }
  if (sharding_report != nullptr &&
      std::find(options.passes.begin(), options.passes.end(), kShardingPropagation) == options.passes.end()) {
    return absl::InvalidArgumentError("--explain-sharding needs sharding-propagation in --passes");
  }
  return absl::OkStatus();
}

bool ReadInput(const std::string& filename, std::istream& in, std::string& text, std::ostream& err) {
  std::ostringstream buffer;
  if (filename == "-") {
    buffer << in.rdbuf();
  } else {
    std::ifstream file(filename, std::ios::binary);
    if (!file) {
      err << "xla-opt: error: cannot open input file '" << filename << "': " << std::strerror(errno) << "\n";
      return false;
    }
    buffer << file.rdbuf();
    if (file.bad()) {
      err << "xla-opt: error: cannot read input file '" << filename << "'\n";
      return false;
    }
  }
  text = std::move(buffer).str();
  return true;
}

// Writes through a temporary file and a rename so that readers never see a half-written output.
bool WriteOutputFile(const std::string& filename, const std::string& contents, std::ostream& err) {
  std::string tmp = filename + ".xla-opt-tmp." + std::to_string(::getpid());
  {
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (file) file << contents;
    file.close();
    if (!file) {
      err << "xla-opt: error: cannot write output file '" << filename << "': " << std::strerror(errno) << "\n";
      std::remove(tmp.c_str());
      return false;
    }
  }
  if (std::rename(tmp.c_str(), filename.c_str()) != 0) {
    err << "xla-opt: error: cannot write output file '" << filename << "': " << std::strerror(errno) << "\n";
    std::remove(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace

std::vector<InputChunk> SplitInputFile(std::string_view text) {
  std::vector<InputChunk> chunks;
  size_t chunk_start = 0;
  int32_t chunk_first_line = 0;  // lines before the current chunk
  int32_t line_index = 0;        // 0-based index of the line at `pos`
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    size_t next = end == std::string_view::npos ? text.size() : end + 1;
    if (Trim(text.substr(pos, next - pos - (end == std::string_view::npos ? 0 : 1))) == kSplitMarker) {
      chunks.push_back({text.substr(chunk_start, pos - chunk_start), chunk_first_line});
      chunk_start = next;
      chunk_first_line = line_index + 1;
    }
    pos = next;
    ++line_index;
  }
  chunks.push_back({text.substr(chunk_start), chunk_first_line});
  return chunks;
}

int RunOpt(const OptOptions& options, std::string_view input_name, std::string_view input, std::ostream& out,
           std::ostream& err) {
  HloPrintOptions print_options = options.print_short ? HloPrintOptions::Short() : HloPrintOptions::Long();
  PassManagerOptions pm_options;
  pm_options.verify_each = options.verify;
  pm_options.time_passes = options.time_passes;
  if (options.print_after_all) {
    pm_options.print_after_all = &err;
    pm_options.printer = [print_options](const Module& module) { return PrintModule(module, print_options); };
  }
  std::unique_ptr<CompileObserver> observer;
  if (!options.dump_to.empty()) {
    std::string name = options.input_filename == "-" ? "stdin" : std::filesystem::path(input_name).stem().string();
    absl::StatusOr<std::unique_ptr<CompileObserver>> created =
        CompileObserver::Create(DumpOptions{options.dump_to, options.dump_pass_regex, 1}, name,
                                [print_options](const Module& module) { return PrintModule(module, print_options); });
    if (!created.ok()) {
      err << "xla-opt: error: " << created.status().message() << "\n";
      return 1;
    }
    observer = *std::move(created);
    pm_options.observer = observer.get();
    pm_options.pipeline_name = "xla-opt";
  }
  PassManager pass_manager(std::move(pm_options));
  ShardingPropagationReport sharding_report;
  ShardingPropagationReport* report = options.explain_sharding ? &sharding_report : nullptr;
  if (absl::Status s = AddPipeline(options, pass_manager, report); !s.ok()) {
    err << "xla-opt: error: " << s.message() << "\n";
    return 1;
  }

  std::vector<InputChunk> chunks =
      options.split_input_file ? SplitInputFile(input) : std::vector<InputChunk>{{input, 0}};
  bool ok = true;
  std::string output;
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i > 0) {
      if (!output.empty() && output.back() != '\n') output += '\n';
      output += std::string(kSplitMarker) + "\n";
    }
    SourceFile file(std::string(input_name), chunks[i].text, chunks[i].line_offset);
    DiagnosticEngine diags;
    std::string chunk_output;
    bool chunk_ok = ProcessModule(options, file, pass_manager, print_options, report, diags, chunk_output);
    if (options.verify_diagnostics) {
      DiagnosticEngine problems;
      std::vector<ExpectedDiagnostic> expected = ParseExpectedDiagnostics(file, problems);
      bool matched = CheckExpectedDiagnostics(expected, diags.diagnostics(), problems) && !problems.has_errors();
      if (!matched) {
        err << problems.Render(file);
        ok = false;
      }
    } else {
      err << diags.Render(file);
      ok &= chunk_ok;
    }
    if (chunk_ok) output += chunk_output;
  }
  out << output;
  if (observer != nullptr && !observer->status().ok()) {
    err << "xla-opt: error: " << observer->status().message() << "\n";
    ok = false;
  }
  if (options.time_passes) pass_manager.PrintTimingReport(err);
  return ok ? 0 : 1;
}

int OptMain(std::span<const std::string_view> args, std::istream& in, std::ostream& out, std::ostream& err) {
  absl::StatusOr<OptOptions> options = ParseOptArgs(args);
  if (!options.ok()) {
    err << "xla-opt: error: " << options.status().message() << "\n";
    return 1;
  }
  if (options->help) {
    out << OptHelpText();
    return 0;
  }
  if (options->list_passes) {
    size_t width = 0;
    for (const PassInfo& pass : RegisteredPasses()) width = std::max(width, pass.name.size());
    for (const PassInfo& pass : RegisteredPasses()) {
      out << pass.name << std::string(width + 2 - pass.name.size(), ' ') << pass.description << "\n";
    }
    return 0;
  }
  if (options->list_pipeline) {
    // What xlac, xla-run, the JIT API and Python run (compiler/compiler.h), in the default numerics mode.
    OptimizationOptions optimization;
    optimization.exact = false;  // winograd-convolution runs in the default mode only
    std::string stage;
    for (const PipelineStep& step : DefaultPipeline(optimization)) {
      if (step.stage != stage) out << "# " << (stage = step.stage) << "\n";
      out << step.name << "\n";
    }
    return 0;
  }
  std::string text;
  if (!ReadInput(options->input_filename, in, text, err)) return 1;
  std::string input_name = options->input_filename == "-" ? "<stdin>" : options->input_filename;

  bool to_file = !options->output_filename.empty() && options->output_filename != "-";
  if (!to_file) return RunOpt(*options, input_name, text, out, err);
  std::ostringstream buffer;
  int rc = RunOpt(*options, input_name, text, buffer, err);
  if (rc != 0) return rc;
  return WriteOutputFile(options->output_filename, std::move(buffer).str(), err) ? 0 : 1;
}

int OptMain(int argc, char** argv) {
  std::vector<std::string_view> argv_args(argv + 1, argv + argc);
  std::vector<std::string> with_env = WithXlacFlags(argv_args, std::getenv("XLAC_FLAGS"));
  std::vector<std::string_view> args(with_env.begin(), with_env.end());
  std::ios::sync_with_stdio(false);
  int rc = OptMain(args, std::cin, std::cout, std::cerr);
  std::cout.flush();
  return rc;
}

}  // namespace xlac
