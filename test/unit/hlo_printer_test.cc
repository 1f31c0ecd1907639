// Unit tests for the HLO printer: modules built through the IR API must print exactly as XLA's
// HloModule::ToString (long form) and ShortParsable (short form) do; sub-grammar printers are checked directly.
#include <cctype>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "ir/float_types.h"
#include "ir/module.h"

namespace xlac {
namespace {

using P = PrimitiveType;

Shape Arr(P type, std::vector<int64_t> dims) { return Shape::Array(type, std::move(dims)); }
Shape F32(std::vector<int64_t> dims) { return Arr(P::kF32, std::move(dims)); }
Shape Scalar(P type) { return Shape::Scalar(type); }

Instruction* Add(Computation& c, Opcode op, std::string name, Shape shape, std::vector<Instruction*> operands) {
  return c.AddInstruction(Instruction::Create(op, std::move(name), std::move(shape), std::move(operands)));
}
Instruction* Param(Computation& c, int64_t n, std::string name, Shape shape) {
  return c.AddInstruction(Instruction::CreateParameter(n, std::move(name), std::move(shape)));
}
template <typename T>
Literal MakeLiteral(Shape shape, std::vector<T> values) {
  Literal lit(shape);
  for (size_t i = 0; i < values.size(); ++i) lit.Set<T>(static_cast<int64_t>(i), values[i]);
  return lit;
}
Instruction* Const(Computation& c, std::string name, Literal lit) {
  return c.AddInstruction(Instruction::CreateConstant(std::move(name), std::move(lit)));
}

// A scalar binary computation `name (lhs: T, rhs: T) -> T { ROOT op(lhs, rhs) }`.
std::unique_ptr<Computation> Binary(std::string name, Opcode op, P type, std::string root = "add",
                                    std::string lhs = "lhs", std::string rhs = "rhs") {
  auto c = std::make_unique<Computation>(std::move(name));
  Instruction* a = Param(*c, 0, std::move(lhs), Scalar(type));
  Instruction* b = Param(*c, 1, std::move(rhs), Scalar(type));
  Shape result = op == Opcode::kCompare ? Scalar(P::kPred) : Scalar(type);
  c->set_root(Add(*c, op, std::move(root), result, {a, b}));
  return c;
}

TEST(HloPrinter, AxpyLongAndShortForms) {
  Module module("axpy_module");
  auto comp = std::make_unique<Computation>("axpy.v5");
  Instruction* alpha = Param(*comp, 0, "alpha", Scalar(P::kF32));
  Instruction* bcast = Add(*comp, Opcode::kBroadcast, "broadcast", F32({2, 4}), {alpha});
  bcast->SetAttr("dimensions", AttrValue::IntList({}));
  Instruction* x = Param(*comp, 1, "x", F32({2, 4}));
  Instruction* mul = Add(*comp, Opcode::kMultiply, "multiply", F32({2, 4}), {bcast, x});
  Instruction* y = Param(*comp, 2, "y", F32({2, 4}));
  comp->set_root(Add(*comp, Opcode::kAdd, "add", F32({2, 4}), {mul, y}));
  module.AddEntryComputation(std::move(comp));

  EXPECT_EQ(PrintModule(module),
            "HloModule axpy_module, entry_computation_layout={(f32[], f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}\n"
            "\n"
            "ENTRY %axpy.v5 (alpha: f32[], x: f32[2,4], y: f32[2,4]) -> f32[2,4] {\n"
            "  %alpha = f32[] parameter(0)\n"
            "  %broadcast = f32[2,4]{1,0} broadcast(f32[] %alpha), dimensions={}\n"
            "  %x = f32[2,4]{1,0} parameter(1)\n"
            "  %multiply = f32[2,4]{1,0} multiply(f32[2,4]{1,0} %broadcast, f32[2,4]{1,0} %x)\n"
            "  %y = f32[2,4]{1,0} parameter(2)\n"
            "  ROOT %add = f32[2,4]{1,0} add(f32[2,4]{1,0} %multiply, f32[2,4]{1,0} %y)\n"
            "}\n"
            "\n");
  EXPECT_EQ(PrintModule(module, HloPrintOptions::Short()),
            "HloModule axpy_module, entry_computation_layout={(f32[], f32[2,4]{1,0}, f32[2,4]{1,0})->f32[2,4]{1,0}}\n"
            "\n"
            "ENTRY axpy.v5 {\n"
            "  alpha = f32[] parameter(0)\n"
            "  broadcast = f32[2,4]{1,0} broadcast(alpha), dimensions={}\n"
            "  x = f32[2,4]{1,0} parameter(1)\n"
            "  multiply = f32[2,4]{1,0} multiply(broadcast, x)\n"
            "  y = f32[2,4]{1,0} parameter(2)\n"
            "  ROOT add = f32[2,4]{1,0} add(multiply, y)\n"
            "}\n"
            "\n");
}

TEST(HloPrinter, PostOrderPutsDeadInstructionsAfterTheirDfsAndVisitsControlPredecessorsFirst) {
  Module module("m");
  auto comp = std::make_unique<Computation>("e");
  Instruction* token = Add(*comp, Opcode::kAfterAll, "token0", Shape::Token(), {});
  Shape recv_shape = Shape::Tuple({Scalar(P::kF32), Scalar(P::kU32), Shape::Token()});
  Instruction* recv = Add(*comp, Opcode::kRecv, "recv", recv_shape, {token});
  recv->SetAttr("channel_id", AttrValue::Int(15));
  recv->SetAttr("is_host_transfer", AttrValue::Bool(true));
  Instruction* done =
      Add(*comp, Opcode::kRecvDone, "recv-done", Shape::Tuple({Scalar(P::kF32), Shape::Token()}), {recv});
  done->SetAttr("channel_id", AttrValue::Int(15));
  done->SetAttr("is_host_transfer", AttrValue::Bool(false));  // defaults are omitted
  comp->set_root(done);
  Instruction* c = Const(*comp, "constant", MakeLiteral<float>(Scalar(P::kF32), {2.1f}));
  c->set_sharding(Sharding::Maximal(0));
  Instruction* neg = Add(*comp, Opcode::kNegate, "negate", Scalar(P::kF32), {c});
  Instruction* early = Add(*comp, Opcode::kCopy, "copy", Scalar(P::kF32), {c});
  early->AddControlDependencyTo(neg);
  module.AddEntryComputation(std::move(comp));

  EXPECT_EQ(PrintModule(module),
            "HloModule m, entry_computation_layout={()->(f32[], token[])}\n\n"
            "ENTRY %e () -> (f32[], token[]) {\n"
            "  %token0 = token[] after-all()\n"
            "  %recv = (f32[], u32[], token[]) recv(token[] %token0), channel_id=15, is_host_transfer=true\n"
            "  ROOT %recv-done = (f32[], token[]) recv-done((f32[], u32[], token[]) %recv), channel_id=15\n"
            "  %constant = f32[] constant(2.1), sharding={maximal device=0}\n"
            "  %copy = f32[] copy(f32[] %constant)\n"
            "  %negate = f32[] negate(f32[] %constant), control-predecessors={%copy}\n"
            "}\n\n");
  // Short form drops control predecessors, as ShortParsable does.
  EXPECT_EQ(PrintInstruction(*module.entry_computation()->FindInstruction("negate"), HloPrintOptions::Short()),
            "negate = f32[] negate(constant)");
}

TEST(HloPrinter, CalledComputationsFollowXlaPostOrder) {
  Module module("m");
  Computation* add = module.AddComputation(Binary("add_F32.v3", Opcode::kAdd, P::kF32));
  Computation* ge = module.AddComputation(Binary("ge_F32.v3", Opcode::kCompare, P::kF32, "greater-than-or-equal-to"));
  ge->root()->SetAttr("direction", AttrValue::Enum("GE"));
  ge->root()->SetAttr("type", AttrValue::Enum("FLOAT"));  // the default for f32: omitted
  auto comp = std::make_unique<Computation>("sas");
  Instruction* operand = Param(*comp, 0, "operand", F32({4, 6}));
  Instruction* source = Param(*comp, 1, "source", F32({2, 2}));
  Instruction* init = Const(*comp, "constant", MakeLiteral<float>(Scalar(P::kF32), {0}));
  Instruction* sas = Add(*comp, Opcode::kSelectAndScatter, "select-and-scatter", F32({4, 6}), {operand, source, init});
  Window window;
  window.dimensions = {WindowDimension{2, 2}, WindowDimension{3, 3}};
  sas->SetAttr("window", AttrValue::Of(window));
  sas->set_called_computations({ge, add});
  comp->set_root(sas);
  module.AddEntryComputation(std::move(comp));

  EXPECT_EQ(PrintModule(module, HloPrintOptions::Short()),
            "HloModule m, entry_computation_layout={(f32[4,6]{1,0}, f32[2,2]{1,0})->f32[4,6]{1,0}}\n\n"
            "ge_F32.v3 {\n"
            "  lhs = f32[] parameter(0)\n"
            "  rhs = f32[] parameter(1)\n"
            "  ROOT greater-than-or-equal-to = pred[] compare(lhs, rhs), direction=GE\n"
            "}\n\n"
            "add_F32.v3 {\n"
            "  lhs = f32[] parameter(0)\n"
            "  rhs = f32[] parameter(1)\n"
            "  ROOT add = f32[] add(lhs, rhs)\n"
            "}\n\n"
            "ENTRY sas {\n"
            "  operand = f32[4,6]{1,0} parameter(0)\n"
            "  source = f32[2,2]{1,0} parameter(1)\n"
            "  constant = f32[] constant(0)\n"
            "  ROOT select-and-scatter = f32[4,6]{1,0} select-and-scatter(operand, source, constant), "
            "window={size=2x3 stride=2x3}, select=ge_F32.v3, scatter=add_F32.v3\n"
            "}\n\n");
}

TEST(HloPrinter, CompareTypePrintedOnlyWhenNotTheDefault) {
  Computation c("c");
  Instruction* a = Param(c, 0, "a", Scalar(P::kF32));
  Instruction* cmp = Add(c, Opcode::kCompare, "cmp", Scalar(P::kPred), {a, a});
  cmp->SetAttr("direction", AttrValue::Enum("LT"));
  cmp->SetAttr("type", AttrValue::Enum("TOTALORDER"));
  EXPECT_EQ(PrintInstruction(*cmp), "%cmp = pred[] compare(f32[] %a, f32[] %a), direction=LT, type=TOTALORDER");
  Instruction* s = Param(c, 1, "s", Scalar(P::kS32));
  Instruction* cmp2 = Add(c, Opcode::kCompare, "cmp2", Scalar(P::kPred), {s, s});
  cmp2->SetAttr("type", AttrValue::Enum("SIGNED"));
  cmp2->SetAttr("direction", AttrValue::Enum("EQ"));
  EXPECT_EQ(PrintInstruction(*cmp2, HloPrintOptions::Short()), "cmp2 = pred[] compare(s, s), direction=EQ");
}

TEST(HloPrinter, OpcodeAttributesFollowXlaOrder) {
  Computation c("c");
  Instruction* in = Param(c, 0, "input", F32({50, 49, 48, 47, 46}));
  Instruction* idx = Param(c, 1, "idx", Arr(P::kS64, {10, 9, 8, 7, 5}));
  Instruction* g = Add(c, Opcode::kGather, "gather", F32({10, 9, 8, 7, 30, 29, 28, 27, 26}), {in, idx});
  // Deliberately inserted out of order: the schema, not the map, fixes the print order.
  g->SetAttr("indices_are_sorted", AttrValue::Bool(true));
  g->SetAttr("slice_sizes", AttrValue::IntList({30, 29, 28, 27, 26}));
  g->SetAttr("index_vector_dim", AttrValue::Int(4));
  g->SetAttr("start_index_map", AttrValue::IntList({0, 1, 2, 3, 4}));
  g->SetAttr("collapsed_slice_dims", AttrValue::IntList({}));
  g->SetAttr("offset_dims", AttrValue::IntList({4, 5, 6, 7, 8}));
  g->SetAttr("operand_batching_dims", AttrValue::IntList({}));
  EXPECT_EQ(PrintInstruction(*g, HloPrintOptions::Short()),
            "gather = f32[10,9,8,7,30,29,28,27,26]{8,7,6,5,4,3,2,1,0} gather(input, idx), offset_dims={4,5,6,7,8}, "
            "collapsed_slice_dims={}, start_index_map={0,1,2,3,4}, index_vector_dim=4, "
            "slice_sizes={30,29,28,27,26}, indices_are_sorted=true");

  Instruction* lhs = Param(c, 2, "lhs", F32({2, 10}));
  Instruction* rhs = Param(c, 3, "rhs", F32({10, 2}));
  Instruction* dot = Add(c, Opcode::kDot, "dot", F32({2}), {lhs, rhs});
  dot->SetAttr("algorithm", AttrValue::Enum("dot_tf32_tf32_f32"));
  dot->SetAttr("rhs_contracting_dims", AttrValue::IntList({0}));
  dot->SetAttr("rhs_batch_dims", AttrValue::IntList({1}));
  dot->SetAttr("lhs_contracting_dims", AttrValue::IntList({1}));
  dot->SetAttr("lhs_batch_dims", AttrValue::IntList({0}));
  dot->SetAttr("operand_precision", AttrValue::EnumList({"default", "default"}));
  EXPECT_EQ(PrintInstruction(*dot, HloPrintOptions::Short()),
            "dot = f32[2]{0} dot(lhs, rhs), lhs_batch_dims={0}, lhs_contracting_dims={1}, rhs_batch_dims={1}, "
            "rhs_contracting_dims={0}, algorithm=dot_tf32_tf32_f32");
  dot->SetAttr("operand_precision", AttrValue::EnumList({"high", "default"}));
  EXPECT_NE(PrintInstruction(*dot).find("rhs_contracting_dims={0}, operand_precision={high,default}, algorithm="),
            std::string::npos);

  Instruction* filter = Param(c, 4, "filter", F32({3, 3, 512, 512}));
  Instruction* image = Param(c, 5, "image", F32({128, 7, 7, 512}));
  Instruction* conv = Add(c, Opcode::kConvolution, "conv", F32({128, 14, 14, 512}), {image, filter});
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.input_feature_dimension = 3;
  d.input_spatial_dimensions = {1, 2};
  d.kernel_spatial_dimensions = {0, 1};
  d.kernel_output_feature_dimension = 2;
  d.kernel_input_feature_dimension = 3;
  d.output_batch_dimension = 0;
  d.output_feature_dimension = 3;
  d.output_spatial_dimensions = {1, 2};
  conv->SetAttr("feature_group_count", AttrValue::Int(1));
  conv->SetAttr("dim_labels", AttrValue::Of(d));
  Window w;
  WindowDimension wd{3, 1, 1, 2, 1, 2, true};
  w.dimensions = {wd, wd};
  conv->SetAttr("window", AttrValue::Of(w));
  conv->SetAttr("batch_group_count", AttrValue::Int(2));
  EXPECT_EQ(PrintInstruction(*conv, HloPrintOptions::Short()),
            "conv = f32[128,14,14,512]{3,2,1,0} convolution(image, filter), "
            "window={size=3x3 pad=1_2x1_2 lhs_dilate=2x2 rhs_reversal=1x1}, dim_labels=b01f_01oi->b01f, "
            "batch_group_count=2");

  Instruction* cc = Add(c, Opcode::kCustomCall, "custom-call", F32({1, 2, 3}), {lhs});
  cc->SetAttr("api_version", AttrValue::Enum("API_VERSION_ORIGINAL"));
  cc->SetAttr("schedule", AttrValue::Enum("SCHEDULE_LATEST"));
  cc->SetAttr("custom_call_target", AttrValue::String("foo\"bar"));
  cc->SetAttr("custom_call_has_side_effect", AttrValue::Bool(true));
  cc->SetAttr("output_to_operand_aliasing",
              AttrValue::Of(std::vector<OutputOperandAlias>{{{0}, 1, {}}, {{1}, 0, {0}}}));
  cc->SetAttr("operand_layout_constraints", AttrValue::Of(std::vector<Shape>{}));
  EXPECT_EQ(PrintInstruction(*cc, HloPrintOptions::Short()),
            "custom-call = f32[1,2,3]{2,1,0} custom-call(lhs), custom_call_target=\"foo\\\"bar\", "
            "operand_layout_constraints={}, custom_call_has_side_effect=true, "
            "output_to_operand_aliasing={{0}: (1, {}), {1}: (0, {0})}, schedule=SCHEDULE_LATEST");

  Instruction* ag = Add(c, Opcode::kAllGather, "ag", F32({128, 320}), {lhs});
  ag->SetAttr("dimensions", AttrValue::IntList({1}));
  ag->SetAttr("replica_groups", AttrValue::Of(ReplicaGroups{{}, IotaList{{3, 10}, {6, 5}, {1, 0}}}));
  ag->SetAttr("constrain_layout", AttrValue::Bool(true));
  ag->SetAttr("channel_id", AttrValue::Int(3));
  EXPECT_EQ(PrintInstruction(*ag, HloPrintOptions::Short()),
            "ag = f32[128,320]{1,0} all-gather(lhs), channel_id=3, replica_groups=[3,10]<=[6,5]T(1,0), "
            "constrain_layout=true, dimensions={1}");
  Instruction* a2a = Add(c, Opcode::kAllToAll, "a2a", F32({2, 10}), {lhs});
  EXPECT_EQ(PrintInstruction(*a2a, HloPrintOptions::Short()),
            "a2a = f32[2,10]{1,0} all-to-all(lhs), replica_groups={}");

  Instruction* slice = Add(c, Opcode::kSlice, "slice", F32({1, 5}), {lhs});
  slice->SetAttr("slice", AttrValue::Of(std::vector<SliceRange>{{0, 1, 1}, {0, 10, 2}}));
  EXPECT_EQ(PrintInstruction(*slice, HloPrintOptions::Short()),
            "slice = f32[1,5]{1,0} slice(lhs), slice={[0:1:1], [0:10:2]}");
  slice->SetAttr("slice", AttrValue::Of(std::vector<SliceRange>{{0, 1, 1}, {0, 10, 1}}));
  EXPECT_EQ(PrintInstruction(*slice, HloPrintOptions::Short()),
            "slice = f32[1,5]{1,0} slice(lhs), slice={[0:1], [0:10]}");

  Instruction* pad_value = Const(c, "zero", MakeLiteral<float>(Scalar(P::kF32), {0}));
  Instruction* pad = Add(c, Opcode::kPad, "pad", F32({5, 12}), {lhs, pad_value});
  pad->SetAttr("padding", AttrValue::Of(PaddingConfig{{{1, 2, 0}, {0, 0, 1}}}));
  EXPECT_EQ(PrintInstruction(*pad, HloPrintOptions::Short()),
            "pad = f32[5,12]{1,0} pad(lhs, zero), padding=1_2_0x0_0_1");

  Instruction* bn = Add(c, Opcode::kBatchNormTraining, "bn", F32({2}), {lhs, lhs, lhs});
  bn->SetAttr("feature_index", AttrValue::Int(3));
  bn->SetAttr("epsilon", AttrValue::Float(0.001));
  EXPECT_EQ(PrintInstruction(*bn, HloPrintOptions::Short()),
            "bn = f32[2]{0} batch-norm-training(lhs, lhs, lhs), epsilon=0.001, feature_index=3");
}

TEST(HloPrinter, MapPrintsAllResultDimensions) {
  Module module("m");
  Computation* add = module.AddComputation(Binary("add", Opcode::kAdd, P::kF32));
  auto comp = std::make_unique<Computation>("e");
  Instruction* p = Param(*comp, 0, "p", F32({4, 2}));
  Instruction* map = Add(*comp, Opcode::kMap, "map", F32({4, 2}), {p, p});
  map->set_called_computations({add});
  comp->set_root(map);
  module.AddEntryComputation(std::move(comp));
  EXPECT_EQ(PrintInstruction(*map, HloPrintOptions::Short()),
            "map = f32[4,2]{1,0} map(p, p), dimensions={0,1}, to_apply=add");
}

TEST(HloPrinter, ConditionalFusionWhileAndCallNames) {
  Module module("m");
  Computation* neg = module.AddComputation(std::make_unique<Computation>("Negate"));
  neg->set_root(Param(*neg, 0, "x", Scalar(P::kF32)));
  Computation* id = module.AddComputation(std::make_unique<Computation>("Identity"));
  id->set_root(Param(*id, 0, "y", Scalar(P::kF32)));
  auto comp = std::make_unique<Computation>("e");
  Instruction* index = Param(*comp, 0, "index", Scalar(P::kS32));
  Instruction* pred = Param(*comp, 1, "pred", Scalar(P::kPred));
  Instruction* v = Param(*comp, 2, "v", Scalar(P::kF32));
  Instruction* cond = Add(*comp, Opcode::kConditional, "conditional", Scalar(P::kF32), {index, v, v});
  cond->set_called_computations({neg, id});
  Instruction* cond2 = Add(*comp, Opcode::kConditional, "conditional.1", Scalar(P::kF32), {pred, v, v});
  cond2->set_called_computations({neg, id});
  Instruction* fusion = Add(*comp, Opcode::kFusion, "fusion", Scalar(P::kF32), {v});
  fusion->SetAttr("kind", AttrValue::Enum("kLoop"));
  fusion->set_called_computations({neg});
  Instruction* call = Add(*comp, Opcode::kCall, "call", Scalar(P::kF32), {v});
  call->set_called_computations({id});
  call->SetAttr("is_composite", AttrValue::Bool(true));
  call->mutable_frontend_attributes()->push_back({"composite.version", "1"});
  call->mutable_frontend_attributes()->push_back({"composite.name", "foo.bar"});
  call->mutable_frontend_attributes()->push_back({"composite.attributes", "{n = 1 : i32}"});
  comp->set_root(Add(*comp, Opcode::kTuple, "tuple", Shape::Tuple({Scalar(P::kF32), Scalar(P::kF32)}), {cond, cond2}));
  module.AddEntryComputation(std::move(comp));
  HloPrintOptions s = HloPrintOptions::Short();
  EXPECT_EQ(PrintInstruction(*cond, s),
            "conditional = f32[] conditional(index, v, v), branch_computations={Negate, Identity}");
  EXPECT_EQ(PrintInstruction(*cond2),
            "%conditional.1 = f32[] conditional(pred[] %pred, f32[] %v, f32[] %v), "
            "true_computation=%Negate, false_computation=%Identity");
  EXPECT_EQ(PrintInstruction(*fusion, s), "fusion = f32[] fusion(v), kind=kLoop, calls=Negate");
  EXPECT_EQ(PrintInstruction(*call, s),
            "call = f32[] call(v), to_apply=Identity, is_composite=true, frontend_attributes={composite.attributes="
            "{n = 1 : i32},composite.name=\"foo.bar\",composite.version=\"1\"}");
}

TEST(HloPrinter, AsyncSyntaxSugarHidesTheWrappedComputation) {
  Module module("AsyncOpsWithSyntaxSugar");
  auto wrapped = std::make_unique<Computation>("AsyncOp");
  Instruction* wp = Param(*wrapped, 0, "p0.1", F32({10}));
  Instruction* root = Add(*wrapped, Opcode::kCustomCall, "custom-call", F32({20}), {wp});
  root->SetAttr("custom_call_target", AttrValue::String("foo"));
  wrapped->set_root(root);
  Computation* async_comp = module.AddComputation(std::move(wrapped));
  auto comp = std::make_unique<Computation>("Entry");
  Instruction* p0 = Param(*comp, 0, "p0", F32({10}));
  Shape ctx = Shape::Tuple({Shape::Tuple({F32({10})}), F32({20}), Scalar(P::kS32)});
  Instruction* start = Add(*comp, Opcode::kAsyncStart, "async-start", ctx, {p0});
  start->set_called_computations({async_comp});
  Instruction* update = Add(*comp, Opcode::kAsyncUpdate, "async-update", ctx, {start});
  Instruction* done = Add(*comp, Opcode::kAsyncDone, "async-done", F32({20}), {update});
  comp->set_root(done);
  module.AddEntryComputation(std::move(comp));
  const std::string expected =
      "HloModule AsyncOpsWithSyntaxSugar, entry_computation_layout={(f32[10]{0})->f32[20]{0}}\n\n"
      "ENTRY %Entry (p0: f32[10]) -> f32[20] {\n"
      "  %p0 = f32[10]{0} parameter(0)\n"
      "  %async-start = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-start(f32[10]{0} %p0), "
      "custom_call_target=\"foo\"\n"
      "  %async-update = ((f32[10]{0}), f32[20]{0}, s32[]) custom-call-update(((f32[10]{0}), f32[20]{0}, s32[]) "
      "%async-start)\n"
      "  ROOT %async-done = f32[20]{0} custom-call-done(((f32[10]{0}), f32[20]{0}, s32[]) %async-update)\n"
      "}\n\n";
  EXPECT_EQ(PrintModule(module), expected);

  // The parser's representation of `custom-call-start`: the wrapped instruction's attributes live on the async ops.
  Module inline_module("AsyncOpsWithSyntaxSugar");
  auto entry = std::make_unique<Computation>("Entry");
  Instruction* q0 = Param(*entry, 0, "p0", F32({10}));
  Instruction* s = Add(*entry, Opcode::kAsyncStart, "async-start", ctx, {q0});
  s->set_async_wrapped_opcode(Opcode::kCustomCall);
  s->SetAttr("custom_call_target", AttrValue::String("foo"));
  Instruction* u = Add(*entry, Opcode::kAsyncUpdate, "async-update", ctx, {s});
  u->set_async_wrapped_opcode(Opcode::kCustomCall);
  Instruction* d = Add(*entry, Opcode::kAsyncDone, "async-done", F32({20}), {u});
  d->set_async_wrapped_opcode(Opcode::kCustomCall);
  entry->set_root(d);
  inline_module.AddEntryComputation(std::move(entry));
  EXPECT_EQ(PrintModule(inline_module), expected);

  // Without the sugar the wrapped computation is printed and called.
  HloPrintOptions plain = HloPrintOptions::Short();
  plain.syntax_sugar_async_ops = false;
  std::string text = PrintModule(module, plain);
  EXPECT_NE(text.find("AsyncOp {\n  p0.1 = f32[10]{0} parameter(0)\n"), std::string::npos) << text;
  EXPECT_NE(text.find("async-start(p0), calls=AsyncOp\n"), std::string::npos) << text;
  EXPECT_NE(text.find("async-done(async-update)\n"), std::string::npos) << text;
}

// Parses `text` and returns its long-form print, checking that the print parses again and prints the same.
std::string PrintParsed(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return "";
  std::string printed = PrintModule(**module);
  absl::StatusOr<std::unique_ptr<Module>> reparsed = ParseHloModule(printed, "printed");
  EXPECT_TRUE(reparsed.ok()) << reparsed.status().message() << "\nprinted:\n" << printed;
  if (reparsed.ok()) EXPECT_EQ(PrintModule(**reparsed), printed);
  return printed;
}

// An entry `e` whose async chain wraps computation `w` (defined by `wrapped`) over parameters p0: f32[2] and
// p1: f32[2], producing `result`.
std::string AsyncModule(const std::string& wrapped, const std::string& result, const std::string& start_attrs = "") {
  return "HloModule m\n\n" + wrapped + "\n\nENTRY e {\n  p0 = f32[2] parameter(0)\n  p1 = f32[2] parameter(1)\n" +
         "  start = ((f32[2], f32[2]), " + result + ", u32[]) async-start(p0, p1)" + start_attrs +
         ", calls=w\n  ROOT done = " + result + " async-done(start)\n}\n";
}

TEST(HloPrinter, AsyncSugarOnlyWhereTheTextParsesBack) {
  // The sugar, where XLA uses it and it re-parses to the same computation.
  std::string sugared =
      PrintParsed(AsyncModule("w {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                              "  ROOT s = f32[2] subtract(a, b)\n}",
                              "f32[2]"));
  EXPECT_NE(sugared.find("subtract-start(f32[2]{0} %p0, f32[2]{0} %p1)"), std::string::npos) << sugared;
  EXPECT_EQ(sugared.find("%w "), std::string::npos) << sugared;

