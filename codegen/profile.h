// What a compiled program did when it ran (per emulated core: time in kernels, time waiting at collectives, bytes
// moved per collective kind, arena size, trace slices), and the two ways xlac reports it: a metrics report in
// PyTorch/XLA's format and a Chrome trace event file (docs/observability.md). LLVM-free.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "passes/compile_observer.h"

namespace xlac::codegen {

// Indexed like XlacRtCollectiveKind (runtime/cpu/xlac_runtime_trace.h).
inline constexpr int kNumCollectiveKinds = 7;
const char* CollectiveKindName(int kind);

struct CollectiveCounters {
  int64_t count = 0;
  int64_t bytes_sent = 0;
  int64_t bytes_received = 0;
  int64_t wait_ns = 0;
};

struct TraceSlice {
  std::string name;      // the instruction ("fusion.3") or the collective's name
  std::string category;  // the opcode for kernels ("fusion", "dot", "while"), "collective" for collectives
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t bytes_sent = 0, bytes_received = 0, wait_ns = 0;  // collectives only
};

struct DeviceProfile {
  int64_t device = 0;
  int64_t kernels = 0;    // top-level kernel executions (traced runs only)
  int64_t kernel_ns = 0;  // their time (traced runs only)
  std::array<CollectiveCounters, kNumCollectiveKinds> collectives{};
  int64_t arena_bytes = 0;         // the device's buffers: every allocation of the buffer assignment
  int64_t peak_live_bytes = 0;     // the temp arena's high-water mark (BufferAssignment::peak_live_bytes)
  std::vector<TraceSlice> slices;  // traced runs only, in order of their end
};

struct ExecutionProfile {
  int64_t begin_ns = 0, end_ns = 0;    // the whole run, steady clock
  bool traced = false;                 // kernel times and slices were recorded
  std::vector<DeviceProfile> devices;  // this process's devices
  // JitExecutable::RunBuffers: result leaves the program wrote straight into the caller's buffers (no copy out).
  int64_t results_in_place = 0;
};

// Metrics over many compilations and runs, reported in PyTorch/XLA's metrics_report() format: "Metric:" entries
// with TotalSamples, Accumulator and Percentiles, then "Counter:" entries with a Value. Thread-safe.
class Metrics {
 public:
  // One compilation: CompileTime (first phase start to last phase end) and a PhaseTime.<phase> sample per phase;
  // counts CachedCompile or UncachedCompile when `cache_hit` is known (not for the interpreter, which compiles
  // nothing).
  // `module_key` names what was compiled (the module and the options that change code); compiling the same key again
  // is counted for the report's hints.
  void AddCompile(const std::vector<PhaseTiming>& phases, std::optional<bool> cache_hit,
                  const std::string& module_key = "");
  // One run: ExecuteTime, and per device KernelTime, CollectiveWaitTime.<kind>, CollectiveBytesSent.<kind>,
  // CollectiveBytesReceived.<kind>, PeakArenaBytes; counters per collective kind.
  void AddExecution(const ExecutionProfile& profile);
  void AddTimeSample(const std::string& metric, int64_t ns);
  void AddBytesSample(const std::string& metric, int64_t bytes);
  void Increment(const std::string& counter, int64_t by = 1);

  // The metrics, the counters, then hint lines like PyTorch/XLA's "pt-xla-profiler: CompileTime too frequent: ..."
  // (see Hints).
  std::string Report() const;
  // "xlac-profiler: ..." lines, one per symptom: more than kCompileWarmup compilations and more than half as many as
  // executions ("CompileTime too frequent: N counts during M executions"), or one module compiled
  // kRecompileThreshold times or more ("... compiled N times ..."). Empty when nothing looks wrong.
  std::string Hints() const;
  void Clear();
  bool empty() const;

  static constexpr int64_t kCompileWarmup = 10;
  static constexpr int64_t kRecompileThreshold = 3;

 private:
  enum class Unit { kTime, kBytes };
  struct Metric {
    Unit unit = Unit::kTime;
    std::vector<int64_t> samples;
  };
  void AddSampleLocked(const std::string& metric, Unit unit, int64_t value);

  mutable std::mutex mu_;
  std::map<std::string, Metric> metrics_;
  std::map<std::string, int64_t> counters_;
  std::map<std::string, int64_t> compiles_per_module_;  // AddCompile's module_key -> compilations
  std::string HintsLocked() const;
};

// "01s234ms567.890us" as PyTorch/XLA prints durations.
std::string FormatDuration(int64_t ns);

// The Chrome trace event JSON (an object with "traceEvents") of `compile_phases` (on their own track, "compile")
// and `runs` (one track per emulated core, "core N"). Timestamps are microseconds from the earliest event.
std::string ChromeTraceJson(const std::vector<PhaseTiming>& compile_phases, const std::vector<ExecutionProfile>& runs);

}  // namespace xlac::codegen
