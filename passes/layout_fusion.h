// Layout assignment's rules for fusion instructions (passes/layout_assignment.h), as XLA's LayoutAssignment treats
// them: a fusion is an instruction that may change layout, so its operands are not constrained to its result's
// layout; each fused parameter takes the layout of the operand it stands for and the fused root keeps the fusion's.
// The fused computation's other instructions index logically (codegen's elemental emitter), except bitcasts, which
// reinterpret bytes: a parameter read by one keeps its layout, and so does one read by a convolution (whose kernel
// streams its operands in the layouts layout assignment gives plain convolutions) or forwarded to the result.
#pragma once

#include <cstdint>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "ir/computation.h"
#include "ir/module.h"
#include "passes/layout_order.h"

namespace xlac {

// Computations called by one instruction only: the fused ones among them are those whose parameters layout
// assignment may change.
absl::flat_hash_set<const Computation*> ComputationsCalledOnce(const Module& module);

// Whether `fusion` (a kLoop, kInput or kOutput fusion calling a computation of `once`) reads operand `i` in whatever
// layout it has: the rule above.
bool FusionReadsAnyLayout(const Instruction& fusion, int64_t i, const absl::flat_hash_set<const Computation*>& once);

// The order in which `producer` (an operand of `fusion` read in any layout) should be written so that the fusion,
// reading it only through transposes of one permutation and result order, reads it contiguously: the order that
// makes those transposes relabel the bytes. Nothing when the fusion reads it otherwise.
std::optional<DimOrder> FusedTransposeReadOrder(const Instruction& fusion, const Instruction* producer,
                                                const absl::flat_hash_set<const Computation*>& once);

// The convolution of `fusion` (a kOutput fusion calling a computation of `once`) when it reads two parameters that
// nothing but elemental ops otherwise read: layout assignment may stream them in other layouts. Null otherwise.
Instruction* FusedConvolutionReadingParameters(const Instruction& fusion,
                                               const absl::flat_hash_set<const Computation*>& once);

// Makes `fusion` (a kLoop fusion calling a computation of `once`, with one array result) write `order`: its root
// indexes logically, so only the fusion's and the root's layouts change. False, changing nothing, for any other.
bool RelayoutLoopFusion(Instruction& fusion, const DimOrder& order,
                        const absl::flat_hash_set<const Computation*>& once);

// Makes `fusion` (an output fusion whose convolution FusedConvolutionReadingParameters finds) write `order`: the
// convolution, the epilogue from it to the root (same-index elementwise ops) and the root take it. False, changing
// nothing, when it already does.
bool RelayoutOutputFusion(Instruction& fusion, const DimOrder& order);

// Gives every parameter of `fusion` that reads its operand in any layout that operand's layout; returns whether one
// changed.
bool SetFusionParameterLayouts(Instruction& fusion, const absl::flat_hash_set<const Computation*>& once);

}  // namespace xlac
