// Device groups: creation, running an entry on one thread per device (or multiplexed on fewer: scheduler.cc),
// device queries and custom calls.
#include <algorithm>
#include <string>
#include <system_error>
#include <thread>

#include "runtime/cpu/internal.h"

namespace xlac::rt {
namespace {

// Clears everything a previous run left behind (including rendezvous instances abandoned by a failed run).
void Reset(XlacRtGroup* group) {
  std::lock_guard<std::mutex> lock(group->mu);
  group->instances.clear();
  group->failed = false;
  group->finished = 0;
  group->first_error_device = -1;
  for (auto& dev : group->devices) {
    dev->failed.store(0);
    dev->code = XLAC_RT_OK;
    dev->message.clear();
    dev->generation.clear();
    dev->state = DeviceState::kRunning;
    dev->waiting_at.clear();
    ResetObservability(dev.get());
  }
}

// The run's status: its first error that is not a consequence of another, else the first failed device's.
int Outcome(XlacRtGroup* group, int64_t first, int64_t end, XlacRtStatus* status) {
  std::lock_guard<std::mutex> lock(group->mu);
  int64_t culprit = group->first_error_device;
  for (int64_t d = first; culprit < 0 && d < end; ++d) {
    if (group->devices[static_cast<size_t>(d)]->failed.load()) culprit = d;
  }
  if (culprit < 0) {
    FillStatus(status, XLAC_RT_OK, -1, "");
    return XLAC_RT_OK;
  }
  const XlacRtDevice& dev = *group->devices[static_cast<size_t>(culprit)];
  FillStatus(status, dev.code, culprit, "device " + std::to_string(culprit) + ": " + dev.message);
  return dev.code;
}

}  // namespace

void RunDevice(XlacRtGroup* group, XlacRtEntryFn entry, void* const* buffers, int64_t device) {
  XlacRtDevice* dev = group->devices[static_cast<size_t>(device)].get();
  entry(buffers, dev);
  std::lock_guard<std::mutex> lock(group->mu);
  // Peers waiting for this device at a collective learn at once that it will never come.
  if (dev->state != DeviceState::kFailed) dev->state = DeviceState::kFinished;
  ++group->finished;
  dev->waiting_at.clear();
  WakeAllLocked(group);
}

}  // namespace xlac::rt

using namespace xlac::rt;

extern "C" {

XlacRtGroup* xlac_rt_group_create(int64_t num_replicas, int64_t num_partitions, int64_t collective_timeout_ms,
                                  XlacRtStatus* status) {
  if (num_replicas < 1 || num_partitions < 1 || num_replicas > (int64_t{1} << 20) / num_partitions) {
    FillStatus(status, XLAC_RT_ERROR_INVALID_ARGUMENT, -1,
               "cannot emulate " + std::to_string(num_replicas) + " replicas x " + std::to_string(num_partitions) +
                   " partitions");
    return nullptr;
  }
  auto* group = new XlacRtGroup;
  group->num_replicas = num_replicas;
  group->num_partitions = num_partitions;
  if (collective_timeout_ms > 0) group->timeout = std::chrono::milliseconds(collective_timeout_ms);
  for (int64_t d = 0; d < num_replicas * num_partitions; ++d) {
    auto dev = std::make_unique<XlacRtDevice>();
    dev->group = group;
    dev->id = d;
    dev->replica = d / num_partitions;
    dev->partition = d % num_partitions;
    group->devices.push_back(std::move(dev));
  }
  group->local_end = num_replicas * num_partitions;
  FillStatus(status, XLAC_RT_OK, -1, "");
  return group;
}

void xlac_rt_group_destroy(XlacRtGroup* group) { delete group; }

int64_t xlac_rt_group_num_devices(XlacRtGroup* group) { return static_cast<int64_t>(group->devices.size()); }

int xlac_rt_group_run(XlacRtGroup* group, XlacRtEntryFn entry, void* const* const* buffers_per_device,
                      XlacRtStatus* status) {
  if (group == nullptr || entry == nullptr || buffers_per_device == nullptr) {
    FillStatus(status, XLAC_RT_ERROR_INVALID_ARGUMENT, -1, "xlac_rt_group_run needs a group, an entry and buffers");
    return XLAC_RT_ERROR_INVALID_ARGUMENT;
  }
  std::lock_guard<std::mutex> run_lock(group->run_mu);
  Reset(group);
  ++group->runs;
  if (group->transport != nullptr && group->transport->p2p_take != nullptr) {
    // Drops the messages earlier runs sent to receivers in other processes, so they never pile up.
    int found = 0;
    char message[256];
    group->transport->p2p_take(group->transport->user, group->runs - 1, -1, -1, nullptr, 0, &found, message,
                               sizeof message);
  }
  // Without a transport this process runs every device: [0, devices).
  const int64_t first = group->local_begin, n = group->local_end;
  {
    std::lock_guard<std::mutex> lock(group->mu);
    group->progress = std::chrono::steady_clock::now();
  }
  // Devices of other processes may be waited for inside the transport, which a fiber cannot yield from.
  if (group->os_threads > 0 && n - first > group->os_threads && group->transport == nullptr) {
    std::string error;
    int code = RunMultiplexed(group, entry, buffers_per_device, first, n, group->os_threads, error);
    if (code != XLAC_RT_OK) {
      FillStatus(status, code, -1, error);
      return code;
    }
    return Outcome(group, first, n, status);
  }
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(n - first));
  for (int64_t d = first + 1; d < n; ++d) {
    try {
      threads.emplace_back(RunDevice, group, entry, buffers_per_device[d], d);
    } catch (const std::system_error& e) {
      // Peers that wait for this device get cancelled instead of timing out.
      RecordError(group->devices[static_cast<size_t>(d)].get(), XLAC_RT_ERROR_RESOURCE_EXHAUSTED,
                  std::string("could not start a thread for the device: ") + e.what(), /*consequence=*/false);
    }
  }
  RunDevice(group, entry, buffers_per_device[first], first);
  for (std::thread& t : threads) t.join();
  return Outcome(group, first, n, status);
}

