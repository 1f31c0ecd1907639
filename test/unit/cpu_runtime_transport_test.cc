// The runtime's cross-process path (XlacRtTransport) without MPI: several device groups in one process stand in for
// the processes of a run, each running only its share of the devices, joined by an in-memory transport. Every
// collective, over several group layouts, must give each device bit-identically what one group running every device
// gives it; an exchange that fails fails its leader and cancels the other local participants; only local devices
// run; point-to-point across processes is refused.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/cpu/xlac_runtime.h"
#include "runtime/cpu/xlac_runtime_p2p.h"

namespace {

using Body = std::function<void(XlacRtDevice* dev, int64_t device)>;

// All "processes" meet here: a mailbox per (collective execution, step, sender, receiver). Each exchange posts its
// messages and waits for the ones addressed to it.
class FakeWorld {
 public:
  // With `p2p`, the transports also carry send/recv (every other process gets a copy of each message, as over MPI).
  explicit FakeWorld(int64_t processes, bool p2p = false) : transports_(static_cast<size_t>(processes)) {
    for (int64_t p = 0; p < processes; ++p) {
      transports_[p] = XlacRtTransport{p, processes, this, &FakeWorld::Exchange, &FakeWorld::Fail};
      if (p2p) {
        transports_[p].p2p_post = &FakeWorld::Post;
        transports_[p].p2p_take = &FakeWorld::Take;
      }
    }
  }
  const XlacRtTransport* transport(int64_t p) const { return &transports_[static_cast<size_t>(p)]; }
  // A process whose leader gives up at once (to test failure propagation).
  bool broken = false;
  int64_t exchanges = 0;
  int64_t bytes_sent = 0;
  std::vector<std::string> failures;  // what XlacRtTransport::fail announced

 private:
  // (op_id, first device, generation, step, from, to)
  using Key = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t, int64_t>;

  static void Fail(void* user, const char* message) {
    auto* world = static_cast<FakeWorld*>(user);
    std::lock_guard<std::mutex> lock(world->mu_);
    world->failures.push_back("process " + std::to_string(world->CurrentProcess()) + " failed (" + message + ")");
    world->cv_.notify_all();
  }

  static int Exchange(void* user, const XlacRtExchange* x, char* message, size_t capacity) {
    auto* world = static_cast<FakeWorld*>(user);
    // The exchange does not say which process calls (a real transport knows its own rank); the entry trampoline
    // records it per device thread.
    const int64_t me = world->CurrentProcess();
    std::set<int64_t> peers;
    for (int64_t i = 0; i < x->num_devices; ++i) peers.insert(x->devices[i] / x->devices_per_process);
    peers.erase(me);
    auto key = [&](int64_t from, int64_t to) { return Key{x->op_id, x->devices[0], x->generation, x->step, from, to}; };
    std::unique_lock<std::mutex> lock(world->mu_);
    if (world->broken) {
      std::snprintf(message, capacity, "the fake transport is broken");
      return XLAC_RT_ERROR_EXECUTION;
    }
    ++world->exchanges;
    for (int64_t p : peers) {
      const auto* data = static_cast<const unsigned char*>(x->send[p]);
      world->mailbox_[key(me, p)].assign(data, data + x->send_bytes[p]);
      world->bytes_sent += x->send_bytes[p];
    }
    world->cv_.notify_all();
    auto all_here = [&] {
      for (int64_t p : peers) {
        if (!world->mailbox_.count(key(p, me))) return false;
      }
      return true;
    };
    if (!world->cv_.wait_for(lock, std::chrono::milliseconds(x->timeout_ms),
                             [&] { return all_here() || !world->failures.empty(); })) {
      std::string missing;
      for (int64_t p : peers) {
        if (!world->mailbox_.count(key(p, me))) missing += (missing.empty() ? "" : ", ") + std::to_string(p);
      }
      std::snprintf(message, capacity, "process %s never arrived", missing.c_str());
      return XLAC_RT_ERROR_DEADLINE_EXCEEDED;
    }
    if (!all_here()) {
      std::snprintf(message, capacity, "cancelled because %s", world->failures[0].c_str());
      return XLAC_RT_ERROR_CANCELLED;
    }
    for (int64_t p : peers) {
      auto it = world->mailbox_.find(key(p, me));
      if (static_cast<int64_t>(it->second.size()) != x->recv_bytes[p]) {
        std::snprintf(message, capacity, "process %lld sent %zu bytes, expected %lld", static_cast<long long>(p),
                      it->second.size(), static_cast<long long>(x->recv_bytes[p]));
        return XLAC_RT_ERROR_COLLECTIVE_MISMATCH;
      }
      if (!it->second.empty()) std::memcpy(x->recv[p], it->second.data(), it->second.size());
      world->mailbox_.erase(it);
    }
    return XLAC_RT_OK;
  }

