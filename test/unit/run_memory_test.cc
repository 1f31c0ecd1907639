// xla-run's memory estimate (tools/lib/run_memory.h): --memory-limit sizes, the host's available memory from
// /proc and the cgroup files, the interpreter's peak, the estimate's parts and the refusal through RunModule.
#include "tools/lib/run_memory.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "codegen/jit.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "passes/f64_reference.h"
#include "tools/lib/run_driver.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

TEST(ParseMemorySizeTest, SuffixesArePowersOf1024) {
  EXPECT_EQ(*ParseMemorySize("512"), 512);
  EXPECT_EQ(*ParseMemorySize("64K"), 64 * 1024);
  EXPECT_EQ(*ParseMemorySize("1M"), 1 << 20);
  EXPECT_EQ(*ParseMemorySize("1.5G"), int64_t{3} << 29);
  EXPECT_EQ(*ParseMemorySize("20GiB"), int64_t{20} << 30);
  EXPECT_EQ(*ParseMemorySize("2t"), int64_t{2} << 40);
  EXPECT_EQ(*ParseMemorySize("none"), kNoMemoryLimit);
  for (std::string_view bad : {"", "G", "-1", "0", "1X", "1.2.3M", "12 G", "1e3", "99999999999T"}) {
    EXPECT_FALSE(ParseMemorySize(bad).ok()) << bad;
  }
  EXPECT_NE(ParseMemorySize("1X").status().message().find("--memory-limit"), std::string_view::npos);
}

class HostMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("xla_run_memory_test_" + std::to_string(::getpid()) + "_" +
                                         ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc" / "self");
    fs::create_directories(root_ / "cgroup");
  }
  void TearDown() override { fs::remove_all(root_); }
  void Write(const fs::path& path, const std::string& text) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  int64_t Available() { return HostAvailableMemory((root_ / "proc").string(), (root_ / "cgroup").string()); }

  fs::path root_;
};

TEST_F(HostMemoryTest, MemAvailableWithoutACgroupLimit) {
  Write(root_ / "proc/meminfo", "MemTotal:       2000 kB\nMemFree:         100 kB\nMemAvailable:    1000 kB\n");
  EXPECT_EQ(Available(), 1000 * 1024);
  Write(root_ / "proc/self/cgroup", "0::/\n");
  Write(root_ / "cgroup/memory.max", "max\n");
  EXPECT_EQ(Available(), 1000 * 1024);
}

TEST_F(HostMemoryTest, CgroupV2LimitLessUsageThatIsNotPageCache) {
  Write(root_ / "proc/meminfo", "MemAvailable:    1000 kB\n");
  Write(root_ / "proc/self/cgroup", "0::/job\n");
  Write(root_ / "cgroup/job/memory.max", "500000\n");
  Write(root_ / "cgroup/job/memory.current", "200000\n");
  Write(root_ / "cgroup/job/memory.stat", "anon 150000\nfile 50000\ninactive_file 40000\n");
  EXPECT_EQ(Available(), 500000 - 200000 + 40000);
}

TEST_F(HostMemoryTest, CgroupV1MemoryControllerAndTheMountRootFallback) {
  Write(root_ / "proc/meminfo", "MemAvailable:    1000 kB\n");
  Write(root_ / "proc/self/cgroup", "5:cpu,cpuacct:/x\n4:memory:/outside/namespace\n");
  Write(root_ / "cgroup/memory/memory.limit_in_bytes", "300000\n");
  Write(root_ / "cgroup/memory/memory.usage_in_bytes", "100000\n");
  Write(root_ / "cgroup/memory/memory.stat", "cache 10\ntotal_inactive_file 1000\n");
  EXPECT_EQ(Available(), 300000 - 100000 + 1000);
  // v1's "no limit" is a page-rounded INT64_MAX.
  Write(root_ / "cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  EXPECT_EQ(Available(), 1000 * 1024);
}

TEST_F(HostMemoryTest, UnknownWithoutAnyFile) { EXPECT_EQ(Available(), -1); }

TEST(InterpreterPeakBytesTest, ReplaysFreeingAfterLastUse) {
  // f32[1024] is 4 KiB. At c, a (still used by c) and b are held while c is made: 3 values. d then frees a and b.
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] negate(p)
  b = f32[1024] exponential(a)
  c = f32[1024] add(a, b)
  d = f32[1024] negate(c)
  ROOT r = f32[1024] negate(d)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*module), 3 * 4096);
}

