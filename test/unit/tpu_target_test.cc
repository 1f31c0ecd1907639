#include "ir/tpu_target.h"

#include <set>

#include "gtest/gtest.h"

namespace xlac {
namespace {

const TpuChipSpec& Chip(const std::string& name) {
  absl::StatusOr<const TpuChipSpec*> chip = FindTpuChipSpec(name);
  EXPECT_TRUE(chip.ok()) << chip.status();
  return **chip;
}

TEST(TpuTarget, TableHasThePublishedNumbers) {
  const TpuChipSpec& v5e = Chip("v5e");
  EXPECT_EQ(v5e.hbm_bytes, int64_t{16} << 30);
  EXPECT_DOUBLE_EQ(v5e.peak_bf16_flops, 197e12);
  EXPECT_DOUBLE_EQ(v5e.hbm_bytes_per_second, 819e9);
  EXPECT_EQ(v5e.torus_rank, 2);
  EXPECT_EQ(v5e.chips_per_host, 8);
  const TpuChipSpec& v5p = Chip("V5P");
  EXPECT_EQ(v5p.hbm_bytes, int64_t{95} << 30);
  EXPECT_EQ(v5p.tensor_cores_per_chip, 2);
  EXPECT_EQ(v5p.devices_per_chip, 1);
  EXPECT_EQ(v5p.torus_rank, 3);
  EXPECT_DOUBLE_EQ(Chip("v4").peak_bf16_flops, 275e12);
  EXPECT_DOUBLE_EQ(Chip("trillium").peak_bf16_flops, 918e12);
  EXPECT_EQ(Chip("v5litepod").name, "v5e");
  for (const TpuChipSpec& spec : AllTpuChipSpecs()) {
    EXPECT_GT(spec.hbm_bytes, 0) << spec.name;
    EXPECT_GT(spec.ici_link_bytes_per_second, 0) << spec.name;
    EXPECT_EQ(spec.host_bounds[0] * spec.host_bounds[1] * spec.host_bounds[2], spec.chips_per_host) << spec.name;
    // Every listed shape parses and has as many chips as its extents say.
    for (const std::string& shape : spec.listed_topologies) {
      absl::StatusOr<TpuTopology> t = ParseTpuTopology(spec, shape);
      ASSERT_TRUE(t.ok()) << spec.name << " " << shape << ": " << t.status();
      EXPECT_EQ(t->ToString(), shape);
    }
  }
  absl::StatusOr<const TpuChipSpec*> unknown = FindTpuChipSpec("v3");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("v4, v5e, v5p, v6e"), std::string::npos);
}

TEST(TpuTarget, TopologyValidationNamesTheAllowedShapes) {
  absl::StatusOr<TpuTopology> bad = ParseTpuTopology(Chip("v5e"), "3x4");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("allowed: 1x1, 2x2, 2x4, 4x4, 4x8, 8x8, 8x16, 16x16"), std::string::npos)
      << bad.status();
  bad = ParseTpuTopology(Chip("v5e"), "4x4x4");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("2D"), std::string::npos) << bad.status();
  bad = ParseTpuTopology(Chip("v4"), "4x4");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("3D"), std::string::npos) << bad.status();
  bad = ParseTpuTopology(Chip("v4"), "2x3x4");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("multiple of 4"), std::string::npos) << bad.status();
  EXPECT_FALSE(ParseTpuTopology(Chip("v5e"), "4x").ok());
  EXPECT_FALSE(ParseTpuTopology(Chip("v5e"), "0x4").ok());
  // Whole-cube shapes beyond the listed ones are accepted on 3D versions, within the largest slice.
  absl::StatusOr<TpuTopology> cubes = ParseTpuTopology(Chip("v5p"), "4x4x12");
  ASSERT_TRUE(cubes.ok()) << cubes.status();
  EXPECT_EQ(cubes->num_chips(), 192);
  EXPECT_FALSE(ParseTpuTopology(Chip("v5p"), "16x16x28").ok());  // 7168 chips > 6144
}