  // XLA would print these with the sugar too, as text that does not parse back or parses as something else; they
  // keep the explicit form.
  const std::string two_operands = "async-start(f32[2]{0} %p0, f32[2]{0} %p1), calls=%w\n";
  const std::vector<std::pair<std::string, std::string>> explicit_cases = {
      // `parameter-start(...)`: a parameter takes a number, not operands.
      {AsyncModule("w {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] parameter(1)\n}", "f32[2]"), two_operands},
      // `copy-start` / `copy-done` are opcodes of their own.
      {"HloModule m\n\nw {\n  a = f32[2] parameter(0)\n  ROOT c = f32[2] copy(a)\n}\n\nENTRY e {\n"
       "  p0 = f32[2] parameter(0)\n  start = ((f32[2]), f32[2], u32[]) async-start(p0), calls=w\n"
       "  ROOT done = f32[2] async-done(start)\n}\n",
       "async-start(f32[2]{0} %p0), calls=%w\n"},
      // The sugar passes the async-start's operands in order.
      {AsyncModule("w {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT s = f32[2] subtract(b, a)\n}",
                   "f32[2]"),
       two_operands},
      // The sugar's wrapped result is element {1} of the async-start.
      {AsyncModule("w {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n  ROOT s = f32[2] add(a, b)\n}",
                   "f32[3]"),
       two_operands},
      // A backend_config of the wrapped op alone would be lost (the async-start's is the one printed).
      {AsyncModule("w {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                   "  ROOT s = f32[2] add(a, b), backend_config=\"x\"\n}",
                   "f32[2]"),
       two_operands},
  };
  for (const auto& [text, start] : explicit_cases) {
    std::string printed = PrintParsed(text);
    EXPECT_NE(printed.find(start), std::string::npos) << printed;
    EXPECT_NE(printed.find(" async-done("), std::string::npos) << printed;
    EXPECT_NE(printed.find("\n%w "), std::string::npos) << printed;
  }

