// The C++ JIT API over several processes (include/xlac/jit.h, CompileOptions::mpi): ctest runs it under
// `mpirun -np 2`. Every process compiles a sharded module over 4 partitions with MPI and without (the in-process
// run of all 4 devices); process 0's global results must equal the in-process ones bit for bit, the other
// processes' result buffers stay untouched.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"

namespace {

// x batch-sharded over the 4 partitions, w replicated: y stays sharded, the column sums need an all-reduce.
constexpr char kModule[] = R"(
HloModule dp, num_partitions=4

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[16,8] parameter(0), sharding={devices=[4,1]0,1,2,3}
  w = f32[8,4] parameter(1), sharding={replicated}
  y = f32[16,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]0,1,2,3}
  z = f32[] constant(0)
  s = f32[4] reduce(y, z), dimensions={0}, to_apply=add, sharding={replicated}
  ROOT t = (f32[16,4], f32[4]) tuple(y, s), sharding={{devices=[4,1]0,1,2,3}, {replicated}}
}
)";

std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

int64_t LaunchedProcesses() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size != nullptr ? std::atoll(size) : 1;
}

std::vector<std::vector<float>> RunExe(xlac::Executable& exe, const std::vector<std::vector<float>>& params,
                                       float fill) {
  std::vector<const void*> in;
  for (const std::vector<float>& p : params) in.push_back(p.data());
  std::vector<std::vector<float>> out;
  for (const xlac::ArrayInfo& r : exe.results()) out.emplace_back(static_cast<size_t>(r.byte_size() / 4), fill);
  std::vector<void*> ptrs;
  for (std::vector<float>& o : out) ptrs.push_back(o.data());
  absl::Status status = exe.Run(in, ptrs);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

TEST(JitApiMpi, PartitionedRunMatchesOneProcess) {
  xlac::CompileOptions options;
  options.exact = true;
  absl::StatusOr<std::unique_ptr<xlac::Executable>> local = xlac::Executable::Compile(kModule, options);
  ASSERT_TRUE(local.ok()) << local.status();
  options.mpi = true;
  absl::StatusOr<std::unique_ptr<xlac::Executable>> spread = xlac::Executable::Compile(kModule, options);
  ASSERT_TRUE(spread.ok()) << spread.status();
  xlac::Executable& exe = **spread;

  const int64_t processes = LaunchedProcesses();
  EXPECT_EQ(exe.process_count(), processes);
  EXPECT_EQ((*local)->process_count(), 1);
  EXPECT_EQ(exe.num_devices(), 4);
  EXPECT_EQ(exe.local_device_count(), 4 / processes);
  const char* rank = std::getenv("OMPI_COMM_WORLD_RANK");
  EXPECT_EQ(exe.process_index(), rank != nullptr ? std::atoll(rank) : 0);
  EXPECT_TRUE(exe.partitioned());

  std::vector<std::vector<float>> params = {Values(16 * 8, 1), Values(8 * 4, 2)};
  std::vector<std::vector<float>> want = RunExe(**local, params, 0.0f);
  for (int repeat = 0; repeat < 2; ++repeat) {  // executables are reused across runs
    std::vector<std::vector<float>> got = RunExe(exe, params, -7.0f);
    ASSERT_EQ(got.size(), want.size());
    for (size_t j = 0; j < got.size(); ++j) {
      ASSERT_EQ(got[j].size(), want[j].size());
      if (exe.process_index() == 0) {
        EXPECT_EQ(std::memcmp(got[j].data(), want[j].data(), got[j].size() * sizeof(float)), 0) << "result " << j;
      } else {
        for (float v : got[j]) ASSERT_EQ(v, -7.0f) << "result " << j << " written on process " << exe.process_index();
      }
    }
  }
}

// Unpartitioned programs on several devices: every process gets its first device's results; with the same
// parameters everywhere they are device 0's.
TEST(JitApiMpi, UnpartitionedRunGivesFirstLocalDevice) {
  xlac::CompileOptions options;
  options.mpi = true;
  options.num_partitions = 2 * LaunchedProcesses();
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(R"(
HloModule ids
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  x = f32[3] parameter(0)
  id = u32[] partition-id()
  f = f32[] convert(id)
  b = f32[3] broadcast(f), dimensions={}
  m = f32[3] multiply(x, b)
  ROOT r = f32[3] all-reduce(m), channel_id=1, replica_groups={}, use_global_device_ids=false, to_apply=add
})",
                                                                                    options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_FALSE((*exe)->partitioned());
  std::vector<std::vector<float>> got = RunExe(**exe, {{1.0f, 2.0f, 3.0f}}, 0.0f);
  const float n = static_cast<float>(2 * LaunchedProcesses());
  const float ids = n * (n - 1) / 2;  // the sum of the partition ids
  EXPECT_EQ(got[0], (std::vector<float>{ids, 2 * ids, 3 * ids}));
}

}  // namespace
