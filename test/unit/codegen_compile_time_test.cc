// What keeps LLVM's work linear in the program: dots of any shape share one GEMM function per element type, numerics
// and unit strides (codegen/ir_emitter_gemm.h), every compute kernel of the entry is a function of its own
// (codegen/ir_emitter_outline.cc), kernels that differ only in where their buffers live are merged before LLVM
// optimizes them (codegen/optimize.cc), and a large module is optimized and compiled in parts on several threads
// (codegen/split_compile.h). None of it changes a result, and the AOT object is the same bytes for any number of
// compile threads.
#include "codegen/aot.h"
#include "codegen_test_util.h"
#include "fmt/format.h"

namespace xlac::codegen::testing {
namespace {

// `layers` layers y = tanh(x . w_i + b_i), all of width `width` (identical kernels on different buffers) or each of
// its own width (nothing to merge).
std::string Mlp(int layers, int width, bool distinct_widths) {
  std::string params, body;
  std::string x = "x";
  int in = width;
  params += fmt::format("  x = f32[16,{}] parameter(0)\n", width);
  for (int i = 0; i < layers; ++i) {
    int out = distinct_widths ? width + 8 * (i + 1) : width;
    params += fmt::format("  w{0} = f32[{1},{2}] parameter({3})\n  b{0} = f32[{2}] parameter({4})\n", i, in, out,
                          2 * i + 1, 2 * i + 2);
    body += fmt::format(
        "  d{0} = f32[16,{1}] dot({2}, w{0}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}\n"
        "  bb{0} = f32[16,{1}] broadcast(b{0}), dimensions={{1}}\n"
        "  sum{0} = f32[16,{1}] add(d{0}, bb{0})\n"
        "  y{0} = f32[16,{1}] tanh(sum{0})\n",
        i, out, x);
    x = fmt::format("y{}", i);
    in = out;
  }
  return fmt::format("HloModule mlp\nENTRY e {{\n{}{}  ROOT r = f32[16,{}] copy({})\n}}\n", params, body, in, x);
}

std::vector<Literal> RandomArgs(const Module& module) {
  std::vector<Literal> args;
  const Computation* entry = module.entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), 5 + static_cast<uint64_t>(i)));
  }
  return args;
}

TEST(CodegenCompileTime, RepeatedLayersCompileOnce) {
  std::unique_ptr<Module> module = ParseAndVerify(Mlp(6, 64, /*distinct_widths=*/false));
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.keep_llvm_ir = true;
  options.compile.prebuilt_gemms = false;  // the GEMM functions' IR is inspected
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  const std::string& ir = (*exe)->llvm_ir();
  // Six layers, one GEMM and one of each kernel: the first layer's (its input is the parameter x) and the rest.
  EXPECT_EQ(CountDefinitions(ir, "xlac.gemm.f32."), 1) << ir;
  EXPECT_LE(CountDefinitions(ir, "xlac.k."), 4) << ir;
  EXPECT_GE(CountDefinitions(ir, "xlac.k."), 1) << ir;
  ExpectMatchesInterpreter(Mlp(6, 64, false));
}

TEST(CodegenCompileTime, OutliningNeverChangesBits) {
  for (bool distinct : {false, true}) {
    std::unique_ptr<Module> module = ParseAndVerify(Mlp(4, 48, distinct));
    ASSERT_NE(module, nullptr);
    std::vector<Literal> args = RandomArgs(*module);
    for (bool exact : {true, false}) {
      std::vector<Literal> results;
      for (bool outline : {false, true}) {
        JitOptions options;
        options.compile.exact = exact;
        options.compile.outline_kernels = outline;
        absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
        ASSERT_TRUE(exe.ok()) << exe.status().ToString();
        absl::StatusOr<std::vector<Literal>> out = (*exe)->Run(args);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        results.push_back(std::move((*out)[0]));
      }
      EXPECT_EQ(DescribeDifference(results[0], results[1]), "") << "exact " << exact << " distinct " << distinct;
    }
  }
}

