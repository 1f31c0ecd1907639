// Command-line options of xla-run (see docs/cli.md), parsed into a typed struct so the driver can be called from
// tests. Hand-written parser for the same reason as xla-opt's (llvm::cl options are process-global).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace xlac {

namespace ffi {
class HandlerLibraries;  // runtime/ffi/ffi_library.h
}

struct CustomCallKernels;  // compiler/kernel_sources.h

inline constexpr int64_t kNoMemoryLimit = -1;  // --memory-limit=none

// --reference-program: what --check-against's interpreter runs for a partitioned run (run_memory.h,
// PerDeviceReference). kAuto: the partitioned program when the comparison is bit for bit (--exact, no --max-ulp or
// --atol above 0), since the unpartitioned module adds partial sums in another order; the unpartitioned module
// otherwise.
enum class ReferenceProgram { kAuto, kPartitioned, kUnpartitioned };

struct RunOptions {
  std::string input_filename;
  std::string backend = "jit";  // "jit" (compiled through codegen/jit.h) or "interpreter"
  // Empty, or "interpreter": also run the reference interpreter and compare every output against it.
  std::string check_against;
  uint64_t max_ulp = 0;  // --check-against: allowed ULP distance for floating-point elements
  double atol = 0;       // --check-against: or within atol * max(1, |reference|) (see CompareOptions::atol)
  // --max-ulp or --atol was given: --check-against uses exactly those instead of the mode's default tolerance.
  bool tolerance_given = false;
  // --tolerance=fixed: the default mode's check uses the per-element rule instead of judging against an f64
  // reference (docs/numerics.md, "Differential tolerance").
  bool fixed_tolerance = false;
  // --reference-type=f32: the relative rule's reference computes in f32 (outputs narrower than f32 are judged; f32
  // and wider ones keep the fixed rule). Otherwise ("f64", the default) in f64, falling back to f32 when the f64
  // reference cannot be built or does not fit (docs/numerics.md).
  bool reference_f32 = false;
  ReferenceProgram reference_program = ReferenceProgram::kAuto;  // --reference-program=partitioned|unpartitioned
  // --exact: the JIT agrees with the interpreter bit for bit (docs/numerics.md); --check-against then defaults to 0
  // ULP. Without it, --check-against defaults to the default mode's documented tolerance.
  bool exact = false;
  bool strict = false;        // --strict (CompilerOptions::strict)
  bool tpu_numerics = false;  // --tpu-numerics: both backends model TPU dot numerics (ir/tpu_numerics.h)
  // --tpu=v5e [--topology=4x4]: emulate that TPU slice (ir/tpu_target.h): one device per chip (num_partitions =
  // chips / replicas unless given), TPU dot numerics on, and the per-core HBM check (passes/tpu_memory.h) before
  // anything runs. Without --topology the slice is the listed one with the module's device count.
  std::string tpu;
  std::string topology;
  bool tpu_report = false;  // --tpu-report: print HBM per core and the modeled step time before running
  int threads = 0;          // --threads: JitOptions::threads (0: the affinity mask's CPUs)
  // --timeout: seconds the parse-compile-run may take before xla-run ends the process with an error (0: none).
  double timeout_seconds = 0;
  // One .npy file per entry parameter, in parameter order; empty means "pseudo-random values from `seed`".
  std::vector<std::string> inputs;
  // --custom-call-identity=A,B (repeatable): custom-call targets that are identities (annotation-custom-calls pass).
  std::vector<std::string> custom_call_identity;
  // --custom-call-src=FILE.cc (repeatable): C++ kernels for custom calls, compiled in process by Clang for the
  // program's CPU (docs/custom_calls.md).
  std::vector<std::string> custom_call_sources;
  // Not a flag: RunModule compiles --custom-call-src once and hands the kernels down with its copy of the options.
  const CustomCallKernels* kernels = nullptr;
  // --input-shards=DIR: each device reads its shards of a partitioned program's parameters (run_shards.h).
  std::string input_shards;
  // --dcn-mesh=K: the devices form K DCN slices of consecutive ids (passes/spmd/dcn_attribution.h); --spmd-report
  // and --tpu-report then split each collective's bytes into ICI and DCN. 0: one slice, no split.
  int64_t dcn_mesh = 0;
  // Seeds the pseudo-random parameters, elided `{...}` constants and rng ops.
  uint64_t seed = 42;
  // --custom-call-lib=FILE.so[:TARGET=SYMBOL,...] (repeatable): XLA FFI handler libraries for custom calls
  // (docs/custom_calls.md), tried in order before the tools' own handlers.
  std::vector<std::string> custom_call_libs;
  // Not a flag: the loaded --custom-call-lib libraries (RunMain loads them; other callers of RunModule with
  // custom_call_libs load them with LoadCustomCallLibs, compiler/custom_call_libs.h). Not owned.
  const ffi::HandlerLibraries* ffi_libs = nullptr;
  std::string output_dir;      // empty: write no .npy files
  std::optional<bool> print;   // --print / --no-print; unset: print when no output_dir is given
  int64_t num_replicas = 0;    // 0: the module's replica_count
  int64_t num_partitions = 0;  // 0: the module's num_partitions
  int max_mismatches = 5;      // mismatching elements listed per failed check
  bool help = false;
  bool per_device = false;    // SPMD: print/write each device's shard instead of the assembled global outputs
  bool spmd_report = false;   // SPMD: print the partitioner's report
  bool no_partition = false;  // run a sharded module unpartitioned on every device
  // --spmd-windowed-einsum-threshold-mib: SpmdOptions::windowed_einsum_threshold_bytes (0: off).
  int64_t spmd_windowed_einsum_threshold_bytes = 0;
  // --mpi / --no-mpi: split the devices over the processes of an MPI run (docs/multihost.md); unset: when the
  // environment shows an mpirun launch (OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK).
  std::optional<bool> mpi;
  bool mpi_report = false;  // --mpi-report: process 0 prints each process's run time and bytes sent
  // --cache-dir (or XLAC_CACHE_DIR, read by RunMain): the JIT's persistent compilation cache (docs/cache.md).
  std::string cache_dir;
  bool cache_readonly = false;                 // --cache-readonly: look up, never write
  int64_t cache_max_bytes = int64_t{1} << 30;  // --cache-max-bytes: LRU eviction beyond this
  bool explain_cache = false;                  // --explain-cache: say hit/miss (and why) on stderr
  // Observability (docs/observability.md). --dump-to: XLA-style dumps of the JIT's compilation (module before and
  // after optimization and after each pass matching --dump-pass-regex, buffer assignment, LLVM IR, object file).
  std::string dump_to;
  std::string dump_pass_regex;
  bool metrics = false;    // --metrics: print the PyTorch/XLA-format metrics report after the outputs
  std::string trace_file;  // --trace: write a Chrome trace event JSON file (kernel trace hooks compiled in)
  // Not a flag: set by the process's entry point (RunMain(argc, argv)), never by callers that go on running. Once
  // the outputs are printed, written and flushed, RunModule ends the process (std::_Exit) instead of tearing down
  // the JIT, the arrays and the module: a cache hit's start is short enough for that to matter (docs/cache.md).
  bool exit_when_done = false;
  // --memory-limit=SIZE: the bytes the run may take (tools/lib/run_memory.h), checked before anything large is
  // allocated; kNoMemoryLimit: none, no check. Unset: host_available_memory.
  std::optional<int64_t> memory_limit;
  // Not a flag: what the host has available, read by RunMain (tools/lib/run_memory.h); -1 unknown, and then only
  // --memory-limit is checked.
  int64_t host_available_memory = -1;

  bool ShouldPrint() const { return print.value_or(output_dir.empty()); }
};

// Parses the arguments after argv[0]. Accepts `-flag` and `--flag`, values after '=' or as the next argument, and
// `--` to end option parsing. Exactly one positional argument (the module file) unless --help. Errors are user
// errors whose message is meant to be printed after "xla-run: error: ".
absl::StatusOr<RunOptions> ParseRunArgs(std::span<const std::string_view> args);

// The --help text.
std::string RunHelpText();

}  // namespace xlac
