// Internals of the CPU runtime (C++ behind the C ABI of xlac_runtime.h); not part of its API.
//
// One mutex per group guards everything devices share: errors, device states, and the rendezvous table. Devices
// only wait through WaitLocked (the group's condition variable, or parking a fiber) and every change others wait for
// goes through WakeAllLocked, so a failure anywhere can wake and release every waiter.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "runtime/cpu/xlac_runtime.h"
#include "runtime/cpu/xlac_runtime_trace.h"

namespace xlac::rt {

enum class DeviceState { kRunning, kWaiting, kFinished, kFailed };

enum class CollectiveKind { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kPermute, kBroadcast, kBarrier };
const char* KindName(CollectiveKind kind);

// (op_id, lowest-ranked device of the group, generation)
using InstanceKey = std::tuple<int64_t, int64_t, int64_t>;

// One execution of one collective by one participant group.
struct Instance {
  InstanceKey key;
  CollectiveKind kind;
  std::vector<int64_t> devices;  // rank order
  int64_t size = 0;              // byte count the op was called with (participants must agree)
  int64_t element_bytes = 0;
  int64_t first_device = -1;     // who created it, for mismatch messages
  std::vector<const void*> src;  // per rank
  std::vector<void*> dst;        // per rank
  std::vector<char> present;     // per rank: has arrived
  int64_t arrived = 0;
  int64_t synced = 0;
  int64_t departed = 0;
  std::vector<unsigned char> scratch;
  bool exchange_failed = false;  // a collective spanning processes: the leader's exchange failed
};

void FillStatus(XlacRtStatus* status, int code, int64_t device, const std::string& message);

struct Fiber;   // scheduler.cc: a device multiplexed on a worker thread
struct Worker;  // scheduler.cc: an OS thread running fibers

}  // namespace xlac::rt

struct XlacRtDevice {
  XlacRtGroup* group = nullptr;
  int64_t id = 0;
  int64_t replica = 0;
  int64_t partition = 0;
  // Written under the group mutex; read lock-free by xlac_rt_failed.
  std::atomic<int> failed{0};
  int code = XLAC_RT_OK;
  std::string message;
  // How often this device has executed each multi-device collective (by op_id) in the current run.
  std::unordered_map<int64_t, int64_t> generation;
  // Guarded by the group mutex.
  xlac::rt::DeviceState state = xlac::rt::DeviceState::kRunning;
  std::string waiting_at;
  // Observability (trace.cc), touched only by the device's own thread during a run.
  XlacRtDeviceStats stats{};
  int64_t blocked_ns = 0;                // time blocked in Arrive/Sync so far in this run
  std::vector<int64_t> trace_stack;      // begin times of the open kernel slices
  std::vector<XlacRtTraceEvent> events;  // only while the group traces
  // Set (under the group mutex) while the device runs as a fiber of a multiplexed run (scheduler.cc).
  xlac::rt::Fiber* fiber = nullptr;
};

struct XlacRtGroup {
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  std::chrono::milliseconds timeout{30000};
  std::vector<std::unique_ptr<XlacRtDevice>> devices;
  XlacRtThreadPool* pool = nullptr;
  int64_t threads_per_device = 0;  // 0: the pool's threads shared evenly
  int64_t os_threads = 0;          // xlac_rt_group_set_os_threads; 0: one thread per device
  XlacRtCustomCallFn custom_call = nullptr;
  void* custom_call_user = nullptr;
  XlacRtInfeedFn infeed = nullptr;
  void* infeed_user = nullptr;
  // Set only when the devices span several processes; then this process runs [local_begin, local_end).
  const XlacRtTransport* transport = nullptr;
  bool tracing = false;  // xlac_rt_group_set_tracing
  int64_t local_begin = 0;
  int64_t local_end = 0;
  int64_t runs = 0;  // xlac_rt_group_run calls so far: the current run's number is runs - 1