  // (receiving process, run, channel, seq)
  using P2pKey = std::tuple<int64_t, int64_t, int64_t, int64_t>;

  static int Post(void* user, int64_t run, int64_t channel, int64_t seq, int64_t /*device*/, const void* data,
                  int64_t bytes, char* /*message*/, size_t /*capacity*/) {
    auto* world = static_cast<FakeWorld*>(user);
    const int64_t me = world->CurrentProcess();
    std::lock_guard<std::mutex> lock(world->mu_);
    const auto* begin = static_cast<const unsigned char*>(data);
    for (int64_t p = 0; p < static_cast<int64_t>(world->transports_.size()); ++p) {
      if (p == me) continue;
      world->p2p_[P2pKey{p, run, channel, seq}].assign(begin, begin + bytes);
      world->bytes_sent += bytes;
    }
    return XLAC_RT_OK;
  }

  static int Take(void* user, int64_t run, int64_t channel, int64_t seq, void* data, int64_t bytes, int* found,
                  char* message, size_t capacity) {
    auto* world = static_cast<FakeWorld*>(user);
    const int64_t me = world->CurrentProcess();
    std::lock_guard<std::mutex> lock(world->mu_);
    *found = 0;
    if (channel < 0) return XLAC_RT_OK;
    auto it = world->p2p_.find(P2pKey{me, run, channel, seq});
    if (it == world->p2p_.end()) return XLAC_RT_OK;
    if (static_cast<int64_t>(it->second.size()) != bytes) {
      std::snprintf(message, capacity, "received %zu bytes but expected %lld", it->second.size(),
                    static_cast<long long>(bytes));
      return XLAC_RT_ERROR_COLLECTIVE_MISMATCH;
    }
    if (bytes > 0) std::memcpy(data, it->second.data(), static_cast<size_t>(bytes));
    world->p2p_.erase(it);
    *found = 1;
    return XLAC_RT_OK;
  }

  // Which process the calling device thread belongs to: recorded per thread by the test's entry trampoline.
  int64_t CurrentProcess();

  std::vector<XlacRtTransport> transports_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<Key, std::vector<unsigned char>> mailbox_;
  std::map<P2pKey, std::vector<unsigned char>> p2p_;
};

thread_local int64_t current_process = -1;
int64_t FakeWorld::CurrentProcess() { return current_process; }

struct Run {
  const Body* body;
  int64_t process;
};

void Trampoline(void* const* buffers, XlacRtDevice* dev) {
  const Run* run = static_cast<const Run*>(buffers[0]);
  current_process = run->process;
  (*run->body)(dev, xlac_rt_device_id(dev));
}

// Runs `body` on `devices` devices split over `processes` groups (one without a transport when processes == 1).
// Returns each process's run status.
std::vector<XlacRtStatus> RunSplit(int64_t devices, int64_t processes, const Body& body, FakeWorld* world = nullptr,
                                   int64_t timeout_ms = 10000) {
  FakeWorld local_world(processes);
  if (world == nullptr) world = &local_world;
  std::vector<XlacRtStatus> statuses(static_cast<size_t>(processes));
  std::vector<std::thread> threads;
  for (int64_t p = 0; p < processes; ++p) {
    threads.emplace_back([&, p] {
      XlacRtStatus& status = statuses[static_cast<size_t>(p)];
      XlacRtGroup* group = xlac_rt_group_create(devices, 1, timeout_ms, &status);
      ASSERT_NE(group, nullptr);
      if (processes > 1) ASSERT_EQ(xlac_rt_group_set_transport(group, world->transport(p), &status), XLAC_RT_OK);
      // Leaders fold their all-reduce slice on the device's loop threads.
      xlac_rt_group_set_thread_pool(group, xlac_rt_shared_thread_pool(4));
      xlac_rt_group_set_threads_per_device(group, 3);
      Run run{&body, p};
      void* table[1] = {&run};
      std::vector<void* const*> per_device(static_cast<size_t>(devices), nullptr);
      int64_t begin = 0, end = 0;
      xlac_rt_group_local_devices(group, &begin, &end);
      for (int64_t d = begin; d < end; ++d) per_device[static_cast<size_t>(d)] = table;
      xlac_rt_group_run(group, Trampoline, per_device.data(), &status);
      xlac_rt_group_destroy(group);
    });
  }
  for (std::thread& t : threads) t.join();
  return statuses;
}

void AddF32(void* acc, const void* in, int64_t count, void*) {
  float* a = static_cast<float*>(acc);
  const float* b = static_cast<const float*>(in);
  for (int64_t i = 0; i < count; ++i) a[i] += b[i];
}

// Values of very different magnitudes, so that the summation order shows in the rounding.
std::vector<float> Data(int64_t device, int64_t count, int64_t salt) {
  std::mt19937 rng(static_cast<uint32_t>(1234 + device + 100 * salt));
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-8, 8);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = std::ldexp(mantissa(rng), exponent(rng) * 3);
  return v;
}

