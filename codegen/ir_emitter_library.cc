// fft, cholesky and triangular-solve: calls into the runtime's library kernels (runtime/cpu/xlac_runtime_kernels.h),
// the same functions the interpreter evaluates these ops with, so both backends agree bit for bit without codegen
// re-deriving their accumulation order.
//
// The kernels take dense row-major buffers; an operand or result with another layout goes through a row-major temp.
// Everything the kernels could reject (fft_type, fft rank, element type) is checked here, at compile time.
#include "codegen/ir_emitter_internal.h"
#include "ir/decomposition_calls.h"

namespace xlac::codegen::internal {
namespace {

int64_t ElementCount(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape.dimensions) n *= d;
  return n;
}

// A row-major view of one operand or the result, and the temp backing it when the layout is not row-major.
struct RowMajorBuffer {
  llvm::Value* ptr = nullptr;
  llvm::Value* temp = nullptr;
};

IrArray RowMajorArray(llvm::Value* base, const Shape& shape) {
  IrArray array;
  array.base = base;
  array.shape = shape;
  array.strides.assign(shape.dimensions.size(), 1);
  for (size_t d = shape.dimensions.size(); d-- > 1;) array.strides[d - 1] = array.strides[d] * shape.dimensions[d];
  return array;
}

RowMajorBuffer RowMajorInput(IrEmitter& e, const Instruction* operand) {
  IrArray array = e.ArrayFor(operand);
  if (HasDefaultLayout(array.shape)) return {array.base, nullptr};
  llvm::Value* temp = e.AllocTemp(ElementCount(array.shape) * ByteWidth(array.shape.element_type));
  IrArray dense = RowMajorArray(temp, array.shape);
  e.ShapeLoop(array.shape, [&](const Index& index) { e.StoreRaw(dense, index, e.LoadRaw(array, index)); });
  return {temp, temp};
}

RowMajorBuffer RowMajorOutput(IrEmitter& e, const Instruction& inst) {
  IrArray array = e.ArrayFor(&inst);
  if (HasDefaultLayout(array.shape)) return {array.base, nullptr};
  return {nullptr, e.AllocTemp(ElementCount(array.shape) * ByteWidth(array.shape.element_type))};
}

// Copies a temp result into the result's layout and frees every temp.
void Finish(IrEmitter& e, const Instruction& inst, RowMajorBuffer out, std::vector<RowMajorBuffer> inputs) {
  if (out.temp != nullptr) {
    IrArray array = e.ArrayFor(&inst);
    IrArray dense = RowMajorArray(out.temp, array.shape);
    e.ShapeLoop(array.shape, [&](const Index& index) { e.StoreRaw(array, index, e.LoadRaw(dense, index)); });
    e.FreeTemp(out.temp);
  }
  for (const RowMajorBuffer& in : inputs) {
    if (in.temp != nullptr) e.FreeTemp(in.temp);
  }
}

llvm::Value* OutPtr(const RowMajorBuffer& out) { return out.temp != nullptr ? out.temp : out.ptr; }

}  // namespace

bool IrEmitter::IsLibraryCall(Opcode op) {
  return op == Opcode::kFft || op == Opcode::kCholesky || op == Opcode::kTriangularSolve;
}

