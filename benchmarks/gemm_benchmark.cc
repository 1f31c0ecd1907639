// JIT-compiled dots through the tiled GEMM (codegen/ir_emitter_gemm.cc), on one thread (and, for BM_Gemm/
// default_2threads, two threads against two OpenMP threads of oneDNN, wall time).
//
// BM_Gemm/{default,exact,bf16,tpu_default}/M/K/N: f32 (bf16; f32 under TPU numerics) row-major C[M,N] = A[M,K] B[K,N]
// in the default numerics mode (fused multiply-add) and in exact mode (CompileOptions::exact: multiply, round, add;
// bit-for-bit the interpreter), compiled and run through the public JIT API (xlac/jit.h) on caller buffers, as a user
// runs it: packing, edge tiles and the call included. Times are wall times (fastest run). (An earlier version timed a
// while loop of dots at two trip counts through JitExecutable's literal copies; the difference drowned in those copies'
// page faults on large shapes and printed negative rates.) Counters: GFLOPs (2*M*N*K per dot), best_ms, and when
// oneDNN's shared library (Debian libdnnl2) can be loaded, onednn_GFLOPs (dnnl_sgemm, one OpenMP thread, same shape,
// same process) and vs_onednn = GFLOPs / onednn_GFLOPs. BM_Dot/{f32,bf16,f64}/M/K/N: default-mode tiled dot against the
// plain loop nest (CompileOptions::tiled_dot = false): GFLOPs, loop_GFLOPs, speedup.
#include <dlfcn.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "benchmarks/jit_timing.h"
#include "codegen/jit.h"
#include "fmt/format.h"
#include "frontend/hlo/parser.h"
#include "runtime/interpreter/interpreter.h"
#include "xlac/jit.h"

namespace xlac {
namespace {

// y = dot(x, w) `trips` times in a while loop (x and w are loop-invariant; nothing hoists them).
std::unique_ptr<codegen::JitExecutable> CompileDotLoop(const std::string& type, int64_t m, int64_t k, int64_t n,
                                                       int trips, bool tiled, bool exact, benchmark::State& state,
                                                       int threads = 1) {
  std::string text = fmt::format(R"(
HloModule gemm
cond {{
  p = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  trips = s32[] constant({4})
  ROOT lt = pred[] compare(i, trips), direction=LT
}}
body {{
  p = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = {0}[{1},{2}] get-tuple-element(p), index=1
  w = {0}[{2},{3}] get-tuple-element(p), index=2
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  y = {0}[{1},{3}] dot(x, w), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
  ROOT t = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) tuple(i1, x, w, y)
}}
ENTRY e {{
  a = {0}[{1},{2}] parameter(0)
  b = {0}[{2},{3}] parameter(1)
  zero = s32[] constant(0)
  z = {0}[] constant(0)
  y0 = {0}[{1},{3}] broadcast(z), dimensions={{}}
  t = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) tuple(zero, a, b, y0)
  loop = (s32[], {0}[{1},{2}], {0}[{2},{3}], {0}[{1},{3}]) while(t), condition=cond, body=body
  ROOT y = {0}[{1},{3}] get-tuple-element(loop), index=3
}})",
                                 type, m, k, n, trips);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<gemm>");
  if (!module.ok()) {
    state.SkipWithError(module.status().ToString().c_str());
    return nullptr;
  }
  codegen::JitOptions options;
  options.compile.tiled_dot = tiled;
  options.compile.exact = exact;
  options.threads = threads;  // against as many oneDNN (OpenMP) threads
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(**module, options);
  if (!exe.ok()) {
    state.SkipWithError(exe.status().ToString().c_str());
    return nullptr;
  }
  return *std::move(exe);
}

