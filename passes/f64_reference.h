// f64-reference: the program with its floating-point arithmetic done in f64, the reference default-mode results are
// judged against (docs/numerics.md, "Differential tolerance"). The interpreter runs the rewritten module. The same
// rewrite with f32 as its target (PromoteFloats(module, kF32)) is the f32 reference, for programs whose judged
// outputs are all narrower than f32 and whose f64 reference does not fit: f32's rounding (2^-24) is far below
// theirs (bf16 2^-8), at half the f64 reference's memory.
//
// Every f16/bf16/f32/f8 array becomes f64 and every c64 array c128 (target f32: every float array narrower than f32
// becomes f32; f32, f64 and complex arrays keep their types), in every computation, so each op computes and rounds
// in the target type instead of its declared type. What keeps its declared types:
//  - the entry's parameters and every constant, so the rewritten module takes the same arguments, and the ops that
//    only move their values (reshape, transpose, slice, dynamic-slice, gather, copy, concatenate, reverse, tuples,
//    all-to-all, all-gather, collective-permute, sharding annotations): every value of a narrower type is exactly a
//    value of the target, so a convert widens them where an op computes with them (once per value), and a dot with
//    a promoted result reads them as they are. A model's bf16 weight tables are never held widened whole;
//  - ops whose meaning is tied to the type run on their original types, with converts around them: bitcast-convert,
//    reduce-precision, stochastic-convert, scaled-dot, rng (its values are drawn for the type), infeed (seeded by
//    shape), outfeed, and custom-calls other than the identity annotations (their targets expect declared types);
//  - a convert to a float type that cannot hold every value of its operand's declared type (f32 -> bf16, s32 -> f32)
//    still rounds to that type, then widens; a widening convert is the identity on the promoted value.
// Dots and convolutions drop `operand_precision` and `algorithm`, which only choose narrower arithmetic.
// The entry's results stay promoted: the comparison measures errors against them, not against their rounding to
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

// `target`: kF64 or kF32.
absl::StatusOr<bool> RunFloatPromotion(Module& module, PrimitiveType target);
absl::StatusOr<bool> RunF64Reference(Module& module);  // target f64

// A promoted copy of `module` (the input is not changed).
absl::StatusOr<std::unique_ptr<Module>> PromoteFloats(const Module& module, PrimitiveType target);
absl::StatusOr<std::unique_ptr<Module>> PromoteToF64(const Module& module);  // target f64

// The type the promotion to `target` gives `type`. f64: f64 for every real float type, c128 for c64. f32: f32 for
// every real float type narrower than f32. `type` otherwise.
PrimitiveType ReferenceType(PrimitiveType type, PrimitiveType target);
PrimitiveType F64ReferenceType(PrimitiveType type);

// `shape` (tuples element by element) with the types the promotion gives its results, and a dense layout: the
// shape of the promoted module's value for a value of `shape` (to assemble device results of the reference).
Shape ReferenceShape(const Shape& shape, PrimitiveType target);
Shape F64ReferenceShape(const Shape& shape);

}  // namespace xlac
