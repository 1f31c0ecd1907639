// Complex element types (c64, c128).
//
// A complex compute value is a <2 x float> (c64) or <2 x double> (c128) vector {real, imag}: the element's own
// bits, so loads and stores are bitcasts and the exact componentwise ops (add, subtract, negate, real, imag,
// comparisons, max/min, conversions) are inlined. Everything whose rounding depends on how the C++ library and the
// compiler evaluate std::complex (full-range multiply/divide with NaN recovery, abs, the transcendental functions,
// pow, atan2, sign) calls the runtime's xlac_rt_c64_* / xlac_rt_c128_* kernels (runtime/cpu/xlac_runtime_complex.h),
// which the interpreter calls too, so the two backends agree bit for bit by construction.
#include <cstring>

#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {
namespace {

PrimitiveType PartType(PrimitiveType t) { return t == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64; }

// The runtime kernel implementing `op` on complex operands (nullptr when the op is inlined or undefined).
const char* KernelName(Opcode op) {
  switch (op) {
    case Opcode::kMultiply:
      return "mul";
    case Opcode::kDivide:
      return "div";
    case Opcode::kPower:
      return "pow";
    case Opcode::kAtan2:
      return "atan2";
    case Opcode::kAbs:
      return "abs";
    case Opcode::kSqrt:
      return "sqrt";
    case Opcode::kRsqrt:
      return "rsqrt";
    case Opcode::kCbrt:
      return "cbrt";
    case Opcode::kExp:
      return "exp";
    case Opcode::kExpm1:
      return "expm1";
    case Opcode::kLog:
      return "log";
    case Opcode::kLog1p:
      return "log1p";
    case Opcode::kLogistic:
      return "logistic";
    case Opcode::kSign:
      return "sign";
    case Opcode::kSin:
      return "sin";
    case Opcode::kCos:
      return "cos";
    case Opcode::kTan:
      return "tan";
    case Opcode::kSinh:
      return "sinh";
    case Opcode::kCosh:
      return "cosh";
    case Opcode::kTanh:
      return "tanh";
    case Opcode::kAsin:
      return "asin";
    case Opcode::kAcos:
      return "acos";
    case Opcode::kAtan:
      return "atan";
    case Opcode::kAsinh:
      return "asinh";
    case Opcode::kAcosh:
      return "acosh";
    case Opcode::kAtanh:
      return "atanh";
    default:
      return nullptr;
  }
}

}  // namespace

llvm::Type* IrEmitter::ComplexComputeType(PrimitiveType type) {
  return llvm::FixedVectorType::get(type == PrimitiveType::kC64 ? b_.getFloatTy() : b_.getDoubleTy(), 2);
}

llvm::Value* IrEmitter::ComplexConstant(PrimitiveType type, const Literal& literal, int64_t i) {
  // From the raw bits, so NaN payloads and -0 survive.
  if (type == PrimitiveType::kC64) {
    float parts[2];
    std::memcpy(parts, literal.raw_data() + i * sizeof(parts), sizeof(parts));
    return llvm::ConstantDataVector::get(ctx(), llvm::ArrayRef<float>(parts));
  }
  double parts[2];
  std::memcpy(parts, literal.raw_data() + i * sizeof(parts), sizeof(parts));
  return llvm::ConstantDataVector::get(ctx(), llvm::ArrayRef<double>(parts));
}

llvm::Value* IrEmitter::MakeComplex(llvm::Value* re, llvm::Value* im) {
  llvm::Value* v = llvm::PoisonValue::get(llvm::FixedVectorType::get(re->getType(), 2));
  v = b_.CreateInsertElement(v, re, uint64_t{0});
  return b_.CreateInsertElement(v, im, uint64_t{1});
}

// Calls xlac_rt_<c64|c128>_<kernel>. Operands and the result travel through stack slots of the current function's
// entry block (the C ABI passes {real, imag} pairs by pointer); abs returns its real result directly.
llvm::Value* IrEmitter::CallComplexKernel(const char* kernel, PrimitiveType type, absl::Span<llvm::Value* const> args) {
  llvm::Type* ct = ComplexComputeType(type);
  llvm::Type* part = ComputeType(PartType(type));
  bool returns_part = std::strcmp(kernel, "abs") == 0;
  std::string name = fmt::format("xlac_rt_{}_{}", type == PrimitiveType::kC64 ? "c64" : "c128", kernel);
  llvm::Function* f = b_.GetInsertBlock()->getParent();
  llvm::IRBuilder<> entry(&f->getEntryBlock(), f->getEntryBlock().begin());
  std::vector<llvm::Value*> slots;
  for (size_t i = 0; i < args.size() + (returns_part ? 0 : 1); ++i) slots.push_back(entry.CreateAlloca(ct));
  for (llvm::Value* slot : slots) b_.CreateLifetimeStart(slot, b_.getInt64(static_cast<uint64_t>(ByteWidth(type))));
  for (size_t i = 0; i < args.size(); ++i) b_.CreateStore(args[i], slots[i]);
  std::vector<llvm::Type*> params(slots.size(), b_.getPtrTy());
  llvm::FunctionCallee callee = llvm_module_.getOrInsertFunction(
      name, llvm::FunctionType::get(returns_part ? part : b_.getVoidTy(), params, false));
  if (auto* fn = llvm::dyn_cast<llvm::Function>(callee.getCallee())) {
    fn->setDoesNotThrow();
    fn->setWillReturn();
  }
  llvm::Value* result = b_.CreateCall(callee, slots);
  if (!returns_part) result = b_.CreateLoad(ct, slots.back());
  for (llvm::Value* slot : slots) b_.CreateLifetimeEnd(slot, b_.getInt64(static_cast<uint64_t>(ByteWidth(type))));
  return result;
}

