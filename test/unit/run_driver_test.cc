// The xla-run driver in-process (tools/lib/run_driver.h): argument handling, inputs, outputs, checks, exit codes.
#include "tools/lib/run_driver.h"

#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "codegen/jit.h"
#include "frontend/hlo/parser.h"
#include "frontend/module_input.h"
#include "gtest/gtest.h"
#include "runtime/harness/npy.h"
#include "runtime/interpreter/interpreter.h"
#include "tools/lib/run_compare.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;

class RunDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("xla_run_test_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& contents) {
    fs::path path = dir_ / name;
    std::ofstream(path, std::ios::binary) << contents;
    return path.string();
  }

  int Run(std::vector<std::string> args) {
    std::vector<std::string_view> views(args.begin(), args.end());
    std::ostringstream out, err;
    int rc = RunMain(views, out, err);
    out_ = out.str();
    err_ = err.str();
    return rc;
  }

  fs::path dir_;
  std::string out_, err_;
};

constexpr char kAdd[] = R"(HloModule add
ENTRY e {
  x = f32[2,2] parameter(0)
  y = f32[2,2] parameter(1)
  s = f32[2,2] add(x, y)
  c = s32[] constant(7)
  ROOT t = (f32[2,2], s32[]) tuple(s, c)
}
)";

std::string F32Npy(std::vector<int64_t> dims, const std::vector<float>& values) {
  Literal lit(Shape::Array(PrimitiveType::kF32, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.Set<float>(static_cast<int64_t>(i), values[i]);
  return *harness::LiteralToNpy(lit);
}

TEST_F(RunDriverTest, PrintsTupleElementsSeparately) {
  std::string file = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", F32Npy({2, 2}, {1, 2, 3, 4}));
  std::string b = Write("b.npy", F32Npy({2, 2}, {10, 20, 30, 40}));
  ASSERT_EQ(Run({file, "--input=" + a, "--input", b}), 0) << err_;
  EXPECT_EQ(out_, "result_0 = f32[2,2]{1,0} { { 11, 22 }, { 33, 44 } }\nresult_1 = s32[] 7\n");
  EXPECT_EQ(err_, "");
}

TEST_F(RunDriverTest, SeededInputsAreDeterministic) {
  std::string file = Write("add.hlo", kAdd);
  ASSERT_EQ(Run({file}), 0) << err_;
  std::string first = out_;
  ASSERT_EQ(Run({file, "--seed=42"}), 0);
  EXPECT_EQ(out_, first);  // 42 is the default
  ASSERT_EQ(Run({file, "--seed=43"}), 0);
  EXPECT_NE(out_, first);
}

// The documented seeded values (docs/cli.md, xla-run step 3): element i (in memory order) of f32/f64 parameter
// `index` comes from h = H(H(i) ^ s32), H Wellons' lowbias32, s32 the two halves of s = splitmix64(seed, index)
// xor-ed; f32 is (h >> 8) * 2^-23 - 1, f64 (h >> 1) * 2^-30 - 1. The vectorized loop must give exactly these, for
// any length (vector remainders) and layout; other types keep interp::MakeRandomLiteral with seed s.
TEST(SeededParameterValueTest, F32AndF64AreTheDocumentedValues) {
  auto h32 = [](uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    return x ^ (x >> 16);
  };
  for (int64_t index : {0, 5}) {
    for (int64_t n : {1, 7, 33, 1000}) {
      uint64_t z = 42 + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(index + 1);
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      const uint64_t s = z ^ (z >> 31);
      const uint32_t s32 = static_cast<uint32_t>(s ^ (s >> 32));
      Shape f32 = Shape::Array(PrimitiveType::kF32, {n, 1});
      f32.layout = Layout::Default(2);
      std::swap(f32.layout->minor_to_major[0], f32.layout->minor_to_major[1]);  // {0,1}: values in memory order
      Literal a = SeededParameterValue(f32, 42, index);
      Literal b = SeededParameterValue(Shape::Array(PrimitiveType::kF64, {n}), 42, index);
      Literal c = SeededParameterValue(Shape::Array(PrimitiveType::kS32, {n}), 42, index);
      EXPECT_TRUE(c == interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kS32, {n}), s));
      for (int64_t i = 0; i < n; ++i) {
        const uint32_t h = h32(h32(static_cast<uint32_t>(i)) ^ s32);
        float got_f32;
        double got_f64;
        std::memcpy(&got_f32, a.raw_data() + 4 * i, 4);
        std::memcpy(&got_f64, b.raw_data() + 8 * i, 8);
        ASSERT_EQ(got_f32, static_cast<float>(h >> 8) * 0x1p-23f - 1.0f) << "n=" << n << " i=" << i;
        ASSERT_EQ(got_f64, static_cast<double>(h >> 1) * 0x1p-30 - 1.0) << "n=" << n << " i=" << i;
        ASSERT_GE(got_f32, -1.0f);
        ASSERT_LT(got_f32, 1.0f);
      }
    }
  }
  // A tuple's leaves are seeded as MakeRandomLiteral seeds them (element j: SplitMix64(s + j)), so its non-float
  // leaves keep MakeRandomLiteral's values and its float leaves follow the formula above with that seed.
  const Shape s32_leaf = Shape::Array(PrimitiveType::kS32, {5});
  const Shape tuple = Shape::Tuple({Shape::Array(PrimitiveType::kF32, {3}), s32_leaf});
  Literal t = SeededParameterValue(tuple, 7, 2);
  Literal reference = interp::MakeRandomLiteral(tuple, [] {
    uint64_t z = 7 + 0x9E3779B97F4A7C15ull * 3;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }());
  ASSERT_TRUE(t.is_tuple());
  EXPECT_TRUE(t.tuple_elements()[1] == reference.tuple_elements()[1]);
  EXPECT_FALSE(t.tuple_elements()[0] == reference.tuple_elements()[0]);
}

