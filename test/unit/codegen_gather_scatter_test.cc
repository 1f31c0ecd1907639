// gather, scatter and map compiled with the JIT against the interpreter: element and index types, layouts, start
// index clamping, out-of-bounds scatter windows, duplicate indices (update order), batching dimensions,
// index_vector_dim placement and variadic scatter.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kTypes = {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32", "pred"};
const std::vector<std::string> kNumericTypes = {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32"};

Literal Indices(PrimitiveType type, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Literal lit(Shape::Array(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.SetFromInt64(static_cast<int64_t>(i), values[i]);
  return lit;
}

Literal Random(PrimitiveType type, std::vector<int64_t> dims, uint64_t seed) {
  return interp::MakeRandomLiteral(Shape::Array(type, std::move(dims)), seed);
}

TEST(CodegenGather, RowsAndWindowsAllTypesAndLayouts) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    // Random s32 indices are 0..7: some starts are clamped.
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[5,4] parameter(0)
  i = s32[3] parameter(1)
  b = $T[6,7]{0,1} parameter(2)
  j = s32[2,3,2] parameter(3)
  rows = $T[3,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1,
      slice_sizes={1,4}
  win = $T[2,3,2,3]{0,2,1,3} gather(b, j), offset_dims={2,3}, collapsed_slice_dims={}, start_index_map={1,0},
      index_vector_dim=2, slice_sizes={2,3}
  mid = $T[2,2,3]{1,0,2} gather(b, j), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1},
      index_vector_dim=2, slice_sizes={1,2}
  ROOT t = ($T[3,4], $T[2,3,2,3]{0,2,1,3}, $T[2,2,3]{1,0,2}) tuple(rows, win, mid)
})",
                                      t));
  }
}

TEST(CodegenGather, ClampsStartIndicesOfEveryIndexType) {
  const std::string text = R"(
HloModule m
ENTRY e {
  a = f32[5,6] parameter(0)
  i = $T[4,2] parameter(1)
  ROOT g = f32[4,2,3] gather(a, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1},
      index_vector_dim=1, slice_sizes={2,3}
})";
  std::vector<int64_t> signed_values = {-3, 9, 0, 3, 4, -1, 100, 2};
  for (PrimitiveType type : {PrimitiveType::kS8, PrimitiveType::kS32, PrimitiveType::kS64}) {
    SCOPED_TRACE(PrimitiveTypeName(type));
    std::vector<Literal> args;
    args.push_back(Random(PrimitiveType::kF32, {5, 6}, 3));
    args.push_back(Indices(type, {4, 2}, signed_values));
    ExpectMatchesInterpreter(WithType(text, std::string(PrimitiveTypeName(type))), std::move(args));
  }
  std::vector<int64_t> unsigned_values = {250, 9, 0, 3, 4, 255, 100, 2};
  for (PrimitiveType type : {PrimitiveType::kU8, PrimitiveType::kU32}) {
    SCOPED_TRACE(PrimitiveTypeName(type));
    std::vector<Literal> args;
    args.push_back(Random(PrimitiveType::kF32, {5, 6}, 3));
    args.push_back(Indices(type, {4, 2}, unsigned_values));
    ExpectMatchesInterpreter(WithType(text, std::string(PrimitiveTypeName(type))), std::move(args));
  }
  // u64 above int64 max saturates (then clamps to the last valid start).
  std::vector<Literal> args;
  args.push_back(Random(PrimitiveType::kF32, {5, 6}, 3));
  Literal big(Shape::Array(PrimitiveType::kU64, {4, 2}));
  for (int64_t k = 0; k < 8; ++k) big.Set<uint64_t>(k, k % 2 == 0 ? ~uint64_t{0} - static_cast<uint64_t>(k) : 1);
  args.push_back(std::move(big));
  ExpectMatchesInterpreter(WithType(text, "u64"), std::move(args));
}

