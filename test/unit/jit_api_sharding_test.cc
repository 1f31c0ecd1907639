// The sharding API (include/xlac/spmd.h): meshes, hybrid meshes' device order, partition specs -> HLO shardings
// and their error texts, annotated programs compiled against the unpartitioned run, propagation, the plans, the
// block table.
// (Named jit_api_* so that test/CMakeLists.txt links it with xlac_jit, where the API lives.)
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/spmd.h"

namespace {

using xlac::spmd::Mesh;
using xlac::spmd::PartitionSpec;
using xlac::spmd::Program;
using xlac::spmd::ShardingFor;

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = i;
  return v;
}

Mesh Make(std::vector<int64_t> ids, std::vector<int64_t> shape, std::vector<std::string> names = {}) {
  absl::StatusOr<Mesh> mesh = Mesh::Create(std::move(ids), std::move(shape), std::move(names));
  EXPECT_TRUE(mesh.ok()) << mesh.status();
  return *mesh;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

TEST(SpmdApi, MeshErrors) {
  EXPECT_EQ(Message(Mesh::Create(Iota(6), {4, 2}).status()),
            "Mesh: 6 device ids for mesh shape (4, 2), which has 8 devices");
  EXPECT_EQ(Message(Mesh::Create({0, 1, 1, 3}, {4}).status()), "Mesh: device id 1 appears twice");
  EXPECT_EQ(Message(Mesh::Create({0, 1, 2, 9}, {4}).status()),
            "Mesh: device id 9 is out of range: the device ids of a mesh of 4 devices are 0..3 (the program's "
            "partitions)");
  EXPECT_EQ(Message(Mesh::Create(Iota(8), {4, 2}, {"data"}).status()), "Mesh: 1 axis names for 2 mesh axes");
  EXPECT_EQ(Message(Mesh::Create(Iota(8), {4, 2}, {"x", "x"}).status()), "Mesh: axis name 'x' names mesh axes 0 and 1");
  EXPECT_EQ(Message(Mesh::Hybrid({2, 2}, {2, 1, 1}).status()),
            "HybridMesh: ici_mesh_shape (2, 2) and dcn_mesh_shape (2, 1, 1) have different lengths");
}

TEST(SpmdApi, HybridMeshDeviceOrder) {
  // torch_xla's guide: 2 slices of 4 devices, the DCN axis outermost; slice s holds devices [4s, 4s + 4).
  absl::StatusOr<Mesh> mesh = Mesh::Hybrid({1, 4, 1}, {2, 1, 1}, {"data", "fsdp", "tensor"});
  ASSERT_TRUE(mesh.ok()) << mesh.status();
  EXPECT_EQ(mesh->shape(), (std::vector<int64_t>{2, 4, 1}));
  EXPECT_EQ(mesh->device_ids(), Iota(8));
  EXPECT_EQ(mesh->dcn_slices(), 2);
  // numpy.block with the DCN coordinate major along each axis: slice 1's ICI mesh sits to the right of slice 0's.
  absl::StatusOr<Mesh> wide = Mesh::Hybrid({2, 2}, {1, 2});
  ASSERT_TRUE(wide.ok()) << wide.status();
  EXPECT_EQ(wide->shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(wide->device_ids(), (std::vector<int64_t>{0, 1, 4, 5, 2, 3, 6, 7}));
}

TEST(SpmdApi, PartitionSpecsToHloShardings) {
  Mesh mesh = Make(Iota(8), {4, 2}, {"data", "model"});
  auto sharding = [&](const PartitionSpec& spec, int64_t rank) {
    absl::StatusOr<std::string> s = ShardingFor(mesh, spec, rank, "x");
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *s : "";
  };
  EXPECT_EQ(sharding({{0}, {}}, 2), "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(sharding({{}, {1}}, 2), "{devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}");
  EXPECT_EQ(sharding({{"data"}, {"model"}}, 2), "{devices=[4,2]<=[8]}");
  EXPECT_EQ(sharding({{"model"}, {"data"}}, 2), "{devices=[2,4]<=[4,2]T(1,0)}");
  EXPECT_EQ(sharding({{"data", "model"}}, 1), "{devices=[8]<=[8]}");
  EXPECT_EQ(sharding({{"model", "data"}}, 2), "{devices=[8,1]<=[4,2]T(1,0)}");
  EXPECT_EQ(sharding({{}, {}}, 2), "{replicated}");
  EXPECT_EQ(sharding({}, 0), "{replicated}");
  // Device ids in another order give an explicit list: the mesh transposed to the spec's axes, row-major.
  Mesh shuffled = Make({1, 0, 3, 2}, {2, 2});
  absl::StatusOr<std::string> s = ShardingFor(shuffled, {{}, {1}}, 2, "x");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(*s, "{devices=[1,2,2]1,3,0,2 last_tile_dim_replicate}");
}

TEST(SpmdApi, PartitionSpecErrors) {
  Mesh mesh = Make(Iota(8), {4, 2}, {"data", "model"});
  const char* what = "parameter 1 (w: f32[16,32])";
  EXPECT_EQ(Message(ShardingFor(mesh, {{0}, {"data"}}, 2, what).status()),
            "mark_sharding: parameter 1 (w: f32[16,32]): dimension 1: mesh axis 0 ('data') is already used by "
            "dimension 0");
  EXPECT_EQ(Message(ShardingFor(mesh, {{}, {}, {1}}, 2, what).status()),
            "mark_sharding: parameter 1 (w: f32[16,32]): the partition spec (None, None, 1) has 3 entries but the "
            "array has rank 2: there is no dimension 2 to shard over mesh axis 1");
  EXPECT_EQ(Message(ShardingFor(mesh, {{"modle"}}, 2, what).status()),
            "mark_sharding: parameter 1 (w: f32[16,32]): dimension 0: the mesh has no axis named 'modle' (axes: "
            "'data', 'model')");
  EXPECT_EQ(Message(ShardingFor(mesh, {{}, {2}}, 2, what).status()),
            "mark_sharding: parameter 1 (w: f32[16,32]): dimension 1: mesh axis 2 is out of range (the mesh has 2 "
            "axes)");
}

constexpr const char* kMlp = R"(HloModule mlp_layer, num_partitions=2

%add_f32 (lhs: f32[], rhs: f32[]) -> f32[] {
  %lhs = f32[] parameter(0)
  %rhs = f32[] parameter(1)
  ROOT %sum = f32[] add(f32[] %lhs, f32[] %rhs)
}

ENTRY %mlp (x: f32[8,16], w: f32[16,32], b: f32[32]) -> f32[8] {
  %x = f32[8,16]{1,0} parameter(0), sharding={devices=[2,1]0,1}
  %w = f32[16,32]{1,0} parameter(1), sharding={replicated}
  %dot = f32[8,32]{1,0} dot(f32[8,16]{1,0} %x, f32[16,32]{1,0} %w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %b = f32[32]{0} parameter(2), sharding={replicated}
  %bias = f32[8,32]{1,0} broadcast(f32[32]{0} %b), dimensions={1}
  %add = f32[8,32]{1,0} add(f32[8,32]{1,0} %dot, f32[8,32]{1,0} %bias)
  %zero = f32[] constant(0)
  %zeros = f32[8,32]{1,0} broadcast(f32[] %zero), dimensions={}
  %relu = f32[8,32]{1,0} maximum(f32[8,32]{1,0} %add, f32[8,32]{1,0} %zeros)
  ROOT %row_sum = f32[8]{0} reduce(f32[8,32]{1,0} %relu, f32[] %zero), dimensions={1}, to_apply=%add_f32, sharding={devices=[2]0,1}
}
)";

std::vector<float> RunMlp(xlac::Executable& exe) {
  std::vector<float> x(8 * 16), w(16 * 32), b(32), y(8);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7) % 13) / 13.0f - 0.4f;
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>((i * 5) % 11) / 11.0f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 3) * 0.1f;
  absl::Status s = exe.Run({x.data(), w.data(), b.data()}, {y.data()});
  EXPECT_TRUE(s.ok()) << s;
  return y;
}

