// Dataflow helpers shared by copy insertion and buffer assignment: which instruction defines the data of an array
// leaf, and which instructions read that data, within one computation. tuple, get-tuple-element and bitcast only
// forward data (they alias their operand); every other instruction defines its own result leaves.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/instruction.h"
#include "ir/module.h"

namespace xlac {

using ShapeIndex = std::vector<int64_t>;

// One array leaf of an instruction's result.
struct Leaf {
  Instruction* inst = nullptr;
  ShapeIndex index;
  bool operator==(const Leaf&) const = default;
};

// Indices of the array leaves of `shape`, depth first (XLA's flattened tuple order).
std::vector<ShapeIndex> ArrayLeafIndices(const Shape& shape);

// tuple, get-tuple-element, bitcast.
bool IsForwarding(const Instruction& inst);

// Follows forwarding instructions back to the leaf whose instruction defines the data.
Leaf SourceOf(Instruction* inst, ShapeIndex index);

struct LeafUses {
  // Every (instruction, index) that holds the source's data through forwarding, the source first.
  std::vector<Leaf> members;
  // Distinct non-forwarding users of any member, in discovery order (while and conditional included).
  std::vector<Instruction*> readers;
  // Indices of the computation root at which the data reaches it.
  std::vector<ShapeIndex> root_indices;
};

// Uses of `source`'s data within its computation.
LeafUses UsesOf(const Leaf& source);

// True if `to` is reachable from `from` along user and control-successor edges (`from` reaches itself).
bool Reaches(const Instruction* from, const Instruction* to);

// Elementwise ops whose code can write the result over an operand of the same shape and layout as it reads it.
bool IsInPlaceCapable(const Instruction& inst);
// Whether `from` reaches `root` (of the same computation) only through elementwise ops of its dimensions: every
// element of `root` reads `from` at its own index only.
bool ReadsOnlyAtWrittenIndex(const Instruction* from, const Instruction* root);
// Whether `inst`'s result may be written over its operand `operand` (same shape and layout assumed): elementwise ops,
// and loop fusions (codegen computes an element from its operands before storing it) whose fused parameter
// `operand` reaches the root only through elementwise ops of its dimensions, i.e. is read only at the index
// written. Output fusions never: their dot writes the buffer before the epilogue reads the operand.
bool CanWriteOver(const Instruction& inst, int64_t operand);
// Same dimensions, element type and (defaulted) layout.
bool SameArrayLayout(const Shape& a, const Shape& b);

// SameArrayLayout on every array leaf of two compatible shapes (tuples element by element).
bool SameLayouts(const Shape& a, const Shape& b);
// `value` as a value of `target` (compatible with its shape, possibly in other layouts), built in `comp`: `value`
// itself when the layouts already agree, a copy for an array, and for a tuple a tuple of its coerced elements
// (get-tuple-element, copy where needed).
Instruction* CoerceLayouts(Module& module, Computation& comp, Instruction* value, const Shape& target);

// The called computations that run as sequential code (while condition/body, conditional branches, call).
bool CallsSequentially(const Instruction& inst);

// A fresh module-unique name for a copy of an instruction named `name`: a trailing ".N" is dropped first, so copies
// of copies read "add.3" rather than "add.1.1".
std::string UniqueCopyName(Module& module, const std::string& name);

// A copy of `inst` (opcode, shape, attributes, called computations, metadata...) with the given operands and name,
// not yet added to a computation. Control edges are not copied.
std::unique_ptr<Instruction> CloneWithOperands(const Instruction& inst, std::string name,
                                               std::vector<Instruction*> operands);

// Replaces `call` (a call, fusion, ... with one called computation) in `caller` by copies of the callee's
// instructions: parameters become the call's operands and the copied root replaces its uses (coerced to the call's
// layouts where the callee's root has others). Control edges inside
// the callee are copied; the call's control predecessors precede the copies at the callee's entry boundary and its
// successors follow the copies at the exit boundary. The callee itself is left in the module.
absl::Status InlineCalledComputation(Module& module, Computation& caller, Instruction* call);

// Whether any instruction of `module` calls `comp`.
bool IsCalled(const Module& module, const Computation* comp);

}  // namespace xlac
