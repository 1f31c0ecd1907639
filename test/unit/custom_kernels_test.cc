// C++ custom-call kernels: Clang compiles them in process (codegen/clang/kernel_compiler.h), the bind pass checks
// calls against their signatures (passes/custom_kernels.h), compiled programs inline them into fused loops, and the
// interpreter runs the same compiled function (codegen/clang/kernel_runner.h).
#include "passes/custom_kernels.h"

#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/clang/kernel_cache.h"
#include "codegen/clang/kernel_compiler.h"
#include "codegen/clang/kernel_runner.h"
#include "codegen/jit.h"
#include "codegen_test_util.h"
#include "ir/kernel_calls.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::codegen::testing {
namespace {

class CustomKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("xlac_kernels_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    absl::StatusOr<TargetInfo> target = ResolveTarget(TargetOptions{});
    ASSERT_TRUE(target.ok()) << target.status();
    target_ = *target;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  std::filesystem::path dir_;
  TargetInfo target_;
};

constexpr char kGelu[] = R"(#include <xlac/custom_call.h>
#include <cmath>

namespace demo {
XLAC_ELEMENTWISE("my.gelu")
float Gelu(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
}  // namespace demo

static float Helper(float a, float b) { return a * b + 1.0f; }

XLAC_ELEMENTWISE("my.fma1")
float MulAddOne(float a, float b) { return Helper(a, b); }

XLAC_ELEMENTWISE("my.isneg")
bool IsNegative(double x) { return x < 0; }
)";

TEST_F(CustomKernelsTest, ReadsSignaturesFromTheAst) {
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({Write("k.cc", kGelu)}, target_);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_EQ(library->kernels.size(), 3u);
  const KernelSignature& fma = library->kernels[0];  // sorted by target
  EXPECT_EQ(fma.target, "my.fma1");
  EXPECT_EQ(fma.function, "MulAddOne");
  EXPECT_EQ(fma.operand_types, (std::vector<PrimitiveType>{PrimitiveType::kF32, PrimitiveType::kF32}));
  const KernelSignature& gelu = library->kernels[1];
  EXPECT_EQ(gelu.target, "my.gelu");
  EXPECT_EQ(gelu.function, "demo::Gelu");
  EXPECT_EQ(gelu.symbol, "xlac.kernel.my.gelu");
  EXPECT_EQ(gelu.result_type, PrimitiveType::kF32);
  EXPECT_EQ(gelu.loc.line, 6);
  EXPECT_EQ(gelu.loc.col, 7);
  EXPECT_EQ(gelu.loc.line_text,
            "float Gelu(float x) { return 0.5f * x * (1.0f + std::tanh(0.7978845608f * (x + "
            "0.044715f * x * x * x))); }");
  const KernelSignature& isneg = library->kernels[2];
  EXPECT_EQ(isneg.operand_types, (std::vector<PrimitiveType>{PrimitiveType::kF64}));
  EXPECT_EQ(isneg.result_type, PrimitiveType::kPred);
  EXPECT_FALSE(library->bitcode.empty());
  EXPECT_EQ(library->fingerprint.size(), 16u);
}

TEST_F(CustomKernelsTest, FingerprintFollowsTheSourceAndItsIncludes) {
  std::string header = Write("scale.h", "constexpr float kScale = 2.0f;\n");
  std::string source = Write("k.cc",
                             "#include <xlac/custom_call.h>\n#include \"scale.h\"\n"
                             "XLAC_ELEMENTWISE(\"s\") float S(float x) { return kScale * x; }\n");
  absl::StatusOr<KernelLibrary> first = CompileKernelSources({source}, target_);
  absl::StatusOr<KernelLibrary> again = CompileKernelSources({source}, target_);
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->fingerprint, again->fingerprint);
  std::ofstream(header) << "constexpr float kScale = 3.0f;\n";
  absl::StatusOr<KernelLibrary> changed = CompileKernelSources({source}, target_);
  ASSERT_TRUE(changed.ok());
  EXPECT_NE(first->fingerprint, changed->fingerprint);
}

