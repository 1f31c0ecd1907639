// gather (row gather, windowed slices, start-index clamping, batching dims, non-default index_vector_dim) and
// scatter (accumulation, duplicate indices, out-of-bounds windows skipped, batching dims, variadic).
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;

Literal Iota(std::vector<int64_t> dims) {
  Literal lit(Shape::Array(S32, dims));
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.SetFromInt64(i, i);
  return lit;
}

std::vector<int64_t> Eval(const std::string& text, std::vector<Literal> args) {
  absl::StatusOr<Literal> r = RunHlo(text, std::move(args));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? Int64s(*r) : std::vector<int64_t>{};
}

TEST(InterpreterGather, GatherRows) {
  EXPECT_EQ(Eval(R"(
HloModule m
ENTRY e {
  x = s32[3,3] parameter(0)
  i = s32[2] parameter(1)
  ROOT g = s32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},
      index_vector_dim=1, slice_sizes={1,3}
})",
                 {Iota({3, 3}), Ints(S32, {2}, {0, 2})}),
            (std::vector<int64_t>{0, 1, 2, 6, 7, 8}));
}

TEST(InterpreterGather, ClampsStartIndicesSoTheSliceFits) {
  EXPECT_EQ(Eval(R"(
HloModule m
ENTRY e {
  x = s32[5] parameter(0)
  i = s32[3,1] parameter(1)
  ROOT g = s32[3,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={}, start_index_map={0},
      index_vector_dim=1, slice_sizes={3}
})",
                 {Iota({5}), Ints(S32, {3, 1}, {3, -1, 1})}),
            (std::vector<int64_t>{2, 3, 4, 0, 1, 2, 1, 2, 3}));
}

TEST(InterpreterGather, GatherNdWithIndexVectorDimZero) {
  // Index vectors along dim 0 of the indices: columns {1,0} and {2,1} pick x[1][0] and x[2][1].
  EXPECT_EQ(Eval(R"(
HloModule m
ENTRY e {
  x = s32[3,3] parameter(0)
  i = s32[2,2] parameter(1)
  ROOT g = s32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={0,1},
      index_vector_dim=0, slice_sizes={1,1}
})",
                 {Iota({3, 3}), Ints(S32, {2, 2}, {1, 2, 0, 1})}),
            (std::vector<int64_t>{3, 7}));
}

TEST(InterpreterGather, BatchingDims) {
  // Row b of the operand is indexed by index b: x[0][2], x[1][0].
  EXPECT_EQ(Eval(R"(
HloModule m
ENTRY e {
  x = s32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  ROOT g = s32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1},
      operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=1, slice_sizes={1,1}
})",
                 {Iota({2, 3}), Ints(S32, {2, 1}, {2, 0})}),
            (std::vector<int64_t>{2, 3}));
}

constexpr char kAdd[] = R"(
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
)";

TEST(InterpreterScatter, ScatterAddRowsWithDuplicates) {
  EXPECT_EQ(Eval(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = s32[3,3] parameter(0)
  i = s32[3] parameter(1)
  u = s32[3,3] parameter(2)
  ROOT s = s32[3,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                 {Iota({3, 3}), Ints(S32, {3}, {0, 2, 0}), Ints(S32, {3, 3}, {10, 10, 10, 20, 20, 20, 1, 2, 3})}),
            (std::vector<int64_t>{11, 13, 15, 3, 4, 5, 26, 27, 28}));
}

TEST(InterpreterScatter, OutOfBoundsWindowsAreSkippedEntirely) {
  // Windows of 2 starting at 4 (partly out), -1 (partly out) and 1 (inside): only the last applies.
  EXPECT_EQ(Eval(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = s32[5] parameter(0)
  i = s32[3,1] parameter(1)
  u = s32[3,2] parameter(2)
  ROOT s = s32[5] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                 {Iota({5}), Ints(S32, {3, 1}, {4, -1, 1}), Ints(S32, {3, 2}, {100, 100, 100, 100, 7, 8})}),
            (std::vector<int64_t>{0, 8, 10, 3, 4}));
}

TEST(InterpreterScatter, AssignKeepsTheLastUpdateInOrder) {
  EXPECT_EQ(Eval(R"(
HloModule m
assign {
  a = s32[] parameter(0)
  ROOT b = s32[] parameter(1)
}
ENTRY e {
  x = s32[3] parameter(0)
  i = s32[3,1] parameter(1)
  u = s32[3] parameter(2)
  ROOT s = s32[3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign
})",
                 {Iota({3}), Ints(S32, {3, 1}, {1, 1, 2}), Ints(S32, {3}, {5, 6, 7})}),
            (std::vector<int64_t>{0, 6, 7}));
}

TEST(InterpreterScatter, BatchingDims) {
  EXPECT_EQ(Eval(std::string("HloModule m\n") + kAdd + R"(
ENTRY e {
  x = s32[2,3] parameter(0)
  i = s32[2,1] parameter(1)
  u = s32[2] parameter(2)
  ROOT s = s32[2,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1},
      input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1},
      index_vector_dim=1, to_apply=add
})",
                 {Iota({2, 3}), Ints(S32, {2, 1}, {2, 0}), Ints(S32, {2}, {100, 200})}),
            (std::vector<int64_t>{0, 1, 102, 203, 4, 5}));
}

TEST(InterpreterScatter, VariadicScatter) {
  absl::StatusOr<Literal> r =
      RunHlo(R"(
HloModule m
add2 {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  s = s32[] add(a, c)
  t = f32[] multiply(b, d)
  ROOT r = (s32[], f32[]) tuple(s, t)
}
ENTRY e {
  x = s32[3] parameter(0)
  y = f32[3] parameter(1)
  i = s32[2,1] parameter(2)
  u = s32[2] parameter(3)
  v = f32[2] parameter(4)
  ROOT s = (s32[3], f32[3]) scatter(x, y, i, u, v), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2
})",
             {Iota({3}), Vec(F32, {1, 1, 1}), Ints(S32, {2, 1}, {0, 0}), Ints(S32, {2}, {5, 5}), Vec(F32, {2, 3})});
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Int64s(r->tuple_elements()[0]), (std::vector<int64_t>{10, 1, 2}));
  EXPECT_EQ(Doubles(r->tuple_elements()[1]), (std::vector<double>{6, 1, 1}));
}

}  // namespace
}  // namespace xlac::interp::testing
