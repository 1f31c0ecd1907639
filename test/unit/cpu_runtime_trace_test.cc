// The runtime's observability (runtime/cpu/xlac_runtime_trace.h): per-device collective counters, wait times, trace
// events, and their reset by every run.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu/xlac_runtime.h"
#include "runtime/cpu/xlac_runtime_trace.h"

namespace {

using Body = std::function<void(XlacRtDevice* dev, int64_t device)>;

struct GroupDeleter {
  void operator()(XlacRtGroup* g) const { xlac_rt_group_destroy(g); }
};
using GroupPtr = std::unique_ptr<XlacRtGroup, GroupDeleter>;

void Trampoline(void* const* buffers, XlacRtDevice* dev) {
  (*static_cast<const Body*>(buffers[0]))(dev, xlac_rt_device_id(dev));
}

void RunAll(XlacRtGroup* group, const Body& body) {
  void* table[1] = {const_cast<Body*>(&body)};
  std::vector<void* const*> per_device(static_cast<size_t>(xlac_rt_group_num_devices(group)), table);
  XlacRtStatus status;
  ASSERT_EQ(xlac_rt_group_run(group, Trampoline, per_device.data(), &status), XLAC_RT_OK) << status.message;
}

void AddF32(void* acc, const void* in, int64_t count, void*) {
  for (int64_t i = 0; i < count; ++i) static_cast<float*>(acc)[i] += static_cast<const float*>(in)[i];
}

const int64_t kGroup[4] = {0, 1, 2, 3};
const int64_t kRing[8] = {0, 1, 1, 2, 2, 3, 3, 0};

// Device 0 arrives late at the all-gather; the others wait for it there.
Body Program() {
  return [](XlacRtDevice* dev, int64_t d) {
    float src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[32];
    xlac_rt_trace_begin(dev, 100);
    if (d == 0) std::this_thread::sleep_for(std::chrono::milliseconds(30));
    xlac_rt_all_gather(dev, 1, "ag", kGroup, 1, 4, src, dst, sizeof src);
    xlac_rt_trace_end(dev, 100);
    xlac_rt_all_reduce(dev, 2, "ar", kGroup, 1, 4, src, dst, 8, 4, AddF32, nullptr);
    xlac_rt_all_reduce(dev, 3, "ar.2", kGroup, 1, 4, src, dst, 2, 4, AddF32, nullptr);
    xlac_rt_collective_permute(dev, 4, "cp", kRing, 4, src, dst, 12);
  };
}

TEST(RuntimeTraceTest, CountersPerDeviceAndKind) {
  XlacRtStatus status;
  GroupPtr group(xlac_rt_group_create(1, 4, 10000, &status));
  ASSERT_NE(group, nullptr);
  RunAll(group.get(), Program());
  int64_t longest_wait = 0;
  for (int64_t d = 0; d < 4; ++d) {
    XlacRtDeviceStats stats;
    ASSERT_EQ(xlac_rt_group_device_stats(group.get(), d, &stats), 0);
    const XlacRtCollectiveStats& ag = stats.collectives[XLAC_RT_ALL_GATHER];
    EXPECT_EQ(ag.count, 1);
    EXPECT_EQ(ag.bytes_sent, 32);
    EXPECT_EQ(ag.bytes_received, 128);
    const XlacRtCollectiveStats& ar = stats.collectives[XLAC_RT_ALL_REDUCE];
    EXPECT_EQ(ar.count, 2);
    EXPECT_EQ(ar.bytes_sent, 40);
    EXPECT_EQ(ar.bytes_received, 40);
    const XlacRtCollectiveStats& cp = stats.collectives[XLAC_RT_COLLECTIVE_PERMUTE];
    EXPECT_EQ(cp.count, 1);
    EXPECT_EQ(cp.bytes_sent, 12);
    EXPECT_EQ(cp.bytes_received, 12);
    EXPECT_EQ(stats.collectives[XLAC_RT_ALL_TO_ALL].count, 0);
    // The others wait for the late device (at least one of them for most of its delay, even on a loaded machine).
    if (d != 0) longest_wait = std::max(longest_wait, ag.wait_ns);
    EXPECT_EQ(stats.kernels, 1);
    EXPECT_GE(stats.kernel_ns, ag.wait_ns);
    // Tracing is off: no events.
    EXPECT_EQ(xlac_rt_group_trace_events(group.get(), d, nullptr), 0);
  }
  EXPECT_GT(longest_wait, 15'000'000);
  EXPECT_EQ(xlac_rt_group_device_stats(group.get(), 4, nullptr), -1);
  EXPECT_STREQ(xlac_rt_collective_kind_name(XLAC_RT_REDUCE_SCATTER), "reduce-scatter");
}

TEST(RuntimeTraceTest, EventsWhenTracingAndResetByEveryRun) {
  XlacRtStatus status;
  GroupPtr group(xlac_rt_group_create(1, 4, 10000, &status));
  ASSERT_NE(group, nullptr);
  xlac_rt_group_set_tracing(group.get(), 1);
  RunAll(group.get(), Program());
  const XlacRtTraceEvent* events = nullptr;
  ASSERT_EQ(xlac_rt_group_trace_events(group.get(), 2, &events), 5);
  // In order of their end: the all-gather ends inside the kernel slice.
  EXPECT_EQ(events[0].collective_kind, XLAC_RT_ALL_GATHER);
  EXPECT_STREQ(events[0].name, "ag");
  EXPECT_EQ(events[0].bytes_received, 128);
  EXPECT_EQ(events[1].kernel_id, 100);
  EXPECT_EQ(events[1].collective_kind, -1);
  EXPECT_LE(events[1].begin_ns, events[0].begin_ns);
  EXPECT_GE(events[1].end_ns, events[0].end_ns);
  EXPECT_STREQ(events[4].name, "cp");
  for (int i = 0; i < 5; ++i) EXPECT_LE(events[i].begin_ns, events[i].end_ns);

  // A second run starts from zero.
  RunAll(group.get(), [](XlacRtDevice* dev, int64_t) {
    float x = 1, y;
    xlac_rt_all_reduce(dev, 7, "once", kGroup, 1, 4, &x, &y, 1, 4, AddF32, nullptr);
  });
  XlacRtDeviceStats stats;
  ASSERT_EQ(xlac_rt_group_device_stats(group.get(), 1, &stats), 0);
  EXPECT_EQ(stats.collectives[XLAC_RT_ALL_REDUCE].count, 1);
  EXPECT_EQ(stats.collectives[XLAC_RT_ALL_GATHER].count, 0);
  EXPECT_EQ(stats.kernels, 0);
  EXPECT_EQ(xlac_rt_group_trace_events(group.get(), 1, &events), 1);
}

}  // namespace
