// The public JIT API with C++ kernels (CompileOptions::custom_call_sources, docs/custom_calls.md): compiled by Clang
// in process, bound to the module's custom calls, run on user buffers; Clang's errors and mismatched calls are
// InvalidArgument with located diagnostics; a sharded module partitions an elementwise kernel like any other op.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"

namespace {

class JitApiKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("xlac_jit_api_kernels_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
};

constexpr char kKernels[] = R"(#include <xlac/custom_call.h>
#include <cmath>
XLAC_ELEMENTWISE("api.softplus")
float Softplus(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
)";

TEST_F(JitApiKernels, CompilesAndRunsAKernel) {
  xlac::CompileOptions options;
  options.custom_call_sources = {Write("k.cc", kKernels)};
  options.exact = true;  // libm in the kernel, as the reference below computes it
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(R"(
HloModule m
ENTRY e {
  x = f32[6] parameter(0)
  s = f32[6] custom-call(x), custom_call_target="api.softplus"
  ROOT r = f32[6] multiply(s, x)
})",
                                                                                    options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<float> x = {-30, -1, 0, 0.5f, 3, 25}, r(6);
  ASSERT_TRUE((*exe)->Run({x.data()}, {r.data()}).ok());
  for (size_t i = 0; i < x.size(); ++i) {
    float softplus = x[i] > 20.0f ? x[i] : std::log1p(std::exp(x[i]));
    EXPECT_EQ(r[i], softplus * x[i]) << i;
  }
}

TEST_F(JitApiKernels, ShardedModuleRunsTheKernelPerShard) {
  xlac::CompileOptions options;
  options.custom_call_sources = {Write("k.cc", kKernels)};
  options.exact = true;
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(R"(
HloModule m, num_partitions=2
ENTRY e {
  x = f32[4,6] parameter(0), sharding={devices=[2,1]0,1}
  s = f32[4,6] custom-call(x), custom_call_target="api.softplus"
  ROOT r = f32[4,6] add(s, x), sharding={devices=[2,1]0,1}
})",
                                                                                    options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_TRUE((*exe)->partitioned());
  // An elementwise kernel needs no collective: the report lists none.
  EXPECT_EQ((*exe)->spmd_report().find("all-gather"), std::string::npos) << (*exe)->spmd_report();
  std::vector<float> x(24), r(24);
  for (int i = 0; i < 24; ++i) x[i] = static_cast<float>(i - 12) * 0.75f;
  ASSERT_TRUE((*exe)->Run({x.data()}, {r.data()}).ok());
  for (int i = 0; i < 24; ++i) EXPECT_EQ(r[i], std::log1p(std::exp(x[i])) + x[i]) << i;
}

TEST_F(JitApiKernels, ClangErrorsAndMismatchesAreLocatedInvalidArguments) {
  xlac::CompileOptions options;
  options.custom_call_sources = {Write("bad.cc",
                                       "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\")\n"
                                       "float F(float x) { return x +; }\n")};
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe =
      xlac::Executable::Compile("HloModule m\nENTRY e {\n  ROOT x = f32[2] parameter(0)\n}\n", options);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(exe.status().message()).find("bad.cc:3:30: error: expected expression"), std::string::npos)
      << exe.status();

  options.custom_call_sources = {Write("k.cc", kKernels)};
  options.source_name = "model.hlo";
  exe = xlac::Executable::Compile(R"(HloModule m
ENTRY e {
  x = f64[2] parameter(0)
  ROOT s = f64[2] custom-call(x), custom_call_target="api.softplus"
})",
                                  options);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kInvalidArgument);
  const std::string message(exe.status().message());
  EXPECT_NE(message.find("model.hlo:4:8: error: operand 0 of custom call s is f64[2], but the kernel Softplus for "
                         "\"api.softplus\" takes f32 there (f32) -> f32"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("k.cc:4:7: note: the kernel Softplus for \"api.softplus\" is declared here"),
            std::string::npos)
      << message;
}

}  // namespace