TEST(InterpreterPeakBytesTest, CopiesAndReshapesShareTheirOperandsBytes) {
  // c and r view a's bytes (Literal::ViewAs), which stay until the last view's use: a and s at once, not a, c
  // and s.
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  p = f32[1024] parameter(0)
  a = f32[1024] negate(p)
  c = f32[1024] copy(a)
  r = f32[32,32] reshape(c)
  ra = f32[32,32] reshape(a)
  ROOT s = f32[32,32] add(ra, r)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*module), 2 * 4096);
}

TEST(InterpreterPeakBytesTest, AddsCalleePeaksAndDotScratch) {
  // The while's state (4 KiB) plus its body's peak (two 4 KiB values at once) beside the held p2.
  std::unique_ptr<Module> module = Parse(R"(HloModule m
cond {
  s = f32[1024] parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = f32[1024] parameter(0)
  n = f32[1024] negate(s)
  ROOT e = f32[1024] exponential(n)
}
ENTRY e {
  p = f32[1024] parameter(0)
  p2 = f32[1024] negate(p)
  w = f32[1024] while(p2), condition=cond, body=body
  ROOT m = f32[32,32] reshape(w)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*module), 4096 /*p2*/ + 4096 /*w*/ + 2 * 4096 /*body*/);

  std::unique_ptr<Module> dot = Parse(R"(HloModule m
ENTRY e {
  a = f32[32,32] parameter(0)
  b = f32[32,32] parameter(1)
  ROOT d = f32[32,32] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(dot, nullptr);
  // The f32 dot's 4 KiB result, its lhs gathered into the GEMM's order (4 KiB) and the GEMM's packed rhs (32
  // columns: two panels of 16, no padding; 4 KiB).
  EXPECT_EQ(InterpreterPeakBytes(*dot), 4096 + 4096 + 4096);
}

TEST(InterpreterPeakBytesTest, DotScratchFollowsTheKernelsCopies) {
  // An lm_head in bf16: the rhs (64 MiB) is read in place and packed 16 MiB at a time (64 panels of 16 columns x
  // 4096); beside the 128 KiB bf16 result, the lhs as f32 (128 KiB) and the f32 result vector (256 KiB).
  std::unique_ptr<Module> lm_head = Parse(R"(HloModule m
ENTRY e {
  x = bf16[8,4096] parameter(0)
  w = bf16[4096,8192] parameter(1)
  ROOT d = bf16[8,8192] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(lm_head, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*lm_head), 131072 + 131072 + 262144 + (16 << 20));

  // An lhs out of order is permuted as bf16 (64 KiB) before it is widened (128 KiB); the result's f32 vector
  // (4 KiB) and the packing buffer (a [32 x 4096] rhs: 2 panels, 512 KiB) come after the permuted copy is freed.
  std::unique_ptr<Module> transposed = Parse(R"(HloModule m
ENTRY e {
  x = bf16[4096,8] parameter(0)
  w = bf16[32,4096] parameter(1)
  ROOT d = bf16[8,32] dot(x, w), lhs_contracting_dims={0}, rhs_contracting_dims={1}
}
)");
  ASSERT_NE(transposed, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*transposed), 512 + 131072 + std::max(65536, 1024 + 524288));

  // An f32 dot of bf16 operands: the lhs converted to f32 (128 KiB) and gathered (128 KiB), the bf16 rhs read in
  // place, packed as above (16 MiB).
  std::unique_ptr<Module> widening = Parse(R"(HloModule m
ENTRY e {
  x = bf16[8,4096] parameter(0)
  w = bf16[4096,8192] parameter(1)
  ROOT d = f32[8,8192] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(widening, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*widening), 262144 + 131072 + 131072 + (16 << 20));

  // Integers: both operands and the result's vector in 64 bits, after the larger of an operand's storage and that
  // vector.
  std::unique_ptr<Module> ints = Parse(R"(HloModule m
ENTRY e {
  x = s32[16,64] parameter(0)
  w = s32[64,32] parameter(1)
  ROOT d = s32[16,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
)");
  ASSERT_NE(ints, nullptr);
  EXPECT_EQ(InterpreterPeakBytes(*ints), 2048 + (1024 + 2048) * 8 + 8192);
}

constexpr char kSharded[] = R"(HloModule s, num_partitions=4
ENTRY e {
  x = f32[64,256] parameter(0), sharding={devices=[4,1]<=[4]}
  w = f32[256,256] parameter(1), sharding={replicated}
  d = f32[64,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={devices=[4,1]<=[4]}
  ROOT t = f32[64,256] tanh(d), sharding={devices=[4,1]<=[4]}
}
)";

TEST(EstimateRunMemoryTest, PartsOfTheLargerPhase) {
  std::unique_ptr<Module> module = Parse(kSharded);
  ASSERT_NE(module, nullptr);
  RunMemoryPlan plan;
  plan.module = module.get();
  plan.run_module = module.get();
  plan.devices = plan.local_devices = 1;
  // The JIT alone: parameters, constants, results, then the per-device buffers; the bound stands in for the buffer
  // assignment while it fits, the assignment (never above the bound) is computed when it does not.
  RunMemoryEstimate bounded = EstimateRunMemory(plan, std::numeric_limits<int64_t>::max());
  EXPECT_TRUE(bounded.buffers_bounded);
  RunMemoryEstimate exact = EstimateRunMemory(plan, 0);
  EXPECT_FALSE(exact.buffers_bounded);
  EXPECT_LE(exact.total, bounded.total);
  ASSERT_EQ(exact.parts.size(), 4u);
  EXPECT_EQ(exact.parts[0].what, "parameters");
  EXPECT_EQ(exact.parts[0].bytes, 64 * 256 * 4 + 256 * 256 * 4);
  EXPECT_EQ(exact.parts[2].what, "results");
  EXPECT_EQ(exact.parts[2].bytes, 64 * 256 * 4);
  EXPECT_EQ(exact.parts[3].what, "per-device buffers");
  // One device reads its parameters and writes its result in place: at most the dot's value is left.
  EXPECT_LE(exact.parts[3].bytes, 64 * 256 * 4);
  int64_t sum = 0;
  for (const RunMemoryEstimate::Part& part : exact.parts) sum += part.count * part.bytes;
  EXPECT_EQ(exact.total, sum);

  // Two devices read the (row-major, not donated) parameters in place too, but copy each result out of its own
  // buffer.
  plan.devices = plan.local_devices = 2;
  RunMemoryEstimate two = EstimateRunMemory(plan, 0);
  EXPECT_EQ(two.parts[3].count, 2);
  EXPECT_GE(two.parts[3].bytes, 64 * 256 * 4);
  EXPECT_LE(two.parts[3].bytes, exact.parts[3].bytes + 64 * 256 * 4 + 256);
  // A donated parameter is written: every device has its own copy.
  module->mutable_config().input_output_alias.push_back({{}, 0, {}});
  RunMemoryEstimate donated = EstimateRunMemory(plan, 0);
  EXPECT_FALSE(donated.buffers_bounded);
  EXPECT_GT(donated.parts[3].bytes, two.parts[3].bytes) << donated.ToString() << " vs " << two.ToString();
  module->mutable_config().input_output_alias.clear();
  plan.devices = plan.local_devices = 1;

  // The interpreter backend: its peak replaces the JIT's buffers; with --check-against the larger phase counts.
  plan.jit = false;
  RunMemoryEstimate interpreter = EstimateRunMemory(plan, 0);
  EXPECT_EQ(interpreter.parts.back().what, "interpreter");
  EXPECT_EQ(interpreter.parts.back().bytes, InterpreterPeakBytes(*module));
  plan.jit = true;
  plan.check_against = true;
  // The reference runs beside the compiled program's results, on the arguments the run built (no copy).
  EXPECT_EQ(EstimateRunMemory(plan, 0).total, std::max(exact.total, interpreter.total + 64 * 256 * 4));
  // The default mode's check then runs the f64 reference beside the interpreter's result: the module promoted to f64
  // (its values twice the f32 ones, its arguments widened by converts) replaces the interpreter's peak.
  plan.reference = ReferenceChoice::kF64;
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*module);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  const int64_t reference64_peak = InterpreterPeakBytes(**promoted);
  EXPECT_GE(reference64_peak, 2 * InterpreterPeakBytes(*module));
  RunMemoryEstimate with_reference = EstimateRunMemory(plan, 0);
  EXPECT_EQ(with_reference.parts.back().what, "f64 reference");
  EXPECT_EQ(with_reference.parts.back().bytes, reference64_peak);
  // parameters, constants, the JIT's results, the interpreter's results, the reference's constants, its peak
  EXPECT_EQ(with_reference.total,
            interpreter.total - InterpreterPeakBytes(*module) + 64 * 256 * 4 + 64 * 256 * 4 + reference64_peak);
  plan.reference = ReferenceChoice::kNone;
  // CheckRunMemory asks for it exactly when xla-run computes it: the default mode, no explicit tolerance.
  RunOptions options;
  options.check_against = "interpreter";
  options.num_partitions = 1;  // the plan's one device
  options.memory_limit = with_reference.total - 1;
  EXPECT_FALSE(CheckRunMemory(options, *module, module.get(), false, 1).ok());
  // xla-run's call: the run goes ahead without the reference (an f32 output has no f32 reference: the fixed rule
  // compares).
  ReferenceChoice reference = ReferenceChoice::kF64;
  EXPECT_TRUE(CheckRunMemory(options, *module, module.get(), false, 1, &reference).ok());
  EXPECT_EQ(reference, ReferenceChoice::kNone);
  options.memory_limit = with_reference.total;
  EXPECT_TRUE(CheckRunMemory(options, *module, module.get(), false, 1, &reference).ok());
  EXPECT_EQ(reference, ReferenceChoice::kF64);
  options.memory_limit = with_reference.total - 1;
  options.fixed_tolerance = true;
  EXPECT_TRUE(CheckRunMemory(options, *module, module.get(), false, 1).ok());

  // Before partitioning only what any run holds: arguments, constants, results.
  plan.run_module = nullptr;
  RunMemoryEstimate early = EstimateRunMemory(plan, 0);
  EXPECT_EQ(early.total, 64 * 256 * 4 + 256 * 256 * 4 + 64 * 256 * 4);
}

// kSharded partitioned over 4 devices, as the partitioner would give it.
constexpr char kShardedLocal[] = R"(HloModule s, num_partitions=4
ENTRY e {
  x = f32[16,256] parameter(0)
  w = f32[256,256] parameter(1)
  d = f32[16,256] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = f32[16,256] tanh(d)
}
)";

TEST(EstimateRunMemoryTest, PartitionedRunsCountEveryDevicesShards) {
  std::unique_ptr<Module> module = Parse(kSharded);
  std::unique_ptr<Module> local = Parse(kShardedLocal);
  ASSERT_NE(module, nullptr);
  ASSERT_NE(local, nullptr);
  RunOptions options;
  options.memory_limit = int64_t{1} << 30;
  EXPECT_TRUE(CheckRunMemory(options, *module, module.get(), false, 1).ok());
  // Every device gets a 16 KiB shard of x; the replicated w's shards share its bytes (ShardLiteral), and every
  // device reads its parameters in place, so its buffers hold no parameter.
  RunMemoryPlan plan;
  plan.module = module.get();
  plan.run_module = local.get();
  plan.partitioned = true;
  plan.devices = plan.local_devices = 4;
  RunMemoryEstimate estimate = EstimateRunMemory(plan, 0);
  ASSERT_GE(estimate.parts.size(), 2u);
  EXPECT_EQ(estimate.parts[1].what, "parameter shards");
  EXPECT_EQ(estimate.parts[1].count, 4);
  EXPECT_EQ(estimate.parts[1].bytes, 16 * 256 * 4);
  EXPECT_EQ(estimate.ToString().find("parameters 320 KiB, parameter shards 4 x 16 KiB"), 0u) << estimate.ToString();
  ASSERT_EQ(estimate.parts.back().what, "per-device buffers");
  EXPECT_LE(estimate.parts.back().bytes, 2 * 16 * 256 * 4 + 256);  // the dot's value and the result
  // Under MPI each process allocates only its own devices' buffers.
  plan.local_devices = 2;
  EXPECT_EQ(EstimateRunMemory(plan, 0).parts.back().count, 2);
  plan.local_devices = 4;
  // --check-against: after the JIT's run the shards are freed, so the reference's phase (the whole module on one
  // partition) counts none; a reference that runs the partitioned program on every device keeps them.
  plan.jit = false;
  plan.check_against = false;
  RunMemoryEstimate interpreter_backend = EstimateRunMemory(plan, 0);
  EXPECT_NE(interpreter_backend.ToString().find("parameter shards 4 x 16 KiB"), std::string::npos);
  plan.jit = true;
  plan.check_against = true;
  plan.local_devices = 4;
  // The whole module's dot (its 256 KiB w gathered as f32) makes the reference's the larger phase.
  RunMemoryEstimate checked = EstimateRunMemory(plan, 0);
  ASSERT_EQ(checked.parts.back().what, "interpreter") << checked.ToString();
  EXPECT_EQ(checked.ToString().find("parameter shards"), std::string::npos) << checked.ToString();
  // The devices' results (4 x 16 KiB) are freed once the global result (64 KiB) is assembled from them, unless they
  // are the outputs (--per-device).
  ASSERT_EQ(checked.parts[checked.parts.size() - 2].what, "results") << checked.ToString();
  EXPECT_EQ(checked.parts[checked.parts.size() - 2].bytes, 64 * 256 * 4);
  plan.per_device_outputs = true;
  RunMemoryEstimate kept = EstimateRunMemory(plan, 0);
  ASSERT_EQ(kept.parts[kept.parts.size() - 2].what, "results") << kept.ToString();
  EXPECT_EQ(kept.parts[kept.parts.size() - 2].bytes, 4 * 16 * 256 * 4 + 64 * 256 * 4);
  EXPECT_EQ(kept.total, checked.total + 4 * 16 * 256 * 4);
  plan.per_device_outputs = false;
  plan.per_device_reference = true;
  RunMemoryEstimate per_device = EstimateRunMemory(plan, 0);
  EXPECT_NE(per_device.ToString().find("parameter shards 4 x 16 KiB"), std::string::npos) << per_device.ToString();
}

constexpr char kShardMap[] = R"(HloModule m, num_partitions=4
ENTRY e {
  x = f32[64,256] parameter(0), sharding={devices=[4,1]<=[4]}
  c = f32[64,256] copy(x), sharding={devices=[4,1]<=[4]}
  s = f32[16,256] custom-call(c), custom_call_target="SPMDFullToShardShape", sharding={manual}
  t = f32[16,256] tanh(s), sharding={manual}
  ROOT f = f32[64,256] custom-call(t), custom_call_target="SPMDShardToFullShape", sharding={devices=[4,1]<=[4]}
}
)";

TEST(EstimateRunMemoryTest, ManualRegionsRunTheReferencesOnEveryDevice) {
  std::unique_ptr<Module> shard_map = Parse(kShardMap);
  std::unique_ptr<Module> sharded = Parse(kSharded);
  ASSERT_NE(shard_map, nullptr);
  ASSERT_NE(sharded, nullptr);
  EXPECT_TRUE(HasManualRegions(*shard_map));
  EXPECT_FALSE(HasManualRegions(*sharded));
  // --check-against runs a program with manual regions partitioned, device by device, every device live at once
  // (their collectives meet), and so does the f64 reference: its peak counts once per device. Without manual
  // regions both run the whole module on one partition per replica.
  RunMemoryPlan plan;
  plan.module = shard_map.get();
  plan.run_module = shard_map.get();  // stands in for the partitioned program
  plan.partitioned = true;
  plan.devices = plan.local_devices = 4;
  plan.check_against = true;
  plan.reference = ReferenceChoice::kF64;
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*shard_map);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  const int64_t peak64 = InterpreterPeakBytes(**promoted);
  plan.per_device_reference = true;
  RunMemoryEstimate per_device = EstimateRunMemory(plan, 0);
  ASSERT_EQ(per_device.parts.back().what, "f64 reference") << per_device.ToString();
  EXPECT_EQ(per_device.parts.back().count, 4);
  EXPECT_EQ(per_device.parts.back().bytes, peak64);
  plan.per_device_reference = false;
  RunMemoryEstimate one_partition = EstimateRunMemory(plan, 0);
  EXPECT_LT(one_partition.total, per_device.total);
  if (one_partition.parts.back().what == "f64 reference") EXPECT_EQ(one_partition.parts.back().count, 1);
  // CheckRunMemory sets the plan's flag for a partitioned module with manual regions.
  RunOptions options;
  options.check_against = "interpreter";
  options.num_partitions = 4;
  options.memory_limit = per_device.total - 1;
  EXPECT_FALSE(CheckRunMemory(options, *shard_map, shard_map.get(), true, 1).ok());
  options.memory_limit = per_device.total;
  EXPECT_TRUE(CheckRunMemory(options, *shard_map, shard_map.get(), true, 1).ok());
}

// Which program --check-against's references run for a partitioned run (PerDeviceReference): manual regions always
// the partitioned one; otherwise --reference-program, by default the partitioned one when the comparison is bit for
// bit (exact mode without an allowance), since the unpartitioned module sums sharded dimensions in another order.
TEST(PerDeviceReferenceTest, ExactModeRunsThePartitionedProgramUnlessAskedOtherwise) {
  std::unique_ptr<Module> sharded = Parse(kSharded);
  std::unique_ptr<Module> shard_map = Parse(kShardMap);
  ASSERT_NE(sharded, nullptr);
  ASSERT_NE(shard_map, nullptr);
  RunOptions options;
  options.check_against = "interpreter";
  EXPECT_FALSE(PerDeviceReference(options, *sharded, true));  // the default mode: the unpartitioned module
  EXPECT_TRUE(PerDeviceReference(options, *shard_map, true));
  options.exact = true;
  EXPECT_TRUE(PerDeviceReference(options, *sharded, true));
  EXPECT_FALSE(PerDeviceReference(options, *sharded, false));  // one program: nothing to choose
  // An allowance is for what partitioning reassociates; --max-ulp=0 allows nothing.
  options.tolerance_given = true;
  options.max_ulp = 0;
  EXPECT_TRUE(PerDeviceReference(options, *sharded, true));
  options.max_ulp = 16;
  EXPECT_FALSE(PerDeviceReference(options, *sharded, true));
  options.max_ulp = 0;
  options.atol = 1e-4;
  EXPECT_FALSE(PerDeviceReference(options, *sharded, true));
  options.tolerance_given = false;
  options.atol = 0;
  options.reference_program = ReferenceProgram::kUnpartitioned;
  EXPECT_FALSE(PerDeviceReference(options, *sharded, true));
  EXPECT_TRUE(PerDeviceReference(options, *shard_map, true));  // RunModule reports the conflict
  options.exact = false;
  options.reference_program = ReferenceProgram::kPartitioned;
  EXPECT_TRUE(PerDeviceReference(options, *sharded, true));
  EXPECT_FALSE(PerDeviceReference(options, *sharded, false));
}

// The memory check counts the reference the run will make: in exact mode the partitioned program on every device
// (each device's dot packs the whole 256 KiB w), with --reference-program=unpartitioned the whole module once.
TEST(CheckRunMemoryTest, CountsTheChosenReferenceProgram) {
  std::unique_ptr<Module> module = Parse(kSharded);
  std::unique_ptr<Module> local = Parse(kShardedLocal);
  ASSERT_NE(module, nullptr);
  ASSERT_NE(local, nullptr);
  RunMemoryPlan plan;
  plan.module = module.get();
  plan.run_module = local.get();
  plan.partitioned = true;
  plan.devices = plan.local_devices = 4;
  plan.check_against = true;
  plan.compile.exact = true;
  plan.per_device_reference = true;
  const RunMemoryEstimate per_device = EstimateRunMemory(plan, 0);
  plan.per_device_reference = false;
  const RunMemoryEstimate whole = EstimateRunMemory(plan, 0);
  ASSERT_GT(per_device.total, whole.total) << per_device.ToString() << " vs " << whole.ToString();
  ASSERT_EQ(per_device.parts.back().what, "interpreter") << per_device.ToString();
  EXPECT_EQ(per_device.parts.back().count, 4);
  EXPECT_EQ(per_device.parts.back().bytes, InterpreterPeakBytes(*local));
  RunOptions options;
  options.check_against = "interpreter";
  options.exact = true;
  options.memory_limit = whole.total;
  absl::Status refused = CheckRunMemory(options, *module, local.get(), true, 1);
  EXPECT_TRUE(absl::IsResourceExhausted(refused)) << refused;
  EXPECT_NE(refused.message().find("interpreter 4 x "), std::string_view::npos) << refused;
  options.memory_limit = per_device.total;
  EXPECT_TRUE(CheckRunMemory(options, *module, local.get(), true, 1).ok());
  options.memory_limit = whole.total;
  options.reference_program = ReferenceProgram::kUnpartitioned;
  EXPECT_TRUE(CheckRunMemory(options, *module, local.get(), true, 1).ok());
  // With --input-shards the partitioned program's reference reads the shards alone: no global arguments are built.
  options.memory_limit = 1;
  options.input_shards = "shards";
  refused = CheckRunMemory(options, *module, local.get(), true, 1);
  EXPECT_NE(refused.message().find("(parameters 320 KiB, "), std::string_view::npos) << refused;
  options.reference_program = ReferenceProgram::kAuto;
  refused = CheckRunMemory(options, *module, local.get(), true, 1);
  EXPECT_EQ(refused.message().find("parameters 320 KiB"), std::string_view::npos) << refused;
  EXPECT_NE(refused.message().find("parameter shards 4 x 16 KiB"), std::string_view::npos) << refused;
}

// bf16 values: the interpreter holds m and t (8 KiB each); the f32 reference widens a and b by converts (16 KiB
// each) and holds them, m and t in f32 (48 KiB at the multiply); the f64 reference the same in f64 (96 KiB).
constexpr char kBf16[] = R"(HloModule b
ENTRY e {
  a = bf16[64,64] parameter(0)
  b = bf16[64,64] parameter(1)
  m = bf16[64,64] multiply(a, b)
  ROOT t = bf16[64,64] tanh(m)
}
)";