TEST_F(RunDriverTest, InputErrors) {
  std::string file = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", F32Npy({2, 2}, {1, 2, 3, 4}));
  std::string wrong = Write("w.npy", F32Npy({4}, {1, 2, 3, 4}));
  EXPECT_EQ(Run({file, "--input=" + a}), 1);
  EXPECT_EQ(err_, "xla-run: error: the entry computation e takes 2 parameters, but 1 --input file was given\n");
  EXPECT_EQ(Run({file, "--input=" + a, "--input=" + wrong}), 1);
  EXPECT_EQ(err_, "xla-run: error: input 1 ('" + wrong +
                      "'): has shape (4,), but parameter 1 (y) expects f32[2,2] (numpy shape (2, 2))\n");
  EXPECT_EQ(Run({file, "--input=" + a, "--input=" + (dir_ / "missing.npy").string()}), 1);
  EXPECT_NE(err_.find("input 1 ('"), std::string::npos);
  EXPECT_NE(err_.find("cannot open"), std::string::npos);
  std::string s32 = Write("i.npy", *harness::LiteralToNpy(Literal(Shape::Array(PrimitiveType::kS32, {2, 2}))));
  EXPECT_EQ(Run({file, "--input=" + a, "--input=" + s32}), 1);
  EXPECT_NE(err_.find("dtype '<i4' does not match element type f32 (expected '<f4'); parameter 1 (y) expects f32[2,2]"),
            std::string::npos)
      << err_;
}

