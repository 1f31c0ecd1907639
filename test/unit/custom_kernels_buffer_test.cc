// C++ buffer kernels (include/xlac/custom_call.h): signatures read from the AST (xlac::Buffer template arguments, the
// attribute struct's layout, the sharding rule), attributes filled from both backend_config forms, calls kept
// row-major by layout assignment, and the compiled program and the interpreter running the same entry point,
// errors included.
#include <cstring>
#include <filesystem>
#include <fstream>

#include "codegen/clang/kernel_compiler.h"
#include "codegen/clang/kernel_runner.h"
#include "codegen/jit.h"
#include "codegen_test_util.h"
#include "ir/kernel_calls.h"
#include "passes/custom_kernels.h"
#include "passes/kernel_attrs.h"
#include "passes/layout_assignment.h"
#include "passes/layout_copies.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::codegen::testing {
namespace {

class BufferKernelsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("xlac_buffer_kernels_" + std::to_string(::getpid()) + "_" +
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

  absl::StatusOr<KernelLibrary> Compile(const std::string& text) {
    return CompileKernelSources({Write("k.cc", text)}, target_);
  }

  std::filesystem::path dir_;
  TargetInfo target_;
};

constexpr char kKernels[] =
    R"cc(#include <xlac/custom_call.h>

         namespace demo {
         struct ScaleAttrs {
           bool negate;
           double factor;
           int16_t offset;
         };

         // out[i, j] = (negate ? -1 : 1) * factor * x[i, j] + offset + row sum of y; fails on an empty row.
         xlac::Status ScaleRows(xlac::Buffer<const float, 2> x, xlac::Buffer<const double> y,
                                xlac::Buffer<float, 2> out, xlac::Buffer<int64_t, 1> rows, const ScaleAttrs& attrs) {
           if (x.dim(1) == 0) return xlac::Status::Error("empty rows (%lld of them)", static_cast<long long>(x.dim(0)));
           for (int64_t i = 0; i < x.dim(0); ++i) {
             double sum = 0;
             for (int64_t j = 0; j < y.dim(1); ++j) sum += y.at(i, j);
             for (int64_t j = 0; j < x.dim(1); ++j) {
               out.at(i, j) = static_cast<float>((attrs.negate ? -1 : 1) * attrs.factor * x.at(i, j) + attrs.offset + sum);
             }
             rows[i] = i * x.stride(0);
           }
           return xlac::Status::Ok();
         }
         }  // namespace demo
         XLAC_BUFFER_KERNEL("demo.scale_rows", demo::ScaleRows, XLAC_SHARDING_BATCH_DIMS(0));

         void Twice(xlac::Buffer<const uint8_t> in, xlac::Buffer<uint8_t> out) {
           for (int64_t i = 0; i < in.size(); ++i) out[i] = static_cast<uint8_t>(2 * in[i]);
         }
         XLAC_BUFFER_KERNEL("demo.twice", Twice, XLAC_SHARDING_ELEMENTWISE);
)cc";

TEST_F(BufferKernelsTest, ReadsSignaturesAttributeLayoutAndShardingRule) {
  absl::StatusOr<KernelLibrary> library = Compile(kKernels);
  ASSERT_TRUE(library.ok()) << library.status();
  ASSERT_EQ(library->kernels.size(), 2u);
  const KernelSignature& scale = library->kernels[0];
  EXPECT_EQ(scale.target, "demo.scale_rows");
  EXPECT_EQ(scale.kind, KernelKind::kBuffer);
  EXPECT_EQ(scale.function, "demo::ScaleRows");
  EXPECT_EQ(scale.symbol, "xlac.buffer_kernel.demo.scale_rows");
  EXPECT_EQ(scale.loc.line, 11);
  ASSERT_EQ(scale.operands.size(), 2u);
  EXPECT_EQ(scale.operands[0].name, "x");
  EXPECT_EQ(scale.operands[0].type, PrimitiveType::kF32);
  EXPECT_EQ(scale.operands[0].rank, 2);
  EXPECT_EQ(scale.operands[1].type, PrimitiveType::kF64);
  EXPECT_EQ(scale.operands[1].rank, -1);
  ASSERT_EQ(scale.results.size(), 2u);
  EXPECT_EQ(scale.results[0].type, PrimitiveType::kF32);
  EXPECT_EQ(scale.results[1].type, PrimitiveType::kS64);
  EXPECT_EQ(scale.results[1].rank, 1);
  // The struct's layout as Clang lays it out: bool at 0, double at 8, int16_t at 16, 24 bytes.
  EXPECT_EQ(scale.attrs_struct, "demo::ScaleAttrs");
  EXPECT_EQ(scale.attrs_size, 24);
  EXPECT_EQ(scale.attrs_align, 8);
  ASSERT_EQ(scale.attrs.size(), 3u);
  EXPECT_EQ(scale.attrs[0].name, "negate");
  EXPECT_EQ(scale.attrs[0].type, PrimitiveType::kPred);
  EXPECT_EQ(scale.attrs[1].offset, 8);
  EXPECT_EQ(scale.attrs[1].type, PrimitiveType::kF64);
  EXPECT_EQ(scale.attrs[2].offset, 16);
  EXPECT_EQ(scale.attrs[2].type, PrimitiveType::kS16);
  EXPECT_EQ(scale.attrs[2].loc.line, 7);
  EXPECT_EQ(scale.sharding, KernelShardingRule::kBatchDims);
  EXPECT_EQ(scale.batch_dims, std::vector<int64_t>{0});
  const KernelSignature& twice = library->kernels[1];
  EXPECT_EQ(twice.sharding, KernelShardingRule::kElementwise);
  EXPECT_EQ(twice.attrs_size, 0);
  EXPECT_EQ(twice.operands[0].type, PrimitiveType::kU8);
}