TEST(CodegenGather, IndexVectorDimFirstScalarIndicesAndBatching) {
  std::vector<Literal> args;
  args.push_back(Random(PrimitiveType::kF32, {4, 3, 5}, 1));
  args.push_back(Indices(PrimitiveType::kS32, {2, 3}, {1, -2, 3, 4, 0, 2}));
  args.push_back(Indices(PrimitiveType::kS32, {}, {2}));
  args.push_back(Indices(PrimitiveType::kS32, {5, 4}, {0, 1, 2, 4, 3, 2, 1, 0, 9, -1, 2, 2, 1, 1, 0, 3, 4, 4, 4, 4}));
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[4,3,5] parameter(0)
  i = s32[2,3] parameter(1)
  s = s32[] parameter(2)
  bi = s32[5,4] parameter(3)
  nd = f32[3,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0,2}, start_index_map={0,2},
      index_vector_dim=0, slice_sizes={1,3,1}
  sc = f32[2,5] gather(x, s), offset_dims={0,1}, collapsed_slice_dims={1}, start_index_map={1},
      index_vector_dim=0, slice_sizes={2,1,5}
  bt = f32[5,4,2]{0,1,2} gather(x, bi), offset_dims={2}, collapsed_slice_dims={}, start_index_map={1},
      operand_batching_dims={0,2}, start_indices_batching_dims={1,0}, index_vector_dim=2, slice_sizes={1,2,1}
  ROOT t = (f32[3,3], f32[2,5], f32[5,4,2]{0,1,2}) tuple(nd, sc, bt)
})",
                           std::move(args));
}

TEST(CodegenGather, EmptyIndices) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[5,4] parameter(0)
  i = s32[0] parameter(1)
  ROOT g = f32[0,4] gather(a, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1,
      slice_sizes={1,4}
})");
}

TEST(CodegenScatter, AccumulatesWithDuplicatesAndSkipsOutOfBoundsWindows) {
  for (const std::string& t : kNumericTypes) {
    SCOPED_TRACE(t);
    // Random s32 starts are 0..7 and the window is 2 rows of 6: starts 5..7 are skipped, duplicates accumulate.
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
add {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] add(x, y)
}
ENTRY e {
  a = $T[6,5] parameter(0)
  i = s32[7,1] parameter(1)
  u = $T[7,2,5] parameter(2)
  ROOT s = $T[6,5] scatter(a, i, u), update_window_dims={1,2}, inserted_window_dims={},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
})",
                                      t));
  }
  ExpectMatchesInterpreter(R"(
HloModule m
or {
  x = pred[] parameter(0)
  y = pred[] parameter(1)
  ROOT s = pred[] or(x, y)
}
ENTRY e {
  a = pred[8] parameter(0)
  i = s32[5] parameter(1)
  u = pred[5] parameter(2)
  ROOT s = pred[8] scatter(a, i, u), update_window_dims={}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=or
})");
}

TEST(CodegenScatter, UpdateOrderNegativeIndicesAndLayouts) {
  // Overwrite and non-commutative combiners expose the order in which colliding updates are applied.
  for (const char* t : {"f32", "bf16", "s32"}) {
    SCOPED_TRACE(t);
    std::vector<Literal> args;
    PrimitiveType type = t[0] == 's' ? PrimitiveType::kS32 : t[0] == 'b' ? PrimitiveType::kBF16 : PrimitiveType::kF32;
    args.push_back(Random(type, {4, 6}, 11));
    args.push_back(Indices(PrimitiveType::kS32, {3, 2, 2}, {1, 2, 1, 2, -1, 0, 3, 5, 0, 0, 1, 2}));
    args.push_back(Random(type, {3, 2, 3}, 12));
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
overwrite {
  x = $T[] parameter(0)
  ROOT y = $T[] parameter(1)
}
sub {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  d = $T[] subtract(y, x)
  ROOT m = $T[] multiply(d, y)
}
ENTRY e {
  a = $T[4,6]{0,1} parameter(0)
  i = s32[3,2,2] parameter(1)
  u = $T[3,2,3]{0,2,1} parameter(2)
  o1 = $T[4,6]{0,1} scatter(a, i, u), update_window_dims={2}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=overwrite
  o2 = $T[4,6] scatter(a, i, u), update_window_dims={2}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=sub
  ROOT t = ($T[4,6]{0,1}, $T[4,6]) tuple(o1, o2)
})",
                                      t),
                             std::move(args));
  }
}

