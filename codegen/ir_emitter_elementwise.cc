// Scalar semantics of the elementwise ops (mirroring runtime/interpreter/kernels.cc and convert.cc per compute
// type) and the array loops that apply them.
#include <cmath>
#include <limits>

#include "codegen/fast_math.h"
#include "codegen/ir_emitter_internal.h"
#include "ir/kernel_calls.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Intrinsics.h"

namespace xlac::codegen::internal {
namespace {

bool IsFloatType(PrimitiveType t) {
  return t == PrimitiveType::kF16 || t == PrimitiveType::kBF16 || t == PrimitiveType::kF32 ||
         t == PrimitiveType::kF64 || IrEmitter::IsNarrowFloat(t);
}

// libm entry point the interpreter reaches through std::<fn>(float|double).
const char* LibmName(Opcode op, bool is_double) {
  auto pick = [&](const char* f, const char* d) { return is_double ? d : f; };
  switch (op) {
    case Opcode::kExp:
      return pick("expf", "exp");
    case Opcode::kLog:
      return pick("logf", "log");
    case Opcode::kTanh:
      return pick("tanhf", "tanh");
    case Opcode::kSin:
      return pick("sinf", "sin");
    case Opcode::kCos:
      return pick("cosf", "cos");
    case Opcode::kTan:
      return pick("tanf", "tan");
    case Opcode::kSinh:
      return pick("sinhf", "sinh");
    case Opcode::kCosh:
      return pick("coshf", "cosh");
    case Opcode::kAsin:
      return pick("asinf", "asin");
    case Opcode::kAcos:
      return pick("acosf", "acos");
    case Opcode::kAtan:
      return pick("atanf", "atan");
    case Opcode::kAsinh:
      return pick("asinhf", "asinh");
    case Opcode::kAcosh:
      return pick("acoshf", "acosh");
    case Opcode::kAtanh:
      return pick("atanhf", "atanh");
    case Opcode::kCbrt:
      return pick("cbrtf", "cbrt");
    case Opcode::kErf:
      return pick("erff", "erf");
    case Opcode::kExpm1:
      return pick("expm1f", "expm1");
    case Opcode::kLog1p:
      return pick("log1pf", "log1p");
    case Opcode::kPower:
      return pick("powf", "pow");
    case Opcode::kAtan2:
      return pick("atan2f", "atan2");
    default:
      return nullptr;
  }
}

// The inlined approximation of `op` (codegen/fast_math.h) for the default numerics mode, or nullptr where the
// libm call stays (other ops, f64 pow).
llvm::Value* EmitFastMath(llvm::IRBuilder<>& b, Opcode op, absl::Span<llvm::Value* const> ops) {
  switch (op) {
    case Opcode::kExp:
      return EmitFastExp(b, ops[0]);
    case Opcode::kExpm1:
      return EmitFastExpm1(b, ops[0]);
    case Opcode::kLog:
      return EmitFastLog(b, ops[0]);
    case Opcode::kLog1p:
      return EmitFastLog1p(b, ops[0]);
    case Opcode::kTanh:
      return EmitFastTanh(b, ops[0]);
    case Opcode::kLogistic:
      return EmitFastLogistic(b, ops[0]);
    case Opcode::kErf:
      return EmitFastErf(b, ops[0]);
    case Opcode::kSin:
      return EmitFastSin(b, ops[0]);
    case Opcode::kCos:
      return EmitFastCos(b, ops[0]);
    case Opcode::kCbrt:
      return EmitFastCbrt(b, ops[0]);
    case Opcode::kPower:
      return EmitFastPow(b, ops[0], ops[1]);
    default:
      return nullptr;
  }
}

}  // namespace

llvm::Value* IrEmitter::CallLibm(const char* name, llvm::Type* type, absl::Span<llvm::Value* const> args) {
  std::vector<llvm::Type*> params(args.size(), type);
  llvm::FunctionCallee callee = llvm_module_.getOrInsertFunction(name, llvm::FunctionType::get(type, params, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    fn->setDoesNotThrow();
    fn->setWillReturn();
  }
  llvm::CallInst* call = b_.CreateCall(callee, std::vector<llvm::Value*>(args.begin(), args.end()));
  // Exact mode promises the library's result. LLVM would fold a call on a constant argument with the host's
  // correctly rounded math instead (tanhf(-0.125) one ulp away from glibc's), so the call is not a builtin there.
  if (options_.exact) call->addFnAttr(llvm::Attribute::NoBuiltin);
  return call;
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitCompare(const Instruction& inst, PrimitiveType type, llvm::Value* a,
                                                    llvm::Value* c) {
  std::string_view dir = inst.StringAttr("direction");
  bool total = inst.StringAttr("type") == "TOTALORDER";
  if (IsFloatType(type) && total) {
    llvm::Type* it = b_.getIntNTy(a->getType()->getPrimitiveSizeInBits());
    unsigned bits = it->getIntegerBitWidth();
    auto key = [&](llvm::Value* v) {
      llvm::Value* i = b_.CreateBitCast(v, it);
      llvm::Value* mask = b_.CreateAnd(b_.CreateAShr(i, bits - 1), llvm::APInt::getSignedMaxValue(bits));
      return b_.CreateXor(i, mask);
    };
    a = key(a);
    c = key(c);
    type = PrimitiveType::kS64;  // signed integer comparison of the keys
  }
  if (IsFloatType(type)) {
    if (dir == "EQ") return b_.CreateFCmpOEQ(a, c);
    if (dir == "NE") return b_.CreateFCmpUNE(a, c);
    if (dir == "LT") return b_.CreateFCmpOLT(a, c);
    if (dir == "GT") return b_.CreateFCmpOGT(a, c);
    if (dir == "LE") return b_.CreateFCmpOLE(a, c);
    if (dir == "GE") return b_.CreateFCmpOGE(a, c);
  } else {
    bool is_signed = IsSignedIntegralType(type);
    if (dir == "EQ") return b_.CreateICmpEQ(a, c);
    if (dir == "NE") return b_.CreateICmpNE(a, c);
    if (dir == "LT") return is_signed ? b_.CreateICmpSLT(a, c) : b_.CreateICmpULT(a, c);
    if (dir == "GT") return is_signed ? b_.CreateICmpSGT(a, c) : b_.CreateICmpUGT(a, c);
    if (dir == "LE") return is_signed ? b_.CreateICmpSLE(a, c) : b_.CreateICmpULE(a, c);
    if (dir == "GE") return is_signed ? b_.CreateICmpSGE(a, c) : b_.CreateICmpUGE(a, c);
  }
  return Unimplemented(inst, "comparison direction '{}'", std::string(dir));
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitConvert(const Instruction& inst, llvm::Value* v, PrimitiveType from,
                                                    PrimitiveType to) {
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, from));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, to));
  if (IsComplexType(from) || IsComplexType(to)) return EmitComplexConvert(inst, v, from, to);
  llvm::Type* dst = ComputeType(to);
  bool from_float = IsFloatType(from), to_float = IsFloatType(to);
  if (to == PrimitiveType::kPred) {
    if (from == PrimitiveType::kPred) return v;
    return from_float ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(v->getType(), 0.0))
                      : b_.CreateICmpNE(v, llvm::ConstantInt::get(v->getType(), 0));
  }
  if (from == PrimitiveType::kPred) {
    return to_float ? b_.CreateUIToFP(v, dst) : b_.CreateZExt(v, dst);
  }
  if (!from_float && !to_float) {
    unsigned fw = v->getType()->getIntegerBitWidth(), tw = dst->getIntegerBitWidth();
    if (tw == fw) return v;
    if (tw < fw) return b_.CreateTrunc(v, dst);
    return IsSignedIntegralType(from) ? b_.CreateSExt(v, dst) : b_.CreateZExt(v, dst);
  }
  if (!from_float) {
    // Integers widen to 64 bits and convert to f32 (narrow floats) or f64, as the interpreter does.
    llvm::Value* wide =
        IsSignedIntegralType(from) ? b_.CreateSExt(v, b_.getInt64Ty()) : b_.CreateZExt(v, b_.getInt64Ty());
    return IsSignedIntegralType(from) ? b_.CreateSIToFP(wide, dst) : b_.CreateUIToFP(wide, dst);
  }
  if (!to_float) {
    // NaN -> 0, saturate in double, then truncate toward zero.
    llvm::Value* d = v->getType()->isDoubleTy() ? v : b_.CreateFPExt(v, b_.getDoubleTy());
    unsigned tw = dst->getIntegerBitWidth();
    llvm::Value* result;
    if (IsSignedIntegralType(to)) {
      llvm::APInt lo = llvm::APInt::getSignedMinValue(tw), hi = llvm::APInt::getSignedMaxValue(tw);
      llvm::Value* lo_d = llvm::ConstantFP::get(b_.getDoubleTy(), static_cast<double>(lo.getSExtValue()));
      llvm::Value* hi_d = llvm::ConstantFP::get(b_.getDoubleTy(), static_cast<double>(hi.getSExtValue()));
      llvm::Value* safe = b_.CreateSelect(b_.CreateFCmpOLE(d, lo_d), llvm::ConstantFP::get(b_.getDoubleTy(), 0.0), d);
      safe = b_.CreateSelect(b_.CreateFCmpOGE(safe, hi_d), llvm::ConstantFP::get(b_.getDoubleTy(), 0.0), safe);
      safe = b_.CreateSelect(b_.CreateFCmpUNO(d, d), llvm::ConstantFP::get(b_.getDoubleTy(), 0.0), safe);
      result = b_.CreateTrunc(b_.CreateFPToSI(safe, b_.getInt64Ty()), dst);
      result = b_.CreateSelect(b_.CreateFCmpOGE(d, hi_d), b_.getInt(hi), result);
      result = b_.CreateSelect(b_.CreateFCmpOLE(d, lo_d), b_.getInt(lo), result);
    } else {
      llvm::APInt hi = llvm::APInt::getMaxValue(tw);
      llvm::Value* hi_d = llvm::ConstantFP::get(b_.getDoubleTy(), static_cast<double>(hi.getZExtValue()));
      llvm::Value* zero_d = llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
      llvm::Value* out_of_range = b_.CreateOr(b_.CreateFCmpOLE(d, zero_d), b_.CreateFCmpOGE(d, hi_d));
      llvm::Value* safe = b_.CreateSelect(b_.CreateOr(out_of_range, b_.CreateFCmpUNO(d, d)), zero_d, d);
      result = b_.CreateTrunc(b_.CreateFPToUI(safe, b_.getInt64Ty()), dst);
      result = b_.CreateSelect(b_.CreateFCmpOGE(d, hi_d), b_.getInt(hi), result);
    }
    return b_.CreateSelect(b_.CreateFCmpUNO(d, d), llvm::ConstantInt::get(dst, 0), result);
  }
  // float -> float.
  if (from == PrimitiveType::kF64 && IsNarrowFloat(to)) return NarrowRound(to, v);  // rounds once from f64
  if (v->getType() == dst) return v;  // same compute type; the store rounds to the element type
  if (dst->isDoubleTy()) return b_.CreateFPExt(v, dst);
  // f64 -> f32/bf16 goes through f32; f64 -> f16 rounds once.
  if (to == PrimitiveType::kF16) return b_.CreateFPExt(b_.CreateFPTrunc(v, b_.getHalfTy()), dst);
  return b_.CreateFPTrunc(v, dst);
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitScalarOp(const Instruction& inst, PrimitiveType type,
                                                     absl::Span<llvm::Value* const> ops) {
  if (IsElementwiseKernelCall(inst)) return EmitElementwiseKernelCall(inst, ops);
  Opcode op = inst.opcode();
  PrimitiveType out_type = inst.shape().IsArray() ? inst.shape().element_type : type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, type));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, out_type));
  if (IsComplexType(type) || IsComplexType(out_type)) return EmitComplexScalarOp(inst, type, ops);
  if (op == Opcode::kConvert) return EmitConvert(inst, ops[0], type, out_type);
  if (op == Opcode::kReducePrecision) return EmitReducePrecision(inst, ops[0]);
  if (op == Opcode::kCompare) return EmitCompare(inst, type, ops[0], ops[1]);
  if (op == Opcode::kSelect) return b_.CreateSelect(ops[0], ops[1], ops[2]);
  llvm::Value* a = ops[0];
  llvm::Value* c = ops.size() > 1 ? ops[1] : nullptr;
  llvm::Type* ct = ComputeType(type);
  bool is_float = IsFloatType(type), is_double = type == PrimitiveType::kF64;
  bool is_pred = type == PrimitiveType::kPred, is_signed = IsSignedIntegralType(type);
  auto fconst = [&](double x) { return llvm::ConstantFP::get(ct, x); };
  auto iconst = [&](int64_t x) { return llvm::ConstantInt::get(ct, static_cast<uint64_t>(x), true); };
  auto is_nan = [&](llvm::Value* x) { return b_.CreateFCmpUNO(x, x); };
  auto less = [&](llvm::Value* x, llvm::Value* y) {
    if (is_float) return b_.CreateFCmpOLT(x, y);
    return is_signed ? b_.CreateICmpSLT(x, y) : b_.CreateICmpULT(x, y);
  };
  auto intrinsic = [&](llvm::Intrinsic::ID id, std::vector<llvm::Value*> args) -> llvm::Value* {
    return b_.CreateIntrinsic(id, {ct}, args);
  };
  if (is_float && !options_.exact) {
    if (llvm::Value* fast = EmitFastMath(b_, op, ops)) return fast;
  }
  switch (op) {
    case Opcode::kClamp: {
      // NaN bounds or value propagate (lo, then x, then hi); otherwise min(hi, max(x, lo)).
      llvm::Value* lo = ops[0];
      llvm::Value* x = ops[1];
      llvm::Value* hi = ops[2];
      llvm::Value* m = b_.CreateSelect(less(x, lo), lo, x);
      llvm::Value* r = b_.CreateSelect(less(m, hi), m, hi);
      if (is_float) {
        r = b_.CreateSelect(is_nan(hi), hi, r);
        r = b_.CreateSelect(is_nan(x), x, r);
        r = b_.CreateSelect(is_nan(lo), lo, r);
      }
      return r;
    }
    case Opcode::kIsFinite:
      if (!is_float) return Unimplemented(inst, "is-finite of {}", PrimitiveTypeName(type));
      return b_.CreateFCmpONE(intrinsic(llvm::Intrinsic::fabs, {a}), fconst(INFINITY));
    case Opcode::kReal:
      return a;
    case Opcode::kImag:
      return llvm::Constant::getNullValue(ct);
    case Opcode::kAdd:
      if (is_pred) return b_.CreateOr(a, c);
      return is_float ? b_.CreateFAdd(a, c) : b_.CreateAdd(a, c);
    case Opcode::kSubtract:
      if (is_pred) return b_.CreateXor(a, c);
      return is_float ? b_.CreateFSub(a, c) : b_.CreateSub(a, c);
    case Opcode::kMultiply:
      if (is_pred) return b_.CreateAnd(a, c);
      return is_float ? b_.CreateFMul(a, c) : b_.CreateMul(a, c);
    case Opcode::kDivide: {
      if (is_float) return b_.CreateFDiv(a, c);
      if (is_pred) return b_.CreateOr(a, b_.CreateNot(c));
      llvm::Value* zero = b_.CreateICmpEQ(c, iconst(0));
      if (!is_signed) {
        llvm::Value* q = b_.CreateUDiv(a, b_.CreateSelect(zero, iconst(1), c));
        return b_.CreateSelect(zero, iconst(-1), q);
      }
      llvm::Value* minus_one = b_.CreateICmpEQ(c, iconst(-1));
      llvm::Value* q = b_.CreateSDiv(a, b_.CreateSelect(b_.CreateOr(zero, minus_one), iconst(1), c));
      q = b_.CreateSelect(minus_one, b_.CreateSub(iconst(0), a), q);
      return b_.CreateSelect(zero, iconst(-1), q);
    }
    case Opcode::kRemainder: {
      if (is_float) return b_.CreateFRem(a, c);
      if (is_pred) return b_.CreateAnd(a, b_.CreateNot(c));
      llvm::Value* zero = b_.CreateICmpEQ(c, iconst(0));
      if (!is_signed) {
        llvm::Value* r = b_.CreateURem(a, b_.CreateSelect(zero, iconst(1), c));
        return b_.CreateSelect(zero, a, r);
      }
      llvm::Value* minus_one = b_.CreateICmpEQ(c, iconst(-1));
      llvm::Value* r = b_.CreateSRem(a, b_.CreateSelect(b_.CreateOr(zero, minus_one), iconst(1), c));
      r = b_.CreateSelect(minus_one, iconst(0), r);
      return b_.CreateSelect(zero, a, r);
    }
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      llvm::Value* r = op == Opcode::kMaximum ? b_.CreateSelect(less(a, c), c, a) : b_.CreateSelect(less(c, a), c, a);
      if (is_float) {
        r = b_.CreateSelect(is_nan(c), c, r);
        r = b_.CreateSelect(is_nan(a), a, r);
      }
      return r;
    }
    case Opcode::kPower: {
      if (is_pred) return b_.CreateOr(a, b_.CreateNot(c));
      if (is_float) {
        llvm::Value* one = b_.CreateOr(b_.CreateFCmpOEQ(a, fconst(1)), b_.CreateFCmpOEQ(c, fconst(0)));
        return b_.CreateSelect(one, fconst(1), CallLibm(LibmName(op, is_double), ct, {a, c}));
      }
      // Square-and-multiply over the exponent bits, in the element width (wrapping like the interpreter's u64).
      llvm::BasicBlock* pre = b_.GetInsertBlock();
      llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx(), "ipow", function_);
      llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx(), "ipow.done", function_);
      b_.CreateCondBr(b_.CreateICmpEQ(c, iconst(0)), done, loop);
      b_.SetInsertPoint(loop);
      llvm::PHINode* result = b_.CreatePHI(ct, 2);
      llvm::PHINode* base = b_.CreatePHI(ct, 2);
      llvm::PHINode* exponent = b_.CreatePHI(ct, 2);
      result->addIncoming(iconst(1), pre);
      base->addIncoming(a, pre);
      exponent->addIncoming(c, pre);
      llvm::Value* odd = b_.CreateICmpNE(b_.CreateAnd(exponent, iconst(1)), iconst(0));
      llvm::Value* next_result = b_.CreateSelect(odd, b_.CreateMul(result, base), result);
      llvm::Value* next_base = b_.CreateMul(base, base);
      llvm::Value* next_exp = b_.CreateLShr(exponent, iconst(1));
      result->addIncoming(next_result, loop);
      base->addIncoming(next_base, loop);
      exponent->addIncoming(next_exp, loop);
      b_.CreateCondBr(b_.CreateICmpEQ(next_exp, iconst(0)), done, loop);
      b_.SetInsertPoint(done);
      llvm::PHINode* p = b_.CreatePHI(ct, 2);
      p->addIncoming(iconst(1), pre);
      p->addIncoming(next_result, loop);
      llvm::Value* r = p;
      if (is_signed) r = b_.CreateSelect(b_.CreateICmpSLT(c, iconst(0)), iconst(0), r);
      return b_.CreateSelect(b_.CreateICmpEQ(a, iconst(1)), iconst(1), r);
    }
    case Opcode::kAtan2:
      if (!is_float) break;
      return CallLibm(LibmName(op, is_double), ct, {a, c});
    case Opcode::kAnd:
      if (is_float) break;
      return b_.CreateAnd(a, c);
    case Opcode::kOr:
      if (is_float) break;
      return b_.CreateOr(a, c);
    case Opcode::kXor:
      if (is_float) break;
      return b_.CreateXor(a, c);
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic: {
      if (is_float || is_pred) break;
      unsigned bits = ct->getIntegerBitWidth();
      llvm::Value* in_range = b_.CreateICmpULT(c, iconst(bits));
      llvm::Value* amount = b_.CreateSelect(in_range, c, iconst(0));
      if (op == Opcode::kShiftLeft) return b_.CreateSelect(in_range, b_.CreateShl(a, amount), iconst(0));
      if (op == Opcode::kShiftRightLogical) return b_.CreateSelect(in_range, b_.CreateLShr(a, amount), iconst(0));
      return b_.CreateSelect(in_range, b_.CreateAShr(a, amount), b_.CreateAShr(a, iconst(bits - 1)));
    }
    case Opcode::kMulhi: {
      if (is_float || is_pred) break;
      unsigned bits = ct->getIntegerBitWidth();
      llvm::Type* wide = b_.getIntNTy(2 * bits);
      llvm::Value* x = is_signed ? b_.CreateSExt(a, wide) : b_.CreateZExt(a, wide);
      llvm::Value* y = is_signed ? b_.CreateSExt(c, wide) : b_.CreateZExt(c, wide);
      return b_.CreateTrunc(b_.CreateLShr(b_.CreateMul(x, y), bits), ct);
    }
    case Opcode::kAbs:
      if (is_float) return intrinsic(llvm::Intrinsic::fabs, {a});
      if (is_signed) return b_.CreateSelect(b_.CreateICmpSLT(a, iconst(0)), b_.CreateSub(iconst(0), a), a);
      return a;
    case Opcode::kNegate:
      if (is_pred) return a;
      return is_float ? b_.CreateFNeg(a) : b_.CreateSub(iconst(0), a);
    case Opcode::kNot:
      if (is_float) break;
      return b_.CreateNot(a);
    case Opcode::kSign:
      if (is_pred) break;
      if (is_float) {
        llvm::Value* mag = b_.CreateSelect(b_.CreateFCmpUNE(a, fconst(0)), fconst(1), fconst(0));
        return b_.CreateSelect(is_nan(a), a, intrinsic(llvm::Intrinsic::copysign, {mag, a}));
      }
      if (is_signed) {
        return b_.CreateSelect(b_.CreateICmpSGT(a, iconst(0)), iconst(1),
                               b_.CreateSelect(b_.CreateICmpSLT(a, iconst(0)), iconst(-1), iconst(0)));
      }
      return b_.CreateZExt(b_.CreateICmpNE(a, iconst(0)), ct);
    case Opcode::kClz:
      if (is_float || is_pred) break;
      return intrinsic(llvm::Intrinsic::ctlz, {a, b_.getFalse()});
    case Opcode::kPopulationCount:
      if (is_float || is_pred) break;
      return intrinsic(llvm::Intrinsic::ctpop, {a});
    case Opcode::kFloor:
    case Opcode::kCeil:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven: {
      if (is_pred) break;
      if (!is_float) return a;
      llvm::Intrinsic::ID id = op == Opcode::kFloor             ? llvm::Intrinsic::floor
                               : op == Opcode::kCeil            ? llvm::Intrinsic::ceil
                               : op == Opcode::kRoundNearestAfz ? llvm::Intrinsic::round
                                                                : llvm::Intrinsic::nearbyint;
      return intrinsic(id, {a});
    }
    case Opcode::kSqrt:
      if (!is_float) break;
      return intrinsic(llvm::Intrinsic::sqrt, {a});
    case Opcode::kRsqrt:
      if (!is_float) break;
      return b_.CreateFDiv(fconst(1), intrinsic(llvm::Intrinsic::sqrt, {a}));
    case Opcode::kLogistic:
      if (!is_float) break;
      return b_.CreateFDiv(
          fconst(1), b_.CreateFAdd(fconst(1), CallLibm(LibmName(Opcode::kExp, is_double), ct, {b_.CreateFNeg(a)})));
    default:
      if (const char* name = LibmName(op, is_double); name != nullptr && is_float && ops.size() == 1) {
        return CallLibm(name, ct, {a});
      }
      break;
  }
  return Unimplemented(inst, "not defined for element type {}", PrimitiveTypeName(type));
}

