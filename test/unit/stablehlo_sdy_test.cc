// Tests of the StableHLO frontend's Shardy support: sdy.mesh / sdy.sharding become exactly the Sharding values the
// HLO text XLA's Shardy export prints parses to, and the sdy ops lower to the HLO sharding custom-calls. The printed
// forms are checked by the lit tests in test/lit/stablehlo-sdy/.
#include <string>
#include <vector>

#include "fmt/format.h"
#include "frontend/hlo/sharding_text.h"
#include "frontend/stablehlo/parser.h"
#include "gtest/gtest.h"
#include "ir/module.h"
#include "stablehlo_test_util.h"

namespace xlac {
namespace {

using namespace stablehlo_testing;  // NOLINT: test helpers

struct Case {
  const char* mesh;      // the sdy.mesh body
  const char* type;      // the argument type
  const char* sharding;  // the #sdy.sharding body after the mesh
  const char* expected;  // the HLO sharding XLA's export prints
};

// Converts one sharding through a parameter and compares it with the parsed HLO sharding.
void ExpectSharding(const Case& c) {
  SCOPED_TRACE(fmt::format("mesh <{}>, sharding [{}]", c.mesh, c.sharding));
  const std::string text = fmt::format(R"(
    sdy.mesh @mesh = <{}>
    func.func @main(%arg0: {} {{sdy.sharding = #sdy.sharding<@mesh, {}>}}) -> {} {{
      return %arg0 : {}
    }})",
                                       c.mesh, c.type, c.sharding, c.type, c.type);
  auto m = MustParse(text);
  ASSERT_NE(m, nullptr);
  const std::optional<Sharding>& actual = Entry(*m)->parameter(0)->sharding();
  ASSERT_TRUE(actual.has_value());
  DiagnosticEngine diags;
  std::optional<Sharding> expected = ParseShardingText(c.expected, diags);
  ASSERT_TRUE(expected.has_value()) << c.expected;
  EXPECT_EQ(*actual, *expected) << "expected " << c.expected;
}

TEST(StableHloSdyTest, ShardingsMatchXlaExport) {
  const Case cases[] = {
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{"x"}, {"y"}])", "{devices=[2,4]<=[8]}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{"y"}, {"x"}])", "{devices=[4,2]<=[2,4]T(1,0)}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{"x"}, {}])", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{}, {"y", ?}])",
       "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{"y", "x"}, {}])", "{devices=[8,1]<=[2,4]T(1,0)}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{?}, {}], replicated={"x", "y"})", "{replicated}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{"x"}, {}], unreduced={"y"})",
       "{devices=[2,1,4]<=[8] last_tile_dims={unreduced}}"},
      {R"(["x"=2, "y"=4])", "tensor<8xf32>", R"([{}], unreduced={"x", "y"})", "{unreduced}"},
      {R"(["a"=2, "b"=3, "c"=2])", "tensor<8x16xf32>", R"([{"c"}, {"a"}])",
       "{devices=[2,2,3]<=[6,2]T(1,0) last_tile_dim_replicate}"},
      // Sub-axes.
      {R"(["x"=4])", "tensor<8xf32>", R"([{"x":(1)2}])", "{devices=[2,2]<=[4] last_tile_dim_replicate}"},
      {R"(["x"=4])", "tensor<8xf32>", R"([{"x":(2)2}])", "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}"},
      {R"(["x"=8])", "tensor<8xf32>", R"([{"x":(2)2}])", "{devices=[2,4]<=[2,2,2]T(1,0,2) last_tile_dim_replicate}"},
      {R"(["x"=2, "y"=4])", "tensor<8x16xf32>", R"([{"y":(2)2}, {"x"}])",
       "{devices=[2,2,2]<=[4,2]T(1,0) last_tile_dim_replicate}"},
      // Explicit device ids.
      {R"(["x"=2], device_ids=[1, 0])", "tensor<8xf32>", R"([{"x"}])", "{devices=[2]1,0}"},
      {R"(["x"=2, "y"=2], device_ids=[3, 2, 1, 0])", "tensor<8x16xf32>", R"([{"x"}, {}])",
       "{devices=[2,1,2]2,3,0,1 last_tile_dim_replicate}"},
      {R"(["x"=2, "y"=2], device_ids=[0, 1, 2, 3])", "tensor<8x16xf32>", R"([{"y"}, {"x"}])",
       "{devices=[2,2]<=[2,2]T(1,0)}"},
      // Meshes without axes.
      {"[]", "tensor<8xf32>", "[{}]", "{replicated}"},
      {"[], device_ids=[5]", "tensor<8xf32>", "[{}]", "{maximal device=5}"},
      {R"(["x"=1])", "tensor<8xf32>", R"([{"x"}])", "{replicated}"},
  };
  for (const Case& c : cases) ExpectSharding(c);
}

