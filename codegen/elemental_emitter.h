// Element-at-a-time emission of fused computations (passes/fusion/fusible.h), and the reduction loops shared by
// reduce (ir_emitter_reduce.cc) and input fusions (ir_emitter_fusion.cc). Included only by codegen's fusion and
// reduce emitters.
//
// Numerics: every fused elementwise op goes through IrEmitter::EmitScalarOp and rounds its result to its own element
// type (RoundToType), which is exactly what storing it to an unfused buffer does, so a fusion computes the same bits
// as the ops it replaces.
#pragma once

#include <functional>
#include <map>
#include <utility>
#include <vector>

#include "codegen/ir_emitter_internal.h"

namespace xlac::codegen::internal {

class ElementalEmitter {
 public:
  // `fusion` is the kFusion instruction: the fused computation's parameters read its operands' buffers, and its
  // dot or convolution (output fusions) reads the buffer it was emitted into. Construct it before the loops that use
  // it: the array bases it needs are computed here, where they dominate every loop.
  ElementalEmitter(IrEmitter& e, const Instruction& fusion);

  // Compute value of array instruction `inst` of the fused computation at logical `index`, rounded to its element
  // type. A value asked for twice at the same index values is emitted once.
  absl::StatusOr<llvm::Value*> Emit(const Instruction* inst, const Index& index);
  // Forgets cached values; call at the start of every loop body (values of another body may not dominate it).
  void Reset() { cache_.clear(); }

 private:
  absl::StatusOr<llvm::Value*> EmitUncached(const Instruction* inst, const Index& index);
  absl::StatusOr<llvm::Value*> EmitOperandAt(const Instruction* inst, int64_t operand, const Index& index);
  absl::StatusOr<Index> ReshapeIndex(const Shape& from, const Shape& to, const Index& index);
  IrArray ConstantArray(const Instruction* inst);

  IrEmitter& e_;
  llvm::IRBuilder<>& b_;
  std::map<const Instruction*, IrArray> arrays_;  // fused parameters, materialized dots/convolutions, constants
  std::map<std::pair<const Instruction*, std::vector<llvm::Value*>>, llvm::Value*> cache_;
};

// One reduce (possibly variadic) of a reduction: its reducer and one output array per input.
struct ReduceGroup {
  const Instruction* reduce = nullptr;
  std::vector<IrArray> outputs;
};
// Compute values of every group's inputs (or init values), group after group, at an index of the reduction input
// (init values: the empty index).
using ReduceValues = std::function<absl::StatusOr<std::vector<llvm::Value*>>(const Index&)>;

// Reduces an input of `input_shape` (its layout decides the loop order) over `reduced` dimensions for every group in
// one pass. Exact mode keeps the interpreter's order for every output element (sequential over the reduced elements
// in row-major order). Otherwise an associative and commutative reducer (add, multiply, maximum, minimum, and, or)
// lets the order change: f32/f64 sums and products reassociate so LLVM keeps several vector accumulators, and a
// reduction whose minor dimension is kept accumulates whole output rows (column reduction). Integer reducers of
// that kind give the same bits in any order, so they take the fast loops in exact mode too.
absl::Status EmitReduction(IrEmitter& e, const Shape& input_shape, const std::vector<int64_t>& reduced,
                           const std::vector<ReduceGroup>& groups, const ReduceValues& inits,
                           const ReduceValues& inputs);

}  // namespace xlac::codegen::internal
