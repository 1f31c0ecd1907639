// The CPU runtime's C ABI, driven by plain C++ functions standing in for compiled entries: device ids, every
// collective over 1, 2, 4 and 8 devices with several group layouts (bit-identical rank-order reductions), repeated
// collectives, aliasing dst and src, mismatched collectives (timeout naming the missing device, peers that finished,
// disagreeing sizes), cancellation when a device fails, custom calls, the thread pool and allocation.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu/xlac_runtime.h"

namespace {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::duration<double, std::milli>;
using Body = std::function<void(XlacRtDevice* dev, int64_t device)>;

struct GroupDeleter {
  void operator()(XlacRtGroup* g) const { xlac_rt_group_destroy(g); }
};
using GroupPtr = std::unique_ptr<XlacRtGroup, GroupDeleter>;

GroupPtr MakeGroup(int64_t replicas, int64_t partitions = 1, int64_t timeout_ms = 10000) {
  XlacRtStatus status;
  XlacRtGroup* g = xlac_rt_group_create(replicas, partitions, timeout_ms, &status);
  EXPECT_NE(g, nullptr) << status.message;
  return GroupPtr(g);
}

// The "compiled entry": buffer 0 carries the test's body.
void Trampoline(void* const* buffers, XlacRtDevice* dev) {
  (*static_cast<const Body*>(buffers[0]))(dev, xlac_rt_device_id(dev));
}

int RunAll(XlacRtGroup* group, const Body& body, XlacRtStatus* status = nullptr) {
  void* table[1] = {const_cast<Body*>(&body)};
  std::vector<void* const*> per_device(static_cast<size_t>(xlac_rt_group_num_devices(group)), table);
  XlacRtStatus local;
  int code = xlac_rt_group_run(group, Trampoline, per_device.data(), status != nullptr ? status : &local);
  if (status == nullptr) EXPECT_EQ(code, XLAC_RT_OK) << local.message;
  return code;
}

void AddF32(void* acc, const void* in, int64_t count, void*) {
  float* a = static_cast<float*>(acc);
  const float* b = static_cast<const float*>(in);
  for (int64_t i = 0; i < count; ++i) a[i] += b[i];
}

// Values of very different magnitudes, so that the summation order shows in the rounding.
std::vector<float> Data(int64_t device, int64_t count) {
  std::mt19937 rng(static_cast<uint32_t>(1234 + device));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-8, 8);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = std::ldexp(mantissa(rng), exponent(rng) * 3);
  return v;
}

// Layouts of participant groups over n devices (flat, group_size): everyone; pairs; strided; reversed rank order.
struct Layout {
  std::string name;
  std::vector<int64_t> groups;
  int64_t group_size;
};
std::vector<Layout> Layouts(int64_t n) {
  std::vector<Layout> out;
  Layout all{"all", {}, n};
  for (int64_t d = 0; d < n; ++d) all.groups.push_back(d);
  out.push_back(all);
  Layout reversed{"reversed", {}, n};
  for (int64_t d = n - 1; d >= 0; --d) reversed.groups.push_back(d);
  out.push_back(reversed);
  if (n >= 4) {
    Layout pairs{"pairs", {}, 2};
    for (int64_t d = 0; d < n; ++d) pairs.groups.push_back(d);
    out.push_back(pairs);
    Layout strided{"strided", {}, n / 2};
    for (int64_t parity = 0; parity < 2; ++parity) {
      for (int64_t d = parity; d < n; d += 2) strided.groups.push_back(d);
    }
    out.push_back(strided);
  }
  return out;
}

// This device's group (rank order) and rank within it.
std::vector<int64_t> GroupOf(const Layout& l, int64_t device, int64_t* rank) {
  for (size_t start = 0; start < l.groups.size(); start += static_cast<size_t>(l.group_size)) {
    std::vector<int64_t> g(l.groups.begin() + static_cast<std::ptrdiff_t>(start),
                           l.groups.begin() + static_cast<std::ptrdiff_t>(start + l.group_size));
    for (size_t r = 0; r < g.size(); ++r) {
      if (g[r] == device) {
        *rank = static_cast<int64_t>(r);
        return g;
      }
    }
  }
  ADD_FAILURE() << "device " << device << " is in no group";
  return {};
}

// Sequential reference: sum over `group` in rank order, left to right.
std::vector<float> FoldInOrder(const std::vector<int64_t>& group, int64_t count) {
  std::vector<float> acc = Data(group[0], count);
  for (size_t r = 1; r < group.size(); ++r) {
    std::vector<float> in = Data(group[r], count);
    for (int64_t i = 0; i < count; ++i) acc[i] += in[i];
  }
  return acc;
}

bool BitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

constexpr int64_t kDeviceCounts[] = {1, 2, 4, 8};

TEST(CpuRuntime, DeviceIds) {
  GroupPtr g = MakeGroup(2, 3);
  std::vector<std::vector<int64_t>> seen(6);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
    seen[d] = {xlac_rt_replica_id(dev), xlac_rt_partition_id(dev), xlac_rt_num_replicas(dev),
               xlac_rt_num_partitions(dev), xlac_rt_failed(dev)};
  });
  for (int64_t d = 0; d < 6; ++d) EXPECT_EQ(seen[d], (std::vector<int64_t>{d / 3, d % 3, 2, 3, 0})) << d;
}