constexpr int64_t kDevices = 8;
constexpr int64_t kCount = 12;  // elements per device chunk

// Every collective, twice (generations), over `groups` (flat, group_size); each device records all it received.
std::vector<std::vector<float>> RunAllCollectives(int64_t processes, const std::vector<int64_t>& groups,
                                                  int64_t group_size) {
  std::vector<std::vector<float>> got(kDevices);
  std::mutex mu;
  const int64_t num_groups = static_cast<int64_t>(groups.size()) / group_size;
  std::vector<int64_t> ring;  // collective-permute: d -> d+3 mod n, device 5 sends nowhere and 0 receives nothing
  for (int64_t d = 0; d < kDevices; ++d) {
    if (d != 5) ring.insert(ring.end(), {d, (d + 3) % kDevices});
  }
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    std::vector<float> out;
    for (int64_t iter = 0; iter < 2; ++iter) {
      std::vector<float> src = Data(d, kCount * group_size, iter);
      std::vector<float> dst(static_cast<size_t>(kCount * group_size));
      ASSERT_EQ(xlac_rt_all_reduce(dev, 1, "ar", groups.data(), num_groups, group_size, src.data(), dst.data(), kCount,
                                   4, AddF32, nullptr),
                0);
      out.insert(out.end(), dst.begin(), dst.begin() + kCount);
      // In place: dst is src.
      std::vector<float> inplace = src;
      ASSERT_EQ(xlac_rt_all_reduce(dev, 2, "ar2", groups.data(), num_groups, group_size, inplace.data(), inplace.data(),
                                   kCount, 4, AddF32, nullptr),
                0);
      out.insert(out.end(), inplace.begin(), inplace.begin() + kCount);
      ASSERT_EQ(
          xlac_rt_all_gather(dev, 3, "ag", groups.data(), num_groups, group_size, src.data(), dst.data(), kCount * 4),
          0);
      out.insert(out.end(), dst.begin(), dst.end());
      std::vector<float> rs(kCount);
      ASSERT_EQ(xlac_rt_reduce_scatter(dev, 4, "rs", groups.data(), num_groups, group_size, src.data(), rs.data(),
                                       kCount, 4, AddF32, nullptr),
                0);
      out.insert(out.end(), rs.begin(), rs.end());
      ASSERT_EQ(
          xlac_rt_all_to_all(dev, 5, "a2a", groups.data(), num_groups, group_size, src.data(), dst.data(), kCount * 4),
          0);
      out.insert(out.end(), dst.begin(), dst.end());
      std::vector<float> perm(kCount, -1.0f);
      ASSERT_EQ(xlac_rt_collective_permute(dev, 6, "cp", ring.data(), static_cast<int64_t>(ring.size()) / 2, src.data(),
                                           perm.data(), kCount * 4),
                0);
      out.insert(out.end(), perm.begin(), perm.end());
      std::vector<float> bc(kCount);
      ASSERT_EQ(xlac_rt_collective_broadcast(dev, 7, "bc", groups.data(), num_groups, group_size, src.data(), bc.data(),
                                             kCount * 4),
                0);
      out.insert(out.end(), bc.begin(), bc.end());
      ASSERT_EQ(xlac_rt_barrier(dev, 8, "barrier", groups.data(), num_groups, group_size), 0);
    }
    std::lock_guard<std::mutex> lock(mu);
    got[static_cast<size_t>(d)] = std::move(out);
  };
  for (const XlacRtStatus& s : RunSplit(kDevices, processes, body)) EXPECT_EQ(s.code, XLAC_RT_OK) << s.message;
  return got;
}

