// The public JIT API (include/xlac/jit.h): compile from text, signatures, runs on user buffers, errors.
#include <cstdint>
#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"

namespace {

TEST(JitApi, CompilesInspectsAndRunsRepeatedly) {
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(R"(
HloModule m
ENTRY e {
  a = f32[2,3] parameter(0)
  b = s32[3] parameter(1)
  bf = f32[3] convert(b)
  bb = f32[2,3] broadcast(bf), dimensions={1}
  sum = f32[2,3] add(a, bb)
  t = f32[3,2] transpose(sum), dimensions={1,0}
  n = s32[3] negate(b)
  ROOT r = (f32[3,2], s32[3]) tuple(t, n)
})");
  ASSERT_TRUE(exe.ok()) << exe.status();
  ASSERT_EQ((*exe)->parameters().size(), 2u);
  EXPECT_EQ((*exe)->parameters()[0].element_type, "f32");
  EXPECT_EQ((*exe)->parameters()[0].dims, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ((*exe)->parameters()[1].byte_size(), 12);
  ASSERT_EQ((*exe)->results().size(), 2u);  // the tuple is flattened
  EXPECT_EQ((*exe)->results()[0].dims, (std::vector<int64_t>{3, 2}));
  EXPECT_EQ((*exe)->num_devices(), 1);
  for (int run = 0; run < 3; ++run) {
    std::vector<float> a = {1, 2, 3, 4, 5, 6};
    std::vector<int32_t> b = {10 * run, 20, 30};
    std::vector<float> t(6);
    std::vector<int32_t> n(3);
    ASSERT_TRUE((*exe)->Run({a.data(), b.data()}, {t.data(), n.data()}).ok());
    // Row-major [3,2]: t[i][j] = a[j][i] + b[i].
    EXPECT_EQ(t, (std::vector<float>{1.0f + 10 * run, 4.0f + 10 * run, 22, 25, 33, 36}));
    EXPECT_EQ(n, (std::vector<int32_t>{-10 * run, -20, -30}));
  }
}

TEST(JitApi, AcceptsStableHlo) {
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(R"(
module @m {
  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.multiply %x, %x : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
})");
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x = {1, -2, 3, 0.5f}, y(4);
  ASSERT_TRUE((*exe)->Run({x.data()}, {y.data()}).ok());
  EXPECT_EQ(y, (std::vector<float>{1, 4, 9, 0.25f}));
}

TEST(JitApi, ReportsErrors) {
  xlac::CompileOptions options;
  options.source_name = "bad.hlo";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> bad =
      xlac::Executable::Compile("HloModule m\nENTRY e {\n  ROOT x = f32[2] frobnicate()\n}\n", options);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("bad.hlo:3:"), absl::string_view::npos) << bad.status();

  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe =
      xlac::Executable::Compile("HloModule m\nENTRY e {\n  ROOT p = f32[2] parameter(0)\n}\n");
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> y(2);
  absl::Status wrong_count = (*exe)->Run({}, {y.data()});
  EXPECT_EQ(wrong_count.code(), absl::StatusCode::kInvalidArgument);
  absl::Status null_param = (*exe)->Run({nullptr}, {y.data()});
  EXPECT_EQ(null_param.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