TEST(CpuRuntime, SingleDeviceRunsOnCallerThread) {
  GroupPtr g = MakeGroup(1);
  std::thread::id ran_on;
  RunAll(g.get(), [&](XlacRtDevice*, int64_t) { ran_on = std::this_thread::get_id(); });
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

TEST(CpuRuntime, AllReduceIsRankOrderedAndBitIdentical) {
  constexpr int64_t kCount = 1001;  // not a multiple of any group size: uneven shares
  // The data must make the order visible, or this test could not catch a wrong order.
  std::vector<float> forward = FoldInOrder({0, 1, 2, 3, 4, 5, 6, 7}, kCount);
  std::vector<float> backward = FoldInOrder({7, 6, 5, 4, 3, 2, 1, 0}, kCount);
  ASSERT_FALSE(BitEqual(forward, backward));
  for (int64_t n : kDeviceCounts) {
    for (const Layout& layout : Layouts(n)) {
      GroupPtr g = MakeGroup(n);
      std::vector<std::vector<float>> out(static_cast<size_t>(n));
      RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
        std::vector<float> src = Data(d, kCount);
        out[d].assign(kCount, -1.0f);
        EXPECT_EQ(xlac_rt_all_reduce(dev, 7, "all-reduce.7", layout.groups.data(),
                                     static_cast<int64_t>(layout.groups.size()) / layout.group_size, layout.group_size,
                                     src.data(), out[d].data(), kCount, sizeof(float), AddF32, nullptr),
                  XLAC_RT_OK);
      });
      for (int64_t d = 0; d < n; ++d) {
        int64_t rank;
        std::vector<int64_t> group = GroupOf(layout, d, &rank);
        EXPECT_TRUE(BitEqual(out[d], FoldInOrder(group, kCount))) << "n=" << n << " " << layout.name << " d=" << d;
      }
    }
  }
}

TEST(CpuRuntime, AllGatherConcatenatesInRankOrder) {
  constexpr int64_t kCount = 5;
  for (int64_t n : kDeviceCounts) {
    for (const Layout& layout : Layouts(n)) {
      for (bool in_place : {false, true}) {
        GroupPtr g = MakeGroup(n);
        std::vector<std::vector<float>> out(static_cast<size_t>(n));
        RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
          int64_t rank;
          GroupOf(layout, d, &rank);
          std::vector<float> src = Data(d, kCount);
          out[d].assign(static_cast<size_t>(kCount * layout.group_size), -1.0f);
          const float* from = src.data();
          if (in_place) {
            std::copy(src.begin(), src.end(), out[d].begin() + rank * kCount);
            from = out[d].data() + rank * kCount;
          }
          EXPECT_EQ(xlac_rt_all_gather(dev, 3, "all-gather.3", layout.groups.data(),
                                       static_cast<int64_t>(layout.groups.size()) / layout.group_size,
                                       layout.group_size, from, out[d].data(), kCount * sizeof(float)),
                    XLAC_RT_OK);
        });
        for (int64_t d = 0; d < n; ++d) {
          int64_t rank;
          std::vector<float> want;
          for (int64_t member : GroupOf(layout, d, &rank)) {
            std::vector<float> part = Data(member, kCount);
            want.insert(want.end(), part.begin(), part.end());
          }
          EXPECT_TRUE(BitEqual(out[d], want)) << "n=" << n << " " << layout.name << " d=" << d << " " << in_place;
        }
      }
    }
  }
}

TEST(CpuRuntime, ReduceScatterGivesEachRankItsChunk) {
  constexpr int64_t kChunk = 37;
  for (int64_t n : kDeviceCounts) {
    for (const Layout& layout : Layouts(n)) {
      GroupPtr g = MakeGroup(n);
      std::vector<std::vector<float>> out(static_cast<size_t>(n));
      int64_t total = kChunk * layout.group_size;
      RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
        std::vector<float> src = Data(d, total);
        out[d].assign(kChunk, -1.0f);
        EXPECT_EQ(
            xlac_rt_reduce_scatter(dev, 4, "reduce-scatter.4", layout.groups.data(),
                                   static_cast<int64_t>(layout.groups.size()) / layout.group_size, layout.group_size,
                                   src.data(), out[d].data(), kChunk, sizeof(float), AddF32, nullptr),
            XLAC_RT_OK);
      });
      for (int64_t d = 0; d < n; ++d) {
        int64_t rank;
        std::vector<float> full = FoldInOrder(GroupOf(layout, d, &rank), total);
        std::vector<float> want(full.begin() + rank * kChunk, full.begin() + (rank + 1) * kChunk);
        EXPECT_TRUE(BitEqual(out[d], want)) << "n=" << n << " " << layout.name << " d=" << d;
      }
    }
  }
}

TEST(CpuRuntime, AllToAllTransposesChunks) {
  constexpr int64_t kChunk = 3;
  for (int64_t n : kDeviceCounts) {
    for (const Layout& layout : Layouts(n)) {
      for (bool in_place : {false, true}) {
        GroupPtr g = MakeGroup(n);
        std::vector<std::vector<float>> out(static_cast<size_t>(n));
        int64_t total = kChunk * layout.group_size;
        RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
          std::vector<float> src = Data(d, total);
          out[d].assign(static_cast<size_t>(total), -1.0f);
          const float* from = src.data();
          if (in_place) {
            out[d] = src;
            from = out[d].data();
          }
          EXPECT_EQ(xlac_rt_all_to_all(dev, 5, "all-to-all.5", layout.groups.data(),
                                       static_cast<int64_t>(layout.groups.size()) / layout.group_size,
                                       layout.group_size, from, out[d].data(), kChunk * sizeof(float)),
                    XLAC_RT_OK);
        });
        for (int64_t d = 0; d < n; ++d) {
          int64_t rank;
          std::vector<float> want;
          for (int64_t member : GroupOf(layout, d, &rank)) {
            std::vector<float> theirs = Data(member, total);
            want.insert(want.end(), theirs.begin() + rank * kChunk, theirs.begin() + (rank + 1) * kChunk);
          }
          EXPECT_TRUE(BitEqual(out[d], want)) << "n=" << n << " " << layout.name << " d=" << d << " " << in_place;
        }
      }
    }
  }
}