  // Both the async-start and the wrapped op carry a sharding: one attribute list cannot hold both.
  std::string shardings =
      PrintParsed(AsyncModule("w {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                              "  ROOT s = f32[2] add(a, b), sharding={replicated}\n}",
                              "f32[2]", ", sharding={maximal device=0}"));
  EXPECT_NE(shardings.find("calls=%w, sharding={maximal device=0}"), std::string::npos) << shardings;

  // A sugared computation that something else also calls is still printed for that caller.
  std::string shared = PrintParsed(
      "HloModule m\n\nw {\n  a = f32[2] parameter(0)\n  ROOT n = f32[2] negate(a)\n}\n\n"
      "ENTRY e {\n  p0 = f32[2] parameter(0)\n  start = ((f32[2]), f32[2], u32[]) async-start(p0), calls=w\n"
      "  done = f32[2] async-done(start)\n  ROOT c = f32[2] call(done), to_apply=w\n}\n");
  EXPECT_NE(shared.find("negate-start(f32[2]{0} %p0)"), std::string::npos) << shared;
  EXPECT_NE(shared.find("\n%w (a: f32[2]) -> f32[2] {"), std::string::npos) << shared;
}

// ArCrsCombinerTest.SameValueTestNestedWhile: the outer while's body calls the condition they share. XLA's
// iterative MakeEmbeddedComputationsList stacks {body_outer, condition} and then skips the already-stacked
// condition under body_outer, emitting body_outer first; callees must come first for the text to parse back.
TEST(HloPrinter, SharedWhileConditionPrintsBeforeItsCallers) {
  const std::string text =
      "HloModule foobar\n\n"
      "%condition (x: (f32[2,2], f32[2,2])) -> pred[] {\n"
      "  %x = (f32[2,2], f32[2,2]) parameter(0)\n"
      "  ROOT %t = pred[] constant(true)\n}\n\n"
      "%body_inner (x: (f32[2,2], f32[2,2])) -> (f32[2,2], f32[2,2]) {\n"
      "  ROOT %x = (f32[2,2], f32[2,2]) parameter(0)\n}\n\n"
      "%body_outer (x: (f32[2,2], f32[2,2])) -> (f32[2,2], f32[2,2]) {\n"
      "  %x = (f32[2,2], f32[2,2]) parameter(0)\n"
      "  ROOT %while.1 = (f32[2,2], f32[2,2]) while(%x), condition=%condition, body=%body_inner\n}\n\n"
      "ENTRY %WhileLoop (x: (f32[2,2], f32[2,2])) -> (f32[2,2], f32[2,2]) {\n"
      "  %x = (f32[2,2], f32[2,2]) parameter(0)\n"
      "  ROOT %while = (f32[2,2], f32[2,2]) while(%x), condition=%condition, body=%body_outer\n}\n";
  std::string printed = PrintParsed(text);
  const size_t inner = printed.find("\n%body_inner ");
  const size_t condition = printed.find("\n%condition ");
  const size_t outer = printed.find("\n%body_outer ");
  const size_t entry = printed.find("\nENTRY %WhileLoop ");
  ASSERT_NE(entry, std::string::npos) << printed;
  EXPECT_LT(inner, condition) << printed;
  EXPECT_LT(condition, outer) << printed;
  EXPECT_LT(outer, entry) << printed;
}

