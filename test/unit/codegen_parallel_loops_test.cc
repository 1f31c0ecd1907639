// Parallel loops inside a device (codegen/ir_emitter_parallel.cc) and row groups (codegen/row_groups.h): large loop
// nests, reductions, GEMMs and convolutions run on the device's threads, chains of row kernels run row by row, and
// neither changes a result: exact mode stays bit for bit the interpreter's, and in both modes 4 threads and row
// groups give the same bits as one thread emitting kernel by kernel.
#include "codegen_test_util.h"
#include "fmt/format.h"

namespace xlac::codegen::testing {
namespace {

// Checks `text` in both numerics modes on 1 and 4 threads, with and without parallel loops and row groups, and that
// its compiled code does (or does not) contain a parallel loop.
void ExpectParallelMatches(const std::string& text, bool expect_parallel = true, int opt_level = 2) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return;
  const Computation* entry = module->entry_computation();
  std::vector<Literal> args;
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), 11 + static_cast<uint64_t>(i)));
  }
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  struct Config {
    int threads;
    bool parallel;
    bool row_groups;
  };
  // The first configuration is the plain kernel-by-kernel code every other one must match bit for bit.
  const Config configs[] = {{1, false, false}, {1, true, true}, {4, true, true}};
  for (bool exact : {true, false}) {
    std::vector<Literal> results;
    for (const Config& config : configs) {
      JitOptions options;
      options.compile.opt_level = opt_level;
      options.compile.exact = exact;
      options.compile.parallel = config.parallel;
      options.compile.row_groups = config.row_groups;
      options.threads = config.threads;
      options.keep_llvm_ir = true;
      std::string mode = fmt::format("{} mode, {} threads, parallel {}, row groups {}", exact ? "exact" : "default",
                                     config.threads, config.parallel, config.row_groups);
      absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
      ASSERT_TRUE(exe.ok()) << mode << ": " << exe.status().ToString() << "\n" << text;
      const std::string& ir = (*exe)->llvm_ir();
      bool parallel = ir.find("@xlac_rt_device_parallel_for(") != std::string::npos ||
                      ir.find("@xlac_rt_device_parallel_split(") != std::string::npos;
      EXPECT_EQ(parallel, expect_parallel && config.parallel) << mode << "\n" << text;
      // Twice: the second run reuses the buffers and the (now warm) workers.
      for (int run = 0; run < 2; ++run) {
        absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
        ASSERT_TRUE(actual.ok()) << mode << ": " << actual.status().ToString();
        ASSERT_EQ(actual->size(), 1u);
        std::string difference = DescribeDifference((*expected)[0], (*actual)[0], !exact);
        EXPECT_TRUE(difference.empty()) << mode << ": " << difference << "\n" << text;
        if (run == 0) results.push_back(std::move((*actual)[0]));
      }
      std::string difference = DescribeDifference(results.front(), results.back());
      EXPECT_TRUE(difference.empty()) << mode << " against one thread, kernel by kernel: " << difference;
    }
  }
}

TEST(CodegenParallelLoops, LoopFusionOverManyShapes) {
  for (const char* shape : {"f32[256,384]", "f32[100003]", "f32[3,5,4099]", "f32[1,70000]", "f32[40,30,50]"}) {
    ExpectParallelMatches(WithType(R"(
HloModule m
ENTRY e {
  a = $T parameter(0)
  b = $T parameter(1)
  t = $T tanh(a)
  x = $T exponential(b)
  m = $T multiply(t, x)
  ROOT r = $T add(m, a)
})",
                                   shape));
  }
}

TEST(CodegenParallelLoops, BroadcastAndTransposeInAFusion) {
  ExpectParallelMatches(R"(
HloModule m
ENTRY e {
  a = f32[96,512]{0,1} parameter(0)
  v = f32[512] parameter(1)
  bv = f32[96,512] broadcast(v), dimensions={1}
  t = f32[512,96] transpose(a), dimensions={1,0}
  tt = f32[96,512] transpose(t), dimensions={1,0}
  ROOT r = f32[96,512] subtract(tt, bv)
})");
}

TEST(CodegenParallelLoops, UnfusedElementwiseAtO0) {
  ExpectParallelMatches(R"(
HloModule m
ENTRY e {
  a = f32[128,512] parameter(0)
  b = f32[128,512] parameter(1)
  p = pred[128,512] compare(a, b), direction=GT
  s = f32[128,512] select(p, a, b)
  ROOT r = f32[128,512] multiply(s, b)
})",
                        true, /*opt_level=*/0);
}

TEST(CodegenParallelLoops, RowAndColumnReductions) {
  // Row: the minor dimension is reduced; column: a major one, so threads split the kept minor dimension.
  for (const char* text : {R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[256,384] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[256] reduce(a, z), dimensions={1}, to_apply=add
})",
                           R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[300,257] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[257] reduce(a, z), dimensions={0}, to_apply=add
})",
                           R"(