TEST_F(RunDriverTest, FlagAndFileErrors) {
  EXPECT_EQ(Run({"--frobnicate"}), 1);
  EXPECT_EQ(err_, "xla-run: error: unknown option '--frobnicate' (see --help)\n");
  EXPECT_EQ(Run({}), 1);
  EXPECT_EQ(err_, "xla-run: error: no module file given (see --help)\n");
  EXPECT_EQ(Run({"x.hlo", "--backend=cpu"}), 1);
  EXPECT_EQ(err_, "xla-run: error: unknown backend 'cpu' (available: jit, interpreter)\n");
  EXPECT_EQ(Run({"x.hlo", "--check-against=jit"}), 1);
  EXPECT_EQ(err_, "xla-run: error: unknown --check-against backend 'jit' (available: interpreter)\n");
  EXPECT_EQ(Run({"x.hlo", "--check-against=interpreter", "--backend=interpreter"}), 1);
  EXPECT_EQ(err_, "xla-run: error: --check-against=interpreter compares a backend with itself; use --backend=jit\n");
  EXPECT_EQ(Run({"x.hlo", "--check-against=interpreter", "--reference-program=global"}), 1);
  EXPECT_EQ(err_, "xla-run: error: unknown --reference-program 'global' (available: partitioned, unpartitioned)\n");
  EXPECT_EQ(Run({"x.hlo", "--reference-program=partitioned"}), 1);
  EXPECT_EQ(err_, "xla-run: error: --reference-program needs --check-against=interpreter\n");
  EXPECT_EQ(Run({"x.hlo", "--max-ulp=-1"}), 1);
  EXPECT_EQ(err_, "xla-run: error: invalid value '-1' for --max-ulp (expected an integer >= 0)\n");
  EXPECT_EQ(Run({"x.hlo", "--num-partitions=0"}), 1);
  EXPECT_NE(err_.find("invalid value '0' for --num-partitions"), std::string::npos);
  EXPECT_EQ(Run({"x.hlo", "--seed"}), 1);
  EXPECT_EQ(err_, "xla-run: error: option '--seed' needs a value\n");
  EXPECT_EQ(Run({(dir_ / "nope.hlo").string()}), 1);
  EXPECT_NE(err_.find("xla-run: error: cannot open '"), std::string::npos);
  EXPECT_EQ(Run({"--help"}), 0);
  EXPECT_NE(out_.find("USAGE: xla-run"), std::string::npos);
}

TEST_F(RunDriverTest, ParseErrorsAreDiagnostics) {
  std::string file = Write("bad.hlo", "HloModule m\nENTRY e {\n  ROOT r = f32[] frobnicate()\n}\n");
  EXPECT_EQ(Run({file}), 1);
  EXPECT_EQ(err_.rfind(file + ":3:", 0), 0u) << err_;
  EXPECT_NE(err_.find("error: "), std::string::npos);
  EXPECT_EQ(out_, "");
  std::string mlir = Write("bad.mlir", "func.func @main() {\n  %0 = stablehlo.frob\n}\n");
  EXPECT_EQ(Run({mlir}), 1);
  EXPECT_EQ(err_.rfind(mlir + ":2:", 0), 0u) << err_;
}

constexpr char kChecks[] = R"(module {
  func.func @main() {
    %0 = stablehlo.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    %1 = stablehlo.constant dense<[1.0, 2.5, 3.0]> : tensor<3xf32>
    check.expect_almost_eq %0, %1, tolerance = 0.1 : tensor<3xf32>
    check.expect_eq_const %0, dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    func.return
  }
}
)";

TEST_F(RunDriverTest, ReportsFailedChecks) {
  std::string file = Write("checks.mlir", kChecks);
  EXPECT_EQ(Run({file}), 1) << err_;
  EXPECT_EQ(out_, file +
                      ":5:5: error: check.expect_almost_eq failed: 1 of 3 elements differs (tolerance 0.1)\n"
                      "  at [1]: got 2 (0x40000000) want 2.5 (0x40200000) \u2014 differs by 0.5\n"
                      "2 checks: 1 passed, 1 failed\n");
  EXPECT_EQ(err_, "");
  std::string text = kChecks;
  text.replace(text.find("2.5"), 3, "2.0");
  std::string passing = Write("pass.mlir", text);
  EXPECT_EQ(Run({passing}), 0) << err_;
  EXPECT_EQ(out_, "2 checks: 2 passed, 0 failed\n");
}