TEST(CheckRunMemoryTest, ChoosesTheWidestReferenceThatFits) {
  std::unique_ptr<Module> module = Parse(kBf16);
  ASSERT_NE(module, nullptr);
  constexpr int64_t kKiB = 1024;
  // Parameters 16 KiB and the JIT's 8 KiB result in every phase after the JIT's; then the interpreter's 16 KiB
  // peak, or its 8 KiB result beside the f32 reference's 48 KiB or the f64 reference's 96 KiB.
  const int64_t interpreter = (16 + 8 + 16) * kKiB;
  const int64_t with_f32 = (16 + 8 + 8 + 48) * kKiB;
  const int64_t with_f64 = (16 + 8 + 8 + 96) * kKiB;
  RunOptions options;
  options.check_against = "interpreter";
  auto choose = [&](int64_t limit) -> std::optional<ReferenceChoice> {
    options.memory_limit = limit;
    ReferenceChoice reference = ReferenceChoice::kF64;
    absl::Status fits = CheckRunMemory(options, *module, module.get(), false, 1, &reference);
    if (!fits.ok()) {
      EXPECT_TRUE(absl::IsResourceExhausted(fits)) << fits;
      return std::nullopt;
    }
    return reference;
  };
  EXPECT_EQ(choose(with_f64), ReferenceChoice::kF64);
  EXPECT_EQ(choose(with_f64 - 1), ReferenceChoice::kF32);
  EXPECT_EQ(choose(with_f32), ReferenceChoice::kF32);
  EXPECT_EQ(choose(with_f32 - 1), ReferenceChoice::kNone);
  EXPECT_EQ(choose(interpreter), ReferenceChoice::kNone);
  EXPECT_EQ(choose(interpreter - 1), std::nullopt);
  // Refused, the run is named without a reference: that is what does not fit.
  options.memory_limit = interpreter - 1;
  ReferenceChoice unused = ReferenceChoice::kF64;
  absl::Status refused = CheckRunMemory(options, *module, module.get(), false, 1, &unused);
  EXPECT_NE(refused.message().find("this run needs 40 KiB (parameters 16 KiB, results 8 KiB, interpreter 16 KiB)"),
            std::string_view::npos)
      << refused;
  // Without the out-parameter the first choice must fit.
  options.memory_limit = with_f64 - 1;
  refused = CheckRunMemory(options, *module, module.get(), false, 1);
  EXPECT_NE(refused.message().find("this run needs 128 KiB ("), std::string_view::npos) << refused;
  EXPECT_NE(refused.message().find("f64 reference 96 KiB"), std::string_view::npos) << refused;
  // --reference-type=f32 plans the f32 reference alone.
  options.reference_f32 = true;
  EXPECT_EQ(choose(with_f32), ReferenceChoice::kF32);
  EXPECT_EQ(choose(with_f32 - 1), ReferenceChoice::kNone);
  options.memory_limit = with_f32 - 1;
  refused = CheckRunMemory(options, *module, module.get(), false, 1);
  EXPECT_NE(refused.message().find("f32 reference 48 KiB"), std::string_view::npos) << refused;
  options.reference_f32 = false;
  // No reference to choose: --tolerance=fixed, or no limit (the first choice stands).
  options.fixed_tolerance = true;
  EXPECT_EQ(choose(interpreter), ReferenceChoice::kNone);
  options.fixed_tolerance = false;
  EXPECT_EQ(choose(kNoMemoryLimit), ReferenceChoice::kF64);
  // f32 outputs gain nothing from an f32 reference: without room for the f64 one, none.
  std::unique_ptr<Module> f32 = Parse(kSharded);
  ASSERT_NE(f32, nullptr);
  RunMemoryPlan plan;
  plan.module = plan.run_module = f32.get();
  plan.check_against = true;
  plan.reference = ReferenceChoice::kF64;
  options.num_partitions = 1;
  options.memory_limit = EstimateRunMemory(plan, 0).total - 1;
  ReferenceChoice reference = ReferenceChoice::kF64;
  ASSERT_TRUE(CheckRunMemory(options, *f32, f32.get(), false, 1, &reference).ok());
  EXPECT_EQ(reference, ReferenceChoice::kNone);
}