  std::mutex run_mu;  // one run at a time
  std::mutex mu;
  std::condition_variable cv;
  bool failed = false;              // some device failed in this run
  int64_t finished = 0;             // devices that returned from the entry in this run
  int64_t first_error_device = -1;  // the run's first failure that is not a consequence of another
  std::map<xlac::rt::InstanceKey, std::unique_ptr<xlac::rt::Instance>> instances;
  // A multiplexed run's workers (scheduler.cc), and when a device last arrived somewhere or something woke the
  // waiters: a parked fiber times out only after the whole group made no progress for the timeout.
  std::vector<xlac::rt::Worker*> workers;
  std::chrono::steady_clock::time_point progress;
  // Fiber stacks (mappings of fiber_stack_bytes, a guard page first), kept from run to run: compiled code packs GEMM
  // panels on its stack, and fresh stacks would fault those pages in again for every device in every run.
  std::vector<void*> fiber_stacks;
  size_t fiber_stack_bytes = 0;

  ~XlacRtGroup();  // scheduler.cc: unmaps the fiber stacks
};

namespace xlac::rt {

// Runs the entry on one device and marks it finished (device_group.cc).
void RunDevice(XlacRtGroup* group, XlacRtEntryFn entry, void* const* buffers, int64_t device);

// Waiting and waking, for threads and fibers alike (scheduler.cc). WaitLocked blocks the calling device, whose
// `lock` holds the group mutex, until WakeAllLocked or `deadline` (spurious wake-ups happen: callers re-check);
// a fiber parks and its worker runs another device meanwhile. WakeAllLocked (group mutex held) wakes every waiter.
void WaitLocked(XlacRtDevice* dev, std::unique_lock<std::mutex>& lock,
                std::optional<std::chrono::steady_clock::time_point> deadline);
void WakeAllLocked(XlacRtGroup* group);
// Runs devices [first, end) as fibers on `threads` OS threads, the caller's included. Returns XLAC_RT_OK, or an
// error code with `error` when the fibers could not be set up (then no device ran).
int RunMultiplexed(XlacRtGroup* group, XlacRtEntryFn entry, void* const* const* buffers, int64_t first, int64_t end,
                   int64_t threads, std::string& error);
// The deadline of a wait that began at `begin`: the group's timeout later, and for a fiber no earlier than the
// timeout after the group's last progress (its peers may be fibers that have not had their turn yet).
std::chrono::steady_clock::time_point WaitDeadline(const XlacRtDevice* dev,
                                                   std::chrono::steady_clock::time_point begin);

// Records a device error (the device's first wins). `consequence` marks errors caused by another device's failure
// (cancellation), which never become the run's reported error. Takes the group mutex unless `locked`.
void RecordError(XlacRtDevice* dev, int code, const std::string& message, bool consequence);
void RecordErrorLocked(XlacRtDevice* dev, int code, const std::string& message, bool consequence);

// Joins collective `name` (op_id) as `rank` of `devices` and blocks until every participant has arrived. Returns
// the shared instance, or nullptr after recording an error on `dev` (timeout, cancellation, mismatch).
Instance* Arrive(XlacRtDevice* dev, int64_t op_id, const char* name, CollectiveKind kind,
                 const std::vector<int64_t>& devices, int64_t rank, const void* src, void* dst, int64_t size,
                 int64_t element_bytes, int64_t scratch_bytes);
// Blocks until every participant has called Sync as often (after Arrive succeeded every participant is inside the
// runtime, so this cannot stall); a collective may sync several times.
void Sync(XlacRtDevice* dev, Instance* inst);
// Leaves the instance; the last participant to leave frees it. No access to `inst` afterwards.
void Depart(XlacRtDevice* dev, Instance* inst);

// A collective whose participants span processes (cross_process.cc), described as the in-process one was called.
struct CrossCollective {
  CollectiveKind kind;
  int64_t op_id = 0;
  const char* name = nullptr;
  const std::vector<int64_t>* devices = nullptr;  // the participants, rank order
  const void* src = nullptr;
  void* dst = nullptr;
  int64_t bytes = 0;  // all-gather, broadcast, permute: per participant; all-to-all: per chunk
  int64_t count = 0;  // all-reduce, reduce-scatter: elements of the result
  int64_t element_bytes = 0;
  XlacRtCombineFn combine = nullptr;
  void* combine_ctx = nullptr;
  const int64_t* pairs = nullptr;  // permute: (source, target) device ids
  int64_t num_pairs = 0;
  int64_t match_size = 0;  // the size local participants must agree on (Arrive's `size`)
};
// True when a transport is installed and some participant lives in another process.
bool SpansProcesses(const XlacRtGroup* group, const std::vector<int64_t>& devices);
// Computes dst exactly as the in-process collective would. XLAC_RT_OK, or the device's error code.
int RunAcrossProcesses(XlacRtDevice* dev, const CrossCollective& c);
// Counts one collective call on `dev` (and records its trace event when the group traces): construct it once the
// call is known to exchange data between several devices; the destructor accounts for the time until return.
class CollectiveScope {
 public:
  CollectiveScope(XlacRtDevice* dev, CollectiveKind kind, const char* name, int64_t sent, int64_t received);
  ~CollectiveScope();
  CollectiveScope(const CollectiveScope&) = delete;
  CollectiveScope& operator=(const CollectiveScope&) = delete;

