// In-process compilation and execution through ORC LLJIT.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/compilation_cache.h"
#include "codegen/pipeline.h"
#include "codegen/profile.h"
#include "ir/literal.h"
#include "ir/module.h"

struct XlacRtTransport;  // runtime/cpu/xlac_runtime.h

namespace xlac::codegen {

// Evaluates a custom-call for compiled code; the same signature as interp::InterpreterOptions::custom_call_handler,
// so one handler (e.g. harness::CheckCollector::Handle) serves both. `custom_call` is the instruction of the
// executable's prepared module (valid while the executable lives): custom_call_target, backend_config(), shape()
// (the result shape, with layout) and loc() (the location in the module given to Compile). `operands` are logical
// row-major literals, one per operand (tokens as token literals). The returned literal must have the result's
// dimensions and element type (any layout is ignored: it is read row-major). Called concurrently from every device
// thread. An error status fails the device with its message; Unimplemented keeps its code.
using CustomCallHandler =
    std::function<absl::StatusOr<Literal>(const Instruction& custom_call, const std::vector<const Literal*>& operands)>;

// Supplies the data of one execution of an infeed for compiled code. `infeed` is the infeed as written in the module
// given to Compile (a copy the executable keeps, valid while it lives: name(), shape() with layout (element 0 is the
// data), loc()); infeeds the pipeline copies (a computation called twice is inlined twice) report their original.
// `occurrence` counts that infeed's executions on device `device_id` in the current Run, from 0, as the interpreter
// counts them (an infeed in a while body runs many times). The returned literal must have the data's dimensions and
// element types (any layout is ignored: it is read row-major). Called concurrently from every device thread. An
// error status fails the device with its message.
using InfeedHandler =
    std::function<absl::StatusOr<Literal>(const Instruction& infeed, int64_t device_id, uint64_t occurrence)>;

struct JitOptions {
  CompileOptions compile;
  // Devices = replicas x partitions, each running the entry on its own thread through the runtime's device group.
  // 0 takes the module's replica_count / num_partitions.
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  int64_t collective_timeout_ms = 30000;
  // Threads for the whole run, device threads included: each of the D devices runs its parallel loops on
  // max(1, threads / D) threads of the process-wide pool. 0 takes the CPUs of the process's affinity mask. Results
  // never depend on it.
  int threads = 0;
  bool keep_llvm_ir = false;  // keep the optimized IR text for llvm_ir()
  // Custom-calls other than "Sharding" call this; without it they fail with "unsupported custom call target".
  CustomCallHandler custom_call_handler;
  // Infeeds call this; without it, Compile fails on a module with an infeed.
  InfeedHandler infeed_handler;
  // The devices span several processes (runtime/mpi/, docs/multihost.md): this process runs only its share of them
  // (xlac_rt_group_set_transport), so Run and RunPerDevice return zero-filled results for the other processes'
  // devices and RunBuffers returns this process's first device's. Not owned; must outlive the executable.
  const XlacRtTransport* transport = nullptr;
  // The persistent compilation cache (docs/cache.md); an empty dir disables it. A hit still prepares the module (a
  // millisecond: it rebuilds the buffer assignment and the handlers' instructions) but skips LLVM emission,
  // optimization and code generation. keep_llvm_ir bypasses the cache (a hit has no IR).
  CacheOptions cache;
  // Bytes the devices' buffers may take: more is an error before anything is allocated. 0: what the runtime says is
  // available (xlac_rt_available_memory); -1: no check (hosts that checked the whole run themselves, xla-run's
  // --memory-limit).
  int64_t memory_limit = 0;
};

// A compiled module. Reusable: its buffers are allocated on the first run and reused by every later one (results
// are copies, so they stay valid). Not safe to Run concurrently from several threads.
class JitExecutable {
 public:
  ~JitExecutable();
  // `module` must verify; it is not modified (compilation works on a clone).
  static absl::StatusOr<std::unique_ptr<JitExecutable>> Compile(const Module& module, const JitOptions& options = {});

  // Entry parameter shapes (with layouts) and the result shape.
  const std::vector<Shape>& parameter_shapes() const;
  const Shape& result_shape() const;
  // Per result leaf (flattened as RunBuffers' results): the parameter whose buffer the module's input_output_alias
  // lets it reuse, or -1.
  std::vector<int64_t> result_donors() const;
  int64_t num_devices() const;
  // The optimized LLVM IR (only with JitOptions::keep_llvm_ir).
  const std::string& llvm_ir() const;
  // With JitOptions::cache: what the cache did ("cache: hit ...", "cache: miss ...", corrupt entries, stores,
  // evictions), one line each, and whether the object code came from the cache.
  const std::string& cache_log() const;
  bool cache_hit() const;
  // The last Run's profile (codegen/profile.h): per device collective counters and arena sizes always; kernel
  // times and trace slices when compiled with CompileOptions::trace_kernels.
  const ExecutionProfile& last_profile() const;

  // Runs every device on the same `args` (logical row-major literals, as the interpreter takes them) and returns
  // one result per device.
  absl::StatusOr<std::vector<Literal>> Run(const std::vector<Literal>& args);
  // Runs device d on `args[d]` (d = replica * num_partitions + partition): the shards of a partitioned program.
  absl::StatusOr<std::vector<Literal>> RunPerDevice(const std::vector<std::vector<Literal>>& args);
  // Runs every device on the same array parameters given as row-major buffers (parameters[i] holds
  // parameter_shapes()[i]'s logical dimensions) and writes device 0's result leaves (flattened tuple, row-major)
  // to `results`. Row-major parameters that are not donated are read in place, without a copy; result leaves with
  // an allocation of their own (the JIT assigns them one) or in a donated parameter's are written in place when
  // row-major, element-aligned (64-byte aligned for a result written with streaming stores,
  // codegen/streaming_stores.h) and overlapping no parameter or other result (ExecutionProfile::results_in_place),
  // else copied out of the arena. A donated parameter whose buffer is also passed as its aliased result is updated
  // in place with no copy at all (codegen/result_placement.h).
  absl::Status RunBuffers(const std::vector<const void*>& parameters, const std::vector<void*>& results);

 private:
  struct Impl;
  explicit JitExecutable(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace xlac::codegen
