// Shared machinery of the algebraic simplifier's rule files; not part of its API.
//
// A rule looks at one instruction and returns the value that replaces it (an existing instruction, or a new one
// made with Rewriter::Add), or nullptr. Rules check everything before creating anything, so a rule that returns
// nullptr leaves the computation untouched.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace xlac::simplify {

class Rewriter {
 public:
  Rewriter(Module& module, Computation& comp) : module_(module), comp_(comp) {}

  // Adds a new instruction that will replace `original`: it gets the original's sharding, metadata and frontend
  // attributes, and `shape` with a layout (the default one if `shape` has none).
  Instruction* Add(const Instruction& original, Opcode opcode, Shape shape, std::vector<Instruction*> operands);
  // A constant holding `literal` (shape with a default layout), with the original's sharding and metadata.
  Instruction* AddConstant(const Instruction& original, Literal literal);

  Module& module() { return module_; }
  Computation& computation() { return comp_; }

 private:
  Module& module_;
  Computation& comp_;
};

// Same element type, dimensions and (effective) layout: one can stand for the other.
bool SameShapeAndLayout(const Shape& a, const Shape& b);
// True if bypassing `inst` (so that it may become dead) loses nothing: it carries no sharding and no control edges.
bool Bypassable(const Instruction& inst);

// The value of a constant or of a broadcast of a scalar constant, when known. `literal` is the constant's literal
// (for a broadcast, the scalar).
struct KnownValue {
  const Literal* literal = nullptr;
  bool is_scalar_broadcast = false;
};
std::optional<KnownValue> GetKnownValue(const Instruction& inst);

// Every element of the known value of `inst` equals `bits`' value: integers/pred by value, floats bitwise (so -0.0
// and +0.0 differ). False when the value is unknown.
bool IsAllInt(const Instruction& inst, int64_t value);
bool IsAllFloat(const Instruction& inst, double value);
// All ones in every bit (-1 signed, max unsigned, true).
bool IsAllOnesBits(const Instruction& inst);

// f16, bf16, f32 and f64: the types whose float identities below are known to be exact in the interpreter and
// codegen (narrow f8/f6/f4 formats differ in zero and NaN encodings; complex arithmetic mixes parts).
bool IsIeeeFloat(PrimitiveType type);

// The rule families, one file each.
Instruction* SimplifyElementwise(Rewriter& rw, Instruction* inst);
Instruction* SimplifyShapeOp(Rewriter& rw, Instruction* inst);
Instruction* SimplifyDotOrReduce(Rewriter& rw, Instruction* inst);

}  // namespace xlac::simplify
