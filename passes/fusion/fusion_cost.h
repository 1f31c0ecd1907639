// The fusion pass's cost model: which producers are worth recomputing inside a consumer, and how big a fused loop
// may grow before it stops vectorizing well.
#pragma once

#include <cstdint>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace xlac {

// Caps per fusion: beyond these the loop body's register pressure and address streams defeat vectorization.
inline constexpr int64_t kMaxFusedInstructions = 64;
inline constexpr int64_t kMaxFusionParameters = 16;

// Ops that cost much more than a load per element (transcendentals, division, powers) or that are whole kernels
// (dot, convolution, reduce ...). Such a producer is never recomputed per element of a broadcast consumer, nor
// duplicated into several consumers.
bool IsExpensiveOp(const Instruction& inst);

// Producers cheap enough to recompute in every consumer that fuses them, rather than materialize once: data
// movement without arithmetic (broadcast, reshape, bitcast, slice, iota, constant, convert) and one-instruction
// arithmetic (add, multiply, compare, select, ...).
bool IsCheapToDuplicate(const Instruction& inst);

// Whether the consumer reads some element of its operand `operand_index` more than once per output (it broadcasts
// it, directly or inside its fused computation), so that fusing an expensive producer there recomputes it. For a
// fusion, `fused_param` is its computation's parameter for that operand.
bool ReusesOperandElements(const Instruction& consumer, int64_t operand_index, const Instruction* fused_param);

// Elementwise in the strict sense: output element i depends only on element i of each array operand (scalar bounds
// of clamp/select aside), so an epilogue made of these can run in place over a GEMM's output.
bool IsSameIndexElementwise(const Instruction& inst);

// Non-parameter instructions in `comp`.
int64_t FusedInstructionCount(const Computation& comp);

}  // namespace xlac