HloModule m
mx { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] maximum(x, y) }
ENTRY e {
  a = f32[16,64,96] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[16,96] reduce(a, z), dimensions={1}, to_apply=mx
})",
                           R"(
HloModule m
add { x = s32[] parameter(0)  y = s32[] parameter(1)  ROOT s = s32[] add(x, y) }
ENTRY e {
  a = s32[64,1024] parameter(0)
  z = s32[] constant(3)
  ROOT r = s32[64] reduce(a, z), dimensions={1}, to_apply=add
})"}) {
    ExpectParallelMatches(text);
  }
}

TEST(CodegenParallelLoops, VariadicArgmaxRows) {
  ExpectParallelMatches(R"(
HloModule m
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GE
  v = f32[] select(gt, a, b)
  i = s32[] select(gt, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[128,512] parameter(0)
  idx = s32[128,512] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  r = (f32[128], s32[128]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax
  ROOT i = s32[128] get-tuple-element(r), index=1
})");
}

TEST(CodegenParallelLoops, SoftmaxInputFusions) {
  ExpectParallelMatches(R"(
HloModule m
mx { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] maximum(x, y) }
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  a = f32[8,12,64,128] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  m = f32[8,12,64] reduce(a, ninf), dimensions={3}, to_apply=mx
  bm = f32[8,12,64,128] broadcast(m), dimensions={0,1,2}
  s = f32[8,12,64,128] subtract(a, bm)
  x = f32[8,12,64,128] exponential(s)
  d = f32[8,12,64] reduce(x, zero), dimensions={3}, to_apply=add
  bd = f32[8,12,64,128] broadcast(d), dimensions={0,1,2}
  ROOT r = f32[8,12,64,128] divide(x, bd)
})");
}

// Layer norm + GELU + residual: two row reductions and two loops, one row group.
TEST(CodegenParallelLoops, LayerNormRowGroup) {
  ExpectParallelMatches(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  x = f32[16,64,320] parameter(0)
  r = f32[16,64,320] parameter(1)
  g = f32[320] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(320)
  bn = f32[16,64] broadcast(n), dimensions={}
  s = f32[16,64] reduce(x, zero), dimensions={2}, to_apply=add
  mean = f32[16,64] divide(s, bn)
  bmean = f32[16,64,320] broadcast(mean), dimensions={0,1}
  c = f32[16,64,320] subtract(x, bmean)
  c2 = f32[16,64,320] multiply(c, c)
  v = f32[16,64] reduce(c2, zero), dimensions={2}, to_apply=add
  var = f32[16,64] divide(v, bn)
  eps = f32[] constant(1e-5)
  beps = f32[16,64] broadcast(eps), dimensions={}
  ve = f32[16,64] add(var, beps)
  rs = f32[16,64] rsqrt(ve)
  brs = f32[16,64,320] broadcast(rs), dimensions={0,1}
  y = f32[16,64,320] multiply(c, brs)
  bg = f32[16,64,320] broadcast(g), dimensions={2}
  yg = f32[16,64,320] multiply(y, bg)
  t = f32[16,64,320] tanh(yg)
  ROOT o = f32[16,64,320] add(t, r)
})");
}

// The second reduction reads the first loop's output transposed: not row-local, so no group may span them.
TEST(CodegenParallelLoops, TransposedReadBetweenRowKernels) {
  ExpectParallelMatches(R"(
HloModule m
add { x = f32[] parameter(0)  y = f32[] parameter(1)  ROOT s = f32[] add(x, y) }
ENTRY e {
  x = f32[256,256] parameter(0)
  zero = f32[] constant(0)
  s = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  bs = f32[256,256] broadcast(s), dimensions={0}
  d = f32[256,256] subtract(x, bs)
  ex = f32[256,256] exponential(d)
  t = f32[256,256] transpose(ex), dimensions={1,0}
  sum2 = f32[256] reduce(t, zero), dimensions={1}, to_apply=add
  bsum2 = f32[256,256] broadcast(sum2), dimensions={0}
  ROOT o = f32[256,256] divide(ex, bsum2)
})");
}

