// Matching participants of a collective: arrival (with timeout, cancellation and mismatch detection), a
// reads-done barrier, and departure.
#include <algorithm>

#include "runtime/cpu/internal.h"

namespace xlac::rt {
namespace {

std::string DeviceList(const std::vector<int64_t>& ids) {
  std::string s = ids.size() == 1 ? "device " : "devices ";
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + std::to_string(ids[i]);
  return s;
}

std::string Signature(CollectiveKind kind, const std::vector<int64_t>& devices, int64_t size, int64_t element_bytes) {
  std::string s = std::string(KindName(kind)) + " over {";
  for (size_t i = 0; i < devices.size(); ++i) s += (i ? "," : "") + std::to_string(devices[i]);
  s += "} with " + std::to_string(size) + " bytes";
  if (element_bytes > 0) s += " of " + std::to_string(element_bytes) + "-byte elements";
  return s;
}

// Where each device that has not arrived is, for the timeout message.
std::string WhereAre(XlacRtGroup* group, const std::vector<int64_t>& missing) {
  std::string s;
  for (int64_t m : missing) {
    const XlacRtDevice& peer = *group->devices[static_cast<size_t>(m)];
    s += s.empty() ? "" : "; ";
    s += "device " + std::to_string(m) + " ";
    switch (peer.state) {
      case DeviceState::kWaiting:
        s += "is waiting at " + peer.waiting_at;
        break;
      case DeviceState::kRunning:
        s += "is still running";
        break;
      case DeviceState::kFinished:
        s += "finished";
        break;
      case DeviceState::kFailed:
        s += "failed";
        break;
    }
  }
  return s;
}

std::string Cancelled(XlacRtGroup* group, const std::string& what) {
  std::string who = group->first_error_device >= 0 ? "device " + std::to_string(group->first_error_device)
                                                   : std::string("another device");
  return what + ": cancelled because " + who + " failed";
}

}  // namespace

const char* KindName(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllReduce:
      return "all-reduce";
    case CollectiveKind::kAllGather:
      return "all-gather";
    case CollectiveKind::kReduceScatter:
      return "reduce-scatter";
    case CollectiveKind::kAllToAll:
      return "all-to-all";
    case CollectiveKind::kPermute:
      return "collective-permute";
    case CollectiveKind::kBroadcast:
      return "collective-broadcast";
    case CollectiveKind::kBarrier:
      return "barrier";
  }
  return "collective";
}

