// The interpreter's GEMM packing B in groups (runtime/interpreter/fast_kernels.h, GemmNT and kGemmPackBudget) and
// reading it in place in any layout and narrow float type: bit for bit what the naive loop computes (each output from
// +0, products added in ascending contraction order, every product and sum rounded in the compute type), for every
// packing budget (one group; groups of panels; groups of the contraction; groups of batches) and thread count, and
// for dots whose rhs is larger than the real budget.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "interpreter_test_util.h"
#include "runtime/interpreter/fast_kernels.h"

namespace xlac::interp::testing {
namespace {

// Mixed magnitudes, so that sums depend on their order, and with `specials` a few NaNs, infinities and -0s (not for
// long sums, most of which they would make NaN).
Literal RandomArray(PrimitiveType type, const std::vector<int64_t>& dims, std::mt19937_64& rng, bool specials) {
  Literal lit(Shape::Array(type, dims));
  std::uniform_real_distribution<double> u(-2, 2);
  std::uniform_int_distribution<int> e(-10, 10), pick(0, 400);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    double v = std::ldexp(u(rng), e(rng));
    int p = specials ? pick(rng) : -1;
    if (p == 0) v = std::nan("");
    if (p == 1) v = -INFINITY;
    if (p == 2) v = -0.0;
    lit.SetFromDouble(i, v);
  }
  return lit;
}

bool SameBits(double x, double y, bool f64) {
  if (std::isnan(x) && std::isnan(y)) return true;  // payloads are not part of the contract
  if (f64) return std::memcmp(&x, &y, sizeof x) == 0;
  float fx = static_cast<float>(x), fy = static_cast<float>(y);
  return std::memcmp(&fx, &fy, sizeof fx) == 0;
}

// out[g][i][j] of a [batch][m][k] x b, b's element (g, j, kk) at b_index(g, j, kk) of `b`, the naive way.
template <typename T, typename Index>
std::vector<T> NaiveGemm(const std::vector<T>& a, const Literal& b, Index b_index, int64_t batch, int64_t m, int64_t n,
                         int64_t k) {
  std::vector<T> out(static_cast<size_t>(batch * m * n));
  for (int64_t g = 0; g < batch; ++g) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        T acc = T(0);
        for (int64_t kk = 0; kk < k; ++kk) {
          T p = a[static_cast<size_t>((g * m + i) * k + kk)] * static_cast<T>(b.GetAsDouble(b_index(g, j, kk)));
          acc = acc + p;  // separate statements: never contracted to an FMA
        }
        out[static_cast<size_t>((g * m + i) * n + j)] = acc;
      }
    }
  }
  return out;
}

template <typename T>
void CheckGemm(PrimitiveType b_type, std::mt19937_64& rng, int round) {
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  // B's dims: one batch dim, one or two column dims, one or two contraction dims, in a random order.
  std::vector<int64_t> roles{0, 1, 2};  // 0 batch, 1 column, 2 contraction
  if (r(0, 1)) roles.push_back(1);
  if (r(0, 1)) roles.push_back(2);
  std::shuffle(roles.begin(), roles.end(), rng);
  const bool long_k = round % 3 == 0;
  std::vector<int64_t> dims;
  std::vector<int64_t> batch_list, column_list, k_list;
  int64_t batch = 1, n = 1, k = 1;
  bool first_column = true, first_k = true;
  for (size_t d = 0; d < roles.size(); ++d) {
    int64_t size = 0;
    if (roles[d] == 0) {
      size = r(1, 3);
    } else if (roles[d] == 1) {
      size = first_column ? r(1, 40) : r(1, 5);
      first_column = false;
    } else {
      size = first_k && long_k ? r(300, 700) : r(1, 12);
      first_k = false;
    }
    dims.push_back(size);
    (roles[d] == 0 ? batch_list : roles[d] == 1 ? column_list : k_list).push_back(static_cast<int64_t>(d));
    (roles[d] == 0 ? batch : roles[d] == 1 ? n : k) *= size;
  }
  std::shuffle(column_list.begin(), column_list.end(), rng);  // lists need not follow the dims' order
  std::shuffle(k_list.begin(), k_list.end(), rng);
  const int64_t m = r(1, 6);
  Literal b = RandomArray(b_type, dims, rng, !long_k);
  Literal a_lit =
      RandomArray(std::is_same_v<T, double> ? PrimitiveType::kF64 : PrimitiveType::kF32, {batch, m, k}, rng, !long_k);
  std::vector<T> a(static_cast<size_t>(a_lit.element_count()));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<T>(a_lit.GetAsDouble(static_cast<int64_t>(i)));

  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size() - 1; d-- > 0;) strides[d] = strides[d + 1] * dims[d + 1];
  auto offset = [&](const std::vector<int64_t>& list, int64_t index) {
    int64_t off = 0;
    for (size_t x = list.size(); x-- > 0;) {
      size_t d = static_cast<size_t>(list[x]);
      off += index % dims[d] * strides[d];
      index /= dims[d];
    }
    return off;
  };
  auto b_index = [&](int64_t g, int64_t j, int64_t kk) {
    return offset(batch_list, g) + offset(column_list, j) + offset(k_list, kk);
  };
  std::vector<T> expected = NaiveGemm<T>(a, b, b_index, batch, m, n, k);

  GemmOperand operand = GemmOperandOf(b.raw_data(), b_type, dims, batch_list, column_list, k_list);
  // Budgets: a single panel and contraction block per group, a few panels per group, and everything at once.
  for (int64_t budget : {int64_t{1}, int64_t{64} * 300 * 3, kGemmPackBudget}) {
    for (int64_t threads : {1, 3}) {
      std::vector<T> out(expected.size(), T(-7));
      GemmNT<T>(a.data(), operand, out.data(), batch, m, n, k, threads, budget);
      for (size_t i = 0; i < out.size(); ++i) {
        ASSERT_TRUE(SameBits(expected[i], out[i], std::is_same_v<T, double>))
            << "element " << i << ": expected " << expected[i] << ", got " << out[i] << "; batch " << batch << " m "
            << m << " n " << n << " k " << k << " budget " << budget << " threads " << threads;
      }
    }
  }
}