TEST(CodegenParallelLoops, DotsSplitRowsColumnsAndBatches) {
  for (const char* text :
       {// Wide: columns split.
        "HloModule m\nENTRY e {\n a = f32[64,300] parameter(0)\n b = f32[300,1000] parameter(1)\n"
        " ROOT d = f32[64,1000] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        // Tall: rows split.
        "HloModule m\nENTRY e {\n a = f32[1000,200] parameter(0)\n b = f32[200,24] parameter(1)\n"
        " ROOT d = f32[1000,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        // Batched: one GEMM per thread.
        "HloModule m\nENTRY e {\n a = f32[6,64,96] parameter(0)\n b = f32[6,96,80] parameter(1)\n"
        " ROOT d = f32[6,64,80] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2},"
        " rhs_contracting_dims={1}\n}",
        // Column-major result: the operands swap.
        "HloModule m\nENTRY e {\n a = f32[130,170] parameter(0)\n b = f32[170,150] parameter(1)\n"
        " ROOT d = f32[130,150]{0,1} dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        // bf16 through the f32 temporary.
        "HloModule m\nENTRY e {\n a = bf16[96,128] parameter(0)\n b = bf16[128,160] parameter(1)\n"
        " ROOT d = bf16[96,160] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}",
        // With a bias and activation epilogue (output fusion).
        "HloModule m\nENTRY e {\n a = f32[128,256] parameter(0)\n b = f32[256,192] parameter(1)\n"
        " c = f32[192] parameter(2)\n d = f32[128,192] dot(a, b), lhs_contracting_dims={1},"
        " rhs_contracting_dims={0}\n bc = f32[128,192] broadcast(c), dimensions={1}\n"
        " s = f32[128,192] add(d, bc)\n ROOT r = f32[128,192] tanh(s)\n}"}) {
    ExpectParallelMatches(text);
  }
}

// A GEMM split by rows or columns asks for one range per thread (each range packs its own panels; B whole when the
// rows are split); a batch of GEMMs keeps a few per thread (one whole GEMM per unit).
TEST(CodegenParallelLoops, SplitGemmsTakeOneRangePerThread) {
  auto runtime_call = [](const std::string& text) {
    std::unique_ptr<Module> module = ParseAndVerify(text);
    if (!module) return std::string();
    JitOptions options;
    options.threads = 4;
    options.keep_llvm_ir = true;
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    EXPECT_TRUE(exe.ok()) << exe.status();
    if (!exe.ok()) return std::string();
    const std::string& ir = (*exe)->llvm_ir();
    if (ir.find("call void @xlac_rt_device_parallel_split(") != std::string::npos) return std::string("split");
    if (ir.find("call void @xlac_rt_device_parallel_for(") != std::string::npos) return std::string("for");
    return std::string("none");
  };
  EXPECT_EQ(runtime_call("HloModule m\nENTRY e {\n a = f32[1000,200] parameter(0)\n b = f32[200,24] parameter(1)\n"
                         " ROOT d = f32[1000,24] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}"),
            "split");
  EXPECT_EQ(runtime_call("HloModule m\nENTRY e {\n a = f32[6,64,96] parameter(0)\n b = f32[6,96,80] parameter(1)\n"
                         " ROOT d = f32[6,64,80] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0},"
                         " lhs_contracting_dims={2}, rhs_contracting_dims={1}\n}"),
            "for");
}

TEST(CodegenParallelLoops, Convolutions) {
  ExpectParallelMatches(R"(
HloModule m
ENTRY e {
  x = f32[2,32,32,16] parameter(0)
  w = f32[3,3,16,32] parameter(1)
  ROOT c = f32[2,32,32,32] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
})");
  ExpectParallelMatches(R"(
HloModule m
ENTRY e {
  x = f32[4,16,24,24] parameter(0)
  w = f32[32,16,3,3] parameter(1)
  ROOT c = f32[4,32,22,22] convolution(x, w), window={size=3x3}, dim_labels=bf01_oi01->bf01
})");
}

TEST(CodegenParallelLoops, InsideAWhileLoop) {
  ExpectParallelMatches(R"(
HloModule m
cond {
  p = (s32[], f32[128,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[128,512]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[128,512] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  bh = f32[128,512] broadcast(h), dimensions={}
  y = f32[128,512] multiply(x, bh)
  z = f32[128,512] sine(y)
  ROOT t = (s32[], f32[128,512]) tuple(i1, z)
}
ENTRY e {
  a = f32[128,512] parameter(0)
  zero = s32[] constant(0)
  t = (s32[], f32[128,512]) tuple(zero, a)
  w = (s32[], f32[128,512]) while(t), condition=cond, body=body
  ROOT r = f32[128,512] get-tuple-element(w), index=1
})");
}

TEST(CodegenParallelLoops, SmallLoopsStayInline) {
  ExpectParallelMatches(R"(
HloModule m
ENTRY e {
  a = f32[64,64] parameter(0)
  b = f32[64,64] parameter(1)
  ROOT r = f32[64,64] add(a, b)
})",
                        /*expect_parallel=*/false);
}

TEST(CodegenParallelLoops, DisabledByCompileOption) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[512,512] parameter(0)
  ROOT r = f32[512,512] exponential(a)
})");
  ASSERT_TRUE(module);
  JitOptions options;
  options.compile.parallel = false;
  options.keep_llvm_ir = true;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  EXPECT_EQ((*exe)->llvm_ir().find("xlac_rt_device_parallel_for"), std::string::npos);
}

}  // namespace
}  // namespace xlac::codegen::testing