TEST(CpuRuntime, CollectivePermute) {
  constexpr int64_t kCount = 4;
  for (int64_t n : kDeviceCounts) {
    // A ring, and a partial list: 0 -> last only (devices in between take no part and get zeros, 0 gets zeros too).
    std::vector<std::vector<int64_t>> pair_lists(2);
    for (int64_t d = 0; d < n; ++d) pair_lists[0].insert(pair_lists[0].end(), {d, (d + 1) % n});
    pair_lists[1] = {0, n - 1};
    for (const auto& pairs : pair_lists) {
      for (bool in_place : {false, true}) {
        GroupPtr g = MakeGroup(n);
        std::vector<std::vector<float>> out(static_cast<size_t>(n));
        RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
          std::vector<float> src = Data(d, kCount);
          out[d].assign(kCount, -1.0f);
          const float* from = src.data();
          if (in_place) {
            out[d] = src;
            from = out[d].data();
          }
          EXPECT_EQ(xlac_rt_collective_permute(dev, 6, "collective-permute.6", pairs.data(),
                                               static_cast<int64_t>(pairs.size() / 2), from, out[d].data(),
                                               kCount * sizeof(float)),
                    XLAC_RT_OK);
        });
        for (int64_t d = 0; d < n; ++d) {
          std::vector<float> want(kCount, 0.0f);
          for (size_t p = 0; p < pairs.size(); p += 2) {
            if (pairs[p + 1] == d) want = Data(pairs[p], kCount);
          }
          EXPECT_TRUE(BitEqual(out[d], want)) << "n=" << n << " d=" << d << " pairs=" << pairs.size() / 2;
        }
      }
    }
  }
}

TEST(CpuRuntime, CollectiveBroadcastFromFirstOfGroup) {
  constexpr int64_t kCount = 6;
  for (int64_t n : kDeviceCounts) {
    for (const Layout& layout : Layouts(n)) {
      GroupPtr g = MakeGroup(n);
      std::vector<std::vector<float>> out(static_cast<size_t>(n));
      RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
        std::vector<float> src = Data(d, kCount);
        out[d].assign(kCount, -1.0f);
        EXPECT_EQ(xlac_rt_collective_broadcast(dev, 8, "collective-broadcast.8", layout.groups.data(),
                                               static_cast<int64_t>(layout.groups.size()) / layout.group_size,
                                               layout.group_size, src.data(), out[d].data(), kCount * sizeof(float)),
                  XLAC_RT_OK);
      });
      for (int64_t d = 0; d < n; ++d) {
        int64_t rank;
        EXPECT_TRUE(BitEqual(out[d], Data(GroupOf(layout, d, &rank)[0], kCount))) << n << layout.name << d;
      }
    }
  }
  // Devices outside every group get zeros.
  GroupPtr g = MakeGroup(4);
  std::vector<int64_t> groups = {2, 0};
  std::vector<std::vector<float>> out(4);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
    std::vector<float> src(3, static_cast<float>(d + 1));
    out[d].assign(3, -1.0f);
    EXPECT_EQ(xlac_rt_collective_broadcast(dev, 8, "cb", groups.data(), 1, 2, src.data(), out[d].data(), 12),
              XLAC_RT_OK);
  });
  EXPECT_EQ(out, (std::vector<std::vector<float>>{{3, 3, 3}, {0, 0, 0}, {3, 3, 3}, {0, 0, 0}}));
}

TEST(CpuRuntime, BarrierWaitsForTheWholeGroup) {
  for (int64_t n : kDeviceCounts) {
    for (const Layout& layout : Layouts(n)) {
      GroupPtr g = MakeGroup(n);
      std::vector<std::atomic<int>> before(static_cast<size_t>(n));
      std::vector<int> seen(static_cast<size_t>(n), -1);
      RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
        int64_t rank;
        std::vector<int64_t> group = GroupOf(layout, d, &rank);
        // Late arrivals: the barrier must wait for them.
        std::this_thread::sleep_for(std::chrono::milliseconds(2 * rank));
        before[d].store(1);
        EXPECT_EQ(xlac_rt_barrier(dev, 9, "barrier.9", layout.groups.data(),
                                  static_cast<int64_t>(layout.groups.size()) / layout.group_size, layout.group_size),
                  XLAC_RT_OK);
        int count = 0;
        for (int64_t member : group) count += before[member].load();
        seen[d] = count;
      });
      for (int64_t d = 0; d < n; ++d) EXPECT_EQ(seen[d], layout.group_size) << n << layout.name << d;
    }
  }
}