TEST_F(RunDriverTest, SniffsStableHloWithoutMlirExtension) {
  EXPECT_EQ(DetectModuleFormat("x.txt", "// comment\n\nmodule @m {\n}"), ModuleFormat::kStableHlo);
  EXPECT_EQ(DetectModuleFormat("x", "func.func @main() {"), ModuleFormat::kStableHlo);
  EXPECT_EQ(DetectModuleFormat("x.hlo", "HloModule m"), ModuleFormat::kHlo);
  EXPECT_EQ(DetectModuleFormat("x.hlo", "module_name = f32[] parameter(0)"), ModuleFormat::kHlo);
  EXPECT_EQ(DetectModuleFormat("x.mlir", "HloModule m"), ModuleFormat::kStableHlo);
  std::string text = kChecks;
  text.replace(text.find("2.5"), 3, "2.0");
  EXPECT_EQ(Run({Write("checks.txt", text)}), 0) << err_;
}

TEST_F(RunDriverTest, OutputDirWritesNpyAndSkipsPrinting) {
  std::string file = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", F32Npy({2, 2}, {1, 2, 3, 4}));
  fs::path out_dir = dir_ / "out" / "nested";
  ASSERT_EQ(Run({file, "--input=" + a, "--input=" + a, "--output-dir=" + out_dir.string()}), 0) << err_;
  EXPECT_EQ(out_, "");
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out_dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"result_0.npy", "result_1.npy"}));
  std::ifstream in(out_dir / "result_0.npy", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  absl::StatusOr<Literal> r0 = harness::NpyToLiteral(bytes);
  ASSERT_TRUE(r0.ok()) << r0.status();
  EXPECT_EQ(r0->Get<float>(3), 8.0f);
  // --print prints as well.
  ASSERT_EQ(Run({file, "--output-dir=" + out_dir.string(), "--print"}), 0);
  EXPECT_NE(out_.find("result_1 = s32[] 7"), std::string::npos);
}

TEST_F(RunDriverTest, OverridesDeviceCountsAndLabelsPerDevice) {
  std::string file = Write("ar.hlo", R"(HloModule ar, num_partitions=1
sum {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  id = u32[] partition-id()
  v = s32[] convert(id)
  ROOT r = s32[] all-reduce(v), replica_groups={}, to_apply=sum, channel_id=1
}
)");
  ASSERT_EQ(Run({file, "--num-partitions=3"}), 0) << err_;
  EXPECT_EQ(out_, "device_0/result_0 = s32[] 3\ndevice_1/result_0 = s32[] 3\ndevice_2/result_0 = s32[] 3\n");
  fs::path out_dir = dir_ / "o";
  ASSERT_EQ(Run({file, "--num-partitions", "2", "--output-dir", out_dir.string()}), 0) << err_;
  EXPECT_TRUE(fs::exists(out_dir / "device_0" / "result_0.npy"));
  EXPECT_TRUE(fs::exists(out_dir / "device_1" / "result_0.npy"));
}

// A partitioned run's devices' results are freed once the global result is assembled from them, unless --per-device
// prints them: either way the outputs are i * i and compare with the interpreter's.
TEST_F(RunDriverTest, PartitionedOutputsSurviveTheReferenceWithAndWithoutPerDevice) {
  std::string file = Write("sq.hlo", R"(HloModule sq, num_partitions=2
ENTRY e {
  i = s32[4] iota(), iota_dimension=0, sharding={devices=[2]<=[2]}
  ROOT r = s32[4] multiply(i, i), sharding={devices=[2]<=[2]}
}
)");
  ASSERT_EQ(Run({file, "--check-against=interpreter"}), 0) << err_;
  EXPECT_EQ(out_, "result_0 = s32[4]{0} {0, 1, 4, 9}\ncheck against the interpreter: 1 of 1 output match\n");
  ASSERT_EQ(Run({file, "--check-against=interpreter", "--per-device"}), 0) << err_;
  EXPECT_EQ(out_,
            "device_0/result_0 = s32[2]{0} {0, 1}\ndevice_1/result_0 = s32[2]{0} {4, 9}\n"
            "check against the interpreter: 1 of 1 output match\n");
}

