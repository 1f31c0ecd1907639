// Tests for the HLO text parser: grammar pieces, XLA's semantic checks, error locations and robustness on hostile
// input. The lexer's own tests are in hlo_lexer_test.cc, the sweeps over the shared corpus in
// hlo_parser_corpus_test.cc.
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "hlo_parser_test_util.h"
#include "ir/float_types.h"
#include "ir/module.h"

namespace xlac {
namespace {

using namespace hlo_parser_testing;  // NOLINT: test helpers

// ---------------------------------------------------------------------------------------------------------------
// Shapes

TEST(HloParserShape, ArraysTuplesAndDynamicDims) {
  Shape s = S("f32[2,<=3,?]");
  EXPECT_EQ(s.element_type, PrimitiveType::kF32);
  EXPECT_EQ(s.dimensions, (std::vector<int64_t>{2, 3, Shape::kUnboundedSize}));
  EXPECT_EQ(s.dynamic_dimensions, (std::vector<bool>{false, true, true}));
  EXPECT_FALSE(s.layout.has_value());
  Shape t = S("((s32[], token[]), pred[0]{0}, ())");
  ASSERT_TRUE(t.IsTuple());
  ASSERT_EQ(t.tuple_shapes.size(), 3u);
  EXPECT_TRUE(t.tuple_shapes[0].tuple_shapes[1].IsToken());
  EXPECT_TRUE(t.tuple_shapes[2].IsTuple());
  for (std::string_view type : {"s2", "u4", "bf16", "f8e4m3fn", "f8e8m0fnu", "f4e2m1fn", "c128", "opaque"}) {
    EXPECT_TRUE(ParseShape(std::string(type) + "[]").ok()) << type;
  }
}

TEST(HloParserShape, LayoutsWithEverythingXlaPrints) {
  Shape s = S("f32[8,128]{1,0:D(D,C+~)T(8,128)(2,1)L(4)#(u16)*(u32)E(4)S(1)SC(0:2,4)(1:3)M(8)}");
  ASSERT_TRUE(s.layout.has_value());
  const Layout& l = *s.layout;
  EXPECT_EQ(l.minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(l.dim_level_types, (std::vector<DimLevelType>{DimLevelType::kDense, DimLevelType::kCompressed}));
  EXPECT_EQ(l.dim_unique, (std::vector<bool>{true, false}));
  EXPECT_EQ(l.dim_ordered, (std::vector<bool>{true, false}));
  ASSERT_EQ(l.tiles.size(), 2u);
  EXPECT_EQ(l.tiles[0].dimensions, (std::vector<int64_t>{8, 128}));
  EXPECT_EQ(l.tail_padding_alignment_in_elements, 4);
  EXPECT_EQ(l.index_primitive_type, PrimitiveType::kU16);
  EXPECT_EQ(l.pointer_primitive_type, PrimitiveType::kU32);
  EXPECT_EQ(l.element_size_in_bits, 4);
  EXPECT_EQ(l.memory_space, 1);
  ASSERT_EQ(l.split_configs.size(), 2u);
  EXPECT_EQ(l.split_configs[0].split_indices, (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(l.dynamic_shape_metadata_prefix_bytes, 8);
  EXPECT_EQ(S("f32[2]{0:T(*,128)}").layout->tiles[0].dimensions[0], Tile::kCombineDimension);
  EXPECT_TRUE(S("f32[]{}").layout.has_value());
}

TEST(HloParserShape, Errors) {
  EXPECT_FALSE(ParseShape("f32[2]{1,0}").ok());  // minor_to_major size mismatch
  EXPECT_FALSE(ParseShape("f32[-1]").ok());
  EXPECT_FALSE(ParseShape("f32[99999999999999999999]").ok());  // does not lex
  EXPECT_FALSE(ParseShape("f32[18446744073709551615]").ok());  // above int64
  EXPECT_FALSE(ParseShape("token[2]").ok());
  EXPECT_FALSE(ParseShape("tuple[]").ok());
  EXPECT_FALSE(ParseShape("f32[2]{0:P(f32[2])}").ok());
  EXPECT_FALSE(ParseShape("f32[2]{0:#(s32)}").ok());  // index type must be unsigned
  EXPECT_FALSE(ParseShape("f32[2] extra").ok());
  absl::StatusOr<Shape> bad = ParseShape("f32[2,x]");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("<shape>:1:7: error: expects integer"), std::string::npos)
      << bad.status().message();
}

// ---------------------------------------------------------------------------------------------------------------
// Module structure

TEST(HloParserModule, HeaderAttributes) {
  auto m = MustParse(
      "HloModule m, is_scheduled=true, replica_count=2, num_partitions=4, "
      "entry_computation_layout={(f32[2]{0}, s32[])->f32[2]{0}}, "
      "input_output_alias={ {}: (0, {}, must-alias) }, buffer_donor={ (1, {}) }, "
      "frontend_attributes={b=\"2\", a=\"1\"}, allow_spmd_sharding_propagation_to_parameters={true,false}, "
      "allow_spmd_sharding_propagation_to_output=true, alias_passthrough_params=true\n"
      "ENTRY e {\n  p0 = f32[2] parameter(0)\n  p1 = s32[] parameter(1)\n  ROOT r = f32[2] copy(p0)\n}\n");
  ASSERT_NE(m, nullptr);
  const ModuleConfig& c = m->config();
  EXPECT_EQ(m->name(), "m");
  EXPECT_TRUE(c.is_scheduled);
  EXPECT_EQ(c.replica_count, 2);
  EXPECT_EQ(c.num_partitions, 4);
  ASSERT_TRUE(c.entry_computation_layout.has_value());
  EXPECT_EQ(c.entry_computation_layout->parameters.size(), 2u);
  ASSERT_EQ(c.input_output_alias.size(), 1u);
  EXPECT_TRUE(c.input_output_alias[0].must_alias);
  ASSERT_EQ(c.buffer_donor.size(), 1u);
  EXPECT_EQ(c.buffer_donor[0].parameter_number, 1);
  EXPECT_EQ(c.frontend_attributes, (StringMap{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(c.allow_spmd_sharding_propagation_to_parameters, (std::vector<bool>{true, false}));
  EXPECT_EQ(c.allow_spmd_sharding_propagation_to_output, (std::vector<bool>{true}));
  EXPECT_EQ(c.extra_attributes, (StringMap{{"alias_passthrough_params", "true"}}));
  EXPECT_EQ(m->source_name(), "test.hlo");
}

TEST(HloParserModule, HeaderErrors) {
  EXPECT_TRUE(FailsAt("HloModule m, bogus=1\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", 1, 14,
                      "unexpected attribute \"bogus\""));
  EXPECT_TRUE(FailsAt("HloModule m, replica_count=1, replica_count=2\nENTRY e {\n  ROOT c = f32[] constant(1)\n}\n", 1,
                      31, "already exists"));
  // Aliasing indices are checked against the entry computation (XLA's SetUpAlias).
  EXPECT_TRUE(FailsAt("HloModule m, input_output_alias={ {1}: (0, {}) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
                      1, 35, "output index {1} is invalid"));
  EXPECT_TRUE(FailsAt("HloModule m, input_output_alias={ {}: (3, {}) }\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
                      1, 35, "no parameter 3"));
}

TEST(HloParserModule, WithoutHeaderTheLastComputationIsTheEntry) {
  auto m = MustParse(
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "main {\n  ROOT c = f32[] constant(1)\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->name(), "module");
  EXPECT_EQ(m->entry_computation()->name(), "main");
  EXPECT_EQ(m->computations().size(), 2u);

  auto marked = MustParse(
      "ENTRY %main () -> f32[] {\n  ROOT %c = f32[] constant(1)\n}\n"
      "%other (x: f32[]) -> f32[] {\n  ROOT %x = f32[] parameter(0)\n}, execution_thread=\"t\"\n");
  ASSERT_NE(marked, nullptr);
  EXPECT_EQ(marked->entry_computation()->name(), "main");
  EXPECT_EQ(marked->computations()[1]->execution_thread(), "t");
}

TEST(HloParserModule, RootsAndEntries) {
  // Without ROOT the last instruction is the root.
  auto m = MustParse("HloModule m\nENTRY e {\n  a = f32[1]{0} constant({1})\n  b = f32[1]{0} constant({2})\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root()->name(), "b");
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY c {\n  ROOT a = f32[] constant(1)\n  ROOT b = f32[] constant(2)\n}\n", 4, 3,
                      "only one ROOT"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY c1 {\n  a = f32[] constant(1)\n}\nENTRY c2 {\n  b = f32[] constant(2)\n}\n",
                      5, 1, "expects only one ENTRY"));
  EXPECT_TRUE(FailsAt("HloModule m\nc {\n  a = f32[] constant(1)\n}\nc {\n  b = f32[] constant(2)\n}\n", 5, 1,
                      "computation already exists: c"));
  // The signature's result must match the root.
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e () -> s32[] {\n  ROOT a = f32[] constant(1)\n}\n", 2, 15,
                      "is not compatible with that of its root instruction a"));
}

TEST(HloParserModule, NamesAndScopes) {
  // Instruction names are per computation; % is optional everywhere.
  auto m = MustParse(
      "HloModule m\n%add {\n  p0 = f32[] parameter(0)\n  %p1 = f32[] parameter(1)\n"
      "  ROOT r = f32[] add(%p0, p1)\n}\nENTRY e {\n  p0 = f32[4] parameter(0)\n  c = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(p0, %c), dimensions={0}, to_apply=%add\n}\n");
  ASSERT_NE(m, nullptr);
  const Instruction* r = m->entry_computation()->root();
  ASSERT_EQ(r->called_computations().size(), 1u);
  EXPECT_EQ(r->called_computations()[0]->name(), "add");
  EXPECT_EQ(r->loc().line, 10);
  EXPECT_EQ(r->loc().col, 8);
  EXPECT_EQ(m->entry_computation()->loc().line, 7);
  EXPECT_EQ(m->entry_computation()->loc().col, 7);

  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  a = f32[] constant(2)\n}\n", 4, 3,
                      "instruction already exists: a"));
  EXPECT_TRUE(
      FailsAt("HloModule m\nENTRY e (x: f32[]) -> pred[] {\n  %x = f32[]{} parameter(0)\n"
              "  %eq = pred[]{} compare(f32[]{} %x, f32[]{} %y), direction=EQ\n}\n",
              4, 46, "instruction does not exist: y"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  ROOT b = f32[] call(a), to_apply=later\n}\n",
                      4, 36, "computation does not exist: later"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  a = f32[] constant(1)\n  ROOT b = s32[] negate(f32[2] a)\n}\n", 4, 25,
                      "declared operand shape f32[2] is not compatible"));
  // A written operand shape may be dynamic where the operand's is static (XLA's Compatible ignores dynamism).
  EXPECT_NE(MustParse("HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  ROOT b = f32[2] negate(f32[<=2] a)\n}\n"),
            nullptr);
}

