#include "tools/lib/run_driver.h"

#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

#include "absl/status/status.h"
#include "codegen/jit.h"
#include "codegen/parallel_programs.h"
#include "codegen/pipeline.h"
#include "codegen/profile.h"
#include "compiler/compiler.h"
#include "compiler/custom_call_libs.h"
#include "compiler/kernel_sources.h"
#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "frontend/module_input.h"
#include "ir/device_counts.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "ir/tpu_target.h"
#include "passes/annotation_custom_calls.h"
#include "passes/f64_reference.h"
#include "passes/spmd/dcn_attribution.h"
#include "passes/spmd/literal_sharding.h"
#include "passes/tpu_cost_model.h"
#include "passes/tpu_memory.h"
#include "passes/verifier.h"
#include "runtime/harness/checks.h"
#include "runtime/harness/npy.h"
#include "runtime/interpreter/interpreter.h"
#include "tools/lib/observe_flags.h"
#include "tools/lib/run_arguments.h"
#include "tools/lib/run_compare.h"
#include "tools/lib/run_deadline.h"
#include "tools/lib/run_memory.h"
#include "tools/lib/run_outputs.h"
#include "tools/lib/run_shards.h"
#include "tools/lib/run_stderr.h"
#include "tools/lib/run_tpu.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;

// Sanitizer builds tear everything down at the end of a run (RunOptions::exit_when_done stays off), so leak checks
// at exit still see what the code under test leaks.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kFullTeardown = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
constexpr bool kFullTeardown = true;
#else
constexpr bool kFullTeardown = false;
#endif
#else
constexpr bool kFullTeardown = false;
#endif

bool HasChecks(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall && harness::IsCheckTarget(inst->StringAttr("custom_call_target"))) {
        return true;
      }
    }
  }
  return false;
}

// True when every custom-call is a check, a "Sharding" annotation or a target of a --custom-call-lib library, i.e.
// all the JIT's handler will be asked for.
bool OnlyCheckCustomCalls(const Module& module, const ffi::HandlerLibraries* libs) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      std::string_view target = inst->StringAttr("custom_call_target");
      // The interpreter's own ops (run_parallel, probe) are built into the JIT; their programs may hold checks.
      if (!harness::IsCheckTarget(target) && !IsShardingIdentityTarget(target) &&
          !codegen::IsBuiltinCustomCallTarget(target) && !(libs != nullptr && libs->Has(target))) {
        return false;
      }
    }
  }
  return true;
}

// `profile` (--metrics, --trace): receives one trace slice per instruction of the entry computation, per device.
absl::StatusOr<std::vector<Literal>> RunOnInterpreter(const RunOptions& options, const Module& module,
                                                      const std::vector<std::vector<Literal>>& args,
                                                      harness::CheckCollector& checks, int64_t num_partitions,
                                                      codegen::ExecutionProfile* profile = nullptr) {
  interp::InterpreterOptions interp_options;
  interp_options.num_replicas = options.num_replicas;
  interp_options.num_partitions = num_partitions;
  interp_options.seed = options.seed;
  interp_options.tpu_numerics = options.tpu_numerics;
  interp_options.threads = options.threads;  // the interpreter's dot/convolution kernels; results never change
  interp_options.custom_call_handler = WithCustomCallLibs(options.ffi_libs, checks, options.input_filename);
  if (options.kernels != nullptr) interp_options.elementwise_kernels = options.kernels->elementwise();
  std::mutex profile_mu;
  if (profile != nullptr) {
    profile->traced = true;
    interp_options.on_instruction = [&](int64_t device, const Instruction& inst, int64_t begin_ns, int64_t end_ns) {
      std::lock_guard<std::mutex> lock(profile_mu);
      while (static_cast<int64_t>(profile->devices.size()) <= device) {
        const int64_t next = static_cast<int64_t>(profile->devices.size());
        profile->devices.emplace_back().device = next;
      }
      codegen::DeviceProfile& d = profile->devices[static_cast<size_t>(device)];
      d.kernels += 1;
      d.kernel_ns += end_ns - begin_ns;
      d.slices.push_back({inst.name(), std::string(OpcodeName(inst.opcode())), begin_ns, end_ns});
    };
  }
  return interp::Evaluate(module, args, interp_options);
}

// What --metrics, --trace and --dump-to need from the JIT: the observer it reports its phases and dumps to, and
// what the run did.
struct JitObservation {
  CompileObserver* observer = nullptr;
  codegen::ExecutionProfile profile;
  bool cache_hit = false;
  // RunOptions::exit_when_done: the executable outlives the run, so the process ends without tearing it down.
  std::unique_ptr<codegen::JitExecutable> executable;
};

