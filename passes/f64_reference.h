// f64-reference: the program with its floating-point arithmetic done in f64, the reference default-mode results are
// judged against (docs/numerics.md, "Differential tolerance"). The interpreter runs the rewritten module.
//
// Every f16/bf16/f32/f8 array becomes f64 and every c64 array c128, in every computation, so each op computes and
// rounds in f64 instead of its declared type. What keeps its declared types:
//  - the entry's parameters and every constant: a convert to f64 follows them (exact), so the rewritten module takes
//    the same arguments;
//  - ops whose meaning is tied to the type run on their original types, with converts around them: bitcast-convert,
//    reduce-precision, stochastic-convert, scaled-dot, rng (its values are drawn for the type), infeed (seeded by
//    shape), outfeed, and custom-calls other than the identity annotations (their targets expect declared types);
//  - a convert to a float type that cannot hold every value of its operand's declared type (f32 -> bf16, s32 -> f32)
//    still rounds to that type, then widens; a widening convert is the identity on the f64 value.
// Dots and convolutions drop `operand_precision` and `algorithm`, which only choose narrower arithmetic.
// The entry's results stay f64 (c128): the comparison measures errors against them, not against their rounding to
// the declared type. Input/output aliasing and the entry layout are dropped with them. Async pairs become
// synchronous first (async-to-sync), so that wrapped computations see promoted operands.
//
// An op of the kept kinds that calls computations has no promoted form: UnimplementedError.
// Precondition: the module verifies. Returns whether anything changed.
#pragma once

#include <memory>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

absl::StatusOr<bool> RunF64Reference(Module& module);

// A promoted copy of `module` (the input is not changed).
absl::StatusOr<std::unique_ptr<Module>> PromoteToF64(const Module& module);

// The type f64-reference gives `type`: f64 for every real float type, c128 for c64, `type` otherwise.
PrimitiveType F64ReferenceType(PrimitiveType type);

// `shape` (tuples element by element) with the types f64-reference gives its results, and a dense layout: the
// shape of the promoted module's value for a value of `shape` (to assemble device results of the reference).
Shape F64ReferenceShape(const Shape& shape);

}  // namespace xlac
