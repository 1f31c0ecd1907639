// How much memory an xla-run run needs, estimated from shapes and the buffer assignment before anything large is
// allocated, so a program larger than the machine fails with a clear error instead of being OOM-killed halfway
// (docs/cli.md, "Memory"). The host's available memory is read here, in the tools; the estimate itself reads
// nothing but the modules and options it is given.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "codegen/pipeline.h"
#include "ir/module.h"
#include "tools/lib/run_options.h"

namespace xlac {

// --memory-limit's value: a byte count with an optional K, M, G or T suffix (powers of 1024, optionally followed by
// "B" or "iB"; fractions allowed: "1.5G"), or "none" (kNoMemoryLimit: skip the check).
absl::StatusOr<int64_t> ParseMemorySize(std::string_view text);

// Bytes this process could allocate without swapping: /proc/meminfo's MemAvailable, lowered to what the process's
// memory cgroup still allows (cgroup v2 memory.max, v1 memory.limit_in_bytes, less the usage that is not
// reclaimable page cache) when one is set. -1 when neither can be read. The roots are parameters for tests.
int64_t HostAvailableMemory(std::string_view proc_root = "/proc", std::string_view cgroup_root = "/sys/fs/cgroup");

// Bytes the reference interpreter holds at once while evaluating `module`'s entry on one device, arguments
// excluded: it evaluates in post order and frees each value after its last use (runtime/interpreter/evaluator.cc),
// so this replays that schedule; a while, call or conditional adds its callee's peak at that instruction, dots and
// convolutions the operand copies their kernels make (a dot's GEMM reads its rhs in place and packs it in groups of
// at most interp::kGemmPackBudget bytes).
int64_t InterpreterPeakBytes(const Module& module);

// The reference the default mode's --check-against judges against (run_compare.h, EvaluateReference): the module
// promoted to f64, or to f32 (for outputs narrower than f32 only), or none (the fixed rule compares).
enum class ReferenceChoice { kF64, kF32, kNone };

// What a run holds in memory at once. A run has phases that never overlap: the compiled program running (its
// per-device buffers), the interpreter running (--backend=interpreter, or --check-against's reference after the
// compiled program is freed) and, for the default mode's --check-against, the f64 or f32 reference running after the
// interpreter. `total` is the largest; `parts` are that phase's components.
struct RunMemoryEstimate {
  struct Part {
    std::string what;
    int64_t count = 1;  // "count x bytes" when above 1 (per device, copies)
    int64_t bytes = 0;
  };
  std::vector<Part> parts;
  int64_t total = 0;
  // The JIT's per-device buffers are an upper bound from the program's value sizes (the buffer assignment was not
  // computed because the bound already fits).
  bool buffers_bounded = false;
  std::string ToString() const;  // "parameters 40 GiB, shards 8 x 5 GiB, ..."
};

// Manual regions (shard_map): the values between SPMDFullToShardShape and SPMDShardToFullShape are per-core, so
// --check-against runs the partitioned program on the interpreter device by device.
bool HasManualRegions(const Module& module);

// Whether --check-against's references (the interpreter's run and the default mode's f64 or f32 one) run the
// partitioned program device by device, on the shards the JIT ran, rather than `module` (as parsed) unpartitioned on
// one partition per replica: for a partitioned run (`partitioned`) whose module has manual regions, or as
// options.reference_program says; by default when the comparison is bit for bit (--exact, and no --max-ulp or
// --atol above 0), whose promise the unpartitioned module cannot keep once a contraction or reduction dimension is
// sharded (the all-reduce adds the devices' partial sums in another order). Only the unpartitioned module checks the
// partitioning itself. --reference-program=unpartitioned with manual regions is an error RunModule reports.
bool PerDeviceReference(const RunOptions& options, const Module& module, bool partitioned);

// What runs and how, for the estimate.
struct RunMemoryPlan {
  const Module* module = nullptr;      // as parsed: its entry parameters are the global arguments
  const Module* run_module = nullptr;  // what the backend runs (the partitioned program); null: not known yet
  bool partitioned = false;            // run_module is `module` partitioned: arguments are split into shards
  int64_t devices = 1;                 // all emulated devices (replicas x partitions)
  int64_t replicas = 1;
  int64_t local_devices = 1;   // devices this process runs (fewer under MPI)
  bool jit = true;             // else the interpreter is the backend
  bool check_against = false;  // --check-against=interpreter: the interpreter runs `module` afterwards
  // ... and then the default mode's reference (run_compare.h, EvaluateReference), kF64 or kF32. It runs `module`
  // promoted while the interpreter's results are kept, so its values are up to 2x (f32) or 4x (bf16) the
  // interpreter's for f64, up to 2x (bf16) for f32.
  ReferenceChoice reference = ReferenceChoice::kNone;
  // The references run `run_module` on every device rather than `module` on one partition per replica
  // (PerDeviceReference).
  bool per_device_reference = false;
  // --per-device: a partitioned run's outputs are the devices' results, so they stay beside the assembled global
  // results through the references; otherwise they are freed once assembled.
  bool per_device_outputs = false;
  // The global arguments are built (not with --input-shards, unless a reference of the unpartitioned module needs
  // them).
  bool global_arguments = true;
  codegen::CompileOptions compile;  // the JIT's options, for its buffer assignment
};

// The estimate for `plan`. The JIT's buffers come from the buffer assignment (a run of the compile pipeline up to
// it), unless an upper bound from the program's value sizes already keeps the total within `fits_within` bytes.
RunMemoryEstimate EstimateRunMemory(const RunMemoryPlan& plan, int64_t fits_within);

// What a run may plan on of the host's available memory: 90 %. The rest is headroom for what the estimate does not
// count (the allocator's fragmentation over a run's phases, kernels' small buffers, thread stacks): a 32-device
// Llama-70B layer's phases estimated at 19.6, 12.3 and 12.6 GiB peak at 20.0, 12.6 and 13.1 GiB. An explicit
// --memory-limit is taken as it is.
int64_t PlannableHostMemory(int64_t available);

// "this run needs 61 GiB (parameters 40 GiB, ...); this machine has 23.4 GiB available, 21 GiB of it for what the
// estimate counts" (or "--memory-limit is ..." when `from_flag`), with how to override it.
std::string RunMemoryError(const RunMemoryEstimate& estimate, int64_t limit, bool from_flag);

// The check RunModule makes: the run `options` describe (`run_module` null before partitioning and before elided
// constants get values: arguments, constants and results only, and only when the module has elided constants) against
// options.memory_limit, or else options.host_available_memory: OK when it fits or no limit applies
// (--memory-limit=none, nothing known), else ResourceExhausted carrying RunMemoryError. `processes`: the MPI processes
// the devices are split over.
//
// The default mode's --check-against (no --exact, --tolerance or explicit tolerance, an output the relative rule
// judges) computes a reference, first the f64 one (the f32 one with --reference-type=f32, when an output is narrower
// than f32; none otherwise). Without `reference` the run must fit with that one. With `reference` the reference is
// chosen here and *reference says which: the f64 one when the run fits with it; else the f32 one (the module
// promoted to f32, about half the f64 one's values) when an output is narrower than f32 (the only ones it judges)
// and the run fits with it; else kNone (the fixed rule compares). The run is refused only when it does not fit
// without a reference. A run that computes no reference gets kNone; one that no limit applies to, the first choice.
// A module the promotion rejects counts no reference: xla-run then reports why when it builds it.
absl::Status CheckRunMemory(const RunOptions& options, const Module& module, const Module* run_module, bool partitioned,
                            int64_t processes, ReferenceChoice* reference = nullptr);

}  // namespace xlac
