// Tests of the StableHLO frontend's op mappings, one family per test: dot and convolution attributes, data
// movement, custom-calls, collectives, rng/fft/linalg, composites, the reference interpreter's ops, checks and CHLO.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "stablehlo_test_util.h"

namespace xlac {
namespace {

using namespace stablehlo_testing;  // NOLINT: test helpers

// ---------------------------------------------------------------------------------------------------------------
// Attributes of particular ops

TEST(StableHloOpsTest, DotGeneralAndPrecision) {
  auto m = MustParse(R"(
    func.func @main(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %c: tensor<4xf32>, %d: tensor<4x6xf32>) -> (tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<6xf32>) {
      %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      %1 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>, precision_config = [#stablehlo<precision HIGH>, #stablehlo<precision HIGH>]} : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
      %2 = stablehlo.dot %c, %d : (tensor<4xf32>, tensor<4x6xf32>) -> tensor<6xf32>
      return %0, %1, %2 : tensor<2x3x5xf32>, tensor<2x3x5xf32>, tensor<6xf32>
    })");
  ASSERT_NE(m, nullptr);
  for (int i = 0; i < 2; ++i) {
    const Instruction* dot = FindOp(Entry(*m), Opcode::kDot, i);
    EXPECT_EQ(dot->IntListAttr("lhs_batch_dims"), (std::vector<int64_t>{0}));
    EXPECT_EQ(dot->IntListAttr("lhs_contracting_dims"), (std::vector<int64_t>{2}));
    EXPECT_EQ(dot->IntListAttr("rhs_contracting_dims"), (std::vector<int64_t>{1}));
    const auto& precision = dot->FindAttr("operand_precision")->get<std::vector<std::string>>();
    EXPECT_EQ(precision,
              i == 0 ? (std::vector<std::string>{"default", "highest"}) : (std::vector<std::string>{"high", "high"}));
  }
  const Instruction* vec = FindOp(Entry(*m), Opcode::kDot, 2);
  EXPECT_EQ(vec->IntListAttr("lhs_contracting_dims"), (std::vector<int64_t>{0}));
  EXPECT_EQ(vec->IntListAttr("rhs_contracting_dims"), (std::vector<int64_t>{0}));
}

TEST(StableHloOpsTest, ConvolutionPrettyAndGeneric) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<1x8x8x2xf32>, %k: tensor<3x3x2x4xf32>) -> (tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>) {
      %0 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 1], reverse = [false, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x8x4xf32>
      %1 = "stablehlo.convolution"(%x, %k) {dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>, window_strides = array<i64: 2, 1>, padding = dense<1> : tensor<2x2xi64>, feature_group_count = 1 : i64, batch_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x8x8x2xf32>, tensor<3x3x2x4xf32>) -> tensor<1x4x8x4xf32>
      return %0, %1 : tensor<1x4x8x4xf32>, tensor<1x4x8x4xf32>
    })");
  ASSERT_NE(m, nullptr);
  for (int i = 0; i < 2; ++i) {
    const Instruction* conv = FindOp(Entry(*m), Opcode::kConvolution, i);
    const auto& dnums = conv->FindAttr("dim_labels")->get<ConvolutionDimensionNumbers>();
    EXPECT_EQ(dnums.input_batch_dimension, 0);
    EXPECT_EQ(dnums.input_feature_dimension, 3);
    EXPECT_EQ(dnums.input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(dnums.kernel_input_feature_dimension, 2);
    EXPECT_EQ(dnums.kernel_output_feature_dimension, 3);
    const Window& w = conv->FindAttr("window")->get<Window>();
    EXPECT_EQ(w.dimensions[0].size, 3);
    EXPECT_EQ(w.dimensions[0].stride, 2);
    EXPECT_EQ(w.dimensions[1].padding_low, 1);
  }
}

TEST(StableHloOpsTest, SliceIotaPadTransposeBroadcastCompare) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<5x3xf32>, %p: tensor<f32>, %s: tensor<1x3xf32>) -> (tensor<2x2xf32>, tensor<4xui32>, tensor<8x4xf32>, tensor<3x5xf32>, tensor<2x4x3xf32>, tensor<5x3xi1>) {
      %0 = stablehlo.slice %x [1:5:2, 1:3] : (tensor<5x3xf32>) -> tensor<2x2xf32>
      %1 = stablehlo.iota dim = 0 : tensor<4xui32>
      %2 = stablehlo.pad %x, %p, low = [1, 0], high = [2, 1], interior = [0, 0] : (tensor<5x3xf32>, tensor<f32>) -> tensor<8x4xf32>
      %3 = stablehlo.transpose %x, dims = [1, 0] : (tensor<5x3xf32>) -> tensor<3x5xf32>
      %4 = stablehlo.broadcast_in_dim %s, dims = [1, 2] : (tensor<1x3xf32>) -> tensor<2x4x3xf32>
      %5 = stablehlo.compare  GT, %x, %x,  FLOAT : (tensor<5x3xf32>, tensor<5x3xf32>) -> tensor<5x3xi1>
      return %0, %1, %2, %3, %4, %5 : tensor<2x2xf32>, tensor<4xui32>, tensor<8x4xf32>, tensor<3x5xf32>, tensor<2x4x3xf32>, tensor<5x3xi1>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  const auto& ranges = FindOp(e, Opcode::kSlice)->FindAttr("slice")->get<std::vector<SliceRange>>();
  ASSERT_EQ(ranges.size(), 2u);
  EXPECT_EQ(ranges[0].stride, 2);
  EXPECT_EQ(ranges[1].start, 1);
  EXPECT_EQ(FindOp(e, Opcode::kIota)->IntAttr("iota_dimension"), 0);
  const auto& padding = FindOp(e, Opcode::kPad)->FindAttr("padding")->get<PaddingConfig>();
  EXPECT_EQ(padding.dimensions[0].edge_padding_high, 2);
  EXPECT_EQ(FindOp(e, Opcode::kTranspose)->dimensions(), (std::vector<int64_t>{1, 0}));
  // The expanding size-1 dimension is reshaped away before HLO's broadcast.
  const Instruction* b = FindOp(e, Opcode::kBroadcast);
  EXPECT_EQ(b->dimensions(), (std::vector<int64_t>{2}));
  EXPECT_EQ(b->operand(0)->opcode(), Opcode::kReshape);
  const Instruction* cmp = FindOp(e, Opcode::kCompare);
  EXPECT_EQ(cmp->StringAttr("direction"), "GT");
  EXPECT_EQ(cmp->StringAttr("type"), "FLOAT");
}