TEST(RunMemoryErrorTest, NamesTheLimitAndHowToOverrideIt) {
  RunMemoryEstimate estimate;
  estimate.parts = {{"parameters", 1, int64_t{40} << 30}, {"per-device buffers", 8, int64_t{5} << 29}};
  estimate.total = (int64_t{40} << 30) + 8 * (int64_t{5} << 29);
  EXPECT_EQ(RunMemoryError(estimate, int64_t{23} << 30, false),
            "this run needs 60 GiB (parameters 40 GiB, per-device buffers 8 x 2.5 GiB); this machine has 23 GiB "
            "available, 20.7 GiB of it for what the estimate counts (--memory-limit=SIZE or --memory-limit=none "
            "overrides the check)");
  EXPECT_NE(RunMemoryError(estimate, 1 << 20, true).find("; --memory-limit is 1 MiB ("), std::string::npos);
}

TEST(CheckRunMemoryTest, RunModuleRefusesBeforeRunningAndNoneSkipsTheCheck) {
  const std::string text(kSharded);
  RunOptions options;
  options.memory_limit = 64 << 10;
  std::ostringstream out, err;
  EXPECT_EQ(RunModule(options, "s.hlo", text, out, err), 1);
  EXPECT_EQ(out.str(), "");
  EXPECT_EQ(err.str().find("s.hlo: error: this run needs "), 0u) << err.str();
  EXPECT_NE(err.str().find("--memory-limit is 64 KiB"), std::string::npos) << err.str();
  // The host's memory is the default limit; none, or a limit that fits, runs.
  options.memory_limit.reset();
  options.host_available_memory = 64 << 10;
  std::ostringstream out2, err2;
  EXPECT_EQ(RunModule(options, "s.hlo", text, out2, err2), 1);
  EXPECT_NE(err2.str().find("this machine has 64 KiB available, 57.6 KiB of it"), std::string::npos) << err2.str();
  // 90 % of the host's memory: a run that needs more than that but less than all of it is refused too.
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text);
  ASSERT_TRUE(parsed.ok());
  options.host_available_memory = int64_t{1} << 30;
  options.memory_limit.reset();
  RunMemoryPlan plan;
  plan.module = parsed->get();
  plan.run_module = parsed->get();
  plan.devices = plan.local_devices = 4;  // as CheckRunMemory plans the module's 4 partitions
  const int64_t need = EstimateRunMemory(plan, 0).total;
  options.memory_limit = need;
  ASSERT_TRUE(CheckRunMemory(options, **parsed, parsed->get(), false, 1).ok());
  options.memory_limit.reset();
  options.host_available_memory = need + need / 20;  // 5 % more than needed
  EXPECT_FALSE(CheckRunMemory(options, **parsed, parsed->get(), false, 1).ok());
  options.host_available_memory = need + need / 5;
  EXPECT_TRUE(CheckRunMemory(options, **parsed, parsed->get(), false, 1).ok());
  for (int64_t limit : {kNoMemoryLimit, int64_t{1} << 30}) {
    options.memory_limit = limit;
    options.print = false;
    std::ostringstream out3, err3;
    EXPECT_EQ(RunModule(options, "s.hlo", text, out3, err3), 0) << err3.str();
  }
}

TEST(JitMemoryLimitTest, TheJitChecksItsBuffersAgainstTheLimitItIsGiven) {
  // xla-run hands the JIT the limit it checked the whole run against; -1 (--memory-limit=none) checks nothing.
  std::unique_ptr<Module> module = Parse(kSharded);
  ASSERT_NE(module, nullptr);
  codegen::JitOptions options;
  options.num_partitions = 1;
  options.memory_limit = 1024;
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> small = codegen::JitExecutable::Compile(*module, options);
  ASSERT_FALSE(small.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(small.status())) << small.status();
  EXPECT_NE(small.status().message().find("1 device x"), std::string_view::npos) << small.status();
  for (int64_t limit : {int64_t{-1}, int64_t{1} << 30}) {
    options.memory_limit = limit;
    EXPECT_TRUE(codegen::JitExecutable::Compile(*module, options).ok()) << limit;
  }
}

}  // namespace
}  // namespace xlac
