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

// A host custom-call: flattened tuple operands and results in row-major buffers, the backend config passed through,
// errors failing the run; without a handler the module does not compile.
TEST(JitApi, CustomCallHandler) {
  const char* text = R"(
HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = s32[2] parameter(1)
  t = (f32[2,3]{0,1}, s32[2]) tuple(a, b)
  ROOT r = (f32[3,2], s32[]) custom-call(t), custom_call_target="my_op", backend_config="scale=2"
})";
  xlac::CompileOptions options;
  int calls = 0;
  options.custom_call_handler = [&](const xlac::CustomCall& call) -> absl::Status {
    ++calls;
    if (call.target != "my_op") return absl::InvalidArgumentError("unexpected target");
    EXPECT_EQ(call.backend_config, "scale=2");
    EXPECT_EQ(call.operands.size(), 2u);
    EXPECT_EQ(call.operand_infos[0].dims, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(call.result_infos.size(), 2u);
    EXPECT_EQ(call.result_infos[1].element_type, "s32");
    // Transpose times 2, and the sum of b.
    const auto* a = static_cast<const float*>(call.operands[0]);
    const auto* b = static_cast<const int32_t*>(call.operands[1]);
    auto* out = static_cast<float*>(call.results[0]);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 2; ++j) out[i * 2 + j] = 2 * a[j * 3 + i];
    }
    *static_cast<int32_t*>(call.results[1]) = b[0] + b[1];
    return b[0] < 0 ? absl::FailedPreconditionError("negative input") : absl::OkStatus();
  };
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(text, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  // The parameter's {0,1} layout is internal: the API buffer is row-major.
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, out(6);
  std::vector<int32_t> b = {7, 8};
  int32_t sum = 0;
  ASSERT_TRUE((*exe)->Run({a.data(), b.data()}, {out.data(), &sum}).ok());
  EXPECT_EQ(out, (std::vector<float>{2, 8, 4, 10, 6, 12}));
  EXPECT_EQ(sum, 15);
  EXPECT_EQ(calls, 1);
  b[0] = -1;
  absl::Status failed = (*exe)->Run({a.data(), b.data()}, {out.data(), &sum});
  EXPECT_FALSE(failed.ok());
  EXPECT_NE(failed.message().find("negative input"), absl::string_view::npos) << failed;

  absl::StatusOr<std::unique_ptr<xlac::Executable>> unhandled = xlac::Executable::Compile(text);
  ASSERT_FALSE(unhandled.ok());
  EXPECT_EQ(unhandled.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(unhandled.status().message().find("needs a custom-call handler"), absl::string_view::npos)
      << unhandled.status();
}

// An infeed in a loop: the handler sees each execution's occurrence number and fills the data leaves.
TEST(JitApi, InfeedHandler) {
  const char* text = R"(
HloModule m
cond {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  acc = f32[2] get-tuple-element(p), index=1
  tok = token[] after-all()
  in = ((f32[2], s32[]), token[]) infeed(tok)
  data = (f32[2], s32[]) get-tuple-element(in), index=0
  x = f32[2] get-tuple-element(data), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc1 = f32[2] add(acc, x)
  ROOT t = (s32[], f32[2]) tuple(i1, acc1)
}
ENTRY e {
  z = s32[] constant(0)
  zf = f32[] constant(0)
  zeros = f32[2] broadcast(zf), dimensions={}
  t = (s32[], f32[2]) tuple(z, zeros)
  w = (s32[], f32[2]) while(t), condition=cond, body=body
  ROOT r = f32[2] get-tuple-element(w), index=1
})";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> no_handler = xlac::Executable::Compile(text);
  EXPECT_FALSE(no_handler.ok());
  xlac::CompileOptions options;
  std::vector<uint64_t> seen;
  options.infeed_handler = [&](const xlac::Infeed& infeed) -> absl::Status {
    seen.push_back(infeed.occurrence);
    EXPECT_EQ(infeed.name, "in");
    EXPECT_EQ(infeed.device_id, 0);
    EXPECT_EQ(infeed.infos.size(), 2u);
    auto* x = static_cast<float*>(infeed.buffers[0]);
    x[0] = static_cast<float>(infeed.occurrence);
    x[1] = 10;
    return absl::OkStatus();
  };
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(text, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> r(2);
  ASSERT_TRUE((*exe)->Run({}, {r.data()}).ok());
  EXPECT_EQ(r, (std::vector<float>{0 + 1 + 2, 30}));
  EXPECT_EQ(seen, (std::vector<uint64_t>{0, 1, 2}));
}

}  // namespace
