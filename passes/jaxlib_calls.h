// jaxlib's CPU FFT and GPU pivot calls, as JAX exports write them, rewritten to the HLO they compute (for
// library_custom_calls.cc, which registers the pass). Definitions as in jaxlib (cpu/ducc_fft.fbs,
// cpu/ducc_fft_kernels.cc, gpu/lu_pivot_kernels), what JAX lowers jnp.fft and lax.linalg.lu_pivots_to_permutation to:
//  - ducc_fft (jaxlib 2023, api_version 2): (descriptor u8[n], x) -> y. The descriptor is a DuccFftDescriptor
//    flatbuffer {dtype COMPLEX64 | COMPLEX128, fft_type C2C | C2R | R2C, shape, strides_in, strides_out, axes,
//    forward, scale} describing an FFT over the trailing `axes` of row-major arrays: C2C forward is HLO fft FFT,
//    backward IFFT (scale 1/n, which IFFT includes), R2C forward RFFT, C2R backward IRFFT, fft_length the shape at
//    the axes (the real side's shape, for C2R the result's).
//  - dynamic_ducc_fft (mid-2023, shape-polymorphic exports): (descriptor, x, shape, strides_in, strides_out, scale
//    f64[1], result shape) with a DynamicDuccFftDescriptor {ndims, dtype, fft_type, axes, forward}; the shape and
//    scale operands must fold to constants (they do once the module's shapes are static) and agree with x.
//  - cu_lu_pivots_to_permutation, hip_lu_pivots_to_permutation (typed FFI, 2024) and cuda_lu_pivots_to_permutation
//    (2023): pivots s32[batch..., k] (0-based row swaps, as getrf's minus one) -> s32[batch..., m]: the identity
//    permutation of size m with the swaps i <-> pivots[i] applied for i = 0..k-1, a pivot outside [0, m) skipped as
//    jaxlib's kernel does. A while loop over i.
// A call with these targets but another signature, a descriptor that does not parse or an FFT that is not one of
// HLO's is an error at the call naming what differs.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace xlac {

bool IsJaxlibTarget(std::string_view target);

// The replacement of `call` (one of IsJaxlibTarget's targets), added to `comp`.
absl::StatusOr<Instruction*> RewriteJaxlibCall(Module& module, Computation& comp, Instruction* call);

}  // namespace xlac
