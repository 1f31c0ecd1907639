#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/tpu_target.h"
#include "passes/annotation_custom_calls.h"
#include "passes/spmd/spmd_partitioner.h"
#include "tools/lib/run_memory.h"
#include "tools/lib/run_options.h"

namespace xlac {
namespace {

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

template <typename T>
absl::StatusOr<T> ParseNumber(std::string_view flag, std::string_view text, T min_value) {
  T value{};
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < min_value) {
    return Invalid("invalid value '" + std::string(text) + "' for --" + std::string(flag) +
                   " (expected an integer >= " + std::to_string(min_value) + ")");
  }
  return value;
}

}  // namespace

absl::StatusOr<RunOptions> ParseRunArgs(std::span<const std::string_view> args) {
  RunOptions options;
  bool have_input = false;
  bool options_ended = false;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    if (options_ended || arg == "-" || !arg.starts_with("-")) {
      if (have_input) {
        return Invalid("more than one module file: '" + options.input_filename + "' and '" + std::string(arg) + "'");
      }
      have_input = true;
      options.input_filename = std::string(arg);
      continue;
    }
    if (arg == "--") {
      options_ended = true;
      continue;
    }
    std::string_view body = arg.substr(arg.starts_with("--") ? 2 : 1);
    std::string_view name = body;
    std::string_view value;
    bool has_value = false;
    if (size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
      has_value = true;
    }
    auto take_value = [&]() -> absl::StatusOr<std::string_view> {
      if (has_value) return value;
      if (i + 1 >= args.size()) return Invalid("option '" + std::string(arg) + "' needs a value");
      return args[++i];
    };
    auto no_value = [&]() -> absl::Status {
      if (has_value) return Invalid("option '--" + std::string(name) + "' does not take a value");
      return absl::OkStatus();
    };
    if (name == "help" || name == "h") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.help = true;
    } else if (name == "print" || name == "no-print") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.print = name == "print";
    } else if (name == "mpi" || name == "no-mpi") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.mpi = name == "mpi";
    } else if (name == "mpi-report") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.mpi_report = true;
    } else if (name == "cache-readonly" || name == "explain-cache") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      (name == "cache-readonly" ? options.cache_readonly : options.explain_cache) = true;
    } else if (name == "metrics") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.metrics = true;
    } else if (name == "dump-to" || name == "dump-pass-regex" || name == "trace") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (v->empty()) return Invalid("--" + std::string(name) + " needs a value");
      (name == "dump-to" ? options.dump_to
       : name == "trace" ? options.trace_file
                         : options.dump_pass_regex) = std::string(*v);
    } else if (name == "spmd-windowed-einsum-threshold-mib") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      absl::StatusOr<int64_t> bytes = ParseWindowedEinsumThresholdMib(*v);
      if (!bytes.ok()) return Invalid(std::string(bytes.status().message()));
      options.spmd_windowed_einsum_threshold_bytes = *bytes;
    } else if (name == "custom-call-identity") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (absl::Status s = AppendCustomCallIdentities(*v, options.custom_call_identity); !s.ok()) return s;
    } else if (name == "custom-call-src") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (v->empty()) return Invalid("--custom-call-src needs a C++ file");
      options.custom_call_sources.emplace_back(*v);
    } else if (name == "cache-dir") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (v->empty()) return Invalid("--cache-dir needs a directory name");
      options.cache_dir = std::string(*v);
    } else if (name == "cache-max-bytes") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      absl::StatusOr<int64_t> n = ParseNumber<int64_t>(name, *v, 1);
      if (!n.ok()) return n.status();
      options.cache_max_bytes = *n;
    } else if (name == "custom-call-lib") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (v->empty()) return Invalid("--custom-call-lib needs a shared library");
      options.custom_call_libs.emplace_back(*v);
    } else if (name == "exact") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.exact = true;
    } else if (name == "strict") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.strict = true;
    } else if (name == "tpu-report") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.tpu_report = true;
    } else if (name == "tpu-numerics") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      options.tpu_numerics = true;
    } else if (name == "per-device" || name == "spmd-report" || name == "no-partition") {
      if (absl::Status s = no_value(); !s.ok()) return s;
      (name == "per-device"    ? options.per_device
       : name == "spmd-report" ? options.spmd_report
                               : options.no_partition) = true;
    } else if (name == "backend" || name == "input" || name == "input-shards" || name == "output-dir" ||
               name == "seed" || name == "dcn-mesh" || name == "num-partitions" || name == "num-replicas" ||
               name == "max-mismatches" || name == "check-against" || name == "max-ulp" || name == "atol" ||
               name == "threads" || name == "timeout" || name == "tpu" || name == "topology" || name == "tolerance" ||
               name == "reference-type" || name == "reference-program") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      if (name == "backend") {
        if (*v != "jit" && *v != "interpreter") {
          return Invalid("unknown backend '" + std::string(*v) + "' (available: jit, interpreter)");
        }
        options.backend = std::string(*v);
      } else if (name == "check-against") {
        if (*v != "interpreter") {
          return Invalid("unknown --check-against backend '" + std::string(*v) + "' (available: interpreter)");
        }
        options.check_against = std::string(*v);
      } else if (name == "max-ulp") {
        absl::StatusOr<uint64_t> n = ParseNumber<uint64_t>(name, *v, 0);
        if (!n.ok()) return n.status();
        options.max_ulp = *n;
        options.tolerance_given = true;
      } else if (name == "atol") {
        char* end = nullptr;
        std::string text(*v);
        double x = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(x >= 0) || !std::isfinite(x)) {
          return Invalid("invalid value '" + text + "' for --atol (expected a number >= 0)");
        }
        options.atol = x;
        options.tolerance_given = true;
      } else if (name == "tolerance") {
        if (*v != "relative" && *v != "fixed") {
          return Invalid("unknown --tolerance rule '" + std::string(*v) + "' (available: relative, fixed)");
        }
        options.fixed_tolerance = *v == "fixed";
      } else if (name == "reference-type") {
        if (*v != "f64" && *v != "f32") {
          return Invalid("unknown --reference-type '" + std::string(*v) + "' (available: f64, f32)");
        }
        options.reference_f32 = *v == "f32";
      } else if (name == "reference-program") {
        if (*v != "partitioned" && *v != "unpartitioned") {
          return Invalid("unknown --reference-program '" + std::string(*v) +
                         "' (available: partitioned, unpartitioned)");
        }
        options.reference_program =
            *v == "partitioned" ? ReferenceProgram::kPartitioned : ReferenceProgram::kUnpartitioned;
      } else if (name == "tpu") {
        options.tpu = std::string(*v);
      } else if (name == "topology") {
        options.topology = std::string(*v);
      } else if (name == "input") {
        if (v->empty()) return Invalid("--input needs a .npy file name");
        options.inputs.emplace_back(*v);
      } else if (name == "dcn-mesh") {
        absl::StatusOr<uint64_t> n = ParseNumber<uint64_t>(name, *v, 1);
        if (!n.ok()) return n.status();
        options.dcn_mesh = static_cast<int64_t>(*n);
      } else if (name == "input-shards") {
        if (v->empty()) return Invalid("--input-shards needs a directory name");
        options.input_shards = std::string(*v);
      } else if (name == "output-dir") {
        if (v->empty()) return Invalid("--output-dir needs a directory name");
        options.output_dir = std::string(*v);
      } else if (name == "seed") {
        absl::StatusOr<uint64_t> n = ParseNumber<uint64_t>(name, *v, 0);
        if (!n.ok()) return n.status();
        options.seed = *n;
      } else if (name == "timeout") {
        char* end = nullptr;
        std::string text(*v);
        double x = std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size() || !(x > 0) || !std::isfinite(x)) {
          return Invalid("invalid value '" + text + "' for --timeout (expected seconds > 0)");
        }
        options.timeout_seconds = x;
      } else if (name == "threads") {
        absl::StatusOr<int> n = ParseNumber<int>(name, *v, 1);
        if (!n.ok()) return n.status();
        options.threads = *n;
      } else if (name == "max-mismatches") {
        absl::StatusOr<int> n = ParseNumber<int>(name, *v, 0);
        if (!n.ok()) return n.status();
        options.max_mismatches = *n;
      } else {
        absl::StatusOr<int64_t> n = ParseNumber<int64_t>(name, *v, 1);
        if (!n.ok()) return n.status();
        (name == "num-partitions" ? options.num_partitions : options.num_replicas) = *n;
      }
    } else if (name == "memory-limit") {
      absl::StatusOr<std::string_view> v = take_value();
      if (!v.ok()) return v.status();
      absl::StatusOr<int64_t> bytes = ParseMemorySize(*v);
      if (!bytes.ok()) return bytes.status();
      options.memory_limit = *bytes;
    } else {
      return Invalid("unknown option '" + std::string(arg) + "' (see --help)");
    }
  }
  if (!have_input && !options.help) return Invalid("no module file given (see --help)");
  if (options.input_filename == "-") return Invalid("reading the module from stdin is not supported; pass a file");
  if (!options.topology.empty() && options.tpu.empty()) return Invalid("--topology needs --tpu (v4, v5e, v5p, v6e)");
  if (options.tpu_report && options.tpu.empty()) return Invalid("--tpu-report needs --tpu (v4, v5e, v5p, v6e)");
  if (!options.tpu.empty()) {
    absl::StatusOr<const TpuChipSpec*> chip = FindTpuChipSpec(options.tpu);
    if (!chip.ok()) return Invalid(std::string(chip.status().message()));
    options.tpu_numerics = true;
    if (!options.topology.empty()) {
      absl::StatusOr<TpuTopology> topology = ParseTpuTopology(**chip, options.topology);
      if (!topology.ok()) return Invalid(std::string(topology.status().message()));
      const int64_t devices = topology->num_devices();
      const int64_t replicas = std::max<int64_t>(options.num_replicas, 1);
      if (options.num_partitions == 0 && devices % replicas == 0) options.num_partitions = devices / replicas;
      if (options.num_partitions * replicas != devices) {
        return Invalid("--topology=" + options.topology + " has " + std::to_string(devices) + " devices, not " +
                       std::to_string(replicas) + " replicas x " + std::to_string(options.num_partitions) +
                       " partitions");
      }
    }
  }
  if (!options.check_against.empty() && options.backend == options.check_against) {
    return Invalid("--check-against=" + options.check_against + " compares a backend with itself; use --backend=jit");
  }
  if (!options.dump_pass_regex.empty() && options.dump_to.empty()) return Invalid("--dump-pass-regex needs --dump-to");
  if (options.reference_program != ReferenceProgram::kAuto && options.check_against.empty()) {
    return Invalid("--reference-program needs --check-against=interpreter");
  }
  return options;
}

