// Devices multiplexed on fewer OS threads (xlac_rt_group_set_os_threads, runtime/cpu/scheduler.cc): a pod's worth of
// devices on two threads runs every collective with the same results as one thread per device (rank-order
// reductions bit for bit), on at most two threads; the runtime's contracts hold (a timeout names the device that
// never came, a peer that finished fails waiters at once, a failure cancels waiters promptly), and devices waiting
// for their turn on a thread are not mistaken for devices that never come.
#include <algorithm>
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
#include "runtime/cpu/xlac_runtime_p2p.h"

namespace {

using Clock = std::chrono::steady_clock;
using Millis = std::chrono::duration<double, std::milli>;
using Body = std::function<void(XlacRtDevice* dev, int64_t device)>;

struct GroupDeleter {
  void operator()(XlacRtGroup* g) const { xlac_rt_group_destroy(g); }
};
using GroupPtr = std::unique_ptr<XlacRtGroup, GroupDeleter>;

GroupPtr MakeGroup(int64_t devices, int64_t os_threads, int64_t timeout_ms = 10000) {
  XlacRtStatus status;
  XlacRtGroup* g = xlac_rt_group_create(1, devices, timeout_ms, &status);
  EXPECT_NE(g, nullptr) << status.message;
  xlac_rt_group_set_os_threads(g, os_threads);
  return GroupPtr(g);
}

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

bool BitEqual(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

TEST(CpuRuntimeMultiplexed, PodOnTwoThreadsRunsEveryCollective) {
  constexpr int64_t kDevices = 256, kCount = 301, kTrips = 3;
  std::vector<int64_t> all(kDevices);
  for (int64_t d = 0; d < kDevices; ++d) all[d] = d;
  // Rank-order sum over every device, as one thread per device computes it.
  std::vector<float> sum = Data(0, kCount);
  for (int64_t d = 1; d < kDevices; ++d) {
    std::vector<float> in = Data(d, kCount);
    for (int64_t i = 0; i < kCount; ++i) sum[i] += in[i];
  }
  std::vector<int64_t> pairs;
  for (int64_t d = 0; d < kDevices; ++d) pairs.insert(pairs.end(), {d, (d + 1) % kDevices});
  GroupPtr g = MakeGroup(kDevices, 2);
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::vector<int> failures(kDevices, 0);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
    {
      std::lock_guard<std::mutex> lock(mu);
      threads.insert(std::this_thread::get_id());
    }
    std::vector<float> src = Data(d, kCount), reduced(kCount), gathered(kDevices), scattered(1), shifted(kCount);
    for (int64_t trip = 0; trip < kTrips; ++trip) {  // collectives in a loop meet by generation
      failures[d] += xlac_rt_all_reduce(dev, 1, "all-reduce", all.data(), 1, kDevices, src.data(), reduced.data(),
                                        kCount, sizeof(float), AddF32, nullptr) != XLAC_RT_OK;
      failures[d] += !BitEqual(reduced, sum);
      float mine = static_cast<float>(d * 10 + trip);
      failures[d] += xlac_rt_all_gather(dev, 2, "all-gather", all.data(), 1, kDevices, &mine, gathered.data(),
                                        sizeof(float)) != XLAC_RT_OK;
      for (int64_t k = 0; k < kDevices; ++k) failures[d] += gathered[k] != static_cast<float>(k * 10 + trip);
      std::vector<float> ones(kDevices, 1.0f);
      failures[d] += xlac_rt_reduce_scatter(dev, 3, "reduce-scatter", all.data(), 1, kDevices, ones.data(),
                                            scattered.data(), 1, sizeof(float), AddF32, nullptr) != XLAC_RT_OK;
      failures[d] += scattered[0] != static_cast<float>(kDevices);
      failures[d] += xlac_rt_collective_permute(dev, 4, "permute", pairs.data(), kDevices, src.data(), shifted.data(),
                                                kCount * sizeof(float)) != XLAC_RT_OK;
      failures[d] += !BitEqual(shifted, Data((d + kDevices - 1) % kDevices, kCount));
      failures[d] += xlac_rt_barrier(dev, 5, "barrier", all.data(), 1, kDevices) != XLAC_RT_OK;
    }
  });
  for (int64_t d = 0; d < kDevices; ++d) EXPECT_EQ(failures[d], 0) << "device " << d;
  EXPECT_LE(threads.size(), 2u);                             // 256 devices, two OS threads
  EXPECT_EQ(threads.count(std::this_thread::get_id()), 1u);  // the caller is one of them
}

