// dot compiled with the JIT against the interpreter: bit for bit in exact mode, within the fused multiply-add bound
// in the default mode (ExpectDot). The tiled GEMM path (f32/f64/bf16/f16 matmuls in every layout, batched,
// matrix-vector, sizes on and off the register-tile and cache-block edges) and the loop-nest path (other element
// types, several contracting dimensions), plus the tiled path turned off.
#include <array>
#include <bit>
#include <cmath>
#include <limits>

#include "codegen_test_util.h"
#include "fmt/format.h"
#include "gemm_numerics_test_util.h"
#include "ir/status_macros.h"
#include "ir/tpu_numerics.h"

namespace xlac::codegen::testing {
namespace {

std::vector<Literal> RandomArguments(const Module& module, uint64_t seed) {
  std::vector<Literal> args;
  const Computation* entry = module.entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), seed + static_cast<uint64_t>(i)));
  }
  return args;
}

absl::StatusOr<std::vector<Literal>> CompileAndRun(const Module& module, const std::vector<Literal>& args, bool exact) {
  JitOptions options;
  options.compile.exact = exact;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<JitExecutable> exe, JitExecutable::Compile(module, options));
  return exe->Run(args);
}

// Exact mode (CompileOptions::exact) against the interpreter, bit for bit.
void ExpectExactMatch(const std::string& text, std::vector<Literal> args = {}, uint64_t seed = 7) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return;
  if (args.empty()) args = RandomArguments(*module, seed);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  absl::StatusOr<std::vector<Literal>> exact = CompileAndRun(*module, args, true);
  ASSERT_TRUE(expected.ok() && exact.ok()) << expected.status().ToString() << exact.status().ToString() << text;
  for (size_t d = 0; d < exact->size(); ++d) {
    std::string difference = DescribeDifference((*expected)[d], (*exact)[d]);
    EXPECT_TRUE(difference.empty()) << "exact mode: " << difference << "\n" << text;
  }
}

// Both numerics modes against the interpreter. Exact mode: bit for bit. Default mode (fused multiply-adds, still in
// k order): every output within |C - C_interp| <= 2 gamma_k sum |a||b|, gamma_k = k u / (1 - k u), since each of the
// two sums is within gamma_k sum |a||b| of the exact one; narrow results add their own rounding. sum |a||b| is the
// interpreter's result on the magnitudes of the arguments, so every output of `text` must be a dot of parameters
// with at most `k` products per element. Returns the default-mode results (empty on failure).
std::vector<Literal> ExpectDot(const std::string& text, int64_t k, std::vector<Literal> args = {}, uint64_t seed = 7) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return {};
  if (args.empty()) args = RandomArguments(*module, seed);
  ExpectExactMatch(text, args);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  std::vector<Literal> magnitude_args;
  for (const Literal& a : args) magnitude_args.push_back(Magnitudes(a));
  absl::StatusOr<std::vector<Literal>> magnitudes = interp::Evaluate(*module, {magnitude_args});
  absl::StatusOr<std::vector<Literal>> fast = CompileAndRun(*module, args, false);
  EXPECT_TRUE(expected.ok() && magnitudes.ok() && fast.ok()) << text;
  if (!expected.ok() || !magnitudes.ok() || !fast.ok()) return {};
  for (size_t d = 0; d < fast->size(); ++d) {
    std::string outside = OutsideBound((*expected)[d], (*magnitudes)[d], (*fast)[d], k);
    EXPECT_TRUE(outside.empty()) << "default mode: " << outside << "\n" << text;
  }
  return *std::move(fast);
}

std::string Layout(bool column_major) { return column_major ? "{0,1}" : "{1,0}"; }

