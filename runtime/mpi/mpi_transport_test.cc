// xlac_runtime_mpi under `mpirun -np 2` (ctest runs it so; see runtime/CMakeLists.txt): device groups whose 4
// devices are split over the 2 processes exchange through MPI; a process that never arrives fails the exchange at
// the collective timeout naming it; processes that call a collective differently fail with a mismatch on both
// sides; fingerprints and the gather to process 0; a process whose device fails ends its peers' exchanges at once.
// Every test that fails a run recovers (xlac_rt_mpi_recover), so the next one starts afresh.
#include <chrono>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/mpi/xlac_runtime_mpi.h"

namespace {

using Body = std::function<void(XlacRtDevice* dev, int64_t device)>;

void Trampoline(void* const* buffers, XlacRtDevice* dev) {
  (*static_cast<const Body*>(buffers[0]))(dev, xlac_rt_device_id(dev));
}

// Runs `body` on this process's share of `devices` devices; returns the run's status.
XlacRtStatus RunHere(int64_t devices, int64_t timeout_ms, const Body& body) {
  XlacRtStatus status;
  XlacRtGroup* group = xlac_rt_group_create(devices, 1, timeout_ms, &status);
  EXPECT_NE(group, nullptr);
  EXPECT_EQ(xlac_rt_group_set_transport(group, xlac_rt_mpi_transport(), &status), XLAC_RT_OK) << status.message;
  void* table[1] = {const_cast<Body*>(&body)};
  std::vector<void* const*> per_device(static_cast<size_t>(devices), table);
  xlac_rt_group_run(group, Trampoline, per_device.data(), &status);
  xlac_rt_group_destroy(group);
  return status;
}

void AddI64(void* acc, const void* in, int64_t count, void*) {
  for (int64_t i = 0; i < count; ++i) static_cast<int64_t*>(acc)[i] += static_cast<const int64_t*>(in)[i];
}

TEST(MpiTransport, TwoProcesses) { ASSERT_EQ(xlac_rt_mpi_process_count(), 2) << "run under mpirun -np 2"; }

TEST(MpiTransport, CollectivesAcrossProcesses) {
  const int64_t me = xlac_rt_mpi_process_index();
  std::vector<int64_t> all = {0, 1, 2, 3}, far = {0, 2, 1, 3};
  std::vector<std::vector<int64_t>> got(4);
  int64_t sent_before = xlac_rt_mpi_bytes_sent();
  XlacRtStatus status = RunHere(4, 10000, [&](XlacRtDevice* dev, int64_t d) {
    EXPECT_GE(d, 2 * me);
    EXPECT_LT(d, 2 * me + 2);
    int64_t src[2] = {d + 1, 10 * (d + 1)}, sum[2] = {0, 0}, gathered[4] = {0, 0, 0, 0};
    ASSERT_EQ(xlac_rt_all_reduce(dev, 1, "sum", all.data(), 1, 4, src, sum, 2, 8, AddI64, nullptr), 0);
    ASSERT_EQ(xlac_rt_all_gather(dev, 2, "gather", far.data(), 2, 2, src, gathered, 16), 0);
    got[static_cast<size_t>(d)] = {sum[0], sum[1], gathered[0], gathered[2]};
  });
  ASSERT_EQ(status.code, XLAC_RT_OK) << status.message;
  for (int64_t d = 2 * me; d < 2 * me + 2; ++d) {
    int64_t partner = d ^ 2;  // {0,2} and {1,3}
    int64_t low = std::min(d, partner), high = std::max(d, partner);
    EXPECT_EQ(got[static_cast<size_t>(d)], (std::vector<int64_t>{10, 100, low + 1, high + 1})) << "device " << d;
  }
  // Payload only. All-reduce: the other process's element of this process's 2 sources, then this process's folded
  // element; all-gather: per pair, the local participant's 16 bytes.
  EXPECT_EQ(xlac_rt_mpi_bytes_sent() - sent_before, (2 * 8 + 8) + 2 * 16);
}

TEST(MpiTransport, AProcessThatNeverArrivesIsNamedAtTheTimeout) {
  const int64_t me = xlac_rt_mpi_process_index();
  std::vector<int64_t> all = {0, 1, 2, 3};
  auto start = std::chrono::steady_clock::now();
  XlacRtStatus status = RunHere(4, 300, [&](XlacRtDevice* dev, int64_t d) {
    if (me == 1) return;  // process 1 finishes without the collective
    int64_t x = 1, y = 0;
    EXPECT_NE(xlac_rt_all_reduce(dev, 5, "never", all.data(), 1, 4, &x, &y, 1, 8, AddI64, nullptr), 0);
  });
  if (me == 0) {
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
    EXPECT_EQ(status.code, XLAC_RT_ERROR_DEADLINE_EXCEEDED);
    EXPECT_STREQ(status.message, "device 0: never (op 5): waited 300 ms but process 1 (devices 2-3) never arrived");
  } else {
    EXPECT_EQ(status.code, XLAC_RT_OK) << status.message;
  }
  ASSERT_EQ(xlac_rt_mpi_recover(&status), XLAC_RT_OK) << status.message;
}

TEST(MpiTransport, DisagreeingProcessesFailWithAMismatch) {
  const int64_t me = xlac_rt_mpi_process_index();
  std::vector<int64_t> pair = {0, 2, 1, 3};
  XlacRtStatus status = RunHere(4, 1000, [&](XlacRtDevice* dev, int64_t d) {
    int64_t x[4] = {1, 2, 3, 4}, y[4];
    // Process 1 reduces 4 elements where process 0 reduces 2.
    EXPECT_NE(xlac_rt_all_reduce(dev, 7, "sum", pair.data(), 2, 2, x, y, me == 0 ? 2 : 4, 8, AddI64, nullptr), 0);
  });
  EXPECT_EQ(status.code, XLAC_RT_ERROR_COLLECTIVE_MISMATCH) << status.message;
  // Either local device may fail first.
  const std::string message = status.message;
  if (me == 1) {
    EXPECT_NE(message.find(": sum (op 7): process 0 (devices 0-1) sent all-reduce op 7 (execution 0, step 0) with 8 "
                           "bytes where this process ran all-reduce op 7 (execution 0, step 0) expecting 16 bytes"),
              std::string::npos)
        << message;
  } else {
    // MPI reports the longer message it received; or process 1's failure notice came first.
    EXPECT_TRUE(message.find(": sum (op 7): exchanging with process 1 (devices 2-3): MPI: ") != std::string::npos ||
                message.find(": sum (op 7): cancelled because process 1 failed (device ") != std::string::npos)
        << message;
  }
  ASSERT_EQ(xlac_rt_mpi_recover(&status), XLAC_RT_OK) << status.message;
}

TEST(MpiTransport, FingerprintsAndGather) {
  const int64_t me = xlac_rt_mpi_process_index();
  EXPECT_EQ(xlac_rt_mpi_first_mismatch(42), -1);
  EXPECT_EQ(xlac_rt_mpi_first_mismatch(me == 0 ? 1 : 2), 1);
  char mine[3] = {static_cast<char>('a' + me), static_cast<char>('x' + me), 0};
  char all[6] = {};
  XlacRtStatus status;
  ASSERT_EQ(xlac_rt_mpi_gather(mine, 2, all, &status), XLAC_RT_OK) << status.message;
  if (me == 0) EXPECT_EQ(std::string(all, 4), "axby");
}

TEST(MpiTransport, AFailedProcessEndsItsPeersExchangesAtOnce) {
  const int64_t me = xlac_rt_mpi_process_index();
  std::vector<int64_t> all = {0, 1, 2, 3};
  auto start = std::chrono::steady_clock::now();
  XlacRtStatus status = RunHere(4, 20000, [&](XlacRtDevice* dev, int64_t d) {
    if (d == 2) {
      xlac_rt_set_error(dev, "boom");
      return;
    }
    int64_t x = 1, y = 0;
    EXPECT_NE(xlac_rt_all_reduce(dev, 9, "sum", all.data(), 1, 4, &x, &y, 1, 8, AddI64, nullptr), 0);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  if (me == 0) {
    EXPECT_EQ(status.code, XLAC_RT_ERROR_CANCELLED);
    EXPECT_STREQ(status.message, "device 0: sum (op 9): cancelled because process 1 failed (device 2: boom)");
  } else {
    EXPECT_EQ(status.code, XLAC_RT_ERROR_EXECUTION);
    EXPECT_STREQ(status.message, "device 2: boom");
  }
  ASSERT_EQ(xlac_rt_mpi_recover(&status), XLAC_RT_OK) << status.message;
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  XlacRtStatus status;
  if (xlac_rt_mpi_init(&status) != XLAC_RT_OK) {
    std::fprintf(stderr, "%s\n", status.message);
    return 1;
  }
  int rc = RUN_ALL_TESTS();
  xlac_rt_mpi_finalize();
  return rc;
}
