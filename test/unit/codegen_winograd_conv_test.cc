// The fused Winograd convolution "xlac.winograd_conv" (ir/winograd.h): the runtime's kernel (through the JIT on one
// thread and two, and its portable code called directly) bit for bit against the interpreter's definition, on
// shapes that reach every path of the vector code (feature counts that are not a multiple of 16, more than 16 tiles
// per tile row, x and y in NCHW, NHWC and with the batch most minor, padding beyond the window, output sizes that are
// not a multiple of 4);
// and the verifier's checks of the call.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "codegen/jit.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/status_macros.h"
#include "ir/winograd.h"
#include "passes/verifier.h"
#include "runtime/cpu/internal.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

struct ConvCase {
  const char* name;
  std::string x, u, y, window, labels;
};

std::vector<ConvCase> Cases() {
  return {
      // ResNet's shape, smaller: NCHW, padding 1, 16 + 16 features, one vector of 14 tiles per tile row.
      {"nchw_pad1", "[2,8,56,56]", "[36,8,32]", "[2,32,56,56]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // 16 + 8 + 4 + 2 + 1 features; 9 x 7 output (a partial last tile in both directions).
      {"odd_features_partial_tiles", "[1,5,9,7]", "[36,5,31]", "[1,31,9,7]", "{size=3x3 pad=1_1x1_1}",
       "bf01_oi01->bf01"},
      // Two vectors of tiles per tile row (19 tiles), no padding.
      {"wide_rows", "[1,3,10,78]", "[36,3,17]", "[1,17,8,76]", "{size=3x3}", "bf01_oi01->bf01"},
      // NHWC: x and y with strided columns; padding beyond the window on one side.
      {"nhwc_pad_beyond", "[2,7,9,6]", "[36,6,20]", "[2,8,11,20]", "{size=3x3 pad=2_1x1_3}", "b01f_01io->b01f"},
      // NHWC with 20 channels (a block of 16 and one of 4 transposed at once) and 40 columns (three blocks).
      {"nhwc_channel_blocks", "[1,6,40,20]", "[36,20,19]", "[1,6,40,19]", "{size=3x3 pad=1_1x1_1}", "b01f_01io->b01f"},
      // The batch most minor: neither x's nor y's columns or features adjacent (element by element).
      {"batch_minor", "[5,9,3,2]", "[36,3,4]", "[5,9,4,2]", "{size=3x3 pad=1_1x1_1}", "01fb_01io->01fb"},
      // Mixed labels: x's columns contiguous, y's features adjacent.
      {"mixed_labels", "[1,4,6,7]", "[36,4,9]", "[1,7,6,9]", "{size=3x3 pad=1_1x0_2}", "bf01_01io->b10f"},
      // One output row and column: every row but one of the tile is cropped.
      {"single_pixel", "[3,2,1,1]", "[36,2,3]", "[3,3,1,1]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // F(2x2) and F(6x6): the portable code.
      {"f2", "[1,3,7,6]", "[16,3,5]", "[1,5,7,6]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      {"f6", "[2,3,9,13]", "[64,3,18]", "[2,18,9,13]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
  };
}

std::string ConvModule(const ConvCase& c) {
  return absl::StrFormat(R"(HloModule winograd_conv
ENTRY e {
  x = f32%s parameter(0)
  u = f32%s parameter(1)
  ROOT y = f32%s custom-call(x, u), custom_call_target="xlac.winograd_conv", window=%s, dim_labels=%s
})",
                         c.x, c.u, c.y, c.window, c.labels);
}

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status() << "\n" << text;
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**module, diags)) << text;
  return *std::move(module);
}

bool BitwiseEqual(const Literal& a, const Literal& b) {
  return a.byte_size() == b.byte_size() &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.byte_size())) == 0;
}

// Row-major strides of the image's dimensions in (batch, feature, spatial 0, spatial 1) order.
void ImageStrides(const Shape& shape, const WinogradGeometry& g, int64_t* out) {
  int64_t strides[4] = {1, 1, 1, 1};
  for (int64_t d = 2; d >= 0; --d) strides[d] = strides[d + 1] * shape.dimensions[d + 1];
  out[0] = strides[g.batch_dim];
  out[1] = strides[g.feature_dim];
  out[2] = strides[g.spatial_dims[0]];
  out[3] = strides[g.spatial_dims[1]];
}

