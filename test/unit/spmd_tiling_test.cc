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

// Every element's device, computed from the shard offsets of `t` over `dims` (row-major element order).
std::vector<int64_t> OwnerOfEachElement(const std::vector<int64_t>& dims, const Tiling& t) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> owner(static_cast<size_t>(count), -1);
  std::vector<int64_t> shard = ShardDims(dims, t);
  for (int64_t device : t.devices) {
    std::vector<int64_t> offsets = ShardOffsets(dims, t, device);
    for (int64_t e = 0; e < count; ++e) {
      int64_t rest = e;
      bool inside = true;
      for (size_t d = dims.size(); d-- > 0;) {
        const int64_t index = rest % dims[d];
        rest /= dims[d];
        inside &= index >= offsets[d] && index < offsets[d] + shard[d];
      }
      if (inside && owner[static_cast<size_t>(e)] == -1) owner[static_cast<size_t>(e)] = device;
    }
  }
  return owner;
}

TEST(TilingTest, ReshapeKeepsEveryElementOnItsDevice) {
  // [4 over 4, 64 over 8] merged into [256 over 32] (a torch-xla attention's batch*heads), the split back, a split
  // spreading 4 row tiles over two dimensions, and a 1:1 group with uneven tiles beside size-1 dimensions.
  struct Case {
    std::vector<int64_t> in, out;
    Sharding sharding;
    int64_t devices;
    std::vector<int64_t> want_tiles;
  };
  const std::vector<Case> cases = {
      {{4, 64, 136}, {256, 136}, Iota({4, 8, 1}, {8, 4}, {1, 0}), 32, {32, 1}},
      {{256, 136}, {4, 64, 136}, Iota({32, 1}, {32}, {}), 32, {4, 8, 1}},
      {{8, 6}, {2, 24}, Iota({4, 1}, {4}, {}), 4, {2, 2}},
      {{6, 1}, {1, 6}, Iota({4, 1}, {4}, {}), 4, {1, 4}},
  };
  for (const Case& c : cases) {
    absl::StatusOr<Tiling> t = TilingOf(c.sharding, static_cast<int64_t>(c.in.size()), c.devices);
    ASSERT_TRUE(t.ok()) << t.status();
    std::optional<Tiling> r = ReshapeTiling(c.in, c.out, *t);
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->tiles, c.want_tiles);
    // Row-major element order is what a reshape keeps: every element must stay on its device.
    EXPECT_EQ(OwnerOfEachElement(c.in, *t), OwnerOfEachElement(c.out, *r));
  }
  // Devices whose elements would have to move: [6 over 2, 8 over 2] merged (rows of a block are not adjacent), and
  // 4 tiles of 6 rows split into [2, 3].
  absl::StatusOr<Tiling> a = TilingOf(Iota({2, 2}, {4}, {}), 2, 4);
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(ReshapeTiling({6, 8}, {48}, *a).has_value());
  absl::StatusOr<Tiling> b = TilingOf(Iota({4}, {4}, {}), 1, 4);
  ASSERT_TRUE(b.ok());
  EXPECT_FALSE(ReshapeTiling({6}, {2, 3}, *b).has_value());
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