 private:
  XlacRtDevice* dev_;
  CollectiveKind kind_;
  const char* name_;
  int64_t sent_, received_, begin_ns_, blocked_at_begin_;
};
int64_t NowNs();
// Clears a device's counters and events for a new run.
void ResetObservability(XlacRtDevice* dev);

// Permute: the source rank of every rank (-1: none; the last pair naming a target wins).
std::vector<int64_t> PermuteSources(const CrossCollective& c);

// The Winograd transforms behind xlac_rt_winograd_input_f32 / xlac_rt_winograd_output_f32 (winograd.cc).
// `portable` takes the portable code even where the vector code would run (tests compare the two).
struct WinogradInputArgs {
  const float* x = nullptr;
  float* v = nullptr;
  int64_t m = 0;
  const float* bt = nullptr;
  int64_t batch = 0, channels = 0, height = 0, width = 0, tiles[2] = {0, 0}, pad_low[2] = {0, 0};
  int64_t x_strides[4] = {0, 0, 0, 0};
};
void WinogradInput(XlacRtDevice* dev, const WinogradInputArgs& args, bool portable);
struct WinogradOutputArgs {
  const float* mm = nullptr;
  float* y = nullptr;
  int64_t m = 0;
  const float* at = nullptr;
  int64_t batch = 0, features = 0, height = 0, width = 0, tiles[2] = {0, 0};
  int64_t y_strides[4] = {0, 0, 0, 0};
};
void WinogradOutput(XlacRtDevice* dev, const WinogradOutputArgs& args, bool portable);
// The fused Winograd convolution behind xlac_rt_winograd_conv_f32 (winograd_conv.cc): x's input transform, the
// products with the transformed filter u [n*n, C, K] (dense) and the output transform into y, per tile row.
struct WinogradConvArgs {
  const float* x = nullptr;
  const float* u = nullptr;
  float* y = nullptr;
  int64_t m = 0;
  const float* bt = nullptr;
  const float* at = nullptr;
  int64_t batch = 0, channels = 0, height = 0, width = 0;  // x
  int64_t features = 0, out_height = 0, out_width = 0;     // y
  int64_t tiles[2] = {0, 0}, pad_low[2] = {0, 0};
  int64_t x_strides[4] = {0, 0, 0, 0}, y_strides[4] = {0, 0, 0, 0};
};
void WinogradConv(XlacRtDevice* dev, const WinogradConvArgs& args, bool portable);

}  // namespace xlac::rt