TEST(WinogradConvTest, RuntimeMatchesTheInterpreterBitForBit) {
  for (const ConvCase& c : Cases()) {
    SCOPED_TRACE(c.name);
    std::unique_ptr<Module> module = Parse(ConvModule(c));
    ASSERT_NE(module, nullptr);
    const Instruction* call = module->entry_computation()->root();
    absl::StatusOr<WinogradConvGeometry> g = WinogradConvGeometryOf(*call);
    ASSERT_TRUE(g.ok()) << g.status();
    std::vector<Literal> args;
    for (int64_t i = 0; i < 2; ++i) {
      args.push_back(interp::MakeRandomLiteral(module->entry_computation()->parameter(i)->shape(), 11 + i));
    }
    absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*module, {args});
    ASSERT_TRUE(want.ok()) << want.status();
    for (int threads : {1, 2}) {
      codegen::JitOptions options;
      options.threads = threads;
      absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(*module, options);
      ASSERT_TRUE(exe.ok()) << exe.status();
      absl::StatusOr<std::vector<Literal>> jit = (*exe)->Run(args);
      ASSERT_TRUE(jit.ok()) << jit.status();
      EXPECT_TRUE(BitwiseEqual((*jit)[0], (*want)[0])) << threads << " threads";
    }
    const std::vector<float> bt = WinogradBtF32(g->input.m), at = WinogradAtF32(g->input.m);
    Literal portable = Literal::CreateUninitialized(call->shape());
    rt::WinogradConvArgs a;
    a.x = reinterpret_cast<const float*>(args[0].raw_data());
    a.u = reinterpret_cast<const float*>(args[1].raw_data());
    a.y = reinterpret_cast<float*>(portable.mutable_raw_data());
    a.m = g->input.m;
    a.bt = bt.data();
    a.at = at.data();
    a.batch = g->input.batch;
    a.channels = g->input.features;
    a.height = g->input.image_size[0];
    a.width = g->input.image_size[1];
    a.features = g->output.features;
    a.out_height = g->output.image_size[0];
    a.out_width = g->output.image_size[1];
    a.tiles[0] = g->input.tiles[0];
    a.tiles[1] = g->input.tiles[1];
    a.pad_low[0] = g->input.padding_low[0];
    a.pad_low[1] = g->input.padding_low[1];
    ImageStrides(args[0].shape(), g->input, a.x_strides);
    ImageStrides(call->shape(), g->output, a.y_strides);
    rt::WinogradConv(nullptr, a, /*portable=*/true);
    EXPECT_TRUE(BitwiseEqual(portable, (*want)[0])) << "portable code";
  }
}

// Malformed calls are rejected by the verifier (shape inference), before any backend sees them.
TEST(WinogradConvTest, VerifierRejectsMalformedCalls) {
  const std::vector<ConvCase> bad = {
      // The filter's channels (5) are not x's (4).
      {"channels", "[1,4,6,7]", "[36,5,9]", "[1,9,6,7]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // The filter's features (8) are not y's (9).
      {"features", "[1,4,6,7]", "[36,4,8]", "[1,9,6,7]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // y's spatial sizes are not the convolution's (6 x 7 with padding 1).
      {"spatial", "[1,4,6,7]", "[36,4,9]", "[1,9,6,6]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // 25 transform points.
      {"points", "[1,4,6,7]", "[25,4,9]", "[1,9,6,7]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // Stride 2.
      {"stride", "[1,4,6,7]", "[36,4,9]", "[1,9,3,7]", "{size=3x3 stride=2x1 pad=1_1x1_1}", "bf01_oi01->bf01"},
      // The batch changes.
      {"batch", "[1,4,6,7]", "[36,4,9]", "[2,9,6,7]", "{size=3x3 pad=1_1x1_1}", "bf01_oi01->bf01"},
  };
  for (const ConvCase& c : bad) {
    SCOPED_TRACE(c.name);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(ConvModule(c));
    if (!module.ok()) continue;  // rejected by the parser: as good
    DiagnosticEngine diags;
    EXPECT_FALSE(VerifyModule(**module, diags));
  }
}

}  // namespace
}  // namespace xlac
