// What a TPU's matrix unit does with an f32 dot or convolution, by its precision_config (the semantics both the
// interpreter and codegen follow under --tpu-numerics; docs/numerics.md "TPU dot numerics"):
//   DEFAULT (or no operand_precision; algorithm=dot_bf16_bf16_f32): each operand element rounded to bf16 (nearest
//     even), the products (exact in f32) accumulated in f32 - one MXU pass;
//   HIGH (algorithm=dot_bf16_bf16_f32_x3): the 3-pass bf16 split, x = x_hi + x_lo with x_hi = bf16(x) and
//     x_lo = bf16(x - x_hi) (0 where x_hi is not finite), result = (op(a_hi, b_lo) + op(a_lo, b_hi)) + op(a_hi, b_hi),
//     each op accumulating exact bf16 products in f32 (passes/tpu_dot_precision.h writes it as HLO for codegen);
//   HIGHEST (algorithm=dot_f32_f32_f32): f32 products, as without TPU numerics.
// The higher of the two operands' precisions applies, as in XLA. Other algorithms are not modeled yet: both backends
// report them as unsupported instead of computing something else.
#pragma once

#include <string>

#include "ir/instruction.h"

namespace xlac {

enum class TpuDotMode { kF32, kBf16Operands, kBf16x3, kUnsupported };

// The mode of `dot_or_conv` (f32 operands and result; other element types are computed as written: kF32). `why`
// names the unsupported setting.
TpuDotMode TpuDotModeOf(const Instruction& dot_or_conv, std::string* why = nullptr);

// f32 `value` rounded to the nearest bf16 (ties to even), as an f32; NaN and infinities are kept.
float RoundToBf16(float value);

}  // namespace xlac
