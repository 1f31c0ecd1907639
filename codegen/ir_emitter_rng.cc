// rng-bit-generator and topk through the shared runtime kernels (runtime/cpu/xlac_runtime_rng.h), and the stateful
// rng / rng-get-and-update-state ops, which mirror the interpreter's per-run, per-device counter stream.
#include <algorithm>
#include <cmath>

#include "codegen/ir_emitter_internal.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen::internal {
namespace {

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// interp::HashString: the per-instruction stream seed, known at compile time.
uint64_t HashString(std::string_view s, uint64_t seed) {
  uint64_t h = 0xcbf29ce484222325ull ^ SplitMix64(seed);
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  return h;
}

llvm::Value* EmitSplitMix64(llvm::IRBuilder<>& b, llvm::Value* x) {
  x = b.CreateAdd(x, b.getInt64(0x9e3779b97f4a7c15ull));
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, 30)), b.getInt64(0xbf58476d1ce4e5b9ull));
  x = b.CreateMul(b.CreateXor(x, b.CreateLShr(x, 27)), b.getInt64(0x94d049bb133111ebull));
  return b.CreateXor(x, b.CreateLShr(x, 31));
}

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions) n *= d;
  return n;
}

// Row-major linear position of `index` in `dims` (how the interpreter's literals number elements).
llvm::Value* RowMajorLinear(llvm::IRBuilder<>& b, const std::vector<int64_t>& dims, const Index& index) {
  llvm::Value* linear = b.getInt64(0);
  for (size_t d = 0; d < dims.size(); ++d) {
    linear = b.CreateNSWAdd(b.CreateNSWMul(linear, b.getInt64(dims[d])), index[d]);
  }
  return linear;
}

}  // namespace

