// Inlined, branch-free approximations of the transcendental functions for the default (non-exact) numerics mode
// (docs/numerics.md). Each emits straight-line IR (selects, no branches, no calls) over an f32 or f64 value, scalar
// or vector, so LLVM's loop vectorizer can widen the elementwise loops that use them. Exact mode (--exact) keeps the
// libm calls the interpreter makes; these are never used there.
//
// Special values follow libm: NaN propagates, exp(-inf) = 0, exp overflows to inf and underflows through the
// denormals to 0, log(0) = -inf, log(x < 0) = NaN, tanh and erf saturate to +-1, odd functions keep the sign of zero.
// The measured maximum errors (ULP against a correctly rounded reference) are in docs/numerics.md; the bounds the
// unit test (test/unit/fast_math_test.cc) enforces are the kFastMath*Ulp constants below.
#pragma once

// LLVM is forward declared so that tests can read the bounds without LLVM's include path.
namespace llvm {
class Value;
class ConstantFolder;
class IRBuilderDefaultInserter;
template <typename FolderTy, typename InserterTy>
class IRBuilder;
}  // namespace llvm

namespace xlac::codegen {

using IrBuilder = llvm::IRBuilder<llvm::ConstantFolder, llvm::IRBuilderDefaultInserter>;  // llvm::IRBuilder<>

// Maximum error in ULP of the result type over the whole domain unless noted (f32 and f64 alike).
inline constexpr double kFastMathExpUlp = 2;
inline constexpr double kFastMathExpm1Ulp = 3;
inline constexpr double kFastMathLogUlp = 2;
inline constexpr double kFastMathLog1pUlp = 3;
inline constexpr double kFastMathTanhUlp = 4;
inline constexpr double kFastMathLogisticUlp = 3;
inline constexpr double kFastMathErfUlp = 8;  // f32: the XLA/Eigen rational; f64 is within 2
// sin/cos: f32 over its whole range; f64 for |x| <= kFastMathTrigRange64, beyond which the Cody-Waite reduction
// loses bits and the error grows with |x| (the result stays in [-1, 1]).
inline constexpr double kFastMathSinCosUlp = 3;
inline constexpr double kFastMathTrigRange64 = 1e6;
inline constexpr double kFastMathPowUlp = 2;  // f32 only: f64 pow keeps the libm call
inline constexpr double kFastMathCbrtUlp = 3;

llvm::Value* EmitFastExp(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastExpm1(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastLog(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastLog1p(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastTanh(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastLogistic(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastErf(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastSin(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastCos(IrBuilder& b, llvm::Value* x);
// f32 only (returns nullptr for f64, whose pow needs a double-double log to stay accurate).
llvm::Value* EmitFastPow(IrBuilder& b, llvm::Value* x, llvm::Value* y);
llvm::Value* EmitFastCbrt(IrBuilder& b, llvm::Value* x);
// sqrt and 1/sqrt are IEEE operations, as in exact mode: sqrt is correctly rounded, rsqrt (a division of the
// rounded root) within 1.5 ULP.
llvm::Value* EmitFastSqrt(IrBuilder& b, llvm::Value* x);
llvm::Value* EmitFastRsqrt(IrBuilder& b, llvm::Value* x);

}  // namespace xlac::codegen