TEST_F(CustomKernelsTest, LibrariesRoundTripThroughTheirSerialization) {
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({Write("k.cc", kGelu)}, target_);
  ASSERT_TRUE(library.ok()) << library.status();
  std::string bytes = SerializeKernelLibrary(*library);
  absl::StatusOr<KernelLibrary> back = DeserializeKernelLibrary(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(SerializeKernelLibrary(*back), bytes);
  ASSERT_EQ(back->kernels.size(), library->kernels.size());
  EXPECT_EQ(back->kernels[1].loc.line_text, library->kernels[1].loc.line_text);
  EXPECT_EQ(back->inputs, library->inputs);
  // Buffer kernels too: views, the attribute struct and the sharding rule.
  absl::StatusOr<KernelLibrary> buffers = CompileKernelSources({Write("b.cc", R"cc(#include <xlac/custom_call.h>
                                                                                   struct Attrs {
                                                                                     double factor;
                                                                                     int16_t offset;
                                                                                   };
                                                                                   void Scale(xlac::Buffer<const float, 2> x, xlac::Buffer<float, 2> y, const Attrs& a) {
                                                                                     for (int64_t i = 0; i < x.size(); ++i) y[i] = static_cast<float>(a.factor * x[i] + a.offset);
                                                                                   }
                                                                                   XLAC_BUFFER_KERNEL("scale", Scale, XLAC_SHARDING_BATCH_DIMS(0));
                                                               )cc")},
                                                               target_);
  ASSERT_TRUE(buffers.ok()) << buffers.status();
  absl::StatusOr<KernelLibrary> buffers_back = DeserializeKernelLibrary(SerializeKernelLibrary(*buffers));
  ASSERT_TRUE(buffers_back.ok()) << buffers_back.status();
  EXPECT_EQ(SerializeKernelLibrary(*buffers_back), SerializeKernelLibrary(*buffers));
  ASSERT_EQ(buffers_back->kernels.size(), 1u);
  const KernelSignature& scale = buffers_back->kernels[0];
  EXPECT_EQ(scale.kind, KernelKind::kBuffer);
  ASSERT_EQ(scale.operands.size(), 1u);
  EXPECT_EQ(scale.operands[0].rank, 2);
  ASSERT_EQ(scale.attrs.size(), 2u);
  EXPECT_EQ(scale.attrs[1].name, "offset");
  EXPECT_EQ(scale.attrs[1].offset, 8);
  EXPECT_EQ(scale.sharding, KernelShardingRule::kBatchDims);
  EXPECT_EQ(scale.batch_dims, std::vector<int64_t>{0});
  // Truncated or altered entries are errors, never a library.
  EXPECT_FALSE(DeserializeKernelLibrary(bytes.substr(0, bytes.size() / 2)).ok());
  EXPECT_FALSE(DeserializeKernelLibrary(bytes + "x").ok());
  EXPECT_FALSE(DeserializeKernelLibrary("").ok());
}

TEST_F(CustomKernelsTest, CacheHitsUntilAnIncludedHeaderChanges) {
  std::string header = Write("scale.h", "constexpr float kScale = 2.0f;\n");
  std::string source = Write("k.cc",
                             "#include <xlac/custom_call.h>\n#include \"scale.h\"\n"
                             "XLAC_ELEMENTWISE(\"s\") float S(float x) { return kScale * x; }\n");
  CacheOptions cache{(dir_ / "cache").string()};
  std::string log;
  absl::StatusOr<KernelLibrary> first = CompileKernelSourcesCached({source}, target_, {}, cache, log);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_EQ(log.find("kernel cache: hit"), std::string::npos) << log;
  // The entry lists what the compilation read: the source, the header and the standard headers, not the built-in one.
  EXPECT_NE(std::find_if(first->inputs.begin(), first->inputs.end(),
                         [&](const auto& input) { return input.first == header; }),
            first->inputs.end());
  log.clear();
  absl::StatusOr<KernelLibrary> hit = CompileKernelSourcesCached({source}, target_, {}, cache, log);
  ASSERT_TRUE(hit.ok()) << hit.status();
  EXPECT_NE(log.find("kernel cache: hit"), std::string::npos) << log;
  EXPECT_EQ(hit->fingerprint, first->fingerprint);
  EXPECT_EQ(hit->bitcode, first->bitcode);
  std::ofstream(header) << "constexpr float kScale = 3.0f;\n";
  log.clear();
  absl::StatusOr<KernelLibrary> changed = CompileKernelSourcesCached({source}, target_, {}, cache, log);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_NE(log.find("scale.h changed since the entry was written"), std::string::npos) << log;
  EXPECT_NE(changed->fingerprint, first->fingerprint);
}

TEST_F(CustomKernelsTest, ClangErrorsAreRenderedWithLocationAndCaret) {
  std::string path = Write("bad.cc",
                           "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\")\nfloat F(float x) { "
                           "return x + y; }\n");
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({path}, target_);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(std::string(library.status().message()), path +
                                                         ":3:31: error: use of undeclared identifier 'y'\n"
                                                         "    3 | float F(float x) { return x + y; }\n"
                                                         "      |                               ^\n"
                                                         "1 error generated.\n");
}

TEST_F(CustomKernelsTest, UnsupportedSignaturesAreErrorsAtTheDeclaration) {
  std::string path = Write("sig.cc",
                           "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\")\n"
                           "float F(const float* x) { return *x; }\n");
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({path}, target_);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(
      std::string(library.status().message())
          .find(path + ":3:22: error: parameter 'x' of the elementwise kernel for \"t\" has type 'const float *'"),
      std::string::npos)
      << library.status().message();
}

TEST_F(CustomKernelsTest, TwoKernelsForOneTargetAreAnError) {
  std::string a =
      Write("a.cc", "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\") float A(float x) { return x; }\n");
  std::string b =
      Write("b.cc", "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\") float B(float x) { return x; }\n");
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({a, b}, target_);
  ASSERT_FALSE(library.ok());
  EXPECT_NE(std::string(library.status().message()).find("a second kernel for custom-call target \"t\": B"),
            std::string::npos)
      << library.status().message();
}

// Elementwise kernels of one target with different element types are overloads: each call binds to the one its types
// match, and the symbols carry the types.
TEST_F(CustomKernelsTest, ElementwiseOverloadsBindByElementType) {
  std::string a = Write("a.cc",
                        "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\") float A(float x) { return 2 * x; }\n"
                        "XLAC_ELEMENTWISE(\"t\") __bf16 B(__bf16 x) { return static_cast<__bf16>(3 * float(x)); }\n");
  std::string b =
      Write("b.cc", "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\") double C(double x) { return 4 * x; }\n");
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({a, b}, target_);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_EQ(library->kernels.size(), 3u);
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  x = f32[4] parameter(0)
  y = bf16[4] parameter(1)
  fx = f32[4] custom-call(x), custom_call_target="t"
  fy = bf16[4] custom-call(y), custom_call_target="t"
  ROOT r = (f32[4], bf16[4]) tuple(fx, fy)
})");
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = BindCustomKernels(*module, library->kernels, diags);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_EQ(KernelSymbol(*module->entry_computation()->FindInstruction("fx")), "xlac.kernel.t.f32_to_f32");
  EXPECT_EQ(KernelSymbol(*module->entry_computation()->FindInstruction("fy")), "xlac.kernel.t.bf16_to_bf16");
  // A call no overload takes is reported against the first kernel of the target.
  std::unique_ptr<Module> wrong = ParseAndVerify(R"(
HloModule m
ENTRY e {
  x = s32[8] parameter(0)
  ROOT g = s32[8] custom-call(x), custom_call_target="t"
})");
  ASSERT_NE(wrong, nullptr);
  DiagnosticEngine wrong_diags;
  EXPECT_FALSE(BindCustomKernels(*wrong, library->kernels, wrong_diags).ok());
  ASSERT_EQ(wrong_diags.diagnostics().size(), 1u);
  EXPECT_NE(wrong_diags.diagnostics()[0].message.find("operand 0 of custom call g is s32[8], but the kernel"),
            std::string::npos)
      << wrong_diags.diagnostics()[0].message;
  // The same types twice are still two kernels for one call.
  std::string dup =
      Write("dup.cc", "#include <xlac/custom_call.h>\nXLAC_ELEMENTWISE(\"t\") float D(float x) { return x; }\n");
  absl::StatusOr<KernelLibrary> twice = CompileKernelSources({a, dup}, target_);
  ASSERT_FALSE(twice.ok());
  EXPECT_NE(std::string(twice.status().message()).find("a second kernel for custom-call target \"t\": D"),
            std::string::npos)
      << twice.status().message();
}