absl::Status IrEmitter::EmitRngBitGenerator(const Instruction& inst) {
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes.size() != 2 || !shape.tuple_shapes[1].IsArray()) {
    return Unimplemented(inst, "expected a (state, data) result");
  }
  const Shape& state_shape = inst.operand(0)->shape();
  if (state_shape.element_type != PrimitiveType::kU64 || state_shape.rank() != 1) {
    return Unimplemented(inst, "expected a u64[n] state");
  }
  int64_t state_size = state_shape.dimensions[0];
  const Shape& data_shape = shape.tuple_shapes[1];
  PrimitiveType t = data_shape.element_type;
  int bits = BitWidth(t);
  if (t == PrimitiveType::kPred || IsComplexType(t) || (bits != 64 && bits > 32) || bits <= 0) {
    return Unimplemented(inst, "rng-bit-generator cannot produce {}", PrimitiveTypeName(t));
  }
  std::string_view algorithm = inst.StringAttr("algorithm");
  int32_t alg;
  if (algorithm == "rng_three_fry") {
    alg = 0;  // XLAC_RT_RNG_THREE_FRY
  } else if (algorithm == "rng_philox" || algorithm == "rng_default" || algorithm.empty()) {
    alg = 1;  // XLAC_RT_RNG_PHILOX
  } else {
    return Unimplemented(inst, "unknown rng algorithm {}", std::string(algorithm));
  }
  if (state_size < 2) return Unimplemented(inst, "the state needs at least two words");
  IrArray state = ArrayFor(inst.operand(0));
  IrArray new_state = ArrayFor(&inst, {0});
  IrArray data = ArrayFor(&inst, {1});
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      "xlac_rt_rng_bit_generator",
      llvm::FunctionType::get(i32, {i32, ptr, i64, ptr, ptr, ptr, i64, i32, i32, i32}, false));
  // The kernel writes the bits in row-major order; another layout gets them through a row-major temporary.
  bool row_major = HasDefaultLayout(data_shape);
  int64_t bytes = ElementCount(data_shape) * ByteWidth(t);
  llvm::Value* target = row_major ? data.base : AllocTemp(std::max<int64_t>(bytes, 1));
  b_.CreateCall(fn, {b_.getInt32(alg), state.base, I64(state_size), new_state.base, target,
                     ConstantI64Array(data_shape.dimensions, "rng.dims"), I64(data_shape.rank()), b_.getInt32(bits),
                     b_.getInt32(static_cast<int32_t>(ByteWidth(t))), b_.getInt32(IsSignedIntegralType(t) ? 1 : 0)});
  if (!row_major) {
    IrArray temp = data;
    temp.base = target;
    temp.shape.layout = Layout::Default(data_shape.rank());
    temp.strides = LayoutStrides(temp.shape);
    ShapeLoop(data.shape, [&](const Index& idx) { StoreRaw(data, idx, LoadRaw(temp, idx)); });
    FreeTemp(target);
  }
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitTopK(const Instruction& inst) {
  const Shape& shape = inst.shape();
  const Shape& in_shape = inst.operand(0)->shape();
  if (!shape.IsTuple() || shape.tuple_shapes.size() != 2 || in_shape.rank() == 0) {
    return Unimplemented(inst, "malformed topk");
  }
  PrimitiveType t = in_shape.element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, t));
  PrimitiveType index_type = shape.tuple_shapes[1].element_type;
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, index_type));
  if (!IsIntegralType(index_type) || index_type == PrimitiveType::kPred) {
    return Unimplemented(inst, "indices of type {}", PrimitiveTypeName(index_type));
  }
  int64_t k = inst.IntAttr("k", 0);
  bool largest = inst.BoolAttr("largest", true);
  const std::vector<int64_t>& dims = in_shape.dimensions;
  int64_t len = dims.back();
  if (k < 0 || k > len) return Unimplemented(inst, "k={} out of range for {} elements", k, len);
  int64_t rows = len == 0 ? 0 : ElementCount(in_shape) / len;
  if (rows == 0 || k == 0) return absl::OkStatus();
  IrArray x = ArrayFor(inst.operand(0));
  IrArray values = ArrayFor(&inst, {0});
  IrArray indices = ArrayFor(&inst, {1});
  llvm::Value* keys = AllocTemp(rows * len * 8);
  llvm::Value* perm = AllocTemp(rows * k * 8);
  llvm::Type* i64 = b_.getInt64Ty();
  // Keys whose signed order is the interpreter's comparison: total order for floats, value order for integers.
  std::vector<int64_t> identity(dims.size());
  for (size_t d = 0; d < dims.size(); ++d) identity[d] = static_cast<int64_t>(d);
  LoopNest(dims, identity, [&](const Index& idx) {
    llvm::Value* v = LoadCompute(x, idx);
    llvm::Value* key;
    if (v->getType()->isFloatingPointTy()) {
      unsigned width = v->getType()->getPrimitiveSizeInBits();
      llvm::Value* i = b_.CreateBitCast(v, b_.getIntNTy(width));
      llvm::Value* mask = b_.CreateAnd(b_.CreateAShr(i, width - 1), llvm::APInt::getSignedMaxValue(width));
      key = b_.CreateSExt(b_.CreateXor(i, mask), i64);
    } else if (IsSignedIntegralType(t)) {
      key = b_.CreateSExt(v, i64);
    } else {
      key = b_.CreateXor(b_.CreateZExt(v, i64), b_.getInt64(static_cast<uint64_t>(1) << 63));
    }
    b_.CreateStore(key, b_.CreateInBoundsGEP(i64, keys, RowMajorLinear(b_, dims, idx)));
  });
  llvm::Type* ptr = b_.getPtrTy();
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      "xlac_rt_topk_keys", llvm::FunctionType::get(b_.getVoidTy(), {ptr, i64, i64, i64, b_.getInt32Ty(), ptr}, false));
  b_.CreateCall(fn, {keys, I64(rows), I64(len), I64(k), b_.getInt32(largest ? 1 : 0), perm});
  std::vector<int64_t> out_dims = dims;
  out_dims.back() = k;
  LoopNest(out_dims, identity, [&](const Index& idx) {
    llvm::Value* p = b_.CreateLoad(i64, b_.CreateInBoundsGEP(i64, perm, RowMajorLinear(b_, out_dims, idx)));
    Index src = idx;
    src.back() = p;
    StoreRaw(values, idx, LoadRaw(x, src));
    StoreCompute(indices, idx, b_.CreateTrunc(p, ComputeType(index_type)));
  });
  FreeTemp(keys);
  FreeTemp(perm);
  return absl::OkStatus();
}

