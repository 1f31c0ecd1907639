// The prebuilt GEMM functions (codegen/prebuilt_gemms.h): the JIT's module keeps no body of a shared GEMM function
// when the host's vector ISA has a prebuilt set (so the generator enumerates everything the emitter writes for dots
// of every element type, numerics, load and layout), and a program computes the same bits with them as with its own
// copies and as the interpreter (exact mode) on each set this host can run.
#include <cstring>
#include <memory>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "codegen/jit.h"
#include "codegen/prebuilt_gemms.h"
#include "codegen/target.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/diagnostics.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Target/TargetMachine.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

// Dots of every stride pattern the emitter tells apart (A and B transposed or not, batched), few rows (the kernel
// reading B in place), f64, bf16 operands (widened; bf16 pairs on AVX512_BF16), and a convolution (its own GEMM,
// calling the shared micro-kernel).
constexpr char kProgram[] = R"(HloModule prebuilt_gemms
ENTRY e {
  a = f32[24,40] parameter(0)
  b = f32[40,36] parameter(1)
  at = f32[40,24] parameter(2)
  bt = f32[36,40] parameter(3)
  few = f32[3,40] parameter(4)
  d0 = f64[10,20] parameter(5)
  d1 = f64[20,12] parameter(6)
  h0 = bf16[2,9,33] parameter(7)
  h1 = bf16[2,33,17] parameter(8)
  x = f32[1,6,9,9] parameter(9)
  w = f32[10,6,3,3] parameter(10)
  plain = f32[24,36] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ta = f32[24,36] dot(at, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  tb = f32[24,36] dot(a, bt), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  tab = f32[24,36] dot(at, bt), lhs_contracting_dims={0}, rhs_contracting_dims={1}
  small = f32[3,36] dot(few, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  wide = f64[10,12] dot(d0, d1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  half = f32[2,9,17] dot(h0, h1), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_contracting_dims={1}
  conv = f32[1,10,9,9] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  ROOT t = (f32[24,36], f32[24,36], f32[24,36], f32[24,36], f32[3,36], f64[10,12], f32[2,9,17], f32[1,10,9,9]) tuple(plain, ta, tb, tab, small, wide, half, conv)
})";

std::unique_ptr<Module> Program() {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kProgram);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**module, diags));
  return *std::move(module);
}

std::vector<Literal> Arguments(const Module& module) {
  std::vector<Literal> args;
  const auto& params = module.entry_computation()->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    args.push_back(interp::MakeRandomLiteral(params[i]->shape(), 100 + static_cast<int>(i)));
  }
  return args;
}

struct Compiled {
  std::vector<Literal> results;
  std::string llvm_ir;
};

Compiled CompileAndRun(const Module& module, const std::vector<Literal>& args, const std::string& cpu, bool exact,
                       bool prebuilt) {
  codegen::JitOptions options;
  options.compile.target_cpu = cpu;
  options.compile.exact = exact;
  options.compile.prebuilt_gemms = prebuilt;
  options.keep_llvm_ir = true;
  options.threads = 1;
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(module, options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (!exe.ok()) return {};
  absl::StatusOr<std::vector<Literal>> results = (*exe)->Run(args);
  EXPECT_TRUE(results.ok()) << results.status();
  if (!results.ok()) return {};
  return {*std::move(results), (*exe)->llvm_ir()};
}

// Bit for bit, tuples element by element (at least one array compared, so that an empty result cannot pass).
bool BitwiseEqual(const Literal& a, const Literal& b, int& arrays) {
  if (a.is_tuple() || b.is_tuple()) {
    if (!a.is_tuple() || !b.is_tuple() || a.tuple_elements().size() != b.tuple_elements().size()) return false;
    for (size_t i = 0; i < a.tuple_elements().size(); ++i) {
      if (!BitwiseEqual(a.tuple_elements()[i], b.tuple_elements()[i], arrays)) return false;
    }
    return true;
  }
  ++arrays;
  return a.byte_size() == b.byte_size() && a.byte_size() > 0 &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.byte_size())) == 0;
}

bool BitwiseEqual(const std::vector<Literal>& a, const std::vector<Literal>& b) {
  if (a.size() != b.size()) return false;
  int arrays = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!BitwiseEqual(a[i], b[i], arrays)) return false;
  }
  return arrays == 8;  // the program's eight results
}

