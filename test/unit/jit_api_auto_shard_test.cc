// Automatic sharding through the public API (include/xlac/spmd.h's AutoShard, docs/spmd.md "Automatic sharding"):
// the plan it picks is modeled no slower than the data-parallel, FSDP and Megatron hand plans, keeps the user's
// annotations, and the program compiled with it computes what the unpartitioned program computes. (Named jit_api_*
// so test/CMakeLists.txt links xlac_jit.)
#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"
#include "xlac/spmd.h"

namespace {

using xlac::spmd::AutoShard;
using xlac::spmd::AutoShardOptions;
using xlac::spmd::AutoShardReport;
using xlac::spmd::Mesh;
using xlac::spmd::ModeledStepSeconds;
using xlac::spmd::Program;

// A two-layer MLP training-step-sized forward pass: big enough weights that the choice matters on 8 cores.
constexpr const char* kMlp = R"(
HloModule mlp2

ENTRY mlp {
  x = f32[64,512] parameter(0)
  w1 = f32[512,2048] parameter(1)
  b1 = f32[2048] parameter(2)
  w2 = f32[2048,512] parameter(3)
  h = f32[64,2048] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,2048] broadcast(b1), dimensions={1}
  a = f32[64,2048] add(h, bb)
  zero = f32[] constant(0)
  zeros = f32[64,2048] broadcast(zero), dimensions={}
  relu = f32[64,2048] maximum(a, zeros)
  ROOT y = f32[64,512] dot(relu, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
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

std::vector<float> RunExe(xlac::Executable& exe, const std::vector<std::vector<float>>& params) {
  std::vector<const void*> in;
  for (const std::vector<float>& p : params) in.push_back(p.data());
  std::vector<float> out(static_cast<size_t>(exe.results()[0].byte_size() / 4));
  std::vector<void*> outs = {out.data()};
  absl::Status status = exe.Run(in, outs);
  EXPECT_TRUE(status.ok()) << status;
  return out;
}

Mesh Mesh2x4() {
  absl::StatusOr<Mesh> mesh = Mesh::Create({0, 1, 2, 3, 4, 5, 6, 7}, {2, 4}, {"data", "model"});
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

Program Load() {
  absl::StatusOr<Program> p = Program::Load(kMlp, "mlp2.hlo");
  EXPECT_TRUE(p.ok()) << p.status();
  return *std::move(p);
}

double Modeled(const Program& p) {
  absl::StatusOr<double> s = ModeledStepSeconds(p, "v5e");
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : std::numeric_limits<double>::infinity();
}

TEST(AutoShard, NoSlowerThanTheHandPlansAndMatchesUnpartitioned) {
  const Mesh mesh = Mesh2x4();
  // The hand plans over the whole mesh (data parallel, FSDP) and Megatron over "model" with data on "data".
  Program dp = Load(), fsdp = Load(), megatron = Load();
  ASSERT_TRUE(xlac::spmd::DataParallel(dp, mesh, {"data", "model"}).ok());
  ASSERT_TRUE(xlac::spmd::Fsdp(fsdp, mesh, {"data", "model"}).ok());
  ASSERT_TRUE(xlac::spmd::DataParallel(megatron, mesh, {"data"}).ok());
  ASSERT_TRUE(xlac::spmd::MegatronMlp(megatron, mesh, {{1, 3}}, {"model"}).ok());
  const double hand = std::min({Modeled(dp), Modeled(fsdp), Modeled(megatron)});

  Program program = Load();
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<AutoShardReport> report = AutoShard(program, mesh, AutoShardOptions{});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_LT(elapsed, 10.0);
  EXPECT_LE(report->modeled_seconds, hand * (1 + 1e-9));
  // The reported time is the program's modeled time, as ModeledStepSeconds (and xlac --emit=tpu-report) say.
  EXPECT_NEAR(Modeled(program), report->modeled_seconds, 1e-9 + 1e-6 * report->modeled_seconds);
  EXPECT_EQ(program.num_partitions(), 8);
  EXPECT_GE(report->start_plans.size(), 4u);
  EXPECT_GT(report->evaluations, 4);
  ASSERT_FALSE(report->explanation.empty());
  std::string all;
  for (const std::string& line : report->explanation) all += line + "\n";
  EXPECT_NE(all.find("auto-shard: start plans"), std::string::npos) << all;
  EXPECT_NE(all.find("parameter 1 w1 f32[512,2048]"), std::string::npos) << all;
  EXPECT_NE(all.find("runner-up"), std::string::npos) << all;
  EXPECT_NE(all.find("auto-shard: plan: "), std::string::npos) << all;
  // Some parameter is sharded: the MLP is too large for a replicated plan to win on 8 cores.
  bool sharded = false;
  for (const xlac::spmd::ValueInfo& p : program.parameters()) sharded |= p.sharding.find("devices=") != std::string::npos;
  EXPECT_TRUE(sharded) << program.Text();

  absl::StatusOr<std::unique_ptr<xlac::Executable>> partitioned = program.Compile();
  ASSERT_TRUE(partitioned.ok()) << partitioned.status();
  EXPECT_TRUE((*partitioned)->partitioned());
  xlac::CompileOptions one;
  one.num_partitions = 1;
  absl::StatusOr<std::unique_ptr<xlac::Executable>> single = xlac::Executable::Compile(kMlp, one);
  ASSERT_TRUE(single.ok()) << single.status();
  std::vector<std::vector<float>> params = {Values(64 * 512, 1), Values(512 * 2048, 2), Values(2048, 3),
                                            Values(2048 * 512, 4)};
  std::vector<float> got = RunExe(**partitioned, params), want = RunExe(**single, params);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], 1e-3f * (1.0f + std::fabs(want[i]))) << "element " << i;
  }
}