// lhs [m,k] (or [k,m] with lhs_transposed), rhs [k,n] (or [n,k]), result [m,n], each row- or column-major.
std::string Matmul(const std::string& type, int64_t m, int64_t k, int64_t n, bool lhs_transposed = false,
                   bool rhs_transposed = false, bool lhs_col = false, bool rhs_col = false, bool out_col = false) {
  std::string lhs = lhs_transposed ? fmt::format("{}[{},{}]", type, k, m) : fmt::format("{}[{},{}]", type, m, k);
  std::string rhs = rhs_transposed ? fmt::format("{}[{},{}]", type, n, k) : fmt::format("{}[{},{}]", type, k, n);
  return fmt::format(R"(
HloModule m
ENTRY e {{
  a = {}{} parameter(0)
  b = {}{} parameter(1)
  ROOT d = {}[{},{}]{} dot(a, b), lhs_contracting_dims={{{}}}, rhs_contracting_dims={{{}}}
}})",
                     lhs, Layout(lhs_col), rhs, Layout(rhs_col), type, m, n, Layout(out_col), lhs_transposed ? 0 : 1,
                     rhs_transposed ? 1 : 0);
}

TEST(CodegenDot, SquareAndPrimeSizesF32F64) {
  for (const char* type : {"f32", "f64"}) {
    for (int64_t s : {1, 2, 3, 7, 8, 16, 17, 31, 32, 33, 64, 97}) {
      SCOPED_TRACE(fmt::format("{} {}", type, s));
      ExpectDot(Matmul(type, s, s, s), s, {}, static_cast<uint64_t>(s));
    }
  }
}

TEST(CodegenDot, RectangularEdgeTiles) {
  // m, k, n around the register tile (8 x 32 f32, 8 x 16 f64 on AVX-512; 6 x 16 / 6 x 8 otherwise) and the cache
  // blocks (mc 96 / 72, kc 256, nc 512 / 1024 for f32, half for f64), including k blocks carried through the output.
  const int64_t shapes[][3] = {
      {1, 1, 1},     {1, 5, 40},   {40, 5, 1},    {9, 1, 33},   {5, 3, 2},       {13, 29, 37},   {95, 7, 31},
      {97, 11, 65},  {8, 257, 32}, {3, 300, 5},   {17, 513, 9}, {100, 260, 530}, {193, 3, 17},   {1, 600, 1},
      {2, 19, 1000}, {6, 256, 16}, {12, 257, 48}, {73, 40, 17}, {7, 9, 1025},    {150, 520, 33}, {25, 3, 1100}};
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (const auto& s : shapes) {
      SCOPED_TRACE(fmt::format("{} m={} k={} n={}", type, s[0], s[1], s[2]));
      ExpectDot(Matmul(type, s[0], s[1], s[2]), s[1], {}, static_cast<uint64_t>(s[0] * 7 + s[2]));
    }
  }
}

// A call of the GEMM with several n blocks packs its A rows once, every k block of them, and reuses the panels for
// the later n blocks (codegen/ir_emitter_gemm.cc, kMaxReusedAPackBytes): m, k and n blocks with edges, and a shape
// large enough that its rows are split across threads (calls whose rows start past 0, each with all n blocks).
TEST(CodegenDot, APanelsReusedAcrossColumnBlocks) {
  const int64_t shapes[][3] = {{200, 520, 1060}, {616, 270, 530}};
  for (const char* type : {"f32", "f64"}) {
    for (const auto& s : shapes) {
      SCOPED_TRACE(fmt::format("{} m={} k={} n={}", type, s[0], s[1], s[2]));
      ExpectDot(Matmul(type, s[0], s[1], s[2]), s[1], {}, static_cast<uint64_t>(s[0] + s[2]));
    }
  }
}

// B with contiguous columns is packed by the first kernel call on each full-width panel (the first row tile of a
// call's rows), which computes from B as stored while it writes the panel; the later row tiles and row blocks read
// the panel (codegen/ir_emitter_gemm.cc, packing_kernel). Rows over three row blocks (and split across threads),
// k over two blocks, n over two column blocks with a narrow edge panel (packed by the packer), in every element type
// the kernels read in place (bf16 and f16 widened).
TEST(CodegenDot, FirstCallPacksTheBPanel) {
  const int64_t shapes[][3] = {{250, 300, 1100}, {17, 257, 64}, {24, 40, 33}};
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (const auto& s : shapes) {
      SCOPED_TRACE(fmt::format("{} m={} k={} n={}", type, s[0], s[1], s[2]));
      ExpectDot(Matmul(type, s[0], s[1], s[2]), s[1], {}, static_cast<uint64_t>(s[0] * 3 + s[2]));
    }
  }
}

