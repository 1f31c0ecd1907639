// Sub-byte integers (s2, s4, u2, u4), the f8/f6/f4 float types and reduce-precision.
//
// Storage follows the interpreter (runtime/interpreter/values.cc): one byte per element, signed sub-byte integers
// sign-extended, unsigned ones masked. Sub-byte integers compute at their own width, which wraps exactly like the
// interpreter's 64-bit arithmetic truncated on store. Narrow floats compute in f32: loads decode through a table
// built from ir/float_types.cc (the interpreter's own decoder, so NaN signs and e8m0's missing zero come out the same)
// and stores round to nearest even with integer arithmetic that reproduces DoubleToFloatBits for every f32 and f64
// input (overflow to inf, NaN or max finite per format, fnuz zeros, e8m0's power-of-two rounding).
#include <cstring>

#include "codegen/ir_emitter_internal.h"
#include "ir/float_types.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {
namespace {

struct NarrowFormat {
  FloatFormat f;
  uint64_t exp_mask, mant_mask, sign_bit;
  uint64_t MaxFinite() const {
    if (f.has_infinity) return ((exp_mask - 1) << f.mantissa_bits) | mant_mask;
    if (f.nan_is_all_ones_only) {
      if (f.mantissa_bits == 0) return (exp_mask - 1) << f.mantissa_bits;
      return (exp_mask << f.mantissa_bits) | (mant_mask - 1);
    }
    return (exp_mask << f.mantissa_bits) | mant_mask;
  }
  uint64_t DefaultNan(bool negative) const {
    if (f.has_infinity) {
      uint64_t quiet = f.mantissa_bits > 0 ? uint64_t{1} << (f.mantissa_bits - 1) : 0;
      return (negative ? sign_bit : 0) | (exp_mask << f.mantissa_bits) | quiet;
    }
    if (f.nan_is_all_ones_only) return (negative ? sign_bit : 0) | (exp_mask << f.mantissa_bits) | mant_mask;
    return sign_bit;
  }
  // What DoubleToFloatBits returns for a NaN input.
  uint64_t NanResult(bool negative) const { return f.has_nan ? DefaultNan(negative) : MaxFinite(); }
  // What it returns for infinities and finite values past the largest finite one.
  uint64_t OverflowResult(bool negative) const {
    if (f.has_infinity) return (exp_mask << f.mantissa_bits) | (negative ? sign_bit : 0);
    if (f.has_nan) return DefaultNan(negative);
    return MaxFinite() | (negative ? sign_bit : 0);
  }
};

NarrowFormat GetNarrowFormat(PrimitiveType type) {
  NarrowFormat r;
  r.f = GetFloatFormat(type);
  r.exp_mask = (uint64_t{1} << r.f.exponent_bits) - 1;
  r.mant_mask = (uint64_t{1} << r.f.mantissa_bits) - 1;
  r.sign_bit = r.f.is_unsigned ? 0 : uint64_t{1} << (r.f.exponent_bits + r.f.mantissa_bits);
  return r;
}

// Bits of `type` nearest to `value` (f32 or f64), as an i8: DoubleToFloatBits in integer IR.
llvm::Value* EncodeNarrow(llvm::IRBuilder<>& b, PrimitiveType type, llvm::Value* value) {
  NarrowFormat nf = GetNarrowFormat(type);
  bool dbl = value->getType()->isDoubleTy();
  const unsigned width = dbl ? 64 : 32;
  const int64_t src_mant = dbl ? 52 : 23, src_bias = dbl ? 1023 : 127;
  llvm::IntegerType* it = b.getIntNTy(width);
  auto k = [&](int64_t v) { return llvm::ConstantInt::get(it, static_cast<uint64_t>(v), true); };
  llvm::Value* u = b.CreateBitCast(value, it);
  llvm::Value* neg = b.CreateICmpSLT(u, k(0));
  llvm::Value* a = b.CreateAnd(u, llvm::ConstantInt::get(it, llvm::APInt::getSignedMaxValue(width)));
  llvm::Value* inf = k(((int64_t{1} << (width - 1 - src_mant)) - 1) << src_mant);
  llvm::Value* be = b.CreateLShr(a, src_mant);
  llvm::Value* frac = b.CreateAnd(a, k((int64_t{1} << src_mant) - 1));
  llvm::Value* be_zero = b.CreateICmpEQ(be, k(0));
  llvm::Value* result;
  if (nf.f.is_unsigned && nf.f.mantissa_bits == 0) {
    // e8m0: the nearest power of two, ties (mantissa exactly 1.5) upward; below 2^-127 is the smallest value.
    llvm::Value* half_up = b.CreateZExt(b.CreateICmpNE(b.CreateAnd(frac, k(int64_t{1} << (src_mant - 1))), k(0)), it);
    llvm::Value* exp = b.CreateAdd(b.CreateSub(be, k(src_bias - nf.f.exponent_bias)), half_up);
    llvm::Value* normal = b.CreateSelect(b.CreateICmpSLT(exp, k(0)), k(0), exp);
    normal = b.CreateSelect(b.CreateICmpSGE(normal, k(255)), k(255), normal);
    // Only f32 subnormals reach e8m0's range: 2^-127 * [1.5, 2) rounds to 2^-126.
    llvm::Value* sub = dbl ? k(0) : b.CreateZExt(b.CreateICmpUGE(frac, k(0x600000)), it);
    result = b.CreateSelect(be_zero, sub, normal);
    result = b.CreateSelect(b.CreateAnd(neg, b.CreateICmpNE(a, k(0))), k(255), result);
    return b.CreateTrunc(result, b.getInt8Ty());
  }
  const int64_t m = nf.f.mantissa_bits, bias = nf.f.exponent_bias, emin = 1 - bias;
  llvm::Value* mant = b.CreateSelect(be_zero, frac, b.CreateOr(frac, k(int64_t{1} << src_mant)));
  llvm::Value* e = b.CreateSub(b.CreateSelect(be_zero, k(1), be), k(src_bias));
  llvm::Value* e_eff = b.CreateSelect(b.CreateICmpSLT(e, k(emin)), k(emin), e);
  // Right shift that leaves the target's quantum (2^(e_eff - m)) as the unit; past src_mant + 2 everything is 0.
  llvm::Value* shift = b.CreateAdd(b.CreateSub(e_eff, e), k(src_mant - m));
  shift = b.CreateSelect(b.CreateICmpUGT(shift, k(src_mant + 2)), k(src_mant + 2), shift);
  llvm::Value* q = b.CreateLShr(mant, shift);
  llvm::Value* rem = b.CreateAnd(mant, b.CreateSub(b.CreateShl(k(1), shift), k(1)));
  llvm::Value* half = b.CreateShl(k(1), b.CreateSub(shift, k(1)));
  llvm::Value* odd = b.CreateICmpNE(b.CreateAnd(q, k(1)), k(0));
  llvm::Value* up = b.CreateOr(b.CreateICmpUGT(rem, half), b.CreateAnd(b.CreateICmpEQ(rem, half), odd));
  q = b.CreateAdd(q, b.CreateZExt(up, it));
  // The implicit bit of q carries into the exponent field (subnormal -> normal, mantissa overflow -> next binade).
  llvm::Value* mag = b.CreateAdd(b.CreateShl(b.CreateAdd(e_eff, k(bias - 1)), m), q);
  llvm::Value* sign = b.CreateSelect(neg, k(static_cast<int64_t>(nf.sign_bit)), k(0));
  result = b.CreateOr(mag, sign);
  result = b.CreateSelect(b.CreateICmpEQ(mag, k(0)), nf.f.has_negative_zero ? sign : k(0), result);
  llvm::Value* overflow =
      b.CreateOr(b.CreateICmpSGT(mag, k(static_cast<int64_t>(nf.MaxFinite()))), b.CreateICmpEQ(a, inf));
  result = b.CreateSelect(overflow,
                          b.CreateSelect(neg, k(static_cast<int64_t>(nf.OverflowResult(true))),
                                         k(static_cast<int64_t>(nf.OverflowResult(false)))),
                          result);
  result = b.CreateSelect(
      b.CreateICmpUGT(a, inf),
      b.CreateSelect(neg, k(static_cast<int64_t>(nf.NanResult(true))), k(static_cast<int64_t>(nf.NanResult(false)))),
      result);
  return b.CreateTrunc(result, b.getInt8Ty());
}

float DecodeNarrow(PrimitiveType type, uint8_t bits) { return static_cast<float>(FloatBitsToDouble(type, bits)); }

}  // namespace