// GpuCopyTest.CopyTranspose: callees print in the order their callers' instructions print (post order), not in
// the order the instructions were written; otherwise printing the parse of the print would reorder them.
TEST(HloPrinter, CalleesFollowTheCallersPrintOrder) {
  const std::string text =
      "HloModule m\n\n"
      "first {\n  ROOT a = f32[] parameter(0)\n}\n\n"
      "second {\n  ROOT b = f32[] parameter(0)\n}\n\n"
      "ENTRY e {\n  p = f32[] parameter(0)\n"
      "  x = f32[] call(p), to_apply=first\n"
      "  y = f32[] call(p), to_apply=second\n"
      "  ROOT t = (f32[], f32[]) tuple(y, x)\n}\n";
  std::string printed = PrintParsed(text);
  EXPECT_LT(printed.find("\n%second "), printed.find("\n%first ")) << printed;
  EXPECT_LT(printed.find("%y = f32[] call"), printed.find("%x = f32[] call")) << printed;
}

TEST(HloPrinter, ModuleHeaderAttributesInXlaOrder) {
  Module module("m");
  auto comp = std::make_unique<Computation>("e");
  Instruction* p0 = Param(*comp, 0, "p0", F32({2}));
  Instruction* p1 = Param(*comp, 1, "p1", F32({2}));
  comp->set_root(Add(*comp, Opcode::kTuple, "t", Shape::Tuple({F32({2}), F32({2})}), {p0, p1}));
  module.AddEntryComputation(std::move(comp));
  ModuleConfig& config = module.mutable_config();
  config.is_scheduled = true;
  config.input_output_alias = {{{1}, 1, {}, true}, {{0}, 0, {}, false}};
  config.buffer_donor = {{1, {}}, {0, {1}}, {0, {0}}};
  config.replica_count = 4;
  config.num_partitions = 2;
  config.allow_spmd_sharding_propagation_to_output = {false};
  config.allow_spmd_sharding_propagation_to_parameters = {true, false};
  config.frontend_attributes = {{"b", "x"}, {"a", "{\"k\": 1}"}};
  ComputationLayout layout;
  layout.parameters = {F32({2}), F32({2})};
  layout.parameters[1].EnsureLayout();
  layout.result = Shape::Tuple({F32({2}), F32({2})});
  config.entry_computation_layout = layout;
  std::string text = PrintModule(module, HloPrintOptions::Short());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "HloModule m, is_scheduled=true, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, must-alias) "
            "}, buffer_donor={ (0, {0}), (0, {1}), (1, {}) }, entry_computation_layout={(f32[2]{0}, f32[2]{0})->"
            "(f32[2]{0}, f32[2]{0})}, allow_spmd_sharding_propagation_to_parameters={true,false}, replica_count=4, "
            "num_partitions=2, frontend_attributes={a={\"k\": 1},b=\"x\"}");
}