TEST(CpuRuntimeMultiplexed, LargeAllReduceInPlaceIsRankOrdered) {
  // Arrays of 256 KiB and more take the direct path (each rank's share written into every destination); in place
  // (dst == src), destinations overlap sources. Threads and fibers, an uneven share split.
  constexpr int64_t kDevices = 6, kCount = (int64_t{300} << 10) / 4 + 3;
  std::vector<float> sum = Data(0, kCount);
  for (int64_t d = 1; d < kDevices; ++d) {
    std::vector<float> in = Data(d, kCount);
    for (int64_t i = 0; i < kCount; ++i) sum[i] += in[i];
  }
  std::vector<int64_t> all = {0, 1, 2, 3, 4, 5};
  for (int64_t os_threads : {0, 2}) {
    for (bool in_place : {false, true}) {
      GroupPtr g = MakeGroup(kDevices, os_threads);
      std::vector<std::vector<float>> out(kDevices);
      RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
        std::vector<float> src = Data(d, kCount);
        out[d].assign(kCount, -1.0f);
        float* from = src.data();
        if (in_place) {
          out[d] = src;
          from = out[d].data();
        }
        EXPECT_EQ(xlac_rt_all_reduce(dev, 1, "all-reduce", all.data(), 1, kDevices, from, out[d].data(), kCount,
                                     sizeof(float), AddF32, nullptr),
                  XLAC_RT_OK);
      });
      for (int64_t d = 0; d < kDevices; ++d) {
        EXPECT_TRUE(BitEqual(out[d], sum))
            << "device " << d << " os_threads " << os_threads << " in place " << in_place;
      }
    }
  }
}

TEST(CpuRuntimeMultiplexed, SendAndRecvBetweenDevicesOfOneThread) {
  GroupPtr g = MakeGroup(8, 1);
  std::vector<int> got(8, -1);
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t d) {
    // Device 0 runs first and waits for device 7, which only runs once device 0 yields the thread.
    if (d == 0) EXPECT_EQ(xlac_rt_p2p_recv(dev, 9, &got[0], sizeof(int), "recv"), XLAC_RT_OK);
    if (d == 7) {
      int value = 77;
      EXPECT_EQ(xlac_rt_p2p_send(dev, 9, &value, sizeof(int), "send"), XLAC_RT_OK);
    }
  });
  EXPECT_EQ(got[0], 77);
}

TEST(CpuRuntimeMultiplexed, TurnsOnAThreadAreNotTimeouts) {
  // Each device works 40 ms before a barrier; four devices per thread take 160 ms, more than the 100 ms timeout,
  // while the group keeps making progress.
  GroupPtr g = MakeGroup(8, 2, 100);
  std::vector<int64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  RunAll(g.get(), [&](XlacRtDevice* dev, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    EXPECT_EQ(xlac_rt_barrier(dev, 1, "barrier", all.data(), 1, 8), XLAC_RT_OK);
  });
}

