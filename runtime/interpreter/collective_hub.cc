#include "runtime/interpreter/collective_hub.h"

#include <algorithm>

#include "fmt/format.h"

namespace xlac::interp {

CollectiveHub::CollectiveHub(int64_t num_devices, int64_t timeout_ms)
    : num_devices_(num_devices),
      timeout_(std::max<int64_t>(timeout_ms, 1)),
      waiting_at_(static_cast<size_t>(num_devices)),
      state_(static_cast<size_t>(num_devices), 0) {}

absl::Status CollectiveHub::DescribeStall(int64_t device, const std::vector<int64_t>& missing, const std::string& what,
                                          bool timed_out) const {
  std::vector<std::string> reasons;
  bool hopeless = timed_out;
  bool peer_failed = false;
  for (int64_t m : missing) {
    int s = state_[static_cast<size_t>(m)];
    if (s == 1) {
      reasons.push_back(fmt::format("device {} finished its program without reaching it", m));
      hopeless = true;
    } else if (s == 2) {
      reasons.push_back(fmt::format("device {} failed", m));
      hopeless = true;
      peer_failed = true;
    } else if (!waiting_at_[static_cast<size_t>(m)].empty()) {
      reasons.push_back(fmt::format("device {} is waiting at {}", m, waiting_at_[static_cast<size_t>(m)]));
    } else {
      reasons.push_back(fmt::format("device {} is still running", m));
    }
  }
  if (!hopeless) return absl::OkStatus();
  std::string joined;
  for (const std::string& r : reasons) joined += (joined.empty() ? "" : "; ") + r;
  if (joined.empty()) joined = "no matching message was sent";
  std::string message = fmt::format(
      "device {} {} at {}: {}", device,
      timed_out ? fmt::format("timed out after {} ms", timeout_.count()) : std::string("gave up"), what, joined);
  // A peer's failure is reported by that peer; this one is only a consequence.
  return peer_failed ? absl::AbortedError(message) : absl::DeadlineExceededError(message);
}

absl::StatusOr<std::vector<Literal>> CollectiveHub::Exchange(const std::string& op_key, int64_t device,
                                                             const std::vector<int64_t>& participants,
                                                             Literal contribution, const std::string& what) {
  // Disjoint groups of the same op instance meet separately.
  std::string key = op_key + " @";
  for (int64_t p : participants) key += " " + std::to_string(p);
  auto rank_it = std::find(participants.begin(), participants.end(), device);
  if (rank_it == participants.end()) return absl::InternalError("device is not a participant of its collective");
  size_t rank = static_cast<size_t>(rank_it - participants.begin());
  std::unique_lock<std::mutex> lock(mu_);
  Slot& slot = slots_[key];
  if (slot.participants.empty()) {
    slot.participants = participants;
    slot.contributions.resize(participants.size());
  }
  slot.contributions[rank] = std::move(contribution);
  ++slot.arrived;
  cv_.notify_all();
  waiting_at_[static_cast<size_t>(device)] = what;
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    Slot& s = slots_[key];
    if (s.arrived == static_cast<int64_t>(participants.size())) break;
    std::vector<int64_t> missing;
    for (size_t i = 0; i < participants.size(); ++i) {
      if (!s.contributions[i]) missing.push_back(participants[i]);
    }
    bool timed_out = std::chrono::steady_clock::now() >= deadline;
    absl::Status stall = DescribeStall(device, missing, what, timed_out);
    if (!stall.ok()) {
      // Stay marked as waiting until DeviceFinished, so peers diagnosing at the same moment see where we were.
      // Withdraw, so a late peer does not mistake this slot for a complete one.
      s.contributions[rank].reset();
      if (--s.arrived == 0) slots_.erase(key);
      return stall;
    }
    cv_.wait_until(lock, deadline);
  }
  waiting_at_[static_cast<size_t>(device)].clear();
  Slot& s = slots_[key];
  std::vector<Literal> result;
  result.reserve(participants.size());
  for (auto& c : s.contributions) result.push_back(*c);
  if (++s.consumed == static_cast<int64_t>(participants.size())) slots_.erase(key);
  return result;
}

void CollectiveHub::Send(const std::string& key, int64_t source, int64_t target, Literal data) {
  std::lock_guard<std::mutex> lock(mu_);
  mailbox_[fmt::format("{}:{}->{}", key, source, target)] = std::move(data);
  cv_.notify_all();
}

absl::StatusOr<Literal> CollectiveHub::Receive(const std::string& key, int64_t source, int64_t target,
                                               const std::string& what, int64_t receiver) {
  std::string box = fmt::format("{}:{}->{}", key, source, target);
  std::unique_lock<std::mutex> lock(mu_);
  waiting_at_[static_cast<size_t>(receiver)] = what;
  auto deadline = std::chrono::steady_clock::now() + timeout_;
  for (;;) {
    auto it = mailbox_.find(box);
    if (it != mailbox_.end()) {
      Literal data = std::move(it->second);
      mailbox_.erase(it);
      waiting_at_[static_cast<size_t>(receiver)].clear();
      return data;
    }
    std::vector<int64_t> missing;
    if (source >= 0) missing.push_back(source);
    absl::Status stall = DescribeStall(receiver, missing, what, std::chrono::steady_clock::now() >= deadline);
    if (!stall.ok()) {
      return stall;
    }
    cv_.wait_until(lock, deadline);
  }
}

void CollectiveHub::DeviceFinished(int64_t device, bool ok) {
  std::lock_guard<std::mutex> lock(mu_);
  state_[static_cast<size_t>(device)] = ok ? 1 : 2;
  waiting_at_[static_cast<size_t>(device)].clear();
  cv_.notify_all();
}

}  // namespace xlac::interp