TEST(HloPrinter, WhileBodyPrintsBeforeConditionAndStackFramesFollowTheHeader) {
  Module module("m");
  Computation* cond = module.AddComputation(std::make_unique<Computation>("condition"));
  Instruction* cp = Param(*cond, 0, "c", Scalar(P::kS32));
  Instruction* cmp = Add(*cond, Opcode::kCompare, "lt", Scalar(P::kPred), {cp, cp});
  cmp->SetAttr("direction", AttrValue::Enum("LT"));
  cond->set_root(cmp);
  Computation* body = module.AddComputation(std::make_unique<Computation>("body"));
  body->set_root(Param(*body, 0, "b", Scalar(P::kS32)));
  auto comp = std::make_unique<Computation>("e");
  Instruction* init = Param(*comp, 0, "init", Scalar(P::kS32));
  Instruction* loop = Add(*comp, Opcode::kWhile, "while", Scalar(P::kS32), {init});
  loop->set_called_computations({cond, body});  // IR order: condition, body
  loop->mutable_metadata()->op_name = "w";
  loop->mutable_metadata()->stack_frame_id = 1;
  comp->set_root(loop);
  module.AddEntryComputation(std::move(comp));
  StackFrameIndex index;
  index.file_names = {"a.py"};
  index.function_names = {"f"};
  index.file_locations = {{1, 1, 10, 10, 2, 5}};
  index.stack_frames = {{1, 1}};
  module.mutable_config().stack_frame_index = index;
  EXPECT_EQ(PrintModule(module),
            "HloModule m, entry_computation_layout={(s32[])->s32[]}\n\n"
            "FileNames\n1 \"a.py\"\n\n"
            "FunctionNames\n1 \"f\"\n\n"
            "FileLocations\n1 {file_name_id=1 function_name_id=1 line=10 end_line=10 column=2 end_column=5}\n\n"
            "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n\n\n"
            "%body (b: s32[]) -> s32[] {\n"
            "  ROOT %b = s32[] parameter(0)\n"
            "}\n\n"
            "%condition (c: s32[]) -> pred[] {\n"
            "  %c = s32[] parameter(0)\n"
            "  ROOT %lt = pred[] compare(s32[] %c, s32[] %c), direction=LT\n"
            "}\n\n"
            "ENTRY %e (init: s32[]) -> s32[] {\n"
            "  %init = s32[] parameter(0)\n"
            "  ROOT %while = s32[] while(s32[] %init), condition=%condition, body=%body, "
            "metadata={op_name=\"w\" stack_frame_id=1}\n"
            "}\n\n");
  // The short form prints neither metadata nor the stack frame index.
  EXPECT_EQ(PrintModule(module, HloPrintOptions::Short()).find("FileNames"), std::string::npos);
}

