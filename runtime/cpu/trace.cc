// Per-device counters and trace events (xlac_runtime_trace.h). Everything here is written by the device's own
// thread during a run and read by the host after xlac_rt_group_run returns, so it needs no locking.
#include <chrono>

#include "runtime/cpu/internal.h"

namespace xlac::rt {

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void ResetObservability(XlacRtDevice* dev) {
  dev->stats = XlacRtDeviceStats{};
  dev->blocked_ns = 0;
  dev->trace_stack.clear();
  dev->events.clear();
}

CollectiveScope::CollectiveScope(XlacRtDevice* dev, CollectiveKind kind, const char* name, int64_t sent,
                                 int64_t received)
    : dev_(dev),
      kind_(kind),
      name_(name),
      sent_(sent),
      received_(received),
      begin_ns_(NowNs()),
      blocked_at_begin_(dev->blocked_ns) {}

CollectiveScope::~CollectiveScope() {
  const int64_t end = NowNs();
  XlacRtCollectiveStats& s = dev_->stats.collectives[static_cast<int>(kind_)];
  const int64_t wait = dev_->blocked_ns - blocked_at_begin_;
  s.count += 1;
  s.bytes_sent += sent_;
  s.bytes_received += received_;
  s.wait_ns += wait;
  if (dev_->group->tracing) {
    dev_->events.push_back(
        XlacRtTraceEvent{begin_ns_, end, -1, static_cast<int>(kind_), name_, sent_, received_, wait});
  }
}

}  // namespace xlac::rt

using namespace xlac::rt;

extern "C" {

const char* xlac_rt_collective_kind_name(int kind) {
  if (kind < 0 || kind >= XLAC_RT_NUM_COLLECTIVE_KINDS) return "collective";
  return KindName(static_cast<CollectiveKind>(kind));
}

int xlac_rt_group_device_stats(XlacRtGroup* group, int64_t device, XlacRtDeviceStats* stats) {
  if (group == nullptr || stats == nullptr || device < 0 || device >= static_cast<int64_t>(group->devices.size())) {
    return -1;
  }
  *stats = group->devices[static_cast<size_t>(device)]->stats;
  return 0;
}

void xlac_rt_group_set_tracing(XlacRtGroup* group, int enabled) { group->tracing = enabled != 0; }

int64_t xlac_rt_group_trace_events(XlacRtGroup* group, int64_t device, const XlacRtTraceEvent** events) {
  if (group == nullptr || device < 0 || device >= static_cast<int64_t>(group->devices.size())) return 0;
  const XlacRtDevice& dev = *group->devices[static_cast<size_t>(device)];
  if (events != nullptr) *events = dev.events.data();
  return static_cast<int64_t>(dev.events.size());
}

void xlac_rt_trace_begin(XlacRtDevice* dev, int64_t /*kernel_id*/) { dev->trace_stack.push_back(NowNs()); }

void xlac_rt_trace_end(XlacRtDevice* dev, int64_t kernel_id) {
  const int64_t end = NowNs();
  if (dev->trace_stack.empty()) return;  // unbalanced hooks are a codegen bug; never crash the run for it
  const int64_t begin = dev->trace_stack.back();
  dev->trace_stack.pop_back();
  // Only the outermost slices count as kernel time: a while loop's slice already contains its body's kernels.
  if (dev->trace_stack.empty()) {
    dev->stats.kernels += 1;
    dev->stats.kernel_ns += end - begin;
  }
  if (dev->group->tracing) dev->events.push_back(XlacRtTraceEvent{begin, end, kernel_id, -1, nullptr, 0, 0, 0});
}

int64_t xlac_rt_now_ns(void) { return NowNs(); }

}  // extern "C"