TEST(TpuTarget, DeviceOrderIsHostMajorThenXFastest) {
  // v5e 4x4: two hosts of 2x4 chips side by side along x.
  absl::StatusOr<TpuTopology> t = ParseTpuTopology(Chip("v5e"), "4x4");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->num_chips(), 16);
  EXPECT_EQ(t->num_devices(), 16);
  EXPECT_EQ(t->coords(0), (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(t->coords(1), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(t->coords(2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(t->coords(7), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(t->coords(8), (std::vector<int64_t>{2, 0}));  // second host
  EXPECT_EQ(t->coords(15), (std::vector<int64_t>{3, 3}));
  std::set<std::vector<int64_t>> seen;
  for (int64_t d = 0; d < t->num_devices(); ++d) {
    EXPECT_EQ(t->DeviceAt(t->coords(d)), d);
    seen.insert(t->coords(d));
  }
  EXPECT_EQ(seen.size(), 16u);
  // v4 2x2x2: two hosts of 2x2x1, stacked along z.
  t = ParseTpuTopology(Chip("v4"), "2x2x2");
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->coords(3), (std::vector<int64_t>{1, 1, 0}));
  EXPECT_EQ(t->coords(4), (std::vector<int64_t>{0, 0, 1}));
}

TEST(TpuTarget, NeighboursWithAndWithoutWraparound) {
  // A v5e 4x4 is a mesh: no wraparound below the 16-chip pod edge.
  absl::StatusOr<TpuTopology> mesh = ParseTpuTopology(Chip("v5e"), "4x4");
  ASSERT_TRUE(mesh.ok());
  EXPECT_FALSE(mesh->wraps(0));
  int64_t corner = mesh->DeviceAt({0, 0});
  EXPECT_EQ(mesh->Neighbor(corner, 0, -1), -1);
  EXPECT_EQ(mesh->Neighbor(corner, 0, +1), mesh->DeviceAt({1, 0}));
  EXPECT_EQ(mesh->Neighbor(corner, 1, +1), mesh->DeviceAt({0, 1}));
  EXPECT_EQ(mesh->Distance(corner, mesh->DeviceAt({3, 3})), 6);
  // 16x16 wraps both axes.
  absl::StatusOr<TpuTopology> pod = ParseTpuTopology(Chip("v6e"), "16x16");
  ASSERT_TRUE(pod.ok());
  EXPECT_TRUE(pod->wraps(0) && pod->wraps(1));
  int64_t origin = pod->DeviceAt({0, 0});
  EXPECT_EQ(pod->Neighbor(origin, 0, -1), pod->DeviceAt({15, 0}));
  EXPECT_EQ(pod->Distance(origin, pod->DeviceAt({15, 15})), 2);
  // v4 4x4x4 (one cube) is a 3D torus; 2x2x1 a mesh with no neighbour along z.
  absl::StatusOr<TpuTopology> cube = ParseTpuTopology(Chip("v4"), "4x4x4");
  ASSERT_TRUE(cube.ok());
  EXPECT_TRUE(cube->wraps(2));
  int64_t c0 = cube->DeviceAt({0, 0, 0});
  EXPECT_EQ(cube->Neighbor(c0, 2, -1), cube->DeviceAt({0, 0, 3}));
  EXPECT_EQ(cube->Distance(c0, cube->DeviceAt({2, 3, 1})), 2 + 1 + 1);
  absl::StatusOr<TpuTopology> small = ParseTpuTopology(Chip("v4"), "2x2x1");
  ASSERT_TRUE(small.ok());
  EXPECT_FALSE(small->wraps(0));
  EXPECT_EQ(small->Neighbor(0, 2, +1), -1);
  EXPECT_EQ(small->Neighbor(0, 0, +1), 1);
  EXPECT_EQ(small->Neighbor(1, 0, +1), -1);
}

TEST(TpuTarget, DefaultTopologyBySize) {
  absl::StatusOr<TpuTopology> t = DefaultTpuTopology(Chip("v5e"), 16);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToString(), "4x4");
  t = DefaultTpuTopology(Chip("v5p"), 8);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToString(), "2x2x2");
  t = DefaultTpuTopology(Chip("v5p"), 16);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t->ToString(), "2x2x4");
  t = DefaultTpuTopology(Chip("v5e"), 6);
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("4x4 (16)"), std::string::npos) << t.status();
}

}  // namespace
}  // namespace xlac