TEST(AutoShard, KeepsTheUsersAnnotations) {
  const Mesh mesh = Mesh2x4();
  Program program = Load();
  // w2 column-sharded over "data": an unusual choice the search must not undo.
  ASSERT_TRUE(program.MarkParameter(3, mesh, {{}, {"data"}}).ok());
  const std::string given = program.parameters()[3].sharding;
  absl::StatusOr<AutoShardReport> report = AutoShard(program, mesh);
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_EQ(program.parameters()[3].sharding, given);
  std::string all;
  for (const std::string& line : report->explanation) all += line + "\n";
  EXPECT_NE(all.find("1 annotated by the user (kept)"), std::string::npos) << all;
  EXPECT_NE(all.find("w2 f32[2048,512]: " + given + " (user)"), std::string::npos) << all;
  EXPECT_EQ(all.find("parameter 3 w2 f32[2048,512] ->"), std::string::npos) << all;
}

TEST(AutoShard, SeedPlansBoundTheResult) {
  const Mesh mesh = Mesh2x4();
  Program megatron = Load();
  ASSERT_TRUE(xlac::spmd::DataParallel(megatron, mesh, {"data"}).ok());
  ASSERT_TRUE(xlac::spmd::MegatronMlp(megatron, mesh, {{1, 3}}, {"model"}).ok());
  Program program = Load();
  AutoShardOptions options;
  options.seeds = {{"hand megatron", &megatron}};
  options.max_sweeps = 0;  // one sweep at least: never worse than the seed
  absl::StatusOr<AutoShardReport> report = AutoShard(program, mesh, options);
  ASSERT_TRUE(report.ok()) << report.status();
  bool listed = false;
  for (const auto& [name, seconds] : report->start_plans) listed |= name == "hand megatron";
  EXPECT_TRUE(listed);
  EXPECT_LE(report->modeled_seconds, Modeled(megatron) * (1 + 1e-9));
}

TEST(AutoShard, Errors) {
  Program program = Load();
  AutoShardOptions options;
  options.tpu = "v9z";
  absl::StatusOr<AutoShardReport> report = AutoShard(program, Mesh2x4(), options);
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("auto_shard: "), std::string::npos) << report.status();
  // A user annotation over 2 devices does not fit a mesh of 8.
  Program two = Load();
  ASSERT_TRUE(two.SetParameterSharding(1, "{devices=[2,1]0,1}").ok());
  report = AutoShard(two, Mesh2x4());
  ASSERT_FALSE(report.ok());
  EXPECT_NE(report.status().message().find("the mesh has 8 devices"), std::string::npos) << report.status();
}

}  // namespace