// Collectives in a loop meet by generation: the k-th execution on one device meets the k-th on its peers.
TEST(CpuRuntime, RepeatedCollectivesMatchByGeneration) {
  constexpr int kIterations = 200;
  for (int64_t n : {2, 4, 8}) {
    GroupPtr g = MakeGroup(n);
    std::vector<int64_t> all;
    for (int64_t d = 0; d < n; ++d) all.push_back(d);
    std::vector<std::vector<float>> out(static_cast<size_t>(n));
    RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
      float value = static_cast<float>(d);
      std::vector<float> gathered(static_cast<size_t>(n));
      for (int i = 0; i < kIterations; ++i) {
        float sum;
        ASSERT_EQ(xlac_rt_all_reduce(dev, 1, "ar", all.data(), 1, n, &value, &sum, 1, sizeof(float), AddF32, nullptr),
                  XLAC_RT_OK);
        // Every device now holds the same sum; make the next round's contributions depend on it and on i.
        value = sum / static_cast<float>(n) + static_cast<float>(d * (i % 3));
        ASSERT_EQ(xlac_rt_all_gather(dev, 2, "ag", all.data(), 1, n, &value, gathered.data(), sizeof(float)),
                  XLAC_RT_OK);
      }
      out[d] = gathered;
    });
    // Replay sequentially.
    std::vector<float> values(static_cast<size_t>(n));
    for (int64_t d = 0; d < n; ++d) values[d] = static_cast<float>(d);
    for (int i = 0; i < kIterations; ++i) {
      float sum = values[0];
      for (int64_t d = 1; d < n; ++d) sum += values[d];
      for (int64_t d = 0; d < n; ++d) values[d] = sum / static_cast<float>(n) + static_cast<float>(d * (i % 3));
    }
    for (int64_t d = 0; d < n; ++d) EXPECT_TRUE(BitEqual(out[d], values)) << n << " " << d;
  }
}

TEST(CpuRuntime, GroupIsReusableAcrossRuns) {
  GroupPtr g = MakeGroup(4, 1, 10000);
  std::vector<int64_t> all = {0, 1, 2, 3};
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    float v = 1, out = 0;
    xlac_rt_all_reduce(dev, 1, "ar", all.data(), 1, 4, &v, &out, 1, sizeof(float), AddF32, nullptr);
    if (out != 4) xlac_rt_set_error(dev, "wrong sum");
  };
  RunAll(g.get(), body);
  XlacRtStatus status;
  // A failed run (device 3 fails before the collective) leaves nothing behind for the next run.
  EXPECT_EQ(RunAll(
                g.get(),
                [&](XlacRtDevice* dev, int64_t d) {
                  if (d == 3) return xlac_rt_set_error(dev, "early failure");
                  body(dev, d);
                },
                &status),
            XLAC_RT_ERROR_EXECUTION);
  RunAll(g.get(), body);
  RunAll(g.get(), body);
}

TEST(CpuRuntime, MissingDeviceTimesOutNamingIt) {
  GroupPtr g = MakeGroup(4, 1, 200);
  std::vector<int64_t> all = {0, 1, 2, 3};
  std::vector<int> codes(4, -1), late_code(1, -1);
  std::vector<double> waited_ms(4, 0);
  XlacRtStatus status;
  auto start = Clock::now();
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        float v = 1, out;
        if (d == 1) {
          // Busy elsewhere past the others' timeout, then arrives too late: it must be cancelled, not matched.
          std::this_thread::sleep_for(std::chrono::milliseconds(500));
          late_code[0] =
              xlac_rt_all_reduce(dev, 7, "all-reduce.3", all.data(), 1, 4, &v, &out, 1, sizeof(float), AddF32, nullptr);
          return;
        }
        auto t0 = Clock::now();
        codes[d] =
            xlac_rt_all_reduce(dev, 7, "all-reduce.3", all.data(), 1, 4, &v, &out, 1, sizeof(float), AddF32, nullptr);
        waited_ms[d] = Millis(Clock::now() - t0).count();
      },
      &status);
  double total_ms = Millis(Clock::now() - start).count();
  EXPECT_EQ(code, XLAC_RT_ERROR_DEADLINE_EXCEEDED);
  EXPECT_NE(status.device, 1);
  std::string message = status.message;
  EXPECT_NE(message.find("all-reduce.3 (op 7): waited 200 ms but device 1 never arrived (device 1 is still running)"),
            std::string::npos)
      << message;
  int timeouts = 0;
  for (int64_t d : {0, 2, 3}) {
    EXPECT_TRUE(codes[d] == XLAC_RT_ERROR_DEADLINE_EXCEEDED || codes[d] == XLAC_RT_ERROR_CANCELLED) << codes[d];
    timeouts += codes[d] == XLAC_RT_ERROR_DEADLINE_EXCEEDED;
    EXPECT_GE(waited_ms[d], 190) << d;
    EXPECT_LT(waited_ms[d], 450) << d;  // released at the timeout, not when device 1 shows up
  }
  EXPECT_EQ(timeouts, 1);  // the others are consequences
  EXPECT_EQ(late_code[0], XLAC_RT_ERROR_CANCELLED);
  EXPECT_LT(total_ms, 3000);
  XlacRtStatus dev1;
  EXPECT_EQ(xlac_rt_group_device_status(g.get(), 1, &dev1), XLAC_RT_ERROR_CANCELLED);
  EXPECT_NE(std::string(dev1.message).find("cancelled because device " + std::to_string(status.device) + " failed"),
            std::string::npos)
      << dev1.message;
}

TEST(CpuRuntime, DevicesAtDifferentCollectivesDescribeEachOther) {
  GroupPtr g = MakeGroup(2, 1, 200);
  std::vector<int64_t> all = {0, 1};
  XlacRtStatus status;
  EXPECT_EQ(RunAll(
                g.get(),
                [&](XlacRtDevice* dev, int64_t d) {
                  if (d == 0) xlac_rt_barrier(dev, 4, "barrier.a", all.data(), 1, 2);
                  if (d == 1) xlac_rt_barrier(dev, 5, "barrier.b", all.data(), 1, 2);
                },
                &status),
            XLAC_RT_ERROR_DEADLINE_EXCEEDED);
  std::string m = status.message;
  bool zero_first = m.find(
                        "device 0: barrier.a (op 4): waited 200 ms but device 1 never arrived (device 1 is "
                        "waiting at barrier.b (op 5))") != std::string::npos;
  bool one_first = m.find(
                       "device 1: barrier.b (op 5): waited 200 ms but device 0 never arrived (device 0 is "
                       "waiting at barrier.a (op 4))") != std::string::npos;
  EXPECT_TRUE(zero_first || one_first) << m;
}