constexpr char kProgram[] = R"(
HloModule m
ENTRY e {
  x = f32[4,1000] parameter(0)
  y = f32[4,1000] parameter(1)
  s = f32[] constant(0.5)
  g = f32[4,1000] custom-call(x), custom_call_target="my.gelu"
  m = f32[4,1000] custom-call(g, s), custom_call_target="my.fma1"
  ROOT r = f32[4,1000] add(m, y)
})";

TEST_F(CustomKernelsTest, BindMarksCallsAndChecksSignatures) {
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({Write("k.cc", kGelu)}, target_);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<Module> module = ParseAndVerify(kProgram);
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = BindCustomKernels(*module, library->kernels, diags);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  const Instruction* g = module->entry_computation()->FindInstruction("g");
  ASSERT_NE(g, nullptr);
  EXPECT_TRUE(IsElementwiseKernelCall(*g));
  EXPECT_EQ(KernelSymbol(*g), "xlac.kernel.my.gelu");
  absl::StatusOr<bool> again = BindCustomKernels(*module, library->kernels, diags);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);

  std::unique_ptr<Module> wrong = ParseAndVerify(R"(
HloModule m
ENTRY e {
  x = s32[8] parameter(0)
  ROOT g = s32[8] custom-call(x), custom_call_target="my.gelu"
})");
  ASSERT_NE(wrong, nullptr);
  DiagnosticEngine wrong_diags;
  EXPECT_FALSE(BindCustomKernels(*wrong, library->kernels, wrong_diags).ok());
  ASSERT_EQ(wrong_diags.diagnostics().size(), 1u);
  EXPECT_EQ(wrong_diags.diagnostics()[0].message,
            "operand 0 of custom call g is s32[8], but the kernel demo::Gelu for \"my.gelu\" takes f32 there (f32) -> "
            "f32");
  EXPECT_NE(wrong_diags.diagnostics()[0].foreign_notes.find(":6:7: note: the kernel demo::Gelu for \"my.gelu\" is "
                                                            "declared here\nfloat Gelu(float x)"),
            std::string::npos);
}

