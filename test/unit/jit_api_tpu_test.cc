// The public JIT API with a TPU target (CompileOptions::tpu / tpu_topology): the slice sets the devices, TPU dot
// numerics apply, and a program too large for one core's HBM does not compile.
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "xlac/jit.h"

namespace {

// x is sharded over 8 devices by rows; each core negates its rows.
constexpr char kSharded[] = R"(
HloModule m, num_partitions=8
ENTRY e {
  x = f32[16,128] parameter(0), sharding={devices=[8,1]<=[8]}
  ROOT n = f32[16,128] negate(x), sharding={devices=[8,1]<=[8]}
})";

TEST(JitApiTpu, TopologySetsTheDevices) {
  xlac::CompileOptions options;
  options.tpu = "v6e";
  options.tpu_topology = "2x4";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(kSharded, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->num_devices(), 8);
  std::vector<float> x(16 * 128), y(16 * 128);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  ASSERT_TRUE((*exe)->Run({x.data()}, {y.data()}).ok());
  EXPECT_EQ(y[5], -5.0f);
  EXPECT_EQ(y[16 * 128 - 1], -static_cast<float>(16 * 128 - 1));
  // A slice of another size than the module's shardings is an error, as is an unknown version or shape.
  options.tpu_topology = "4x4";
  EXPECT_FALSE(xlac::Executable::Compile(kSharded, options).ok());
  options.tpu_topology = "3x3";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> bad = xlac::Executable::Compile(kSharded, options);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(std::string(bad.status().message()).find("allowed: 1x1, 2x2, 2x4"), std::string::npos) << bad.status();
  options.tpu = "v9";
  options.tpu_topology = "";
  EXPECT_FALSE(xlac::Executable::Compile(kSharded, options).ok());
}

TEST(JitApiTpu, DotNumericsAreTheTpus) {
  // 1.0009765625 rounds to 1 in bf16: a DEFAULT-precision dot on a TPU gives 1, not 1.0009765625.
  constexpr char kDot[] = R"(
HloModule m
ENTRY e {
  a = f32[1,1] parameter(0)
  b = f32[1,1] parameter(1)
  ROOT d = f32[1,1] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  xlac::CompileOptions options;
  options.tpu = "v5e";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(kDot, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  float a = 1.0009765625f, b = 1.0f, d = 0;
  ASSERT_TRUE((*exe)->Run({&a, &b}, {&d}).ok());
  EXPECT_EQ(d, 1.0f);
}

TEST(JitApiTpu, OverTheHbmLimitDoesNotCompile) {
  // f32[33554432,1] pads its minor dimension to 128 lanes: 16 GiB for 128 MiB of data; with its negation, 32 GiB.
  constexpr char kPadded[] = R"(
HloModule m
ENTRY e {
  p = f32[33554432,1] parameter(0)
  ROOT n = f32[33554432,1] negate(p)
})";
  xlac::CompileOptions options;
  options.tpu = "v5e";
  absl::StatusOr<std::unique_ptr<xlac::Executable>> exe = xlac::Executable::Compile(kPadded, options);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(std::string(exe.status().message()).rfind("needs 32 GiB of HBM per core, v5e has 16 GiB", 0), 0u)
      << exe.status();
}

}  // namespace
