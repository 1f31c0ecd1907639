#include "passes/tpu_cost_model.h"

#include <numeric>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"

namespace xlac {
namespace {

TpuTopology Slice(const std::string& chip, const std::string& shape) {
  absl::StatusOr<TpuTopology> t = ParseTpuTopology(**FindTpuChipSpec(chip), shape);
  EXPECT_TRUE(t.ok()) << t.status();
  return *t;
}

// The devices along x at y = z = 0.
std::vector<int64_t> Row(const TpuTopology& t) {
  std::vector<int64_t> row;
  for (int64_t x = 0; x < t.dims()[0]; ++x) {
    std::vector<int64_t> c(t.rank(), 0);
    c[0] = x;
    row.push_back(t.DeviceAt(c));
  }
  return row;
}

// "How to Scale Your Model" part 3's comparison: bf16[2048,8192] (33554432 bytes) on a bidirectional ring with
// wraparound, W_ici = 2 x 4.5e10 = 9e10 bytes/s (v5e): AllGather and ReduceScatter V / W = 373 us, AllReduce
// 2V / W = 746 us, AllToAll V / 4W = 93.2 us; independent of the ring's length.
TEST(TpuCostModel, ScalingBookRingExample) {
  const int64_t v = int64_t{2048} * 8192 * 2;
  TpuTopology pod = Slice("v5e", "16x16");
  std::vector<int64_t> ring = Row(pod);  // 16 chips on x, which wraps on the 16x16 pod
  TpuCollectiveCost ag = ModelCollective(TpuCollectiveKind::kAllGather, v, ring, pod);
  EXPECT_DOUBLE_EQ(ag.seconds, v / 9e10);
  EXPECT_EQ(FormatSeconds(ag.seconds), "373 us");
  EXPECT_EQ(ag.path, "ring of 16 on x (wraparound)");
  EXPECT_EQ(FormatSeconds(ModelCollective(TpuCollectiveKind::kReduceScatter, v, ring, pod).seconds), "373 us");
  EXPECT_EQ(FormatSeconds(ModelCollective(TpuCollectiveKind::kAllReduce, v, ring, pod).seconds), "746 us");
  EXPECT_EQ(FormatSeconds(ModelCollective(TpuCollectiveKind::kAllToAll, v, ring, pod).seconds), "93.2 us");
  // The same on a v4 8-ring with wraparound (8x8x8 is whole cubes), whose links are as fast as v5e's.
  TpuTopology v4 = Slice("v4", "8x8x8");
  EXPECT_DOUBLE_EQ(ModelCollective(TpuCollectiveKind::kAllGather, v, Row(v4), v4).seconds, v / 9e10);
}

// bf16[1024,4096] = 8388608 bytes all-gathered around a 4-ring of v4 (a 4x4x4 cube wraps): 8388608 / 9e10 = 93.2 us;
// on v5p (9e10 per link one way, 1.8e11 both) half that.
TEST(TpuCostModel, AllGatherOverAFourRing) {
  const int64_t v = int64_t{1024} * 4096 * 2;
  TpuTopology cube = Slice("v4", "4x4x4");
  TpuCollectiveCost c = ModelCollective(TpuCollectiveKind::kAllGather, v, Row(cube), cube);
  EXPECT_DOUBLE_EQ(c.seconds, v / 9e10);
  EXPECT_EQ(FormatSeconds(c.seconds), "93.2 us");
  EXPECT_DOUBLE_EQ(c.latency_seconds, 2e-6);  // 4 / 2 hops each way
  TpuTopology v5p = Slice("v5p", "4x4x4");
  EXPECT_DOUBLE_EQ(ModelCollective(TpuCollectiveKind::kAllGather, v, Row(v5p), v5p).seconds, v / 1.8e11);
}

TEST(TpuCostModel, WraparoundAxesAndLatency) {
  const int64_t v = int64_t{1} << 24;
  // A v5e 4x4 is a mesh: a row of 4 is a line, one link's bandwidth (4.5e10), 3 hops.
  TpuTopology mesh = Slice("v5e", "4x4");
  TpuCollectiveCost line = ModelCollective(TpuCollectiveKind::kAllGather, v, Row(mesh), mesh);
  EXPECT_DOUBLE_EQ(line.seconds, v / 4.5e10);
  EXPECT_DOUBLE_EQ(line.latency_seconds, 3e-6);
  EXPECT_EQ(line.path, "line of 4 on x (no wraparound)");
  // All 256 chips of a 16x16 pod: both axes' rings, 2 x 9e10.
  TpuTopology pod = Slice("v5e", "16x16");
  std::vector<int64_t> all(256);
  std::iota(all.begin(), all.end(), 0);
  TpuCollectiveCost both = ModelCollective(TpuCollectiveKind::kAllGather, v, all, pod);
  EXPECT_DOUBLE_EQ(both.seconds, v / 1.8e11);
  EXPECT_EQ(both.path, "ring of 16 on x (wraparound) + ring of 16 on y (wraparound)");
  // 1 KiB over the 16-ring is latency bound: 8 hops of 1 us; an all-reduce takes two rounds.
  EXPECT_DOUBLE_EQ(ModelCollective(TpuCollectiveKind::kAllGather, 1024, Row(pod), pod).seconds, 8e-6);
  EXPECT_DOUBLE_EQ(ModelCollective(TpuCollectiveKind::kAllReduce, 1024, Row(pod), pod).seconds, 16e-6);
  // Devices 0 and 5 of the 4x4 ((0,0) and (1,2)) are no sub-grid: a one-way ring of 2 x 3 hops.
  TpuCollectiveCost odd = ModelCollective(TpuCollectiveKind::kAllGather, v, {0, mesh.DeviceAt({1, 2})}, mesh);
  EXPECT_DOUBLE_EQ(odd.bandwidth_seconds, v / 4.5e10);
  EXPECT_DOUBLE_EQ(odd.latency_seconds, 6e-6);
  EXPECT_EQ(ModelCollective(TpuCollectiveKind::kAllGather, v, {3}, mesh).seconds, 0);
}

// One core of a v5e 4x4 slice: an all-gather of its bf16[64,1024] shard into bf16[1024,1024] over all 16 devices
// (2 MiB; both axes are lines: W = 2 x 4.5e10, latency 3 + 3 hops), then a bf16 [1024,1024] x [1024,1024] dot:
// 2 x 1024^3 FLOPs / 197e12 = 10.9 us against 3 x 2 MiB / 819e9 = 7.68 us of HBM traffic: compute bound.
TEST(TpuCostModel, StepOfAPartitionedProgram) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(
HloModule m, num_partitions=16
ENTRY e {
  x = bf16[64,1024] parameter(0)
  w = bf16[1024,1024] parameter(1)
  g = bf16[1024,1024] all-gather(x), dimensions={0}, replica_groups=[1,16]<=[16], channel_id=1, use_global_device_ids=true
  d = bf16[1024,1024] dot(g, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT n = bf16[1024,1024] negate(d)
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<TpuStepReport> report = ModelTpuStep(**module, Slice("v5e", "4x4"), 1, 16);
  ASSERT_TRUE(report.ok()) << report.status();
  ASSERT_EQ(report->ops.size(), 3u);
  const double mib2 = 2.0 * 1024 * 1024;
  EXPECT_EQ(report->ops[0].name, "g");
  EXPECT_DOUBLE_EQ(report->ops[0].seconds, mib2 / 9e10);
  EXPECT_EQ(report->ops[0].detail, "group of 16, line of 4 on x (no wraparound) + line of 4 on y (no wraparound)");
  EXPECT_EQ(report->ops[1].name, "d");
  EXPECT_DOUBLE_EQ(report->ops[1].flops, 2.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(report->ops[1].seconds, 2.0 * 1024 * 1024 * 1024 / 197e12);
  EXPECT_EQ(report->ops[1].bound, TpuOpCost::Bound::kCompute);
  EXPECT_DOUBLE_EQ(report->ops[2].seconds, 2 * mib2 / 819e9);  // negate reads and writes 2 MiB
  EXPECT_EQ(report->ops[2].bound, TpuOpCost::Bound::kMemory);
  EXPECT_DOUBLE_EQ(report->communication_seconds, mib2 / 9e10);
  EXPECT_DOUBLE_EQ(report->total_seconds(), mib2 / 9e10 + 2.0 * 1024 * 1024 * 1024 / 197e12 + 2 * mib2 / 819e9);
  EXPECT_NE(report->ToString().find("Modeled step time per core: 39.3 us (compute 10.9 us, memory 5.12 us, "
                                    "communication 23.3 us)"),
            std::string::npos)
      << report->ToString();
  // A slice with fewer devices than the program is an error.
  EXPECT_FALSE(ModelTpuStep(**module, Slice("v5e", "2x4"), 1, 16).ok());
}

// An f32 dot at HIGHEST precision takes 6 bf16 passes; at DEFAULT one.
TEST(TpuCostModel, F32DotPasses) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[4096,4096] parameter(0)
  b = f32[4096,4096] parameter(1)
  d1 = f32[4096,4096] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT d6 = f32[4096,4096] dot(d1, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}, operand_precision={highest,highest}
}
)");
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<TpuStepReport> report = ModelTpuStep(**module, Slice("v6e", "1x1"), 1, 1);
  ASSERT_TRUE(report.ok()) << report.status();
  const double flops = 2.0 * 4096 * 4096 * 4096;
  EXPECT_DOUBLE_EQ(report->ops[0].seconds, flops / 918e12);
  EXPECT_DOUBLE_EQ(report->ops[1].seconds, 6 * flops / 918e12);
}

// A loop with known_trip_count=10 counts its body ten times: a negate of f32[1024,1024] reads and writes 4 MiB
// (8 MiB / 1.2e12 B/s on v4) per iteration; without the count, once.
TEST(TpuCostModel, WhileLoopsCountTheirKnownTrips) {
  constexpr char kLoop[] = R"(
HloModule m
cond {
  p = (s32[], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[1024,1024]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  x = f32[1024,1024] get-tuple-element(p), index=1
  y = f32[1024,1024] negate(x)
  ROOT t = (s32[], f32[1024,1024]) tuple(j, y)
}
ENTRY e {
  x0 = f32[1024,1024] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[1024,1024]) tuple(zero, x0)
  w = (s32[], f32[1024,1024]) while(init), condition=cond, body=body, backend_config={"known_trip_count":{"n":"10"}}
  ROOT r = f32[1024,1024] get-tuple-element(w), index=1
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kLoop);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<TpuStepReport> report = ModelTpuStep(**module, Slice("v4", "2x2x1"), 1, 1);
  ASSERT_TRUE(report.ok()) << report.status();
  const TpuOpCost* negate = nullptr;
  for (const TpuOpCost& op : report->ops) {
    if (op.name == "y x10") negate = &op;
  }
  ASSERT_NE(negate, nullptr) << report->ToString();
  EXPECT_DOUBLE_EQ(negate->seconds, 10 * 8.0 * 1024 * 1024 / 1200e9);
  std::string once = kLoop;
  once.replace(once.find(", backend_config="),
               std::string(", backend_config={\"known_trip_count\":{\"n\":\"10\"}}").size(), "");
  module = ParseHloModule(once);
  ASSERT_TRUE(module.ok()) << module.status();
  report = ModelTpuStep(**module, Slice("v4", "2x2x1"), 1, 1);
  ASSERT_TRUE(report.ok()) << report.status();
  bool found = false;
  for (const TpuOpCost& op : report->ops) {
    if (op.name == "y") found = op.seconds == 8.0 * 1024 * 1024 / 1200e9;
  }
  EXPECT_TRUE(found) << report->ToString();
}

}  // namespace
}  // namespace xlac