bool SameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

struct Layout {
  const char* name;
  std::vector<int64_t> groups;
  int64_t group_size;
};

TEST(CpuRuntimeTransport, EveryCollectiveIsBitIdenticalToOneProcess) {
  std::vector<Layout> layouts = {
      {"all", {0, 1, 2, 3, 4, 5, 6, 7}, 8},         {"reversed", {7, 6, 5, 4, 3, 2, 1, 0}, 8},
      {"pairs", {0, 1, 2, 3, 4, 5, 6, 7}, 2},        // within a process for 2 processes, across for 8
      {"strided", {0, 4, 1, 5, 2, 6, 3, 7}, 2},      // always across
      {"interleaved", {0, 5, 2, 7, 1, 4, 3, 6}, 4},  // mixed orders
  };
  for (const Layout& layout : layouts) {
    std::vector<std::vector<float>> want = RunAllCollectives(1, layout.groups, layout.group_size);
    for (int64_t processes : {2, 4, 8}) {
      std::vector<std::vector<float>> got = RunAllCollectives(processes, layout.groups, layout.group_size);
      for (int64_t d = 0; d < kDevices; ++d) {
        EXPECT_FALSE(want[d].empty());
        EXPECT_TRUE(SameBits(got[d], want[d]))
            << layout.name << " over " << processes << " processes: device " << d << " differs";
      }
    }
  }
}

TEST(CpuRuntimeTransport, OnlyLocalDevicesRunAndLocalGroupsStayInMemory) {
  FakeWorld world(2);
  std::mutex mu;
  std::vector<std::pair<int64_t, int64_t>> ran;  // (process, device)
  std::vector<int64_t> pairs = {0, 1, 2, 3, 4, 5, 6, 7};
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    {
      std::lock_guard<std::mutex> lock(mu);
      ran.emplace_back(current_process, d);
    }
    float src = static_cast<float>(d), dst = 0;
    ASSERT_EQ(xlac_rt_all_reduce(dev, 1, "ar", pairs.data(), 4, 2, &src, &dst, 1, 4, AddF32, nullptr), 0);
    EXPECT_EQ(dst, static_cast<float>((d & ~1) * 2 + 1));
  };
  for (const XlacRtStatus& s : RunSplit(kDevices, 2, body, &world)) EXPECT_EQ(s.code, XLAC_RT_OK) << s.message;
  std::sort(ran.begin(), ran.end());
  std::vector<std::pair<int64_t, int64_t>> want;
  for (int64_t d = 0; d < kDevices; ++d) want.emplace_back(d / 4, d);
  EXPECT_EQ(ran, want);
  EXPECT_EQ(world.exchanges, 0);  // every pair lies within one process
}

