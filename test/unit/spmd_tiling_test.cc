// The sharding arithmetic of passes/spmd/tiling.h and the shard/assemble helpers of literal_sharding.h.
#include <cstring>

#include "gtest/gtest.h"
#include "ir/literal.h"
#include "passes/spmd/literal_sharding.h"
#include "passes/spmd/tiling.h"

namespace xlac::spmd {
namespace {

Sharding Tiled(std::vector<int64_t> tile_dims, std::vector<int64_t> devices, bool replicate_last = false) {
  Sharding s;
  s.kind = Sharding::Kind::kTiled;
  s.tile_dims = std::move(tile_dims);
  s.device_ids = std::move(devices);
  s.last_tile_dim_replicate = replicate_last;
  return s;
}

Sharding Iota(std::vector<int64_t> tile_dims, std::vector<int64_t> reshape, std::vector<int64_t> perm,
              bool replicate_last = false) {
  Sharding s;
  s.kind = Sharding::Kind::kTiled;
  s.tile_dims = tile_dims;
  s.iota = IotaList{tile_dims, std::move(reshape), std::move(perm)};
  s.last_tile_dim_replicate = replicate_last;
  return s;
}

TEST(TilingTest, NormalizesForms) {
  absl::StatusOr<Tiling> t = TilingOf(Iota({2, 1, 2}, {2, 2}, {1, 0}, true), 2, 4);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->tiles, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(t->replication, 2);
  EXPECT_EQ(t->devices, (std::vector<int64_t>{0, 2, 1, 3}));
  absl::StatusOr<Tiling> r = TilingOf(Sharding::Replicated(), 3, 4);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->IsReplicated());
  EXPECT_EQ(r->replication, 4);
}

TEST(TilingTest, RejectsShardingsThatDoNotFit) {
  EXPECT_FALSE(TilingOf(Tiled({2, 2}, {0, 1, 2, 3}), 2, 2).ok());  // 4 devices on 2 partitions
  EXPECT_FALSE(TilingOf(Tiled({2, 1}, {0, 0}), 2, 2).ok());        // a device twice
  EXPECT_FALSE(TilingOf(Tiled({2, 1}, {0, 1}), 3, 2).ok());        // rank mismatch
  Sharding unreduced = Tiled({2, 2}, {0, 1, 2, 3});
  unreduced.last_tile_dims = {Sharding::SubgroupType::kUnreduced};
  absl::StatusOr<Tiling> t = TilingOf(unreduced, 1, 4);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kUnimplemented);
}