TEST(StableHloOpsTest, CustomCallAttributes) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0:2 = stablehlo.custom_call @foo(%x) {backend_config = "cfg", has_side_effect = true, api_version = 2 : i32} : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      %1 = stablehlo.custom_call @bar(%x) {api_version = 4 : i32, backend_config = {k = 1 : i64}, mhlo.frontend_attributes = {z = "1", a = "2"}} : (tensor<2xf32>) -> tensor<2xf32>
      return %0#0, %1 : tensor<2xf32>, tensor<2xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Instruction* foo = FindOp(Entry(*m), Opcode::kCustomCall, 0);
  EXPECT_EQ(foo->StringAttr("custom_call_target"), "foo");
  EXPECT_EQ(foo->backend_config(), "cfg");
  EXPECT_TRUE(foo->BoolAttr("custom_call_has_side_effect"));
  EXPECT_EQ(foo->StringAttr("api_version"), "API_VERSION_STATUS_RETURNING");
  EXPECT_EQ(ShapeToString(foo->shape(), false), "(f32[2], f32[2])");
  const Instruction* bar = FindOp(Entry(*m), Opcode::kCustomCall, 1);
  EXPECT_EQ(bar->StringAttr("api_version"), "API_VERSION_TYPED_FFI");
  EXPECT_TRUE(bar->backend_config_is_raw());
  EXPECT_EQ(bar->backend_config(), "{k = 1 : i64}");
  ASSERT_EQ(bar->frontend_attributes().size(), 2u);
  EXPECT_EQ(bar->frontend_attributes()[0].first, "a");
}