// Dots with one or two register tiles of rows read B in place through a kernel of their own (EmitGemmBody: every
// B element is used once or twice, packing would copy all of it): decode-like shapes with k over one cache block, n
// over two with a narrow edge panel (packed), rows on and off the tile, and a transposed B (packed as before).
TEST(CodegenDot, FewRowsReadBInPlace) {
  for (const char* type : {"f32", "f64"}) {
    for (int64_t m : {1, 5, 8, 13, 16}) {
      SCOPED_TRACE(fmt::format("{} m={}", type, m));
      ExpectDot(Matmul(type, m, 300, 1030), 300, {}, static_cast<uint64_t>(m));
      ExpectDot(Matmul(type, m, 70, 45, false, /*rhs_transposed=*/true), 70, {}, static_cast<uint64_t>(m + 1));
    }
  }
  auto in_place_kernels = [](const std::string& text) {
    std::unique_ptr<Module> module = ParseAndVerify(text);
    return module ? CountDefinitions(CompiledLlvmIr(*module), "xlac\\.gemm\\.kernel\\.[^(]*\\.ldb\\(") : -1;
  };
  EXPECT_EQ(in_place_kernels(Matmul("f32", 4, 64, 256)), 1);
  EXPECT_EQ(in_place_kernels(Matmul("f32", 64, 64, 256)), 0);
  EXPECT_EQ(in_place_kernels(Matmul("f32", 4, 64, 256, false, /*rhs_transposed=*/true)), 0);
}

TEST(CodegenDot, TransposedOperandsAndLayouts) {
  for (const char* type : {"f32", "f64", "bf16", "f16"}) {
    for (int mask = 0; mask < 32; ++mask) {
      bool lt = mask & 1, rt = mask & 2, lc = mask & 4, rc = mask & 8, oc = mask & 16;
      SCOPED_TRACE(fmt::format("{} mask {}", type, mask));
      ExpectDot(Matmul(type, 37, 45, 29, lt, rt, lc, rc, oc), 45, {}, static_cast<uint64_t>(mask));
    }
  }
}

// Operands contiguous along k (rhs [n, k], a column-major lhs, f64's row-major lhs) pack whole panels as blocks
// transposed in registers (codegen/ir_emitter_gemm.cc, StridedGemmPacker): panels of 32 and 16 columns with edges
// beside them, k in whole blocks and a remainder, and k beyond one cache block (k0 > 0).
TEST(CodegenDot, PanelsContiguousAlongKMoveAsTransposedBlocks) {
  struct Case {
    int64_t m, k, n;
  };
  for (const char* type : {"f32", "f64"}) {
    for (Case c : {Case{19, 45, 70}, Case{40, 300, 33}, Case{17, 16, 64}}) {
      for (int mask = 0; mask < 4; ++mask) {
        bool lhs_transposed = mask & 1, lhs_col = mask & 2;
        SCOPED_TRACE(fmt::format("{} {}x{}x{} mask {}", type, c.m, c.k, c.n, mask));
        ExpectDot(Matmul(type, c.m, c.k, c.n, lhs_transposed, /*rhs_transposed=*/true, lhs_col), c.k, {},
                  static_cast<uint64_t>(c.k + mask));
      }
    }
  }
}

TEST(CodegenDot, BatchedAndMatrixVector) {
  for (const std::string& t : {"f32", "f64", "bf16", "f16"}) {
    SCOPED_TRACE(t);
    ExpectDot(WithType(R"(
HloModule m
ENTRY e {
  a = $T[3,19,41] parameter(0)
  b = $T[3,41,35] parameter(1)
  c = $T[19,2,3,23] parameter(2)
  d = $T[3,23,2,10]{1,3,0,2} parameter(3)
  v = $T[41] parameter(4)
  w = $T[19] parameter(5)
  e = $T[19,41]{0,1} parameter(6)
  bmm = $T[3,19,35] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}
  b2 = $T[2,3,19,10]{2,3,0,1} dot(c, d), lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={2,0}, rhs_contracting_dims={1}
  b3 = $T[2,3,19,10]{1,0,3,2} dot(c, d), lhs_batch_dims={1,2}, lhs_contracting_dims={3}, rhs_batch_dims={2,0}, rhs_contracting_dims={1}
  mv = $T[19] dot(e, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  vm = $T[41] dot(w, e), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  mv3 = $T[3,19] dot(a, v), lhs_contracting_dims={2}, rhs_contracting_dims={0}
  vv = $T[] dot(v, v), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  outer = $T[19,41] dot(w, v), lhs_contracting_dims={}, rhs_contracting_dims={}
  ROOT t = ($T[3,19,35], $T[2,3,19,10]{2,3,0,1}, $T[2,3,19,10]{1,0,3,2}, $T[19], $T[41], $T[3,19], $T[], $T[19,41]) tuple(bmm, b2, b3, mv, vm, mv3, vv, outer)
})",
                       t),
              41);
  }
}