TEST(TilingTest, ManualSubgroupsStayApart) {
  // [2] data tiles, then a manual dim of 2 before a replicated dim of 1 ... devices 0 1 / 2 3.
  Sharding s = Tiled({2, 2}, {0, 1, 2, 3});
  s.last_tile_dims = {Sharding::SubgroupType::kManual};
  Tiling t = *TilingOf(s, 1, 4);
  EXPECT_EQ(t.manual_subgroup, 2);
  EXPECT_EQ(t.replication, 1);
  // Gathering the data dim stays inside each manual group.
  EXPECT_EQ(GroupsAlongAxes(t, {0}), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  Tiling whole = RegroupAxes(t, {{}});
  EXPECT_EQ(whole.manual_subgroup, 2);
  EXPECT_EQ(whole.replication, 2);
  EXPECT_EQ(ShardingToString(ToSharding(t)), "{devices=[2,2]0,1,2,3 last_tile_dims={manual}}");
}

TEST(TilingTest, UnevenShardsFollowXla) {
  Tiling t = *TilingOf(Tiled({4}, {3, 2, 1, 0}), 1, 4);
  EXPECT_EQ(ShardDims({10}, t), (std::vector<int64_t>{3}));
  EXPECT_EQ(ShardOffsets({10}, t, 3), (std::vector<int64_t>{0}));
  EXPECT_EQ(ShardOffsets({10}, t, 0), (std::vector<int64_t>{9}));
}

TEST(TilingTest, GroupsAndRegrouping) {
  // [2,2] tiles, devices 0 1 / 2 3.
  Tiling t = *TilingOf(Tiled({2, 2}, {0, 1, 2, 3}), 2, 4);
  EXPECT_EQ(GroupsAlongAxes(t, {0}), (std::vector<std::vector<int64_t>>{{0, 2}, {1, 3}}));
  EXPECT_EQ(GroupsAlongAxes(t, {1}), (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  // Dimension 1 whole: its axis becomes replication.
  Tiling rows = RegroupAxes(t, {{0}, {}});
  EXPECT_EQ(rows.tiles, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(rows.replication, 2);
  EXPECT_EQ(rows.devices, (std::vector<int64_t>{0, 1, 2, 3}));
  // Swapped dimensions (a transpose's operand).
  Tiling swapped = RegroupAxes(t, {{1}, {0}});
  EXPECT_EQ(swapped.devices, (std::vector<int64_t>{0, 2, 1, 3}));
  Sharding back = ToSharding(swapped);
  EXPECT_EQ(ShardingToString(back), "{devices=[2,2]0,2,1,3}");
  EXPECT_EQ(ShardingToString(ToSharding(rows)), "{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
}

Literal Iota2D(int64_t rows, int64_t cols) {
  Literal lit(Shape::Array(PrimitiveType::kS32, {rows, cols}));
  for (int64_t i = 0; i < rows * cols; ++i) lit.Set<int32_t>(i, static_cast<int32_t>(i));
  return lit;
}

TEST(LiteralShardingTest, ShardAndAssembleRoundTripUneven) {
  Literal global = Iota2D(5, 3);
  Sharding s = Tiled({2, 2}, {3, 1, 2, 0});
  std::vector<Literal> shards;
  for (int64_t p = 0; p < 4; ++p) {
    absl::StatusOr<Literal> shard = ShardLiteral(global, s, p, 4);
    ASSERT_TRUE(shard.ok()) << shard.status();
    EXPECT_EQ(shard->shape().dimensions, (std::vector<int64_t>{3, 2}));
    shards.push_back(*std::move(shard));
  }
  // Device 3 holds tile (0, 0): rows 0..2, columns 0..1.
  EXPECT_EQ(shards[3].Get<int32_t>(0), 0);
  EXPECT_EQ(shards[3].Get<int32_t>(1), 1);
  EXPECT_EQ(shards[3].Get<int32_t>(2), 3);
  // Device 0 holds tile (1, 1): rows 3..4 (+ one padding row), column 2 (+ one padding column), padding zero.
  EXPECT_EQ(shards[0].Get<int32_t>(0), 11);
  EXPECT_EQ(shards[0].Get<int32_t>(1), 0);
  EXPECT_EQ(shards[0].Get<int32_t>(5), 0);
  std::vector<const Literal*> parts;
  for (const Literal& l : shards) parts.push_back(&l);
  absl::StatusOr<Literal> back = AssembleLiteral(parts, s, global.shape());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, global);
}

TEST(LiteralShardingTest, ReplicatedAndMaximal) {
  Literal global = Iota2D(2, 2);
  Literal other(global.shape());
  std::vector<const Literal*> parts = {&other, &global};
  absl::StatusOr<Literal> from_device_1 = AssembleLiteral(parts, Sharding::Maximal(1), global.shape());
  ASSERT_TRUE(from_device_1.ok());
  EXPECT_EQ(*from_device_1, global);
  absl::StatusOr<Literal> shard = ShardLiteral(global, Sharding::Replicated(), 1, 2);
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(*shard, global);
  // Whole-array shards share the global literal's bytes (copy on write); a tiled shard is a copy, and a shard the
  // size of the array past its end (a size-1 dimension tiled twice) is padding, not the array.
  EXPECT_TRUE(shard->SharesBytesWith(global));
  absl::StatusOr<Literal> tiled = ShardLiteral(global, Tiled({2, 1}, {0, 1}), 0, 2);
  ASSERT_TRUE(tiled.ok());
  EXPECT_FALSE(tiled->SharesBytesWith(global));
  Literal row = Iota2D(1, 2);
  absl::StatusOr<Literal> first = ShardLiteral(row, Tiled({2, 1}, {0, 1}), 0, 2);
  absl::StatusOr<Literal> second = ShardLiteral(row, Tiled({2, 1}, {0, 1}), 1, 2);
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_TRUE(first->SharesBytesWith(row));
  EXPECT_FALSE(second->SharesBytesWith(row));
  EXPECT_EQ(second->Get<int32_t>(0), 0);
  EXPECT_EQ(second->Get<int32_t>(1), 0);
}

}  // namespace
}  // namespace xlac::spmd