absl::Status IrEmitter::EmitLibraryCall(const Instruction& inst) {
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  if (inst.opcode() == Opcode::kFft) {
    const Shape& in = inst.operand(0)->shape();
    const std::vector<int64_t>& lengths = inst.IntListAttr("fft_length");
    std::string_view type = inst.StringAttr("fft_type");
    int rank = static_cast<int>(in.dimensions.size());
    if (lengths.empty() || lengths.size() > 3 || static_cast<int>(lengths.size()) > rank) {
      return Unimplemented(inst, "fft_length must name 1 to 3 innermost dimensions");
    }
    if (ElementCount(inst.shape()) == 0) return absl::OkStatus();
    int32_t kind = type == "FFT" ? 0 : type == "IFFT" ? 1 : type == "RFFT" ? 2 : type == "IRFFT" ? 3 : -1;
    if (kind < 0) return Unimplemented(inst, "unknown fft_type '{}'", type);
    PrimitiveType complex = kind == 2 ? inst.shape().element_type : in.element_type;
    if (complex != PrimitiveType::kC64 && complex != PrimitiveType::kC128) {
      return Unimplemented(inst, "fft of {} (the runtime has c64 and c128 kernels)", PrimitiveTypeName(complex));
    }
    // int32_t xlac_rt_fft_<c>(in, out, fft_type, rank, in_dims, out_dims, fft_rank, fft_length)
    const char* name = complex == PrimitiveType::kC64 ? "xlac_rt_fft_c64" : "xlac_rt_fft_c128";
    llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
        name, llvm::FunctionType::get(i32, {ptr, ptr, i32, i32, ptr, ptr, i32, ptr}, false));
    RowMajorBuffer x = RowMajorInput(*this, inst.operand(0));
    RowMajorBuffer out = RowMajorOutput(*this, inst);
    b_.CreateCall(
        fn, {x.ptr, OutPtr(out), b_.getInt32(kind), b_.getInt32(rank), ConstantI64Array(in.dimensions, "fft.in_dims"),
             ConstantI64Array(inst.shape().dimensions, "fft.out_dims"),
             b_.getInt32(static_cast<int32_t>(lengths.size())), ConstantI64Array(lengths, "fft.length")});
    Finish(*this, inst, out, {x});
    return absl::OkStatus();
  }

  const Shape& a = inst.operand(0)->shape();
  const char* suffix = DecompositionKernelSuffix(a.element_type);  // the same kernels' types
  if (suffix == nullptr) {
    return Unimplemented(inst, "element type {} (the runtime has f32, f64, c64, c128, bf16 and f16 kernels)",
                         PrimitiveTypeName(a.element_type));
  }
  if (a.dimensions.size() < 2) return Unimplemented(inst, "operand 'a' must be a batch of matrices");
  int64_t m = a.dimensions.back();
  if (inst.opcode() == Opcode::kCholesky) {
    if (a.dimensions[a.dimensions.size() - 2] != m) return Unimplemented(inst, "needs square matrices");
    int64_t batches = m == 0 ? 0 : ElementCount(a) / (m * m);
    if (batches == 0) return absl::OkStatus();
    // void xlac_rt_cholesky_<t>(a, out, batches, n, lower)
    llvm::FunctionCallee fn =
        llvm_module_.getOrInsertFunction(std::string("xlac_rt_cholesky_") + suffix,
                                         llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, i64, i64, i32}, false));
    RowMajorBuffer in = RowMajorInput(*this, inst.operand(0));
    RowMajorBuffer out = RowMajorOutput(*this, inst);
    b_.CreateCall(fn, {in.ptr, OutPtr(out), I64(batches), I64(m), b_.getInt32(inst.BoolAttr("lower", false))});
    Finish(*this, inst, out, {in});
    return absl::OkStatus();
  }

  const Shape& bs = inst.operand(1)->shape();
  if (bs.dimensions.size() != a.dimensions.size()) return Unimplemented(inst, "malformed operands");
  std::string_view transpose = inst.StringAttr("transpose_a");
  int32_t trans = transpose == "TRANSPOSE" ? 1 : transpose == "ADJOINT" ? 2 : 0;
  int64_t rows = bs.dimensions[bs.dimensions.size() - 2], cols = bs.dimensions.back();
  int64_t batches = rows * cols == 0 ? 0 : ElementCount(bs) / (rows * cols);
  if (batches == 0) return absl::OkStatus();
  // void xlac_rt_triangular_solve_<t>(a, b, x, batches, m, rows, cols, left_side, lower, unit_diagonal, transpose_a)
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      std::string("xlac_rt_triangular_solve_") + suffix,
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, i64, i64, i64, i64, i32, i32, i32, i32}, false));
  RowMajorBuffer ain = RowMajorInput(*this, inst.operand(0));
  RowMajorBuffer bin = RowMajorInput(*this, inst.operand(1));
  RowMajorBuffer out = RowMajorOutput(*this, inst);
  b_.CreateCall(fn, {ain.ptr, bin.ptr, OutPtr(out), I64(batches), I64(m), I64(rows), I64(cols),
                     b_.getInt32(inst.BoolAttr("left_side", false)), b_.getInt32(inst.BoolAttr("lower", false)),
                     b_.getInt32(inst.BoolAttr("unit_diagonal", false)), b_.getInt32(trans)});
  Finish(*this, inst, out, {ain, bin});
  return absl::OkStatus();
}

}  // namespace xlac::codegen::internal

