// What a TPU's matrix unit does with an f32 dot or convolution, by its precision_config (the semantics both the
// interpreter and codegen follow under --tpu-numerics; docs/numerics.md "TPU dot numerics"):
//   DEFAULT (or no operand_precision; algorithm=dot_bf16_bf16_f32): each operand element rounded to bf16 (nearest
//     even), the products (exact in f32) accumulated in f32 - one MXU pass;
//   HIGHEST (algorithm=dot_f32_f32_f32): f32 products, as without TPU numerics.
// The higher of the two operands' precisions applies, as in XLA. HIGH (the 3-pass bf16 split) and the other
// algorithms are not modeled yet: both backends report them as unsupported instead of computing something else.
#pragma once

#include <string>

#include "ir/instruction.h"

namespace xlac {

enum class TpuDotMode { kF32, kBf16Operands, kUnsupported };

// The mode of `dot_or_conv` (f32 operands and result; other element types are computed as written: kF32). `why`
// names the unsupported setting.
TpuDotMode TpuDotModeOf(const Instruction& dot_or_conv, std::string* why = nullptr);

// f32 `value` rounded to the nearest bf16 (ties to even), as an f32; NaN and infinities are kept.
float RoundToBf16(float value);

}  // namespace xlac
