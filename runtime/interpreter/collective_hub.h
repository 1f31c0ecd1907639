// Rendezvous between device threads: collectives exchange one contribution per participant; send/recv pass
// messages through mailboxes. A device that waits longer than the timeout, or for a device that has already
// finished or failed, gets an error naming who it waited for and where those devices are instead.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"

namespace xlac::interp {

class CollectiveHub {
 public:
  CollectiveHub(int64_t num_devices, int64_t timeout_ms);

  // Blocks until every device in `participants` (device ids; `device` among them) has called Exchange with the same
  // `key`, then returns all contributions in `participants` order. `what` describes the op for error messages.
  absl::StatusOr<std::vector<Literal>> Exchange(const std::string& key, int64_t device,
                                                const std::vector<int64_t>& participants, Literal contribution,
                                                const std::string& what);

  // Point-to-point: deposits `data` for (`key`, source -> target); Receive blocks `receiver` until it is there.
  // Source and target may be -1 for messages matched by key alone.
  void Send(const std::string& key, int64_t source, int64_t target, Literal data);
  absl::StatusOr<Literal> Receive(const std::string& key, int64_t source, int64_t target, const std::string& what,
                                  int64_t receiver);

  // Called when a device's program ends; waiters for it fail fast instead of timing out.
  void DeviceFinished(int64_t device, bool ok);

 private:
  struct Slot {
    std::vector<int64_t> participants;
    std::vector<std::optional<Literal>> contributions;
    int64_t arrived = 0;
    int64_t consumed = 0;
  };
  // Why `device` cannot proceed while waiting for `missing` (OK if it may still succeed): Aborted when a peer
  // failed, DeadlineExceeded otherwise.
  absl::Status DescribeStall(int64_t device, const std::vector<int64_t>& missing, const std::string& what,
                             bool timed_out) const;

  int64_t num_devices_;
  std::chrono::milliseconds timeout_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Slot> slots_;
  std::map<std::string, Literal> mailbox_;
  std::vector<std::string> waiting_at_;  // per device: what it is blocked on ("" = running)
  std::vector<int> state_;               // per device: 0 running, 1 finished ok, 2 failed
};

}  // namespace xlac::interp