// The names of the shared GEMM functions the optimized module defines (bodies of its own) and declares.
std::vector<std::string> GemmFunctions(const std::string& ir, const char* kind) {
  std::vector<std::string> names;
  std::regex pattern(std::string("(^|\\n)") + kind + "[^@\\n]*@\"?(xlac\\.gemm\\.[A-Za-z0-9_.]+)");
  for (std::sregex_iterator it(ir.begin(), ir.end(), pattern), end; it != end; ++it) names.push_back((*it)[2]);
  return names;
}

const XlacPrebuiltGemmSet* SetFor(const std::string& cpu) {
  codegen::TargetOptions options;
  options.cpu = cpu;
  absl::StatusOr<codegen::TargetInfo> target = codegen::ResolveTarget(options);
  if (!target.ok()) return nullptr;
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> machine = codegen::CreateTargetMachine(*target, 2);
  if (!machine.ok()) return nullptr;
  return codegen::FindPrebuiltGemms(*target, **machine);
}

TEST(PrebuiltGemmsTest, TableIsWellFormed) {
  int64_t count = 0;
  const XlacPrebuiltGemmSet* sets = xlac_prebuilt_gemm_sets(&count);
#if defined(__x86_64__)
  ASSERT_EQ(count, 3);  // AVX2 + FMA, AVX-512, AVX-512 with BF16
#endif
  std::set<int64_t> flags;
  for (int64_t s = 0; s < count; ++s) {
    EXPECT_TRUE(flags.insert(sets[s].flags).second) << "two sets for one ISA";
    EXPECT_GT(sets[s].count, 100) << sets[s].cpu;
    std::set<std::string> names;
    for (int64_t i = 0; i < sets[s].count; ++i) {
      EXPECT_TRUE(std::string(sets[s].functions[i].name).starts_with("xlac.gemm.")) << sets[s].functions[i].name;
      EXPECT_NE(sets[s].functions[i].address, nullptr);
      EXPECT_TRUE(names.insert(sets[s].functions[i].name).second) << sets[s].functions[i].name;
    }
  }
}

TEST(PrebuiltGemmsTest, HostModuleCompilesNoSharedGemm) {
  if (SetFor("host") == nullptr) GTEST_SKIP() << "no prebuilt set for this host's vector ISA";
  std::unique_ptr<Module> module = Program();
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = Arguments(*module);
  for (bool exact : {false, true}) {
    SCOPED_TRACE(exact ? "exact" : "default");
    Compiled own = CompileAndRun(*module, args, "host", exact, /*prebuilt=*/false);
    Compiled prebuilt = CompileAndRun(*module, args, "host", exact, /*prebuilt=*/true);
    EXPECT_FALSE(GemmFunctions(own.llvm_ir, "define").empty());
    // Every shared function the emitter wrote for these dots came from the table: a name it lacks would still be
    // defined here.
    EXPECT_EQ(GemmFunctions(prebuilt.llvm_ir, "define"), std::vector<std::string>());
    EXPECT_FALSE(GemmFunctions(prebuilt.llvm_ir, "declare").empty());
    EXPECT_TRUE(BitwiseEqual(own.results, prebuilt.results));
  }
}

TEST(PrebuiltGemmsTest, EverySetThisHostRunsMatchesTheInterpreter) {
  std::unique_ptr<Module> module = Program();
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args = Arguments(*module);
  absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*module, {args});
  ASSERT_TRUE(want.ok()) << want.status();
  codegen::TargetOptions host_options;
  absl::StatusOr<codegen::TargetInfo> host = codegen::ResolveTarget(host_options);
  ASSERT_TRUE(host.ok());
  absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> host_machine = codegen::CreateTargetMachine(*host, 2);
  ASSERT_TRUE(host_machine.ok());
  int runs = 0;
  for (const char* cpu : {"x86-64-v3", "x86-64-v4", "host"}) {
    const XlacPrebuiltGemmSet* set = SetFor(cpu);
    // A named CPU's set runs here only when the host has its features.
    if (set == nullptr || !(*host_machine)->getMCSubtargetInfo()->checkFeatures(set->required_features)) continue;
    SCOPED_TRACE(cpu);
    Compiled got = CompileAndRun(*module, args, cpu, /*exact=*/true, /*prebuilt=*/true);
    EXPECT_EQ(GemmFunctions(got.llvm_ir, "define"), std::vector<std::string>());
    EXPECT_TRUE(BitwiseEqual(got.results, *want));
    ++runs;
  }
#if defined(__x86_64__)
  if (host->has_fma) EXPECT_GE(runs, 2);
#endif
}

}  // namespace
}  // namespace xlac