// Process CPU time in seconds for one thread: on a shared machine a descheduled run does not count against the
// kernel (wall time does). Several threads are timed by the wall clock.
double Seconds(int threads) {
  timespec t;
  clock_gettime(threads > 1 ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Enough extra trips (~2 GFLOP) that the Run overhead's jitter on a shared machine stays small next to them.
int ExtraTrips(double flops) { return static_cast<int>(std::clamp(2e9 / flops, 4.0, 4000.0)); }

// dnnl_sgemm from oneDNN's shared library, loaded at run time so that the benchmark builds without it.
using SgemmFn = int (*)(char, char, int64_t, int64_t, int64_t, float, const float*, int64_t, const float*, int64_t,
                        float, float*, int64_t);
SgemmFn LoadOneDnnSgemm() {
  static SgemmFn fn = [] {
    setenv("OMP_NUM_THREADS", "1", 1);  // before libgomp initializes; SetOneDnnThreads changes it per benchmark
    void* lib = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) lib = dlopen("libdnnl.so", RTLD_NOW | RTLD_LOCAL);
    return lib == nullptr ? nullptr : reinterpret_cast<SgemmFn>(dlsym(lib, "dnnl_sgemm"));
  }();
  return fn;
}

// omp_set_num_threads of the OpenMP runtime oneDNN loaded (false when there is none to find).
bool SetOneDnnThreads(int threads) {
  for (const char* name : {"libgomp.so.1", "libiomp5.so", "libomp.so.5"}) {
    if (void* omp = dlopen(name, RTLD_NOW | RTLD_NOLOAD)) {
      auto set = reinterpret_cast<void (*)(int)>(dlsym(omp, "omp_set_num_threads"));
      if (set != nullptr) {
        set(threads);
        return true;
      }
    }
  }
  return threads == 1;
}

// Best GFLOP/s of dnnl_sgemm on row-major C[m,n] = A[m,k] B[k,n] over 10 trials of >= 50 ms on `threads` OpenMP
// threads; 0 if unavailable.
double OneDnnGflops(int64_t m, int64_t k, int64_t n, int threads) {
  SgemmFn sgemm = LoadOneDnnSgemm();
  if (sgemm == nullptr || !SetOneDnnThreads(threads)) return 0;
  std::vector<float> a(static_cast<size_t>(m * k)), b(static_cast<size_t>(k * n)), c(static_cast<size_t>(m * n));
  for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<float>(i % 7) * 0.25f - 0.5f;
  for (size_t i = 0; i < b.size(); ++i) b[i] = static_cast<float>(i % 5) * 0.125f - 0.25f;
  auto call = [&] { return sgemm('N', 'N', m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n); };
  if (call() != 0) return 0;
  call();
  double start = Seconds(threads);
  call();
  double one = Seconds(threads) - start;
  int reps = std::max(1, static_cast<int>(0.05 / std::max(one, 1e-7)));
  double best = 1e30;
  for (int trial = 0; trial < 10; ++trial) {
    start = Seconds(threads);
    for (int r = 0; r < reps; ++r) call();
    best = std::min(best, (Seconds(threads) - start) / reps);
  }
  SetOneDnnThreads(1);
  return 2.0 * static_cast<double>(m * n) * static_cast<double>(k) * 1e-9 / best;
}

// One dot through the public JIT API on caller-owned, 64-byte aligned buffers (what a user's Run costs: no literal
// copies), timed by the wall clock: the fastest of at least 20 runs and 0.5 s after 2 warm-up runs.
// `type`: "f32"; "bf16" (bf16 operands and result, f32 sums: vdpbf16ps where the CPU has AVX512_BF16); "tpu" (f32
// under TPU numerics at DEFAULT precision: operands rounded to bf16, the same kernel). oneDNN's figure is its f32
// sgemm on the same shape in every case.
void BM_Gemm(benchmark::State& state, bool exact, int threads, const std::string& type) {
  int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const std::string element = type == "bf16" ? "bf16" : "f32";
  const std::string text = fmt::format(R"(
HloModule gemm
ENTRY e {{
  a = {3}[{0},{1}] parameter(0)
  b = {3}[{1},{2}] parameter(1)
  ROOT y = {3}[{0},{2}] dot(a, b), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}
}})",
                                       m, k, n, element);
  CompileOptions options;
  options.exact = exact;
  options.tpu_numerics = type == "tpu";
  options.threads = threads;  // against as many oneDNN (OpenMP) threads
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Compile(text, options);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  auto buffer = [](int64_t elements) {
    size_t bytes = (static_cast<size_t>(elements) * sizeof(float) + 63) / 64 * 64;
    return std::unique_ptr<float, decltype(&std::free)>(static_cast<float*>(std::aligned_alloc(64, bytes)), &std::free);
  };
  // Small multiples of powers of two: the same values as f32 and as bf16 (whose bits are an f32's upper half).
  auto a = buffer(m * k), b = buffer(k * n), c = buffer(m * n);
  auto fill = [&](float* x, int64_t count, int period, float scale, float offset) {
    for (int64_t i = 0; i < count; ++i) {
      const float v = static_cast<float>(i % period) * scale + offset;
      if (element == "bf16") {
        uint32_t bits;
        std::memcpy(&bits, &v, 4);
        const uint16_t half = static_cast<uint16_t>(bits >> 16);
        std::memcpy(reinterpret_cast<char*>(x) + 2 * i, &half, 2);
      } else {
        x[i] = v;
      }
    }
  };
  fill(a.get(), m * k, 7, 0.25f, -0.5f);
  fill(b.get(), k * n, 5, 0.125f, -0.25f);
  const std::vector<const void*> params = {a.get(), b.get()};
  const std::vector<void*> results = {c.get()};
  double best = 1e30;
  for (auto _ : state) {  // warm-up (first touch of c, the pool's threads) and then the timed runs, all in one
    for (int i = 0; i < 2; ++i) {
      if (absl::Status status = (*exe)->Run(params, results); !status.ok()) {
        state.SkipWithError(std::string(status.message()).c_str());
        return;
      }
    }
    Clock::time_point begin = Clock::now();
    for (int runs = 0; runs < 20 || std::chrono::duration<double>(Clock::now() - begin).count() < 0.5; ++runs) {
      Clock::time_point t0 = Clock::now();
      absl::Status status = (*exe)->Run(params, results);
      best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
      if (!status.ok()) {
        state.SkipWithError(std::string(status.message()).c_str());
        return;
      }
    }
    benchmark::DoNotOptimize(c.get());
  }
  double gflops = flops * 1e-9 / best;
  state.counters["GFLOPs"] = gflops;
  state.counters["best_ms"] = best * 1e3;
  if (double onednn = OneDnnGflops(m, k, n, threads); onednn > 0) {
    state.counters["onednn_GFLOPs"] = onednn;
    state.counters["vs_onednn"] = gflops / onednn;
  }
}