bool IrEmitter::IsNarrowFloat(PrimitiveType type) { return IsFloatingPointType(type) && BitWidth(type) <= 8; }

bool IrEmitter::IsNarrowType(PrimitiveType type) {
  return IsNarrowFloat(type) || (IsIntegralType(type) && BitWidth(type) < 8);
}

bool IrEmitter::RoundsOnStore(PrimitiveType type) {
  return type == PrimitiveType::kF16 || type == PrimitiveType::kBF16 || IsNarrowFloat(type);
}

llvm::Value* IrEmitter::NarrowDecode(PrimitiveType type, llvm::Value* raw) {
  std::string name = fmt::format("xlac.decode.{}", PrimitiveTypeName(type));
  llvm::GlobalVariable* table = llvm_module_.getNamedGlobal(name);
  if (table == nullptr) {
    // Indexed by the whole storage byte, so stray high bits decode as the interpreter's masking decoder does.
    std::vector<uint32_t> entries(256);
    for (int i = 0; i < 256; ++i) {
      float f = DecodeNarrow(type, static_cast<uint8_t>(i));
      std::memcpy(&entries[i], &f, sizeof(f));
    }
    llvm::Constant* init = llvm::ConstantDataArray::get(ctx(), llvm::ArrayRef<uint32_t>(entries));
    table = new llvm::GlobalVariable(llvm_module_, init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, init, name);
    table->setAlignment(llvm::Align(64));
    table->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  }
  llvm::Value* slot = b_.CreateInBoundsGEP(b_.getInt32Ty(), table, b_.CreateZExt(raw, b_.getInt64Ty()));
  return b_.CreateBitCast(b_.CreateLoad(b_.getInt32Ty(), slot), b_.getFloatTy());
}