TEST(CodegenDot, OtherTypesUseTheLoopNest) {
  // bf16/f16 accumulate in f32 and round once; integers wrap; mixed operand types convert first.
  for (const char* type : {"bf16", "f16", "s32", "s8", "u8", "s64"}) {
    for (const auto& s : {std::array<int64_t, 3>{7, 33, 21}, std::array<int64_t, 3>{17, 300, 9}}) {
      SCOPED_TRACE(fmt::format("{} m={} k={} n={}", type, s[0], s[1], s[2]));
      ExpectDot(Matmul(type, s[0], s[1], s[2], true, false, false, true, true), s[1]);
    }
  }
  ExpectDot(R"(
HloModule m
ENTRY e {
  a = bf16[40,50] parameter(0)
  b = f32[50,33] parameter(1)
  c = f32[2,3,4] parameter(2)
  d = f32[4,3,5] parameter(3)
  mixed = f32[40,33] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  two_k = f32[2,5] dot(c, d), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}
  ROOT t = (f32[40,33], f32[2,5]) tuple(mixed, two_k)
})",
            50);
}

// Signed zeros, infinities and NaNs: the tiled kernel starts from +0 and adds each product in order, so -0 products
// give +0, inf - inf gives NaN, and so on exactly as in the interpreter.
TEST(CodegenDot, SpecialValuesKeepInterpreterRounding) {
  const int64_t m = 11, k = 300, n = 35;
  std::string text = Matmul("f32", m, k, n);
  Literal a = interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {m, k}), 3);
  Literal b = interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {k, n}), 4);
  const float specials[] = {
      -0.0f, 0.0f,  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(), 1e-40f,
      3e38f, -3e38f};
  for (int64_t i = 0; i < m * k; i += 5) a.Set<float>(i, specials[i % 7]);
  for (int64_t i = 0; i < k * n; i += 7) b.Set<float>(i, specials[(i / 7) % 7]);
  // Row 0 of A all -0: every product is -0 or +0 and the sum must be +0.
  for (int64_t j = 0; j < k; ++j) a.Set<float>(j, -0.0f);
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  ExpectExactMatch(text, std::move(args));
}

// Large values that cancel: in exact mode any reassociation or fused multiply-add would change the bits; the default
// mode does fuse (some element differs from the interpreter) and stays within the bound.
TEST(CodegenDot, OrderSensitiveSums) {
  const int64_t m = 16, k = 520, n = 64;
  Literal a(Shape::Array(PrimitiveType::kF32, {m, k}));
  Literal b(Shape::Array(PrimitiveType::kF32, {k, n}));
  for (int64_t i = 0; i < m * k; ++i)
    a.Set<float>(i, (i % 3 == 0 ? 1e8f : 1.0f) * (i % 2 ? -1.0f : 1.0f) + 0.1f * (i % 13));
  for (int64_t i = 0; i < k * n; ++i) b.Set<float>(i, 1.0f + 1e-7f * static_cast<float>(i % 101));
  std::vector<Literal> args;
  args.push_back(std::move(a));
  args.push_back(std::move(b));
  std::string text = Matmul("f32", m, k, n);
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  ASSERT_TRUE(expected.ok());
  std::vector<Literal> fast = ExpectDot(text, k, std::move(args));
  ASSERT_EQ(fast.size(), 1u);
  EXPECT_FALSE(fast[0] == (*expected)[0]) << "the default mode should use fused multiply-adds";
}