llvm::Value* IrEmitter::EmitComplexMultiplyAdd(PrimitiveType type, llvm::Value* acc, llvm::Value* a, llvm::Value* c) {
  // acc += a * c with std::complex's operators, as the interpreter's dot and convolution accumulate.
  return b_.CreateFAdd(acc, CallComplexKernel("mul", type, {a, c}));
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitComplexConvert(const Instruction& inst, llvm::Value* v, PrimitiveType from,
                                                           PrimitiveType to) {
  if (IsComplexType(from) && IsComplexType(to)) {
    if (from == to) return v;
    // Each part rounds (or widens) on its own.
    return to == PrimitiveType::kC128 ? b_.CreateFPExt(v, ComplexComputeType(to))
                                      : b_.CreateFPTrunc(v, ComplexComputeType(to));
  }
  if (IsComplexType(from)) {
    llvm::Value* re = b_.CreateExtractElement(v, uint64_t{0});
    if (to == PrimitiveType::kPred) {
      llvm::Value* zero = llvm::ConstantFP::get(re->getType(), 0.0);
      llvm::Value* im = b_.CreateExtractElement(v, uint64_t{1});
      return b_.CreateOr(b_.CreateFCmpUNE(re, zero), b_.CreateFCmpUNE(im, zero));  // z != 0
    }
    return EmitConvert(inst, re, PartType(from), to);  // the real part converts like a real value
  }
  // A real value becomes the real part (converted like a real value to the part type); the imaginary part is +0.
  XLAC_ASSIGN_OR_RETURN(llvm::Value * re, EmitConvert(inst, v, from, PartType(to)));
  return MakeComplex(re, llvm::ConstantFP::get(re->getType(), 0.0));
}

absl::StatusOr<llvm::Value*> IrEmitter::EmitComplexScalarOp(const Instruction& inst, PrimitiveType type,
                                                            absl::Span<llvm::Value* const> ops) {
  Opcode op = inst.opcode();
  PrimitiveType out_type = inst.shape().IsArray() ? inst.shape().element_type : type;
  if (op == Opcode::kConvert) return EmitComplexConvert(inst, ops[0], type, out_type);
  if (op == Opcode::kComplex) {
    if (type != PrimitiveType::kF32 && type != PrimitiveType::kF64) {
      return Unimplemented(inst, "complex of {} parts", PrimitiveTypeName(type));
    }
    return MakeComplex(ops[0], ops[1]);
  }
  if (!IsComplexType(type))
    return Unimplemented(inst, "{} result from {} operands", PrimitiveTypeName(out_type), PrimitiveTypeName(type));
  if (op == Opcode::kSelect) return b_.CreateSelect(ops[0], ops[1], ops[2]);
  llvm::Value* a = ops[0];
  llvm::Value* c = ops.size() > 1 ? ops[1] : nullptr;
  auto re = [&](llvm::Value* v) { return b_.CreateExtractElement(v, uint64_t{0}); };
  auto im = [&](llvm::Value* v) { return b_.CreateExtractElement(v, uint64_t{1}); };
  auto is_nan = [&](llvm::Value* v) {
    return b_.CreateOr(b_.CreateFCmpUNO(re(v), re(v)), b_.CreateFCmpUNO(im(v), im(v)));
  };
  auto equal = [&](llvm::Value* x, llvm::Value* y) {
    return b_.CreateAnd(b_.CreateFCmpOEQ(re(x), re(y)), b_.CreateFCmpOEQ(im(x), im(y)));
  };
  // Lexicographic by (real, imag), as StableHLO orders complex values for max/min.
  auto less = [&](llvm::Value* x, llvm::Value* y) {
    return b_.CreateOr(b_.CreateFCmpOLT(re(x), re(y)),
                       b_.CreateAnd(b_.CreateFCmpOEQ(re(x), re(y)), b_.CreateFCmpOLT(im(x), im(y))));
  };
  switch (op) {
    case Opcode::kReal:
      return re(a);
    case Opcode::kImag:
      return im(a);
    case Opcode::kAdd:
      return b_.CreateFAdd(a, c);
    case Opcode::kSubtract:
      return b_.CreateFSub(a, c);
    case Opcode::kNegate:
      return b_.CreateFNeg(a);
    case Opcode::kCompare: {
      std::string_view dir = inst.StringAttr("direction");
      if (dir == "EQ") return equal(a, c);
      if (dir == "NE") return b_.CreateNot(equal(a, c));
      return Unimplemented(inst, "comparison direction '{}' is not defined for complex values", std::string(dir));
    }
    case Opcode::kMaximum:
    case Opcode::kMinimum: {
      // A NaN in any part propagates (the first operand's first), otherwise std::max / std::min.
      llvm::Value* r = op == Opcode::kMaximum ? b_.CreateSelect(less(a, c), c, a) : b_.CreateSelect(less(c, a), c, a);
      r = b_.CreateSelect(is_nan(c), c, r);
      return b_.CreateSelect(is_nan(a), a, r);
    }
    default:
      break;
  }
  if (const char* kernel = KernelName(op)) {
    bool binary = IsElementwiseBinary(op);
    if (binary == (c != nullptr) && ops.size() == (binary ? 2u : 1u)) return CallComplexKernel(kernel, type, ops);
  }
  return Unimplemented(inst, "not defined for element type {}", PrimitiveTypeName(type));
}

}  // namespace xlac::codegen::internal
