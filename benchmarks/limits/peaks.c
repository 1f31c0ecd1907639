// This machine's peaks, for scripts/bench's "% peak" columns: the FMA throughput of the widest vectors the CPU has
// (12 independent accumulators per thread, enough to cover the FMA latency on every x86 core we know) and the
// STREAM triad a[i] = b[i] + s * c[i] on arrays in DRAM and on arrays that fit the last-level cache; on AVX512_BF16
// parts also the bf16 dot-product throughput.
//
// Build: gcc -O3 -march=native -fopenmp peaks.c -o peaks      Run: OMP_NUM_THREADS=T ./peaks
// Prints one line: "fma_gflops=X triad_dram_gbs=Y triad_llc_gbs=Z" (best of several repetitions), and
// " bf16_dot_gflops=W" (vdpbf16ps) where the CPU has AVX512_BF16.
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define SET1 _mm512_set1_ps
#define FMA _mm512_fmadd_ps
#define ADD _mm512_add_ps
#define STORE _mm512_storeu_ps
#elif defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define SET1 _mm256_set1_ps
#define FMA _mm256_fmadd_ps
#define ADD _mm256_add_ps
#define STORE _mm256_storeu_ps
#else
#error "needs FMA (x86-64-v3 or later)"
#endif

// GFLOP/s of all threads together (2 flops per lane per FMA).
static double FmaPeak(long iters) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now();
    float sink = 0;
#pragma omp parallel reduction(+ : sink)
    {
      vec x = SET1(0.999f), y = SET1(1e-4f);
      vec a0 = SET1(0.1f), a1 = SET1(0.2f), a2 = SET1(0.3f), a3 = SET1(0.4f), a4 = SET1(0.5f), a5 = SET1(0.6f);
      vec a6 = SET1(0.7f), a7 = SET1(0.8f), a8 = SET1(0.9f), a9 = SET1(1.0f), a10 = SET1(1.1f), a11 = SET1(1.2f);
      for (long k = 0; k < iters; ++k) {
        a0 = FMA(a0, x, y); a1 = FMA(a1, x, y); a2 = FMA(a2, x, y); a3 = FMA(a3, x, y);
        a4 = FMA(a4, x, y); a5 = FMA(a5, x, y); a6 = FMA(a6, x, y); a7 = FMA(a7, x, y);
        a8 = FMA(a8, x, y); a9 = FMA(a9, x, y); a10 = FMA(a10, x, y); a11 = FMA(a11, x, y);
      }
      vec s = ADD(ADD(ADD(a0, a1), ADD(a2, a3)), ADD(ADD(a4, a5), ADD(a6, a7)));
      s = ADD(s, ADD(ADD(a8, a9), ADD(a10, a11)));
      float out[LANES];
      STORE(out, s);
      sink += out[0];
    }
    double t = now() - t0;
    double gflops = (double)iters * 12 * LANES * 2 * omp_get_max_threads() / t / 1e9;
    if (gflops > best) best = gflops;
    if (sink == 12345.0f) printf(" ");  // keep the loops
  }
  return best;
}

#if defined(__AVX512BF16__)
// GFLOP/s of vdpbf16ps (two bf16 products added per f32 lane: 4 flops per lane), all threads together: the peak of
// bf16 dots (codegen's GemmSpec::bf16_pairs).
static double Bf16DotPeak(long iters) {
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    double t0 = now();
    float sink = 0;
#pragma omp parallel reduction(+ : sink)
    {
      __m512bh x = (__m512bh)_mm512_set1_epi32(0x3f7f3f7f), y = (__m512bh)_mm512_set1_epi32(0x38d138d1);
      // 24 chains: vdpbf16ps's latency is longer than an FMA's (12 chains reach ~93 % on Zen 5).
      __m512 a[24];
      for (int i = 0; i < 24; ++i) a[i] = _mm512_set1_ps(0.1f * (float)(i + 1));
      for (long k = 0; k < iters; ++k) {
#define DP4(i)                                \
  a[i] = _mm512_dpbf16_ps(a[i], x, y);         \
  a[i + 1] = _mm512_dpbf16_ps(a[i + 1], x, y); \
  a[i + 2] = _mm512_dpbf16_ps(a[i + 2], x, y); \
  a[i + 3] = _mm512_dpbf16_ps(a[i + 3], x, y);
        DP4(0) DP4(4) DP4(8) DP4(12) DP4(16) DP4(20)
#undef DP4
      }
      __m512 s = a[0];
      for (int i = 1; i < 24; ++i) s = _mm512_add_ps(s, a[i]);
      float out[16];
      _mm512_storeu_ps(out, s);
      sink += out[0];
    }
    double t = now() - t0;
    double gflops = (double)iters * 24 * 16 * 4 * omp_get_max_threads() / t / 1e9;
    if (gflops > best) best = gflops;
    if (sink == 12345.0f) printf(" ");
  }
  return best;
}
#endif

// GB/s of the triad over arrays of n doubles (24 bytes per element: two reads, one write).
static double Triad(long n, int reps) {
  double *a = aligned_alloc(64, n * sizeof(double)), *b = aligned_alloc(64, n * sizeof(double)),
         *c = aligned_alloc(64, n * sizeof(double));
#pragma omp parallel for
  for (long j = 0; j < n; j++) {
    a[j] = 0;
    b[j] = 1;
    c[j] = 2;
  }
  double best = 0, s = 0.5;
  for (int k = 0; k < 8; k++) {
    double t0 = now();
    for (int r = 0; r < reps; r++) {
#pragma omp parallel for schedule(static)
      for (long j = 0; j < n; j++) a[j] = b[j] + s * c[j];
    }
    double gbs = 24.0 * n * reps / (now() - t0) / 1e9;
    if (gbs > best) best = gbs;
  }
  if (a[n / 2] != 2.0) printf(" ");
  free(a);
  free(b);
  free(c);
  return best;
}

int main(void) {
  double fma = FmaPeak(100000000);
  double dram = Triad(32L << 20, 1);  // 3 x 256 MiB
  double llc = Triad(256L << 10, 64);  // 3 x 2 MiB: in L3 (or L2) on every part we target
  printf("fma_gflops=%.1f triad_dram_gbs=%.1f triad_llc_gbs=%.1f", fma, dram, llc);
#if defined(__AVX512BF16__)
  printf(" bf16_dot_gflops=%.1f", Bf16DotPeak(50000000));
#endif
  printf("\n");
  return 0;
}