// One device whose parameters are all arrays, given as such: JitExecutable::RunBuffers then reads the arguments in
// place and writes the result leaves straight into the result literal, where RunPerDevice copies both through its
// arena (for the BERT layer, 31 MB more to touch at the start of the run and to free at its end).
bool RunsOnBuffers(const codegen::JitExecutable& executable, const std::vector<std::vector<Literal>>& args) {
  if (executable.num_devices() != 1 || args.size() != 1) return false;
  const std::vector<Shape>& params = executable.parameter_shapes();
  if (args[0].size() != params.size()) return false;  // RunPerDevice reports it
  for (size_t i = 0; i < params.size(); ++i) {
    const Literal& arg = args[0][i];
    if (!params[i].IsArray() || arg.is_tuple() || arg.is_unknown() || !arg.shape().Compatible(params[i])) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<std::vector<Literal>> RunOnBuffers(codegen::JitExecutable& executable,
                                                  const std::vector<Literal>& args) {
  std::vector<const void*> parameters;
  for (const Literal& arg : args) parameters.push_back(arg.raw_data());
  std::vector<Literal> results;
  results.emplace_back(executable.result_shape());
  std::vector<void*> leaves;  // the result's array leaves, depth first (RunBuffers' order)
  std::function<void(Literal&)> collect = [&](Literal& literal) {
    if (literal.is_tuple()) {
      for (Literal& element : literal.mutable_tuple_elements()) collect(element);
    } else if (literal.shape().IsArray()) {
      leaves.push_back(literal.mutable_raw_data());
    }
  };
  collect(results[0]);
  XLAC_RETURN_IF_ERROR(executable.RunBuffers(parameters, leaves));
  return results;
}

// Compiles and runs the module in-process. A module codegen cannot compile is a user-facing error that points at
// the interpreter; the error is printed here, so the returned status has an empty message.
absl::StatusOr<std::vector<Literal>> RunOnJit(const RunOptions& options, const Module& module,
                                              const std::vector<std::vector<Literal>>& args,
                                              harness::CheckCollector& checks, std::string_view input_name,
                                              std::ostream& err, const XlacRtTransport* transport, double& run_seconds,
                                              JitObservation& observation, bool partitioned, const SourceFile* file) {
  codegen::JitOptions jit_options;
  jit_options.compile.partitioned = partitioned;
  jit_options.compile.observer = observation.observer;
  jit_options.compile.trace_kernels = !options.trace_file.empty();
  jit_options.transport = transport;
  jit_options.compile.exact = options.exact;
  jit_options.compile.tpu_numerics = options.tpu_numerics;
  // The stateful rng draws the interpreter's streams of the same seed, so --check-against compares like with like.
  jit_options.compile.rng_seed = options.seed;
  jit_options.threads = options.threads;
  jit_options.num_replicas = options.num_replicas;
  jit_options.num_partitions = options.num_partitions;
  jit_options.cache.dir = options.cache_dir;
  if (options.kernels != nullptr) {
    jit_options.compile.kernel_bitcode = options.kernels->bitcode;
    jit_options.compile.kernel_fingerprint = options.kernels->library.fingerprint;
  }
  jit_options.cache.readonly = options.cache_readonly;
  jit_options.cache.max_bytes = options.cache_max_bytes;
  // The limit CheckRunMemory applied (the JIT's own check of its buffers otherwise asks the runtime for the host's).
  if (options.memory_limit.has_value() || options.host_available_memory >= 0) {
    jit_options.memory_limit = options.memory_limit.value_or(options.host_available_memory);
  }
  // Only modules whose custom-calls are all checks get a handler: any other target (interpreter.run_parallel, ...)
  // then stays a compile-time "not supported" that points at the interpreter instead of failing at run time.
  if ((HasChecks(module) || options.ffi_libs != nullptr) && OnlyCheckCustomCalls(module, options.ffi_libs)) {
    jit_options.custom_call_handler = WithCustomCallLibs(options.ffi_libs, checks, std::string(input_name));
  }
  // No host feeds the program: infeeds get the interpreter's seeded data, so both backends agree.
  jit_options.infeed_handler = [seed = options.seed](const Instruction& infeed, int64_t device_id,
                                                     uint64_t occurrence) -> absl::StatusOr<Literal> {
    return interp::InfeedValue(infeed.shape().tuple_shapes.at(0), infeed.name(), seed, device_id, occurrence);
  };
  std::optional<ProgressLine> progress(std::in_place, "compiling");
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> executable =
      codegen::JitExecutable::Compile(module, jit_options);
  progress.reset();
  if (!executable.ok()) {
    // The interpreter runs what codegen does not lower yet, but it models no more TPU numerics than codegen does,
    // and has no more custom-call handlers.
    const std::string message(executable.status().message());
    bool interpreter_cannot =
        message.find("TPU numerics") != std::string::npos || message.find("custom-call handler") != std::string::npos;
    if (absl::IsUnimplemented(executable.status())) {
      const std::string hint = interpreter_cannot ? "" : " (use --backend=interpreter)";
      // A message that starts with "line:col: " is about one instruction: shown at its line.
      if (std::optional<LocatedMessage> located = SplitLeadingLocation(message); located && file != nullptr) {
        DiagnosticEngine diags;
        diags.Error(located->loc, located->message + hint);
        err << diags.Render(*file);
      } else {
        err << input_name << ": error: " << message << hint << "\n";
      }
    } else {
      err << input_name << ": error: JIT compilation failed: " << executable.status().message() << "\n";
    }
    return absl::UnknownError("");
  }
  if (options.explain_cache) err << (*executable)->cache_log();
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::vector<Literal>> results =
      RunsOnBuffers(**executable, args) ? RunOnBuffers(**executable, args[0]) : (*executable)->RunPerDevice(args);
  run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  observation.profile = (*executable)->last_profile();
  observation.cache_hit = (*executable)->cache_hit();
  // Kept only when nothing else runs after it (--check-against's interpreter would run beside its buffers).
  if (options.exit_when_done && options.check_against.empty()) observation.executable = *std::move(executable);
  return results;
}

// --metrics and --trace, after the run: the report to `out`, the trace file.
bool ReportObservations(const RunOptions& options, const CompileObserver& observer, const JitObservation& observation,
                        std::string_view input_name, std::ostream& out, std::ostream& err) {
  if (options.metrics) {
    codegen::Metrics metrics;
    metrics.AddCompile(observer.phases(),
                       options.backend == "jit" ? std::optional<bool>(observation.cache_hit) : std::nullopt);
    metrics.AddExecution(observation.profile);
    if (options.backend == "interpreter") {
      // The interpreter's time per opcode (KernelTime.<opcode>), summed over devices.
      for (const codegen::DeviceProfile& d : observation.profile.devices) {
        for (const codegen::TraceSlice& s : d.slices) {
          metrics.AddTimeSample("KernelTime." + s.category, s.end_ns - s.begin_ns);
        }
      }
    }
    out << metrics.Report();
  }
  if (!options.trace_file.empty()) {
    std::ofstream file(options.trace_file, std::ios::trunc);
    file << codegen::ChromeTraceJson(observer.phases(), {observation.profile});
    file.close();
    if (!file) {
      err << input_name << ": error: cannot write the trace file '" << options.trace_file << "'\n";
      return false;
    }
  }
  return true;
}

}  // namespace

int RunModule(const RunOptions& options, std::string_view input_name, std::string_view text, std::ostream& out,
              std::ostream& err) {
  return RunModule(options, input_name, text, out, err, nullptr);
}

namespace {
int RunModuleWithKernels(const RunOptions& options, std::string_view input_name, std::string_view text,
                         std::ostream& out, std::ostream& err, MpiProcesses* mpi);
}  // namespace

int RunModule(const RunOptions& options, std::string_view input_name, std::string_view text, std::ostream& out,
              std::ostream& err, MpiProcesses* mpi) {
  if (options.custom_call_sources.empty()) return RunModuleWithKernels(options, input_name, text, out, err, mpi);
  // The kernels are compiled before the program is read: a C++ error stops the run before anything else happens.
  // The interpreter runs them only when it runs at all: JIT-compiling them for it is skipped otherwise.
  CustomCallKernelOptions kernel_options{options.custom_call_sources, "host",
                                         options.backend == "interpreter" || !options.check_against.empty()};
  kernel_options.cache = {options.cache_dir, options.cache_readonly, options.cache_max_bytes};
  std::string cache_log;
  kernel_options.cache_log = &cache_log;
  std::unique_ptr<CustomCallKernels> kernels = CompileCustomCallKernels(kernel_options, err);
  if (options.explain_cache) err << cache_log;
  if (kernels == nullptr) return 1;
  RunOptions with_kernels = options;
  with_kernels.kernels = kernels.get();
  return RunModuleWithKernels(with_kernels, input_name, text, out, err, mpi);
}

namespace {
int RunModuleWithKernels(const RunOptions& options, std::string_view input_name, std::string_view text,
                         std::ostream& out, std::ostream& err, MpiProcesses* mpi) {
  const bool exit_when_done = options.exit_when_done && mpi == nullptr;  // MPI must be finalized after the run
  if (mpi != nullptr && mpi->count == 1) mpi = nullptr;                  // one process: exactly as without MPI
  const bool first_process = mpi == nullptr || mpi->index == 0;
  std::optional<Deadline> deadline;
  if (options.timeout_seconds > 0) {
    deadline.emplace(options.timeout_seconds,
                     fmt::format("{}: error: the run did not finish within --timeout={} s (an infinite loop, or a "
                                 "longer deadline needed)\n",
                                 input_name, options.timeout_seconds));
  }
  SourceFile file(std::string(input_name), text);
  CompilerOptions compiler;
  compiler.num_partitions = options.num_partitions;
  compiler.num_replicas = options.num_replicas;
  compiler.custom_call_identity = options.custom_call_identity;
  compiler.strict = options.strict;
  // A shape-polymorphic export is refined from its inputs' shapes before anything else reads it.
  compiler.entry_argument_shapes = InputShapes(options);
  compiler.spmd.windowed_einsum_threshold_bytes = options.spmd_windowed_einsum_threshold_bytes;
  compiler.optimization.exact = options.exact;
  compiler.optimization.tpu_numerics = options.tpu_numerics;
  DiagnosticEngine diags;
  // --metrics, --trace and --dump-to observe the compilation; without them nothing is timed or written.
  std::unique_ptr<CompileObserver> observer;
  absl::Status observer_status;
  std::optional<ScopedPhase> verify_phase;
  const int64_t parse_begin = CompileObserver::NowNs();
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags, [&](const Module& parsed) {
    const int64_t parse_end = CompileObserver::NowNs();
    if (!options.metrics && options.trace_file.empty() && options.dump_to.empty()) return;
    absl::StatusOr<std::unique_ptr<CompileObserver>> created =
        CompileObserver::Create(DumpOptions{options.dump_to, options.dump_pass_regex, 1}, parsed.name(),
                                [](const Module& m) { return PrintModule(m); });
    if (!created.ok()) {
      observer_status = created.status();
      return;
    }
    observer = *std::move(created);
    observer->RecordPhase("parse", "frontend", parse_begin, parse_end);
    // before_optimizations is what the compiler gets (the partitioned program when sharded): keep the input too.
    observer->DumpModule(parsed, "as_parsed.txt");
    verify_phase.emplace(observer.get(), "verify", "frontend");
  });
  verify_phase.reset();
  if (!observer_status.ok()) {
    err << input_name << ": error: " << observer_status.message() << "\n";
    return 1;
  }
  if (module == nullptr) {
    err << diags.Render(file);
    return 1;
  }
  // --custom-call-lib: every typed-FFI custom call needs a handler, found before anything runs.
  if (!CheckCustomCallLibs(*module, options.ffi_libs, file, err)) return 1;
  // Warnings and notes (a device count inferred from the program, leniencies towards exporters): once, from the
  // first process.
  if (first_process && !diags.diagnostics().empty()) err << diags.Render(file);
  const Computation* entry = module->entry_computation();
  if (entry == nullptr) {
    err << input_name << ": error: the module has no entry computation\n";
    return 1;
  }
  // Before elided constants get values: a module whose arguments and constants alone exceed the memory limit is
  // refused before they are built (the full estimate waits for the partitioned program, below).
  if (absl::Status fits = CheckRunMemory(options, *module, nullptr, false, mpi ? mpi->count : 1); !fits.ok()) {
    err << input_name << ": error: " << fits.message() << "\n";
    return 1;
  }
  // Custom calls that --custom-call-src kernels implement become elementwise ops, before the module is split.
  if (options.kernels != nullptr && !BindCustomCallKernels(*options.kernels, *module, file, err)) return 1;
  // The compiled program runs nothing else for a custom call than a kernel, a check, an XLA FFI handler or a target
  // it knows: with kernel files given, any other target is reported as a kernel they lack.
  if (options.kernels != nullptr && options.backend == "jit" &&
      !ReportMissingKernels(
          *options.kernels, *module, file,
          [&](std::string_view target) {
            return harness::IsCheckTarget(target) || IsShardingIdentityTarget(target) ||
                   IsShardMapBoundaryTarget(target) || codegen::IsBuiltinCustomCallTarget(target) ||
                   (options.ffi_libs != nullptr && options.ffi_libs->Has(target));
          },
          err)) {
    return 1;
  }
  // Elided `{...}` constants get the interpreter's seeded values up front, so every backend computes with the
  // same numbers (and --check-against compares like with like).
  for (const auto& comp : module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kConstant && inst->has_literal() && inst->literal().is_unknown()) {
        inst->set_literal(interp::ElidedConstantValue(inst->shape(), inst->name(), options.seed));
      }
    }
  }
  // A sharded module runs partitioned: each device gets its shards of the global arguments.
  std::unique_ptr<Module> partitioned_module;
  SpmdReport spmd_report;
  if (!options.no_partition) {
    partitioned_module = module->Clone();
    DiagnosticEngine spmd_diags;
    compiler.optimization.observer = observer.get();  // the steps before partitioning are dumped and timed too
    ScopedPhase phase(observer.get(), "spmd partition", "frontend");
    absl::StatusOr<bool> partitioned = PartitionModule(*partitioned_module, compiler, spmd_report, spmd_diags);
    // Every MPI process partitions the same module: only process 0 shows the warnings (all show errors).
    if (!partitioned.ok() || first_process) err << spmd_diags.Render(file);
    if (!partitioned.ok()) return 1;
    if (!*partitioned) partitioned_module.reset();
  }
  const Module& run_module = partitioned_module ? *partitioned_module : *module;
  // --check-against's references run the partitioned program device by device (PerDeviceReference): for manual
  // regions, and by default for a bit-for-bit comparison.
  const bool per_device_reference =
      !options.check_against.empty() && PerDeviceReference(options, *module, partitioned_module != nullptr);
  if (partitioned_module && !options.check_against.empty() &&
      options.reference_program == ReferenceProgram::kUnpartitioned && HasManualRegions(*module)) {
    err << input_name
        << ": error: --reference-program=unpartitioned: the module has manual regions (shard_map), whose per-core "
           "bodies only mean something partitioned; --check-against runs the partitioned program\n";
    return 1;
  }
  const int64_t num_partitions = options.num_partitions > 0 ? options.num_partitions : module->config().num_partitions;
  if (!options.tpu.empty()) {
    if (absl::Status tpu = CheckTpuTarget(options, *module, run_module, out); !tpu.ok()) {
      err << std::string(input_name) + ": error: " + std::string(tpu.message()) + "\n";
      return 1;
    }
  }
  // --dcn-mesh: the inserted collectives' bytes over ICI and DCN, after the SPMD report.
  std::string dcn_report;
  if (options.dcn_mesh > 0) {
    const int64_t replicas = options.num_replicas > 0 ? options.num_replicas : module->config().replica_count;
    const int64_t devices = std::max<int64_t>(replicas, 1) * std::max<int64_t>(num_partitions, 1);
    if (devices % options.dcn_mesh != 0) {
      err << input_name << ": error: --dcn-mesh=" << options.dcn_mesh << ": " << devices
          << " devices cannot form slices of equal size\n";
      return 1;
    }
    if (partitioned_module && options.spmd_report) {
      std::vector<std::string> names;
      for (const SpmdReport::Collective& c : spmd_report.collectives) names.push_back(c.name);
      absl::StatusOr<std::vector<DcnSplit>> splits =
          SplitModuleCollectives(*partitioned_module, replicas, num_partitions, options.dcn_mesh, names);
      if (!splits.ok()) {
        err << input_name << ": error: --dcn-mesh: " << splits.status().message() << "\n";
        return 1;
      }
      dcn_report = FormatDcnSplits(*splits, devices, options.dcn_mesh);
    }
  }
  // A run that fits only without the f64 reference (a large bf16 program's reference holds four times its values)
  // runs with the f32 one when that fits, else without one (the fixed rule compares).
  ReferenceChoice reference_fit = ReferenceChoice::kF64;
  if (absl::Status fits = CheckRunMemory(options, *module, &run_module, partitioned_module != nullptr,
                                         mpi ? mpi->count : 1, &reference_fit);
      !fits.ok()) {
    err << input_name << ": error: " << fits.message() << "\n";
    return 1;
  }
  // Arguments after the checks above, so a program that cannot run fails before its inputs are built.
  std::vector<Literal> args;
  const bool input_shards = !options.input_shards.empty();
  if (!input_shards && !BuildArguments(options, *entry, args, err)) return 1;
  std::vector<std::vector<Literal>> device_args;
  if (input_shards) {
    if (!partitioned_module || !options.inputs.empty()) {
      err << input_name << ": error: --input-shards needs a sharded module that runs partitioned, and no --input\n";
      return 1;
    }
    const int64_t replicas = options.num_replicas > 0 ? options.num_replicas : module->config().replica_count;
    const int64_t devices = std::max<int64_t>(replicas, 1) * num_partitions;
    // Each process reads its own devices' shards; process 0 reads all for --check-against, which needs the global
    // arrays.
    int64_t begin = 0, end = devices;
    if (mpi != nullptr && !(first_process && !options.check_against.empty()) && devices % mpi->count == 0) {
      begin = mpi->index * (devices / mpi->count);
      end = begin + devices / mpi->count;
    }
    absl::StatusOr<std::vector<std::vector<Literal>>> shards =
        ReadInputShards(options.input_shards, *run_module.entry_computation(), devices, begin, end);
    if (!shards.ok()) {
      err << input_name << ": error: " << shards.status().message() << "\n";
      return 1;
    }
    device_args = *std::move(shards);
    // Only a reference of the unpartitioned module reads global arguments.
    if (!options.check_against.empty() && first_process && !per_device_reference) {
      for (size_t i = 0; i < device_args[0].size(); ++i) {
        std::vector<const Literal*> parts;
        for (int64_t p = 0; p < num_partitions; ++p) parts.push_back(&device_args[static_cast<size_t>(p)][i]);
        absl::StatusOr<Literal> global = spmd::AssembleLiteral(parts, spmd_report.parameter_shardings[i],
                                                               entry->parameter(static_cast<int64_t>(i))->shape());
        if (!global.ok()) {
          err << input_name << ": error: cannot assemble parameter " << i << ": " << global.status().message() << "\n";
          return 1;
        }
        args.push_back(*std::move(global));
      }
    }
    if (options.spmd_report && first_process) out << FormatSpmdReport(spmd_report) << dcn_report;
  } else if (partitioned_module) {
    const int64_t replicas = options.num_replicas > 0 ? options.num_replicas : module->config().replica_count;
    for (int64_t d = 0; d < std::max<int64_t>(replicas, 1) * num_partitions; ++d) {
      std::vector<Literal> shards;
      for (size_t i = 0; i < args.size(); ++i) {
        absl::StatusOr<Literal> shard =
            spmd::ShardLiteral(args[i], spmd_report.parameter_shardings[i], d % num_partitions, num_partitions);
        if (!shard.ok()) {
          err << input_name << ": error: cannot shard parameter " << i << ": " << shard.status().message() << "\n";
          return 1;
        }
        shards.push_back(*std::move(shard));
      }
      device_args.push_back(std::move(shards));
    }
    if (options.spmd_report && first_process) out << FormatSpmdReport(spmd_report) << dcn_report;
  } else {
    device_args.push_back(std::move(args));  // no copy of the inputs; `global_args` below refers to them
  }
  const std::vector<Literal>& global_args = partitioned_module ? args : device_args[0];
  if (mpi != nullptr) {
    // Every process reaches these checks (a process that failed before ends them all) and, once the fingerprints
    // agree, with the same verdict, so each ends by itself.
    const int64_t replicas = options.num_replicas > 0 ? options.num_replicas : module->config().replica_count;
    const int64_t devices = std::max<int64_t>(replicas, 1) * std::max<int64_t>(num_partitions, 1);
    std::string problem;
    // Shards differ between processes by design: only the module and options must agree then.
    const std::vector<Literal> no_args;
    if (int64_t other = MpiFirstMismatch(MpiFingerprint(options, text, input_shards ? no_args : global_args));
        other >= 0) {
      problem = fmt::format(
          "MPI process {} runs a different module, inputs or options than process 0 (every process must run the "
          "same)",
          other);
    } else if (options.backend != "jit") {
      problem = "--backend=" + options.backend + " runs in one process only; run it without mpirun (or --no-mpi)";
    } else if (devices % mpi->count != 0) {
      problem = fmt::format("{} device{} cannot be split evenly over {} MPI processes", devices,
                            devices == 1 ? "" : "s", mpi->count);
    }
    if (!problem.empty()) {
      err << std::string(input_name) + ": error: " + problem + "\n";  // one write: processes share the terminal
      mpi->settled = true;
      return 1;
    }
  }

  harness::CheckCollector checks(harness::CheckOptions{options.max_mismatches});
  double run_seconds = 0;  // the JIT's run, compilation excluded (--mpi-report)
  JitObservation observation;
  observation.observer = observer.get();
  const int64_t execute_begin = CompileObserver::NowNs();
  absl::StatusOr<std::vector<Literal>> results =
      options.backend == "jit"
          ? RunOnJit(options, run_module, device_args, checks, input_name, err, mpi ? mpi->transport : nullptr,
                     run_seconds, observation, partitioned_module != nullptr, &file)
          : [&] {
              ProgressLine progress("running on the interpreter");
              const bool observed = options.metrics || !options.trace_file.empty();
              return RunOnInterpreter(options, run_module, device_args, checks, options.num_partitions,
                                      observed ? &observation.profile : nullptr);
            }();
  if (options.backend != "jit") {
    observation.profile.begin_ns = execute_begin;
    observation.profile.end_ns = CompileObserver::NowNs();
  }
  if (observer != nullptr && !observer->status().ok()) {
    err << input_name << ": error: " << observer->status().message() << "\n";
    return 1;
  }
  if (!results.ok()) {
    if (!results.status().message().empty()) err << input_name << ": error: " << results.status().message() << "\n";
    return 1;
  }
  std::string mpi_report;
  if (mpi != nullptr) {
    absl::Status gathered = MpiGatherResults(*mpi, *results);
    if (gathered.ok() && options.mpi_report) gathered = MpiReportProcesses(*mpi, run_seconds, mpi_report);
    if (!gathered.ok()) {
      err << input_name << ": error: " << gathered.message() << "\n";
      return 1;
    }
    mpi->settled = true;
    if (!first_process) {
      // Process 0 prints the outputs; the others only their own devices' failed checks.
      bool ok = true;
      for (const harness::CheckResult& r : checks.Results()) {
        out << harness::FormatCheckFailure(r, input_name);
        ok &= r.passed();
      }
      out.flush();
      return ok ? 0 : 1;
    }
  }
  // Partitioned results are shards: assemble each replica's global result from its partitions.
  // `shape`: the global result's (the f64 reference's results have promoted types).
  auto assemble = [&](const std::vector<Literal>& device_results,
                      const Shape& shape) -> absl::StatusOr<std::vector<Literal>> {
    std::vector<Literal> assembled;
    for (size_t r = 0; r * num_partitions < device_results.size(); ++r) {
      std::vector<const Literal*> parts;
      for (int64_t p = 0; p < num_partitions; ++p) parts.push_back(&device_results[r * num_partitions + p]);
      XLAC_ASSIGN_OR_RETURN(Literal global, spmd::AssembleLiteral(parts, spmd_report.result_sharding, shape));
      assembled.push_back(std::move(global));
    }
    return assembled;
  };
  // The parameter shards are only read again by a reference that runs the partitioned program device by device;
  // otherwise their bytes go before the assembled results and the reference's values come (the memory check counts
  // them so: run_memory.h).
  if (partitioned_module && !per_device_reference) {
    device_args.clear();
    device_args.shrink_to_fit();
  }
  std::vector<Literal> shards;  // the devices' results, kept only as --per-device's outputs
  if (partitioned_module) {
    std::vector<Literal> device_results = *std::move(results);
    results = assemble(device_results, module->entry_computation()->root()->shape());
    if (!results.ok()) {
      err << input_name << ": error: cannot assemble the result: " << results.status().message() << "\n";
      return 1;
    }
    // Otherwise they go before the references run (4.2 GiB for a 32-device Llama-70B layer).
    if (options.per_device) shards = std::move(device_results);
  }
  // The reference runs before anything is printed or written, so its failure leaves no outputs behind. Its own
  // checks are not reported: only the backend under test's are. A partitioned program is compared with the
  // unpartitioned module on one partition, or with the partitioned program run device by device, its shards
  // assembled like the JIT's (PerDeviceReference): always for manual regions (shard_map), whose bodies are per-core
  // programs with collectives that only mean something partitioned, and by default in exact mode, where the
  // unpartitioned module's sums run in another order than the all-reduces of the partitioned program. The
  // interpreter's all-reduce folds the devices' values in participant order, as the runtime's does
  // (runtime/cpu/collectives.cc), so the two agree bit for bit.
  std::optional<std::vector<Literal>> reference;
  std::string reference_name = "the interpreter";