llvm::Value* IrEmitter::NarrowEncode(PrimitiveType type, llvm::Value* value) { return EncodeNarrow(b_, type, value); }

llvm::Value* IrEmitter::NarrowRound(PrimitiveType type, llvm::Value* value) {
  if (!IsNarrowFloat(type)) return value;
  return NarrowDecode(type, NarrowEncode(type, value));
}

llvm::Value* IrEmitter::NarrowLoad(PrimitiveType type, llvm::Value* raw) {
  if (IsNarrowFloat(type)) return NarrowDecode(type, raw);
  return b_.CreateTrunc(raw, ComputeType(type));
}

llvm::Value* IrEmitter::NarrowStore(PrimitiveType type, llvm::Value* value) {
  if (IsNarrowFloat(type)) return NarrowEncode(type, value);
  return IsSignedIntegralType(type) ? b_.CreateSExt(value, b_.getInt8Ty()) : b_.CreateZExt(value, b_.getInt8Ty());
}

llvm::Value* IrEmitter::NarrowConstant(PrimitiveType type, const Literal& literal, int64_t i) {
  uint8_t byte = literal.raw_data()[i];
  if (IsNarrowFloat(type)) return llvm::ConstantFP::get(b_.getFloatTy(), DecodeNarrow(type, byte));
  uint64_t mask = (uint64_t{1} << BitWidth(type)) - 1;
  return llvm::ConstantInt::get(ComputeType(type), byte & mask);
}

