// layout-assignment: physical layouts chosen for the CPU kernels, instead of the ones the input happened to carry.
//
// XLA dumps print a layout on every instruction, but only some of them constrain the program: what the caller
// passes and gets back, and what layout-sensitive ops read and write. Everything else is free, and this pass
// chooses it so that data moves less:
//   - A transpose whose operand is produced for it alone (by a dot, an elementwise op, a broadcast or an iota) has
//     that producer write in the layout that makes the transpose a pure layout change; a transpose read only by
//     dots (the GEMM packs any strides) takes its operand's layout, permuted.
//   - Elementwise ops (convert, compare, select and clamp included), copy, slice, pad, reverse and concatenate
//     follow the first operand whose layout changed, so a transposed layout flows down a chain instead of being
//     undone at once; broadcasts and iotas feeding only such an op follow it too.
//   - A reduce whose operand changed keeps the operand's order over the dimensions it keeps.
//   - A reshape whose operand changed takes the layout that makes it a bitcast, when one exists.
//   - A convolution keeps its output layout when the tiled kernel takes it (feature most minor, or batch and feature
//     most major: NHWC- and NCHW-like); otherwise its output becomes feature-minor.
//   - A convolution with its output feature most minor reads its operands in the layouts its kernel streams (a copy
//     where they differ): batch-grouped ones with one batch element per group (depthwise filter gradients) the lhs
//     batch and kernel output feature dimensions most minor, ungrouped ones the lhs input feature and the kernel
//     output then input feature dimensions most minor (the implicit im2col's contiguous runs).
// Fusions (the default pipeline fuses first, passes/optimization_pipeline.h) are handled as XLA's LayoutAssignment
// handles them (passes/layout_fusion.h): a kLoop, kInput or kOutput fusion keeps its own layout but reads its operands
// in the layouts they get, each fused parameter taking its operand's layout (a parameter read by a fused bitcast or
// convolution, or forwarded to the result, is constrained instead). Through a fusion's parameters:
//   - A producer computed for one fusion alone, which reads it only through transposes, writes the layout those
//     transposes read contiguously (the first rule, with the transpose read in place inside the fusion).
//   - An output fusion's convolution streams its operands as a plain one does (its parameters take the streamed
//     layouts); a loop fusion computed for one convolution alone writes the streamed layout instead of being copied.
// Transposes and reshapes that end up as layout changes become bitcasts (no data moves; buffer assignment aliases
// them). A constrained instruction reading a value whose layout changed reads a copy in the old layout.
//
// Constrained, kept exactly: parameters and roots of every computation (so the entry computation layout and every
// call boundary are unchanged), constants, bitcasts, instructions with tuple, token or dynamic shapes, layouts with
// more than a dimension order (tiles, memory spaces, ...), every op outside the list above, the results of fusions
// (but for the loop fusions above) and the instructions of fused computations other than parameters (they index
// logically; a fused convolution keeps its layout). A custom call bound to a C++ buffer kernel
// (ir/kernel_calls.h) is constrained to the default layout instead: it reads copies of operands in other layouts and
// its users read a copy of its result in the declared layout (passes/layout_copies.h, MakeKernelCallRowMajor).
//
// Precondition: the module verifies. Results are unchanged (every rule preserves logical values), so the
// interpreter's answer for the module is the same before and after. Returns whether anything changed.
#pragma once

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunLayoutAssignment(Module& module);

}  // namespace xlac