void GemmShapes(benchmark::internal::Benchmark* b) {
  b->Args({1024, 1024, 1024});
  b->Args({128, 768, 3072});   // BERT FFN, one sequence
  b->Args({256, 4096, 4096});  // MLP hidden layer
  b->Args({8, 4096, 4096});    // decode: bound by streaming B (64 MiB) once
  b->Unit(benchmark::kMillisecond)->Iterations(1);
}

BENCHMARK_CAPTURE(BM_Gemm, default, false, 1, "f32")->Apply(GemmShapes);
BENCHMARK_CAPTURE(BM_Gemm, exact, true, 1, "f32")->Apply(GemmShapes);
// Both on two threads (the JIT's process-wide pool against oneDNN's OpenMP), wall time.
BENCHMARK_CAPTURE(BM_Gemm, default_2threads, false, 2, "f32")->Apply(GemmShapes);
// bf16 operands: twice the products per instruction on AVX512_BF16 (docs/numerics.md, "bf16 dots on AVX512_BF16").
BENCHMARK_CAPTURE(BM_Gemm, bf16, false, 1, "bf16")->Apply(GemmShapes);
BENCHMARK_CAPTURE(BM_Gemm, tpu_default, false, 1, "tpu")->Apply(GemmShapes);
BENCHMARK_CAPTURE(BM_Gemm, bf16_2threads, false, 2, "bf16")->Apply(GemmShapes);

void BM_Dot(benchmark::State& state, std::string type) {
  int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  double flops = 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  TimeTiledAgainstLoops(state, flops, ExtraTrips(flops), [&](int trips, bool tiled) {
    return CompileDotLoop(type, m, k, n, trips, tiled, false, state);
  });
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int64_t s : {64, 256, 512}) b->Args({s, s, s});
  b->Args({1000, 64, 1000});  // short k
  b->Args({7, 512, 1031});    // thin m, prime n (edge tiles)
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK_CAPTURE(BM_Dot, f32, std::string("f32"))->Apply(Shapes);
BENCHMARK_CAPTURE(BM_Dot, bf16, std::string("bf16"))->Args({512, 512, 512})->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Dot, f64, std::string("f64"))
    ->Args({256, 256, 256})
    ->Args({512, 512, 512})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xlac

BENCHMARK_MAIN();