TEST(StableHloOpsTest, CollectivesAndChannels) {
  auto m = MustParse(R"(
    module attributes {mhlo.num_replicas = 2 : i32} {
      func.func @main(%x: tensor<2x4xf32>) -> (tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x2xf32>, tensor<2x4xf32>) {
        %0 = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>, channel_handle = #stablehlo.channel_handle<handle = 3, type = 1>, use_global_device_ids} : (tensor<2x4xf32>) -> tensor<4x4xf32>
        %1 = "stablehlo.all_reduce"(%x) ({
        ^bb0(%a: tensor<f32>, %b: tensor<f32>):
          %s = stablehlo.add %a, %b : tensor<f32>
          stablehlo.return %s : tensor<f32>
        }) {replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
        %2 = "stablehlo.all_to_all"(%x) {split_dimension = 1 : i64, concat_dimension = 0 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<2x4xf32>) -> tensor<4x2xf32>
        %3 = "stablehlo.collective_permute"(%x) {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} : (tensor<2x4xf32>) -> tensor<2x4xf32>
        return %0, %1, %2, %3 : tensor<4x4xf32>, tensor<2x4xf32>, tensor<4x2xf32>, tensor<2x4xf32>
      }
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  const Instruction* ag = FindOp(e, Opcode::kAllGather);
  EXPECT_EQ(ag->IntAttr("channel_id"), 3);
  EXPECT_TRUE(ag->BoolAttr("use_global_device_ids"));
  EXPECT_EQ(ag->FindAttr("replica_groups")->get<ReplicaGroups>().groups, (std::vector<std::vector<int64_t>>{{0, 1}}));
  EXPECT_NE(FindOp(e, Opcode::kAllReduce), nullptr);
  // split != concat: all-to-all on the split dimension, then reshape / transpose / reshape.
  EXPECT_EQ(FindOp(e, Opcode::kAllToAll)->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_NE(FindOp(e, Opcode::kTranspose), nullptr);
  EXPECT_EQ(
      FindOp(e, Opcode::kCollectivePermute)->FindAttr("source_target_pairs")->get<std::vector<std::vector<int64_t>>>(),
      (std::vector<std::vector<int64_t>>{{0, 1}, {1, 0}}));
}

TEST(StableHloOpsTest, RngFftTriangularSolveReducePrecision) {
  auto m = MustParse(R"(
    func.func @main(%s: tensor<2xui64>, %c: tensor<8xcomplex<f32>>, %a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> (tensor<2xui64>, tensor<4xui32>, tensor<8xcomplex<f32>>, tensor<3x2xf32>, tensor<3x3xf32>) {
      %st, %out = stablehlo.rng_bit_generator %s, algorithm =  PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
      %f = stablehlo.fft %c, type =  FFT, length = [8] : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
      %t = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose ADJOINT>} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
      %r = stablehlo.reduce_precision %a, format = e5m10 : tensor<3x3xf32>
      return %st, %out, %f, %t, %r : tensor<2xui64>, tensor<4xui32>, tensor<8xcomplex<f32>>, tensor<3x2xf32>, tensor<3x3xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  EXPECT_EQ(FindOp(e, Opcode::kRngBitGenerator)->StringAttr("algorithm"), "rng_philox");
  EXPECT_EQ(FindOp(e, Opcode::kFft)->StringAttr("fft_type"), "FFT");
  EXPECT_EQ(FindOp(e, Opcode::kTriangularSolve)->StringAttr("transpose_a"), "ADJOINT");
  EXPECT_EQ(FindOp(e, Opcode::kReducePrecision)->IntAttr("exponent_bits"), 5);
  EXPECT_EQ(FindOp(e, Opcode::kReducePrecision)->IntAttr("mantissa_bits"), 10);
}

TEST(StableHloOpsTest, BitcastConvertPacksBooleans) {
  auto m = MustParse(R"(
    func.func @main(%b: tensor<8xi1>, %x: tensor<i8>) -> (tensor<ui8>, tensor<8xi1>) {
      %0 = stablehlo.bitcast_convert %b : (tensor<8xi1>) -> tensor<ui8>
      %1 = stablehlo.bitcast_convert %x : (tensor<i8>) -> tensor<8xi1>
      return %0, %1 : tensor<ui8>, tensor<8xi1>
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOp(*m, Opcode::kReduce), 1);
  EXPECT_EQ(CountOp(*m, Opcode::kShiftRightLogical), 1);
}

TEST(StableHloOpsTest, BatchNormCompositeFeedsAndHostTransfers) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<2x2x2xf32>, %s: tensor<2xf32>, %t: !stablehlo.token) -> (tensor<2x2x2xf32>, tensor<f32>, !stablehlo.token) {
      %o, %mean, %var = "stablehlo.batch_norm_training"(%x, %s, %s) {epsilon = 0.001 : f32, feature_index = 2 : i64} : (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2x2x2xf32>, tensor<2xf32>, tensor<2xf32>)
      %one = stablehlo.constant dense<1.0> : tensor<f32>
      %c = stablehlo.composite "my.double" %one {composite_attributes = {k = 2 : i64}, decomposition = @double, version = 3 : i32} : (tensor<f32>) -> tensor<f32>
      %in:2 = "stablehlo.infeed"(%t) {infeed_config = "cfg"} : (!stablehlo.token) -> (tensor<3xi32>, !stablehlo.token)
      %t2 = "stablehlo.send"(%in#0, %in#1) {channel_handle = #stablehlo.channel_handle<handle = 5, type = 2>, is_host_transfer = true} : (tensor<3xi32>, !stablehlo.token) -> !stablehlo.token
      return %o, %c, %t2 : tensor<2x2x2xf32>, tensor<f32>, !stablehlo.token
    }
    func.func private @double(%a: tensor<f32>) -> tensor<f32> {
      %0 = stablehlo.add %a, %a : tensor<f32>
      return %0 : tensor<f32>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  const Instruction* bn = FindOp(e, Opcode::kBatchNormTraining);
  EXPECT_EQ(bn->IntAttr("feature_index"), 2);
  EXPECT_FLOAT_EQ(static_cast<float>(bn->FindAttr("epsilon")->get<double>()), 0.001f);
  const Instruction* call = FindOp(e, Opcode::kCall);
  EXPECT_TRUE(call->BoolAttr("is_composite"));
  EXPECT_EQ(call->frontend_attributes(), (StringMap{{"composite.attributes", "{k = 2 : i64}"},
                                                    {"composite.name", "my.double"},
                                                    {"composite.version", "3"}}));
  EXPECT_EQ(FindOp(e, Opcode::kInfeed)->StringAttr("infeed_config"), "cfg");
  const Instruction* send = FindOp(e, Opcode::kSend);
  EXPECT_EQ(send->IntAttr("channel_id"), 5);
  EXPECT_TRUE(send->BoolAttr("is_host_transfer"));
  EXPECT_EQ(e->root()->operand(2)->opcode(), Opcode::kSendDone);
}

TEST(StableHloOpsTest, CustomCallLayoutsAliasesAndDonation) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<2x3xf32> {tf.aliasing_output = 0 : i32}, %y: tensor<f32> {jax.buffer_donor = true}) -> tensor<2x3xf32> {
      %0 = stablehlo.custom_call @ffi_op(%x) {mhlo.backend_config = {mode = 1 : i32}, api_version = 4 : i32, operand_layouts = [dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      return %0 : tensor<2x3xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Instruction* cc = FindOp(Entry(*m), Opcode::kCustomCall);
  EXPECT_EQ(cc->backend_config(), "{mode = 1 : i32}");
  ASSERT_TRUE(cc->shape().layout.has_value());
  EXPECT_EQ(cc->shape().layout->minor_to_major, (std::vector<int64_t>{0, 1}));
  const auto& constraints = cc->FindAttr("operand_layout_constraints")->get<std::vector<Shape>>();
  EXPECT_EQ(ShapeToString(constraints[0]), "f32[2,3]{0,1}");
  EXPECT_EQ(cc->FindAttr("output_to_operand_aliasing")->get<std::vector<OutputOperandAlias>>().size(), 1u);
  ASSERT_EQ(m->config().input_output_alias.size(), 1u);
  EXPECT_EQ(m->config().input_output_alias[0].parameter_number, 0);
  ASSERT_EQ(m->config().buffer_donor.size(), 1u);
  EXPECT_EQ(m->config().buffer_donor[0].parameter_number, 1);
}

TEST(StableHloOpsTest, InterpreterOpsAreKeptForARunner) {
  auto m = MustParse(R"(
    module {
      func.func @f(%a: tensor<2xi64>) -> tensor<2xi64> {
        %r = stablehlo.replica_id : tensor<ui32>
        return %a : tensor<2xi64>
      }
      func.func @main() {
        %0 = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
        %1 = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
        %r:2 = "interpreter.run_parallel"(%0, %1) {programs = [[@f], [@f]]} : (tensor<2xi64>, tensor<2xi64>) -> (tensor<2xi64>, tensor<2xi64>)
        %p = interpreter.probe %r#1, probe_id = "p1" : tensor<2xi64>
        check.expect_serialized_eq %p, probe_id = "p1" : tensor<2xi64>
        func.return
      }
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  const Instruction* run = FindOp(e, Opcode::kCustomCall, 0);
  EXPECT_EQ(run->StringAttr("custom_call_target"), "interpreter.run_parallel");
  EXPECT_EQ(run->backend_config(), "{\"programs\":[[0],[0]]}");
  ASSERT_EQ(run->called_computations().size(), 1u);
  EXPECT_EQ(run->called_computation(0)->name(), "f");
  const Instruction* probe = FindOp(e, Opcode::kCustomCall, 1);
  EXPECT_EQ(probe->StringAttr("custom_call_target"), "interpreter.probe");
  EXPECT_EQ(probe->backend_config(), "{\"probe_id\":\"p1\"}");
  const Instruction* check = FindOp(e, Opcode::kCustomCall, 2);
  EXPECT_EQ(check->backend_config(), "{\"probe_id\":\"p1\",\"iter\":0}");
}

}  // namespace
}  // namespace xlac