#if defined(__GLIBC__)
  // The JIT's buffers are free by now, but xla-run keeps freed memory in its heap (tools/xla-run/main.cc), where the
  // reference's values, allocated by other threads in other sizes, reuse it only in part: without handing the pages
  // back the two phases' peaks added up (a 2x4-device Kimi K2 layer: 15.5 GB JIT, 19.3 GB interpreter, OOM-killed
  // at 24.4 GB together), which the memory check (run_memory.h), estimating the phases apart, cannot foresee.
  if (!options.check_against.empty() && options.backend == "jit") malloc_trim(0);
#endif
  if (!options.check_against.empty()) {
    harness::CheckCollector reference_checks(harness::CheckOptions{options.max_mismatches});
    // The global arguments are handed over, not copied: nothing reads them after the reference (for a 3B-parameter
    // model a copy is the difference between fitting in memory and not).
    std::vector<std::vector<Literal>> moved_global_args;
    if (partitioned_module && !per_device_reference) moved_global_args.push_back(std::move(args));
    absl::StatusOr<std::vector<Literal>> reference_results =
        per_device_reference ? RunOnInterpreter(options, run_module, device_args, reference_checks, num_partitions)
        : partitioned_module
            ? RunOnInterpreter(options, *module, moved_global_args, reference_checks, 1)
            : RunOnInterpreter(options, *module, device_args, reference_checks, options.num_partitions);
    // ... and handed back for the f64 reference below (`global_args` refers to `args`).
    if (!moved_global_args.empty()) args = std::move(moved_global_args[0]);
    if (reference_results.ok() && per_device_reference) {
      reference_name =
          fmt::format("the interpreter running the partitioned program on {} devices ({})", device_args.size(),
                      HasManualRegions(*module) ? "the module has manual regions"
                      : options.reference_program == ReferenceProgram::kPartitioned
                          ? "--reference-program=partitioned"
                          : "exact mode; --reference-program=unpartitioned also checks the partitioning");
      reference_results = assemble(*reference_results, module->entry_computation()->root()->shape());
    }
    if (!reference_results.ok()) {
      err << input_name << ": error: the interpreter (--check-against) failed: " << reference_results.status().message()
          << "\n";
      return 1;
    }
    reference = *std::move(reference_results);
  }
  std::vector<LabeledOutput> outputs = LabelOutputs(options.per_device && partitioned_module ? shards : *results);
  deadline.reset();  // everything below only prints and writes
  if (options.ShouldPrint()) {
    std::string printed;
    for (const LabeledOutput& output : outputs) {
      printed += output.label + " = " +
                 (output.value->shape().IsArray() ? LiteralToString(*output.value, /*print_shape=*/true)
                                                  : ShapeToString(output.value->shape(), false)) +
                 "\n";
    }
    out << printed;
  }
  if (options.mpi_report) {
    out << (mpi != nullptr ? mpi_report
                           : fmt::format("mpi: process 0: run {:.3f} ms, sent 0 bytes\n", run_seconds * 1e3));
  }
  bool ok = true;
  if (!options.output_dir.empty()) ok &= WriteOutputs(options.output_dir, outputs, err);

  if (reference.has_value()) {
    std::vector<LabeledOutput> reference_outputs = LabelOutputs(*reference);
    CompareOptions compare{options.max_ulp, options.atol, options.max_mismatches,
                           !options.exact && !options.tolerance_given};
    // The default mode is judged against an f64 reference, relative to the interpreter's own error
    // (docs/numerics.md); outputs narrower than f32 against an f32 reference when the f64 one cannot be built or does
    // not fit (or with --reference-type=f32); without either (--tolerance=fixed, an op neither promotion handles) the
    // fixed per-element rule applies. Like the interpreter's reference, it runs the partitioned program device by
    // device when that one does.
    std::vector<Literal> reference64;
    std::vector<LabeledOutput> reference64_outputs;
    std::vector<std::pair<std::string, RelativeError>> relative;
    const Shape& result_shape = module->entry_computation()->root()->shape();
    const bool want_reference64 =
        compare.default_mode_tolerance && !options.fixed_tolerance && JudgedByRelativeRule(result_shape);
    // The f32 reference judges only outputs narrower than f32: without one it would only cost time.
    const bool f32_judges = JudgedByRelativeRule(result_shape, PrimitiveType::kF32);
    // Global arguments exist unless the run read --input-shards alone.
    const bool have_global_args = per_device_reference || static_cast<int64_t>(global_args.size()) ==
                                                              module->entry_computation()->parameter_count();
    // Unpartitioned, device_args[0] is the global arguments; partitioned, they are handed over and back (no copy).
    auto evaluate_reference = [&](PrimitiveType type) -> absl::StatusOr<std::vector<Literal>> {
      // Outside the run's deadline (disarmed before printing), so under one of its own; the outputs are flushed
      // first, since a timeout ends the process without flushing.
      std::optional<Deadline> reference_deadline;
      if (options.timeout_seconds > 0) {
        out.flush();
        reference_deadline.emplace(options.timeout_seconds,
                                   fmt::format("{}: error: the {} reference of --check-against did not finish "
                                               "within --timeout={} s (the outputs above are complete)\n",
                                               input_name, PrimitiveTypeName(type), options.timeout_seconds));
      }
      std::vector<std::vector<Literal>> moved_global_args;
      if (partitioned_module && !per_device_reference) moved_global_args.push_back(std::move(args));
      ReferenceOptions reference_options{options.seed, options.num_replicas,
                                         per_device_reference ? num_partitions
                                         : partitioned_module ? 1
                                                              : options.num_partitions,
                                         options.threads, options.kernels ? options.kernels->elementwise() : nullptr};
      reference_options.type = type;
      absl::StatusOr<std::vector<Literal>> promoted =
          EvaluateReference(per_device_reference ? run_module : *module,
                            moved_global_args.empty() ? device_args : moved_global_args, reference_options);
      if (!moved_global_args.empty()) args = std::move(moved_global_args[0]);
      if (promoted.ok() && per_device_reference) promoted = assemble(*promoted, ReferenceShape(result_shape, type));
      return promoted;
    };
    if (want_reference64 && !have_global_args) {
      out << "note: no f64 reference (no global arguments): the fixed per-element rule applies\n";
    } else if (want_reference64 && options.reference_f32 && !f32_judges) {
      out << "note: no f32 reference (no output is narrower than f32): the fixed per-element rule applies\n";
    } else if (want_reference64) {
      // Why the f64 reference is missing (empty: it was not tried, or it was built).
      const std::string does_not_fit = "it does not fit in the memory limit beside the run";
      std::string no_f64 = !options.reference_f32 && reference_fit != ReferenceChoice::kF64 ? does_not_fit : "";
      absl::StatusOr<std::vector<Literal>> promoted = absl::UnknownError("");
      if (!options.reference_f32 && reference_fit == ReferenceChoice::kF64) {
        promoted = evaluate_reference(PrimitiveType::kF64);
        if (!promoted.ok()) no_f64 = std::string(promoted.status().message());
      }
      PrimitiveType reference_type = PrimitiveType::kF64;
      std::string no_f32;
      if ((options.reference_f32 || !no_f64.empty()) && f32_judges) {
        reference_type = PrimitiveType::kF32;
        // The memory check chose (CheckRunMemory): an f64 reference that fit but could not be built leaves the f32
        // one unchecked, its values half the f64 one's.
        if (reference_fit == ReferenceChoice::kNone) {
          no_f32 = no_f64.empty() ? does_not_fit : "it does not fit either";
        } else {
          promoted = evaluate_reference(PrimitiveType::kF32);
          if (!promoted.ok()) no_f32 = std::string(promoted.status().message());
        }
      }
      if (promoted.ok()) {
        reference64 = *std::move(promoted);
        reference64_outputs = LabelOutputs(reference64);
        compare.reference64 = &reference64_outputs;
        if (!no_f64.empty()) {
          out << "note: no f64 reference (" << no_f64 << "): judged against an f32 reference"
              << (JudgedOutputsNarrowerThanF32(result_shape)
                      ? ""
                      : " (outputs of f32 and wider types by the fixed per-element rule)")
              << "\n";
        }
      } else if (reference_type == PrimitiveType::kF32) {
        out << "note: " << (no_f64.empty() ? "" : "no f64 reference (" + no_f64 + "), ") << "no f32 reference ("
            << no_f32 << "): the fixed per-element rule applies\n";
      } else {
        out << "note: no f64 reference (" << no_f64 << "): the fixed per-element rule applies\n";
      }
    }
    std::vector<harness::CheckResult> compared =
        CompareOutputs(LabelOutputs(*results), reference_outputs, compare, &relative);
    std::string report;
    int64_t mismatched = 0;
    for (const harness::CheckResult& r : compared) {
      report += FormatComparisonFailure(r, input_name, "interpreter");
      mismatched += r.passed() ? 0 : 1;
    }
    ok &= mismatched == 0;
    out << report
        << fmt::format("check against {}: {} of {} output{} match\n", reference_name, compared.size() - mismatched,
                       compared.size(), compared.size() == 1 ? "" : "s")
        << FormatRelativeErrorSummary(relative);
  }

  std::vector<harness::CheckResult> check_results = checks.Results();
  if (!check_results.empty() || HasChecks(*module)) {
    std::string report;
    for (const harness::CheckResult& r : check_results) {
      report += harness::FormatCheckFailure(r, input_name);
      ok &= r.passed();
    }
    out << report << harness::FormatCheckSummary(check_results);
  }
  if (observer != nullptr) ok &= ReportObservations(options, *observer, observation, input_name, out, err);
  out.flush();
  if (exit_when_done) {
    // Everything is printed, written and flushed: freeing the JIT, the arrays and the module would only take time.
    err.flush();
    std::fflush(nullptr);
    std::_Exit(ok ? 0 : 1);
  }
  return ok ? 0 : 1;
}