TEST(CpuRuntime, PeerThatFinishedFailsWaitersAtOnce) {
  GroupPtr g = MakeGroup(4, 1, 10000);
  std::vector<int64_t> all = {0, 1, 2, 3};
  XlacRtStatus status;
  auto start = Clock::now();
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        if (d == 2) return;  // skips the collective and finishes
        xlac_rt_barrier(dev, 3, "barrier.3", all.data(), 1, 4);
      },
      &status);
  EXPECT_EQ(code, XLAC_RT_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_NE(std::string(status.message).find("barrier.3 (op 3): device 2 finished without reaching it"),
            std::string::npos)
      << status.message;
  EXPECT_LT(Millis(Clock::now() - start).count(), 5000);
}

TEST(CpuRuntime, DisagreeingParticipantsAreAMismatch) {
  GroupPtr g = MakeGroup(2, 1, 10000);
  std::vector<int64_t> all = {0, 1};
  XlacRtStatus status;
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        float v[2] = {1, 2}, out[2];
        xlac_rt_all_reduce(dev, 7, "ar", all.data(), 1, 2, v, out, d == 0 ? 1 : 2, sizeof(float), AddF32, nullptr);
      },
      &status);
  EXPECT_EQ(code, XLAC_RT_ERROR_COLLECTIVE_MISMATCH);
  std::string m = status.message;
  EXPECT_NE(m.find("ar (op 7): device"), std::string::npos) << m;
  EXPECT_NE(m.find("all-reduce over {0,1} with 4 bytes"), std::string::npos) << m;
  EXPECT_NE(m.find("all-reduce over {0,1} with 8 bytes"), std::string::npos) << m;
}

TEST(CpuRuntime, FailingDeviceReleasesWaitersPromptly) {
  GroupPtr g = MakeGroup(8, 1, 10000);
  std::vector<int64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  std::vector<int> codes(8, -1);
  std::vector<int> after(8, -1);
  XlacRtStatus status;
  auto start = Clock::now();
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        float v = 1, out;
        if (d == 5) {
          std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let the others start waiting
          xlac_rt_set_error(dev, "boom");
          xlac_rt_set_error(dev, "second error is ignored");
          after[d] = xlac_rt_failed(dev);
          return;
        }
        codes[d] = xlac_rt_all_reduce(dev, 1, "ar", all.data(), 1, 8, &v, &out, 1, sizeof(float), AddF32, nullptr);
        after[d] = xlac_rt_failed(dev);
      },
      &status);
  double ms = Millis(Clock::now() - start).count();
  EXPECT_EQ(code, XLAC_RT_ERROR_EXECUTION);
  EXPECT_EQ(status.device, 5);
  EXPECT_STREQ(status.message, "device 5: boom");
  EXPECT_LT(ms, 2000);
  for (int64_t d = 0; d < 8; ++d) {
    EXPECT_EQ(after[d], 1) << d;
    if (d != 5) EXPECT_EQ(codes[d], XLAC_RT_ERROR_CANCELLED) << d;
  }
  XlacRtStatus s0;
  EXPECT_EQ(xlac_rt_group_device_status(g.get(), 0, &s0), XLAC_RT_ERROR_CANCELLED);
  EXPECT_STREQ(s0.message, "ar (op 1): cancelled because device 5 failed");
}

TEST(CpuRuntime, BadCollectiveArguments) {
  GroupPtr g = MakeGroup(4);
  std::vector<int64_t> groups = {0, 1};
  XlacRtStatus status;
  EXPECT_EQ(RunAll(
                g.get(),
                [&](XlacRtDevice* dev, int64_t d) {
                  float v = 1, out;
                  if (d == 3) {
                    xlac_rt_all_reduce(dev, 2, "ar.2", groups.data(), 1, 2, &v, &out, 1, 4, AddF32, nullptr);
                  }
                },
                &status),
            XLAC_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(status.message, "device 3: ar.2 (op 2): device 3 is in no participant group");
  std::vector<int64_t> bad = {0, 9};
  EXPECT_EQ(RunAll(
                g.get(),
                [&](XlacRtDevice* dev, int64_t d) {
                  if (d == 0) xlac_rt_barrier(dev, 2, "b", bad.data(), 1, 2);
                },
                &status),
            XLAC_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(status.message).find("names device 9 out of range"), std::string::npos) << status.message;
}

struct Doubler {
  std::atomic<int> calls{0};
};

int DoubleHandler(void* user, const char* target, const char* config, void* const* operands, void* result,
                  XlacRtDevice* dev) {
  static_cast<Doubler*>(user)->calls++;
  if (std::strcmp(target, "double") == 0) {
    *static_cast<float*>(result) = 2 * *static_cast<const float*>(operands[0]) + std::strlen(config);
    return 0;
  }
  if (std::strcmp(target, "explain") == 0) {
    xlac_rt_set_error(dev, "explained failure");
    return 1;
  }
  return 42;
}

TEST(CpuRuntime, CustomCalls) {
  GroupPtr g = MakeGroup(2);
  XlacRtStatus status;
  EXPECT_EQ(
      RunAll(
          g.get(), [&](XlacRtDevice* dev, int64_t) { xlac_rt_custom_call(dev, "foo", "", nullptr, nullptr); }, &status),
      XLAC_RT_ERROR_UNIMPLEMENTED);
  EXPECT_NE(std::string(status.message).find("unsupported custom call target 'foo'"), std::string::npos);

  Doubler doubler;
  xlac_rt_group_set_custom_call_handler(g.get(), DoubleHandler, &doubler);
  std::vector<float> out(2);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
    float in = static_cast<float>(d + 1);
    void* operands[1] = {&in};
    EXPECT_EQ(xlac_rt_custom_call(dev, "double", "abc", operands, &out[d]), XLAC_RT_OK);
  });
  EXPECT_EQ(out, (std::vector<float>{5, 7}));
  EXPECT_EQ(doubler.calls.load(), 2);

  EXPECT_EQ(RunAll(
                g.get(),
                [&](XlacRtDevice* dev, int64_t d) {
                  if (d == 1) xlac_rt_custom_call(dev, "explain", nullptr, nullptr, nullptr);
                },
                &status),
            XLAC_RT_ERROR_EXECUTION);
  EXPECT_STREQ(status.message, "device 1: explained failure");
  EXPECT_EQ(RunAll(
                g.get(),
                [&](XlacRtDevice* dev, int64_t d) {
                  if (d == 0) xlac_rt_custom_call(dev, "other", nullptr, nullptr, nullptr);
                },
                &status),
            XLAC_RT_ERROR_EXECUTION);
  EXPECT_STREQ(status.message, "device 0: custom call 'other' failed (handler returned 42)");
}