TEST(InterpreterGemmPacking, InPlaceOperandsAndPackingGroupsMatchTheNaiveLoop) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 12; ++round) {
    CheckGemm<float>(PrimitiveType::kF32, rng, round);
    CheckGemm<float>(PrimitiveType::kBF16, rng, round);
    CheckGemm<float>(PrimitiveType::kF16, rng, round);
    CheckGemm<float>(PrimitiveType::kF8E4M3FN, rng, round);
    CheckGemm<double>(PrimitiveType::kF64, rng, round);
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(InterpreterGemmPacking, BufferStaysWithinTheBudget) {
  // All of a small B at once; a 4 GB lm_head (8192 x 128256 as f32) in groups of panels; a long contraction in
  // groups of it too.
  EXPECT_EQ(GemmPackBytes(1, 100, 64, 4), 7 * 64 * 64);
  EXPECT_EQ(GemmPackBytes(1, 128256, 8192, 4), kGemmPackBudget);
  EXPECT_LE(GemmPackBytes(1, 1000, 1 << 20, 4), kGemmPackBudget);
  EXPECT_LE(GemmPackBytes(1, 1000, 1 << 20, 8), kGemmPackBudget);
  EXPECT_EQ(GemmPackBytes(24, 128, 128, 4), 24 * 8 * 128 * 64);  // attention heads: every batch at once
  EXPECT_EQ(GemmPackBytes(0, 10, 10, 4), 0);
}

// Dots through the interpreter whose rhs packs to more than kGemmPackBudget: groups of panels (a bf16 [k, n]
// weight, as an lm_head is) and of the contraction (an f32 [n, k] one), against the naive loop.
void CheckLargeDot(PrimitiveType type, int64_t m, int64_t k, int64_t n, bool rhs_k_major) {
  ASSERT_GT(((n + 15) / 16) * k * 64, kGemmPackBudget);
  std::mt19937_64 rng(static_cast<uint64_t>(k * n));
  std::vector<int64_t> rhs_dims = rhs_k_major ? std::vector<int64_t>{k, n} : std::vector<int64_t>{n, k};
  Literal a = RandomArray(type, {m, k}, rng, false), b = RandomArray(type, rhs_dims, rng, false);
  std::vector<float> a_f(static_cast<size_t>(m * k));
  for (size_t i = 0; i < a_f.size(); ++i) a_f[i] = static_cast<float>(a.GetAsDouble(static_cast<int64_t>(i)));
  auto b_index = [&](int64_t, int64_t j, int64_t kk) { return rhs_k_major ? kk * n + j : j * k + kk; };
  std::vector<float> expected = NaiveGemm<float>(a_f, b, b_index, 1, m, n, k);
  const char* t = type == PrimitiveType::kBF16 ? "bf16" : "f32";
  std::string hlo = fmt::format(
      "HloModule m\nENTRY e {{\n  a = {0}[{1},{2}] parameter(0)\n  b = {0}[{3},{4}] parameter(1)\n  ROOT d = "
      "{0}[{1},{5}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{{6}}}\n}}\n",
      t, m, k, rhs_dims[0], rhs_dims[1], n, rhs_k_major ? 0 : 1);
  for (int64_t threads : {1, 2}) {
    InterpreterOptions options;
    options.threads = threads;
    absl::StatusOr<Literal> got = RunHlo(hlo, {a, b}, options);
    ASSERT_TRUE(got.ok()) << got.status();
    Literal want(Shape::Array(type, {m, n}));
    for (size_t i = 0; i < expected.size(); ++i) want.SetFromDouble(static_cast<int64_t>(i), expected[i]);
    for (int64_t i = 0; i < want.element_count(); ++i) {
      ASSERT_TRUE(SameBits(want.GetAsDouble(i), got->GetAsDouble(i), false))
          << t << " element " << i << ": expected " << want.GetAsDouble(i) << ", got " << got->GetAsDouble(i)
          << " threads " << threads;
    }
  }
}

TEST(InterpreterGemmPacking, DotsLargerThanThePackingBudget) {
  CheckLargeDot(PrimitiveType::kBF16, 3, 8192, 1100, /*rhs_k_major=*/true);
  CheckLargeDot(PrimitiveType::kF32, 2, 20000, 250, /*rhs_k_major=*/false);
}

// An f32 or f64 dot of narrower floats (bf16 weights with preferred_element_type=f32) reads its rhs in place,
// widened as convert widens it: the naive loop over the widened values.
TEST(InterpreterGemmPacking, WideningDotsReadTheRhsInPlace) {
  struct Case {
    PrimitiveType in, out;
    const char *in_name, *out_name;
  };
  std::mt19937_64 rng(11);
  for (const Case& c : {Case{PrimitiveType::kBF16, PrimitiveType::kF32, "bf16", "f32"},
                        Case{PrimitiveType::kF16, PrimitiveType::kF64, "f16", "f64"},
                        Case{PrimitiveType::kF32, PrimitiveType::kF64, "f32", "f64"}}) {
    for (bool k_major : {false, true}) {
      const int64_t m = 5, k = 77, n = 41;
      std::vector<int64_t> rhs_dims = k_major ? std::vector<int64_t>{k, n} : std::vector<int64_t>{n, k};
      Literal a = RandomArray(c.in, {m, k}, rng, true), b = RandomArray(c.in, rhs_dims, rng, true);
      auto b_index = [&](int64_t, int64_t j, int64_t kk) { return k_major ? kk * n + j : j * k + kk; };
      Literal want(Shape::Array(c.out, {m, n}));
      if (c.out == PrimitiveType::kF32) {
        std::vector<float> a_f(static_cast<size_t>(m * k));
        for (size_t i = 0; i < a_f.size(); ++i) a_f[i] = static_cast<float>(a.GetAsDouble(static_cast<int64_t>(i)));
        std::vector<float> expected = NaiveGemm<float>(a_f, b, b_index, 1, m, n, k);
        for (size_t i = 0; i < expected.size(); ++i) want.SetFromDouble(static_cast<int64_t>(i), expected[i]);
      } else {
        std::vector<double> a_d(static_cast<size_t>(m * k));
        for (size_t i = 0; i < a_d.size(); ++i) a_d[i] = a.GetAsDouble(static_cast<int64_t>(i));
        std::vector<double> expected = NaiveGemm<double>(a_d, b, b_index, 1, m, n, k);
        for (size_t i = 0; i < expected.size(); ++i) want.SetFromDouble(static_cast<int64_t>(i), expected[i]);
      }
      std::string hlo = fmt::format(
          "HloModule m\nENTRY e {{\n  a = {0}[{1},{2}] parameter(0)\n  b = {0}[{3},{4}] parameter(1)\n  ROOT d = "
          "{5}[{1},{6}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{{7}}}\n}}\n",
          c.in_name, m, k, rhs_dims[0], rhs_dims[1], c.out_name, n, k_major ? 0 : 1);
      for (int64_t threads : {1, 3}) {
        InterpreterOptions options;
        options.threads = threads;
        absl::StatusOr<Literal> got = RunHlo(hlo, {a, b}, options);
        ASSERT_TRUE(got.ok()) << got.status();
        for (int64_t i = 0; i < want.element_count(); ++i) {
          ASSERT_TRUE(SameBits(want.GetAsDouble(i), got->GetAsDouble(i), c.out == PrimitiveType::kF64))
              << hlo << "element " << i << ": expected " << want.GetAsDouble(i) << ", got " << got->GetAsDouble(i);
        }
      }
    }
  }
}

}  // namespace
}  // namespace xlac::interp::testing