TEST(HloPrinter, ScheduledModulesKeepProgramOrder) {
  Module module("m");
  auto comp = std::make_unique<Computation>("e");
  Instruction* p = Param(*comp, 0, "p", Scalar(P::kF32));
  Instruction* b = Add(*comp, Opcode::kNegate, "b", Scalar(P::kF32), {p});
  Instruction* a = Add(*comp, Opcode::kExp, "a", Scalar(P::kF32), {p});
  comp->set_root(Add(*comp, Opcode::kAdd, "sum", Scalar(P::kF32), {a, b}));
  module.AddEntryComputation(std::move(comp));
  std::string post = PrintModule(module, HloPrintOptions::Short());
  EXPECT_LT(post.find("a = f32[]"), post.find("b = f32[]")) << post;
  module.mutable_config().is_scheduled = true;
  std::string sched = PrintModule(module, HloPrintOptions::Short());
  EXPECT_LT(sched.find("b = f32[]"), sched.find("a = f32[]")) << sched;
}

TEST(HloPrinter, OperandIndexAnnotationsAndTupleShapes) {
  Computation c("c");
  std::vector<Instruction*> ps;
  std::vector<Shape> shapes;
  for (int i = 0; i < 7; ++i) {
    ps.push_back(Param(c, i, "p" + std::to_string(i), Scalar(P::kS32)));
    shapes.push_back(Scalar(P::kS32));
  }
  Instruction* t = Add(c, Opcode::kTuple, "t", Shape::Tuple(shapes), ps);
  EXPECT_EQ(PrintInstruction(*t),
            "%t = (s32[], s32[], s32[], s32[], s32[], /*index=5*/s32[], s32[]) tuple(s32[] %p0, s32[] %p1, s32[] %p2, "
            "s32[] %p3, s32[] %p4, /*index=5*/s32[] %p5, s32[] %p6)");
  EXPECT_EQ(PrintInstruction(*t, HloPrintOptions::Short()),
            "t = (s32[], s32[], s32[], s32[], s32[], /*index=5*/s32[], s32[]) tuple(p0, p1, p2, p3, p4, p5, p6)");
}

TEST(HloPrinter, MetadataBackendConfigAndExtraAttributes) {
  Computation c("c");
  Instruction* p = Param(c, 0, "p", Scalar(P::kF32));
  Instruction* e = Add(c, Opcode::kExp, "e", Scalar(P::kF32), {p});
  e->mutable_metadata()->op_type = "Exp";
  e->mutable_metadata()->op_name = "a/\"b\"";
  e->mutable_metadata()->source_file = "x.py";
  e->mutable_metadata()->source_line = 12;
  e->set_backend_config("{\"k\":\"}\"}");
  e->mutable_extra_attributes()->push_back({"result_accuracy", "{tolerance={atol=0,rtol=0,ulps=1}}"});
  e->mutable_extra_attributes()->push_back({"origin", "{{\"e\"}}"});
  e->mutable_frontend_attributes()->push_back({"x", "line\nbreak"});
  EXPECT_EQ(PrintInstruction(*e),
            "%e = f32[] exponential(f32[] %p), frontend_attributes={x=\"line\\nbreak\"}, "
            "result_accuracy={tolerance={atol=0,rtol=0,ulps=1}}, origin={{\"e\"}}, metadata={op_type=\"Exp\" "
            "op_name=\"a/\\\"b\\\"\" source_file=\"x.py\" source_line=12}, backend_config={\"k\":\"}\"}");
  EXPECT_EQ(PrintInstruction(*e, HloPrintOptions::Short()),
            "e = f32[] exponential(p), frontend_attributes={x=\"line\\nbreak\"}, "
            "result_accuracy={tolerance={atol=0,rtol=0,ulps=1}}, origin={{\"e\"}}, backend_config={\"k\":\"}\"}");
  e->set_backend_config("this is a \"configuration\"");
  EXPECT_NE(PrintInstruction(*e).find(", backend_config=\"this is a \\\"configuration\\\"\""), std::string::npos);
  e->set_backend_config("{unbalanced");
  EXPECT_NE(PrintInstruction(*e).find(", backend_config=\"{unbalanced\""), std::string::npos);
}