void CountRange(int64_t begin, int64_t end, void* ctx) {
  auto* hits = static_cast<std::vector<std::atomic<int>>*>(ctx);
  for (int64_t i = begin; i < end; ++i) (*hits)[static_cast<size_t>(i)]++;
}

TEST(CpuRuntime, ParallelForCoversEveryIndexOnce) {
  for (int threads : {0, 1, 2, 4}) {
    XlacRtThreadPool* pool = xlac_rt_thread_pool_create(threads);
    for (int64_t n : {0, 1, 2, 7, 1000, 100003}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      xlac_rt_parallel_for(pool, n, CountRange, &hits);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << threads << " " << n << " " << i;
    }
    xlac_rt_thread_pool_destroy(pool);
  }
  std::vector<std::atomic<int>> hits(10);
  xlac_rt_parallel_for(nullptr, 10, CountRange, &hits);
  for (auto& h : hits) EXPECT_EQ(h.load(), 1);
}

struct Nested {
  XlacRtThreadPool* pool;
  std::vector<std::atomic<int>>* hits;
  int64_t inner;
};

void NestedRange(int64_t begin, int64_t end, void* ctx) {
  auto* n = static_cast<Nested*>(ctx);
  for (int64_t i = begin; i < end; ++i) {
    struct Inner {
      std::vector<std::atomic<int>>* hits;
      int64_t base;
    } inner{n->hits, i * n->inner};
    xlac_rt_parallel_for(
        n->pool, n->inner,
        [](int64_t b, int64_t e, void* c) {
          auto* in = static_cast<Inner*>(c);
          for (int64_t j = b; j < e; ++j) (*in->hits)[static_cast<size_t>(in->base + j)]++;
        },
        &inner);
  }
}

TEST(CpuRuntime, ParallelForNestedAndFromDeviceThreads) {
  XlacRtThreadPool* pool = xlac_rt_thread_pool_create(3);
  std::vector<std::atomic<int>> hits(50 * 40);
  Nested nested{pool, &hits, 40};
  xlac_rt_parallel_for(pool, 50, NestedRange, &nested);
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);

  // Every device of a group uses the group's pool at once.
  GroupPtr g = MakeGroup(8);
  xlac_rt_group_set_thread_pool(g.get(), pool);
  std::vector<std::vector<std::atomic<int>>> per_device(8);
  for (auto& v : per_device) v = std::vector<std::atomic<int>>(5000);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
    ASSERT_EQ(xlac_rt_device_thread_pool(dev), pool);
    for (int rep = 0; rep < 20; ++rep)
      xlac_rt_parallel_for(xlac_rt_device_thread_pool(dev), 5000, CountRange, &per_device[d]);
  });
  for (auto& v : per_device) {
    for (auto& h : v) ASSERT_EQ(h.load(), 20);
  }
  xlac_rt_group_set_thread_pool(g.get(), nullptr);
  xlac_rt_thread_pool_destroy(pool);
}

// Counts the distinct threads that ran parts of a loop (each range records its thread once).
struct ThreadCounter {
  std::mutex mu;
  std::set<std::thread::id> ids;
  std::vector<std::atomic<int>>* hits;
};

void CountThreads(int64_t begin, int64_t end, void* ctx) {
  auto* c = static_cast<ThreadCounter*>(ctx);
  for (int64_t i = begin; i < end; ++i) (*c->hits)[static_cast<size_t>(i)]++;
  // Long enough that an idle worker joins before the caller finishes alone.
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  std::lock_guard<std::mutex> lock(c->mu);
  c->ids.insert(std::this_thread::get_id());
}

TEST(CpuRuntime, DeviceParallelForSharesThePoolEvenly) {
  XlacRtThreadPool* pool = xlac_rt_thread_pool_create(4);
  EXPECT_EQ(xlac_rt_thread_pool_threads(pool), 4);
  EXPECT_EQ(xlac_rt_thread_pool_threads(nullptr), 1);
  for (int64_t devices : {1, 2, 4, 8}) {
    GroupPtr g = MakeGroup(devices);
    xlac_rt_group_set_thread_pool(g.get(), pool);
    std::vector<ThreadCounter> counters(static_cast<size_t>(devices));
    std::vector<std::vector<std::atomic<int>>> hits(static_cast<size_t>(devices));
    for (int64_t d = 0; d < devices; ++d) {
      hits[d] = std::vector<std::atomic<int>>(64);
      counters[d].hits = &hits[d];
    }
    RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
      EXPECT_EQ(xlac_rt_device_threads(dev), std::max<int64_t>(1, 4 / devices));
      xlac_rt_device_parallel_for(dev, 64, CountThreads, &counters[d]);
    });
    for (int64_t d = 0; d < devices; ++d) {
      for (auto& h : hits[d]) ASSERT_EQ(h.load(), 1);
      // Never more threads than the device's share (its own thread included).
      EXPECT_LE(static_cast<int64_t>(counters[d].ids.size()), std::max<int64_t>(1, 4 / devices)) << devices;
    }
    xlac_rt_group_set_threads_per_device(g.get(), 1);
    RunAll(g.get(), [&](XlacRtDevice* dev, int64_t) { EXPECT_EQ(xlac_rt_device_threads(dev), 1); });
    xlac_rt_group_set_thread_pool(g.get(), nullptr);
  }
  xlac_rt_thread_pool_destroy(pool);
}