TEST(StableHloSdyTest, OpShardingsAndConstraints) {
  auto m = MustParse(R"(
    module {
      sdy.mesh @mesh = <["x"=2, "y"=2]>
      func.func @main(%arg0: tensor<4x4xf32>) -> (tensor<4x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}) {
        %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{}, {"x"}]>]>} : tensor<4x4xf32>
        %1 = sdy.sharding_constraint %0 <@mesh, [{"y"}, {}]> : tensor<4x4xf32>
        return %1 : tensor<4x4xf32>
      }
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  const Instruction* neg = FindOp(entry, Opcode::kNegate);
  ASSERT_NE(neg, nullptr);
  ASSERT_TRUE(neg->sharding().has_value());
  EXPECT_EQ(neg->sharding()->tile_dims, (std::vector<int64_t>{1, 2, 2}));
  EXPECT_TRUE(neg->sharding()->last_tile_dim_replicate);
  const Instruction* constraint = FindOp(entry, Opcode::kCustomCall);
  ASSERT_NE(constraint, nullptr);
  EXPECT_EQ(constraint->StringAttr("custom_call_target"), "Sharding");
  EXPECT_EQ(constraint->operand(0), neg);
  ASSERT_TRUE(constraint->sharding().has_value());
  EXPECT_EQ(constraint->sharding()->tile_dims, (std::vector<int64_t>{2, 1, 2}));
  // The constraint already has a sharding, so the result sharding goes on a copy.
  ASSERT_EQ(entry->root()->opcode(), Opcode::kCopy);
  EXPECT_EQ(entry->root()->sharding()->tile_dims, (std::vector<int64_t>{2, 2}));
}

TEST(StableHloSdyTest, ManualComputationIsTheShardMapPattern) {
  auto m = MustParse(R"(
    sdy.mesh @mesh = <["x"=2, "y"=2]>
    func.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {
      %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}, {"y"}]>] out_shardings=[<@mesh, [{"y"}, {"x"}]>]
          manual_axes={"x", "y"} (%arg1: tensor<4x4xf32>) {
        %1 = stablehlo.transpose %arg1, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
        sdy.return %1 : tensor<4x4xf32>
      } : (tensor<8x8xf32>) -> tensor<8x8xf32>
      return %0 : tensor<8x8xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  EXPECT_EQ(m->computations().size(), 1u);  // the body is inlined
  const Instruction* to_full = entry->root();
  ASSERT_EQ(to_full->opcode(), Opcode::kCustomCall);
  EXPECT_EQ(to_full->StringAttr("custom_call_target"), "SPMDShardToFullShape");
  EXPECT_EQ(ShapeToString(to_full->shape(), false), "f32[8,8]");
  EXPECT_EQ(to_full->sharding()->tile_dims, (std::vector<int64_t>{2, 2}));
  const Instruction* manual_out = to_full->operand(0);
  EXPECT_EQ(manual_out->StringAttr("custom_call_target"), "Sharding");
  EXPECT_EQ(manual_out->sharding()->kind, Sharding::Kind::kManual);
  const Instruction* transpose = manual_out->operand(0);
  ASSERT_EQ(transpose->opcode(), Opcode::kTranspose);
  const Instruction* to_shard = transpose->operand(0);
  EXPECT_EQ(to_shard->StringAttr("custom_call_target"), "SPMDFullToShardShape");
  EXPECT_EQ(ShapeToString(to_shard->shape(), false), "f32[4,4]");
  EXPECT_EQ(to_shard->sharding()->kind, Sharding::Kind::kManual);
  const Instruction* in = to_shard->operand(0);
  EXPECT_EQ(in->StringAttr("custom_call_target"), "Sharding");
  EXPECT_EQ(in->sharding()->tile_dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(in->operand(0)->opcode(), Opcode::kParameter);
}

TEST(StableHloSdyTest, ErrorsAreLocated) {
  std::string err = ErrorOf(R"(sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
})");
  EXPECT_NE(err.find("test.mlir:2:77: error: axis \"y\" is not in mesh @mesh"), std::string::npos) << err;

  err = ErrorOf(R"(sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>] manual_axes={"y", "y"} (%arg1: tensor<8xf32>) {
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
})");
  EXPECT_NE(err.find("test.mlir:3:"), std::string::npos) << err;
  EXPECT_NE(err.find("manual axis \"y\" is listed twice"), std::string::npos) << err;
}

}  // namespace
}  // namespace xlac