TEST(HloPrinter, Literals) {
  Shape r4 = F32({2, 2, 1, 2});
  EXPECT_EQ(LiteralToString(MakeLiteral<float>(r4, {1, 2, 3, 4, 5, 6, 7, 8}), false),
            "{ { /*i0=0*/ { /*i1=0*/ { 1, 2 } }, { /*i1=1*/ { 3, 4 } } }, { /*i0=1*/ { /*i1=0*/ { 5, 6 } }, "
            "{ /*i1=1*/ { 7, 8 } } } }");
  EXPECT_EQ(LiteralToString(MakeLiteral<float>(F32({3, 2, 1, 1}), {-1, 4.1f, 2, 4.1f, 5, 4.4f}), false),
            "{ { /*i0=0*/ { /*i1=0*/ {-1} }, { /*i1=1*/ {4.1} } }, { /*i0=1*/ { /*i1=0*/ {2} }, { /*i1=1*/ {4.1} } }, "
            "{ /*i0=2*/ { /*i1=0*/ {5} }, { /*i1=1*/ {4.4} } } }");
  EXPECT_EQ(LiteralToString(MakeLiteral<uint8_t>(Arr(P::kPred, {2, 3}), {0, 1, 0, 1, 0, 1}), false),
            "{ { 0, 1, 0 }, { 1, 0, 1 } }");
  EXPECT_EQ(LiteralToString(MakeLiteral<uint8_t>(Scalar(P::kPred), {1}), false), "true");
  EXPECT_EQ(LiteralToString(MakeLiteral<float>(F32({2}), {3.14f, 4.25f}), true), "f32[2]{0} {3.14, 4.25}");
  EXPECT_EQ(LiteralToString(MakeLiteral<float>(Scalar(P::kF32), {0.1f}), true), "f32[] 0.1");
  EXPECT_EQ(LiteralToString(MakeLiteral<uint64_t>(Scalar(P::kU64), {std::numeric_limits<uint64_t>::max()}), false),
            "18446744073709551615");
  EXPECT_EQ(LiteralToString(MakeLiteral<int8_t>(Arr(P::kS4, {3}), {-8, 0, 7}), false), "{-8, 0, 7}");
  EXPECT_EQ(LiteralToString(MakeLiteral<float>(F32({0}), {}), false), "{}");
  EXPECT_EQ(LiteralToString(MakeLiteral<float>(F32({0, 3}), {}), false), "{  }");
  Literal tuple =
      Literal::CreateTuple({MakeLiteral<float>(F32({2, 1}), {1, 2}), MakeLiteral<float>(F32({2}), {2, 42})});
  EXPECT_EQ(LiteralToString(tuple, false), "( { {1}, {2} }, {2, 42} )");
  Literal c128(Arr(P::kC128, {2}));
  c128.Set<std::complex<double>>(0, {1, 2});
  c128.Set<std::complex<double>>(1, {-INFINITY, NAN});
  EXPECT_EQ(LiteralToString(c128, false), "{(1, 2), (-inf, nan)}");
  EXPECT_EQ(LiteralToString(Literal::CreateUnknown(F32({100})), false), "{...}");
}

uint64_t F32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
uint64_t F64Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

TEST(HloPrinter, FloatElementsRoundTripLikeXla) {
  EXPECT_EQ(FloatElementToString(P::kF32, F32Bits(0.1f)), "0.1");
  EXPECT_EQ(FloatElementToString(P::kF32, F32Bits(1.0f / 3)), "0.333333343");  // 6 digits do not round-trip
  EXPECT_EQ(FloatElementToString(P::kF32, F32Bits(42)), "42");
  EXPECT_EQ(FloatElementToString(P::kF32, F32Bits(1e10f)), "1e+10");
  EXPECT_EQ(FloatElementToString(P::kF32, F32Bits(-0.0f)), "-0");
  EXPECT_EQ(FloatElementToString(P::kF32, F32Bits(INFINITY)), "inf");
  EXPECT_EQ(FloatElementToString(P::kF32, 0x7FC00000), "nan");
  EXPECT_EQ(FloatElementToString(P::kF32, 0xFFC00000), "-nan");
  EXPECT_EQ(FloatElementToString(P::kF32, 0x7F800001), "nan(0x1)");
  EXPECT_EQ(FloatElementToString(P::kF64, F64Bits(0.1)), "0.1");
  EXPECT_EQ(FloatElementToString(P::kF64, F64Bits(1.0 / 3)), "0.33333333333333331");
  EXPECT_EQ(FloatElementToString(P::kF16, 0x3A62), "0.79785");  // %.5g of the f16 value
  EXPECT_EQ(FloatElementToString(P::kF16, 0x7E00), "nan");
  EXPECT_EQ(FloatElementToString(P::kF16, 0x7C01), "nan(0x1)");
  EXPECT_EQ(FloatElementToString(P::kBF16, 0x3DCD), "0.1001");  // %.4g
  EXPECT_EQ(FloatElementToString(P::kBF16, 0x7FC1), "nan(0x41)");
  EXPECT_EQ(FloatElementToString(P::kF8E5M2, 0x3C), "1");
  EXPECT_EQ(FloatElementToString(P::kF8E4M3FN, 0x7F), "nan");
  EXPECT_EQ(FloatElementToString(P::kF8E5M2FNUZ, 0x80), "-nan");
  EXPECT_EQ(FloatElementToString(P::kF8E4M3FN, 0x7E), "448");
}