TEST(SpmdApi, MarkedProgramCompilesPartitionedAndMatches) {
  absl::StatusOr<Program> program = Program::Load(kMlp, "mlp.hlo");
  ASSERT_TRUE(program.ok()) << program.status();
  ASSERT_EQ(program->parameters().size(), 3u);
  EXPECT_EQ(program->parameters()[1].name, "w");
  EXPECT_EQ(program->parameters()[1].sharding, "{replicated}");
  EXPECT_EQ(program->results()[0].name, "row_sum");
  EXPECT_EQ(*program->ParameterIndex("%b"), 2);
  EXPECT_EQ(Message(program->ParameterIndex("y").status()),
            "the program has no parameter named 'y' (parameters: 'x', 'w', 'b')");

  Mesh mesh = Make(Iota(8), {4, 2});
  // The result's {devices=[2]0,1} spans 2 devices, not the mesh's 8.
  EXPECT_EQ(Message(program->MarkParameter(0, mesh, {{0}, {}})),
            "mark_sharding: parameter 0 (x: f32[8,16]): the mesh has 8 devices but %row_sum is sharded over 2 "
            "({devices=[2]0,1}); clear that sharding or use a mesh of 2 devices");
  ASSERT_TRUE(program->SetResultSharding(0, "").ok());
  ASSERT_TRUE(program->MarkParameter(0, mesh, {{0}, {}}).ok());
  ASSERT_TRUE(program->MarkParameter(1, mesh, {{}, {1}}).ok());
  EXPECT_EQ(program->parameters()[0].sharding, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(program->num_partitions(), 8);
  const std::string text = program->Text();
  EXPECT_NE(text.find("num_partitions=8"), std::string::npos) << text;
  EXPECT_NE(text.find("parameter(1), sharding={devices=[1,2,4]<=[4,2]T(1,0) last_tile_dim_replicate}"),
            std::string::npos)
      << text;

  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = program->Compile();
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_TRUE((*exe)->partitioned());
  EXPECT_EQ((*exe)->num_devices(), 8);
  xlac::CompileOptions plain;
  plain.partition = false;
  plain.num_partitions = 1;
  absl::StatusOr<std::unique_ptr<xlac::Executable>> reference = xlac::Executable::Compile(kMlp, plain);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<float> got = RunMlp(**exe), want = RunMlp(**reference);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-4) << i;

  xlac::CompileOptions options;
  options.num_partitions = 8;
  absl::StatusOr<xlac::spmd::PropagatedShardings> propagated = xlac::spmd::PropagateShardings(text, options);
  ASSERT_TRUE(propagated.ok()) << propagated.status();
  EXPECT_EQ(propagated->parameters[0], "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
  EXPECT_EQ(propagated->parameters[2], "{replicated}");
  ASSERT_EQ(propagated->results.size(), 1u);

  options.num_partitions = 4;
  EXPECT_EQ(Message(program->Compile(options).status()),
            "compile: num_partitions=4 but the shardings were marked on a mesh of 8 devices");
}

constexpr const char* kMlp2 = R"(HloModule mlp2
ENTRY e {
  x = f32[16,32] parameter(0)
  w1 = f32[32,64] parameter(1)
  w2 = f32[64,32] parameter(2)
  h = f32[16,64] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  zeros = f32[16,64] broadcast(zero), dimensions={}
  r = f32[16,64] maximum(h, zeros)
  ROOT y = f32[16,32] dot(r, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)";

std::vector<std::string> Shardings(const Program& program) {
  std::vector<std::string> out;
  for (const xlac::spmd::ValueInfo& v : program.parameters()) out.push_back(v.sharding);
  return out;
}

TEST(SpmdApi, Plans) {
  absl::StatusOr<Program> program = Program::Load(kMlp2);
  ASSERT_TRUE(program.ok()) << program.status();
  Mesh fsdp = Make(Iota(8), {8}, {"fsdp"});
  ASSERT_TRUE(xlac::spmd::Fsdp(*program, fsdp).ok());
  EXPECT_EQ(Shardings(*program),
            (std::vector<std::string>{"{devices=[8,1]<=[8]}", "{devices=[1,8]<=[8]}", "{devices=[8,1]<=[8]}"}));
  ASSERT_TRUE(xlac::spmd::DataParallel(*program, Make(Iota(4), {4}, {"data"}), {"data"}, {0}, {0}).ok());
  EXPECT_EQ(Shardings(*program), (std::vector<std::string>{"{devices=[4,1]<=[4]}", "{replicated}", "{replicated}"}));
  EXPECT_EQ(program->results()[0].sharding, "{devices=[4,1]<=[4]}");
  EXPECT_EQ(Message(xlac::spmd::Fsdp(*program, Make(Iota(4), {4}, {"data"}))),
            "fsdp: the mesh has no axis named 'fsdp' (axes: 'data')");

  absl::StatusOr<Program> megatron = Program::Load(kMlp2);
  ASSERT_TRUE(megatron.ok()) << megatron.status();
  ASSERT_TRUE(xlac::spmd::MegatronMlp(*megatron, Make(Iota(4), {4}, {"model"}), {{1, 2}}).ok());
  EXPECT_EQ(Shardings(*megatron), (std::vector<std::string>{"", "{devices=[1,4]<=[4]}", "{devices=[4,1]<=[4]}"}));
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = megatron->Compile();
  ASSERT_TRUE(exe.ok()) << exe.status();
  const std::string report = (*exe)->spmd_report();
  EXPECT_NE(report.find("1 collective inserted"), std::string::npos) << report;
  EXPECT_NE(report.find("all-reduce"), std::string::npos) << report;
}

TEST(SpmdApi, VisualizesBlocks) {
  absl::StatusOr<std::string> table =
      xlac::spmd::VisualizeSharding({8, 16}, "{devices=[4,1,2]<=[8] last_tile_dim_replicate}");
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ(*table,
            "devices holding each block of (8, 16) sharded {devices=[4,1,2]<=[8] last_tile_dim_replicate}\n"
            "+-------------+------+\n"
            "| rows \\ cols | 0:16 |\n"
            "+-------------+------+\n"
            "| 0:2         | 0,1  |\n"
            "| 2:4         | 2,3  |\n"
            "| 4:6         | 4,5  |\n"
            "| 6:8         | 6,7  |\n"
            "+-------------+------+\n");
  EXPECT_EQ(Message(xlac::spmd::VisualizeSharding({8}, "{devices=[2,2]<=[4]}").status()),
            "visualize_sharding: the sharding {devices=[2,2]<=[4]} tiles 2 dimensions but the shape (8,) has 1");
}

}  // namespace
