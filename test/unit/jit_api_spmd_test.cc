// The public JIT API on sharded modules (include/xlac/jit.h): partitioned programs take and return global arrays and
// compute what the unpartitioned program computes.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"

namespace {

namespace fs = std::filesystem;

std::string ReadExample(const std::string& name) {
  fs::path root = fs::path(__FILE__).parent_path() / ".." / "..";
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) root = src;
  std::ifstream in(root / "examples" / name, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Deterministic values in [-1, 1).
std::vector<float> Values(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  uint32_t s = seed * 2654435761u + 1;
  for (float& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
  return v;
}

std::unique_ptr<xlac::Executable> CompileOrDie(const std::string& text, const xlac::CompileOptions& options) {
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(text, options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? *std::move(exe) : nullptr;
}

// Runs `exe` on float parameters and returns its float results.
std::vector<std::vector<float>> RunFloats(xlac::Executable& exe, const std::vector<std::vector<float>>& params) {
  std::vector<const void*> in;
  for (const std::vector<float>& p : params) in.push_back(p.data());
  std::vector<std::vector<float>> out;
  for (const xlac::ArrayInfo& r : exe.results()) out.emplace_back(static_cast<size_t>(r.byte_size() / 4));
  std::vector<void*> out_ptrs;
  for (std::vector<float>& o : out) out_ptrs.push_back(o.data());
  absl::Status status = exe.Run(in, out_ptrs);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

void ExpectClose(const std::vector<float>& got, const std::vector<float>& want, float rel) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], rel * (1.0f + std::fabs(want[i]))) << "element " << i;
  }
}

// examples/mlp.hlo (batch-sharded x, num_partitions=2): the partitioned program on 2 cores computes the same as the
// unpartitioned one on one core, with global buffers in and out.
TEST(JitApiSpmd, MlpExampleOnTwoCoresMatchesUnpartitioned) {
  const std::string text = ReadExample("mlp.hlo");
  ASSERT_FALSE(text.empty());
  xlac::CompileOptions options;
  options.source_name = "mlp.hlo";
  std::unique_ptr<xlac::Executable> partitioned = CompileOrDie(text, options);
  options.num_partitions = 1;
  std::unique_ptr<xlac::Executable> single = CompileOrDie(text, options);
  ASSERT_TRUE(partitioned && single);

  EXPECT_TRUE(partitioned->partitioned());
  EXPECT_FALSE(single->partitioned());
  EXPECT_EQ(single->spmd_report(), "");
  EXPECT_EQ(partitioned->num_devices(), 2);
  ASSERT_EQ(partitioned->parameters().size(), 3u);
  EXPECT_EQ(partitioned->parameters()[0].dims, (std::vector<int64_t>{8, 16}));  // global, not the [4,16] shard
  EXPECT_EQ(partitioned->parameters()[1].dims, (std::vector<int64_t>{16, 32}));
  ASSERT_EQ(partitioned->results().size(), 1u);
  EXPECT_EQ(partitioned->results()[0].dims, (std::vector<int64_t>{8}));

  for (uint32_t run = 0; run < 3; ++run) {
    std::vector<std::vector<float>> params = {Values(8 * 16, run), Values(16 * 32, 10 + run), Values(32, 20 + run)};
    std::vector<std::vector<float>> got = RunFloats(*partitioned, params);
    std::vector<std::vector<float>> want = RunFloats(*single, params);
    ExpectClose(got[0], want[0], 1e-6f);
  }
}

// CompileOptions::partition = false: the global program runs on every device, as before partitioning existed.
TEST(JitApiSpmd, PartitionFalseRunsTheGlobalProgramOnEveryDevice) {
  const std::string text = ReadExample("mlp.hlo");
  xlac::CompileOptions options;
  options.partition = false;
  std::unique_ptr<xlac::Executable> global = CompileOrDie(text, options);
  options.partition = true;
  std::unique_ptr<xlac::Executable> partitioned = CompileOrDie(text, options);
  ASSERT_TRUE(global && partitioned);
  EXPECT_FALSE(global->partitioned());
  EXPECT_EQ(global->spmd_report(), "");
  EXPECT_EQ(global->num_devices(), 2);
  EXPECT_EQ(global->parameters()[0].dims, (std::vector<int64_t>{8, 16}));
  std::vector<std::vector<float>> params = {Values(8 * 16, 1), Values(16 * 32, 2), Values(32, 3)};
  ExpectClose(RunFloats(*global, params)[0], RunFloats(*partitioned, params)[0], 1e-6f);
}

// A Megatron-style 2-layer MLP: the first weight column-sharded, the second row-sharded, x replicated. The hidden
// activation stays sharded and the second dot's partial sums are all-reduced, so the sums are reassociated.
constexpr const char* kMegatron = R"(
HloModule megatron, num_partitions=4

ENTRY mlp {
  x = f32[8,16] parameter(0), sharding={replicated}
  w1 = f32[16,32] parameter(1), sharding={devices=[1,4]<=[4]}
  w2 = f32[32,16] parameter(2), sharding={devices=[4,1]<=[4]}
  h = f32[8,32] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  zeros = f32[8,32] broadcast(zero), dimensions={}
  relu = f32[8,32] maximum(h, zeros)
  ROOT y = f32[8,16] dot(relu, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)";

TEST(JitApiSpmd, MegatronMlpOnFourCoresMatchesUnpartitioned) {
  xlac::CompileOptions options;
  std::unique_ptr<xlac::Executable> partitioned = CompileOrDie(kMegatron, options);
  options.num_partitions = 1;
  std::unique_ptr<xlac::Executable> single = CompileOrDie(kMegatron, options);
  ASSERT_TRUE(partitioned && single);
  EXPECT_TRUE(partitioned->partitioned());
  EXPECT_EQ(partitioned->num_devices(), 4);
  EXPECT_NE(partitioned->spmd_report().find("all-reduce"), std::string::npos) << partitioned->spmd_report();
  EXPECT_EQ(partitioned->results()[0].dims, (std::vector<int64_t>{8, 16}));
  std::vector<std::vector<float>> params = {Values(8 * 16, 4), Values(16 * 32, 5), Values(32 * 16, 6)};
  ExpectClose(RunFloats(*partitioned, params)[0], RunFloats(*single, params)[0], 1e-5f);
}

// Replicas times partitions (CompileOptions::num_replicas, not the module's replica_count): every replica gets the
// same shards, and the partitioner's all-reduce runs within each replica.
TEST(JitApiSpmd, ReplicasGetTheSameShards) {
  xlac::CompileOptions options;
  options.num_replicas = 2;
  std::unique_ptr<xlac::Executable> partitioned = CompileOrDie(kMegatron, options);
  options.num_replicas = 1;
  options.num_partitions = 1;
  std::unique_ptr<xlac::Executable> single = CompileOrDie(kMegatron, options);
  ASSERT_TRUE(partitioned && single);
  EXPECT_TRUE(partitioned->partitioned());
  EXPECT_EQ(partitioned->num_devices(), 8);
  std::vector<std::vector<float>> params = {Values(8 * 16, 7), Values(16 * 32, 8), Values(32 * 16, 9)};
  ExpectClose(RunFloats(*partitioned, params)[0], RunFloats(*single, params)[0], 1e-5f);
}

// Dimension 7 over 2 cores: shards of 4 and 3 (padded to 4). A tuple result mixes a sharded leaf and a reduction
// across the sharded dimension, where the padding must not count.
TEST(JitApiSpmd, UnevenShardsAndTupleResult) {
  constexpr const char* kUneven = R"(
HloModule uneven, num_partitions=2

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY e {
  x = f32[7,3] parameter(0), sharding={devices=[2,1]0,1}
  one = f32[] constant(1)
  ones = f32[7,3] broadcast(one), dimensions={}
  sq = f32[7,3] multiply(x, x)
  y = f32[7,3] add(sq, ones), sharding={devices=[2,1]0,1}
  zero = f32[] constant(0)
  colsum = f32[3] reduce(y, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[7,3], f32[3]) tuple(y, colsum), sharding={{devices=[2,1]0,1}, {replicated}}
}
)";
  std::unique_ptr<xlac::Executable> exe = CompileOrDie(kUneven, {});
  ASSERT_TRUE(exe);
  EXPECT_TRUE(exe->partitioned());
  EXPECT_EQ(exe->parameters()[0].dims, (std::vector<int64_t>{7, 3}));
  ASSERT_EQ(exe->results().size(), 2u);
  EXPECT_EQ(exe->results()[0].dims, (std::vector<int64_t>{7, 3}));
  EXPECT_EQ(exe->results()[1].dims, (std::vector<int64_t>{3}));
  std::vector<float> x(21);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  std::vector<std::vector<float>> out = RunFloats(*exe, {x});
  std::vector<float> want_y(21), want_sum(3, 0.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    want_y[i] = x[i] * x[i] + 1;
    want_sum[i % 3] += want_y[i];
  }
  EXPECT_EQ(out[0], want_y);
  ExpectClose(out[1], want_sum, 1e-6f);
}

// A sharding the partitioner rejects is a located diagnostic, like a parse error.
TEST(JitApiSpmd, PartitionerErrorsAreDiagnostics) {
  xlac::CompileOptions options;
  options.source_name = "bad_sharding.hlo";
  options.num_partitions = 2;
  absl::StatusOr<std::unique_ptr<xlac::Executable>> bad = xlac::Executable::Compile(
      "HloModule m\n\nENTRY e {\n  x = f32[8] parameter(0), sharding={devices=[4]<=[4]}\n  ROOT n = f32[8] "
      "negate(x)\n}\n",
      options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("bad_sharding.hlo:4:3: error: "), absl::string_view::npos) << bad.status();
  EXPECT_NE(bad.status().message().find("uses 4 devices"), absl::string_view::npos) << bad.status();
  // Without partitioning the sharding is only an annotation.
  options.partition = false;
  EXPECT_TRUE(xlac::Executable::Compile("HloModule m\n\nENTRY e {\n  x = f32[8] parameter(0), "
                                        "sharding={devices=[4]<=[4]}\n  ROOT n = f32[8] negate(x)\n}\n",
                                        options)
                  .ok());
}

}  // namespace