TEST_F(BufferKernelsTest, UnsupportedSignaturesAreErrorsAtTheDeclaration) {
  struct Case {
    std::string source;
    std::string error;
  };
  const std::vector<Case> cases = {
      {"xlac::Status F(xlac::Buffer<const float> x, int n, xlac::Buffer<float> y) { return xlac::Status::Ok(); }\n"
       "XLAC_BUFFER_KERNEL(\"t\", F);\n",
       "k.cc:2:49: error: parameter 'n' of the buffer kernel for \"t\" is not an xlac::Buffer"},
      {"struct A { const char* name; };\n"
       "void F(xlac::Buffer<const float> x, xlac::Buffer<float> y, const A& a) {}\nXLAC_BUFFER_KERNEL(\"t\", F);\n",
       "k.cc:2:24: error: attribute 'name' of the buffer kernel for \"t\" has type 'const char *'"},
      {"void F(xlac::Buffer<const float> x) {}\nXLAC_BUFFER_KERNEL(\"t\", F);\n",
       "k.cc:2:6: error: the buffer kernel for \"t\" has no result"},
      {"void F(xlac::Buffer<const float, 1> x, xlac::Buffer<float, 1> y) {}\n"
       "XLAC_BUFFER_KERNEL(\"t\", F, XLAC_SHARDING_BATCH_DIMS(1));\n",
       "error: batch dimension 1 of \"t\" is out of range for 'x', of rank 1"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<KernelLibrary> library = Compile("#include <xlac/custom_call.h>\n" + c.source);
    ASSERT_FALSE(library.ok()) << c.source;
    EXPECT_NE(std::string(library.status().message()).find(c.error), std::string::npos) << library.status().message();
  }
}

TEST_F(BufferKernelsTest, AttributesComeFromJsonAndStableHloDictionaries) {
  absl::StatusOr<KernelLibrary> library = Compile(kKernels);
  ASSERT_TRUE(library.ok()) << library.status();
  const KernelSignature& kernel = library->kernels[0];
  auto fill = [&](std::string_view config, std::string* error = nullptr) -> std::optional<std::string> {
    KernelAttrProblem problem;
    std::optional<std::string> bytes = FillKernelAttrs(kernel, config, "c", problem);
    if (error != nullptr) *error = problem.message;
    return bytes;
  };
  std::string want(24, '\0');
  want[0] = 1;
  const double factor = -0.25;
  std::memcpy(want.data() + 8, &factor, 8);
  const int16_t offset = -300;
  std::memcpy(want.data() + 16, &offset, 2);
  EXPECT_EQ(fill(R"({"negate": true, "factor": -0.25, "offset": -300})"), want);
  EXPECT_EQ(fill("{offset = -300 : i16, negate = true, factor = -2.500000e-01 : f64}"), want);
  // An integer fits a floating-point field.
  std::optional<std::string> integral = fill(R"({"negate": false, "factor": 3, "offset": 0})");
  ASSERT_TRUE(integral.has_value());
  double three = 0;
  std::memcpy(&three, integral->data() + 8, 8);
  EXPECT_EQ(three, 3.0);

  std::string error;
  EXPECT_FALSE(fill(R"({"negate": true, "factor": 1, "offset": 40000})", &error));
  EXPECT_EQ(error, "attribute 'offset' of custom call c is 40000, but the kernel's field is s16: out of range for s16");
  EXPECT_FALSE(fill(R"({"negate": 1, "factor": 1, "offset": 4})", &error));
  EXPECT_EQ(error,
            "attribute 'negate' of custom call c is 1, but the kernel's field is pred: a bool takes true or "
            "false");
  EXPECT_FALSE(fill(R"({"negate": true, "factor": "x", "offset": 4})", &error));
  EXPECT_EQ(error, "attribute 'factor' of custom call c is \"x\", but the kernel's field is f64: f64 takes a number");
  EXPECT_FALSE(fill("{negate = true, factor = 1.0 : f64, offset = 4 : i16", &error));
  EXPECT_EQ(error,
            "custom call c has a backend_config the kernel demo::ScaleRows cannot read: expected ',' or '}' at "
            "offset 52 of '{negate = true, factor = 1.0 : f64, offset = 4 : i16'");
  EXPECT_FALSE(fill("", &error));
  EXPECT_EQ(error,
            "custom call c has no attribute 'negate' in its backend_config; the kernel demo::ScaleRows for "
            "\"demo.scale_rows\" takes {negate: pred, factor: f64, offset: s16}");
}

constexpr char kProgram[] = R"(
HloModule m, entry_computation_layout={(f32[3,4]{0,1}, f64[3,2]{1,0}, u8[5]{0})->(f32[3,4]{0,1}, s64[3]{0}, u8[5]{0})}
ENTRY e {
  x = f32[3,4]{0,1} parameter(0)
  y = f64[3,2]{1,0} parameter(1)
  b = u8[5]{0} parameter(2)
  s = (f32[3,4]{0,1}, s64[3]{0}) custom-call(x, y), custom_call_target="demo.scale_rows", backend_config="{\"negate\": true, \"factor\": 0.5, \"offset\": 10}"
  o = f32[3,4]{0,1} get-tuple-element(s), index=0
  r = s64[3]{0} get-tuple-element(s), index=1
  t = u8[5]{0} custom-call(b), custom_call_target="demo.twice"
  ROOT out = (f32[3,4]{0,1}, s64[3]{0}, u8[5]{0}) tuple(o, r, t)
})";

