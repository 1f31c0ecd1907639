// xlac's JIT library API: compile an HLO or StableHLO module from text, inspect its parameters and results, and run
// it on your own buffers as often as you like. This header does not expose xlac's IR or LLVM; link the CMake target
// `xlac_jit`.
//
//   absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(text);
//   std::vector<float> x(8 * 16), y(8);
//   absl::Status s = (*exe)->Run({x.data()}, {y.data()});
//
// Buffers are dense, row-major (C order) arrays of the element type, as numpy lays them out; pred is one byte per
// element, bf16/f16 are their 16-bit patterns, complex types are interleaved (real, imaginary) pairs. A module whose
// result is a tuple has one result buffer per (flattened) tuple leaf.
//
// A module with `sharding=` annotations and more than one partition is SPMD-partitioned at compile time (sharding
// propagation, then the partitioner): each device runs its shard of the program, but the API stays global. Run takes
// the global parameters, splits them into every device's shards, and writes the global results assembled from the
// partitions; parameters() and results() describe the global shapes. CompileOptions::partition = false opts out.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace xlac {

// Shape of one array parameter or result leaf.
struct ArrayInfo {
  std::string element_type;   // HLO spelling: "f32", "bf16", "s32", "pred", "c64", ...
  std::vector<int64_t> dims;  // logical dimensions, major to minor
  int64_t element_bytes = 0;  // bytes per element in the buffer
  int64_t byte_size() const;  // element_bytes * product(dims)
};

// One execution of a custom-call whose target the host implements. Buffers follow the layout rules above; tuple
// operands and results are flattened to their array leaves (tokens are left out).
struct CustomCall {
  std::string_view target;          // custom_call_target
  std::string_view backend_config;  // as written in the module
  std::vector<ArrayInfo> operand_infos;
  std::vector<const void*> operands;
  std::vector<ArrayInfo> result_infos;
  std::vector<void*> results;  // zero-filled; the handler writes every result leaf it produces
};
// Called concurrently from every device thread; an error status fails the run with its message.
using CustomCallHandler = std::function<absl::Status(const CustomCall& call)>;

// One execution of an infeed: the host fills its data leaves.
struct Infeed {
  std::string_view name;    // the infeed instruction's name in the module
  int64_t device_id = 0;    // replica * num_partitions + partition
  uint64_t occurrence = 0;  // this infeed's executions on this device in the current Run, from 0
  std::vector<ArrayInfo> infos;
  std::vector<void*> buffers;  // zero-filled data leaves to write
};
// Called concurrently from every device thread; an error status fails the run with its message.
using InfeedHandler = std::function<absl::Status(const Infeed& infeed)>;

// Metrics over compilations and runs, reported in PyTorch/XLA's metrics_report() format (docs/observability.md):
// CompileTime and PhaseTime.<phase> (parse, verify, spmd partition, each pass, llvm emit / optimize, jit codegen
// and link), ExecuteTime, and per emulated core the time waiting at collectives, the bytes sent and received per
// collective kind and the arena size; counters (CachedCompile, UncachedCompile, Executions, Collective.<kind>).
// Give one to CompileOptions::metrics: Compile records the compilation and every Run of the executable its run.
// Thread-safe; must outlive the executables that record into it.
class Metrics {
 public:
  Metrics();
  ~Metrics();
  Metrics(const Metrics&) = delete;
  Metrics& operator=(const Metrics&) = delete;
  std::string Report() const;
  void Clear();

 private:
  friend class Executable;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// A Chrome trace (docs/observability.md; Perfetto and chrome://tracing open it) of the compilations and runs recorded
// while it is started, as xla-run --trace writes: the compile phases on their own track, one track per emulated
// core with a slice per run and, for executables compiled while the trace was started, a slice per fusion/op kernel
// and per collective. Give one to CompileOptions::tracer. Thread-safe; must outlive the executables that record into
// it.
class Tracer {
 public:
  Tracer();
  ~Tracer();
  Tracer(const Tracer&) = delete;
  Tracer& operator=(const Tracer&) = delete;
  // Forgets what was recorded and starts recording.
  void Start();
  // Stops recording and returns the trace event JSON of what was recorded since Start.
  std::string Stop();
  bool active() const;