// A dot contracted over a dimension split in two: each device sums half the terms, an all-reduce adds the halves.
// With inputs whose sum depends on the order, x = {1, 2^-24, 2^-24, 2^-24} and w = 1: the unpartitioned sum
// ((1 + e) + e) + e rounds each e away (1), the partitioned one (1 + e) + (e + e) keeps one 2^-23 (numpy:
// np.float32(1) + (np.float32(2**-24) + np.float32(2**-24)) == 1 + 2**-23).
TEST_F(RunDriverTest, ExactModeComparesWithThePartitionedProgram) {
  std::string file = Write("k.hlo", R"(HloModule k, num_partitions=2
ENTRY e {
  x = f32[1,4] parameter(0), sharding={devices=[1,2]<=[2]}
  w = f32[4,1] parameter(1), sharding={devices=[2,1]<=[2]}
  ROOT d = f32[1,1] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}, sharding={replicated}
}
)");
  const float e = std::ldexp(1.0f, -24);
  std::string x = Write("x.npy", F32Npy({1, 4}, {1, e, e, e}));
  std::string w = Write("w.npy", F32Npy({4, 1}, {1, 1, 1, 1}));
  ASSERT_EQ(Run({file, "--input=" + x, "--input=" + w, "--exact", "--check-against=interpreter"}), 0) << err_;
  EXPECT_EQ(out_,
            "result_0 = f32[1,1]{1,0} { {1.00000012} }\n"
            "check against the interpreter running the partitioned program on 2 devices (exact mode; "
            "--reference-program=unpartitioned also checks the partitioning): 1 of 1 output match\n");
  EXPECT_EQ(Run({file, "--input=" + x, "--input=" + w, "--exact", "--check-against=interpreter",
                 "--reference-program=unpartitioned", "--no-print"}),
            1);
  EXPECT_NE(out_.find("at [0, 0]: got 1.0000001 (0x3f800001) want 1 (0x3f800000) — 1 ulp\n"), std::string::npos)
      << out_;
  EXPECT_NE(out_.find("check against the interpreter: 0 of 1 output match\n"), std::string::npos) << out_;
  // The interpreter's own run of the partitioned program gives the same sum.
  ASSERT_EQ(Run({file, "--input=" + x, "--input=" + w, "--backend=interpreter"}), 0) << err_;
  EXPECT_EQ(out_, "result_0 = f32[1,1]{1,0} { {1.00000012} }\n");
}

TEST_F(RunDriverTest, RuntimeErrorsExitOneWithoutOutputs) {
  std::string file = Write("cc.hlo", R"(HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT r = f32[2] custom-call(p), custom_call_target="not.a.thing"
}
)");
  fs::path out_dir = dir_ / "o";
  EXPECT_EQ(Run({file, "--output-dir=" + out_dir.string()}), 1);
  EXPECT_NE(err_.find(file + ":4:8: error: "), std::string::npos) << err_;  // at the call
  EXPECT_NE(err_.find("not.a.thing"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(out_dir));
}

TEST_F(RunDriverTest, HugeSeededParameterIsAnErrorNotACrash) {
  std::string file = Write("big.hlo", "HloModule m\nENTRY e {\n  ROOT p = f32[100000,100000,100] parameter(0)\n}\n");
  // The memory check refuses it first (run_memory_test.cc); without it, building the arguments does.
  EXPECT_EQ(Run({file}), 1);
  EXPECT_NE(err_.find("big.hlo: error: this run needs 7450.6 GiB (parameters 3725.3 GiB"), std::string::npos) << err_;
  EXPECT_EQ(Run({file, "--memory-limit=none"}), 1);
  EXPECT_EQ(err_,
            "xla-run: error: parameter 0 (p) has shape f32[100000,100000,100], too large to fill with seeded "
            "values\n");
}

