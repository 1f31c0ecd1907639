// The packed, cache-blocked, register-tiled GEMM behind f32/f64 dots (ir_emitter_dot.cc); not part of the codegen
// API.
//
// C[m, n] = sum over k of A[m, k] * B[k, n], for one batch element, with C's n stride 1. Every C element sees its
// products in k order (0, 1, 2, ...), as a multiply rounded to the element type followed by an add rounded to it,
// starting from +0: bit for bit the interpreter's loop. Blocking over m and n is free; the k blocks run in
// ascending order and carry each partial sum through C itself, which holds the exact accumulator (the element type
// is the accumulation type here).
#pragma once

#include <cstdint>
#include <string>

#include "codegen/target.h"

namespace llvm {
class Function;
class Module;
class Type;
}  // namespace llvm

namespace xlac::codegen::internal {

struct GemmSpec {
  llvm::Type* element = nullptr;  // float or double
  int64_t m = 0, n = 0, k = 0;    // all > 0
  // Element strides of A (m, k), B (k, n) and C (m; n is 1).
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0, c_m = 0;
  // Multiply as b * a instead of a * b: A and B were swapped to make C's n stride 1, and the interpreter's product
  // is lhs * rhs (the operand order only matters for which NaN payload survives).
  bool b_times_a = false;
};

// Register tile and cache blocks for an element of `element_bits` on `target`.
struct GemmTiling {
  int64_t vector_width = 0;  // elements per vector register
  int64_t mr = 0, nr = 0;    // register tile: mr rows x nr columns (nr a multiple of vector_width)
  int64_t mc = 0, nc = 0, kc = 0;
};
GemmTiling ChooseGemmTiling(int element_bits, const TargetInfo& target);

// Defines `void name(ptr a, ptr b, ptr c)` computing `spec` (shapes and strides are constants in its body).
llvm::Function* EmitGemmFunction(llvm::Module& module, const std::string& name, const GemmSpec& spec,
                                 const TargetInfo& target);

}  // namespace xlac::codegen::internal
