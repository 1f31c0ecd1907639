// Tests of the StableHLO frontend, one construct per test: syntax forms, dense literals, types, regions, multi-result
// values, locations, diagnostics and hostile input. Op mappings, checks and CHLO are in stablehlo_ops_test.cc, the
// corpus sweep in stablehlo_parser_corpus_test.cc.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "frontend/stablehlo/parser.h"
#include "gtest/gtest.h"
#include "ir/module.h"
#include "passes/verifier.h"
#include "stablehlo_test_util.h"

namespace xlac {
namespace {

using namespace stablehlo_testing;  // NOLINT: test helpers

// ---------------------------------------------------------------------------------------------------------------
// Structure: modules, functions, calls, entry selection

TEST(StableHloParserTest, PrettyAndGenericFormsAgree) {
  auto pretty = MustParse(R"(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.add %a, %b : tensor<2xf32>
      return %0 : tensor<2xf32>
    })");
  auto generic = MustParse(R"(
    "func.func"() ({
    ^bb0(%a: tensor<2xf32>, %b: tensor<2xf32>):
      %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "func.return"(%0) : (tensor<2xf32>) -> ()
    }) {sym_name = "main", function_type = (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>} : () -> ())");
  ASSERT_NE(pretty, nullptr);
  ASSERT_NE(generic, nullptr);
  auto generic_ops = MustParse(R"(
    func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xf32> {
      %0 = "stablehlo.add"(%a, %b) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
      "func.return"(%0) : (tensor<2xf32>) -> ()
    })");
  ASSERT_NE(generic_ops, nullptr);
  for (const Module* m : {pretty.get(), generic.get(), generic_ops.get()}) {
    const Instruction* root = Entry(*m)->root();
    EXPECT_EQ(root->opcode(), Opcode::kAdd);
    EXPECT_EQ(ShapeToString(root->shape(), false), "f32[2]");
    EXPECT_EQ(root->operand(0)->opcode(), Opcode::kParameter);
  }
}

TEST(StableHloParserTest, ModuleAttributesAndName) {
  auto m = MustParse(R"(
    module @jit_f attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 2 : i32} {
      func.func public @main(%arg0: tensor<i32>) -> (tensor<i32> {jax.result_info = "", mhlo.layout_mode = "default"}) {
        return %arg0 : tensor<i32>
      }
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "jit_f");
  EXPECT_EQ(m->config().num_partitions, 4);
  EXPECT_EQ(m->config().replica_count, 2);
}

TEST(StableHloParserTest, ShardingsOnArgumentsResultsAndOps) {
  auto m = MustParse(R"(
    func.func @main(%arg0: tensor<4x2xf32> {mhlo.sharding = "{devices=[2,1]0,1}"}) -> (tensor<4x2xf32> {mhlo.sharding = "{replicated}"}) {
      %0 = stablehlo.custom_call @Sharding(%arg0) {mhlo.sharding = "{maximal device=1}"} : (tensor<4x2xf32>) -> tensor<4x2xf32>
      return %0 : tensor<4x2xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  ASSERT_TRUE(entry->parameter(0)->sharding().has_value());
  EXPECT_EQ(entry->parameter(0)->sharding()->kind, Sharding::Kind::kTiled);
  EXPECT_EQ(entry->parameter(0)->sharding()->tile_dims, (std::vector<int64_t>{2, 1}));
  // The custom call has its own sharding, so the result sharding goes on a copy.
  ASSERT_TRUE(entry->root()->sharding().has_value());
  EXPECT_EQ(entry->root()->sharding()->kind, Sharding::Kind::kReplicated);
  const Instruction* cc = FindOp(entry, Opcode::kCustomCall);
  ASSERT_NE(cc, nullptr);
  EXPECT_EQ(cc->sharding()->kind, Sharding::Kind::kMaximal);
  EXPECT_EQ(cc->sharding()->device, 1);
}

TEST(StableHloParserTest, InvalidShardingPointsIntoTheString) {
  std::string err =
      ErrorOf(R"(func.func @main(%arg0: tensor<2xf32> {mhlo.sharding = "{devices=[2]0,1,"}) -> tensor<2xf32> {
  return %arg0 : tensor<2xf32>
})");
  EXPECT_NE(err.find("test.mlir:1:"), std::string::npos) << err;
  EXPECT_NE(err.find("invalid mhlo.sharding"), std::string::npos) << err;
}

TEST(StableHloParserTest, CallsAndMultiResultFunctions) {
  auto m = MustParse(R"(
    module {
      func.func @main() -> tensor<3xi32> {
        %0:2 = call @pair() : () -> (tensor<3xi32>, tensor<3xi32>)
        %1 = func.call @add(%0#0, %0#1) : (tensor<3xi32>, tensor<3xi32>) -> tensor<3xi32>
        return %1 : tensor<3xi32>
      }
      func.func private @pair() -> (tensor<3xi32>, tensor<3xi32>) {
        %c = stablehlo.constant dense<[1, 2, 3]> : tensor<3xi32>
        %d = stablehlo.iota dim = 0 : tensor<3xi32>
        return %c, %d : tensor<3xi32>, tensor<3xi32>
      }
      func.func private @add(%a: tensor<3xi32>, %b: tensor<3xi32>) -> tensor<3xi32> {
        %0 = stablehlo.add %a, %b : tensor<3xi32>
        return %0 : tensor<3xi32>
      }
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(CountOp(*m, Opcode::kCall), 2);
  const Instruction* root = entry->root();
  ASSERT_EQ(root->opcode(), Opcode::kCall);
  EXPECT_EQ(root->called_computation(0)->name(), "add");
  EXPECT_EQ(root->operand(0)->opcode(), Opcode::kGetTupleElement);
  EXPECT_EQ(root->operand(1)->IntAttr("index"), 1);
  const Computation* pair = m->FindComputation("pair");
  ASSERT_NE(pair, nullptr);
  EXPECT_EQ(pair->root()->opcode(), Opcode::kTuple);
  // Callees come before their callers.
  EXPECT_EQ(m->computations().back().get(), entry);
}

TEST(StableHloParserTest, RecursionIsRejected) {
  std::string err = ErrorOf(R"(
    func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = call @main(%a) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    })");
  EXPECT_NE(err.find("recursive call to @main"), std::string::npos) << err;
}

TEST(StableHloParserTest, SeveralTestFunctionsGetASynthesizedEntry) {
  auto m = MustParse(R"(
    func.func @first() {
      %0 = stablehlo.constant dense<1> : tensor<i64>
      check.expect_eq_const %0, dense<1> : tensor<i64>
      func.return
    }
    func.func @second() {
      %0 = stablehlo.constant dense<2.0> : tensor<f32>
      check.expect_almost_eq_const %0, dense<2.0> : tensor<f32>
      func.return
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(CountOp(*m, Opcode::kCall), 2);
  EXPECT_EQ(entry->root()->opcode(), Opcode::kTuple);
}

TEST(StableHloParserTest, SplitInputModulesAreMerged) {
  auto m = MustParse(R"(
    module {
      func.func @a() {
        func.return
      }
    }
    // -----
    module {
      func.func @b() {
        func.return
      }
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->FindComputation("a"), nullptr);
  EXPECT_NE(m->FindComputation("b"), nullptr);
}

// ---------------------------------------------------------------------------------------------------------------
// Multi-result values and tuples

TEST(StableHloParserTest, MultiResultValuesBecomeGetTupleElement) {
  auto m = MustParse(R"(
    func.func @main(%a: tensor<4xf32>, %b: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xf32>) {
      %0:2 = "stablehlo.sort"(%a, %b) <{dimension = 0 : i64, is_stable = true}> ({
      ^bb0(%x: tensor<f32>, %y: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>):
        %c = stablehlo.compare LT, %x, %y, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }) : (tensor<4xf32>, tensor<4xi32>) -> (tensor<4xf32>, tensor<4xi32>)
      return %0#1, %0#0 : tensor<4xi32>, tensor<4xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Instruction* sort = FindOp(Entry(*m), Opcode::kSort);
  ASSERT_NE(sort, nullptr);
  EXPECT_EQ(ShapeToString(sort->shape(), false), "(f32[4], s32[4])");
  EXPECT_EQ(sort->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_TRUE(sort->BoolAttr("is_stable"));
  const Computation* cmp = sort->called_computation(0);
  EXPECT_EQ(cmp->parameter_count(), 4);
  EXPECT_EQ(cmp->root()->StringAttr("type"), "TOTALORDER");
  const Instruction* root = Entry(*m)->root();
  ASSERT_EQ(root->opcode(), Opcode::kTuple);
  EXPECT_EQ(root->operand(0)->IntAttr("index"), 1);
}

TEST(StableHloParserTest, TupleTypesAndTokens) {
  auto m = MustParse(R"(
    func.func @main(%t: !stablehlo.token, %x: tensor<2xf32>) -> (tuple<tensor<2xf32>, tuple<>>, !stablehlo.token) {
      %e = stablehlo.tuple : tuple<>
      %0 = stablehlo.tuple %x, %e : tuple<tensor<2xf32>, tuple<>>
      %1 = stablehlo.get_tuple_element %0[0] : (tuple<tensor<2xf32>, tuple<>>) -> tensor<2xf32>
      %2 = stablehlo.after_all %t : !stablehlo.token
      return %0, %2 : tuple<tensor<2xf32>, tuple<>>, !stablehlo.token
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ShapeToString(Entry(*m)->root()->shape(), false), "((f32[2], ()), token[])");
  EXPECT_EQ(CountOp(*m, Opcode::kAfterAll), 1);
}

TEST(StableHloParserTest, UseOfUndefinedValueAndWrongResultIndex) {
  std::string err = ErrorOf("func.func @main() -> tensor<f32> {\n  return %nope : tensor<f32>\n}\n");
  EXPECT_NE(err.find("test.mlir:2:10: error: use of undefined value '%nope'"), std::string::npos) << err;
  err = ErrorOf(R"(func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0:2 = stablehlo.optimization_barrier %a, %a : tensor<f32>, tensor<f32>
  return %0#2 : tensor<f32>
})");
  EXPECT_NE(err.find("'%0' has 2 results; there is no #2"), std::string::npos) << err;
}

TEST(StableHloParserTest, OperandTypeMismatchIsReported) {
  std::string err = ErrorOf(R"(func.func @main(%a: tensor<2xf32>) -> tensor<3xf32> {
  %0 = stablehlo.abs %a : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
})");
  EXPECT_NE(err.find("test.mlir:2:22: error: use of value '%a' expects type tensor<3xf32>"), std::string::npos) << err;
}

// ---------------------------------------------------------------------------------------------------------------
// Regions

TEST(StableHloParserTest, ReduceAppliesReducerAndGenericForms) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<4x5xf32>, %i: tensor<4x5xi32>) -> (tensor<4xf32>, tensor<5xf32>, tensor<4xi32>) {
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %zi = stablehlo.constant dense<0> : tensor<i32>
      %0 = stablehlo.reduce(%x init: %z) applies stablehlo.add across dimensions = [1] : (tensor<4x5xf32>, tensor<f32>) -> tensor<4xf32>
      %1 = "stablehlo.reduce"(%x, %z) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %m = stablehlo.maximum %a, %b : tensor<f32>
        stablehlo.return %m : tensor<f32>
      }) {dimensions = array<i64: 0>} : (tensor<4x5xf32>, tensor<f32>) -> tensor<5xf32>
      %2:2 = stablehlo.reduce(%x init: %z), (%i init: %zi) across dimensions = [1] : (tensor<4x5xf32>, tensor<4x5xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
       reducer(%a: tensor<f32>, %c: tensor<f32>) (%b: tensor<i32>, %d: tensor<i32>)  {
        %s = stablehlo.add %a, %c : tensor<f32>
        %t = stablehlo.add %b, %d : tensor<i32>
        stablehlo.return %s, %t : tensor<f32>, tensor<i32>
      }
      return %0, %1, %2#1 : tensor<4xf32>, tensor<5xf32>, tensor<4xi32>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  const Instruction* r0 = FindOp(entry, Opcode::kReduce, 0);
  const Instruction* r1 = FindOp(entry, Opcode::kReduce, 1);
  const Instruction* r2 = FindOp(entry, Opcode::kReduce, 2);
  ASSERT_TRUE(r0 && r1 && r2);
  EXPECT_EQ(r0->dimensions(), (std::vector<int64_t>{1}));
  EXPECT_EQ(r0->called_computation(0)->root()->opcode(), Opcode::kAdd);
  EXPECT_EQ(r1->dimensions(), (std::vector<int64_t>{0}));
  EXPECT_EQ(r1->called_computation(0)->root()->opcode(), Opcode::kMaximum);
  // reducer(%a, %c) (%b, %d): block arguments are (%a, %b, %c, %d).
  const Computation* body = r2->called_computation(0);
  ASSERT_EQ(body->parameter_count(), 4);
  EXPECT_EQ(ShapeToString(body->parameter(1)->shape(), false), "s32[]");
  EXPECT_EQ(ShapeToString(r2->shape(), false), "(f32[4], s32[4])");
  const Instruction* add_f = body->root()->operand(0);
  EXPECT_EQ(add_f->operand(0)->parameter_number(), 0);
  EXPECT_EQ(add_f->operand(1)->parameter_number(), 2);
}

TEST(StableHloParserTest, WhileCapturesConstantsAndValues) {
  auto m = MustParse(R"(
    func.func @main(%n: tensor<i64>) -> tensor<i64> {
      %init = stablehlo.constant dense<0> : tensor<i64>
      %one = stablehlo.constant dense<1> : tensor<i64>
      %r0, %r1 = stablehlo.while(%i = %init, %s = %init) : tensor<i64>, tensor<i64>
      cond {
        %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      } do {
        %a = stablehlo.add %i, %one : tensor<i64>
        %b = stablehlo.add %s, %i : tensor<i64>
        stablehlo.return %a, %b : tensor<i64>, tensor<i64>
      }
      return %r1 : tensor<i64>
    })");
  ASSERT_NE(m, nullptr);
  const Instruction* loop = FindOp(Entry(*m), Opcode::kWhile);
  ASSERT_NE(loop, nullptr);
  // (i, s, captured %n); the constant %one is cloned into the body instead.
  EXPECT_EQ(ShapeToString(loop->shape(), false), "(s64[], s64[], s64[])");
  const Computation* cond = loop->called_computation(0);
  const Computation* body = loop->called_computation(1);
  EXPECT_EQ(ShapeToString(cond->root()->shape(), false), "pred[]");
  EXPECT_EQ(body->root()->operand_count(), 3);
  EXPECT_EQ(body->root()->operand(2)->opcode(), Opcode::kGetTupleElement);
  EXPECT_NE(FindOp(body, Opcode::kConstant), nullptr);
  EXPECT_EQ(Entry(*m)->root()->IntAttr("index"), 1);
}

TEST(StableHloParserTest, SingleValueWhileIsNotTupled) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<f32>) -> tensor<f32> {
      %0 = "stablehlo.while"(%x) ({
      ^bb0(%a: tensor<f32>):
        %lim = stablehlo.constant dense<10.0> : tensor<f32>
        %c = stablehlo.compare LT, %a, %lim : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }, {
      ^bb0(%a: tensor<f32>):
        %d = stablehlo.add %a, %a : tensor<f32>
        stablehlo.return %d : tensor<f32>
      }) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ShapeToString(Entry(*m)->root()->shape(), false), "f32[]");
  EXPECT_EQ(Entry(*m)->root()->opcode(), Opcode::kWhile);
}

TEST(StableHloParserTest, IfAndCaseBecomeConditionals) {
  auto m = MustParse(R"(
    func.func @main(%p: tensor<i1>, %k: tensor<i32>, %x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0 = "stablehlo.if"(%p) ({
        %n = stablehlo.negate %x : tensor<2xf32>
        stablehlo.return %n : tensor<2xf32>
      }, {
        stablehlo.return %x : tensor<2xf32>
      }) : (tensor<i1>) -> tensor<2xf32>
      %1 = "stablehlo.case"(%k) ({
        %c = stablehlo.constant dense<1.0> : tensor<2xf32>
        stablehlo.return %c : tensor<2xf32>
      }, {
        stablehlo.return %x : tensor<2xf32>
      }, {
        %a = stablehlo.abs %x : tensor<2xf32>
        stablehlo.return %a : tensor<2xf32>
      }) : (tensor<i32>) -> tensor<2xf32>
      return %0, %1 : tensor<2xf32>, tensor<2xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Instruction* c0 = FindOp(Entry(*m), Opcode::kConditional, 0);
  const Instruction* c1 = FindOp(Entry(*m), Opcode::kConditional, 1);
  ASSERT_TRUE(c0 && c1);
  EXPECT_EQ(c0->called_computations().size(), 2u);
  EXPECT_EQ(c0->operand_count(), 3);
  EXPECT_EQ(ShapeToString(c0->operand(1)->shape(), false), "(f32[2])");  // the captured %x
  EXPECT_EQ(c1->called_computations().size(), 3u);
  EXPECT_EQ(c1->operand_count(), 4);
}

TEST(StableHloParserTest, RegionsCannotCaptureNonConstants) {
  std::string err = ErrorOf(R"(func.func @main(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<f32> {
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %0 = "stablehlo.reduce"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %y : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
})");
  EXPECT_NE(err.find("test.mlir:5:28: error: '%y' is defined outside the region of 'stablehlo.reduce'"),
            std::string::npos)
      << err;
}

TEST(StableHloParserTest, ScatterGatherReduceWindowSelectAndScatter) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<3x4xf32>, %idx: tensor<2x1xi64>, %upd: tensor<2x4xf32>) -> (tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>) {
      %0 = "stablehlo.scatter"(%x, %idx, %upd) <{scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<3x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>
      %1 = "stablehlo.gather"(%x, %idx) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 4>}> : (tensor<3x4xf32>, tensor<2x1xi64>) -> tensor<2x4xf32>
      %z = stablehlo.constant dense<0.0> : tensor<f32>
      %2 = "stablehlo.reduce_window"(%x, %z) <{padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<3x4xf32>, tensor<f32>) -> tensor<2x3xf32>
      %src = stablehlo.constant dense<1.0> : tensor<2x3xf32>
      %3 = "stablehlo.select_and_scatter"(%x, %src, %z) <{window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 1>, padding = dense<[[0, 1], [0, 0]]> : tensor<2x2xi64>}> ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %c = stablehlo.compare GE, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
        stablehlo.return %c : tensor<i1>
      }, {
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = stablehlo.add %a, %b : tensor<f32>
        stablehlo.return %s : tensor<f32>
      }) : (tensor<3x4xf32>, tensor<2x3xf32>, tensor<f32>) -> tensor<3x4xf32>
      return %0, %1, %2, %3 : tensor<3x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<3x4xf32>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* entry = Entry(*m);
  const Instruction* scatter = FindOp(entry, Opcode::kScatter);
  ASSERT_NE(scatter, nullptr);
  EXPECT_EQ(scatter->IntListAttr("update_window_dims"), (std::vector<int64_t>{1}));
  EXPECT_EQ(scatter->IntListAttr("inserted_window_dims"), (std::vector<int64_t>{0}));
  EXPECT_TRUE(scatter->BoolAttr("unique_indices"));
  EXPECT_EQ(scatter->IntAttr("index_vector_dim"), 1);
  const Instruction* gather = FindOp(entry, Opcode::kGather);
  EXPECT_EQ(gather->IntListAttr("slice_sizes"), (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(gather->IntListAttr("start_index_map"), (std::vector<int64_t>{0}));
  const Instruction* rw = FindOp(entry, Opcode::kReduceWindow);
  const Window& w = rw->FindAttr("window")->get<Window>();
  ASSERT_EQ(w.dimensions.size(), 2u);
  EXPECT_EQ(w.dimensions[0].size, 2);
  EXPECT_EQ(w.dimensions[0].stride, 2);
  EXPECT_EQ(w.dimensions[0].padding_high, 1);
  const Instruction* sas = FindOp(entry, Opcode::kSelectAndScatter);
  EXPECT_EQ(sas->called_computations().size(), 2u);
  EXPECT_EQ(sas->called_computation(0)->root()->opcode(), Opcode::kCompare);
}

// ---------------------------------------------------------------------------------------------------------------
// dense<...> literals and types

// The literal of the constant returned by @main.
Literal ConstantOf(std::string_view value_and_type) {
  std::string text = "func.func @main() -> tensor<*xf32> {}";  // placeholder, replaced below
  std::string type(value_and_type.substr(value_and_type.rfind(": ") + 2));
  text = "func.func @main() -> " + type + " {\n  %0 = stablehlo.constant " + std::string(value_and_type) +
         "\n  return %0 : " + type + "\n}\n";
  auto m = MustParse(text);
  if (m == nullptr) return Literal();
  const Instruction* root = m->entry_computation()->root();
  EXPECT_EQ(root->opcode(), Opcode::kConstant);
  return root->literal();
}

TEST(StableHloDenseTest, ListsNestedListsAndSplats) {
  Literal a = ConstantOf("dense<[[1, 2, 3], [4, 5, -6]]> : tensor<2x3xi32>");
  EXPECT_EQ(ShapeToString(a.shape(), false), "s32[2,3]");
  EXPECT_EQ(a.Get<int32_t>(5), -6);
  Literal splat = ConstantOf("dense<2.5> : tensor<2x2xf32>");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(splat.Get<float>(i), 2.5f);
  Literal empty = ConstantOf("dense<> : tensor<0x3xf32>");
  EXPECT_EQ(empty.element_count(), 0);
  Literal scalar = ConstantOf("dense<6.89582666E-5> : tensor<f32>");
  EXPECT_FLOAT_EQ(scalar.Get<float>(0), 6.89582666E-5f);
}

TEST(StableHloDenseTest, HexBlobsAndHexElements) {
  Literal f = ConstantOf("dense<\"0x0000803F000000C0\"> : tensor<2xf32>");
  EXPECT_EQ(f.Get<float>(0), 1.0f);
  EXPECT_EQ(f.Get<float>(1), -2.0f);
  Literal splat = ConstantOf("dense<\"0x0000803F\"> : tensor<3xf32>");
  EXPECT_EQ(splat.Get<float>(2), 1.0f);
  Literal b = ConstantOf("dense<\"0x01000100\"> : tensor<4xi1>");  // one byte per element
  EXPECT_EQ(b.Get<uint8_t>(0), 1);
  EXPECT_EQ(b.Get<uint8_t>(1), 0);
  EXPECT_EQ(b.Get<uint8_t>(2), 1);
  Literal c = ConstantOf("dense<\"0x0000803F00000040\"> : tensor<1xcomplex<f32>>");  // (1, 2) interleaved
  EXPECT_EQ(c.Get<std::complex<float>>(0), std::complex<float>(1, 2));
  Literal inf = ConstantOf("dense<0x7F800000> : tensor<f32>");
  EXPECT_TRUE(std::isinf(inf.Get<float>(0)));
  Literal bf16 = ConstantOf("dense<[0x7FC0, 1.5]> : tensor<2xbf16>");
  EXPECT_EQ(bf16.Get<uint16_t>(0), 0x7FC0);
  EXPECT_EQ(bf16.Get<uint16_t>(1), 0x3FC0);
  Literal i4 = ConstantOf("dense<\"0x0F07\"> : tensor<2xi4>");  // sign-extended from 4 bits
  EXPECT_EQ(i4.Get<int8_t>(0), -1);
  EXPECT_EQ(i4.Get<int8_t>(1), 7);
}

TEST(StableHloDenseTest, ComplexBoolsAndWideIntegers) {
  Literal c = ConstantOf("dense<[(1.5, -2.0), (0.0, 3.25)]> : tensor<2xcomplex<f64>>");
  EXPECT_EQ(c.Get<std::complex<double>>(0), std::complex<double>(1.5, -2.0));
  EXPECT_EQ(c.Get<std::complex<double>>(1), std::complex<double>(0.0, 3.25));
  Literal b = ConstantOf("dense<[true, false, true]> : tensor<3xi1>");
  EXPECT_EQ(b.Get<uint8_t>(0), 1);
  EXPECT_EQ(b.Get<uint8_t>(1), 0);
  Literal u = ConstantOf("dense<18446744073709551615> : tensor<ui64>");
  EXPECT_EQ(u.Get<uint64_t>(0), ~uint64_t{0});
  Literal f8 = ConstantOf("dense<[1.0, -0.5]> : tensor<2xf8E4M3FN>");
  EXPECT_EQ(ShapeToString(f8.shape(), false), "f8e4m3fn[2]");
  EXPECT_EQ(f8.Get<uint8_t>(0), 0x38);
}

TEST(StableHloDenseTest, BadLiteralsAreDiagnosed) {
  EXPECT_NE(ErrorOf("func.func @main() -> tensor<2xi8> {\n  %0 = stablehlo.constant dense<[1, 300]> : tensor<2xi8>\n"
                    "  return %0 : tensor<2xi8>\n}\n")
                .find("test.mlir:2:37: error: integer value 300 is out of range for s8"),
            std::string::npos);
  EXPECT_NE(ErrorOf("func.func @main() -> tensor<3xi32> {\n  %0 = stablehlo.constant dense<[1, 2]> : tensor<3xi32>\n"
                    "  return %0 : tensor<3xi32>\n}\n")
                .find("dense literal has shape [2], but its type is tensor<3xi32>"),
            std::string::npos);
  EXPECT_NE(
      ErrorOf("func.func @main() -> tensor<2xf32> {\n  %0 = stablehlo.constant dense<\"0x0000\"> : tensor<2xf32>\n"
              "  return %0 : tensor<2xf32>\n}\n")
          .find("hex string has 2 bytes, but tensor<2xf32> needs 8"),
      std::string::npos);
  EXPECT_NE(ErrorOf("func.func @main() -> tensor<2x2xf32> {\n  %0 = stablehlo.constant dense<[[1.0], [2.0, 3.0]]> : "
                    "tensor<2x2xf32>\n  return %0 : tensor<2x2xf32>\n}\n")
                .find("sibling list"),
            std::string::npos);
  EXPECT_NE(ErrorOf("func.func @main() -> tensor<f16> {\n  %0 = stablehlo.constant dense<1.0e10> : tensor<f16>\n"
                    "  return %0 : tensor<f16>\n}\n")
                .find("overflows f16"),
            std::string::npos);
}

TEST(StableHloTypesTest, ElementTypes) {
  auto m = MustParse(R"(
    func.func @main(%a: tensor<2xi1>, %b: tensor<ui8>, %c: tensor<3xbf16>, %d: tensor<f8E5M2>, %e: tensor<complex<f32>>,
                    %f: tensor<2x0xi4>, %g: tensor<si16>, %h: tensor<f8E4M3B11FNUZ>) -> tensor<2xi1> {
      return %a : tensor<2xi1>
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  const char* expected[] = {"pred[2]", "u8[]", "bf16[3]", "f8e5m2[]", "c64[]", "s4[2,0]", "s16[]", "f8e4m3b11fnuz[]"};
  for (int i = 0; i < 8; ++i) EXPECT_EQ(ShapeToString(e->parameter(i)->shape(), false), expected[i]);
}

TEST(StableHloTypesTest, BoundedDynamicDimensions) {
  auto m = MustParse(R"(
    func.func @main(%a: tensor<?x3xf32, #stablehlo.bounds<4, ?>>) -> tensor<?x3xf32, #stablehlo.bounds<4, ?>> {
      return %a : tensor<?x3xf32, #stablehlo.bounds<4, ?>>
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(ShapeToString(Entry(*m)->parameter(0)->shape(), false), "f32[<=4,3]");
}

TEST(StableHloTypesTest, DynamicAndQuantizedAreRejected) {
  std::string err =
      ErrorOf("func.func @main(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {\n  return %a : tensor<?x3xf32>\n}\n");
  EXPECT_NE(err.find("dynamic shapes are not supported: tensor<?x3xf32>"), std::string::npos) << err;
  // !quant.uniform is lowered (lower_quant.cc, test/lit/stablehlo/quant-*.mlir); other quantized types are not.
  err = ErrorOf(R"(func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.any<i8:f32>>
  %1 = stablehlo.uniform_dequantize %0 : (tensor<2x!quant.any<i8:f32>>) -> tensor<2xf32>
  return %1 : tensor<2xf32>
})");
  EXPECT_NE(err.find("error: quantized types are not supported: tensor<2x!quant.any<i8:f32>>"), std::string::npos)
      << err;
  err = ErrorOf(
      R"(func.func @main(%a: tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:2}, {{0.5}, {0.25}}>>) -> tensor<2x2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x2x!quant.uniform<i8:f32:{0:1, 1:2}, {{0.5}, {0.25}}>>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
})");
  EXPECT_NE(err.find("cannot read the quantized type: sub-channel (blockwise) quantization is not supported"),
            std::string::npos)
      << err;
}

// ---------------------------------------------------------------------------------------------------------------
// Checks, CHLO, locations

TEST(StableHloChecksTest, CheckOpsBecomeCustomCalls) {
  auto m = MustParse(R"(
    func.func @main() {
      %a = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
      check.expect_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>
      check.expect_almost_eq_const %a, dense<[1.0, 2.0]> : tensor<2xf32>
      check.expect_almost_eq %a, %a, tolerance = 0.1 : tensor<2xf32>
      check.expect_close %a, %a, max_ulp_difference = 3 : tensor<2xf32>, tensor<2xf32>
      stablehlo.custom_call @check.expect_close(%a, %a) {has_side_effect = true} : (tensor<2xf32>, tensor<2xf32>) -> ()
      "check.expect_eq_const"(%a) <{value = dense<[1.0, 2.0]> : tensor<2xf32>}> : (tensor<2xf32>) -> ()
      func.return
    })");
  ASSERT_NE(m, nullptr);
  const Computation* e = Entry(*m);
  std::vector<const Instruction*> checks;
  for (const auto& inst : e->instructions()) {
    if (inst->opcode() == Opcode::kCustomCall) checks.push_back(inst.get());
  }
  ASSERT_EQ(checks.size(), 6u);
  EXPECT_EQ(checks[0]->StringAttr("custom_call_target"), "check.expect_eq");
  EXPECT_EQ(checks[0]->operand(1)->opcode(), Opcode::kConstant);
  EXPECT_TRUE(checks[0]->BoolAttr("custom_call_has_side_effect"));
  EXPECT_EQ(ShapeToString(checks[0]->shape(), false), "()");
  EXPECT_EQ(checks[1]->backend_config(), "{\"tolerance\":0.0001}");
  EXPECT_EQ(checks[2]->backend_config(), "{\"tolerance\":0.10000000000000001}");
  EXPECT_EQ(checks[3]->backend_config(), "{\"max_ulp_difference\":3,\"min_ulp_difference\":0}");
  EXPECT_EQ(checks[4]->StringAttr("custom_call_target"), "check.expect_close");
  EXPECT_EQ(checks[4]->backend_config(), "");
  EXPECT_EQ(checks[5]->StringAttr("custom_call_target"), "check.expect_eq");
}

TEST(StableHloChloTest, DecompositionsLeaveOnlyHlo) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<4xf32>, %h: tensor<4xbf16>, %d: tensor<4xf64>) -> (tensor<4xf32>, tensor<4xbf16>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>) {
      %0 = chlo.lgamma %x : tensor<4xf32> -> tensor<4xf32>
      %1 = chlo.digamma %h : tensor<4xbf16> -> tensor<4xbf16>
      %2 = chlo.erf_inv %d : tensor<4xf64> -> tensor<4xf64>
      %3 = chlo.erfc %x : tensor<4xf32> -> tensor<4xf32>
      %4 = chlo.bessel_i1e %x : tensor<4xf32> -> tensor<4xf32>
      %5 = chlo.next_after %x, %x : tensor<4xf32>, tensor<4xf32> -> tensor<4xf32>
      %6 = chlo.zeta %d, %d : tensor<4xf64>, tensor<4xf64> -> tensor<4xf64>
      %7 = "chlo.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
      return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<4xf32>, tensor<4xbf16>, tensor<4xf64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf64>, tensor<4xf32>
    })");
  ASSERT_NE(m, nullptr);
  // bf16 digamma is computed in f32.
  EXPECT_GE(CountOp(*m, Opcode::kConvert), 2);
  EXPECT_GE(CountOp(*m, Opcode::kBitcastConvert), 2);
}

TEST(StableHloChloTest, DirectMappingsAndBroadcasting) {
  auto m = MustParse(R"(
    func.func @main(%x: tensor<4xf32>, %s: tensor<f32>, %c: tensor<4xcomplex<f32>>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<2xf32>, tensor<2xi32>) {
      %0 = chlo.tan %x : tensor<4xf32> -> tensor<4xf32>
      %1 = chlo.acosh %x : tensor<4xf32> -> tensor<4xf32>
      %2 = "chlo.asin"(%c) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
      %3 = chlo.broadcast_add %x, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
      %4:2 = chlo.top_k(%x, k = 2) : tensor<4xf32> -> (tensor<2xf32>, tensor<2xi32>)
      return %0, %1, %2, %3, %4#0, %4#1 : tensor<4xf32>, tensor<4xf32>, tensor<4xcomplex<f32>>, tensor<4xf32>, tensor<2xf32>, tensor<2xi32>
    })");
  ASSERT_NE(m, nullptr);
  // Real operands expand like the CHLO legalization (tan = sin / cos); complex ones keep the HLO opcode.
  EXPECT_EQ(CountOp(*m, Opcode::kTan), 0);
  EXPECT_EQ(CountOp(*m, Opcode::kSin), 1);
  EXPECT_EQ(CountOp(*m, Opcode::kAcosh), 0);
  EXPECT_EQ(CountOp(*m, Opcode::kLog1p), 1);
  EXPECT_EQ(CountOp(*m, Opcode::kAsin), 1);
  const Instruction* add = FindOp(Entry(*m), Opcode::kAdd, CountOp(*m, Opcode::kAdd) - 1);
  EXPECT_EQ(add->operand(1)->opcode(), Opcode::kBroadcast);  // the scalar of broadcast_add
  EXPECT_EQ(FindOp(Entry(*m), Opcode::kTopK)->IntAttr("k"), 2);
}

TEST(StableHloChloTest, UnsupportedChloOpIsReportedAtTheOp) {
  std::string err = ErrorOf(R"(func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.frobnicate %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
})");
  EXPECT_NE(err.find("test.mlir:2:8: error: unsupported op 'chlo.frobnicate'"), std::string::npos) << err;
}

TEST(StableHloLocationsTest, LocationsBecomeMetadata) {
  auto m = MustParse(R"(func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = stablehlo.negate %x : tensor<f32> loc(#loc2)
  %1 = stablehlo.abs %0 : tensor<f32> loc("abs"("model.py":7:3))
  return %1 : tensor<f32>
}
#loc1 = loc("model.py":12:5)
#loc2 = loc("jit(f)/neg"(#loc1))
)");
  ASSERT_NE(m, nullptr);
  const Instruction* neg = FindOp(Entry(*m), Opcode::kNegate);
  EXPECT_EQ(neg->metadata().op_name, "jit(f)/neg");
  EXPECT_EQ(neg->metadata().source_file, "model.py");
  EXPECT_EQ(neg->metadata().source_line, 12);
  EXPECT_EQ(neg->loc().line, 2);
  EXPECT_EQ(neg->loc().col, 3);
  const Instruction* abs = FindOp(Entry(*m), Opcode::kAbs);
  EXPECT_EQ(abs->metadata().op_name, "abs");
  EXPECT_EQ(abs->metadata().source_line, 7);
  EXPECT_EQ(abs->loc().line, 3);
}

// ---------------------------------------------------------------------------------------------------------------
// Diagnostics and hostile input

TEST(StableHloDiagnosticsTest, SyntaxErrorsPointAtTheToken) {
  std::string err =
      ErrorOf("func.func @main() -> tensor<f32> {\n  %0 = stablehlo.constant dense<1.0> tensor<f32>\n}\n");
  EXPECT_NE(err.find("test.mlir:2:38: error: expected ':' before the dense literal type"), std::string::npos) << err;
  err = ErrorOf("func.func @main() {\n  %0 = stablehlo.add %a, : tensor<f32>\n");
  EXPECT_NE(err.find("test.mlir:2:"), std::string::npos) << err;
  err = ErrorOf("func.func @main() -> tensor<2x3xf32 {\n}\n");
  EXPECT_NE(err.find("test.mlir:1:"), std::string::npos) << err;
  err = ErrorOf(
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %0 = stablehlo.frob %a : tensor<f32>\n"
      "  return %0 : tensor<f32>\n}\n");
  EXPECT_NE(err.find("test.mlir:2:8: error: unsupported op 'stablehlo.frob'"), std::string::npos) << err;
  err = ErrorOf(
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n  %a = stablehlo.abs %a : tensor<f32>\n"
      "  return %a : tensor<f32>\n}\n");
  EXPECT_NE(err.find("redefinition of SSA value '%a'"), std::string::npos) << err;
  err = ErrorOf("func.func @main(%a: tensor<f32>) -> tensor<2xf32> {\n  return %a : tensor<f32>\n}\n");
  EXPECT_NE(err.find("but the signature declares tensor<2xf32>"), std::string::npos) << err;
  // A dimension list cut off by the end of the input (found by stablehlo_parser_fuzzer: read past the end).
  err = ErrorOf("func.func @main() {\n  %0 = stablehlo.constant dense<1.0> : tensor<?x4x3x\n");
  EXPECT_NE(err.find("test.mlir:3:1: error: expected a type, but found end of input"), std::string::npos) << err;
}

TEST(StableHloDiagnosticsTest, DeepNestingIsBounded) {
  std::string deep_type = "func.func @main(%a: ";
  for (int i = 0; i < 100000; ++i) deep_type += "tuple<";
  EXPECT_NE(ErrorOf(deep_type).find("maximum nesting depth"), std::string::npos);
  std::string deep_attr = "func.func @main() attributes {a = ";
  for (int i = 0; i < 100000; ++i) deep_attr += "[";
  EXPECT_NE(ErrorOf(deep_attr).find("maximum nesting depth"), std::string::npos);
  std::string deep_dense = "func.func @main() -> tensor<f32> {\n %0 = stablehlo.constant dense<";
  for (int i = 0; i < 100000; ++i) deep_dense += "[";
  EXPECT_NE(ErrorOf(deep_dense).find("maximum nesting depth"), std::string::npos);
  std::string deep_regions = "func.func @main(%p: tensor<i1>) {\n";
  for (int i = 0; i < 5000; ++i) deep_regions += "\"stablehlo.if\"(%p) ({\n";
  EXPECT_NE(ErrorOf(deep_regions).find("maximum nesting depth"), std::string::npos);
}

TEST(StableHloDiagnosticsTest, HugeLiteralsAreRefused) {
  std::string err = ErrorOf(
      "func.func @main() -> tensor<100000x100000xf32> {\n"
      "  %0 = stablehlo.constant dense<0.0> : tensor<100000x100000xf32>\n"
      "  return %0 : tensor<100000x100000xf32>\n}\n");
  EXPECT_NE(err.find("is too large"), std::string::npos) << err;
}

// Every prefix of a valid module either parses or fails with a located diagnostic: no crash, no silent failure.
TEST(StableHloDiagnosticsTest, TruncatedInputNeverCrashes) {
  const std::string text = R"(module @m attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<2x3xf32> {mhlo.sharding = "{replicated}"}) -> (tensor<3xf32>) {
    %cst = stablehlo.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
    %h = stablehlo.constant dense<"0x0000803F"> : tensor<f32>
    %0 = stablehlo.add %arg0, %cst : tensor<2x3xf32>
    %1 = stablehlo.reduce(%0 init: %h) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %2:2 = "stablehlo.sort"(%1, %1) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %p = stablehlo.compare LT, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %p : tensor<i1>
    }) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    return %2#1 : tensor<3xf32> loc(#loc1)
  }
}
#loc1 = loc("x.py":1:2)
)";
  ASSERT_NE(MustParse(text), nullptr);
  for (size_t n = 0; n < text.size(); ++n) {
    SourceFile file("t.mlir", std::string_view(text).substr(0, n));
    DiagnosticEngine diags;
    std::unique_ptr<Module> module = ParseStableHloModule(file, diags);
    if (module == nullptr) {
      ASSERT_TRUE(diags.has_errors()) << "silent failure at prefix " << n;
      EXPECT_TRUE(diags.diagnostics()[0].loc.known()) << diags.Render(file);
    }
  }
}

TEST(StableHloDiagnosticsTest, GarbageNeverCrashes) {
  uint32_t state = 12345;
  auto next = [&]() {
    state = state * 1103515245u + 12345u;
    return state >> 16;
  };
  const std::string alphabet = "%@^#!(){}[]<>,:=-x?\"0123456789.eE abcdfijnostu_\n";
  const std::string seed =
      "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  %0 = stablehlo.add %a, %a : "
      "tensor<2xf32>\n  return %0 : tensor<2xf32>\n}\n";
  for (int round = 0; round < 3000; ++round) {
    std::string text = seed;
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = next() % (text.size() + 1);
      if (next() % 2 == 0 && at < text.size()) {
        text[at] = alphabet[next() % alphabet.size()];
      } else {
        text.insert(at, 1, alphabet[next() % alphabet.size()]);
      }
    }
    SourceFile file("g.mlir", text);
    DiagnosticEngine diags;
    std::unique_ptr<Module> module = ParseStableHloModule(file, diags);
    if (module == nullptr) {
      ASSERT_TRUE(diags.has_errors());
    } else {
      DiagnosticEngine verify_diags;
      VerifyModule(*module, verify_diags);
    }
  }
}

}  // namespace
}  // namespace xlac