TEST_F(RunDriverTest, JitIsTheDefaultBackendAndAgreesWithTheInterpreter) {
  std::string file = Write("add.hlo", kAdd);
  std::string a = Write("a.npy", F32Npy({2, 2}, {1, 2, 3, 4}));
  std::string b = Write("b.npy", F32Npy({2, 2}, {10, 20, 30, 40}));
  const std::string want = "result_0 = f32[2,2]{1,0} { { 11, 22 }, { 33, 44 } }\nresult_1 = s32[] 7\n";
  for (const char* backend : {"--backend=jit", "--backend=interpreter"}) {
    ASSERT_EQ(Run({file, "--input=" + a, "--input=" + b, backend}), 0) << backend << ": " << err_;
    EXPECT_EQ(out_, want) << backend;
  }
  ASSERT_EQ(Run({file, "--check-against=interpreter"}), 0) << err_;
  EXPECT_NE(out_.find("check against the interpreter: 2 of 2 outputs match\n"), std::string::npos) << out_;
  EXPECT_EQ(err_, "");
}

TEST_F(RunDriverTest, JitRefusesWhatCodegenCannotCompile) {
  // send/recv with source-target pairs are not lowered; the JIT never falls back to the interpreter.
  std::string file =
      Write("sr.hlo",
            "HloModule m, replica_count=2\nENTRY e {\n  id = u32[] replica-id()\n"
            "  x = f32[] convert(id)\n  tok = token[] after-all()\n"
            "  s = (f32[], u32[], token[]) send(x, tok), channel_id=1, "
            "frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}\n"
            "  r = (f32[], u32[], token[]) recv(tok), channel_id=2, "
            "frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}\n"
            "  sd = token[] send-done(s), channel_id=1\n  rd = (f32[], token[]) recv-done(r), channel_id=2\n"
            "  ROOT v = f32[] get-tuple-element(rd), index=0\n}\n");
  fs::path out_dir = dir_ / "o";
  EXPECT_EQ(Run({file, "--output-dir=" + out_dir.string()}), 1);
  EXPECT_EQ(out_, "");
  EXPECT_EQ(err_.rfind(file + ": error: codegen does not support", 0), 0u) << err_;
  EXPECT_NE(err_.find(" (use --backend=interpreter)\n"), std::string::npos) << err_;
  EXPECT_FALSE(fs::exists(out_dir));
  EXPECT_EQ(Run({file, "--check-against=interpreter"}), 1);
  EXPECT_NE(err_.find("(use --backend=interpreter)"), std::string::npos) << err_;
  EXPECT_EQ(Run({file, "--backend=interpreter"}), 0) << err_;
}

TEST_F(RunDriverTest, ElidedConstantsGetTheSameSeededValuesOnEveryBackend) {
  std::string file = Write("elided.hlo", "HloModule m\nENTRY e {\n  ROOT c = f32[3] constant({...})\n}\n");
  ASSERT_EQ(Run({file, "--backend=interpreter", "--seed=5"}), 0) << err_;
  std::string interpreted = out_;
  ASSERT_EQ(Run({file, "--seed=5"}), 0) << err_;
  EXPECT_EQ(out_, interpreted);
  ASSERT_EQ(Run({file, "--seed=6"}), 0) << err_;
  EXPECT_NE(out_, interpreted);
  ASSERT_EQ(Run({file, "--seed=5", "--check-against=interpreter"}), 0) << err_;
}

// A bf16 layer: two dots, tanh, exp and an f32 sum. The JIT's default mode rounds its bf16 intermediates
// differently from the interpreter (FMA, reassociation), which only a reference wider than bf16 can judge.
constexpr char kBf16Layer[] = R"(HloModule bf16_layer
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = bf16[64,256] parameter(0)
  w = bf16[256,256] parameter(1)
  d = bf16[64,256] dot(a, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = bf16[64,256] tanh(d)
  w2 = bf16[256,128] slice(w), slice={[0:256], [0:128]}
  d2 = bf16[64,128] dot(t, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  x = bf16[64,128] exponential(d2)
  xf = f32[64,128] convert(x)
  zero = f32[] constant(0)
  r = f32[64] reduce(xf, zero), dimensions={1}, to_apply=add
  rb = bf16[64] convert(r)
  ROOT out = (bf16[64,128], bf16[64]) tuple(d2, rb)
}
)";