TEST(CodegenDot, DotInsideWhileAndConstants) {
  ExpectExactMatch(R"(
HloModule m
cond {
  p = (s32[], f32[40,40]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  three = s32[] constant(3)
  ROOT lt = pred[] compare(i, three), direction=LT
}
body {
  p = (s32[], f32[40,40]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[40,40] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = f32[40,40] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (s32[], f32[40,40]) tuple(i1, y)
}
ENTRY e {
  x = f32[40,40] parameter(0)
  c = f32[2,3] constant({{1.5, -2, 0.25}, {3, 0.5, -1}})
  cc = f32[2,2] dot(c, c), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  c3 = f32[3] constant({1.5, -2, 0.25})
  cb = f32[40,3] broadcast(c3), dimensions={1}
  zero = s32[] constant(0)
  t = (s32[], f32[40,40]) tuple(zero, x)
  w = (s32[], f32[40,40]) while(t), condition=cond, body=body
  r = f32[40,40] get-tuple-element(w), index=1
  d = f32[40,3] dot(r, cb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t2 = (f32[40,3], f32[2,2]) tuple(d, cc)
})");
}

// The fast path is really taken for f32/f64/bf16/f16 matmuls (and not for s32), with fused multiply-adds in the
// default mode only, and turning it off still matches.
TEST(CodegenDot, TiledPathIsUsedAndCanBeTurnedOff) {
  for (const char* type : {"f32", "f64", "bf16", "f16", "s32"}) {
    for (bool tiled : {true, false}) {
      for (bool exact : {true, false}) {
        SCOPED_TRACE(fmt::format("{} tiled={} exact={}", type, tiled, exact));
        std::unique_ptr<Module> module = ParseAndVerify(Matmul(type, 20, 30, 40));
        ASSERT_NE(module, nullptr);
        JitOptions options;
        options.keep_llvm_ir = true;
        options.compile.prebuilt_gemms = false;  // the GEMM functions' IR is inspected
        options.compile.tiled_dot = tiled;
        options.compile.exact = exact;
        absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
        ASSERT_TRUE(exe.ok()) << exe.status().ToString();
        const std::string& ir = (*exe)->llvm_ir();
        const bool gemm = tiled && std::string(type) != "s32";
        EXPECT_EQ(ir.find("xlac.gemm.kernel") != std::string::npos, gemm);
        // bf16 in the default mode on AVX512_BF16: vdpbf16ps instead of FMAs (Bf16DotsOnAvx512Bf16...).
        const bool pairs = gemm && !exact && std::string(type) == "bf16" && HostHasAvx512Bf16();
        EXPECT_EQ(ir.find("llvm.x86.avx512bf16.dpbf16ps") != std::string::npos, pairs);
        if (exact) EXPECT_EQ(ir.find("llvm.fma"), std::string::npos);
        if (gemm && !exact && !pairs) EXPECT_NE(ir.find("llvm.fma"), std::string::npos);
        std::vector<Literal> args;
        args.push_back(interp::MakeRandomLiteral((*exe)->parameter_shapes()[0], 5));
        args.push_back(interp::MakeRandomLiteral((*exe)->parameter_shapes()[1], 6));
        absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
        absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
        ASSERT_TRUE(expected.ok() && actual.ok());
        if (exact) {
          EXPECT_TRUE((*actual)[0] == (*expected)[0]) << DescribeDifference((*expected)[0], (*actual)[0]);
          continue;
        }
        std::vector<Literal> magnitude_args;
        for (const Literal& a : args) magnitude_args.push_back(Magnitudes(a));
        absl::StatusOr<std::vector<Literal>> magnitudes = interp::Evaluate(*module, {magnitude_args});
        ASSERT_TRUE(magnitudes.ok());
        std::string outside = OutsideBound((*expected)[0], (*magnitudes)[0], (*actual)[0], 30);
        EXPECT_TRUE(outside.empty()) << outside;
      }
    }
  }
}

// bf16 and f16 operands with an f32 result (preferred_element_type=f32, PyTorch/XLA's and JAX's mixed-precision
// matmuls) take the GEMM, widening the operands exactly as they are packed: bit for bit the interpreter in exact
// mode, within the f32 GEMM's bound by default. A transposed rhs (torch's x @ W^T) and a batch included.
TEST(CodegenDot, MixedPrecisionDotsToF32UseTheGemm) {
  for (const char* type : {"bf16", "f16"}) {
    for (bool exact : {true, false}) {
      SCOPED_TRACE(fmt::format("{} exact={}", type, exact));
      std::unique_ptr<Module> module = ParseAndVerify(fmt::format(R"(HloModule m
ENTRY e {{
  a = {0}[37,70] parameter(0)
  w = {0}[45,70] parameter(1)
  x = {0}[3,9,70] parameter(2)
  y = {0}[3,70,11] parameter(3)
  d = f32[37,45] dot(a, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{1}}
  b = f32[3,9,11] dot(x, y), lhs_batch_dims={{0}}, rhs_batch_dims={{0}}, lhs_contracting_dims={{2}}, rhs_contracting_dims={{1}}
  ROOT t = (f32[37,45], f32[3,9,11]) tuple(d, b)
}})",
                                                                  type));
      ASSERT_NE(module, nullptr);
      JitOptions options;
      options.keep_llvm_ir = true;
      options.compile.prebuilt_gemms = false;  // the GEMM functions' IR is inspected
      options.compile.exact = exact;
      absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
      ASSERT_TRUE(exe.ok()) << exe.status().ToString();
      EXPECT_NE((*exe)->llvm_ir().find("xlac.gemm.kernel"), std::string::npos);
      std::vector<Literal> args;
      for (int64_t i = 0; i < 4; ++i) {
        args.push_back(interp::MakeRandomLiteral((*exe)->parameter_shapes()[static_cast<size_t>(i)], 11 + i));
      }
      absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
      absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
      ASSERT_TRUE(expected.ok() && actual.ok());
      for (size_t i = 0; i < 2; ++i) {
        const Literal& want = (*expected)[0].tuple_elements()[i];
        const Literal& got = (*actual)[0].tuple_elements()[i];
        if (exact) {
          EXPECT_TRUE(got == want) << DescribeDifference(want, got);
          continue;
        }
        std::vector<Literal> magnitude_args;
        for (const Literal& a : args) magnitude_args.push_back(Magnitudes(a));
        absl::StatusOr<std::vector<Literal>> magnitudes = interp::Evaluate(*module, {magnitude_args});
        ASSERT_TRUE(magnitudes.ok());
        std::string outside = OutsideBound(want, (*magnitudes)[0].tuple_elements()[i], got, 70);
        EXPECT_TRUE(outside.empty()) << outside;
      }
    }
  }
}

// vdpbf16ps as measured on AMD Zen 4/5 and as Intel documents it: per 32-bit lane, acc += a[2i+1] * b[2i+1], then
// acc += a[2i] * b[2i], each one fused multiply-add (a bf16 product is exact in f32) with denormal operands and
// results flushed to zero (signed).
float FlushDenormal(float x) { return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x; }
float DotPairStep(float acc, float a0, float a1, float b0, float b1) {
  acc = FlushDenormal(std::fmaf(FlushDenormal(a1), FlushDenormal(b1), FlushDenormal(acc)));
  return FlushDenormal(std::fmaf(FlushDenormal(a0), FlushDenormal(b0), acc));
}

// Random bf16 values (bf16 bits in an f32 or bf16 literal); with `tiny_rows`, every fifth row scaled to f32
// denormals (flushed as operands) and the next one to values whose partial sums are denormal now and then.
Literal RandomBf16Values(const Shape& shape, uint64_t seed, bool tiny_rows) {
  Literal lit = interp::MakeRandomLiteral(shape, seed);
  const int64_t minor = shape.dimensions.back();
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    float v = RoundToBf16(static_cast<float>(lit.GetAsDouble(i)));
    if (tiny_rows && (i / minor) % 5 == 3) v = RoundToBf16(v * 0x1p-130f);
    if (tiny_rows && (i / minor) % 5 == 4) v = RoundToBf16(v * 0x1p-120f);
    lit.SetFromDouble(i, v);
  }
  return lit;
}

// On a CPU with AVX512_BF16 the default mode runs bf16 dots (and f32 dots under TPU numerics at DEFAULT precision)
// on vdpbf16ps over packed pairs: every result equals the pair model above bit for bit, for operands in every layout
// (the packers' row-contiguous, k-contiguous transposed-block and element-by-element paths), odd k, k beyond one
// cache block (kc 512), and edge tiles. A wrong pairing or a pair packed in the wrong order changes low bits here,
// where the error bound of ExpectDot would not notice. bf16 dots with one or two register tiles of rows (16) and B
// row-major read B in place instead, widened to f32, one fused multiply-add per k in order (no flushing): that model.
TEST(CodegenDot, Bf16DotsOnAvx512Bf16MatchThePairModel) {
  if (!HostHasAvx512Bf16()) GTEST_SKIP() << "the host has no AVX512_BF16";
  struct Case {
    int64_t m, k, n;
    bool lhs_transposed, rhs_transposed;
  };
  const Case cases[] = {{37, 45, 29, false, false},   {37, 45, 29, true, true},   {19, 64, 70, false, true},
                        {40, 1100, 33, false, false}, {40, 1100, 33, true, true}, {9, 1, 40, false, false},
                        {100, 33, 530, false, false}, {8, 96, 64, false, true},   {16, 600, 70, false, false},
                        {3, 300, 64, true, false}};
  for (bool tpu : {false, true}) {
    for (const Case& c : cases) {
      const std::string type = tpu ? "f32" : "bf16";
      SCOPED_TRACE(
          fmt::format("{} {}x{}x{} transposed {} {}", type, c.m, c.k, c.n, c.lhs_transposed, c.rhs_transposed));
      std::unique_ptr<Module> module = ParseAndVerify(Matmul(type, c.m, c.k, c.n, c.lhs_transposed, c.rhs_transposed));
      ASSERT_NE(module, nullptr);
      const Computation* entry = module->entry_computation();
      std::vector<Literal> args = {RandomBf16Values(entry->parameter(0)->shape(), static_cast<uint64_t>(c.k), true),
                                   RandomBf16Values(entry->parameter(1)->shape(), static_cast<uint64_t>(c.n), false)};
      JitOptions options;
      options.compile.tpu_numerics = tpu;
      absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
      ASSERT_TRUE(exe.ok()) << exe.status();
      absl::StatusOr<std::vector<Literal>> got = (*exe)->Run(args);
      ASSERT_TRUE(got.ok()) << got.status();
      auto a = [&](int64_t i, int64_t kk) {
        return static_cast<float>(args[0].GetAsDouble(c.lhs_transposed ? kk * c.m + i : i * c.k + kk));
      };
      auto b = [&](int64_t kk, int64_t j) {
        return static_cast<float>(args[1].GetAsDouble(c.rhs_transposed ? j * c.k + kk : kk * c.n + j));
      };
      int64_t flushed = 0;
      const bool in_place = !tpu && c.m <= 16 && !c.rhs_transposed;
      for (int64_t i = 0; i < c.m; ++i) {
        for (int64_t j = 0; j < c.n; ++j) {
          float acc = 0;
          double exact = 0;
          for (int64_t kk = 0; in_place && kk < c.k; ++kk) acc = std::fmaf(a(i, kk), b(kk, j), acc);
          for (int64_t kk = 0; !in_place && kk < c.k; kk += 2) {
            const bool pair = kk + 1 < c.k;
            acc = DotPairStep(acc, a(i, kk), pair ? a(i, kk + 1) : 0.0f, b(kk, j), pair ? b(kk + 1, j) : 0.0f);
            exact += static_cast<double>(a(i, kk)) * b(kk, j) +
                     (pair ? static_cast<double>(a(i, kk + 1)) * b(kk + 1, j) : 0);
          }
          if (acc == 0 && exact != 0) ++flushed;
          const float want = tpu ? acc : RoundToBf16(acc);
          const float have = static_cast<float>((*got)[0].GetAsDouble(i * c.n + j));
          ASSERT_EQ(std::bit_cast<uint32_t>(want), std::bit_cast<uint32_t>(have))
              << "C[" << i << "," << j << "]: model " << want << ", compiled " << have;
        }
      }
      // The denormal rows' operands are flushed.
      if (!c.lhs_transposed && c.m > 3 && !in_place) EXPECT_GT(flushed, 0);
    }
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
