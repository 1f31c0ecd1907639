// Winograd F(m x m, 3 x 3) transforms (Lavin & Gray, "Fast Algorithms for Convolutional Neural Networks", 2015) and
// the two built-in custom calls that apply them (passes/winograd_convolution.h emits them, codegen calls the runtime's
// kernels for them (runtime/cpu/winograd.cc), the interpreter evaluates them (runtime/interpreter/winograd.cc)).
//
// With n = m + 2, a convolution's output is cut into T0 x T1 tiles of m x m (Ti = ceil(out_i / m)); tile (ty, tx)
// reads the n x n input window at rows m * ty - padding_low_0 + [0, n) and columns m * tx - padding_low_1 + [0, n)
// (zero outside the input). For a convolution x (*) w with x [N, C, H, W] and w [K, C, 3, 3] (any dim_labels):
//
//   custom-call "xlac.winograd_input" (x) -> V f32[n*n, C, N*T0*T1]
//     V[a*n + b, c, (i*T0 + ty)*T1 + tx] = (B^T d B)[a, b], d the n x n window of image i, channel c, tile (ty, tx);
//   dot U [n*n, K, C] x V, batched over the first dimension -> M f32[n*n, K, N*T0*T1] (U = G w G^T);
//   custom-call "xlac.winograd_output" (M) -> y, the convolution's result
//     y[i, k, m*ty + r, m*tx + q] = (A^T M_tile A)[r, q] for the rows and columns inside the output.
//
//   custom-call "xlac.winograd_conv" (x, U') -> y, U' = U as [n*n, C, K]: the three steps above as one call (what runs
//     on a host with AVX-512: the transformed tiles never leave the cache), with the dot's sums defined:
//     M[p, k, t] = sum over c = 0, 1, ..., C-1 of U'[p, c, k] * V[p, c, t], from +0, one fma per channel in order.
//
// All three calls carry the convolution's `window` (3x3, stride 1, no dilation or reversal, padding >= 0) and
// `dim_labels`; x and y are read and written through them, so no transpose is needed for NHWC. m follows from the
// transform dimension (n*n = 16, 36 or 64: m = 2, 4 or 6), the tiles from the output size.
//
// The order of operations, which the runtime kernel and the interpreter share (so they agree bit for bit): both 2-D
// transforms are separable; the input transform runs along the tile's columns first (d B: along image rows, which
// the kernel reads contiguously), then along its rows (B^T .); the output transform along rows (A^T M), then
// columns (. A);
// every output of a 1-D transform starts from +0 and takes acc = fma(coef, value, acc) (one rounding to f32 per step)
// in increasing index order, skipping the coefficients that are zero. Fused steps, as the default numerics mode's
// GEMMs take them: with a separate product and sum (two roundings; B^T's 4 and 5 make inexact products) the largest
// error on one test module was 0.000163 against 0.000149 fused (docs/numerics.md, "Winograd convolutions").
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace xlac {

inline constexpr std::string_view kWinogradInputTarget = "xlac.winograd_input";
inline constexpr std::string_view kWinogradOutputTarget = "xlac.winograd_output";
inline constexpr std::string_view kWinogradConvTarget = "xlac.winograd_conv";

bool IsWinogradTarget(std::string_view target);

// The F(m, 3) matrices (Toom-Cook on the points 0, 1, -1, 2, -2 (, 1/2, -1/2) and infinity; for m = 4 Lavin and
// Gray's): A^T [m][n], G [n][3], B^T [n][n], in double. m is 2, 4 or 6.
struct WinogradMatrices {
  std::vector<std::vector<double>> at, g, bt;
};
WinogradMatrices MakeWinogradMatrices(int64_t m);
// B^T (n * n) and A^T (m * n) row-major as the f32 coefficients the transforms multiply by (all exact in f32).
std::vector<float> WinogradBtF32(int64_t m);
std::vector<float> WinogradAtF32(int64_t m);

// Where a Winograd custom call reads and writes. `image` is x for the input transform and y for the output transform:
// the positions of its batch, feature and two spatial dimensions.
struct WinogradGeometry {
  int64_t m = 0, n = 0;
  int64_t batch = 0, features = 0;  // N, and C (input transform) or K (output transform)
  int64_t image_size[2] = {0, 0};   // the image's spatial sizes: H, W of x, or of y
  int64_t out_size[2] = {0, 0};     // the convolution's output spatial sizes
  int64_t tiles[2] = {0, 0};        // T0, T1
  int64_t padding_low[2] = {0, 0};
  int64_t batch_dim = 0, feature_dim = 0, spatial_dims[2] = {0, 0};   // in the image
  int64_t tile_count() const { return batch * tiles[0] * tiles[1]; }  // N * T0 * T1
};
// The geometry of a well-formed "xlac.winograd_input" or "xlac.winograd_output" call; an error naming the call
// otherwise.
absl::StatusOr<WinogradGeometry> WinogradGeometryOf(const Instruction& call);
// Of a well-formed "xlac.winograd_conv" call: its input transform's (x) and its output transform's (y).
struct WinogradConvGeometry {
  WinogradGeometry input, output;
};
absl::StatusOr<WinogradConvGeometry> WinogradConvGeometryOf(const Instruction& call);
// OK when `call` (any of the three targets) is well formed.
absl::Status CheckWinogradCall(const Instruction& call);

}  // namespace xlac