 private:
  friend class Executable;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

struct CompileOptions {
  int opt_level = 2;                // 0..3
  std::string target_cpu = "host";  // "host" (detect) or an LLVM CPU name
  // Devices: replicas x partitions, each running the program on its own thread with real collectives between
  // them. 0 keeps the module's replica_count / num_partitions.
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  std::string source_name = "<text>";  // file name used in diagnostics
  // Custom-calls other than the built-in ones ("Sharding", ...) run this; without it a module that has one does not
  // compile (Unimplemented).
  CustomCallHandler custom_call_handler;
  // XLA FFI handler libraries (docs/custom_calls.md, "XLA FFI handler libraries"): shared libraries that export
  // XLA FFI handlers, each `FILE.so` or `FILE.so:TARGET=SYMBOL,...`. Custom calls whose target a library provides
  // call it through XLA's FFI C API; the others go to custom_call_handler. Without a custom_call_handler, every
  // typed-FFI custom call (api_version = 4) must have a library handler, or Compile fails at the call.
  std::vector<std::string> custom_call_libs;
  // C++ kernels for custom calls (docs/custom_calls.md, xla-run --custom-call-src): files compiled in process by
  // Clang for `target_cpu` and linked into the program, where an elementwise kernel is inlined into the fused loop
  // around its call. Clang's errors, and calls that do not match their kernel, fail Compile with InvalidArgument and
  // `file:line:col: error: ...` diagnostics. With `cache_dir`, a cached kernel library runs no Clang.
  std::vector<std::string> custom_call_sources;
  // Infeeds run this; without it, a module with an infeed does not compile.
  InfeedHandler infeed_handler;
  // Custom-call targets that are identities (xla-run --custom-call-identity), e.g. PyTorch/XLA's tt.mark_argument:
  // such a call must have one operand and a result of its shape (otherwise Compile fails at the call) and becomes a
  // copy of it before partitioning, so a sharded operand stays sharded. Custom-calls that only annotate (MoveToHost,
  // annotate_device_placement, xla.sdy.FuncResultSharding, ...) are identities without being listed.
  std::vector<std::string> custom_call_identity;
  // A module with shardings and more than one partition is partitioned (SPMD): every partition runs its shard of
  // the program and Run splits the global parameters / assembles the global results. false runs the unpartitioned
  // (global) program on every device instead, shardings ignored. Modules without shardings, or with one partition,
  // are never partitioned.
  bool partition = true;
  // Exact numerics: results bit-for-bit equal to the reference interpreter (libm calls, sequential reductions, no
  // FMA contraction). The default inlines vectorizable approximations and may reassociate within the bounds of
  // docs/numerics.md.
  bool exact = false;
  // Threads for a run, device threads included: each of the D devices runs its large loops, GEMMs and convolutions
  // on max(1, threads / D) threads of one process-wide pool. 0 takes the CPUs of the process's affinity mask
  // (`taskset -c 0` means one). Results never depend on it.
  int threads = 0;
  // TPU dot numerics: f32 dots and convolutions at DEFAULT precision round their operands to bf16 and accumulate in
  // f32, as a TPU's matrix unit does; HIGH is the 3-pass bf16 split, HIGHEST stays f32 (docs/numerics.md).
  bool tpu_numerics = false;
  // TPU target (docs/tpu_model.md): "v4", "v5e", "v5p" or "v6e", and optionally the slice ("4x4", "4x4x4"). The
  // devices are the slice's chips (num_partitions = chips / replicas unless given; without `tpu_topology` the listed
  // slice with the module's device count), TPU dot numerics are on, and a program whose per-core peak of live
  // buffers, padded to TPU tiles, exceeds the chip's HBM does not compile (ResourceExhausted, listing the largest
  // buffers).
  std::string tpu;
  std::string tpu_topology;
  // Persistent compilation cache (docs/cache.md): the object code of every compilation is kept in this directory,
  // which many processes may share, and a later Compile of the same module with the same code-changing options on
  // the same CPU and xlac build loads it instead of compiling. Empty: no cache.
  std::string cache_dir;
  // Observability (docs/observability.md), all off by default. `metrics` (not owned) records this compilation and
  // every Run. `dump_to`: XLA-style dumps of the compilation into that directory (module before and after
  // optimization and after each pass whose name matches `dump_pass_regex`, or every pass when it is empty; buffer
  // assignment, LLVM IR, object file), numbered module_NNNN by `dump_module_id`.
  Metrics* metrics = nullptr;
  // `tracer` (not owned) records this compilation and every Run while it is started; the code gets the kernel trace
  // hooks (a little slower) only when the tracer is started at compile time.
  Tracer* tracer = nullptr;
  std::string dump_to;
  std::string dump_pass_regex;
  int64_t dump_module_id = 1;
  // Several processes (docs/multihost.md): under mpirun, the devices are split over the processes (process p runs
  // devices [p * D / P, (p + 1) * D / P)) and collectives that span processes go through MPI, which the first such
  // Compile initializes (and finalizes at exit). Every process compiles the same module with the same options and
  // calls Run with the same global parameters. Unimplemented in a build without MPI; one process runs everything.
  bool mpi = false;
  bool cache_readonly = false;                 // look entries up, never write the directory
  int64_t cache_max_bytes = int64_t{1} << 30;  // least recently used entries are evicted beyond this
};

// The processes of an mpirun launch over which CompileOptions::mpi splits the devices (docs/multihost.md); MPI is
// initialized on first use (Unimplemented in a build without MPI). Outside mpirun: 0 and 1.
absl::StatusOr<int64_t> MpiProcessIndex();
absl::StatusOr<int64_t> MpiProcessCount();

class Executable {
 public:
  // Parses (HLO text, or StableHLO when the text is an MLIR module), verifies, partitions (see `partition` above)
  // and compiles. Parse, verification and partitioning errors come back as InvalidArgument (Unimplemented for
  // shardings the partitioner does not support) with `file:line:col: error: ...` diagnostics; ops the compiler does
  // not lower yet as Unimplemented naming the op.
  static absl::StatusOr<std::unique_ptr<Executable>> Compile(std::string_view module_text,
                                                             const CompileOptions& options = {});
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  // Global shapes, also when partitioned.
  const std::vector<ArrayInfo>& parameters() const;
  const std::vector<ArrayInfo>& results() const;  // flattened tuple leaves
  // Per result leaf: the parameter whose buffer the module's input_output_alias lets it reuse (JAX's buffer
  // donation), or -1. Passing that parameter's buffer as the result too donates it: see Run.
  const std::vector<int64_t>& result_donors() const;
  int64_t num_devices() const;  // replicas x partitions, over all processes
  // This process's devices (CompileOptions::mpi): [process_index() * local_device_count(), ...) of num_devices().
  int64_t local_device_count() const;
  int64_t process_index() const;  // 0 without MPI
  int64_t process_count() const;  // 1 without MPI
  // Whether the program was SPMD-partitioned, and what the partitioner did: one line per inserted collective with
  // the bytes each core sends, then warnings (replicated fallbacks). Empty when not partitioned.
  bool partitioned() const;
  std::string spmd_report() const;
  // With CompileOptions::cache_dir: whether the code came from the cache, and why not (which key component differs
  // from the nearest entry, corrupt entries), one "cache: ..." line each. Empty without a cache.
  bool cache_hit() const;
  std::string cache_report() const;