TEST(HloPrinter, Shardings) {
  EXPECT_EQ(ShardingToString(Sharding::Replicated()), "{replicated}");
  EXPECT_EQ(ShardingToString(Sharding::Maximal(1)), "{maximal device=1}");
  Sharding tiled;
  tiled.kind = Sharding::Kind::kTiled;
  tiled.tile_dims = {2, 1};
  tiled.device_ids = {0, 1};
  EXPECT_EQ(ShardingToString(tiled), "{devices=[2,1]0,1}");
  Sharding iota;
  iota.kind = Sharding::Kind::kTiled;
  iota.tile_dims = {2, 2, 2};
  iota.iota = IotaList{{2, 2, 2}, {2, 4}, {1, 0}};
  iota.last_tile_dim_replicate = true;
  EXPECT_EQ(ShardingToString(iota), "{devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  // XLA canonicalizes iota lists: size-1 dims vanish and dims kept in order merge.
  iota.iota = IotaList{{2, 2, 2}, {2, 1, 4}, {0, 1, 2}};
  iota.last_tile_dim_replicate = false;
  iota.last_tile_dims = {Sharding::SubgroupType::kManual, Sharding::SubgroupType::kReplicated};
  iota.shard_group_id = 3;
  iota.shard_group_is_shard_as = true;
  EXPECT_EQ(ShardingToString(iota), "{devices=[2,2,2]<=[8] last_tile_dims={manual, replicated} shard_as 3}");
  Sharding with_metadata = Sharding::Manual();
  OpMetadata named, typed;
  named.op_name = "a";
  typed.op_type = "t";
  with_metadata.metadata = {named, typed};
  EXPECT_EQ(ShardingToString(with_metadata), "{manual metadata={{op_name=\"a\"}, {op_type=\"t\"}}}");
  EXPECT_EQ(ShardingToString(with_metadata, false), "{manual}");
  std::vector<Sharding> elements(6, Sharding::Replicated());
  elements[5] = Sharding::Maximal(0);
  EXPECT_EQ(ShardingToString(Sharding::Tuple(elements)),
            "{{replicated}, {replicated}, {replicated}, {replicated}, {replicated}, /*index=5*/{maximal device=0}}");
  EXPECT_EQ(ShardingToString(Sharding::Tuple({})), "{}");
}

TEST(HloPrinter, MetadataFields) {
  OpMetadata m;
  m.op_type = "Add";
  m.op_name = "x/y";
  m.source_file = "f.py";
  m.source_line = 3;
  m.profile_type = {"1", "2"};
  m.deduplicated_name = "d";
  m.scheduling_name = "s";
  EXPECT_EQ(OpMetadataToString(m),
            "op_type=\"Add\" op_name=\"x/y\" source_file=\"f.py\" source_line=3 profile_type={1,2} "
            "deduplicated_name=\"d\" scheduling_name=\"s\"");
}

// Extreme complex parts print with 9 significant digits, which as doubles lie just outside f32's range; they must
// still parse back to the same bits, while values that really overflow stay errors.
// Names from other sources (StableHLO symbols, fuzzed locations) may be keywords, types or hold any byte: the
// printer keeps a name the parser reads back as it is and otherwise prints one it does (the stablehlo fuzzer found
// `HloModule shard_as`, which does not parse: shard_as is a keyword of shardings).
TEST(HloPrinter, NamesThatDoNotLexAsNamesPrintSoTheyParseBack) {
  for (const std::string module_name : {"shard_as", "f32", "ENTRY", "nan", "true", "3d", "a b\x01\xff", ""}) {
    Module module(module_name);
    auto comp = std::make_unique<Computation>(module_name.empty() ? "replicated" : module_name);
    Instruction* p = Param(*comp, 0, "shard_like", F32({2}));
    Instruction* n = Add(*comp, Opcode::kNegate, "pred", F32({2}), {p});
    comp->set_root(Add(*comp, Opcode::kAbs, "x:y", F32({2}), {n}));
    module.AddEntryComputation(std::move(comp));
    for (const HloPrintOptions& options : {HloPrintOptions(), HloPrintOptions::Short()}) {
      const std::string text = PrintModule(module, options);
      absl::StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text);
      ASSERT_TRUE(parsed.ok()) << parsed.status().message() << "\n" << text;
      // A second print is a fixed point.
      EXPECT_EQ(PrintModule(**parsed, options), text);
    }
  }
  // Valid names print unchanged, with and without '%'.
  Module module("shard_as_module");
  auto comp = std::make_unique<Computation>("e");
  comp->set_root(Param(*comp, 0, "f32.1", F32({2})));
  module.AddEntryComputation(std::move(comp));
  EXPECT_NE(PrintModule(module).find("HloModule shard_as_module,"), std::string::npos);
  EXPECT_NE(PrintModule(module, HloPrintOptions::Short()).find("ROOT f32.1 = "), std::string::npos);
}

TEST(HloPrinter, ComplexFloatMaxRoundTrips) {
  const float max = std::numeric_limits<float>::max();
  Literal lit = MakeLiteral<std::complex<float>>(Arr(P::kC64, {2}), {{-max, 1.0f}, {max, -max}});
  std::string text = "HloModule m\n\nENTRY e {\n  ROOT c = c64[2]{0} constant(" + LiteralToString(lit, false) + ")\n}\n";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  ASSERT_TRUE(module.ok()) << module.status().message() << "\n" << text;
  EXPECT_EQ((*module)->entry_computation()->root()->literal(), lit);
  EXPECT_FALSE(ParseHloModule("HloModule m\nENTRY e {\n  ROOT c = c64[] constant((3.5e38, 0))\n}\n").ok());
}

// ---------------------------------------------------------------------------------------------------------------
// Corpus round trips: XLA's own parser tests (hlo/parser_test in the shared corpus). A roundtrip_long file must
// print back byte for byte in the long form, a roundtrip_short file in the short form, and each
// nonroundtrip_input must print (short form) as its NAME.expected.hlo partner up to trailing whitespace, as XLA's
// HloParserTest compares them.

std::filesystem::path CorpusRoot() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return std::filesystem::path(src) / ".." / "shared" / "corpus";
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" / "corpus";
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

struct CorpusCase {
  std::string role;  // roundtrip_long, roundtrip_short, nonroundtrip_input
  std::string file;  // relative to the corpus root
  std::string name;  // gtest-safe
};

std::vector<CorpusCase> LoadParserTestCases() {
  std::vector<CorpusCase> cases;
  std::ifstream manifest(CorpusRoot() / "hlo" / "manifest.tsv");
  std::string line;
  std::getline(manifest, line);  // header
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() < 5) continue;
    const std::string& role = cols[4];
    if (role != "roundtrip_long" && role != "roundtrip_short" && role != "nonroundtrip_input") continue;
    std::string name = std::filesystem::path(cols[0]).stem().string();
    for (char& c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    cases.push_back({role, cols[0], name});
  }
  return cases;
}

std::string StripTrailingWhitespace(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

// The first differing line, for readable failures.
std::string FirstDifference(const std::string& expected, const std::string& actual) {
  std::stringstream e(expected), a(actual);
  std::string el, al;
  for (int line = 1;; ++line) {
    bool more_e = static_cast<bool>(std::getline(e, el));
    bool more_a = static_cast<bool>(std::getline(a, al));
    if (!more_e && !more_a) return "texts differ only in trailing newlines";
    if (!more_e || !more_a || el != al) {
      return "line " + std::to_string(line) + "\n  expected: " + (more_e ? el : "<eof>") +
             "\n  actual:   " + (more_a ? al : "<eof>");
    }
  }
}

void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.file; }

class ParserTestCorpus : public ::testing::TestWithParam<CorpusCase> {};

TEST_P(ParserTestCorpus, PrintsCanonicalText) {
  const CorpusCase& c = GetParam();
  std::filesystem::path path = CorpusRoot() / c.file;
  std::string text = ReadFile(path);
  ASSERT_FALSE(text.empty()) << "cannot read " << path;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, path.string());
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  if (c.role == "roundtrip_long") {
    std::string printed = PrintModule(**module, HloPrintOptions::Long());
    EXPECT_EQ(printed, text) << FirstDifference(text, printed);
  } else if (c.role == "roundtrip_short") {
    std::string printed = PrintModule(**module, HloPrintOptions::Short());
    EXPECT_EQ(printed, text) << FirstDifference(text, printed);
  } else {
    std::filesystem::path expected_path = path;
    expected_path.replace_extension(".expected.hlo");
    std::string expected = StripTrailingWhitespace(ReadFile(expected_path));
    ASSERT_FALSE(expected.empty()) << "cannot read " << expected_path;
    std::string printed = StripTrailingWhitespace(PrintModule(**module, HloPrintOptions::Short()));
    EXPECT_EQ(printed, expected) << FirstDifference(expected, printed);
  }
}

INSTANTIATE_TEST_SUITE_P(HloParserTest, ParserTestCorpus, ::testing::ValuesIn(LoadParserTestCases()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) { return info.param.name; });

TEST(ParserTestCorpusManifest, HasAllRoundTripCases) {
  // Guards against a moved corpus silently turning the round-trip suite into zero tests.
  std::vector<CorpusCase> cases = LoadParserTestCases();
  int long_form = 0, short_form = 0, non_roundtrip = 0;
  for (const CorpusCase& c : cases) {
    long_form += c.role == "roundtrip_long";
    short_form += c.role == "roundtrip_short";
    non_roundtrip += c.role == "nonroundtrip_input";
  }
  EXPECT_GE(long_form, 30);
  EXPECT_GE(short_form, 20);
  EXPECT_GE(non_roundtrip, 3);
}

}  // namespace
}  // namespace xlac