TEST_F(RunDriverTest, Bf16OutputsAreJudgedAgainstAnF32Reference) {
  std::string file = Write("bf16.hlo", kBf16Layer);
  ASSERT_EQ(Run({file, "--check-against=interpreter", "--no-print", "--seed=1", "--reference-type=f32"}), 0)
      << out_ << err_;
  EXPECT_NE(out_.find("check against the interpreter: 2 of 2 outputs match\n"
                      "default-mode error against an f32 reference: worst result_"),
            std::string::npos)
      << out_;
  EXPECT_NE(out_.find("2 outputs judged"), std::string::npos) << out_;
  EXPECT_EQ(Run({file, "--reference-type=f16"}), 1);
  EXPECT_EQ(err_, "xla-run: error: unknown --reference-type 'f16' (available: f64, f32)\n");

  // What the driver does, with the JIT's default-mode result mutated: the production comparison.
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kBf16Layer);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args;
  for (int64_t i = 0; i < 2; ++i) {
    args.push_back(SeededParameterValue((*module)->entry_computation()->parameter(i)->shape(), 1, i));
  }
  absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(**module, {args});
  ReferenceOptions reference_options;
  reference_options.type = PrimitiveType::kF32;
  absl::StatusOr<std::vector<Literal>> reference = EvaluateReference(**module, args, reference_options);
  codegen::JitOptions jit_options;
  jit_options.compile.exact = false;
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(**module, jit_options);
  ASSERT_TRUE(want.ok() && reference.ok() && exe.ok());
  absl::StatusOr<std::vector<Literal>> got = (*exe)->Run(args);
  ASSERT_TRUE(got.ok()) << got.status();
  const std::vector<LabeledOutput> want_outputs = LabelOutputs(*want), reference_outputs = LabelOutputs(*reference);
  ASSERT_EQ(reference_outputs[0].value->shape().element_type, PrimitiveType::kF32);
  CompareOptions compare;
  compare.default_mode_tolerance = true;
  compare.reference64 = &reference_outputs;
  auto judge = [&](const std::vector<Literal>& candidate, std::string* summary) {
    std::vector<std::pair<std::string, RelativeError>> relative;
    bool passed = true;
    for (const harness::CheckResult& r : CompareOutputs(LabelOutputs(candidate), want_outputs, compare, &relative)) {
      passed &= r.passed();
      *summary += FormatComparisonFailure(r, "bf16.hlo", "interpreter");
    }
    *summary += FormatRelativeErrorSummary(relative);
    EXPECT_EQ(relative.size(), 2u);
    return passed;
  };
  std::string summary;
  EXPECT_TRUE(judge(*got, &summary)) << summary;
  EXPECT_NE(summary.find("default-mode error against an f32 reference"), std::string::npos) << summary;

  // The element of largest magnitude negated, and the rows reversed: each fails.
  Literal& d2 = (*got)[0].mutable_tuple_elements()[0];
  const Literal original = d2;
  int64_t largest = 0;
  for (int64_t i = 0; i < d2.element_count(); ++i) {
    if (std::fabs(d2.GetAsDouble(i)) > std::fabs(d2.GetAsDouble(largest))) largest = i;
  }
  d2.SetFromDouble(largest, -d2.GetAsDouble(largest));
  summary.clear();
  EXPECT_FALSE(judge(*got, &summary));
  EXPECT_NE(summary.find("bf16.hlo: error: result_0 differs from the interpreter: xlac's error against an f32 "
                         "reference is "),
            std::string::npos)
      << summary;
  for (int64_t row = 0; row < 64; ++row) {
    for (int64_t col = 0; col < 128; ++col) {
      d2.SetFromDouble(row * 128 + col, original.GetAsDouble((63 - row) * 128 + col));
    }
  }
  summary.clear();
  EXPECT_FALSE(judge(*got, &summary)) << summary;
}