Instance* Arrive(XlacRtDevice* dev, int64_t op_id, const char* name, CollectiveKind kind,
                 const std::vector<int64_t>& devices, int64_t rank, const void* src, void* dst, int64_t size,
                 int64_t element_bytes, int64_t scratch_bytes) {
  XlacRtGroup* group = dev->group;
  // Time blocked here is the collective's wait time (xlac_rt_group_device_stats).
  struct Blocked {
    XlacRtDevice* dev;
    int64_t begin = NowNs();
    ~Blocked() { dev->blocked_ns += NowNs() - begin; }
  } blocked{dev};
  std::string what = std::string(name != nullptr ? name : KindName(kind)) + " (op " + std::to_string(op_id) + ")";
  int64_t generation = dev->generation[op_id]++;
  std::unique_lock<std::mutex> lock(group->mu);
  if (dev->failed.load(std::memory_order_relaxed)) return nullptr;
  if (group->failed) {
    RecordErrorLocked(dev, XLAC_RT_ERROR_CANCELLED, Cancelled(group, what), /*consequence=*/true);
    return nullptr;
  }
  InstanceKey key{op_id, devices[0], generation};
  std::unique_ptr<Instance>& slot = group->instances[key];
  if (slot == nullptr) {
    slot = std::make_unique<Instance>();
    slot->key = key;
    slot->kind = kind;
    slot->devices = devices;
    slot->size = size;
    slot->element_bytes = element_bytes;
    slot->first_device = dev->id;
    slot->src.resize(devices.size());
    slot->dst.resize(devices.size());
    slot->present.resize(devices.size(), 0);
    slot->scratch.resize(static_cast<size_t>(scratch_bytes));
  } else if (slot->kind != kind || slot->devices != devices || slot->size != size ||
             slot->element_bytes != element_bytes) {
    RecordErrorLocked(dev, XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                      what + ": device " + std::to_string(dev->id) + " called it as " +
                          Signature(kind, devices, size, element_bytes) + " but device " +
                          std::to_string(slot->first_device) + " as " +
                          Signature(slot->kind, slot->devices, slot->size, slot->element_bytes),
                      /*consequence=*/false);
    return nullptr;
  }
  Instance* inst = slot.get();
  size_t r = static_cast<size_t>(rank);
  inst->src[r] = src;
  inst->dst[r] = dst;
  inst->present[r] = 1;
  int64_t n = static_cast<int64_t>(devices.size());
  const auto arrival = std::chrono::steady_clock::now();
  group->progress = arrival;
  if (++inst->arrived == n) {
    WakeAllLocked(group);
    return inst;
  }
  dev->state = DeviceState::kWaiting;
  dev->waiting_at = what;
  for (;;) {
    if (inst->arrived == n) break;
    if (group->failed) {
      RecordErrorLocked(dev, XLAC_RT_ERROR_CANCELLED, Cancelled(group, what), /*consequence=*/true);
      return nullptr;
    }
    const auto deadline = WaitDeadline(dev, arrival);
    const bool expired = std::chrono::steady_clock::now() >= deadline;
    // Who is missing only matters once some device finished or the wait expired: 256 waiters rescanning 256
    // participants at every wake-up would be quadratic.
    std::vector<int64_t> missing, finished;
    for (size_t i = 0; (expired || group->finished > 0) && i < devices.size(); ++i) {
      if (inst->present[i]) continue;
      missing.push_back(devices[i]);
      if (group->devices[static_cast<size_t>(devices[i])]->state == DeviceState::kFinished) {
        finished.push_back(devices[i]);
      }
    }
    if (!finished.empty()) {
      RecordErrorLocked(dev, XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                        what + ": " + DeviceList(finished) + " finished without reaching it", /*consequence=*/false);
      return nullptr;
    }
    if (expired) {
      RecordErrorLocked(dev, XLAC_RT_ERROR_DEADLINE_EXCEEDED,
                        what + ": waited " + std::to_string(group->timeout.count()) + " ms but " + DeviceList(missing) +
                            " never arrived (" + WhereAre(group, missing) + ")",
                        /*consequence=*/false);
      return nullptr;
    }
    WaitLocked(dev, lock, deadline);
  }
  dev->state = DeviceState::kRunning;
  dev->waiting_at.clear();
  return inst;
}

void Sync(XlacRtDevice* dev, Instance* inst) {
  XlacRtGroup* group = dev->group;
  const int64_t begin = NowNs();
  struct Blocked {
    XlacRtDevice* dev;
    int64_t begin;
    ~Blocked() { dev->blocked_ns += NowNs() - begin; }
  } blocked{dev, begin};
  std::unique_lock<std::mutex> lock(group->mu);
  const int64_t n = static_cast<int64_t>(inst->devices.size());
  // The k-th Sync of every participant meets at synced == k * n.
  const int64_t target = (inst->synced / n + 1) * n;
  if (++inst->synced == target) {
    WakeAllLocked(group);
    return;
  }
  while (inst->synced < target) WaitLocked(dev, lock, std::nullopt);
}

void Depart(XlacRtDevice* dev, Instance* inst) {
  XlacRtGroup* group = dev->group;
  std::lock_guard<std::mutex> lock(group->mu);
  if (++inst->departed == static_cast<int64_t>(inst->devices.size())) group->instances.erase(inst->key);
}

}  // namespace xlac::rt
