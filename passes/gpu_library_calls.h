// XLA:GPU's library custom calls, as after-optimization HLO dumps of GPU programs (TF, JAX, PyTorch/XLA with
// --xla_dump_to) carry them, rewritten to the HLO they compute (for library_custom_calls.cc, which registers the
// pass). Definitions as in XLA's xla/service/gpu (cublas_cudnn.h, transforms/gemm_rewriter.cc, conv_rewriter.cc,
// cudnn_fused_conv_rewriter.cc, backend_configs.proto); the backend_config is the JSON of GpuBackendConfig
// (`{"gemm_backend_config": {...}}`, `{"cudnn_conv_backend_config": {...}}`) or, in dumps before 2023, of the inner
// message itself.
//  - __cublas$gemm, __cublas$lt$matmul (a, b[, c][, bias]) -> d or (d[, aux], workspace):
//    d = epilogue(alpha * dot(a, b) + beta * c [+ bias]) per dot_dimension_numbers and precision_config, c present
//    when beta != 0; epilogue DEFAULT, RELU, GELU (cuBLASLt's tanh approximation), their BIAS_ forms (bias over the
//    output's minor dimensions, which are the rhs's free dimensions), and the _AUX forms whose aux result is the
//    value before the activation. Computed in f32 for 16-bit floats (cuBLAS's compute type), s32 for integers, and
//    converted to d's type. __cublas$lt$matmul$f8 (scales, amax) is an error.
//  - __cudnn$convForward (x, w), __cudnn$convBackwardInput (dy, w), __cudnn$convBackwardFilter (x, dy),
//    __cudnn$convBiasActivationForward (x, w[, bias[, side_input]]) -> (result, u8[scratch]): the call's window,
//    dim_labels and feature_group_count describe the forward convolution y = conv(x, w), whichever of x, w or y the
//    call computes (XLA's conv_rewriter builds them so); the fused form is activation(conv_result_scale * conv +
//    side_input_scale * side_input + bias) with activation_mode kNone, kRelu, kRelu6, kElu, kLeakyRelu
//    (leakyrelu_alpha), kTanh, kSigmoid or kGeluExact. Scratch results become zeros.
// A call with these targets but another signature or an unsupported variant is an error at the call naming both.
#pragma once

#include <string_view>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/module.h"

namespace xlac {

bool IsGpuLibraryTarget(std::string_view target);

// The replacement of `call` (one of IsGpuLibraryTarget's targets), added to `comp`.
absl::StatusOr<Instruction*> RewriteGpuLibraryCall(Module& module, Computation& comp, Instruction* call);

}  // namespace xlac