TEST(HloParserModule, Parameters) {
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] parameter(0)\n}\n", 4, 3,
                      "parameter number 0 already allocated"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  a = f32[] parameter(1)\n}\n", 2, 7, "no parameter number 0"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  a = f32[] parameter(-1)\n}\n", 3, 23, "must be >= 0"));
  EXPECT_TRUE(
      FailsAt("HloModule m\nENTRY e {\n  a = parameter(0)\n}\n", 3, 7, "cannot infer shape for opcode: parameter"));
}

TEST(HloParserModule, NestedInstructionsAndShapeInference) {
  auto m = MustParse(
      "HloModule test\nENTRY test {\n  add = add(f32[10] parameter(0), f32[10] parameter(1))\n"
      "  ROOT root = tuple(add, add(add, add), add)\n}\n");
  ASSERT_NE(m, nullptr);
  const Computation* e = m->entry_computation();
  std::vector<std::string> names;
  for (const auto& i : e->instructions()) names.push_back(i->name());
  EXPECT_EQ(names, (std::vector<std::string>{"parameter.anon", "parameter.anon.1", "add", "add.anon", "root"}));
  EXPECT_EQ(e->root()->shape(), S("(f32[10], f32[10], f32[10])"));

  // Nested instructions cannot carry attributes, so one needing dimensions= fails.
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  ROOT r = sqrt(f32[2,2] broadcast(f32[2] parameter(0)))\n}\n", 3, 26,
                      "attribute dimensions is expected"));
  auto b = MustParse("HloModule m\nENTRY e {\n  ROOT r = sqrt(f32[2,2] broadcast(f32[] parameter(0)))\n}\n");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Find(*b, "broadcast.anon")->dimensions(), std::vector<int64_t>{});
}