// xlac_rt_device_parallel_split: one contiguous range per thread of the device (GEMMs pack panels per range), every
// index once; without a pool, inline.
void RecordRange(int64_t begin, int64_t end, void* ctx) {
  auto* ranges = static_cast<std::pair<std::mutex, std::vector<std::pair<int64_t, int64_t>>>*>(ctx);
  std::lock_guard<std::mutex> lock(ranges->first);
  ranges->second.emplace_back(begin, end);
}

TEST(CpuRuntime, DeviceParallelSplitRunsOneRangePerThread) {
  XlacRtThreadPool* pool = xlac_rt_thread_pool_create(4);
  for (int64_t devices : {1, 2, 4}) {
    GroupPtr g = MakeGroup(devices);
    xlac_rt_group_set_thread_pool(g.get(), pool);
    std::vector<std::pair<std::mutex, std::vector<std::pair<int64_t, int64_t>>>> ranges(static_cast<size_t>(devices));
    RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
      xlac_rt_device_parallel_split(dev, 64, RecordRange, &ranges[static_cast<size_t>(d)]);
    });
    for (auto& [mu, list] : ranges) {
      std::sort(list.begin(), list.end());
      // As many ranges as the device's threads (4 / devices), equal, covering [0, 64) in order.
      ASSERT_EQ(static_cast<int64_t>(list.size()), 4 / devices);
      int64_t next = 0;
      for (auto [begin, end] : list) {
        EXPECT_EQ(begin, next);
        EXPECT_EQ(end - begin, 64 / (4 / devices));
        next = end;
      }
      EXPECT_EQ(next, 64);
    }
    xlac_rt_group_set_thread_pool(g.get(), nullptr);
  }
  xlac_rt_thread_pool_destroy(pool);
  GroupPtr g = MakeGroup(1);
  std::pair<std::mutex, std::vector<std::pair<int64_t, int64_t>>> inline_ranges;
  RunAll(g.get(),
         [&](XlacRtDevice* dev, int64_t) { xlac_rt_device_parallel_split(dev, 10, RecordRange, &inline_ranges); });
  ASSERT_EQ(inline_ranges.second.size(), 1u);
  EXPECT_EQ(inline_ranges.second[0], (std::pair<int64_t, int64_t>{0, 10}));
}

TEST(CpuRuntime, DeviceParallelForWithoutAPoolRunsInline) {
  GroupPtr g = MakeGroup(1);
  std::vector<std::atomic<int>> hits(1000);
  ThreadCounter counter;
  counter.hits = &hits;
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t) {
    EXPECT_EQ(xlac_rt_device_threads(dev), 1);
    xlac_rt_device_parallel_for(dev, 1000, CountThreads, &counter);
  });
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
  EXPECT_EQ(counter.ids.size(), 1u);
}

TEST(CpuRuntime, SharedThreadPoolGrowsAndCpusAreCounted) {
  EXPECT_GE(xlac_rt_available_cpus(), 1);
  EXPECT_GT(xlac_rt_available_memory(), 0);  // /proc/meminfo on Linux
  XlacRtThreadPool* pool = xlac_rt_shared_thread_pool(2);
  EXPECT_EQ(xlac_rt_shared_thread_pool(1), pool);
  EXPECT_GE(xlac_rt_thread_pool_threads(pool), 2);
  EXPECT_GE(xlac_rt_thread_pool_threads(xlac_rt_shared_thread_pool(3)), 3);
  std::vector<std::atomic<int>> hits(100003);
  xlac_rt_parallel_for(pool, 100003, CountRange, &hits);
  for (auto& h : hits) ASSERT_EQ(h.load(), 1);
}

TEST(CpuRuntime, AlignedAlloc) {
  for (size_t alignment : {1, 8, 64, 4096}) {
    for (size_t bytes : {0, 1, 100, 1 << 20}) {
      void* p = xlac_rt_aligned_alloc(bytes, alignment);
      ASSERT_NE(p, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % std::max(alignment, sizeof(void*)), 0u);
      std::memset(p, 0xab, bytes);
      xlac_rt_free(p);
    }
  }
  EXPECT_EQ(xlac_rt_aligned_alloc(16, 48), nullptr);
  xlac_rt_free(nullptr);
}