TEST(CpuRuntimeMultiplexed, MissingDeviceTimesOutNamingIt) {
  GroupPtr g = MakeGroup(4, 2, 200);
  std::vector<int64_t> all = {0, 1, 2, 3};
  XlacRtStatus status;
  auto start = Clock::now();
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        float v = 1, out;
        if (d == 1) {
          std::this_thread::sleep_for(std::chrono::milliseconds(600));  // busy past the others' timeout
          return;
        }
        xlac_rt_all_reduce(dev, 7, "all-reduce.3", all.data(), 1, 4, &v, &out, 1, sizeof(float), AddF32, nullptr);
      },
      &status);
  EXPECT_EQ(code, XLAC_RT_ERROR_DEADLINE_EXCEEDED);
  std::string message = status.message;
  EXPECT_NE(message.find("all-reduce.3 (op 7): waited 200 ms but devices 1, 3 never arrived (device 1 is still "
                         "running; device 3 is still running)"),
            std::string::npos)
      << message;
  EXPECT_LT(Millis(Clock::now() - start).count(), 3000);
}

TEST(CpuRuntimeMultiplexed, PeerThatFinishedFailsWaitersAtOnce) {
  GroupPtr g = MakeGroup(8, 2, 10000);
  std::vector<int64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  XlacRtStatus status;
  auto start = Clock::now();
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        if (d == 5) return;
        xlac_rt_barrier(dev, 3, "barrier.3", all.data(), 1, 8);
      },
      &status);
  EXPECT_EQ(code, XLAC_RT_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_NE(std::string(status.message).find("barrier.3 (op 3): device 5 finished without reaching it"),
            std::string::npos)
      << status.message;
  EXPECT_LT(Millis(Clock::now() - start).count(), 5000);
}

TEST(CpuRuntimeMultiplexed, FailingDeviceReleasesWaitersPromptly) {
  GroupPtr g = MakeGroup(16, 2, 10000);
  std::vector<int64_t> all(16);
  for (int64_t d = 0; d < 16; ++d) all[d] = d;
  std::vector<int> codes(16, -1);
  XlacRtStatus status;
  auto start = Clock::now();
  int code = RunAll(
      g.get(),
      [&](XlacRtDevice* dev, int64_t d) {
        float v = 1, out;
        if (d == 9) {
          xlac_rt_set_error(dev, "boom");
          return;
        }
        codes[d] = xlac_rt_all_reduce(dev, 1, "ar", all.data(), 1, 16, &v, &out, 1, sizeof(float), AddF32, nullptr);
      },
      &status);
  EXPECT_EQ(code, XLAC_RT_ERROR_EXECUTION);
  EXPECT_EQ(status.device, 9);
  EXPECT_STREQ(status.message, "device 9: boom");
  EXPECT_LT(Millis(Clock::now() - start).count(), 2000);
  for (int64_t d = 0; d < 16; ++d) {
    if (d != 9) EXPECT_EQ(codes[d], XLAC_RT_ERROR_CANCELLED) << d;
  }
}

TEST(CpuRuntimeMultiplexed, GroupIsReusableAndFewDevicesKeepTheirThreads) {
  GroupPtr g = MakeGroup(4, 8);  // fewer devices than threads: one thread per device, as without the setting
  std::vector<int64_t> all = {0, 1, 2, 3};
  for (int run = 0; run < 3; ++run) {
    std::mutex mu;
    std::set<std::thread::id> threads;
    RunAll(g.get(), [&](XlacRtDevice* dev, int64_t) {
      {
        std::lock_guard<std::mutex> lock(mu);
        threads.insert(std::this_thread::get_id());
      }
      EXPECT_EQ(xlac_rt_barrier(dev, 1, "barrier", all.data(), 1, 4), XLAC_RT_OK);
    });
    EXPECT_EQ(threads.size(), 4u);
  }
  xlac_rt_group_set_os_threads(g.get(), 1);
  for (int run = 0; run < 3; ++run) {
    std::set<std::thread::id> threads;
    RunAll(g.get(), [&](XlacRtDevice* dev, int64_t) {
      threads.insert(std::this_thread::get_id());  // one thread: no lock needed
      EXPECT_EQ(xlac_rt_barrier(dev, 1, "barrier", all.data(), 1, 4), XLAC_RT_OK);
    });
    EXPECT_EQ(threads.size(), 1u);
  }
}

}  // namespace
