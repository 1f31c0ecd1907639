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

// out[g][i][j] = sum over kk of a[g][i][kk] * b[g][j][kk] (a: [batch][m][k], b: [batch][n][k], out:
// [batch][m][n], all dense row-major), accumulated from +0 in ascending kk. T is float or double.
template <typename T>
void GemmNT(const T* a, const T* b, T* out, int64_t batch, int64_t m, int64_t n, int64_t k, int64_t threads);

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