int64_t xlac_rt_device_id(XlacRtDevice* dev) { return dev->id; }
int64_t xlac_rt_replica_id(XlacRtDevice* dev) { return dev->replica; }
int64_t xlac_rt_partition_id(XlacRtDevice* dev) { return dev->partition; }
int64_t xlac_rt_num_replicas(XlacRtDevice* dev) { return dev->group->num_replicas; }
int64_t xlac_rt_num_partitions(XlacRtDevice* dev) { return dev->group->num_partitions; }

void xlac_rt_group_set_thread_pool(XlacRtGroup* group, XlacRtThreadPool* pool) { group->pool = pool; }
XlacRtThreadPool* xlac_rt_device_thread_pool(XlacRtDevice* dev) { return dev->group->pool; }
void xlac_rt_group_set_threads_per_device(XlacRtGroup* group, int64_t threads) {
  group->threads_per_device = std::max<int64_t>(0, threads);
}
int64_t xlac_rt_device_threads(XlacRtDevice* dev) {
  XlacRtGroup* group = dev->group;
  if (group->pool == nullptr) return 1;
  if (group->threads_per_device > 0) return group->threads_per_device;
  return std::max<int64_t>(1, xlac_rt_thread_pool_threads(group->pool) / (group->local_end - group->local_begin));
}

int xlac_rt_group_set_transport(XlacRtGroup* group, const XlacRtTransport* transport, XlacRtStatus* status) {
  const int64_t n = static_cast<int64_t>(group->devices.size());
  if (transport == nullptr) {
    group->transport = nullptr;
    group->local_begin = 0;
    group->local_end = n;
    FillStatus(status, XLAC_RT_OK, -1, "");
    return XLAC_RT_OK;
  }
  const int64_t count = transport->process_count, index = transport->process_index;
  if (count < 1 || index < 0 || index >= count || n % count != 0 || transport->exchange == nullptr) {
    FillStatus(status, XLAC_RT_ERROR_INVALID_ARGUMENT, -1,
               "cannot split " + std::to_string(n) + " devices evenly over " + std::to_string(count) +
                   " processes (process " + std::to_string(index) + ")");
    return XLAC_RT_ERROR_INVALID_ARGUMENT;
  }
  // One process: nothing to reach, and the in-process path stays exactly as without a transport.
  group->transport = count > 1 ? transport : nullptr;
  group->local_begin = index * (n / count);
  group->local_end = (index + 1) * (n / count);
  FillStatus(status, XLAC_RT_OK, -1, "");
  return XLAC_RT_OK;
}

void xlac_rt_group_local_devices(XlacRtGroup* group, int64_t* begin, int64_t* end) {
  *begin = group->local_begin;
  *end = group->local_end;
}

void xlac_rt_group_set_custom_call_handler(XlacRtGroup* group, XlacRtCustomCallFn fn, void* user) {
  group->custom_call = fn;
  group->custom_call_user = user;
}

int xlac_rt_custom_call(XlacRtDevice* dev, const char* target, const char* backend_config, void* const* operands,
                        void* result) {
  if (xlac_rt_failed(dev)) return dev->code;
  const char* name = target != nullptr ? target : "";
  XlacRtGroup* group = dev->group;
  if (group->custom_call == nullptr) {
    RecordError(dev, XLAC_RT_ERROR_UNIMPLEMENTED, std::string("unsupported custom call target '") + name + "'",
                /*consequence=*/false);
    return dev->code;
  }
  int rc = group->custom_call(group->custom_call_user, name, backend_config != nullptr ? backend_config : "", operands,
                              result, dev);
  if (rc != 0 && !xlac_rt_failed(dev)) {
    RecordError(dev, XLAC_RT_ERROR_EXECUTION,
                std::string("custom call '") + name + "' failed (handler returned " + std::to_string(rc) + ")",
                /*consequence=*/false);
  }
  return xlac_rt_failed(dev) ? dev->code : XLAC_RT_OK;
}

}  // extern "C"