TEST(CodegenScatter, VariadicWithBatchingDims) {
  std::vector<Literal> args;
  args.push_back(Random(PrimitiveType::kF32, {3, 5, 2}, 1));
  args.push_back(Random(PrimitiveType::kS32, {3, 5, 2}, 2));
  args.push_back(Indices(PrimitiveType::kS32, {2, 4, 3},
                         {0, 1, 4, 4, 2, 2, -1, 3, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, -1, 0, 0, 0}));
  args.push_back(Random(PrimitiveType::kF32, {4, 3, 2}, 3));
  args.push_back(Random(PrimitiveType::kS32, {4, 3, 2}, 4));
  // Keeps, per target, the update with the larger f32 key and its s32 payload; ties keep the current value.
  ExpectMatchesInterpreter(R"(
HloModule m
argmax {
  k0 = f32[] parameter(0)
  v0 = s32[] parameter(1)
  k1 = f32[] parameter(2)
  v1 = s32[] parameter(3)
  gt = pred[] compare(k1, k0), direction=GT
  k = f32[] select(gt, k1, k0)
  v = s32[] select(gt, v1, v0)
  ROOT r = (f32[], s32[]) tuple(k, v)
}
ENTRY e {
  a = f32[3,5,2] parameter(0)
  b = s32[3,5,2] parameter(1)
  i = s32[2,4,3] parameter(2)
  u = f32[4,3,2] parameter(3)
  w = s32[4,3,2] parameter(4)
  ROOT s = (f32[3,5,2], s32[3,5,2]) scatter(a, b, i, u, w), update_window_dims={2}, inserted_window_dims={1},
      input_batching_dims={0}, scatter_indices_batching_dims={2}, scatter_dims_to_operand_dims={1,2},
      index_vector_dim=0, to_apply=argmax
})",
                           std::move(args));
}

TEST(CodegenScatter, SingleWindowWithIndexVectorOnly) {
  // No scatter dimensions: one window placed at the u8 index vector (skipped when it does not fit).
  const std::string text = R"(
HloModule m
mul {
  x = f16[] parameter(0)
  y = f16[] parameter(1)
  ROOT s = f16[] multiply(x, y)
}
ENTRY e {
  a = f16[5,6] parameter(0)
  i = u8[2] parameter(1)
  u = f16[2,4] parameter(2)
  ROOT s = f16[5,6] scatter(a, i, u), update_window_dims={0,1}, inserted_window_dims={},
      scatter_dims_to_operand_dims={1,0}, index_vector_dim=0, to_apply=mul
})";
  for (const std::vector<int64_t>& start : std::vector<std::vector<int64_t>>{{0, 0}, {2, 3}, {3, 3}, {255, 1}}) {
    SCOPED_TRACE(start[0] * 1000 + start[1]);
    std::vector<Literal> args;
    args.push_back(Random(PrimitiveType::kF16, {5, 6}, 5));
    args.push_back(Indices(PrimitiveType::kU8, {2}, start));
    args.push_back(Random(PrimitiveType::kF16, {2, 4}, 6));
    ExpectMatchesInterpreter(text, std::move(args), 7, /*opt_level=*/0);
  }
}

TEST(CodegenMap, ElementwiseComputationsAcrossTypes) {
  for (const std::string& t : kNumericTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
f {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  c = $T[] constant(3)
  m = $T[] multiply(x, c)
  s = $T[] add(m, y)
  ROOT r = $T[] maximum(s, x)
}
ENTRY e {
  a = $T[3,7] parameter(0)
  b = $T[3,7]{0,1} parameter(1)
  ROOT r = $T[3,7]{0,1} map(a, b), dimensions={0,1}, to_apply=f
})",
                                      t));
  }
  ExpectMatchesInterpreter(R"(
HloModule m
f {
  x = f32[] parameter(0)
  p = pred[] parameter(1)
  n = f32[] negate(x)
  s = f32[] select(p, x, n)
  ROOT c = bf16[] convert(s)
}
ENTRY e {
  a = f32[10] parameter(0)
  b = pred[10] parameter(1)
  ROOT r = bf16[10] map(a, b), dimensions={0}, to_apply=f
})");
}

}  // namespace
}  // namespace xlac::codegen::testing
