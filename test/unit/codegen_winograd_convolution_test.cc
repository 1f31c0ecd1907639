// winograd-convolution (passes/winograd_convolution.h): rewritten convolutions against the original through the
// interpreter (odd sizes, padding 0 and 1, NCHW and NHWC, batch 1, tiles 2, 4 and 6), the error bound that
// docs/numerics.md documents through the JIT's default mode, and exact mode's direct convolution bit for bit.
#include "passes/winograd_convolution.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/jit.h"
#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "passes/f64_reference.h"
#include "passes/optimization_pipeline.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

// The documented bound (docs/numerics.md, "Winograd convolutions") of max |y - ref| / max |ref| against the f64
// result, for F(4x4, 3x3) with up to 64 input channels.
constexpr double kWinogradF4Bound = 1e-5;

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**module, diags)) << text;
  return *std::move(module);
}

std::string Conv(const std::string& x, const std::string& w, const std::string& out, const std::string& attrs) {
  return absl::StrFormat(R"(HloModule conv
ENTRY e {
  x = f32%s parameter(0)
  w = f32%s parameter(1)
  ROOT c = f32%s convolution(x, w), %s
})",
                         x, w, out, attrs);
}

std::vector<Literal> Arguments(const Module& module, uint64_t seed) {
  std::vector<Literal> args;
  const Computation* entry = module.entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), seed + static_cast<uint64_t>(i)));
  }
  return args;
}

// max |got - want| / max |want|.
double NormwiseError(const Literal& got, const Literal& want) {
  double err = 0, scale = 0;
  for (int64_t i = 0; i < want.element_count(); ++i) {
    err = std::max(err, std::fabs(got.GetAsDouble(i) - want.GetAsDouble(i)));
    scale = std::max(scale, std::fabs(want.GetAsDouble(i)));
  }
  return scale > 0 ? err / scale : err;
}

// A 3x3 convolution (the input transform is a convolution too, with an (m + 2) x (m + 2) window).
bool Has3x3Convolution(const Module& module) {
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kConvolution &&
          inst->FindAttr("window")->get<Window>().dimensions[0].size == 3) {
        return true;
      }
    }
  }
  return false;
}

struct Case {
  const char* name;
  std::string x, w, out, attrs;
};

std::vector<Case> Cases() {
  return {
      {"nchw_pad1_batch1_odd", "[1,32,9,7]", "[32,32,3,3]", "[1,32,9,7]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"},
      {"nchw_pad0", "[2,32,11,10]", "[40,32,3,3]", "[2,40,9,8]", "window={size=3x3}, dim_labels=bf01_oi01->bf01"},
      {"nhwc_pad1", "[2,10,13,32]", "[3,3,32,36]", "[2,10,13,36]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f"},
      {"padding_beyond_the_window", "[1,32,5,6]", "[32,32,3,3]", "[1,32,8,8]",
       "window={size=3x3 pad=2_3x3_1}, dim_labels=bf01_oi01->bf01"},
      {"asymmetric_pad_mixed_labels", "[1,32,6,7]", "[3,3,32,32]", "[1,7,6,32]",
       "window={size=3x3 pad=1_1x0_2}, dim_labels=bf01_01io->b10f"},
  };
}

// Rewritten against the original module, both through the interpreter: the same function up to rounding; and the
// JIT's default mode (which rewrites it) against the interpreter's direct convolution.
TEST(WinogradConvolutionTest, MatchesTheDirectConvolutionInTheInterpreter) {
  for (const Case& c : Cases()) {
    for (int64_t tile : {2, 4, 6}) {
      SCOPED_TRACE(absl::StrFormat("%s, F(%d,3)", c.name, tile));
      std::unique_ptr<Module> module = Parse(Conv(c.x, c.w, c.out, c.attrs));
      ASSERT_NE(module, nullptr);
      std::unique_ptr<Module> rewritten = module->Clone();
      absl::StatusOr<bool> changed = RunWinogradConvolution(*rewritten, tile, 32);
      ASSERT_TRUE(changed.ok()) << changed.status();
      EXPECT_TRUE(*changed);
      EXPECT_FALSE(Has3x3Convolution(*rewritten));
      DiagnosticEngine diags;
      ASSERT_TRUE(VerifyModule(*rewritten, diags)) << PrintModule(*rewritten);
      std::vector<Literal> args = Arguments(*module, 3);
      absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*module, {args});
      absl::StatusOr<std::vector<Literal>> got = interp::Evaluate(*rewritten, {args});
      ASSERT_TRUE(want.ok() && got.ok());
      EXPECT_LT(NormwiseError((*got)[0], (*want)[0]), tile == 6 ? 1e-4 : 2e-5);
      if (tile != 4) continue;
      // The JIT's default mode runs the pass (F(4,3)) and its kernels on the same shapes.
      absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(*module);
      ASSERT_TRUE(exe.ok()) << exe.status();
      absl::StatusOr<std::vector<Literal>> jit = (*exe)->Run(args);
      ASSERT_TRUE(jit.ok()) << jit.status();
      EXPECT_LT(NormwiseError((*jit)[0], (*want)[0]), 2e-5);
    }
  }
}