// XLA's reduce-precision on the IEEE bits of the compute value, as runtime/interpreter/convert.cc does it.
absl::StatusOr<llvm::Value*> IrEmitter::EmitReducePrecision(const Instruction& inst, llvm::Value* value) {
  int64_t exponent_bits = inst.IntAttr("exponent_bits"), mantissa_bits = inst.IntAttr("mantissa_bits");
  if (exponent_bits < 1 || mantissa_bits < 0) return Unimplemented(inst, "exponent_bits < 1 or mantissa_bits < 0");
  if (!value->getType()->isFloatingPointTy()) return Unimplemented(inst, "non-floating-point operand");
  bool dbl = value->getType()->isDoubleTy();
  const unsigned width = dbl ? 64 : 32;
  const int64_t src_mant = dbl ? 52 : 23, src_exp = dbl ? 11 : 8;
  llvm::IntegerType* it = b_.getIntNTy(width);
  auto k = [&](uint64_t v) { return llvm::ConstantInt::get(it, v); };
  llvm::Value* bits = b_.CreateBitCast(value, it);
  if (mantissa_bits < src_mant) {
    uint64_t last_bit = uint64_t{1} << (src_mant - mantissa_bits);
    llvm::Value* x_last = b_.CreateLShr(b_.CreateAnd(bits, k(last_bit)), k(src_mant - mantissa_bits));
    bits = b_.CreateAnd(b_.CreateAdd(b_.CreateAdd(bits, x_last), k((last_bit >> 1) - 1)), k(~(last_bit - 1)));
  }
  if (exponent_bits < src_exp) {
    uint64_t sign_mask = uint64_t{1} << (width - 1);
    uint64_t exp_mask = ((uint64_t{1} << src_exp) - 1) << src_mant;
    uint64_t bias = (uint64_t{1} << (src_exp - 1)) - 1;
    uint64_t reduced_bias = (uint64_t{1} << (exponent_bits - 1)) - 1;
    uint64_t max_exp = bias + reduced_bias, min_exp = bias - reduced_bias;
    llvm::Value* x_exp = b_.CreateAnd(bits, k(exp_mask));
    llvm::Value* overflows = b_.CreateICmpUGT(x_exp, k(max_exp << src_mant));
    llvm::Value* underflows = b_.CreateICmpULE(x_exp, k(min_exp << src_mant));
    llvm::Value* signed_zero = b_.CreateAnd(bits, k(sign_mask));
    llvm::Value* signed_inf = b_.CreateOr(signed_zero, k(exp_mask));
    bits = b_.CreateSelect(overflows, signed_inf, bits);
    bits = b_.CreateSelect(underflows, signed_zero, bits);
  }
  llvm::Value* result = b_.CreateBitCast(bits, value->getType());
  llvm::Value* nan_result = mantissa_bits > 0 ? value : llvm::ConstantFP::getInfinity(value->getType());
  return b_.CreateSelect(b_.CreateFCmpUNO(value, value), nan_result, result);
}

// Same-width bitcast-convert between sub-byte types (s4 <-> u4 <-> f4e2m1fn, s2 <-> u2): the low bits carry over and
// a signed destination is stored sign-extended, as the interpreter's bit-level path does.
absl::Status IrEmitter::EmitSubByteBitcastConvert(const Instruction& inst) {
  PrimitiveType from = inst.operand(0)->shape().element_type, to = inst.shape().element_type;
  int bits = BitWidth(to);
  if (BitWidth(from) != bits) return Unimplemented(inst, "bitcast-convert between sub-byte types of different widths");
  IrArray in = ArrayFor(inst.operand(0)), out = ArrayFor(&inst);
  ShapeLoop(inst.shape(), [&](const Index& index) {
    llvm::Value* v = b_.CreateAnd(LoadRaw(in, index), b_.getInt8(static_cast<uint8_t>((1u << bits) - 1)));
    if (IsSignedIntegralType(to)) v = b_.CreateAShr(b_.CreateShl(v, 8 - bits), 8 - bits);
    StoreRaw(out, index, v);
  });
  return absl::OkStatus();
}

}  // namespace xlac::codegen::internal
