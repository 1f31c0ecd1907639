// Point-to-point transfers on channels (xlac_runtime_p2p.h). A message waits in the group's rendezvous table under a
// key no collective uses (op_id kMailbox, the channel where collectives keep their lowest device, the message's
// sequence number as generation), so it shares the table's locking, its reset at every run and its cancellation.
//
// When the devices span processes, a channel's k-th message is its sending device's k-th send (one process cannot
// see the order of sends in another, and the in-process table already refuses two senders of one message). A send
// also posts the message to every other process through the transport, as nothing says where the receiver lives; a
// receive looks in the local table and polls the transport's inbox until the message comes or the timeout ends it.
#include <algorithm>
#include <climits>
#include <cstring>
#include <string>

#include "runtime/cpu/internal.h"
#include "runtime/cpu/xlac_runtime_p2p.h"

namespace xlac::rt {
namespace {

constexpr int64_t kMailbox = INT64_MIN;
// Per-device counters live in XlacRtDevice::generation next to the collectives' (keyed by op_id >= 0).
int64_t SendCounter(int64_t channel) { return INT64_MIN / 2 + 2 * (channel & 0x3fffffffffff); }
int64_t RecvCounter(int64_t channel) { return SendCounter(channel) + 1; }

std::string What(const char* name, const char* op, int64_t channel) {
  return std::string(name != nullptr && *name ? name : op) + " (channel " + std::to_string(channel) + ")";
}

// Without the transport's p2p functions nothing can reach a receiver in another process.
int AcrossProcesses(XlacRtDevice* dev, const std::string& what) {
  RecordError(dev, XLAC_RT_ERROR_UNIMPLEMENTED,
              what + ": send/recv across processes is not supported by this transport", /*consequence=*/false);
  return dev->code;
}

bool RemoteP2P(const XlacRtGroup* group) { return group->transport != nullptr && group->transport->p2p_post; }

}  // namespace
}  // namespace xlac::rt

using namespace xlac::rt;

extern "C" {

int xlac_rt_p2p_send(XlacRtDevice* dev, int64_t channel, const void* data, int64_t bytes, const char* name) {
  if (xlac_rt_failed(dev)) return dev->code;
  XlacRtGroup* group = dev->group;
  if (group->transport != nullptr && !RemoteP2P(group)) return AcrossProcesses(dev, What(name, "send", channel));
  int64_t seq = dev->generation[SendCounter(channel)]++;
  if (RemoteP2P(group)) {
    // The receiver may live in any process: the message goes to the others and into the local mailbox.
    char message[512] = "";
    const XlacRtTransport* t = group->transport;
    int rc = t->p2p_post(t->user, group->runs - 1, channel, seq, dev->id, data, bytes, message, sizeof message);
    if (rc != XLAC_RT_OK) {
      RecordError(dev, rc, What(name, "send", channel) + ": " + message, rc == XLAC_RT_ERROR_CANCELLED);
      return dev->code;
    }
  }
  std::lock_guard<std::mutex> lock(group->mu);
  std::unique_ptr<Instance>& slot = group->instances[InstanceKey{kMailbox, channel, seq}];
  if (slot != nullptr) {
    RecordErrorLocked(dev, XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                      What(name, "send", channel) + ": device " + std::to_string(slot->first_device) +
                          " already sent message #" + std::to_string(seq) + " on this channel",
                      /*consequence=*/false);
    return dev->code;
  }
  slot = std::make_unique<Instance>();
  slot->key = InstanceKey{kMailbox, channel, seq};
  slot->first_device = dev->id;
  slot->size = bytes;
  slot->scratch.resize(static_cast<size_t>(bytes));
  if (bytes > 0) std::memcpy(slot->scratch.data(), data, static_cast<size_t>(bytes));
  WakeAllLocked(group);
  return XLAC_RT_OK;
}

int xlac_rt_p2p_recv(XlacRtDevice* dev, int64_t channel, void* data, int64_t bytes, const char* name) {
  if (xlac_rt_failed(dev)) return dev->code;
  XlacRtGroup* group = dev->group;
  if (group->transport != nullptr && !RemoteP2P(group)) return AcrossProcesses(dev, What(name, "recv", channel));
  const bool remote = RemoteP2P(group);
  int64_t seq = dev->generation[RecvCounter(channel)]++;
  std::string what = What(name, "recv", channel);
  InstanceKey key{kMailbox, channel, seq};
  std::unique_lock<std::mutex> lock(group->mu);
  dev->state = DeviceState::kWaiting;
  dev->waiting_at = what;
  const auto begin = std::chrono::steady_clock::now();
  auto fail = [&](int code, const std::string& message, bool consequence) {
    RecordErrorLocked(dev, code, message, consequence);
    return dev->code;
  };
  for (;;) {
    auto it = group->instances.find(key);
    if (it != group->instances.end()) {
      Instance& message = *it->second;
      if (message.size != bytes) {
        return fail(XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                    what + ": received " + std::to_string(message.size) + " bytes from device " +
                        std::to_string(message.first_device) + " but expected " + std::to_string(bytes),
                    false);
      }
      if (bytes > 0) std::memcpy(data, message.scratch.data(), static_cast<size_t>(bytes));
      group->instances.erase(it);
      dev->state = DeviceState::kRunning;
      dev->waiting_at.clear();
      return XLAC_RT_OK;
    }
    if (group->failed) {
      std::string who = group->first_error_device >= 0 ? "device " + std::to_string(group->first_error_device)
                                                       : std::string("another device");
      return fail(XLAC_RT_ERROR_CANCELLED, what + ": cancelled because " + who + " failed", true);
    }
    if (remote) {
      // Not here yet: maybe another process sent it. The transport is asked without the group's lock.
      const XlacRtTransport* t = group->transport;
      char message[512] = "";
      int found = 0;
      lock.unlock();
      int rc = t->p2p_take(t->user, group->runs - 1, channel, seq, data, bytes, &found, message, sizeof message);
      lock.lock();
      if (rc != XLAC_RT_OK) return fail(rc, what + ": " + message, rc == XLAC_RT_ERROR_CANCELLED);
      if (found) {
        dev->state = DeviceState::kRunning;
        dev->waiting_at.clear();
        return XLAC_RT_OK;
      }
    }
    // Devices of other processes may still send, so only the timeout ends a wait that spans processes.
    bool someone_running = remote;
    for (const auto& peer : group->devices) {
      if (peer.get() != dev && peer->state != DeviceState::kFinished && peer->state != DeviceState::kFailed) {
        someone_running = true;
      }
    }
    if (!someone_running) {
      return fail(XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                  what + ": message #" + std::to_string(seq) + " was never sent and every other device finished",
                  false);
    }
    const auto deadline = WaitDeadline(dev, begin);
    if (std::chrono::steady_clock::now() >= deadline) {
      return fail(XLAC_RT_ERROR_DEADLINE_EXCEEDED,
                  what + ": waited " + std::to_string(group->timeout.count()) + " ms for message #" +
                      std::to_string(seq) + " but no device sent it",
                  false);
    }
    if (remote) {
      // Poll the transport again soon; a local send still wakes this wait at once.
      WaitLocked(dev, lock, std::min(deadline, std::chrono::steady_clock::now() + std::chrono::microseconds(500)));
    } else {
      WaitLocked(dev, lock, deadline);
    }
  }
}

}  // extern "C"
