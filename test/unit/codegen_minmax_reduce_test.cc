// Row reductions by maximum and minimum: in the default mode they run as maxnum / minnum without NaN handling plus a
// NaN flag per row (codegen/ir_emitter_reduce.cc), which must still give NaN exactly where the interpreter does:
// a NaN anywhere in the row (first, in the vector body, in the remainder, alone), a NaN init value, rows of only
// infinities, and mixed signed zeros. Both modes are compared with the interpreter (exact bit for bit).
#include <cmath>
#include <string>
#include <vector>

#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

std::string RowReduce(const std::string& type, const std::string& op, int64_t rows, int64_t cols) {
  std::string r = std::to_string(rows), c = std::to_string(cols);
  return "HloModule m\nreducer {\n  x = " + type + "[] parameter(0)\n  y = " + type + "[] parameter(1)\n  ROOT z = " +
         type + "[] " + op + "(x, y)\n}\nENTRY e {\n  a = " + type + "[" + r + "," + c + "] parameter(0)\n  i = " +
         type + "[] parameter(1)\n  ROOT r = " + type + "[" + r + "] reduce(a, i), dimensions={1}, to_apply=reducer\n}\n";
}

// Row k of the argument: random values with special values planted by row: NaN at the start, middle or end, all
// -inf or +inf, only signed zeros, NaN next to infinities.
template <typename T>
Literal Planted(PrimitiveType type, int64_t rows, int64_t cols, uint64_t seed) {
  Literal a = interp::MakeRandomLiteral(Shape::Array(type, {rows, cols}), seed);
  for (int64_t r = 0; r < rows; ++r) {
    auto at = [&](int64_t c) { return r * cols + c; };
    switch (r % 8) {
      case 0:
        a.Set<T>(at(0), static_cast<T>(NAN));
        break;
      case 1:
        a.Set<T>(at(cols / 2), static_cast<T>(NAN));
        break;
      case 2:
        a.Set<T>(at(cols - 1), static_cast<T>(NAN));
        break;
      case 3:
        for (int64_t c = 0; c < cols; ++c) a.Set<T>(at(c), static_cast<T>(-INFINITY));
        break;
      case 4:
        for (int64_t c = 0; c < cols; ++c) a.Set<T>(at(c), static_cast<T>(INFINITY));
        break;
      case 5:
        for (int64_t c = 0; c < cols; ++c) a.Set<T>(at(c), static_cast<T>(c % 2 == 0 ? -0.0 : 0.0));
        break;
      case 6:
        a.Set<T>(at(0), static_cast<T>(INFINITY));
        a.Set<T>(at(cols - 1), static_cast<T>(-NAN));
        break;
      default:
        break;  // random values only
    }
  }
  return a;
}

template <typename T>
void CheckRows(const std::string& type, PrimitiveType pt) {
  for (const char* op : {"maximum", "minimum"}) {
    for (int64_t cols : {1, 7, 16, 37, 128}) {
      for (double init : {-HUGE_VAL, HUGE_VAL, 0.0, std::nan("")}) {
        SCOPED_TRACE(type + " " + op + " cols " + std::to_string(cols) + " init " + std::to_string(init));
        std::vector<Literal> args;
        args.push_back(Planted<T>(pt, 16, cols, 11 + static_cast<uint64_t>(cols)));
        Literal i(Shape::Array(pt, {}));
        i.Set<T>(0, static_cast<T>(init));
        args.push_back(std::move(i));
        ExpectMatchesInterpreter(RowReduce(type, op, 16, cols), std::move(args));
      }
    }
  }
}

TEST(CodegenMinMaxReduce, F32RowsKeepNaNAndInfinities) { CheckRows<float>("f32", PrimitiveType::kF32); }

TEST(CodegenMinMaxReduce, F64RowsKeepNaNAndInfinities) { CheckRows<double>("f64", PrimitiveType::kF64); }

// Softmax's shape: the row maximum feeds the subtraction of a row group (codegen/row_groups.h); a NaN row must
// come out all NaN, an all -inf row NaN too (-inf - -inf), in both modes.
TEST(CodegenMinMaxReduce, SoftmaxRowsWithNaN) {
  const std::string text = R"(
HloModule softmax
max {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] maximum(x, y)
}
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT z = f32[] add(x, y)
}
ENTRY e {
  a = f32[16,40] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[16] reduce(a, ninf), dimensions={1}, to_apply=max
  mb = f32[16,40] broadcast(m), dimensions={0}
  s = f32[16,40] subtract(a, mb)
  x = f32[16,40] exponential(s)
  zero = f32[] constant(0)
  d = f32[16] reduce(x, zero), dimensions={1}, to_apply=add
  db = f32[16,40] broadcast(d), dimensions={0}
  ROOT r = f32[16,40] divide(x, db)
})";
  std::vector<Literal> args;
  args.push_back(Planted<float>(PrimitiveType::kF32, 16, 40, 5));
  ExpectMatchesInterpreter(text, std::move(args));
}

}  // namespace
}  // namespace xlac::codegen::testing
