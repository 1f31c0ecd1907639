// What codegen emits as one fused kernel: the contract between the `fusion` pass (passes/fusion/) and the fusion
// emitter (codegen/ir_emitter_fusion*.cc). The fusion pass only forms fusions for which IsEmittableFusion holds;
// fusion-inliner (passes/fusion_inliner.h, run by codegen preparation) inlines every other fusion, such as the ones
// users wrote or XLA dumped, so codegen never sees a fusion it cannot emit.
//
// Elemental ops are the ones whose every output element is a function of a few operand elements at indices computed
// from the output index, with no state: parameter, constant, iota, every elementwise op with a scalar compute type
// (unary and binary arithmetic, compare, select, clamp, convert, bitcast-convert between same-width types,
// reduce-precision), broadcast, reshape, bitcast, transpose, copy, slice, concatenate, pad, reverse and
// dynamic-slice. Complex element types and tuples are not elemental.
//
// The three fusion kinds (the `kind=` attribute, as XLA prints it):
//   kLoop   — the fused computation is elemental ops only; its root is one array, or a tuple of arrays that all have
//             the root's dimensions (multi-output loop fusion). One loop nest over the output.
//   kInput  — the root is a single-operand reduce (or a tuple of such reduces with identical operand dimensions and
//             reduced dimensions: sibling multi-output fusion) whose reducer is a scalar computation and whose
//             operands and init values are produced by elemental ops. One pass over the input.
//   kOutput — the root is produced by elemental ops from exactly one dot or convolution whose operands are
//             parameters of the fused computation (the epilogue: bias, activation, residual, scaling). The GEMM
//             writes the fusion's buffer and the epilogue runs over it, so the root has the dot's dimensions,
//             element type and layout, and the dot's value reaches it through elementwise ops that read their
//             array operands at the output index only (no broadcast, transpose or reshape of it).
#pragma once

#include "ir/instruction.h"

namespace xlac {

// True for the elemental ops listed above, on element types with a scalar compute type.
bool IsElementalOp(const Instruction& inst);

// True when `fusion` (a kFusion instruction) calls one computation matching its kind's rule above.
bool IsEmittableFusion(const Instruction& fusion);

}  // namespace xlac