namespace xlac::codegen::internal {

// void xlac_rt_<kernel>_<suffix>(...) with the row-major operands first, then the results' leaves (or NULL for an
// output the call does not have), then the sizes and flags: the argument order of each kernel
// (runtime/cpu/xlac_runtime_kernels.h).
absl::Status IrEmitter::EmitDecompositionCall(const Instruction& inst) {
  absl::StatusOr<DecompositionCall> call = DecompositionCallOf(inst);
  if (!call.ok()) return Unimplemented(inst, "{}", std::string(call.status().message()));
  const DecompositionCall& d = *call;
  if (d.batches == 0) return absl::OkStatus();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Value* null = llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(ctx()));
  std::vector<RowMajorBuffer> inputs;
  for (const Instruction* operand : inst.operands()) inputs.push_back(RowMajorInput(*this, operand));
  // Result leaves through row-major temps where their layout is not row-major.
  struct Leaf {
    IrArray array;
    llvm::Value* temp = nullptr;
    llvm::Value* ptr() const { return temp != nullptr ? temp : array.base; }
  };
  std::vector<Leaf> leaves;
  if (inst.shape().IsArray()) {
    leaves.push_back({ArrayFor(&inst)});
  } else {
    for (int64_t i = 0; i < static_cast<int64_t>(inst.shape().tuple_shapes.size()); ++i)
      leaves.push_back({ArrayFor(&inst, {i})});
  }
  for (Leaf& leaf : leaves) {
    if (!HasDefaultLayout(leaf.array.shape)) {
      leaf.temp = AllocTemp(ElementCount(leaf.array.shape) * ByteWidth(leaf.array.shape.element_type));
    }
  }
  const std::string suffix = DecompositionKernelSuffix(d.type);
  auto call_kernel = [&](const char* kernel, std::vector<llvm::Type*> types, std::vector<llvm::Value*> args) {
    llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(fmt::format("xlac_rt_{}_{}", kernel, suffix),
                                                               llvm::FunctionType::get(b_.getVoidTy(), types, false));
    b_.CreateCall(fn, args);
  };
  llvm::Value* a = inputs[0].ptr;
  switch (d.kind) {
    case DecompositionKind::kLu:
      call_kernel("lu", {ptr, ptr, ptr, ptr, ptr, i64, i64, i64},
                  {a, leaves[0].ptr(), leaves[1].ptr(), leaves[2].ptr(), d.has_info ? leaves[3].ptr() : null,
                   I64(d.batches), I64(d.m), I64(d.n)});
      break;
    case DecompositionKind::kQr:
      call_kernel("qr", {ptr, ptr, ptr, i64, i64, i64},
                  {a, leaves[0].ptr(), leaves[1].ptr(), I64(d.batches), I64(d.m), I64(d.n)});
      break;
    case DecompositionKind::kHouseholderProduct:
      call_kernel("householder_product", {ptr, ptr, ptr, i64, i64, i64, i64},
                  {a, inputs[1].ptr, leaves[0].ptr(), I64(d.batches), I64(d.m), I64(d.n), I64(d.k)});
      break;
    case DecompositionKind::kEigh:
      call_kernel("eigh", {ptr, ptr, ptr, ptr, i64, i64, i32, i32},
                  {a, leaves[0].ptr(), leaves[1].ptr(), d.has_info ? leaves[2].ptr() : null, I64(d.batches), I64(d.n),
                   b_.getInt32(d.lower), b_.getInt32(d.sort)});
      break;
    case DecompositionKind::kSvd:
      call_kernel("svd", {ptr, ptr, ptr, ptr, ptr, i64, i64, i64, i32},
                  {a, leaves[0].ptr(), d.compute_uv ? leaves[1].ptr() : null, d.compute_uv ? leaves[2].ptr() : null,
                   leaves.back().ptr(), I64(d.batches), I64(d.m), I64(d.n), b_.getInt32(d.full_matrices)});
      break;
    case DecompositionKind::kTridiagonalSolve:
      call_kernel("tridiagonal_solve", {ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, ptr, i64, i64, i64},
                  {a, inputs[1].ptr, inputs[2].ptr, inputs[3].ptr, leaves[0].ptr(), leaves[1].ptr(), leaves[2].ptr(),
                   leaves[3].ptr(), leaves[4].ptr(), I64(d.batches), I64(d.m), I64(d.n)});
      break;
    case DecompositionKind::kTridiagonal:
      call_kernel("tridiagonal_reduction", {ptr, ptr, ptr, ptr, ptr, i64, i64, i32},
                  {a, leaves[0].ptr(), leaves[1].ptr(), leaves[2].ptr(), leaves[3].ptr(), I64(d.batches), I64(d.n),
                   b_.getInt32(d.lower)});
      break;
    case DecompositionKind::kHessenberg:
      call_kernel("hessenberg", {ptr, ptr, ptr, i64, i64, i32, i32},
                  {a, leaves[0].ptr(), leaves[1].ptr(), I64(d.batches), I64(d.n),
                   b_.getInt32(static_cast<uint32_t>(d.low)), b_.getInt32(static_cast<uint32_t>(d.high))});
      break;
    case DecompositionKind::kEig: {
      const size_t v = d.real ? 2 : 1;
      call_kernel(
          "eig", {ptr, ptr, ptr, ptr, ptr, ptr, i64, i64, i32, i32},
          {a, leaves[0].ptr(), d.real ? leaves[1].ptr() : null, leaves[v].ptr(), leaves[v + 1].ptr(),
           leaves[v + 2].ptr(), I64(d.batches), I64(d.n), b_.getInt32(d.compute_left), b_.getInt32(d.compute_right)});
      break;
    }
    case DecompositionKind::kSchur:
      call_kernel("schur", {ptr, ptr, ptr, ptr, ptr, ptr, i64, i64},
                  {a, leaves[0].ptr(), leaves[1].ptr(), leaves[2].ptr(), d.real ? leaves[3].ptr() : null,
                   leaves.back().ptr(), I64(d.batches), I64(d.n)});
      break;
  }
  for (const Leaf& leaf : leaves) {
    if (leaf.temp == nullptr) continue;
    IrArray dense = RowMajorArray(leaf.temp, leaf.array.shape);
    ShapeLoop(leaf.array.shape, [&](const Index& index) { StoreRaw(leaf.array, index, LoadRaw(dense, index)); });
    FreeTemp(leaf.temp);
  }
  for (const RowMajorBuffer& in : inputs) {
    if (in.temp != nullptr) FreeTemp(in.temp);
  }
  return absl::OkStatus();
}

}  // namespace xlac::codegen::internal