TEST(WinogradConvolutionTest, LeavesIneligibleConvolutionsAlone) {
  const std::vector<Case> cases = {
      {"stride2", "[1,32,9,9]", "[32,32,3,3]", "[1,32,5,5]",
       "window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"},
      {"5x5", "[1,32,9,9]", "[32,32,5,5]", "[1,32,9,9]", "window={size=5x5 pad=2_2x2_2}, dim_labels=bf01_oi01->bf01"},
      {"grouped", "[1,64,9,9]", "[64,32,3,3]", "[1,64,9,9]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01, feature_group_count=2"},
      {"few_channels", "[1,16,9,9]", "[32,16,3,3]", "[1,32,9,9]",
       "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01"},
      {"dilated", "[1,32,9,9]", "[32,32,3,3]", "[1,32,9,9]",
       "window={size=3x3 pad=2_2x2_2 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Module> module = Parse(Conv(c.x, c.w, c.out, c.attrs));
    ASSERT_NE(module, nullptr);
    absl::StatusOr<bool> changed = RunWinogradConvolution(*module);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_FALSE(*changed);
  }
}

TEST(WinogradConvolutionTest, RunsOnlyInTheDefaultNumericsMode) {
  OptimizationOptions options;
  auto has = [](const std::vector<std::string>& steps) {
    return std::find(steps.begin(), steps.end(), "winograd-convolution") != steps.end();
  };
  EXPECT_FALSE(has(OptimizationPipeline(options)));  // exact unless told otherwise
  options.exact = false;
  EXPECT_TRUE(has(OptimizationPipeline(options)));
  options.tpu_numerics = true;
  EXPECT_FALSE(has(OptimizationPipeline(options)));
}

// A ResNet-like block's convolution (NCHW, 64 channels, pad 1, odd size) through the JIT: the default mode within
// the documented bound of the f64 result (Winograd when the pipeline enables it, else the direct convolution), and
// exact mode bit for bit the interpreter's direct convolution.
TEST(WinogradConvolutionTest, JitErrorWithinTheDocumentedBound) {
  const std::string text = Conv("[2,64,18,19]", "[64,64,3,3]", "[2,64,18,19]",
                                "window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01");
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = Arguments(*module, 11);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*module);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  absl::StatusOr<std::vector<Literal>> reference = interp::Evaluate(**promoted, {args});
  absl::StatusOr<std::vector<Literal>> interpreted = interp::Evaluate(*module, {args});
  ASSERT_TRUE(reference.ok() && interpreted.ok());

  // The pass itself, F(4,3), through the interpreter.
  std::unique_ptr<Module> rewritten = module->Clone();
  ASSERT_TRUE(RunWinogradConvolution(*rewritten).value());
  absl::StatusOr<std::vector<Literal>> winograd = interp::Evaluate(*rewritten, {args});
  ASSERT_TRUE(winograd.ok());
  double direct_error = NormwiseError((*interpreted)[0], (*reference)[0]);
  double winograd_error = NormwiseError((*winograd)[0], (*reference)[0]);
  printf("normwise error against f64: direct %.3g, F(4,3) %.3g\n", direct_error, winograd_error);
  EXPECT_LE(winograd_error, kWinogradF4Bound);
  EXPECT_GT(winograd_error, direct_error);  // it really is a different algorithm

  for (bool exact : {false, true}) {
    codegen::JitOptions options;
    options.compile.exact = exact;
    absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(*module, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    absl::StatusOr<std::vector<Literal>> got = (*exe)->Run(args);
    ASSERT_TRUE(got.ok()) << got.status();
    if (exact) {
      const Literal& want = (*interpreted)[0];
      ASSERT_EQ((*got)[0].byte_size(), want.byte_size());
      EXPECT_EQ(std::memcmp((*got)[0].raw_data(), want.raw_data(), static_cast<size_t>(want.byte_size())), 0);
    } else {
      EXPECT_LE(NormwiseError((*got)[0], (*reference)[0]), kWinogradF4Bound);
    }
  }
}

}  // namespace
}  // namespace xlac
