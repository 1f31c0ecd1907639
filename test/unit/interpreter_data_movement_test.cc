// Data movement ops with hand-computed results: broadcast, reshape, transpose, reverse, slice (strided),
// dynamic-slice / dynamic-update-slice (start clamping), concatenate, pad (negative and interior), iota, copy,
// bitcast (logical and layout-changing).
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
constexpr PrimitiveType U32 = PrimitiveType::kU32;
constexpr PrimitiveType BF16 = PrimitiveType::kBF16;

// iota(0..n-1) as s32 of `dims`.
Literal Iota(std::vector<int64_t> dims) {
  Literal lit(Shape::Array(S32, dims));
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.SetFromInt64(i, i);
  return lit;
}

std::vector<int64_t> Eval(const std::string& body, std::vector<Literal> args) {
  absl::StatusOr<Literal> r = RunHlo("HloModule m\nENTRY e {\n" + body + "\n}\n", std::move(args));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? Int64s(*r) : std::vector<int64_t>{};
}

TEST(InterpreterDataMovement, Broadcast) {
  EXPECT_EQ(Eval("  x = s32[2] parameter(0)\n  ROOT b = s32[2,3] broadcast(x), dimensions={0}", {Iota({2})}),
            (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(Eval("  x = s32[3] parameter(0)\n  ROOT b = s32[2,3] broadcast(x), dimensions={1}", {Iota({3})}),
            (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(Eval("  x = s32[] parameter(0)\n  ROOT b = s32[2,2] broadcast(x), dimensions={}", {Ints(S32, {}, {7})}),
            (std::vector<int64_t>{7, 7, 7, 7}));
  // Broadcast that also transposes: operand dim 0 -> result dim 1.
  EXPECT_EQ(Eval("  x = s32[2,3] parameter(0)\n  ROOT b = s32[3,2] broadcast(x), dimensions={1,0}", {Iota({2, 3})}),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
}

TEST(InterpreterDataMovement, ReshapeCopyAndBitcastShareTheOperandsBytes) {
  // A replicated 1 GiB table reshaped and copied on 8 emulated devices costs no bytes (Literal::ViewAs); a write
  // into a view (dynamic-update-slice) copies first, so the argument stays as it was.
  std::unique_ptr<Module> module = ParseAndVerify(R"(HloModule m
ENTRY e {
  x = s32[2,3] parameter(0)
  r = s32[3,2] reshape(x)
  c = s32[3,2] copy(r)
  b = u32[6] bitcast(c)
  u = s32[1,1] constant({{-1}})
  i = s32[] constant(1)
  d = s32[3,2] dynamic-update-slice(c, u, i, i)
  ROOT t = (u32[6], s32[3,2]) tuple(b, d)
}
)");
  ASSERT_NE(module, nullptr);
  const Literal x = Iota({2, 3});
  absl::StatusOr<std::vector<Literal>> r = Evaluate(*module, {{x}});
  ASSERT_TRUE(r.ok()) << r.status();
  const Literal& b = (*r)[0].tuple_elements()[0];
  const Literal& d = (*r)[0].tuple_elements()[1];
  EXPECT_TRUE(b.SharesBytesWith(x));
  EXPECT_FALSE(d.SharesBytesWith(x));
  EXPECT_EQ(Int64s(b), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Int64s(d), (std::vector<int64_t>{0, 1, 2, -1, 4, 5}));
  EXPECT_EQ(Int64s(x), (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(InterpreterDataMovement, TupleCopyCopiesLeaves) {
  EXPECT_EQ(Eval("  x = s32[3] parameter(0)\n  t = (s32[3], s32[3]) tuple(x, x)\n"
                 "  c = (s32[3], s32[3]) copy(t)\n  ROOT g = s32[3] get-tuple-element(c), index=1",
                 {Iota({3})}),
            (std::vector<int64_t>{0, 1, 2}));
}

TEST(InterpreterDataMovement, ReshapeTransposeReverse) {
  EXPECT_EQ(Eval("  x = s32[2,3] parameter(0)\n  ROOT r = s32[3,2] reshape(x)", {Iota({2, 3})}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(Eval("  x = s32[2,3] parameter(0)\n  ROOT t = s32[3,2] transpose(x), dimensions={1,0}", {Iota({2, 3})}),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  // [2,3,4] -> dims {2,0,1}: result[k][i][j] = x[i][j][k].
  std::vector<int64_t> t3 =
      Eval("  x = s32[2,3,4] parameter(0)\n  ROOT t = s32[4,2,3] transpose(x), dimensions={2,0,1}", {Iota({2, 3, 4})});
  ASSERT_EQ(t3.size(), 24u);
  EXPECT_EQ(t3[0], 0);
  EXPECT_EQ(t3[1], 4);   // [0][0][1] = x[0][1][0]
  EXPECT_EQ(t3[3], 12);  // [0][1][0] = x[1][0][0]
  EXPECT_EQ(t3[6], 1);   // [1][0][0] = x[0][0][1]
  EXPECT_EQ(Eval("  x = s32[2,3] parameter(0)\n  ROOT r = s32[2,3] reverse(x), dimensions={1}", {Iota({2, 3})}),
            (std::vector<int64_t>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(Eval("  x = s32[2,3] parameter(0)\n  ROOT r = s32[2,3] reverse(x), dimensions={0,1}", {Iota({2, 3})}),
            (std::vector<int64_t>{5, 4, 3, 2, 1, 0}));
}

TEST(InterpreterDataMovement, SliceWithStrides) {
  EXPECT_EQ(Eval("  x = s32[10] parameter(0)\n  ROOT s = s32[3] slice(x), slice={[1:8:3]}", {Iota({10})}),
            (std::vector<int64_t>{1, 4, 7}));
  EXPECT_EQ(Eval("  x = s32[3,4] parameter(0)\n  ROOT s = s32[2,2] slice(x), slice={[1:3], [0:4:2]}", {Iota({3, 4})}),
            (std::vector<int64_t>{4, 6, 8, 10}));
}

TEST(InterpreterDataMovement, DynamicSliceClampsStartIndices) {
  const std::string body =
      "  x = s32[5] parameter(0)\n  i = s32[] parameter(1)\n  ROOT d = s32[2] dynamic-slice(x, i), "
      "dynamic_slice_sizes={2}";
  EXPECT_EQ(Eval(body, {Iota({5}), Ints(S32, {}, {1})}), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(Eval(body, {Iota({5}), Ints(S32, {}, {4})}), (std::vector<int64_t>{3, 4}));   // clamped to 3
  EXPECT_EQ(Eval(body, {Iota({5}), Ints(S32, {}, {-7})}), (std::vector<int64_t>{0, 1}));  // clamped to 0
  const std::string body2 =
      "  x = s32[3,3] parameter(0)\n  i = u32[] parameter(1)\n  j = u32[] parameter(2)\n"
      "  ROOT d = s32[2,2] dynamic-slice(x, i, j), dynamic_slice_sizes={2,2}";
  EXPECT_EQ(Eval(body2, {Iota({3, 3}), Ints(U32, {}, {1}), Ints(U32, {}, {4000000000})}),
            (std::vector<int64_t>{4, 5, 7, 8}));
}

TEST(InterpreterDataMovement, DynamicUpdateSliceClampsStartIndices) {
  const std::string body =
      "  x = s32[5] parameter(0)\n  u = s32[2] parameter(1)\n  i = s32[] parameter(2)\n"
      "  ROOT d = s32[5] dynamic-update-slice(x, u, i)";
  EXPECT_EQ(Eval(body, {Iota({5}), Ints(S32, {2}, {-1, -2}), Ints(S32, {}, {1})}),
            (std::vector<int64_t>{0, -1, -2, 3, 4}));
  EXPECT_EQ(Eval(body, {Iota({5}), Ints(S32, {2}, {-1, -2}), Ints(S32, {}, {9})}),
            (std::vector<int64_t>{0, 1, 2, -1, -2}));
  EXPECT_EQ(Eval(body, {Iota({5}), Ints(S32, {2}, {-1, -2}), Ints(S32, {}, {-9})}),
            (std::vector<int64_t>{-1, -2, 2, 3, 4}));
}

TEST(InterpreterDataMovement, Concatenate) {
  EXPECT_EQ(Eval("  a = s32[2,2] parameter(0)\n  b = s32[2,1] parameter(1)\n"
                 "  ROOT c = s32[2,3] concatenate(a, b), dimensions={1}",
                 {Iota({2, 2}), Ints(S32, {2, 1}, {10, 11})}),
            (std::vector<int64_t>{0, 1, 10, 2, 3, 11}));
  EXPECT_EQ(Eval("  a = s32[1,2] parameter(0)\n  b = s32[2,2] parameter(1)\n"
                 "  ROOT c = s32[3,2] concatenate(a, b), dimensions={0}",
                 {Ints(S32, {1, 2}, {9, 9}), Iota({2, 2})}),
            (std::vector<int64_t>{9, 9, 0, 1, 2, 3}));
}

TEST(InterpreterDataMovement, PadEdgeInteriorAndNegative) {
  const std::string head = "  x = s32[3] parameter(0)\n  z = s32[] constant(-1)\n";
  EXPECT_EQ(Eval(head + "  ROOT p = s32[8] pad(x, z), padding=1_2_1", {Iota({3})}),
            (std::vector<int64_t>{-1, 0, -1, 1, -1, 2, -1, -1}));
  // Negative low padding removes elements of the interior-padded operand.
  EXPECT_EQ(Eval(head + "  ROOT p = s32[4] pad(x, z), padding=-1_0_1", {Iota({3})}),
            (std::vector<int64_t>{-1, 1, -1, 2}));
  EXPECT_EQ(Eval(head + "  ROOT p = s32[1] pad(x, z), padding=-1_-1", {Iota({3})}), (std::vector<int64_t>{1}));
  EXPECT_EQ(Eval("  x = s32[2,2] parameter(0)\n  z = s32[] constant(9)\n"
                 "  ROOT p = s32[3,4] pad(x, z), padding=1_0x0_2",
                 {Iota({2, 2})}),
            (std::vector<int64_t>{9, 9, 9, 9, 0, 1, 9, 9, 2, 3, 9, 9}));
}

TEST(InterpreterDataMovement, IotaInEveryType) {
  EXPECT_EQ(Eval("  ROOT i = s32[2,3] iota(), iota_dimension=1", {}), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(Eval("  ROOT i = s32[2,3] iota(), iota_dimension=0", {}), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal f,
                            RunHlo("HloModule m\nENTRY e {\n  ROOT i = bf16[300] iota(), iota_dimension=0\n}"));
  EXPECT_EQ(f.GetAsDouble(257), 256);  // 257 is not a bf16; rounds to even
  EXPECT_EQ(f.GetAsDouble(259), 260);
}

TEST(InterpreterDataMovement, BitcastFollowsLayouts) {
  // Same layouts: a row-major reinterpretation.
  EXPECT_EQ(Eval("  x = s32[2,3]{1,0} parameter(0)\n  ROOT b = s32[3,2]{1,0} bitcast(x)", {Iota({2, 3})}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  // A column-major [3,2] result over a row-major [2,3] buffer is the transpose.
  EXPECT_EQ(Eval("  x = s32[2,3]{1,0} parameter(0)\n  ROOT b = s32[3,2]{0,1} bitcast(x)", {Iota({2, 3})}),
            (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
  EXPECT_EQ(Eval("  x = s32[2,3]{1,0} parameter(0)\n  c = s32[2,3]{1,0} copy(x)\n  ROOT b = s32[6]{0} bitcast(c)",
                 {Iota({2, 3})}),
            (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
}

TEST(InterpreterDataMovement, TypesAreMovedBitExactly) {
  // Moves never convert: a bf16 NaN payload and -0 survive transpose and concatenate.
  Literal x(Shape::Array(BF16, {2}));
  x.Set<uint16_t>(0, 0x7fa1);
  x.Set<uint16_t>(1, 0x8000);
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  x = bf16[2] parameter(0)
  r = bf16[2] reverse(x), dimensions={0}
  ROOT c = bf16[4] concatenate(x, r), dimensions={0}
})",
                                              {x}));
  EXPECT_EQ(Bits(r), (std::vector<uint64_t>{0x7fa1, 0x8000, 0x8000, 0x7fa1}));
  (void)F32;
}

}  // namespace
}  // namespace xlac::interp::testing