TEST(HloParserModule, ControlPredecessorsAndComments) {
  auto m = MustParse(
      "HloModule m\nENTRY e {\n  a = f32[] constant(1) // first\n  /* block\n comment */\n"
      "  b = f32[] constant(2), control-predecessors={a}\n  ROOT t = (f32[], f32[]) tuple(a, /*index=1*/b)\n}\n");
  ASSERT_NE(m, nullptr);
  const Instruction* b = Find(*m, "b");
  ASSERT_EQ(b->control_predecessors().size(), 1u);
  EXPECT_EQ(b->control_predecessors()[0]->name(), "a");
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  b = f32[] constant(2), control-predecessors={zz}\n}\n", 3, 48,
                      "instruction 'zz' is not defined"));
}

TEST(HloParserModule, StackFrameIndexAndCompactSpelling) {
  auto m = MustParse(
      "HloModule m\nFileNames\n1 \"a.py\"\nFunctionNames\n1 \"f\"\nFileLocations\n"
      "1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=9}\nStackFrames\n"
      "1 {file_location_id=1 parent_frame_id=0}\n"
      "ENTRY e {\n  p=f32[] parameter(0), metadata={stack_frame_id=1}\n}\n");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry_computation()->root()->metadata().stack_frame_id, 1);
  EXPECT_TRUE(
      FailsAt("HloModule m\nFileNames\nFunctionNames\nFileLocations\n1 {line=3}\nStackFrames\n"
              "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
              5, 3, "sub-attribute file_name_id is expected"));
  EXPECT_TRUE(
      FailsAt("HloModule m\nFileNames\nFunctionNames\nFileLocations\nStackFrames\n1 {file_location_id=1}\n"
              "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
              6, 3, "sub-attribute parent_frame_id is expected"));
  EXPECT_TRUE(
      FailsAt("HloModule m\nFileNames\nFunctionNames\nFileLocations\nStackFrames\n"
              "1 {file_location_id=1 parent_frame_id=1 depth=2}\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
              6, 41, "unexpected attribute \"depth\" in stack frame"));
}

// The FileNames / FunctionNames / FileLocations / StackFrames section XLA prints after the header (as JAX dumps
// carry it) is kept in the module config, every id as written, and prints back unchanged.
TEST(HloParserModule, StackFrameIndexIsKeptAndPrintsBack) {
  const std::string text =
      "HloModule jit_f, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\n"
      "FileNames\n1 \"snippet.py\"\n2 \"lib/\\\"q\\\".py\"\n\n"
      "FunctionNames\n1 \"<module>\"\n2 \"main\"\n3 \"main.<locals>.f\"\n\n"
      "FileLocations\n"
      "1 {file_name_id=1 function_name_id=1 line=85 end_line=85 column=13 end_column=19}\n"
      "2 {file_name_id=1 function_name_id=2 line=65 end_line=66 column=19 end_column=49}\n"
      "3 {file_name_id=2 function_name_id=3 line=63 end_line=63 column=20 end_column=29}\n\n"
      "StackFrames\n"
      "1 {file_location_id=1 parent_frame_id=1}\n"
      "2 {file_location_id=2 parent_frame_id=1}\n"
      "3 {file_location_id=3 parent_frame_id=2}\n\n\n"
      "ENTRY %main (p: f32[4]) -> f32[4] {\n"
      "  %p = f32[4]{0} parameter(0)\n"
      "  ROOT %tanh = f32[4]{0} tanh(f32[4]{0} %p), metadata={op_name=\"jit(f)/tanh\" stack_frame_id=3}\n"
      "}\n\n";
  auto m = MustParse(text);
  ASSERT_NE(m, nullptr);
  ASSERT_TRUE(m->config().stack_frame_index.has_value());
  const StackFrameIndex& index = *m->config().stack_frame_index;
  EXPECT_EQ(index.file_names, (std::vector<std::string>{"snippet.py", "lib/\"q\".py"}));
  EXPECT_EQ(index.function_names, (std::vector<std::string>{"<module>", "main", "main.<locals>.f"}));
  EXPECT_EQ(index.file_locations, (std::vector<StackFrameIndex::FileLocation>{
                                      {1, 1, 85, 85, 13, 19}, {1, 2, 65, 66, 19, 49}, {2, 3, 63, 63, 20, 29}}));
  EXPECT_EQ(index.stack_frames, (std::vector<StackFrameIndex::StackFrame>{{1, 1}, {2, 1}, {3, 2}}));
  EXPECT_EQ(PrintModule(*m), text);
  // Without one, the config has none.
  auto plain = MustParse("HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n");
  ASSERT_NE(plain, nullptr);
  EXPECT_FALSE(plain->config().stack_frame_index.has_value());
}

// XLA's parser builds send, send-done, recv, recv-done, infeed, outfeed, after-all and add-dependency from their
// operands (HloInstruction::CreateSend, ...) and ignores the shape written in the text; recv and infeed take only
// the data element from it. Data shapes keep their layouts.
TEST(HloParserModule, ShapesXlaBuildsFromOperandsIgnoreTheWrittenOne) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  p = f32[4,3]{0,1} parameter(0)
  token0 = f32[] after-all()
  send = f32[4,3] send(p, token0), channel_id=1
  send-done = (f32[4,3], token[]) send-done(send), channel_id=1
  recv = (f32[2]{0}, u32[]) recv(token0), channel_id=2
  recv-done = (f32[7], token[]) recv-done(recv), channel_id=2
  outfeed = () outfeed(p, token0)
  infeed = (s32[3], token[], f32[]) infeed(token0)
  dep = s32[] add-dependency(p, token0)
  ROOT r = f32[4,3]{0,1} copy(dep)
}
)");
  ASSERT_NE(m, nullptr);
  auto shape_of = [&](std::string_view name) { return ShapeToString(Find(*m, name)->shape()); };
  EXPECT_EQ(shape_of("token0"), "token[]");
  EXPECT_EQ(shape_of("send"), "(f32[4,3]{0,1}, u32[], token[])");
  EXPECT_EQ(shape_of("send-done"), "token[]");
  EXPECT_EQ(shape_of("recv"), "(f32[2]{0}, u32[], token[])");
  EXPECT_EQ(shape_of("recv-done"), "(f32[2]{0}, token[])");
  EXPECT_EQ(shape_of("outfeed"), "token[]");
  EXPECT_EQ(shape_of("infeed"), "(s32[3], token[])");
  EXPECT_EQ(shape_of("dep"), "f32[4,3]{0,1}");
  // XLA check-fails building a recv-done of something that is not a (data, context, token) tuple.
  EXPECT_TRUE(
      FailsAt("HloModule m\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT d = (f32[2], token[]) recv-done(p)\n}\n", 4,
              39, "recv-done takes the (data, context, token) tuple of a recv"));
}

