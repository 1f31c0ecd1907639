// tpu-dot-precision: the 3-pass bf16 split a TPU runs for HIGH precision, as HLO.
//
// Every f32 dot and convolution whose TPU mode is the split (operand_precision HIGH, or
// algorithm=dot_bf16_bf16_f32_x3; ir/tpu_numerics.h) becomes, with x_hi = f32(bf16(x)) and
// x_lo = f32(bf16(x - x_hi)) where x_hi is finite (0 elsewhere),
//   (op(a_hi, b_lo) + op(a_lo, b_hi)) + op(a_hi, b_hi)
// with each op at DEFAULT precision: its operands are bf16 values already, so the matrix unit's rounding changes
// nothing and every product is exact. The interpreter computes HIGH the same way under tpu_numerics, so compiled
// code and the oracle agree bit for bit. Codegen runs this pass only with CompileOptions::tpu_numerics.
//
// Precondition: the module verifies and is not scheduled. Returns whether anything changed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunTpuDotPrecision(Module& module);

}  // namespace xlac
