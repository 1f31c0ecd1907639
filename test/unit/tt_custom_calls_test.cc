// tt-custom-calls: Tenstorrent's tt.* custom calls become HLO. Attention at a size the lit tests do not reach (bf16,
// grouped-query heads, causal, 37 positions, a boundary-crossing mask) against a direct double-precision loop; the
// pass leaves other tt.* targets alone; errors carry the call's location.
#include "passes/tt_custom_calls.h"

#include <cmath>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "gtest/gtest.h"
#include "ir/float_types.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"
#include "stablehlo_test_util.h"

namespace xlac {
namespace {

using stablehlo_testing::MustParse;

// The reference: softmax(q k^T * scale + mask, masked causally) v in double, kv head h / (H / Hkv) for query head h.
std::vector<double> Attention(const Literal& q, const Literal& k, const Literal& v, const Literal* mask, int64_t b_n,
                              int64_t h_n, int64_t kv_n, int64_t s_n, int64_t d_n, bool causal, double scale) {
  std::vector<double> out(b_n * h_n * s_n * d_n, 0.0);
  const int64_t group = h_n / kv_n;
  for (int64_t b = 0; b < b_n; ++b) {
    for (int64_t h = 0; h < h_n; ++h) {
      const int64_t kh = h / group;
      for (int64_t i = 0; i < s_n; ++i) {
        std::vector<double> logits(s_n);
        double max = -INFINITY;
        for (int64_t j = 0; j < s_n; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < d_n; ++d) {
            dot += q.GetAsDouble(((b * h_n + h) * s_n + i) * d_n + d) *
                   k.GetAsDouble(((b * kv_n + kh) * s_n + j) * d_n + d);
          }
          logits[j] = dot * scale + (mask != nullptr ? mask->GetAsDouble((b * s_n + i) * s_n + j) : 0.0);
          if (causal && j > i) logits[j] = -INFINITY;
          max = std::max(max, logits[j]);
        }
        double sum = 0;
        for (double& l : logits) sum += (l = std::exp(l - max));
        for (int64_t j = 0; j < s_n; ++j) {
          for (int64_t d = 0; d < d_n; ++d) {
            out[((b * h_n + h) * s_n + i) * d_n + d] +=
                logits[j] / sum * v.GetAsDouble(((b * kv_n + kh) * s_n + j) * d_n + d);
          }
        }
      }
    }
  }
  return out;
}

std::string SdpaModule(bool causal, bool with_mask) {
  const std::string q = "tensor<2x8x37x16xbf16>", kv = "tensor<2x2x37x16xbf16>", m = "tensor<2x1x37x37xbf16>";
  return fmt::format(R"(
module @m {{
  func.func public @main(%q: {0}, %k: {1}, %v: {1}{2}) -> {0} {{
    %0 = stablehlo.custom_call @tt.scaled_dot_product_attention(%q, %k, %v{3}) {{api_version = 0 : i32, mhlo.frontend_attributes = {{is_causal = "{4}"}}}} : ({0}, {1}, {1}{5}) -> {0}
    return %0 : {0}
  }}
}}
)",
                     q, kv, with_mask ? ", %mask: " + m : "", with_mask ? ", %mask" : "", causal ? "True" : "False",
                     with_mask ? ", " + m : "");
}

void CheckAttention(bool causal, bool with_mask) {
  std::unique_ptr<Module> module = MustParse(SdpaModule(causal, with_mask));
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunTtCustomCalls(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  DiagnosticEngine diags;
  ASSERT_TRUE(VerifyModule(*module, diags));
  const Computation& entry = *module->entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry.parameter(i)->shape(), 7 + i));
  }
  if (with_mask) {
    // Large negative entries on a diagonal band, as padding masks hold, plus small additive ones.
    Literal& mask = args[3];
    for (int64_t e = 0; e < mask.element_count(); ++e) {
      const int64_t j = e % 37, i = (e / 37) % 37;
      if ((i + 2 * j) % 5 == 0 && j != 0) mask.SetFromDouble(e, -1e4);
    }
  }
  absl::StatusOr<std::vector<Literal>> result = interp::Evaluate(*module, {args});
  ASSERT_TRUE(result.ok()) << result.status();
  const Literal& out = (*result)[0];
  const std::vector<double> want = Attention(args[0], args[1], args[2], with_mask ? &args[3] : nullptr, 2, 8, 2, 37, 16,
                                             causal, 1.0 / std::sqrt(16.0));
  ASSERT_EQ(out.element_count(), static_cast<int64_t>(want.size()));
  int64_t bad = 0;
  for (int64_t e = 0; e < out.element_count(); ++e) {
    // The result is computed in f32 and rounded to bf16 once: within one bf16 rounding (2^-8 relative) of the exact
    // value, plus f32 noise.
    const double got = out.GetAsDouble(e);
    if (std::abs(got - want[e]) > std::abs(want[e]) * 0x1p-8 + 1e-5) {
      if (++bad <= 5) ADD_FAILURE() << "element " << e << ": got " << got << ", want " << want[e];
    }
  }
  EXPECT_EQ(bad, 0);
}

TEST(TtCustomCalls, CausalGroupedQueryBf16MatchesDirectLoop) { CheckAttention(/*causal=*/true, /*with_mask=*/false); }

TEST(TtCustomCalls, MaskedBf16MatchesDirectLoop) { CheckAttention(/*causal=*/false, /*with_mask=*/true); }

TEST(TtCustomCalls, LeavesOtherTargetsAlone) {
  std::unique_ptr<Module> module = MustParse(R"(
module @m {
  func.func public @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = stablehlo.custom_call @tt.mark_argument(%x) {api_version = 0 : i32, mhlo.frontend_attributes = {ttcore.argument_type = "input"}} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = stablehlo.custom_call @tt.some_future_op(%0) {api_version = 0 : i32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %1 : tensor<2x3xf32>
  }
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunTtCustomCalls(*module);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
}

TEST(TtCustomCalls, ErrorsNameTheCallAndItsLocation) {
  std::unique_ptr<Module> module = MustParse(R"(
module @m {
  func.func public @main(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
    %0 = stablehlo.custom_call @tt.scaled_dot_product_attention(%q, %k, %v) {api_version = 0 : i32, mhlo.frontend_attributes = {is_causal = "True", scale = "x"}} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
    return %0 : tensor<1x2x4x8xf32>
  }
}
)");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<bool> changed = RunTtCustomCalls(*module);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().message(),
            "4:5: custom-call %custom-call.4 (target \"tt.scaled_dot_product_attention\"): frontend attribute scale = "
            "\"x\" is not a finite number");
}

}  // namespace
}  // namespace xlac