int RunMainImpl(std::span<const std::string_view> args, std::ostream& out, std::ostream& err, bool exit_when_done) {
  absl::StatusOr<RunOptions> options = ParseRunArgs(args);
  if (!options.ok()) {
    err << "xla-run: error: " << options.status().message() << "\n";
    return 1;
  }
  options->exit_when_done = exit_when_done;
  if (options->help) {
    out << RunHelpText();
    return 0;
  }
  if (const char* dir = std::getenv("XLAC_CACHE_DIR"); options->cache_dir.empty() && dir != nullptr) {
    options->cache_dir = dir;
  }
  if (options->explain_cache && options->cache_dir.empty()) {
    err << "xla-run: error: --explain-cache needs --cache-dir (or XLAC_CACHE_DIR)\n";
    return 1;
  }
  options->host_available_memory = HostAvailableMemory();
  std::shared_ptr<const ffi::HandlerLibraries> ffi_libs;  // --custom-call-lib
  if (!LoadCustomCallLibs("xla-run", options->custom_call_libs, ffi_libs, err)) return 1;
  options->ffi_libs = ffi_libs.get();
  std::optional<MpiProcesses> mpi;
  if (options->mpi.value_or(LaunchedByMpirun())) {
    absl::StatusOr<MpiProcesses> started = StartMpi();
    if (!started.ok()) {
      err << "xla-run: error: " << started.status().message() << "\n";
      return 1;
    }
    mpi = *started;
  }
  std::string text, error;
  int rc = 1;
  if (ReadFile(options->input_filename, text, error)) {
    rc = RunModule(*options, options->input_filename, text, out, err, mpi ? &*mpi : nullptr);
  } else {
    err << "xla-run: error: " + error + "\n";
  }
  if (mpi.has_value()) {
    out.flush();
    err.flush();
    if (rc != 0 && !mpi->settled && mpi->count > 1) MpiAbort(rc);
    MpiFinish();
  }
  return rc;
}

}  // namespace

int RunMain(std::span<const std::string_view> args, std::ostream& out, std::ostream& err) {
  return RunMainImpl(args, out, err, /*exit_when_done=*/false);
}

int RunMain(int argc, char** argv) {
  std::vector<std::string_view> argv_args(argv + 1, argv + argc);
  std::vector<std::string> with_env = WithXlacFlags(argv_args, std::getenv("XLAC_FLAGS"));
  std::vector<std::string_view> args(with_env.begin(), with_env.end());
  std::ios::sync_with_stdio(false);
  // Whole diagnostic lines in one write each (mpirun interleaves pieces with its own messages); never freed, so
  // std::cerr stays usable until the last static destructor has flushed it.
  static LineAtomicBuffer* stderr_lines = new LineAtomicBuffer(STDERR_FILENO);
  std::cerr.rdbuf(stderr_lines);
  std::cerr.unsetf(std::ios::unitbuf);
  return RunMainImpl(args, std::cout, std::cerr, /*exit_when_done=*/!kFullTeardown);
}

}  // namespace xlac