// Each process sends only what the others need: for an all-reduce, its participants' share of the elements another
// process folds, then its folded share; for a reduce-scatter, the chunks of the other process's ranks.
TEST(CpuRuntimeTransport, ProcessesSendOnlyWhatOthersNeed) {
  FakeWorld world(2);
  std::vector<int64_t> all = {0, 1, 2, 3, 4, 5, 6, 7};
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    std::vector<float> src(24, static_cast<float>(d)), dst(24);
    ASSERT_EQ(xlac_rt_all_reduce(dev, 1, "ar", all.data(), 1, 8, src.data(), dst.data(), 12, 4, AddF32, nullptr), 0);
    EXPECT_EQ(dst[11], 28.0f);
  };
  for (const XlacRtStatus& s : RunSplit(kDevices, 2, body, &world)) EXPECT_EQ(s.code, XLAC_RT_OK) << s.message;
  // Per process: 4 participants x 6 elements x 4 bytes, then 6 folded elements.
  EXPECT_EQ(world.bytes_sent, 2 * (4 * 6 * 4 + 6 * 4));

  FakeWorld world2(2);
  Body scatter = [&](XlacRtDevice* dev, int64_t d) {
    std::vector<float> src(24, static_cast<float>(d)), dst(3);
    ASSERT_EQ(xlac_rt_reduce_scatter(dev, 2, "rs", all.data(), 1, 8, src.data(), dst.data(), 3, 4, AddF32, nullptr), 0);
    EXPECT_EQ(dst[0], 28.0f);
  };
  for (const XlacRtStatus& s : RunSplit(kDevices, 2, scatter, &world2)) EXPECT_EQ(s.code, XLAC_RT_OK) << s.message;
  // Per process: 4 participants x the 4 other process's chunks of 3 elements.
  EXPECT_EQ(world2.bytes_sent, 2 * (4 * 4 * 3 * 4));
}

TEST(CpuRuntimeTransport, FailedExchangeFailsTheLeaderAndCancelsLocalPeers) {
  FakeWorld world(2);
  world.broken = true;
  std::vector<int64_t> all = {0, 1, 2, 3};
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    float src = 1, dst = 0;
    EXPECT_NE(xlac_rt_all_reduce(dev, 9, "sum", all.data(), 1, 4, &src, &dst, 1, 4, AddF32, nullptr), 0);
  };
  std::vector<XlacRtStatus> statuses = RunSplit(4, 2, body, &world);
  for (int64_t p = 0; p < 2; ++p) {
    // The leader (lowest local device) reports the transport's message; its local peer was only cancelled.
    EXPECT_EQ(statuses[p].code, XLAC_RT_ERROR_EXECUTION);
    EXPECT_EQ(statuses[p].device, 2 * p);
    EXPECT_STREQ(statuses[p].message,
                 ("device " + std::to_string(2 * p) + ": sum (op 9): the fake transport is broken").c_str());
  }
}

TEST(CpuRuntimeTransport, AMissingProcessTimesOutWithItsName) {
  FakeWorld world(2);
  std::vector<int64_t> all = {0, 1, 2, 3};
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    if (d >= 2) return;  // process 1 never reaches the collective
    float src = 1, dst = 0;
    EXPECT_NE(xlac_rt_all_reduce(dev, 3, "sum", all.data(), 1, 4, &src, &dst, 1, 4, AddF32, nullptr), 0);
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<XlacRtStatus> statuses = RunSplit(4, 2, body, &world, /*timeout_ms=*/200);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(statuses[0].code, XLAC_RT_ERROR_DEADLINE_EXCEEDED);
  EXPECT_STREQ(statuses[0].message, "device 0: sum (op 3): process 1 never arrived");
  EXPECT_EQ(statuses[1].code, XLAC_RT_OK);
}

TEST(CpuRuntimeTransport, AFailureIsAnnouncedOnceAndEndsPeersAtOnce) {
  FakeWorld world(2);
  std::vector<int64_t> all = {0, 1, 2, 3};
  Body body = [&](XlacRtDevice* dev, int64_t d) {
    if (d == 2) {
      xlac_rt_set_error(dev, "boom");
      return;
    }
    float src = 1, dst = 0;
    EXPECT_NE(xlac_rt_all_reduce(dev, 4, "sum", all.data(), 1, 4, &src, &dst, 1, 4, AddF32, nullptr), 0);
  };
  auto start = std::chrono::steady_clock::now();
  std::vector<XlacRtStatus> statuses = RunSplit(4, 2, body, &world, /*timeout_ms=*/20000);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // Device 3's cancellation is a consequence: not announced.
  EXPECT_EQ(world.failures, std::vector<std::string>{"process 1 failed (device 2: boom)"});
  EXPECT_EQ(statuses[1].code, XLAC_RT_ERROR_EXECUTION);
  EXPECT_STREQ(statuses[1].message, "device 2: boom");
  EXPECT_EQ(statuses[0].code, XLAC_RT_ERROR_CANCELLED);
  EXPECT_STREQ(statuses[0].message, "device 0: sum (op 4): cancelled because process 1 failed (device 2: boom)");
}