  // Runs the program. `parameters[i]` points to parameters()[i].byte_size() bytes; `results[j]` to
  // results()[j].byte_size() writable bytes. Unpartitioned with several devices, every device gets the same
  // parameters and the results are device 0's. Partitioned, every partition gets its shards of the parameters
  // (every replica the same shards) and the results are assembled from replica 0's partitions. Not safe to call
  // concurrently on one Executable; reuse it across calls freely. The executable allocates its working buffers on
  // the first Run and keeps them until it is destroyed (no allocation or page faults per run). Results never alias
  // that memory: unpartitioned, the program writes a result leaf straight into `results[j]` when the compiled
  // layout is row-major and the buffer is element-aligned (64-byte aligned for a result of 16 MiB or more, which
  // the program writes with streaming stores) and overlaps no parameter or other result buffer (so
  // `results` may hold partial values after a failed Run); otherwise the leaf is copied there after the run.
  // Donation: when results[j] is the very buffer of parameters[result_donors()[j]] (the same pointer; a training
  // loop updating its weights), the unpartitioned program updates it in place, copying nothing, and the
  // parameter's old values are gone after the run; no other parameter or result may overlap it. A donated
  // parameter given a separate result buffer is copied into that buffer first and updated there, so the caller's
  // parameter buffer is never written.
  // Over several processes (CompileOptions::mpi) every process must call Run: process 0 gets the global results
  // (partitioned: gathered from every process's partitions; unpartitioned: device 0's). The other processes get
  // their first local device's results when unpartitioned and nothing (the buffers are not written) when
  // partitioned.
  absl::Status Run(const std::vector<const void*>& parameters, const std::vector<void*>& results);

 private:
  struct Impl;
  explicit Executable(std::unique_ptr<Impl> impl);
  absl::Status RunUnrecorded(const std::vector<const void*>& parameters, const std::vector<void*>& results);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xlac
