// The interpreter's fast dot and convolution kernels for f32 compute (f32 and every narrower float) and f64.
//
// They compute exactly what the naive loops in dot_conv.cc compute: every output element starts at +0 and adds
// its products one at a time in the same order (ascending contraction index for dots; window positions in
// row-major order, then input features, for convolutions), each product and each sum rounded separately
// (-ffp-contract=off). Speed comes from computing many independent output elements at once (SIMD lanes hold
// different outputs, never parts of one sum), packing operands so lanes read contiguous memory, blocking for the
// caches, and splitting independent output blocks over threads. Which thread computes a block never changes a
// result.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "runtime/interpreter/internal.h"

namespace xlac::interp {

// The threads one device's kernels may use: options.threads (0: the CPUs of the process's affinity mask) shared
// evenly by the devices running at once.
int64_t KernelThreads(const DeviceContext& device);

// Calls fn(block) once for every block in [0, blocks), on up to `threads` threads of the runtime's shared pool.
void ParallelBlocks(int64_t blocks, int64_t threads, const std::function<void(int64_t block)>& fn);

// Row-major indices over a list of dims read at element strides: index i of the list is at element offset
// sum over d of (i's digit d) * strides[d], the digits row-major over `sizes` (the last varies fastest).
struct StridedDims {
  std::vector<int64_t> sizes, strides;
};

// GemmNT's B read in place: element (g, j, kk) of its [batch][n][k] view is at element offset
// batch(g) + columns(j) + contraction(kk) of `data`, whose element type is `type`: T's own, or a narrower float
// (f32 and below, for T = double too), widened exactly as LoadAll and convert widen it. No copy of B in another
// order or type is made.
struct GemmOperand {
  const void* data = nullptr;
  PrimitiveType type = PrimitiveType::kF32;
  StridedDims batch, columns, contraction;
};

// A dense row-major array of `dims` read as [lists[0]...][lists[1]...][lists[2]...]: batch, columns and contraction
// are the dims each list names, in the list's order.
GemmOperand GemmOperandOf(const void* data, PrimitiveType type, const std::vector<int64_t>& dims,
                          const std::vector<int64_t>& batch, const std::vector<int64_t>& columns,
                          const std::vector<int64_t>& contraction);

// GemmNT packs B into panels of a few columns for its SIMD lanes, a group of panels (and of the contraction, for a
// long one) at a time in one buffer of at most about this many bytes, instead of a packed copy of all of B: the
// lm_head of a 70B model is a 4 GB operand as f32.
inline constexpr int64_t kGemmPackBudget = int64_t{16} << 20;

// out[g][i][j] = sum over kk of a[g][i][kk] * b[g][j][kk] (a: [batch][m][k] dense row-major, b: see GemmOperand,
// out: [batch][m][n] dense row-major), accumulated from +0 in ascending kk. T is float or double. `pack_budget`
// (tests) bounds the packing buffer; results never depend on it or on `threads`.
template <typename T>
void GemmNT(const T* a, const GemmOperand& b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads,
            int64_t pack_budget = kGemmPackBudget);
// The same with b a dense row-major [batch][n][k] array.
template <typename T>
void GemmNT(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads);

// The bytes of GemmNT's packing buffer for B of [batch][n][k] in a compute type of `element_bytes` (4: float,
// 8: double): what it holds besides its operands and result (xla-run's memory estimate counts it).
int64_t GemmPackBytes(int64_t batch, int64_t n, int64_t k, int64_t element_bytes,
                      int64_t pack_budget = kGemmPackBudget);

// A convolution in the interpreter's canonical operand layouts:
//   input  [in_batch][in_spatial...][input_z]             (dense row-major; see batch_minor)
//   kernel [kernel_spatial...][in_group][output_z]        (dense row-major)
// and any output layout (strides of the result's logical row-major order).
struct ConvProblem {
  int64_t in_batch = 0, input_z = 0, out_batch = 0, output_z = 0;
  int64_t in_group = 0;              // input features per feature group
  int64_t out_group = 0;             // output features per feature group
  int64_t depthwise_multiplier = 0;  // output features per batch group
  int64_t batch_group_size = 0;      // input batches per batch group
  std::vector<int64_t> in_spatial, kernel_spatial, out_spatial;
  std::vector<bool> reversal;
  // taps[s][o]: the (input coordinate, window position) pairs of output coordinate o in spatial dim s (in window
  // order), see MakeWindowTaps.
  const std::vector<WindowTaps>* taps = nullptr;
  // The input is [in_spatial...][input_z][in_batch] instead (batch minor): chosen for the filter gradients of
  // depthwise convolutions (batch_group_count = features, one batch per group), whose lanes then read
  // consecutive batches.
  bool batch_minor = false;
  int64_t out_batch_stride = 0, out_feature_stride = 0;
  std::vector<int64_t> out_spatial_strides;
};

template <typename T>
void ConvCanonical(const ConvProblem& p, const T* input, const T* kernel, T* out, int64_t threads);

// Gathers `data` (row-major over `dims`) into the order of the dims listed in `order` (a permutation of all dims):
// out is row-major over dims[order[0]], dims[order[1]], ...
template <typename T>
void PermuteInto(const T* data, const std::vector<int64_t>& dims, const std::vector<int64_t>& order, T* out);

}  // namespace xlac::interp