// Exact mode: the kernel's own arithmetic and libm calls, bit for bit what the interpreter computes with the same
// compiled kernel. Default mode: the kernel's libm calls become the program's inlined approximations (no call is left
// in the fused loop, which vectorizes), within the approximations' documented bounds.
TEST_F(CustomKernelsTest, CompiledProgramInlinesKernelsAndMatchesTheInterpreter) {
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({Write("k.cc", kGelu)}, target_);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<Module> module = ParseAndVerify(kProgram);
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  ASSERT_TRUE(BindCustomKernels(*module, library->kernels, diags).ok());
  std::vector<Literal> args;
  for (int p = 0; p < 2; ++p) {
    Literal arg(module->entry_computation()->parameter(p)->shape());
    float* data = reinterpret_cast<float*>(arg.mutable_raw_data());
    for (int64_t i = 0; i < arg.element_count(); ++i) data[i] = static_cast<float>((i * 37 + p * 11) % 200 - 100) / 25;
    args.push_back(std::move(arg));
  }
  absl::StatusOr<std::unique_ptr<KernelRunner>> runner = KernelRunner::Create(*library, target_);
  ASSERT_TRUE(runner.ok()) << runner.status();
  interp::InterpreterOptions interp_options;
  interp_options.elementwise_kernels = &(*runner)->elementwise();
  absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*module, {args}, interp_options);
  ASSERT_TRUE(want.ok()) << want.status();

  for (bool exact : {true, false}) {
    SCOPED_TRACE(exact ? "exact" : "default");
    JitOptions options;
    options.keep_llvm_ir = true;
    options.compile.exact = exact;
    options.compile.kernel_bitcode = std::make_shared<const std::string>(library->bitcode);
    options.compile.kernel_fingerprint = library->fingerprint;
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    const std::string& ir = (*exe)->llvm_ir();
    // Inlined: no call of a kernel, and no kernel function, is left in the optimized program.
    EXPECT_EQ(ir.find("@xlac.kernel."), std::string::npos);
    // libm stays in exact mode only.
    const bool calls_tanh = ir.find("@tanhf(") != std::string::npos || ir.find("@llvm.tanh.") != std::string::npos;
    EXPECT_EQ(calls_tanh, exact);
    absl::StatusOr<std::vector<Literal>> got = (*exe)->Run(args);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ(DescribeDifference((*want)[0], (*got)[0], /*tolerant=*/!exact), "");
    // And what the kernel computes: gelu(x) * 0.5 + 1 + y.
    const float* x = reinterpret_cast<const float*>(args[0].raw_data());
    const float* y = reinterpret_cast<const float*>(args[1].raw_data());
    const float* r = reinterpret_cast<const float*>((*got)[0].raw_data());
    for (int64_t i : {int64_t{0}, int64_t{17}, int64_t{3999}}) {
      float gelu = 0.5f * x[i] * (1.0f + std::tanh(0.7978845608f * (x[i] + 0.044715f * x[i] * x[i] * x[i])));
      EXPECT_NEAR(r[i], gelu * 0.5f + 1.0f + y[i], 1e-5f) << i;
    }
  }
}

TEST_F(CustomKernelsTest, InterpreterWithoutTheKernelsSaysSo) {
  absl::StatusOr<KernelLibrary> library = CompileKernelSources({Write("k.cc", kGelu)}, target_);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<Module> module = ParseAndVerify(kProgram);
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  ASSERT_TRUE(BindCustomKernels(*module, library->kernels, diags).ok());
  std::vector<Literal> args;
  for (int p = 0; p < 2; ++p) args.emplace_back(module->entry_computation()->parameter(p)->shape());
  absl::StatusOr<std::vector<Literal>> result = interp::Evaluate(*module, {args});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(std::string(result.status().message()).find("bound to the C++ kernel xlac.kernel.my.gelu"),
            std::string::npos)
      << result.status();
}

}  // namespace
}  // namespace xlac::codegen::testing