TEST(CpuRuntimeTransport, RejectsUnevenSplitsAndPointToPoint) {
  FakeWorld world(4);
  XlacRtStatus status;
  XlacRtGroup* group = xlac_rt_group_create(6, 1, 1000, &status);
  ASSERT_NE(group, nullptr);
  EXPECT_EQ(xlac_rt_group_set_transport(group, world.transport(1), &status), XLAC_RT_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(status.message, "cannot split 6 devices evenly over 4 processes (process 1)");
  int64_t begin = -1, end = -1;
  xlac_rt_group_local_devices(group, &begin, &end);
  EXPECT_EQ(begin, 0);
  EXPECT_EQ(end, 6);
  xlac_rt_group_destroy(group);

  Body body = [&](XlacRtDevice* dev, int64_t d) {
    float x = 0;
    if (d == 0) EXPECT_EQ(xlac_rt_p2p_send(dev, 1, &x, 4, "s"), XLAC_RT_ERROR_UNIMPLEMENTED);
  };
  std::vector<XlacRtStatus> statuses = RunSplit(4, 2, body);
  EXPECT_EQ(statuses[0].code, XLAC_RT_ERROR_UNIMPLEMENTED);
  EXPECT_STREQ(statuses[0].message,
               "device 0: s (channel 1): send/recv across processes is not supported by this transport");
}

// Send/recv across processes: device d sends two messages on channel d + 1 and receives its left neighbour's two,
// whether the neighbour runs in the same process or another; a wrong size is a mismatch.
TEST(CpuRuntimeTransport, SendRecvAcrossProcesses) {
  for (int64_t processes : {1, 2, 4, 8}) {
    FakeWorld world(processes, /*p2p=*/true);
    std::vector<std::vector<float>> got(kDevices, std::vector<float>(2 * kCount));
    Body body = [&](XlacRtDevice* dev, int64_t d) {
      std::vector<float> a = Data(d, kCount, 1), b = Data(d, kCount, 2);
      EXPECT_EQ(xlac_rt_p2p_send(dev, d + 1, a.data(), kCount * 4, "s"), XLAC_RT_OK);
      EXPECT_EQ(xlac_rt_p2p_send(dev, d + 1, b.data(), kCount * 4, "s"), XLAC_RT_OK);
      const int64_t from = (d + kDevices - 1) % kDevices;
      float* out = got[static_cast<size_t>(d)].data();
      EXPECT_EQ(xlac_rt_p2p_recv(dev, from + 1, out, kCount * 4, "r"), XLAC_RT_OK);
      EXPECT_EQ(xlac_rt_p2p_recv(dev, from + 1, out + kCount, kCount * 4, "r"), XLAC_RT_OK);
    };
    for (const XlacRtStatus& s : RunSplit(kDevices, processes, body, &world))
      EXPECT_EQ(s.code, XLAC_RT_OK) << s.message;
    for (int64_t d = 0; d < kDevices; ++d) {
      const int64_t from = (d + kDevices - 1) % kDevices;
      std::vector<float> want = Data(from, kCount, 1), second = Data(from, kCount, 2);
      want.insert(want.end(), second.begin(), second.end());
      EXPECT_EQ(got[static_cast<size_t>(d)], want) << processes << " processes, device " << d;
    }
    // Each message goes to every other process.
    EXPECT_EQ(world.bytes_sent, 2 * kDevices * kCount * 4 * (processes - 1));
  }

  FakeWorld world(2, /*p2p=*/true);
  Body mismatch = [&](XlacRtDevice* dev, int64_t d) {
    float x[2] = {1, 2};
    if (d == 0) xlac_rt_p2p_send(dev, 1, x, 4, "s");
    if (d == 3) xlac_rt_p2p_recv(dev, 1, x, 8, "r");
  };
  std::vector<XlacRtStatus> statuses = RunSplit(4, 2, mismatch, &world, /*timeout_ms=*/5000);
  EXPECT_EQ(statuses[1].code, XLAC_RT_ERROR_COLLECTIVE_MISMATCH);
  EXPECT_STREQ(statuses[1].message, "device 3: r (channel 1): received 4 bytes but expected 8");
}

}  // namespace
