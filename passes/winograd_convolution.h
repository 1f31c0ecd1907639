// winograd-convolution: stride-1 3x3 convolutions with enough channels as Winograd F(m x m, 3 x 3) (Lavin & Gray,
// "Fast Algorithms for Convolutional Neural Networks", 2015), n = m + 2. Two forms:
//
// Kernel form (what runs when the module has no sharding annotations and one partition, and this host runs the
// transform kernels' vector code: x86-64 with AVX-512; their portable code is far slower than the HLO form):
//  - F(4x4) (the default tile size) with few channels (36 C K floats <= 2.5 MiB: C = K = 128 at most) and at least
//    3/4 of the vector lanes of a tile row busy (T1 mod 16 = 0 or >= 12): one built-in "xlac.winograd_conv" (x,
//    U [n^2, C, K]) -> y of ir/winograd.h, which the runtime runs two tile rows at a time with the transformed tiles
//    in cache, and the filter transform G g G^T as two small dots (constant-folded when the filter is a constant);
//  - otherwise: the built-in transform calls of ir/winograd.h around one dot,
//  - "xlac.winograd_input" (x) -> V [n^2, C, N * T0 * T1]: B^T d B of every overlapping n x n tile at stride m, read
//    in place through the convolution's dim_labels (a runtime kernel in compiled code);
//  - filter transform G g G^T: two small dots (constant-folded when the filter is a constant);
//  - one dot batched over the n^2 transform points: [K, C] x [C, N * T0 * T1] each;
//  - "xlac.winograd_output" (M) -> y: A^T M A of every tile, cropped and written in the convolution's layout.
//
// HLO form (a partitioned program: the partitioner shards ordinary ops, not these custom calls), ordinary HLO:
//  - input transform B^T d B of the overlapping n x n tiles at stride m: each input channel is a one-channel image
//    and B^T a constant kernel of n output features, applied by two convolutions (window n x 1 at stride m, then
//    1 x n on all the first one's rows as one image), whose implicit im2col reads the tiles and the padding in place;
//  - filter transform G g G^T: two small dots (constant-folded when the filter is a constant);
//  - one dot batched over the n^2 transform points and the images: [K, C] x [C, tiles];
//  - output transform A^T M A: one dot with the constant kron(A^T, A^T) [m^2, n^2];
//  - the tiles reassembled by a transpose, a reshape and a slice, which fusion merges into the consumer.
//
// Eligible: a convolution with 2 spatial dimensions, window 3x3, stride 1, no dilation or reversal, padding
// 0 <= low, high, feature_group_count = batch_group_count = 1, f32 operands and result, no operand_precision or
// algorithm attribute, input and output feature counts >= `min_channels`, output spatial sizes >= `m`. Any
// dim_labels.
//
// It changes rounding (the transforms' constants, such as 1/6, are not exact and the products are summed in a
// different order): it belongs to codegen's default numerics mode only, never to exact mode. The error bound is in
// docs/numerics.md ("Winograd convolutions").
//
// Precondition: the module verifies. Returns whether anything changed.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

// Whether the host runs the transform kernels' vector code (runtime/cpu/winograd.cc): x86-64 with AVX-512. The JIT
// compiles for its host; an AOT object for another machine gets the form this host would choose.
bool WinogradTransformKernelsAreFast();

enum class WinogradForm : uint8_t {
  kAuto,     // kernels unless the module is (to be) partitioned or the host lacks AVX-512
  kKernels,  // the built-in transform custom calls
  kHlo,      // ordinary HLO only
};

// tile_size (m): 2, 4 or 6.
absl::StatusOr<bool> RunWinogradConvolution(Module& module, int64_t tile_size = 4, int64_t min_channels = 32,
                                            WinogradForm form = WinogradForm::kAuto);

}  // namespace xlac