Literal F32Literal(const std::vector<float>& values) {
  Literal lit(Shape::Array(PrimitiveType::kF32, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.Set<float>(static_cast<int64_t>(i), values[i]);
  return lit;
}

float NextUp(float x, int ulps) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += static_cast<uint32_t>(ulps);
  std::memcpy(&x, &bits, 4);
  return x;
}

TEST(CompareOutputsTest, FloatsWithinMaxUlpIntegersExactly) {
  Literal want = F32Literal({1.0f, 0.5f, 2.0f, -0.0f});
  Literal one_ulp = F32Literal({1.0f, NextUp(0.5f, 1), 2.0f, 0.0f});
  Literal same = F32Literal({1.0f, 0.5f, 2.0f, -0.0f});
  std::vector<LabeledOutput> w = {{"result_0", &want}};
  EXPECT_TRUE(CompareOutputs({{"result_0", &same}}, w, {})[0].passed());

  std::vector<harness::CheckResult> r = CompareOutputs({{"result_0", &one_ulp}}, w, {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].passed());
  EXPECT_EQ(r[0].mismatched, 1);
  EXPECT_EQ(FormatComparisonFailure(r[0], "m.hlo", "interpreter"),
            "m.hlo: error: result_0 differs from the interpreter: 1 of 4 elements differs (allowed 0 ulp)\n"
            "  at [1]: got 0.50000006 (0x3f000001) want 0.5 (0x3f000000) \u2014 1 ulp\n");
  EXPECT_TRUE(CompareOutputs({{"result_0", &one_ulp}}, w, {.max_ulp = 1})[0].passed());
  EXPECT_EQ(FormatComparisonFailure(CompareOutputs({{"result_0", &same}}, w, {})[0], "m.hlo", "interpreter"), "");

  Literal ints(Shape::Array(PrimitiveType::kS32, {3}));
  Literal other_ints(Shape::Array(PrimitiveType::kS32, {3}));
  for (int i = 0; i < 3; ++i) {
    ints.Set<int32_t>(i, i);
    other_ints.Set<int32_t>(i, i == 2 ? 3 : i);
  }
  std::vector<harness::CheckResult> ri =
      CompareOutputs({{"result_1", &other_ints}}, {{"result_1", &ints}}, {.max_ulp = 100});
  EXPECT_FALSE(ri[0].passed());
  EXPECT_EQ(FormatComparisonFailure(ri[0], "m.hlo", "interpreter"),
            "m.hlo: error: result_1 differs from the interpreter: 1 of 3 elements differs (exact)\n"
            "  at [2]: got 3 want 2 \u2014 not equal\n");
}

TEST(CompareOutputsTest, ShapeAndCountMismatchesFail) {
  Literal a = F32Literal({1.0f, 2.0f});
  Literal b = F32Literal({1.0f, 2.0f, 3.0f});
  std::vector<harness::CheckResult> r = CompareOutputs({{"result_0", &a}}, {{"result_0", &b}}, {});
  ASSERT_EQ(r.size(), 1u);
  EXPECT_FALSE(r[0].passed());
  EXPECT_EQ(FormatComparisonFailure(r[0], "m.hlo", "interpreter"),
            "m.hlo: error: result_0 differs from the interpreter: shape mismatch: got f32[2] want f32[3]\n");
  r = CompareOutputs({{"result_0", &a}}, {{"result_0", &a}, {"result_1", &b}}, {});
  ASSERT_EQ(r.size(), 2u);
  EXPECT_TRUE(r[0].passed());
  EXPECT_EQ(FormatComparisonFailure(r[1], "m.hlo", "interpreter"),
            "m.hlo: error: result_1 differs from the interpreter: 1 outputs, want 2\n");
}

}  // namespace
}  // namespace xlac