TEST_F(BufferKernelsTest, LayoutAssignmentKeepsKernelBuffersRowMajor) {
  absl::StatusOr<KernelLibrary> library = Compile(kKernels);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<Module> module = ParseAndVerify(kProgram);
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  ASSERT_TRUE(BindCustomKernels(*module, library->kernels, diags).ok());
  ASSERT_TRUE(RunLayoutAssignment(*module).ok());
  const Instruction* s = module->entry_computation()->FindInstruction("s");
  ASSERT_NE(s, nullptr);
  // The column-major parameter reaches the kernel through a row-major copy; the kernel writes row-major, and a copy
  // gives the declared column-major result to its users.
  EXPECT_EQ(s->operand(0)->opcode(), Opcode::kCopy);
  EXPECT_EQ(s->operand(0)->shape().layout->minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(s->operand(1)->opcode(), Opcode::kParameter);
  EXPECT_EQ(s->shape().tuple_shapes[0].layout->minor_to_major, (std::vector<int64_t>{1, 0}));
  const Instruction* copied = nullptr;
  for (const Instruction* user : s->users()) {
    ASSERT_EQ(user->opcode(), Opcode::kGetTupleElement);
    if (user->IntAttr("index") == 0 && user->users().size() == 1) copied = user->users()[0];
  }
  ASSERT_NE(copied, nullptr);
  EXPECT_EQ(copied->opcode(), Opcode::kCopy);
  EXPECT_EQ(copied->shape().layout->minor_to_major, (std::vector<int64_t>{0, 1}));
  // Running layout-copies afterwards (as codegen preparation does) finds nothing left to fix.
  absl::StatusOr<bool> again = RunLayoutCopies(*module);
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
}

TEST_F(BufferKernelsTest, CompiledProgramAndInterpreterRunTheSameKernel) {
  absl::StatusOr<KernelLibrary> library = Compile(kKernels);
  ASSERT_TRUE(library.ok()) << library.status();
  std::unique_ptr<Module> module = ParseAndVerify(kProgram);
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  ASSERT_TRUE(BindCustomKernels(*module, library->kernels, diags).ok());
  for (int opt_level : {0, 2}) {
    JitOptions options;
    options.compile.opt_level = opt_level;
    options.compile.kernel_bitcode = std::make_shared<const std::string>(library->bitcode);
    options.compile.kernel_fingerprint = library->fingerprint;
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::vector<Literal> args;
    for (int p = 0; p < 3; ++p) args.emplace_back(module->entry_computation()->parameter(p)->shape());
    float* x = reinterpret_cast<float*>(args[0].mutable_raw_data());
    for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i);  // logical row-major: x[i][j] = 4 i + j
    double* y = reinterpret_cast<double*>(args[1].mutable_raw_data());
    for (int i = 0; i < 6; ++i) y[i] = 0.5 * i;
    uint8_t* b = args[2].mutable_raw_data();
    for (int i = 0; i < 5; ++i) b[i] = static_cast<uint8_t>(100 + i);
    absl::StatusOr<std::vector<Literal>> got = (*exe)->Run(args);
    ASSERT_TRUE(got.ok()) << got.status();

    absl::StatusOr<std::unique_ptr<KernelRunner>> runner = KernelRunner::Create(*library, target_);
    ASSERT_TRUE(runner.ok()) << runner.status();
    interp::InterpreterOptions interp_options;
    interp_options.elementwise_kernels = &(*runner)->kernels();
    absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*module, {args}, interp_options);
    ASSERT_TRUE(want.ok()) << want.status();
    ASSERT_EQ(got->size(), 1u);
    EXPECT_EQ(DescribeDifference((*want)[0], (*got)[0]), "") << "opt_level " << opt_level;
    // What the kernels compute: row 1 of out is -0.5 * (4 + j) + 10 + (1 + 1.5); rows are 4 elements apart; u8
    // doubling wraps.
    const Literal& out = (*got)[0].tuple_elements()[0];
    const float* o = reinterpret_cast<const float*>(out.raw_data());
    EXPECT_EQ(o[1 * 4 + 2], -0.5f * 6 + 10 + 2.5f);
    const int64_t* rows = reinterpret_cast<const int64_t*>((*got)[0].tuple_elements()[1].raw_data());
    EXPECT_EQ(rows[2], 8);
    EXPECT_EQ((*got)[0].tuple_elements()[2].raw_data()[4], static_cast<uint8_t>(208));
  }
}

