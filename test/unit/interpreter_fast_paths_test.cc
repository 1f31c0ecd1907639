// The interpreter's fast paths for the ops of a training step (f32 batch norm split over features and threads,
// elementwise ops on contiguous f32 and pred storage with one-element operands, scalar broadcasts that are never
// materialized, tiled operand transposes) against naive computations written here from the definitions: bit for
// bit (NaN matches NaN), for one thread and for several.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "interpreter_test_util.h"
#include "runtime/interpreter/fast_kernels.h"

namespace xlac::interp::testing {
namespace {

// f32 values of mixed magnitudes (sums depend on their order), with NaN, infinities and -0 when `specials`.
std::vector<float> RandomFloats(int64_t n, std::mt19937_64& rng, bool specials) {
  std::uniform_real_distribution<double> u(-2, 2);
  std::uniform_int_distribution<int> e(-10, 10), pick(0, 40);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) {
    x = static_cast<float>(std::ldexp(u(rng), e(rng)));
    if (!specials) continue;
    int p = pick(rng);
    if (p == 0) x = NAN;
    if (p == 1) x = INFINITY;
    if (p == 2) x = -INFINITY;
    if (p == 3) x = -0.0f;
    if (p == 4) x = 0.0f;
  }
  return v;
}

Literal F32Literal(const std::vector<int64_t>& dims, const std::vector<float>& values) {
  Literal lit(Shape::Array(PrimitiveType::kF32, dims));
  EXPECT_EQ(lit.element_count(), static_cast<int64_t>(values.size()));
  std::memcpy(lit.mutable_raw_data(), values.data(), values.size() * sizeof(float));
  return lit;
}

// Bitwise equality of f32 or pred literals (NaN matches NaN).
void ExpectSameBits(const Literal& expected, const Literal& actual, const std::string& what) {
  ASSERT_EQ(expected.shape().element_type, actual.shape().element_type) << what;
  ASSERT_EQ(expected.element_count(), actual.element_count()) << what;
  int64_t w = ByteWidth(expected.shape().element_type);
  int mismatches = 0;
  for (int64_t i = 0; i < expected.element_count() && mismatches < 5; ++i) {
    if (std::memcmp(expected.raw_data() + i * w, actual.raw_data() + i * w, static_cast<size_t>(w)) == 0) continue;
    if (expected.shape().element_type == PrimitiveType::kF32 && std::isnan(expected.GetAsDouble(i)) &&
        std::isnan(actual.GetAsDouble(i))) {
      continue;
    }
    ADD_FAILURE() << what << ": element " << i << ": expected " << expected.GetAsDouble(i) << ", got "
                  << actual.GetAsDouble(i);
    ++mismatches;
  }
}

std::string Dims(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s;
}

// Runs `hlo` with 1 and 3 threads and compares every tuple element of the result with `expected`.
void RunAndCompare(const std::string& hlo, const std::vector<Literal>& args, const std::vector<Literal>& expected) {
  for (int64_t threads : {1, 3}) {
    InterpreterOptions options;
    options.threads = threads;
    std::vector<Literal> copy(args.begin(), args.end());
    absl::StatusOr<Literal> r = RunHlo(hlo, std::move(copy), options);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << hlo;
    ASSERT_EQ(r->tuple_elements().size(), expected.size());
    for (size_t k = 0; k < expected.size(); ++k) {
      ExpectSameBits(expected[k], r->tuple_elements()[k],
                     fmt::format("result {} threads={}\n{}", k, threads, hlo.substr(0, 400)));
    }
  }
}

// Batch norm as the interpreter defines it: double sums per feature in row-major order, per-element double
// expressions, one rounding to f32. Sizes where features come in groups of four and a remainder, the feature
// dimension first, in the middle and last (no inner elements).
TEST(InterpreterFastPaths, BatchNormF32MatchesTheDoubleFormulasBitwise) {
  std::mt19937_64 rng(11);
  struct Case {
    std::vector<int64_t> dims;
    int64_t feature;
  };
  for (const Case& c : {Case{{3, 13, 5, 7}, 1}, Case{{6, 40, 9}, 2}, Case{{5, 11}, 0}, Case{{2, 4, 3}, 1}}) {
    int64_t n = 1, outer = 1, inner = 1, features = c.dims[static_cast<size_t>(c.feature)];
    for (size_t d = 0; d < c.dims.size(); ++d) {
      n *= c.dims[d];
      if (static_cast<int64_t>(d) < c.feature) outer *= c.dims[d];
      if (static_cast<int64_t>(d) > c.feature) inner *= c.dims[d];
    }
    std::vector<float> x = RandomFloats(n, rng, false), dy = RandomFloats(n, rng, false);
    std::vector<float> scale = RandomFloats(features, rng, false), offset = RandomFloats(features, rng, false);
    const double eps = static_cast<float>(0.001);
    const double count = static_cast<double>(outer * inner);
    auto feature_of = [&](int64_t i) { return (i / inner) % features; };
    // batch-norm-training
    std::vector<double> mean(static_cast<size_t>(features), 0), var(mean);
    for (int64_t i = 0; i < n; ++i) mean[feature_of(i)] += x[i];
    for (double& m : mean) m /= count;
    for (int64_t i = 0; i < n; ++i) {
      double centered = x[i] - mean[feature_of(i)];
      double square = centered * centered;
      var[feature_of(i)] += square;
    }
    for (double& v : var) v /= count;
    std::vector<float> y(static_cast<size_t>(n)), mean_f, var_f;
    for (int64_t i = 0; i < n; ++i) {
      int64_t f = feature_of(i);
      double normalized = (x[i] - mean[f]) / std::sqrt(var[f] + eps);
      double scaled = normalized * scale[f];
      y[i] = static_cast<float>(scaled + offset[f]);
    }
    for (int64_t f = 0; f < features; ++f) {
      mean_f.push_back(static_cast<float>(mean[f]));
      var_f.push_back(static_cast<float>(var[f]));
    }
    std::string shape = fmt::format("f32[{}]", Dims(c.dims)), fshape = fmt::format("f32[{}]", features);
    std::string training = fmt::format(
        "HloModule m\nENTRY e {{\n  x = {0} parameter(0)\n  s = {1} parameter(1)\n  o = {1} parameter(2)\n"
        "  ROOT b = ({0}, {1}, {1}) batch-norm-training(x, s, o), epsilon=0.001, feature_index={2}\n}}\n",
        shape, fshape, c.feature);
    std::vector<Literal> training_expected;
    training_expected.push_back(F32Literal(c.dims, y));
    training_expected.push_back(F32Literal({features}, mean_f));
    training_expected.push_back(F32Literal({features}, var_f));
    std::vector<Literal> training_args;
    training_args.push_back(F32Literal(c.dims, x));
    training_args.push_back(F32Literal({features}, scale));
    training_args.push_back(F32Literal({features}, offset));
    RunAndCompare(training, training_args, training_expected);

    // batch-norm-grad, with the training's (rounded) statistics as its mean and variance operands
    std::vector<double> m(mean_f.begin(), mean_f.end()), v(var_f.begin(), var_f.end());
    std::vector<double> sum_dy(static_cast<size_t>(features), 0), sum_dy_xc(sum_dy);
    for (int64_t i = 0; i < n; ++i) {
      int64_t f = feature_of(i);
      double d = dy[i];
      sum_dy[f] += d;
      double product = d * (x[i] - m[f]);
      sum_dy_xc[f] += product;
    }
    std::vector<float> gx(static_cast<size_t>(n)), gscale, goffset;
    for (int64_t i = 0; i < n; ++i) {
      int64_t f = feature_of(i);
      double factor = scale[f] * (1 / std::sqrt(v[f] + eps)) / count;
      double scaled_dy = count * dy[i];
      double term = (x[i] - m[f]) * sum_dy_xc[f];
      double inner_term = scaled_dy - sum_dy[f] - term / (v[f] + eps);
      gx[i] = static_cast<float>(factor * inner_term);
    }
    for (int64_t f = 0; f < features; ++f) {
      gscale.push_back(static_cast<float>(sum_dy_xc[f] / std::sqrt(v[f] + eps)));
      goffset.push_back(static_cast<float>(sum_dy[f]));
    }
    std::string grad = fmt::format(
        "HloModule m\nENTRY e {{\n  x = {0} parameter(0)\n  s = {1} parameter(1)\n  m = {1} parameter(2)\n"
        "  v = {1} parameter(3)\n  dy = {0} parameter(4)\n"
        "  ROOT b = ({0}, {1}, {1}) batch-norm-grad(x, s, m, v, dy), epsilon=0.001, feature_index={2}\n}}\n",
        shape, fshape, c.feature);
    std::vector<Literal> grad_expected;
    grad_expected.push_back(F32Literal(c.dims, gx));
    grad_expected.push_back(F32Literal({features}, gscale));
    grad_expected.push_back(F32Literal({features}, goffset));
    std::vector<Literal> grad_args;
    grad_args.push_back(F32Literal(c.dims, x));
    grad_args.push_back(F32Literal({features}, scale));
    grad_args.push_back(F32Literal({features}, mean_f));
    grad_args.push_back(F32Literal({features}, var_f));
    grad_args.push_back(F32Literal(c.dims, dy));
    RunAndCompare(grad, grad_args, grad_expected);
    if (::testing::Test::HasFailure()) return;
  }
}

// ReLU6 and its gradient as PyTorch exports them: clamp, compare, and, select with broadcast scalar bounds, plus
// arithmetic with a broadcast scalar on either side. The broadcasts feed only elementwise ops, so the interpreter
// never materializes them; the one also returned is materialized as well. NaN, infinities and signed zeros included.
TEST(InterpreterFastPaths, ElementwiseOpsWithBroadcastScalarsBitwise) {
  std::mt19937_64 rng(5);
  const std::vector<int64_t> dims{37, 50};
  const int64_t n = 37 * 50;
  std::vector<float> x = RandomFloats(n, rng, true), z = RandomFloats(n, rng, true);
  for (float lo : {0.0f, -1.5f, NAN}) {
    const float hi = 6;
    const char* directions[] = {"EQ", "NE", "LT", "GT", "LE", "GE"};
    std::string body;
    for (const char* d : directions) {
      body += fmt::format("  c{0} = pred[37,50] compare(x, blo), direction={0}\n", d);
      body += fmt::format("  r{0} = pred[37,50] compare(bhi, x), direction={0}\n", d);
    }
    std::string hlo = fmt::format(
        "HloModule m\nENTRY e {{\n  x = f32[37,50] parameter(0)\n  z = f32[37,50] parameter(1)\n"
        "  lo = f32[] parameter(2)\n  hi = f32[] constant(6)\n"
        "  blo = f32[37,50] broadcast(lo), dimensions={{}}\n  bhi = f32[37,50] broadcast(hi), dimensions={{}}\n"
        "{0}"
        "  clamped = f32[37,50] clamp(blo, x, bhi)\n  clamped2 = f32[37,50] clamp(blo, x, z)\n"
        "  both = pred[37,50] and(cGE, rGE)\n  either = pred[37,50] or(cLT, rLT)\n"
        "  differ = pred[37,50] xor(cLE, both)\n  sel = f32[37,50] select(both, z, blo)\n"
        "  sel2 = f32[37,50] select(either, bhi, z)\n  mul = f32[37,50] multiply(x, bhi)\n"
        "  div = f32[37,50] divide(blo, x)\n  sub = f32[37,50] subtract(z, blo)\n"
        "  total = pred[37,50] compare(x, blo), direction=LT, type=TOTALORDER\n"
        "  ROOT t = (f32[37,50], f32[37,50], pred[37,50], pred[37,50], pred[37,50], f32[37,50], f32[37,50], "
        "f32[37,50], f32[37,50], f32[37,50], pred[37,50], f32[37,50], pred[37,50], pred[37,50], pred[37,50], "
        "pred[37,50], pred[37,50], pred[37,50], pred[37,50], pred[37,50], pred[37,50], pred[37,50], pred[37,50], "
        "pred[37,50]) tuple(clamped, clamped2, both, either, differ, sel, sel2, mul, div, sub, total, bhi, "
        "cEQ, rEQ, cNE, rNE, cLT, rLT, cGT, rGT, cLE, rLE, cGE, rGE)\n}}\n",
        body);
    auto clamp = [](float l, float v, float h) {
      if (l != l) return l;
      if (v != v) return v;
      if (h != h) return h;
      float m = v < l ? l : v;
      return m < h ? m : h;
    };
    auto cmp = [](int d, float a, float b) {
      switch (d) {
        case 0:
          return a == b;
        case 1:
          return a != b;
        case 2:
          return a < b;
        case 3:
          return a > b;
        case 4:
          return a <= b;
        default:
          return a >= b;
      }
    };
    auto key = [](float v) {
      int32_t i;
      std::memcpy(&i, &v, sizeof(i));
      return i ^ ((i >> 31) & 0x7fffffff);
    };
    std::vector<float> clamped(n), clamped2(n), sel(n), sel2(n), mul(n), div(n), sub(n), bhi(n, hi);
    std::vector<std::vector<float>> preds(5 + 12, std::vector<float>(n));  // both, either, differ, total, cmps
    for (int64_t i = 0; i < n; ++i) {
      clamped[i] = clamp(lo, x[i], hi);
      clamped2[i] = clamp(lo, x[i], z[i]);
      bool both = cmp(5, x[i], lo) && cmp(5, hi, x[i]);
      bool either = cmp(2, x[i], lo) || cmp(2, hi, x[i]);
      preds[0][i] = both;
      preds[1][i] = either;
      preds[2][i] = cmp(4, x[i], lo) != both;
      preds[3][i] = key(x[i]) < key(lo);
      for (int d = 0; d < 6; ++d) {
        preds[4 + 2 * d][i] = cmp(d, x[i], lo);
        preds[5 + 2 * d][i] = cmp(d, hi, x[i]);
      }
      sel[i] = both ? z[i] : lo;
      sel2[i] = either ? hi : z[i];
      mul[i] = x[i] * hi;
      div[i] = lo / x[i];
      sub[i] = z[i] - lo;
    }
    auto pred = [&](const std::vector<float>& v) {
      Literal lit(Shape::Array(PrimitiveType::kPred, dims));
      for (int64_t i = 0; i < n; ++i) lit.mutable_raw_data()[i] = v[i] != 0 ? 1 : 0;
      return lit;
    };
    std::vector<Literal> expected;
    expected.push_back(F32Literal(dims, clamped));
    expected.push_back(F32Literal(dims, clamped2));
    for (int k = 0; k < 3; ++k) expected.push_back(pred(preds[k]));
    for (const auto* v : {&sel, &sel2, &mul, &div, &sub}) expected.push_back(F32Literal(dims, *v));
    expected.push_back(pred(preds[3]));
    expected.push_back(F32Literal(dims, bhi));
    for (int k = 4; k < 16; ++k) expected.push_back(pred(preds[k]));
    std::vector<Literal> args;
    args.push_back(F32Literal(dims, x));
    args.push_back(F32Literal(dims, z));
    args.push_back(F32Literal({}, {lo}));
    RunAndCompare(hlo, args, expected);
  }
}

// Filter gradients of 1x1 convolutions (the window covers the whole input): each output is a sum over window
// positions in row-major order, then input features, from +0 in f32, which the interpreter computes as a GEMM.
// Long enough sums for several contraction blocks; NCHW activations as PyTorch exports them.
TEST(InterpreterFastPaths, WholeWindowConvolutionsMatchTheDefinitionBitwise) {
  std::mt19937_64 rng(9);
  for (const std::vector<int64_t>& ncho : {std::vector<int64_t>{9, 5, 12, 12, 6}, std::vector<int64_t>{3, 70, 4, 5, 37},
                                           std::vector<int64_t>{20, 2, 1, 9, 3}}) {
    int64_t n = ncho[0], c = ncho[1], h = ncho[2], w = ncho[3], o = ncho[4];
    std::vector<float> x = RandomFloats(n * c * h * w, rng, false), dy = RandomFloats(n * o * h * w, rng, false);
    std::vector<float> expected(static_cast<size_t>(c * o));
    for (int64_t ci = 0; ci < c; ++ci) {
      for (int64_t oi = 0; oi < o; ++oi) {
        float acc = 0;
        for (int64_t y = 0; y < h; ++y) {
          for (int64_t xx = 0; xx < w; ++xx) {
            for (int64_t ni = 0; ni < n; ++ni) {
              float product = x[((ni * c + ci) * h + y) * w + xx] * dy[((ni * o + oi) * h + y) * w + xx];
              acc = acc + product;
            }
          }
        }
        expected[static_cast<size_t>(ci * o + oi)] = acc;
      }
    }
    std::string hlo = fmt::format(
        "HloModule m\nENTRY e {{\n  x = f32[{0},{1},{2},{3}] parameter(0)\n  dy = f32[{0},{4},{2},{3}] parameter(1)\n"
        "  g = f32[1,1,{1},{4}] convolution(x, dy), window={{size={2}x{3}}}, dim_labels=fb01_io01->01bf\n"
        "  ROOT t = (f32[1,1,{1},{4}]) tuple(g)\n}}\n",
        n, c, h, w, o);
    std::vector<Literal> args;
    args.push_back(F32Literal({n, c, h, w}, x));
    args.push_back(F32Literal({n, o, h, w}, dy));
    std::vector<Literal> want;
    want.push_back(F32Literal({1, 1, c, o}, expected));
    RunAndCompare(hlo, args, want);
  }
}

// PermuteInto (the convolution and dot operand relayouts) against the definition, for every order of random
// rank-2 to rank-4 shapes, some large enough for its tiled path.
TEST(InterpreterFastPaths, PermuteIntoMatchesTheDefinition) {
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int64_t> size(1, 40), rank_of(2, 4);
  for (int round = 0; round < 60; ++round) {
    size_t rank = static_cast<size_t>(rank_of(rng));
    std::vector<int64_t> dims(rank);
    for (int64_t& d : dims) d = round % 3 == 0 ? size(rng) % 4 + 1 : size(rng);
    std::vector<int64_t> order(rank);
    for (size_t i = 0; i < rank; ++i) order[i] = static_cast<int64_t>(i);
    std::shuffle(order.begin(), order.end(), rng);
    int64_t total = 1;
    for (int64_t d : dims) total *= d;
    std::vector<float> data(static_cast<size_t>(total));
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(i);
    std::vector<float> out(data.size(), -1), expected(data.size());
    std::vector<int64_t> strides(rank, 1);
    for (size_t i = rank - 1; i-- > 0;) strides[i] = strides[i + 1] * dims[i + 1];
    std::vector<int64_t> out_dims(rank), index(rank, 0);
    for (size_t i = 0; i < rank; ++i) out_dims[i] = dims[static_cast<size_t>(order[i])];
    for (size_t p = 0; p < expected.size(); ++p) {
      int64_t src = 0;
      for (size_t i = 0; i < rank; ++i) src += index[i] * strides[static_cast<size_t>(order[i])];
      expected[p] = data[static_cast<size_t>(src)];
      for (size_t i = rank; i-- > 0;) {
        if (++index[i] < out_dims[i]) break;
        index[i] = 0;
      }
    }
    PermuteInto<float>(data.data(), dims, order, out.data());
    ASSERT_EQ(out, expected) << "dims " << Dims(dims) << " order " << Dims(order);
  }
}

}  // namespace
}  // namespace xlac::interp::testing