TEST(HloParserModule, LineOffsetOfSplitInput) {
  Parsed p = Parse("HloModule m\nENTRY e {\n  ROOT x = f32[] bogus()\n}\n", {}, 20);
  ASSERT_EQ(p.module, nullptr);
  ASSERT_FALSE(p.diags.empty());
  EXPECT_EQ(p.diags[0].loc.line, 23);
  EXPECT_EQ(p.diags[0].loc.col, 18);
  EXPECT_NE(p.diags[0].message.find("unknown opcode: bogus"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------------------------
// Attributes

constexpr std::string_view kAttributesModule = R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
cond {
  c = (s32[], f32[4,8]) parameter(0)
  ROOT t = pred[] constant(true)
}
fused {
  f = f32[4,8] parameter(0)
  ROOT n = f32[4,8] negate(f)
}
ENTRY e {
  p = f32[4,8] parameter(0)
  k = f32[3,3,8,16] parameter(1)
  img = f32[1,8,8,8] parameter(2)
  idx = s32[2,1] parameter(3)
  z = f32[] constant(0)
  sl = f32[2,4] slice(p), slice={[0:4:2], [4:8]}
  pad = f32[6,9] pad(p, z), padding=1_1x0_1_0
  rw = f32[2,4] reduce-window(p, z), window={size=2x2 stride=2x2 pad=0_1x1_0 lhs_dilate=1x3 rhs_dilate=2x1 rhs_reversal=0x1}, to_apply=add
  conv = f32[1,6,6,16] convolution(img, k), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=1
  dot = f32[4,4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={1}, operand_precision={HIGH,default}, algorithm=dot_bf16_bf16_f32
  cmp = pred[4,8] compare(p, p), direction=LT, type=TOTALORDER
  g = f32[2,8] gather(p, idx), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}, indices_are_sorted=true
  ar = f32[4,8] all-reduce(p), replica_groups={{0,1},{2,3}}, channel_id=5, use_global_device_ids=true, to_apply=add
  ag = f32[8,8] all-gather(p), replica_groups=[2,2]<=[2,2]T(1,0), dimensions={0}
  cp = f32[4,8] collective-permute(p), source_target_pairs={{0,1},{1,0}}
  cc = (f32[4,8], s32[]) custom-call(p, z), custom_call_target="foo\"bar", api_version=API_VERSION_TYPED_FFI, backend_config={"k": {"x": "}"}}, operand_layout_constraints={f32[4,8]{0,1}, f32[]}, output_to_operand_aliasing={{0}: (0, {})}, custom_call_has_side_effect=true, schedule=SCHEDULE_LATEST, literal=(f32[2]{0} {1, 2}, s32[] 3)
  fu = f32[4,8] fusion(p), kind=kLoop, calls=fused, backend_config="cfg"
  tup = (s32[], f32[4,8]) tuple(z, p), sharding={{replicated}, {devices=[2,1]0,1 metadata={op_name="x"}}}
  w = (s32[], f32[4,8]) while(tup), condition=cond, body=cond, frontend_attributes={z="1", a={"b":1}}
  bn = (f32[4,8], f32[8], f32[8]) batch-norm-training(p, z, z), epsilon=0.001, feature_index=1
  it = s32[5] iota(), iota_dimension=0, metadata={op_type="T" op_name="n" source_file="f.py" source_line=3, profile_type={1} preserve_layout=true}
  rp = bf16[4,8] reduce-precision(p), exponent_bits=8, mantissa_bits=7
  ROOT st = f32[4,8] sort(p), dimensions={1}, is_stable=true, to_apply=add, statistics={visualizing_index=1,stat-1=33.5}
}
)";

TEST(HloParserAttributes, OpcodeSpecificValues) {
  auto m = MustParse(kAttributesModule);
  ASSERT_NE(m, nullptr);
  auto attr = [&](std::string_view inst, std::string_view name) -> const AttrValue& {
    const AttrValue* v = Find(*m, inst)->FindAttr(name);
    EXPECT_NE(v, nullptr) << inst << "." << name;
    static const AttrValue kNone;
    return v != nullptr ? *v : kNone;
  };
  EXPECT_EQ(attr("sl", "slice").get<std::vector<SliceRange>>(), (std::vector<SliceRange>{{0, 4, 2}, {4, 8, 1}}));
  EXPECT_EQ(attr("pad", "padding").get<PaddingConfig>().dimensions,
            (std::vector<PaddingDimension>{{1, 1, 0}, {0, 1, 0}}));
  const Window& w = attr("rw", "window").get<Window>();
  ASSERT_EQ(w.dimensions.size(), 2u);
  EXPECT_EQ(w.dimensions[0], (WindowDimension{2, 2, 0, 1, 2, 1, false}));
  EXPECT_EQ(w.dimensions[1], (WindowDimension{2, 2, 1, 0, 1, 3, true}));
  const auto& d = attr("conv", "dim_labels").get<ConvolutionDimensionNumbers>();
  EXPECT_EQ(d.input_batch_dimension, 0);
  EXPECT_EQ(d.input_feature_dimension, 3);
  EXPECT_EQ(d.input_spatial_dimensions, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(d.kernel_input_feature_dimension, 2);
  EXPECT_EQ(d.kernel_output_feature_dimension, 3);
  EXPECT_EQ(d.kernel_spatial_dimensions, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(attr("conv", "feature_group_count").get<int64_t>(), 1);
  EXPECT_EQ(attr("dot", "operand_precision").get<std::vector<std::string>>(),
            (std::vector<std::string>{"high", "default"}));
  EXPECT_EQ(attr("dot", "algorithm").get<std::string>(), "dot_bf16_bf16_f32");
  EXPECT_EQ(attr("cmp", "direction").get<std::string>(), "LT");
  EXPECT_EQ(attr("cmp", "type").kind, AttrKind::kEnum);
  EXPECT_EQ(attr("g", "slice_sizes").get<std::vector<int64_t>>(), (std::vector<int64_t>{1, 8}));
  EXPECT_TRUE(attr("g", "indices_are_sorted").get<bool>());
  EXPECT_EQ(attr("ar", "replica_groups").get<ReplicaGroups>().groups,
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(attr("ar", "channel_id").get<int64_t>(), 5);
  const ReplicaGroups& iota = attr("ag", "replica_groups").get<ReplicaGroups>();
  ASSERT_TRUE(iota.iota.has_value());
  EXPECT_EQ(iota.iota->dims, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(iota.iota->transpose_perm, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(attr("cp", "source_target_pairs").kind, AttrKind::kIntListList);

  const Instruction* cc = Find(*m, "cc");
  EXPECT_EQ(attr("cc", "custom_call_target").get<std::string>(), "foo\"bar");
  EXPECT_EQ(cc->backend_config(), "{\"k\": {\"x\": \"}\"}}");
  EXPECT_TRUE(cc->backend_config_is_raw());
  EXPECT_EQ(attr("cc", "operand_layout_constraints").get<std::vector<Shape>>().size(), 2u);
  EXPECT_EQ(attr("cc", "output_to_operand_aliasing").get<std::vector<OutputOperandAlias>>(),
            (std::vector<OutputOperandAlias>{{{0}, 0, {}}}));
  const Literal& lit = *attr("cc", "literal").get<std::shared_ptr<const Literal>>();
  ASSERT_TRUE(lit.is_tuple());
  EXPECT_EQ(lit.tuple_elements()[0].Get<float>(1), 2.0f);
  EXPECT_EQ(lit.tuple_elements()[1].Get<int32_t>(0), 3);

  const Instruction* fu = Find(*m, "fu");
  EXPECT_EQ(fu->backend_config(), "cfg");
  EXPECT_FALSE(fu->backend_config_is_raw());
  ASSERT_EQ(fu->called_computations().size(), 1u);
  EXPECT_TRUE(fu->called_computation()->is_fusion_computation());
  const Instruction* w_inst = Find(*m, "w");
  // while's called computations are {condition, body} whatever the attribute order in the text.
  EXPECT_EQ(w_inst->called_computations(),
            (std::vector<Computation*>{m->FindComputation("cond"), m->FindComputation("cond")}));
  EXPECT_EQ(w_inst->frontend_attributes(), (StringMap{{"a", "{\"b\":1}"}, {"z", "1"}}));
  const Sharding& sh = *Find(*m, "tup")->sharding();
  ASSERT_TRUE(sh.IsTuple());
  EXPECT_EQ(sh.tuple_elements[1].kind, Sharding::Kind::kTiled);
  EXPECT_EQ(sh.tuple_elements[1].device_ids, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(sh.tuple_elements[1].metadata[0].op_name, "x");
  EXPECT_EQ(attr("bn", "epsilon").get<double>(), 0.001);
  const OpMetadata& md = Find(*m, "it")->metadata();
  EXPECT_EQ(md.op_type, "T");
  EXPECT_EQ(md.source_line, 3);
  EXPECT_EQ(md.profile_type, (std::vector<std::string>{"1"}));
  EXPECT_TRUE(md.preserve_layout);
  EXPECT_EQ(attr("rp", "mantissa_bits").get<int64_t>(), 7);
  EXPECT_EQ(Find(*m, "st")->extra_attributes(), (StringMap{{"statistics", "{visualizing_index=1,stat-1=33.5}"}}));
}

TEST(HloParserAttributes, ControlFlowCalledComputationOrder) {
  auto m = MustParse(R"(HloModule m
a {
  x = f32[] parameter(0)
  ROOT y = f32[] negate(x)
}
b {
  x = f32[] parameter(0)
  ROOT y = f32[] copy(x)
}
ENTRY e {
  p = pred[] parameter(0)
  i = s32[] parameter(1)
  f = f32[] parameter(2)
  c1 = f32[] conditional(p, f, f), false_computation=b, true_computation=a
  c2 = f32[] conditional(i, f, f, f), branch_computations={b, a, {
    q = f32[] parameter(0)
    ROOT r = f32[] abs(q)
  }}
  ROOT c3 = conditional(p, f, f), true_computation=a, false_computation=b
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "c1")->called_computations(),
            (std::vector<Computation*>{m->FindComputation("a"), m->FindComputation("b")}));
  const auto& branches = Find(*m, "c2")->called_computations();
  ASSERT_EQ(branches.size(), 3u);
  EXPECT_EQ(branches[2]->root()->opcode(), Opcode::kAbs);  // the inline computation
  EXPECT_EQ(m->entry_computation()->root()->shape(), S("f32[]"));
}

TEST(HloParserAttributes, Errors) {
  const std::string head = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  t = (f32[4]) tuple(p)\n";
  auto fails = [&](std::string_view line, int col, std::string_view part) {
    return FailsAt(head + std::string(line) + "\n}\n", 5, col, part);
  };
  EXPECT_TRUE(fails("  x = f32[4] negate(p), foo=1", 25, "unexpected attribute \"foo\" for negate"));
  EXPECT_TRUE(fails("  x = f32[4] reverse(p), dimensions={0}, dimensions={0}", 42, "attribute dimensions already"));
  EXPECT_TRUE(fails("  x = f32[4] get-tuple-element(t)", 14, "attribute index is expected but not seen"));
  EXPECT_TRUE(fails("  x = pred[4] compare(p, p), direction=XX", 40, "unknown value 'XX' for direction"));
  EXPECT_TRUE(
      fails("  x = f32[4] reduce-window(p, p), window={size=2 bogus=1}", 50, "unexpected window sub-attribute"));
  EXPECT_TRUE(fails("  x = f32[4] reduce-window(p, p), window={size=2 stride=1x1}", 42, "same size as 'size='"));
  EXPECT_TRUE(fails("  x = f32[4] convolution(p, p), dim_labels=b0f_0io->b1f", 44, "spatial dimension 1"));
  EXPECT_TRUE(
      fails("  x = f32[4] custom-call(p), custom_call_target=\"a\", operand_layout_constraints={f32[4], f32[4]}", 54,
            "expected 1 operand layout constraints, 2 given"));
  EXPECT_TRUE(fails("  x = f32[4] negate(p), sharding={devices=[2,2]0,1}", 35, "needs 4 devices, but 2 are listed"));
  EXPECT_TRUE(fails("  x = f32[4] negate(p), sharding={maximal}", 35, "exactly one device"));
  EXPECT_TRUE(fails("  x = f32[4] negate(p), sharding={devices=[4]<=[2,2]}", 53, "expects 'T('"));
  EXPECT_TRUE(fails("  x = f32[4] negate(p), metadata={op_name=\"a\" colour=\"red\"}", 47, "\"colour\" in metadata"));
  EXPECT_TRUE(fails("  x = f32[4] exponential(p), result_accuracy={foo=10.0}", 47, "invalid attribute name: foo"));
  EXPECT_TRUE(fails("  x = f32[4] exponential(p), result_accuracy={mode=foo}", 52, "unknown result accuracy mode"));
  EXPECT_TRUE(fails("  x = negate(p), origin={{\"v\"}}", 18, "origin= requires"));
  EXPECT_TRUE(fails("  x = f32[4] all-gather(p), replica_groups=[2,2,1]<=[4], dimensions={0}", 44, "rank 2"));
  EXPECT_TRUE(fails("  x = f32[4] collective-permute(p), source_target_pairs={{0,1,2}}", 37, "list of pairs"));
  EXPECT_TRUE(fails("  x = f32[4] parameter(1), parameter_replication={true,false}", 28, "1 leaf buffers"));
  EXPECT_TRUE(fails("  x = f32[4] add(p)", 17, "expects 2 operands, but has 1 operands"));
  EXPECT_TRUE(fails("  x = f32[4] infeed(p)", 7, "infeed must have a non-empty tuple shape"));
  EXPECT_TRUE(fails("  x = f32[4] conditional(t, p, p), branch_computations={}", 26, "first operand must be a scalar"));
}

// ---------------------------------------------------------------------------------------------------------------
// Shardings

TEST(HloParserSharding, EveryForm) {
  auto parse = [](std::string_view text) {
    std::string module =
        "HloModule m\nENTRY e {\n  ROOT p = f32[4,4] parameter(0), sharding=" + std::string(text) + "\n}\n";
    auto m = MustParse(module);
    return m == nullptr ? Sharding() : *m->entry_computation()->root()->sharding();
  };
  EXPECT_EQ(parse("{replicated}").kind, Sharding::Kind::kReplicated);
  Sharding maximal = parse("{maximal device=3}");
  EXPECT_EQ(maximal.kind, Sharding::Kind::kMaximal);
  EXPECT_EQ(maximal.device, 3);
  EXPECT_EQ(parse("{manual}").kind, Sharding::Kind::kManual);
  EXPECT_EQ(parse("{unknown}").kind, Sharding::Kind::kUnknown);
  Sharding iota = parse("{devices=[4,2]<=[8]}");
  ASSERT_TRUE(iota.iota.has_value());
  EXPECT_EQ(iota.iota->reshape_dims, (std::vector<int64_t>{8}));
  EXPECT_TRUE(iota.iota->transpose_perm.empty());
  Sharding transposed = parse("{devices=[2,2,2]<=[2,4]T(1,0) last_tile_dim_replicate}");
  EXPECT_TRUE(transposed.last_tile_dim_replicate);
  EXPECT_EQ(transposed.iota->transpose_perm, (std::vector<int64_t>{1, 0}));
  Sharding subgroups = parse("{devices=[2,1,2,2]0,1,2,3,4,5,6,7 last_tile_dims={manual, replicated}}");
  EXPECT_EQ(subgroups.last_tile_dims, (std::vector<Sharding::SubgroupType>{Sharding::SubgroupType::kManual,
                                                                           Sharding::SubgroupType::kReplicated}));
  Sharding grouped = parse("{replicated shard_like 2 metadata={{op_name=\"a\"}, {op_name=\"b\"}}}");
  EXPECT_EQ(grouped.shard_group_id, 2);
  EXPECT_FALSE(grouped.shard_group_is_shard_as);
  EXPECT_EQ(grouped.metadata.size(), 2u);
  EXPECT_TRUE(parse("{shard_as 1 manual}").shard_group_is_shard_as);
  EXPECT_TRUE(parse("{}").IsTuple());
}

// ---------------------------------------------------------------------------------------------------------------
// Literals

const Literal& ConstantOf(const Module& m, std::string_view name) { return Find(m, name)->literal(); }

TEST(HloParserLiteral, EveryType) {
  auto m = MustParse(R"(HloModule m
ENTRY e {
  b = pred[3] constant({true, false, 1})
  i = s4[2,2] constant({ /*i0=0*/ {-8, 7}, /*i0=1*/ {0, -1} })
  u = u64[2] constant({18446744073709551615, 0})
  h = f16[4] constant({inf, -inf, 65504, -0})
  n = f32[3] constant({nan, -nan(0x1), nan(0x7fffff)})
  bf = bf16[2] constant({-nan(0x7f), 1.5})
  f8 = f8e4m3fn[2] constant({448, nan})
  c = c64[2] constant({(1, 2), (-3.5, inf)})
  t = (f32[2], (s32[], pred[])) constant(( {1, 2}, (3, true) ))
  big = f32[1000000000,1000] constant({...})
  ROOT s = f64[] constant(1e-300)
}
)");
  ASSERT_NE(m, nullptr);
  const Literal& b = ConstantOf(*m, "b");
  EXPECT_EQ(b.Get<uint8_t>(0), 1);
  EXPECT_EQ(b.Get<uint8_t>(2), 1);
  const Literal& i = ConstantOf(*m, "i");
  EXPECT_EQ(i.Get<int8_t>(0), -8);
  EXPECT_EQ(i.Get<int8_t>(3), -1);
  EXPECT_EQ(ConstantOf(*m, "u").Get<uint64_t>(0), 18446744073709551615ull);
  const Literal& h = ConstantOf(*m, "h");
  EXPECT_EQ(h.Get<uint16_t>(0), 0x7c00);
  EXPECT_EQ(h.Get<uint16_t>(1), 0xfc00);
  EXPECT_EQ(h.Get<uint16_t>(2), 0x7bff);
  EXPECT_EQ(h.Get<uint16_t>(3), 0x8000);  // -0 keeps its sign
  const Literal& n = ConstantOf(*m, "n");
  uint32_t bits;
  float f = n.Get<float>(0);
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(bits, 0x7fc00000u);
  f = n.Get<float>(1);
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(bits, 0xff800001u);
  f = n.Get<float>(2);
  std::memcpy(&bits, &f, 4);
  EXPECT_EQ(bits, 0x7fffffffu);
  EXPECT_EQ(ConstantOf(*m, "bf").Get<uint16_t>(0), 0xffff);
  EXPECT_EQ(ConstantOf(*m, "bf").Get<uint16_t>(1), 0x3fc0);
  EXPECT_EQ(ConstantOf(*m, "f8").Get<uint8_t>(0), 0x7e);
  const Literal& c = ConstantOf(*m, "c");
  EXPECT_EQ(c.Get<std::complex<float>>(0), std::complex<float>(1, 2));
  EXPECT_TRUE(std::isinf(c.Get<std::complex<float>>(1).imag()));
  const Literal& t = ConstantOf(*m, "t");
  ASSERT_TRUE(t.is_tuple());
  EXPECT_EQ(t.tuple_elements()[1].tuple_elements()[0].Get<int32_t>(0), 3);
  EXPECT_TRUE(ConstantOf(*m, "big").is_unknown());
  EXPECT_EQ(ConstantOf(*m, "s").Get<double>(0), 1e-300);
}

TEST(HloParserLiteral, RangeAndShapeErrors) {
  auto fails = [](std::string_view constant, int col, std::string_view part) {
    return FailsAt("HloModule m\nENTRY e {\n  ROOT c = " + std::string(constant) + "\n}\n", 3, col, part);
  };
  EXPECT_TRUE(fails("u4[] constant(-1)", 26, "out of range for literal's primitive type u4"));
  EXPECT_TRUE(fails("s4[] constant(8)", 26, "namely [-8, 7]"));
  EXPECT_TRUE(fails("s4[] constant(-9)", 26, "out of range"));
  EXPECT_TRUE(fails("u32[] constant(4294967296)", 27, "out of range"));
  EXPECT_TRUE(fails("s64[] constant(9223372036854775808)", 27, "out of range"));
  EXPECT_TRUE(fails("f16[] constant(-65520)", 27, "out of range"));
  EXPECT_TRUE(fails("f64[] constant(1.8e308)", 27, "out of range for double"));
  EXPECT_TRUE(fails("c64[] constant((1e100, 0))", 27, "real part 1e+100 is out of range"));
  EXPECT_TRUE(fails("bf16[1] constant({nan(0x3ff)})", 30, "NaN payload 0x3ff is out of range"));
  EXPECT_TRUE(fails("f8e4m3b11fnuz[1] constant({nan(0x1)})", 39, "does not support NaN payloads"));
  EXPECT_TRUE(fails("f32[2,3] constant({1, 2, 3, 4, 5, 6})", 31, "expects nested array in rank 2, but sees 1"));
  EXPECT_TRUE(fails("f32[2,3] constant(}{1, 2, 3}, {4, 5, 6}})", 30, "unexpected '}'"));
  EXPECT_TRUE(fails("f32[2,1] constant({{1}, {2}, {3}})", 41, "expects 2 elements in the []th element, but sees more"));
  EXPECT_TRUE(fails("s32[] constant(1.5)", 27, "expects integer for primitive type: s32"));
  EXPECT_TRUE(fails("f32[] constant(true)", 27, "expects floating point value"));
  EXPECT_TRUE(fails("f32[] constant((1, 2))", 27, "parentheses are only valid for complex"));
  EXPECT_TRUE(fails("token[] constant(0)", 29, "literals of type token are not supported"));
  // A huge shape written with few elements is a dimension mismatch, not an allocation.
  EXPECT_TRUE(fails("f32[1000000000000] constant({1, 2})", 45, "expects 1000000000000 elements in the []th element"));
}

TEST(HloParserLiteral, BareValueForArraySetsOnlyTheFirstElement) {
  // XLA quirk (relied on by real tests): `f32[3] constant(0.5)` is {0.5, 0, 0}.
  Parsed p = Parse("HloModule m\nENTRY e {\n  ROOT c = f32[3] constant(0.5)\n}\n");
  ASSERT_NE(p.module, nullptr) << p.rendered;
  const Literal& lit = p.module->entry_computation()->root()->literal();
  EXPECT_EQ(lit.Get<float>(0), 0.5f);
  EXPECT_EQ(lit.Get<float>(2), 0.0f);
  ASSERT_EQ(p.diags.size(), 1u);
  EXPECT_EQ(p.diags[0].severity, Severity::kWarning);
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  ROOT c = f32[100000000000] constant(1)\n}\n", 3, 39, "maximum size"));
}

TEST(HloParserLiteral, SizeLimit) {
  HloParseOptions options;
  options.max_literal_bytes = 16;
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  ROOT c = f32[5] constant({1, 2, 3, 4, 5})\n}\n", 3, 41,
                      "maximum size of 16 bytes", options));
}

// ---------------------------------------------------------------------------------------------------------------
// Async ops

TEST(HloParserAsync, ChainsAndSyntaxSugar) {
  auto m = MustParse(R"(HloModule m
wrapped {
  a = f32[10] parameter(0)
  ROOT r = f32[20] custom-call(a), custom_call_target="foo"
}
ENTRY e {
  p = f32[10] parameter(0)
  s = ((f32[10]), f32[20], s32[]) async-start(p), calls=wrapped
  u = ((f32[10]), f32[20], s32[]) async-update(s)
  d = f32[20] async-done(u), calls=wrapped
  start2 = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target="bar"
  update2 = ((f32[10]), f32[20], s32[]) custom-call-update(start2)
  ROOT done2 = f32[20] custom-call-done(update2)
}
)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(Find(*m, "u")->called_computations(), (std::vector<Computation*>{m->FindComputation("wrapped")}));
  // (Names like s2 / u2 are element types and cannot name instructions, as in XLA.)
  const Instruction* s2 = Find(*m, "start2");
  EXPECT_EQ(s2->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(s2->async_wrapped_opcode(), Opcode::kCustomCall);
  EXPECT_EQ(s2->StringAttr("custom_call_target"), "bar");
  EXPECT_EQ(Find(*m, "done2")->async_wrapped_opcode(), Opcode::kCustomCall);
  EXPECT_EQ(m->computations().size(), 2u);  // sugar creates no wrapped computation
}

TEST(HloParserAsync, Errors) {
  const std::string wrapped =
      "HloModule m\nw {\n  a = f32[10] parameter(0)\n  ROOT r = f32[20] custom-call(a), custom_call_target=\"foo\"\n}\n"
      "w2 {\n  a = f32[10] parameter(0)\n  ROOT r = f32[20] custom-call(a), custom_call_target=\"foo\"\n}\n"
      "ENTRY e {\n  p = f32[10] parameter(0)\n";
  auto fails = [&](std::string_view body, int line, int col, std::string_view part) {
    return FailsAt(wrapped + std::string(body) + "}\n", line, col, part);
  };
  EXPECT_TRUE(fails("  t = ((f32[10]), f32[20], s32[]) tuple(p, p, p)\n  d = f32[20] custom-call-done(t)\n", 13, 31,
                    "expect a single async op"));
  EXPECT_TRUE(
      fails("  s = ((f32[10]), f32[20], s32[]) custom-call-start(p), custom_call_target=\"foo\"\n"
            "  d = f32[20] add-done(s)\n",
            13, 15, "expect async wrapped opcode to be custom-call, but got add"));
  EXPECT_TRUE(
      fails("  s = ((f32[10]), f32[20], s32[]) async-start(p), calls=w\n  d = f32[20] async-done(s), calls=w2\n", 13,
            30, "expect async_wrapped_computation to be w, but got w2"));
  EXPECT_TRUE(fails("  s = ((f32[10])) async-start(p), calls=w\n", 12, 7, "((async-operands), async-outputs, state)"));
  EXPECT_TRUE(
      fails("  s = ((f32[10]), f32[20], s32[]) async-start(p), calls=w\n"
            "  u = (f32[10], f32[20], s32[]) async-update(s)\n",
            13, 7, "same as the operand shape"));
  EXPECT_TRUE(
      fails("  s = ((f32[10]), f32[20], s32[]) async-start(p), calls=w\n  d = f32[20] async-done(s)\n"
            "  s1 = ((f32[10]), f32[20], s32[]) async-start(p), calls=w\n  d1 = f32[20] async-done(s1)\n",
            14, 52, "computation w is called by more than one async op"));
  EXPECT_TRUE(fails("  s = ((f32[10]), f32[20], s32[]) bogus-start(p)\n", 12, 35, "expects async wrapped opcode"));
}

// ---------------------------------------------------------------------------------------------------------------
// Robustness: hostile input is an error, never a crash, unbounded recursion or allocation.

::testing::AssertionResult FailsWith(std::string_view text, std::string_view part,
                                     const HloParseOptions& options = {}) {
  Parsed p = Parse(text, options);
  if (p.module != nullptr) return ::testing::AssertionFailure() << "parsed successfully";
  for (const Diagnostic& d : p.diags) {
    if (d.severity == Severity::kError && d.message.find(part) != std::string::npos) {
      return ::testing::AssertionSuccess();
    }
  }
  return ::testing::AssertionFailure() << "no error containing '" << part << "':\n" << p.rendered;
}

std::string Repeat(std::string_view s, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += s;
  return out;
}

TEST(HloParserRobustness, DeepNestingIsAnError) {
  constexpr int kDeep = 100000;
  EXPECT_TRUE(FailsWith(
      "HloModule m\nENTRY e {\n  ROOT p = " + Repeat("(", kDeep) + "f32[]" + Repeat(")", kDeep) + " parameter(0)\n}\n",
      "maximum nesting depth"));
  EXPECT_TRUE(FailsWith("HloModule m\nENTRY e {\n  ROOT p = f32[] " + Repeat("negate(", kDeep) + "f32[] parameter(0)" +
                            Repeat(")", kDeep) + "\n}\n",
                        "maximum nesting depth"));
  EXPECT_TRUE(FailsWith("HloModule m\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT c = f32[] call(p), to_apply=" +
                            Repeat("{\n x = f32[] parameter(0)\n ROOT y = f32[] call(x), to_apply=", kDeep),
                        "maximum nesting depth"));
  HloParseOptions shallow;
  shallow.max_nesting_depth = 8;
  EXPECT_TRUE(FailsWith("HloModule m\nENTRY e {\n  ROOT p = ((((((((((f32[]))))))))))) parameter(0)\n}\n",
                        "maximum nesting depth (8)", shallow));
}

TEST(HloParserRobustness, EveryPrefixFailsCleanly) {
  // Truncating a valid module anywhere must give an error (or, at the very end, the module) and never crash.
  const std::string_view text = kAttributesModule;
  for (size_t len = 0; len < text.size(); ++len) {
    Parsed p = Parse(text.substr(0, len));
    if (p.module != nullptr) continue;
    bool has_error = false;
    for (const Diagnostic& d : p.diags) has_error |= d.severity == Severity::kError;
    ASSERT_TRUE(has_error) << "prefix of length " << len << " failed without an error";
  }
}

TEST(HloParserRobustness, GarbageFailsCleanly) {
  static constexpr std::string_view kPieces[] = {"HloModule m\n",
                                                 "ENTRY",
                                                 " e ",
                                                 "{",
                                                 "}",
                                                 "(",
                                                 ")",
                                                 "[",
                                                 "]",
                                                 ",",
                                                 "=",
                                                 "f32[2]",
                                                 "s32[]",
                                                 "%x",
                                                 "x:",
                                                 "1",
                                                 "-1",
                                                 "1.5e3",
                                                 "nan(0x1)",
                                                 "\"s\"",
                                                 "/*",
                                                 "*/",
                                                 "...",
                                                 "<=",
                                                 "?",
                                                 "->",
                                                 "add",
                                                 "parameter(0)",
                                                 "constant(",
                                                 "dimensions=",
                                                 "{1,0}",
                                                 "sharding=",
                                                 "devices=[2]",
                                                 "T(1,0)",
                                                 "ROOT",
                                                 "\n",
                                                 "tuple(",
                                                 "b01f_01io->b01f",
                                                 "3x3"};
  uint64_t state = 0x9e3779b97f4a7c15ull;
  auto next = [&] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  for (int iter = 0; iter < 3000; ++iter) {
    std::string text;
    int n = static_cast<int>(next() % 40);
    for (int i = 0; i < n; ++i) text += kPieces[next() % std::size(kPieces)];
    Parsed p = Parse(text);
    if (p.module == nullptr) {
      bool has_error = false;
      for (const Diagnostic& d : p.diags) has_error |= d.severity == Severity::kError;
      ASSERT_TRUE(has_error) << "no error for: " << text;
    }
  }
  EXPECT_TRUE(FailsAt("", 1, 1, "expects 'HloModule' or a computation"));
  EXPECT_TRUE(FailsAt(std::string_view("HloModule m\0", 12), 1, 12, "NUL"));
}

TEST(HloParserRobustness, LexerErrorsAreReportedWhereTheyOccur) {
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY c1 {\n/* unterminated\n  ROOT c = f32[] constant(1)\n}\n", 3, 1,
                      "unterminated comment"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  ROOT p = f32[99999999999999999999] parameter(0)\n}\n", 3, 16,
                      "integer literal out of range"));
  EXPECT_TRUE(FailsAt("HloModule m\nENTRY e {\n  ROOT c = f32[] custom-call(), custom_call_target=\"abc\n}\n", 3, 52,
                      "unterminated string"));
}

}  // namespace
}  // namespace xlac
