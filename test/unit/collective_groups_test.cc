// Compile-time resolution of collective participants (ir/collective_groups.h) into global device ids: every group
// mode, iota and implicit groups, the single-axis leniency, devices in no group, and malformed groups.
#include "ir/collective_groups.h"

#include <memory>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace xlac {
namespace {

using Groups = std::vector<std::vector<int64_t>>;

// A module whose entry root is `op` applied to a f32[8] parameter.
std::unique_ptr<Module> Parse(const std::string& op) {
  std::string text = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  ROOT r = )" + op + "\n}\n";
  absl::StatusOr<std::unique_ptr<Module>> m = ParseHloModule(text);
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? *std::move(m) : nullptr;
}

const Instruction& Root(const Module& m) { return *m.entry_computation()->root(); }

// Resolves and checks that every member's per-device participant list is its group.
Groups Resolve(const std::string& op, int64_t replicas, int64_t partitions) {
  std::unique_ptr<Module> m = Parse(op);
  if (m == nullptr) return {};
  absl::StatusOr<Groups> groups = ResolveDeviceGroups(Root(*m), replicas, partitions);
  EXPECT_TRUE(groups.ok()) << groups.status().ToString();
  if (!groups.ok()) return {};
  for (const auto& g : *groups) {
    for (int64_t d : g) {
      absl::StatusOr<std::vector<int64_t>> p = ParticipatingDevices(Root(*m), replicas, partitions, d);
      EXPECT_TRUE(p.ok() && *p == g) << op << " device " << d;
    }
  }
  return *groups;
}

std::string ResolveError(const std::string& op, int64_t replicas, int64_t partitions) {
  std::unique_ptr<Module> m = Parse(op);
  if (m == nullptr) return "";
  absl::StatusOr<Groups> groups = ResolveDeviceGroups(Root(*m), replicas, partitions);
  EXPECT_FALSE(groups.ok());
  return groups.ok() ? "" : std::string(groups.status().message());
}

TEST(CollectiveGroups, CrossReplica) {
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=add", 2, 2), (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups={}, to_apply=add", 2, 2), (Groups{{0, 2}, {1, 3}}));
  // Rank order is the group's order, not sorted.
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups={{2,0},{1,3}}, to_apply=add", 4, 1),
            (Groups{{2, 0}, {1, 3}}));
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add", 4, 1),
            (Groups{{0, 2}, {1, 3}}));
}

TEST(CollectiveGroups, CrossReplicaAndPartition) {
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), channel_id=1, replica_groups={{0,1}}, to_apply=add", 2, 2),
            (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), channel_id=1, replica_groups={{0},{1}}, to_apply=add", 2, 2),
            (Groups{{0, 1}, {2, 3}}));
  // One replica: {0} is every partition; larger ids (tt-xla's manual computations) are device ids.
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), channel_id=1, replica_groups={{0}}, to_apply=add", 1, 4),
            (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, to_apply=add", 1, 4),
            (Groups{{0, 2}, {1, 3}}));
  EXPECT_EQ(ResolveError("f32[8] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, to_apply=add", 2, 2),
            "r (all-reduce): replica group id 2 is out of range for 2 replicas x 2 partitions");
}

TEST(CollectiveGroups, FlattenedIds) {
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, "
                    "to_apply=add",
                    2, 2),
            (Groups{{0, 3}, {1, 2}}));
}

TEST(CollectiveGroups, CrossPartition) {
  EXPECT_EQ(Resolve("f32[8] all-to-all(x), channel_id=1, replica_groups={{0,1}}, dimensions={0}", 2, 2),
            (Groups{{0, 1}, {2, 3}}));
  // Without a channel, ids beyond a single replica are read as partitions when they name every partition...
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups={{0,1,2,3}}, to_apply=add", 1, 4), (Groups{{0, 1, 2, 3}}));
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=add", 1, 4),
            (Groups{{0, 2}, {1, 3}}));
  // ...and otherwise as XLA reads them, replica ids of which only 0 exists: every partition reduces alone (an XLA
  // import test's shard_map body on 8 partitions had replica_groups={{0},{1}}).
  EXPECT_EQ(Resolve("f32[8] all-reduce(x), replica_groups={{0},{1}}, to_apply=add", 1, 4),
            (Groups{{0}, {1}, {2}, {3}}));
}

TEST(CollectiveGroups, DevicesInNoGroupAreLeftOut) {
  EXPECT_EQ(Resolve("f32[8] collective-broadcast(x), replica_groups={{1,0}}", 3, 1), (Groups{{1, 0}}));
  std::unique_ptr<Module> m = Parse("f32[8] all-reduce(x), replica_groups={{0,1}}, to_apply=add");
  absl::StatusOr<std::vector<int64_t>> p = ParticipatingDevices(Root(*m), 3, 1, 2);
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().message(), "r (all-reduce): id 2 of device 2 is in no replica group");
}

TEST(CollectiveGroups, MalformedGroups) {
  EXPECT_EQ(ResolveError("f32[8] all-reduce(x), replica_groups={{0,5}}, to_apply=add", 4, 1),
            "r (all-reduce): replica group id 5 is out of range for 4 replicas x 1 partitions");
  EXPECT_EQ(ResolveError("f32[8] all-reduce(x), replica_groups={{0,1},{1,2}}, to_apply=add", 3, 1),
            "r (all-reduce): device 1 is in two different participant groups");
}

TEST(CollectiveGroups, SourceTargetPairs) {
  auto pairs = [](const std::string& op, int64_t r, int64_t p) {
    std::unique_ptr<Module> m = Parse(op);
    absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> got = ResolveSourceTargetPairs(Root(*m), r, p);
    EXPECT_TRUE(got.ok()) << got.status().ToString();
    return got.ok() ? *got : std::vector<std::pair<int64_t, int64_t>>{};
  };
  using Pairs = std::vector<std::pair<int64_t, int64_t>>;
  // With a channel: partitions within each replica; without: replicas within each partition.
  EXPECT_EQ(pairs("f32[8] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}}", 2, 2),
            (Pairs{{0, 1}, {1, 0}, {2, 3}, {3, 2}}));
  EXPECT_EQ(pairs("f32[8] collective-permute(x), source_target_pairs={{0,1}}", 2, 2), (Pairs{{0, 2}, {1, 3}}));
  std::unique_ptr<Module> m = Parse("f32[8] collective-permute(x), source_target_pairs={{0,4}}");
  absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> bad = ResolveSourceTargetPairs(Root(*m), 4, 1);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "r (collective-permute): source_target_pair out of range for 4 participants");
}

}  // namespace
}  // namespace xlac