TEST_F(BufferKernelsTest, KernelErrorsNameTheCallAndItsSite) {
  absl::StatusOr<KernelLibrary> library = Compile(kKernels);
  ASSERT_TRUE(library.ok()) << library.status();
  const std::string text = R"(HloModule m
ENTRY e {
  x = f32[3,0] parameter(0)
  y = f64[3,2] parameter(1)
  s = (f32[3,0], s64[3]) custom-call(x, y), custom_call_target="demo.scale_rows", backend_config={negate = false, factor = 1.0 : f64, offset = 0 : i16}
  ROOT r = s64[3] get-tuple-element(s), index=1
})";
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  SourceFile file("prog.hlo", text);
  ASSERT_TRUE(BindCustomKernels(*module, library->kernels, diags, nullptr, &file).ok());
  const std::string expected =
      "custom call 's' (target 'demo.scale_rows') at prog.hlo:5:3 failed: empty rows (3 of them)";
  JitOptions options;
  options.compile.kernel_bitcode = std::make_shared<const std::string>(library->bitcode);
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<Literal> args;
  for (int p = 0; p < 2; ++p) args.emplace_back(module->entry_computation()->parameter(p)->shape());
  absl::StatusOr<std::vector<Literal>> got = (*exe)->Run(args);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(std::string(got.status().message()), "device 0: " + expected);

  absl::StatusOr<std::unique_ptr<KernelRunner>> runner = KernelRunner::Create(*library, target_);
  ASSERT_TRUE(runner.ok()) << runner.status();
  interp::InterpreterOptions interp_options;
  interp_options.elementwise_kernels = &(*runner)->kernels();
  absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*module, {args}, interp_options);
  ASSERT_FALSE(want.ok());
  EXPECT_EQ(std::string(want.status().message()), expected);
}

}  // namespace
}  // namespace xlac::codegen::testing