// Dots of different shapes and operand layouts: one GEMM function per pattern of unit strides (and numerics), each
// called with the dot's sizes and strides, bit for bit the interpreter in exact mode and the specialized-shape
// blocking in the default mode (checked against the interpreter within the FMA bound by ExpectMatchesInterpreter).
TEST(CodegenCompileTime, DotsOfAnyShapeShareGemmFunctions) {
  const std::string text = R"(
HloModule shapes
ENTRY e {
  a = f32[37,300] parameter(0)
  b = f32[300,45] parameter(1)
  c = f32[45,70] parameter(2)
  x = f32[37,45] parameter(3)
  y = f32[37,70] parameter(4)
  d0 = f32[37,45] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d1 = f32[37,70] dot(x, c), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  d2 = f32[45,70] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  e2 = f32[45,37] dot(b, a), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  e3 = f32[37,45] dot(y, c), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  ROOT t = (f32[37,45], f32[37,70], f32[45,70], f32[45,37], f32[37,45]) tuple(d0, d1, d2, e2, e3)
}
)";
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  for (bool exact : {false, true}) {
    const std::string ir = CompiledLlvmIr(*module, exact);
    ASSERT_FALSE(ir.empty());
    // Five dots, four layouts of operands: row-major (two shapes), transposed lhs (d2), both transposed (e2),
    // transposed rhs (e3).
    EXPECT_EQ(CountDefinitions(ir, "xlac.gemm.f32."), 4) << ir;
    // One micro-kernel, and its twin that packs a row-major B panel as it reads it (the row-major B of d0, d1, d2).
    EXPECT_EQ(CountDefinitions(ir, "xlac.gemm.kernel."), 2) << ir;
    EXPECT_EQ(CountDefinitions(ir, R"(xlac\.gemm\.kernel\.[^(]*\.ldb\.pack\()"), 1) << ir;
  }
  ExpectMatchesInterpreter(text);
}

// Twelve layers of distinct widths: enough code for several parts.
TEST(CodegenCompileTime, PartsGiveTheSameObjectForAnyThreadCount) {
  std::unique_ptr<Module> module = ParseAndVerify(Mlp(12, 40, /*distinct_widths=*/true));
  ASSERT_NE(module, nullptr);
  std::string first;
  for (int threads : {1, 4, 2}) {
    CompileOptions options;
    options.compile_threads = threads;
    absl::StatusOr<AotResult> object = CompileAot(*module, AotOutput::kObject, options);
    ASSERT_TRUE(object.ok()) << object.status().ToString();
    if (first.empty()) {
      first = object->contents;
      EXPECT_FALSE(first.empty());
    } else {
      EXPECT_TRUE(object->contents == first) << threads << " threads give a different object";
    }
  }
  absl::StatusOr<AotResult> ir = CompileAot(*module, AotOutput::kLlvmIr, CompileOptions());
  ASSERT_TRUE(ir.ok()) << ir.status().ToString();
  // Joined again: the kernels are internal, as in a module compiled in one piece.
  EXPECT_EQ(ir->contents.find("hidden"), std::string::npos);
  EXPECT_GE(CountDefinitions(ir->contents, "xlac.k."), 12);
}

// Exact mode: bit for bit the interpreter; the default mode: the same bits on any number of compile threads (twenty
// layers of FMA GEMMs drift further from the interpreter than one op's tolerance).
TEST(CodegenCompileTime, PartsRunInTheJit) {
  std::unique_ptr<Module> module = ParseAndVerify(Mlp(20, 40, /*distinct_widths=*/true));
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = RandomArgs(*module);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  for (bool exact : {true, false}) {
    std::vector<Literal> results;
    for (int threads : {1, 2}) {
      JitOptions options;
      options.keep_llvm_ir = true;
      options.compile.prebuilt_gemms = false;  // a module large enough to be cut into parts
      options.compile.exact = exact;
      options.compile.compile_threads = threads;
      absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
      ASSERT_TRUE(exe.ok()) << exe.status().ToString();
      EXPECT_NE((*exe)->llvm_ir().find("; part 2 of"), std::string::npos);
      absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
      ASSERT_TRUE(actual.ok()) << actual.status().ToString();
      if (exact) EXPECT_EQ(DescribeDifference((*expected)[0], (*actual)[0]), "");
      results.push_back(std::move((*actual)[0]));
    }
    EXPECT_EQ(DescribeDifference(results[0], results[1]), "") << "exact " << exact;
  }
}

// Code generation no longer runs loop strength reduction (codegen/optimize.h); the GEMMs get it in the IR pipeline,
// which leaves its induction variables (lsr.iv) in the optimized IR.
TEST(CodegenCompileTime, GemmLoopsKeepStrengthReduction) {
  std::unique_ptr<Module> module = ParseAndVerify(Mlp(1, 96, false));
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.keep_llvm_ir = true;
  options.compile.prebuilt_gemms = false;  // the GEMM functions' IR is inspected
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  const std::string& ir = (*exe)->llvm_ir();
  // The blocked loop nest the shape-generic GEMMs call.
  size_t gemm = ir.find("@xlac.gemm.blocked.f32.");
  ASSERT_NE(gemm, std::string::npos) << ir;
  EXPECT_NE(ir.find("lsr.iv", gemm), std::string::npos);
}

}  // namespace
}  // namespace xlac::codegen::testing
