// The public JIT API with XLA FFI handler libraries (CompileOptions::custom_call_libs): typed-FFI custom calls of a
// StableHLO module run the test suite's handler library (test/ffi/); the targets it does not provide go to the
// user's custom_call_handler.
#include <cstring>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"

namespace {

constexpr char kModule[] = R"(module @ffi {
  func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
    %s = stablehlo.custom_call @xlac_test_scale(%x) {api_version = 4 : i32, mhlo.backend_config = {alpha = 3.0 : f32}} : (tensor<4xf32>) -> tensor<4xf32>
    %n = stablehlo.custom_call @user.negate(%s) : (tensor<4xf32>) -> tensor<4xf32>
    return %s, %n : tensor<4xf32>, tensor<4xf32>
  }
}
)";

TEST(JitApiFfi, LibraryTargetsFirstTheRestToTheUserHandler) {
  xlac::CompileOptions options;
  options.custom_call_libs = {XLAC_FFI_TEST_LIB};
  int user_calls = 0;
  options.custom_call_handler = [&user_calls](const xlac::CustomCall& call) -> absl::Status {
    ++user_calls;
    if (call.target != "user.negate") return absl::UnimplementedError("unexpected target");
    const float* in = static_cast<const float*>(call.operands[0]);
    float* out = static_cast<float*>(call.results[0]);
    for (int i = 0; i < 4; ++i) out[i] = -in[i];
    return absl::OkStatus();
  };
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(kModule, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x = {1, 2, 3, 4}, s(4), n(4);
  for (int run = 0; run < 2; ++run) {
    ASSERT_TRUE((*exe)->Run({x.data()}, {s.data(), n.data()}).ok());
    EXPECT_EQ(s, (std::vector<float>{3, 6, 9, 12}));
    EXPECT_EQ(n, (std::vector<float>{-3, -6, -9, -12}));
  }
  EXPECT_EQ(user_calls, 2);
}

TEST(JitApiFfi, MissingHandlerIsACompileError) {
  xlac::CompileOptions options;
  options.custom_call_libs = {XLAC_FFI_TEST_LIB};
  options.source_name = "m.mlir";
  std::string text = kModule;
  text.replace(text.find("@xlac_test_scale"), std::strlen("@xlac_test_scale"), "@absent");
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(text, options);
  ASSERT_FALSE(exe.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(exe.status()));
  EXPECT_NE(exe.status().message().find("m.mlir:3:5: error: no XLA FFI handler for custom call target 'absent'"),
            std::string::npos)
      << exe.status();
  options.custom_call_libs = {"/nonexistent/libffi.so"};
  exe = xlac::Executable::Compile(kModule, options);
  ASSERT_FALSE(exe.ok());
  EXPECT_NE(exe.status().message().find("cannot load custom-call library '/nonexistent/libffi.so'"), std::string::npos)
      << exe.status();
}

TEST(JitApiFfi, HandlerErrorReachesRun) {
  xlac::CompileOptions options;
  options.custom_call_libs = {XLAC_FFI_TEST_LIB};
  options.source_name = "fail.mlir";
  constexpr char kFailing[] = R"(module @fail {
  func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
    %f = stablehlo.custom_call @xlac_test_fail(%x) {api_version = 4 : i32, mhlo.backend_config = {reason = "overflow"}} : (tensor<4xf32>) -> tensor<4xf32>
    return %f : tensor<4xf32>
  }
}
)";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(kFailing, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x(4), y(4);
  absl::Status status = (*exe)->Run({x.data()}, {y.data()});
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("(target 'xlac_test_fail') at fail.mlir:3:5 failed: overflow (operand rank 1)"),
            std::string::npos)
      << status;
}

}  // namespace