std::string RunHelpText() {
  return R"(OVERVIEW: xla-run: run the entry computation of an HLO or StableHLO module and evaluate its checks

USAGE: xla-run [options] <module file>

  Files ending in .mlir, or starting with `module` / `func.func`, are StableHLO; anything else is HLO text.
  The module is parsed, verified, and run by the chosen backend: compiled to native code in-process (jit, the
  default) or evaluated by the reference interpreter. Results are printed as HLO literals and/or written as .npy
  files; the test-harness check.* custom-calls are evaluated and reported. A module the JIT cannot compile is an
  error (never a silent fallback): rerun it with --backend=interpreter.

OPTIONS:
  --backend=<name>        jit (default): compile with LLVM and run natively; interpreter: the reference interpreter
  --check-against=interpreter
                          Also run the interpreter on the same inputs and compare every output with it (integers
                          and pred exactly, floats within the mode's tolerance); mismatches are reported like
                          failed checks. Floats: with --exact bit for bit; otherwise each output's error
                          against an f64 reference within 8x the interpreter's own (--tolerance; docs/numerics.md)
  --strict                Reject HLO text that XLA's parser rejects even where exporters write it with one
                          meaning (api_version=API_VERSION_UNSPECIFIED); default: read it with a warning
  --exact                 Exact numerics: libm calls, sequential reductions, no FMA contraction, so the JIT
                          agrees with the interpreter bit for bit (default: vectorized math approximations and
                          reassociation within the bounds of docs/numerics.md)
  --tpu-numerics          TPU dot numerics in both backends: f32 dots and convolutions at DEFAULT precision round
                          their operands to bf16 and accumulate in f32, as a TPU's matrix unit; HIGHEST stays
                          f32; HIGH is the 3-pass bf16 split; algorithms not modeled are reported
  --timeout=<S>           End with an error (exit 1) when parsing, compiling and running take longer than S
                          seconds: an infinite while loop or a run that would take hours. Nothing is printed or
                          written then; the deadline is disarmed before outputs are written
  --threads=<N>           Threads for the whole run, device threads included (default: the CPUs of the process's
                          affinity mask, so `taskset -c 0` means one); each of D devices runs its large loops,
                          GEMMs and convolutions on max(1, N / D) of them. Results never depend on it
  --max-ulp=<N>           ULP distance allowed by --check-against for floating-point elements (replaces the
                          mode's tolerance; NaN matches NaN and +0 matches -0)
  --atol=<x>              With --check-against: a floating-point output also matches when every element is
                          within x * max(1, |reference|) (for sums that partitioning reassociates)
  --tolerance=relative|fixed
                          The default mode's --check-against rule: relative (default) judges each output's error
                          against an f64 reference, allowing 8x the interpreter's own; fixed compares element by
                          element (16 ulp or 1024 eps * max(1, |want|))
  --reference-program=partitioned|unpartitioned
                          For a partitioned run, what --check-against's interpreter runs: the partitioned program
                          device by device (the JIT's sums in the JIT's order; default with --exact unless
                          --max-ulp/--atol allow more), or the unpartitioned module on one partition (also checks the
                          partitioning; the default otherwise). Manual regions always run partitioned
  --reference-type=f64|f32
                          What the relative rule's reference computes in: f64 (default; when it cannot be built
                          or does not fit in memory, outputs narrower than f32 are judged against an f32
                          reference instead), or f32 (half the memory; judges bf16/f16/f8 outputs only)
  --custom-call-identity=<T1,T2,...>
                          Custom-calls with these targets are identities (one operand, result of its shape;
                          otherwise an error at the call), e.g. PyTorch/XLA's tt.mark_argument; repeatable. Both
                          backends and --check-against see the same rewrite
  --custom-call-src=<file.cc>
                          C++ kernels for custom calls (docs/custom_calls.md), compiled in process by Clang for the
                          program's CPU and inlined into it; the interpreter runs the same compiled kernels.
                          Repeatable
  --custom-call-lib=<lib.so>[:<target>=<symbol>,...]
                          XLA FFI handler library (docs/custom_calls.md): typed-FFI custom calls run the handler
                          exported under the target's name (or the mapped symbol) through XLA's FFI C API, in both
                          backends and --check-against's interpreter. Repeatable; the first library that has a
                          target wins
  --input=<file.npy>      Value of the next entry parameter (give one per parameter, in order); without any
                          --input every parameter gets pseudo-random values from --seed
  --dcn-mesh=<K>          Hybrid mesh: the devices form K DCN slices of consecutive ids (each an ICI mesh);
                          --spmd-report and --tpu-report split each collective's bytes into ICI and DCN
  --input-shards=<dir>    A partitioned program: device d reads its shard of parameter i from
                          <dir>/device_<d>/result_<i>.npy (what --per-device --output-dir writes); under mpirun
                          each process reads only its own devices' shards (docs/multihost.md)
  --seed=<N>              Seed for random parameters, elided {...} constants and rng ops (default 42)
  --output-dir=<dir>      Write each result as <dir>/result_<i>.npy (<dir>/device_<d>/... with several devices)
  --print / --no-print    Print the results as HLO literals (default: print unless --output-dir is given)
  --tpu=<version>         Emulate a TPU slice of v4, v5e, v5p or v6e chips (docs/tpu_model.md): one device per
                          chip, TPU dot numerics (as --tpu-numerics), and the per-core HBM check: a program whose
                          peak of live buffers, padded to TPU tiles, exceeds the chip's HBM fails before it runs,
                          listing the largest buffers
  --topology=<AxB[xC]>    The slice's shape (v5e/v6e: 2x4, 4x4, ...; v4/v5p: 2x2x1, 4x4x4, ...); sets
                          --num-partitions to its device count unless given (default: the listed slice with the
                          module's device count)
  --tpu-report            With --tpu: before running, print one core's HBM peak (padded and unpadded, largest
                          buffers) and its modeled step time (compute / memory / communication, costliest ops)
  --num-replicas=<N>      Override the module's replica count
  --num-partitions=<N>    Override the module's number of partitions
  --max-mismatches=<N>    Mismatching elements listed per failed check (default 5)
  --memory-limit=<size>   The memory the run may take (bytes, or with a K, M, G or T suffix: 20G), or 'none'.
                          Default: what this machine has available (MemAvailable, within the cgroup's limit).
                          A run estimated to need more (arguments, shards, constants, results, each device's
                          compiled buffers, the interpreter's values) fails before allocating anything large

SPMD: a module with sharding annotations and more than one partition is partitioned (sharding-propagation, then
spmd-partitioner) and each partition runs its shard of the program on its own emulated core. Inputs are global
arrays that xla-run splits by the entry parameters' shardings; outputs are assembled back to global arrays.
--check-against=interpreter compares them with the interpreter running the unpartitioned module on one device
(with --exact: the partitioned program device by device; --reference-program chooses).
  --per-device            Print / write every device's raw result shard instead of the assembled global results
  --spmd-windowed-einsum-threshold-mib=<X>
                          Windowed einsum (collective matmul): a sharded dot whose operand all-gather or result
                          reduce-scatter moves at least X MiB per core (decimals allowed: 0.01) becomes a loop of
                          collective-permutes around the ring, one partial dot per step. 0 (default): off
  --spmd-report           Print the collectives the partitioner inserted (source op, group size, bytes per core)
  --no-partition          Ignore shardings: run the global program on every device, as written

Several processes (docs/multihost.md): under `mpirun -np P xla-run ...` the devices are split over the P processes
(contiguous by device id, D / P each); collectives between processes go through MPI. Every process reads the same
inputs; process 0 prints / writes the global outputs and runs --check-against, the others print nothing.
  --mpi / --no-mpi        Run over MPI / in one process (default: over MPI when the environment shows an mpirun
                          launch: OMPI_COMM_WORLD_SIZE, PMI_SIZE or PMIX_RANK)
  --mpi-report            Process 0 prints how long each process's run took (compilation excluded) and the bytes
                          it sent to other processes (also without MPI: one process, 0 bytes)
  --help                  Print this help and exit

Compilation cache (docs/cache.md): the JIT keeps the object code of every compilation in a directory, keyed by the
canonical module text, the options that change code, the CPU and the xlac build; the next run of the same module
loads it instead of compiling. Processes may share the directory. XLAC_CACHE_DIR sets it when --cache-dir is absent.
  --cache-dir=<dir>       Use (and create) this cache directory
  --cache-readonly        Look entries up but never write the directory (shared, prebuilt caches)
  --cache-max-bytes=<N>   Evict the least recently used entries beyond N bytes (default 1073741824)
  --explain-cache         Print to stderr whether the compile hit the cache and, on a miss, which key component
                          differs from the nearest entry (and corrupt entries found)

Observability (docs/observability.md). XLAC_FLAGS adds flags to the command line (e.g. XLAC_FLAGS=--dump-to=d).
  --metrics               After the outputs, print the metrics report in PyTorch/XLA's format: compile time per
                          phase, execute time, and per emulated core the time waiting at collectives, the bytes
                          sent and received per collective kind and the arena size (and kernel time with --trace)
  --trace=<file.json>     Write a Chrome trace event file (Perfetto, chrome://tracing): compile phases on their own
                          track, one track per emulated core with a slice per kernel and per collective (bytes,
                          wait time). Compiles the kernels with trace hooks (without --trace there are none)
  --dump-to=<dir>         Write the JIT compilation's dumps, named as XLA's: module_0001.NAME.before_optimizations
                          .txt, one numbered file after each pass, after_optimizations.txt, buffer-assignment.txt,
                          ir-no-opt.ll, ir-with-opt.ll and the object file (.o)
  --dump-pass-regex=<re>  With --dump-to: a file only after the passes whose name matches <re>

Exit status: 0 when the run succeeded, every check passed and (with --check-against) every output matched; 1 on
any error (including a module the JIT cannot compile), failed check or mismatch.
)";
}

}  // namespace xlac