// The interpreter's DeviceContext::rng_counter: one per device and run, so an entry-local slot starting at zero.
llvm::Value* IrEmitter::RngCounterSlot() {
  llvm::BasicBlock& entry = function_->getEntryBlock();
  for (llvm::Instruction& i : entry) {
    if (i.getName() == "rng.counter") return &i;
  }
  llvm::IRBuilder<> init(&entry, entry.begin());
  llvm::AllocaInst* slot = init.CreateAlloca(b_.getInt64Ty(), nullptr, "rng.counter");
  init.CreateStore(init.getInt64(0), slot);
  return slot;
}

absl::Status IrEmitter::EmitRng(const Instruction& inst) {
  llvm::Type* i64 = b_.getInt64Ty();
  if (inst.opcode() == Opcode::kRngGetAndUpdateState) {
    if (!inst.shape().IsArray() || inst.shape().element_type != PrimitiveType::kU64 || ElementCount(inst.shape()) < 1) {
      return Unimplemented(inst, "expected a u64 state result");
    }
    llvm::Value* slot = RngCounterSlot();
    llvm::Value* counter = b_.CreateLoad(i64, slot);
    IrArray out = ArrayFor(&inst);
    b_.CreateMemSet(out.base, b_.getInt8(0), ElementCount(inst.shape()) * 8, llvm::MaybeAlign(1));
    b_.CreateStore(counter, out.base);
    b_.CreateStore(b_.CreateAdd(counter, I64(inst.IntAttr("delta", 0))), slot);
    return absl::OkStatus();
  }
  if (inst.operand_count() != 2 || !inst.shape().IsArray()) return Unimplemented(inst, "malformed rng");
  std::string_view dist = inst.StringAttr("distribution");
  PrimitiveType t = inst.shape().element_type;
  PrimitiveType pt = inst.operand(0)->shape().element_type;
  bool is_float = t == PrimitiveType::kF32 || t == PrimitiveType::kF64;
  bool is_int = IsIntegralType(t) && t != PrimitiveType::kPred && HasComputeType(t);
  if (!((dist == "rng_uniform" && (is_float || is_int)) || (dist == "rng_normal" && is_float))) {
    return Unimplemented(inst, "rng distribution '{}' for {}", std::string(dist), PrimitiveTypeName(t));
  }
  if (!HasComputeType(pt) || pt == PrimitiveType::kPred || pt != inst.operand(1)->shape().element_type ||
      (is_int && !IsIntegralType(pt))) {
    return Unimplemented(inst, "rng parameters of type {}", PrimitiveTypeName(pt));
  }
  llvm::Type* f64 = b_.getDoubleTy();
  IrArray pa = ArrayFor(inst.operand(0));
  IrArray pb = ArrayFor(inst.operand(1));
  Index zeros_a(pa.shape.dimensions.size(), I64(0)), zeros_b(pb.shape.dimensions.size(), I64(0));
  llvm::Value* a = LoadCompute(pa, zeros_a);
  llvm::Value* c = LoadCompute(pb, zeros_b);
  llvm::Value* slot = RngCounterSlot();
  llvm::Value* counter = b_.CreateLoad(i64, slot);
  b_.CreateStore(b_.CreateAdd(counter, I64(1)), slot);
  llvm::Value* stream =
      b_.CreateXor(b_.getInt64(HashString(inst.name(), options_.rng_seed)), EmitSplitMix64(b_, counter));
  IrArray out = ArrayFor(&inst);
  llvm::Type* ct = ComputeType(t);
  auto uniform01 = [&](llvm::Value* i, int which) {
    llvm::Value* j = b_.CreateAdd(b_.CreateMul(i, I64(2)), I64(which));
    llvm::Value* r = EmitSplitMix64(b_, b_.CreateXor(stream, EmitSplitMix64(b_, j)));
    return b_.CreateFMul(b_.CreateUIToFP(b_.CreateLShr(r, 11), f64), llvm::ConstantFP::get(f64, 0x1p-53));
  };
  const std::vector<int64_t>& dims = out.shape.dimensions;
  if (is_int) {
    // interp::IndexValue: unsigned values past int64 max saturate.
    auto index_value = [&](llvm::Value* v) -> llvm::Value* {
      if (IsSignedIntegralType(pt)) return b_.CreateSExt(v, i64);
      llvm::Value* z = b_.CreateZExt(v, i64);
      return b_.CreateSelect(b_.CreateICmpSLT(z, I64(0)), I64(INT64_MAX), z);
    };
    llvm::Value* lo = index_value(a);
    llvm::Value* hi = index_value(c);
    llvm::Value* range = b_.CreateSelect(b_.CreateICmpSGT(hi, lo), b_.CreateSub(hi, lo), I64(1));
    ShapeLoop(out.shape, [&](const Index& idx) {
      llvm::Value* r = EmitSplitMix64(b_, b_.CreateXor(stream, EmitSplitMix64(b_, RowMajorLinear(b_, dims, idx))));
      StoreCompute(out, idx, b_.CreateTrunc(b_.CreateAdd(lo, b_.CreateURem(r, range)), ct));
    });
    return absl::OkStatus();
  }
  auto to_double = [&](llvm::Value* v) -> llvm::Value* {
    if (v->getType()->isDoubleTy()) return v;
    if (v->getType()->isFloatTy()) return b_.CreateFPExt(v, f64);
    return IsSignedIntegralType(pt) ? b_.CreateSIToFP(v, f64) : b_.CreateUIToFP(v, f64);
  };
  llvm::Value* da = to_double(a);
  llvm::Value* db = to_double(c);
  auto round = [&](llvm::Value* v) { return ct->isDoubleTy() ? v : b_.CreateFPTrunc(v, ct); };
  ShapeLoop(out.shape, [&](const Index& idx) {
    llvm::Value* i = RowMajorLinear(b_, dims, idx);
    if (dist == "rng_uniform") {
      llvm::Value* v = round(b_.CreateFAdd(da, b_.CreateFMul(b_.CreateFSub(db, da), uniform01(i, 0))));
      // Keep the interval half-open, comparing the rounded value as the interpreter does.
      llvm::Value* wide = ct->isDoubleTy() ? v : b_.CreateFPExt(v, f64);
      StoreCompute(out, idx, b_.CreateSelect(b_.CreateFCmpOGE(wide, db), round(da), v));
      return;
    }
    llvm::Value* u1 = uniform01(i, 0);
    u1 = b_.CreateSelect(b_.CreateFCmpOGT(u1, llvm::ConstantFP::get(f64, 1e-300)), u1,
                         llvm::ConstantFP::get(f64, 1e-300));
    llvm::Value* u2 = uniform01(i, 1);
    llvm::Value* radius = b_.CreateUnaryIntrinsic(
        llvm::Intrinsic::sqrt, b_.CreateFMul(llvm::ConstantFP::get(f64, -2.0), CallLibm("log", f64, {u1})));
    llvm::Value* angle = b_.CreateFMul(llvm::ConstantFP::get(f64, 2 * M_PI), u2);
    llvm::Value* z = b_.CreateFMul(radius, CallLibm("cos", f64, {angle}));
    StoreCompute(out, idx, round(b_.CreateFAdd(da, b_.CreateFMul(db, z))));
  });
  return absl::OkStatus();
}

}  // namespace xlac::codegen::internal