TEST(CpuRuntime, ThreadScratchIsOneGrowingBufferPerThread) {
  auto* first = static_cast<unsigned char*>(xlac_rt_thread_scratch(1000));
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  std::memset(first, 0x5a, 1000);
  // Smaller or equal requests reuse the buffer; a larger one may move it but is wholly writable.
  EXPECT_EQ(xlac_rt_thread_scratch(10), first);
  EXPECT_EQ(xlac_rt_thread_scratch(1000), first);
  auto* grown = static_cast<unsigned char*>(xlac_rt_thread_scratch(4 << 20));
  ASSERT_NE(grown, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(grown) % 64, 0u);
  std::memset(grown, 0xa5, 4 << 20);
  EXPECT_EQ(xlac_rt_thread_scratch(0), grown);
  // Another thread gets its own buffer, which it may write while this thread's stays intact.
  void* other = nullptr;
  std::thread([&] {
    other = xlac_rt_thread_scratch(4 << 20);
    std::memset(other, 0x11, 4 << 20);
  }).join();
  EXPECT_NE(other, nullptr);
  EXPECT_NE(other, static_cast<void*>(grown));
  EXPECT_EQ(grown[0], 0xa5);
  EXPECT_EQ(grown[(4 << 20) - 1], 0xa5);
}

TEST(CpuRuntime, BadGroupArguments) {
  XlacRtStatus status;
  EXPECT_EQ(xlac_rt_group_create(0, 1, 100, &status), nullptr);
  EXPECT_EQ(status.code, XLAC_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(status.message, "cannot emulate 0 replicas x 1 partitions");
  GroupPtr g = MakeGroup(1);
  EXPECT_EQ(xlac_rt_group_run(g.get(), nullptr, nullptr, &status), XLAC_RT_ERROR_INVALID_ARGUMENT);
}

// Dense element strides of `dims` with `minor_to_major` as the layout.
std::vector<int64_t> DenseStrides(const std::vector<int64_t>& dims, const std::vector<int64_t>& minor_to_major) {
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (int64_t d : minor_to_major) {
    strides[static_cast<size_t>(d)] = stride;
    stride *= dims[static_cast<size_t>(d)];
  }
  return strides;
}

// xlac_rt_relayout against the definition, element by element: random ranks, sizes (edge tiles, size-1 dimensions)
// and layouts on both sides, every element width, byte patterns unique per element.
TEST(CpuRuntime, RelayoutMovesEveryElementToItsNewPlace) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const int64_t rank = 1 + static_cast<int64_t>(rng() % 5);
    const int64_t bytes = int64_t{1} << (rng() % 5);
    std::vector<int64_t> dims(static_cast<size_t>(rank));
    int64_t elements = 1;
    for (int64_t& d : dims) {
      d = 1 + static_cast<int64_t>(rng() % (rank <= 2 ? 70 : 13));
      elements *= d;
    }
    std::vector<int64_t> src_order(dims.size()), dst_order(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) src_order[i] = dst_order[i] = static_cast<int64_t>(i);
    std::shuffle(src_order.begin(), src_order.end(), rng);
    std::shuffle(dst_order.begin(), dst_order.end(), rng);
    std::vector<int64_t> src_strides = DenseStrides(dims, src_order), dst_strides = DenseStrides(dims, dst_order);
    std::vector<uint8_t> src(static_cast<size_t>(elements * bytes)), dst(src.size(), 0), expected(src.size(), 0);
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(rng());
    std::vector<int64_t> index(dims.size(), 0);
    for (int64_t n = 0; n < elements; ++n) {
      int64_t from = 0, to = 0;
      for (size_t d = 0; d < dims.size(); ++d) {
        from += index[d] * src_strides[d];
        to += index[d] * dst_strides[d];
      }
      std::memcpy(&expected[static_cast<size_t>(to * bytes)], &src[static_cast<size_t>(from * bytes)],
                  static_cast<size_t>(bytes));
      for (size_t d = dims.size(); d-- > 0;) {
        if (++index[d] < dims[d]) break;
        index[d] = 0;
      }
    }
    ASSERT_EQ(xlac_rt_relayout(nullptr, src.data(), dst.data(), bytes, rank, dims.data(), src_strides.data(),
                               dst_strides.data()),
              0);
    ASSERT_EQ(dst, expected) << "trial " << trial << " rank " << rank << " bytes " << bytes;
  }
  int64_t dims[] = {2}, strides[] = {1};
  uint8_t a[6] = {}, b[6] = {};
  EXPECT_EQ(xlac_rt_relayout(nullptr, a, b, 3, 1, dims, strides, strides), -1);
}

// A large transpose on a device with a pool: split across its threads, the same bytes as on one thread.
TEST(CpuRuntime, RelayoutRunsOnTheDeviceThreads) {
  XlacRtThreadPool* pool = xlac_rt_thread_pool_create(4);
  GroupPtr g = MakeGroup(1);
  xlac_rt_group_set_thread_pool(g.get(), pool);
  std::vector<int64_t> dims = {8, 96, 14, 14};
  std::vector<int64_t> src_strides = DenseStrides(dims, {3, 2, 1, 0}), dst_strides = DenseStrides(dims, {1, 3, 2, 0});
  const size_t elements = 8 * 96 * 14 * 14;
  std::vector<float> src(elements), parallel(elements), serial(elements);
  for (size_t i = 0; i < elements; ++i) src[i] = static_cast<float>(i);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t) {
    EXPECT_EQ(
        xlac_rt_relayout(dev, src.data(), parallel.data(), 4, 4, dims.data(), src_strides.data(), dst_strides.data()),
        0);
  });
  ASSERT_EQ(
      xlac_rt_relayout(nullptr, src.data(), serial.data(), 4, 4, dims.data(), src_strides.data(), dst_strides.data()),
      0);
  EXPECT_EQ(parallel, serial);
  // Element (n, c, h, w) lands at c + 96 * (w + 14 * (h + 14 * n)).
  EXPECT_EQ(serial[5 + 96 * (3 + 14 * (2 + 14 * 1))], src[((1 * 96 + 5) * 14 + 2) * 14 + 3]);
  xlac_rt_group_set_thread_pool(g.get(), nullptr);
  xlac_rt_thread_pool_destroy(pool);
}

}  // namespace