absl::Status IrEmitter::EmitElementwise(const Instruction& inst) {
  const Shape& out = inst.shape();
  if (!out.IsArray()) return Unimplemented(inst, "non-array result");
  // The operand whose element type the op computes in (select/clamp: the value operands).
  int64_t typed = inst.opcode() == Opcode::kSelect || inst.opcode() == Opcode::kClamp ? 1 : 0;
  PrimitiveType type = inst.operand(typed)->shape().element_type;
  IrArray result = ArrayFor(&inst);
  std::vector<IrArray> operands;
  for (const Instruction* operand : inst.operands()) operands.push_back(ArrayFor(operand));
  if (inst.opcode() == Opcode::kSelect) {
    // Moves bits, as the interpreter does.
    return ParallelShapeLoop(out, inst.name(), [&](const Index& index) {
      auto at = [&](const IrArray& a) { return a.shape.dimensions.empty() ? Index{} : index; };
      llvm::Value* p = LoadCompute(operands[0], at(operands[0]));
      llvm::Value* v = b_.CreateSelect(p, LoadRaw(operands[1], at(operands[1])), LoadRaw(operands[2], at(operands[2])));
      StoreRaw(result, index, v);
    });
  }
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, type));
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, out.element_type));
  absl::Status status;
  XLAC_RETURN_IF_ERROR(ParallelShapeLoop(out, inst.name(), [&](const Index& index) {
    if (!status.ok()) return;
    std::vector<llvm::Value*> values;
    for (const IrArray& a : operands) values.push_back(LoadCompute(a, a.shape.dimensions.empty() ? Index{} : index));
    absl::StatusOr<llvm::Value*> v = EmitScalarOp(inst, type, values);
    if (!v.ok()) {
      status = v.status();
      return;
    }
    StoreCompute(result, index, *v);
  }));
  return status;
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitBitcastConvert(const Instruction& inst, llvm::Value* v) {
  PrimitiveType from = inst.operand(0)->shape().element_type, to = inst.shape().element_type;
  if (IsComplexType(from) || IsComplexType(to) || BitWidth(from) != BitWidth(to)) {
    return Unimplemented(inst, "elementwise bitcast-convert from {} to {}", PrimitiveTypeName(from),
                         PrimitiveTypeName(to));
  }
  llvm::Value* raw = StorageFromCompute(from, v);
  if (IsNarrowType(to)) {
    if (raw->getType() != b_.getInt8Ty()) raw = b_.CreateZExtOrTrunc(raw, b_.getInt8Ty());
    int bits = BitWidth(to);
    if (bits < 8) raw = b_.CreateAnd(raw, b_.getInt8(static_cast<uint8_t>((1u << bits) - 1)));
    return NarrowLoad(to, raw);
  }
  return ComputeFromStorage(to, raw);
}

}  // namespace xlac::codegen::internal
