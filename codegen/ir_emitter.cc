// The entry function, buffers, constants, loops, control flow (while/conditional) and instruction dispatch.
#include <algorithm>

#include "codegen/ir_emitter_internal.h"
#include "codegen/loop_interleave.h"
#include "ir/kernel_calls.h"
#include "ir/sharding.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace xlac::codegen {
namespace internal {

std::vector<int64_t> MajorToMinor(const Shape& shape) {
  std::vector<int64_t> order;
  if (shape.layout && shape.layout->minor_to_major.size() == shape.dimensions.size()) {
    order.assign(shape.layout->minor_to_major.rbegin(), shape.layout->minor_to_major.rend());
  } else {
    for (int64_t d = 0; d < shape.rank(); ++d) order.push_back(d);
  }
  return order;
}

bool HasDefaultLayout(const Shape& shape) {
  std::vector<int64_t> order = MajorToMinor(shape);
  for (int64_t d = 0; d < static_cast<int64_t>(order.size()); ++d) {
    if (order[d] != d) return false;
  }
  return true;
}

std::vector<int64_t> LayoutStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.dimensions.size(), 1);
  std::vector<int64_t> order = MajorToMinor(shape);
  int64_t stride = 1;
  for (size_t i = order.size(); i-- > 0;) {
    strides[order[i]] = stride;
    stride *= shape.dimensions[order[i]];
  }
  return strides;
}

IrEmitter::IrEmitter(const Module& module, const BufferAssignment& assignment, llvm::Module& llvm_module,
                     const CodegenOptions& options)
    : module_(module),
      assignment_(assignment),
      llvm_module_(llvm_module),
      options_(options),
      b_(llvm_module.getContext()) {}

bool IrEmitter::HasComputeType(PrimitiveType type) {
  if (IsComplexType(type)) return true;
  if (IsNarrowType(type)) return true;
  switch (type) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

llvm::Type* IrEmitter::ComputeType(PrimitiveType type) {
  if (IsComplexType(type)) return ComplexComputeType(type);
  if (IsNarrowFloat(type)) return b_.getFloatTy();
  switch (type) {
    case PrimitiveType::kPred:
      return b_.getInt1Ty();
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
      return b_.getFloatTy();
    case PrimitiveType::kF64:
      return b_.getDoubleTy();
    default:
      return b_.getIntNTy(BitWidth(type));
  }
}

llvm::Type* IrEmitter::MoveType(PrimitiveType type) { return b_.getIntNTy(static_cast<unsigned>(ByteWidth(type) * 8)); }

absl::Status IrEmitter::CheckComputeType(const Instruction& inst, PrimitiveType type) {
  if (HasComputeType(type)) return absl::OkStatus();
  return Unimplemented(inst, "element type {} is not supported in arithmetic yet", PrimitiveTypeName(type));
}

llvm::Value* IrEmitter::SlicePointer(const BufferSlice& slice) {
  if (kernel_.has_value()) return KernelSlice(slice);
  llvm::Value* base = allocation_bases_.at(static_cast<size_t>(slice.allocation));
  if (slice.offset == 0) return base;
  return b_.CreateInBoundsGEP(b_.getInt8Ty(), base, I64(slice.offset));
}

IrArray IrEmitter::ArrayFor(const Instruction* inst, const std::vector<int64_t>& shape_index) {
  IrArray array;
  const Shape* shape = inst->shape().Subshape(shape_index);
  array.shape = *shape;
  array.strides = LayoutStrides(array.shape);
  array.slice = assignment_.GetSlice(inst, shape_index);
  array.base = SlicePointer(array.slice);
  if (shape_index.empty() && !kernel_.has_value() && streamed_.values.contains(inst)) {
    llvm::Value* base = streamed_bases_.at(static_cast<size_t>(array.slice.allocation));
    array.base = array.slice.offset == 0 ? base : b_.CreateInBoundsGEP(b_.getInt8Ty(), base, I64(array.slice.offset));
  }
  return array;
}

llvm::Value* IrEmitter::LinearIndex(const IrArray& array, const Index& index) {
  llvm::Value* linear = nullptr;
  for (size_t d = 0; d < index.size(); ++d) {
    if (array.shape.dimensions[d] == 1) continue;
    llvm::Value* term = array.strides[d] == 1 ? index[d] : b_.CreateNSWMul(index[d], I64(array.strides[d]));
    linear = linear ? b_.CreateNSWAdd(linear, term) : term;
  }
  return linear ? linear : I64(0);
}

llvm::Value* IrEmitter::ElementAddress(const IrArray& array, const Index& index) {
  return b_.CreateInBoundsGEP(MoveType(array.shape.element_type), array.base, LinearIndex(array, index));
}

llvm::Value* IrEmitter::LoadRaw(const IrArray& array, const Index& index) {
  return b_.CreateLoad(MoveType(array.shape.element_type), ElementAddress(array, index));
}

void IrEmitter::StoreRaw(const IrArray& array, const Index& index, llvm::Value* value) {
  b_.CreateStore(value, ElementAddress(array, index));
}

llvm::Value* IrEmitter::FloatFromBF16Bits(llvm::Value* bits) {
  return b_.CreateBitCast(b_.CreateShl(b_.CreateZExt(bits, b_.getInt32Ty()), 16), b_.getFloatTy());
}

// The interpreter's bf16 rounding: NaN -> quiet NaN with the sign kept, otherwise round to nearest even on the bits.
llvm::Value* IrEmitter::BF16BitsFromFloat(llvm::Value* f) {
  llvm::Value* u = b_.CreateBitCast(f, b_.getInt32Ty());
  llvm::Value* hi = b_.CreateLShr(u, 16);
  llvm::Value* rounded = b_.CreateLShr(b_.CreateAdd(u, b_.CreateAdd(b_.getInt32(0x7fff), b_.CreateAnd(hi, 1))), 16);
  llvm::Value* nan = b_.CreateOr(b_.CreateAnd(hi, 0x8000), 0x7fc0);
  llvm::Value* is_nan = b_.CreateFCmpUNO(f, f);
  return b_.CreateTrunc(b_.CreateSelect(is_nan, nan, rounded), b_.getInt16Ty());
}

llvm::Value* IrEmitter::ComputeFromStorage(PrimitiveType t, llvm::Value* raw) {
  if (IsNarrowType(t)) return NarrowLoad(t, raw);
  if (IsComplexType(t)) return b_.CreateBitCast(raw, ComplexComputeType(t));
  switch (t) {
    case PrimitiveType::kPred:
      return b_.CreateICmpNE(raw, llvm::ConstantInt::get(raw->getType(), 0));
    case PrimitiveType::kBF16:
      return FloatFromBF16Bits(raw);
    case PrimitiveType::kF16:
      return b_.CreateFPExt(b_.CreateBitCast(raw, b_.getHalfTy()), b_.getFloatTy());
    case PrimitiveType::kF32:
      return b_.CreateBitCast(raw, b_.getFloatTy());
    case PrimitiveType::kF64:
      return b_.CreateBitCast(raw, b_.getDoubleTy());
    default:
      return raw;
  }
}

llvm::Value* IrEmitter::StorageFromCompute(PrimitiveType t, llvm::Value* value) {
  if (IsNarrowType(t)) return NarrowStore(t, value);
  if (IsComplexType(t)) return b_.CreateBitCast(value, MoveType(t));
  switch (t) {
    case PrimitiveType::kPred:
      return b_.CreateZExt(value, b_.getInt8Ty());
    case PrimitiveType::kBF16:
      return BF16BitsFromFloat(value);
    case PrimitiveType::kF16:
      return b_.CreateBitCast(b_.CreateFPTrunc(value, b_.getHalfTy()), b_.getInt16Ty());
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return b_.CreateBitCast(value, MoveType(t));
    default:
      return value;
  }
}

llvm::Value* IrEmitter::LoadCompute(const IrArray& array, const Index& index) {
  return ComputeFromStorage(array.shape.element_type, LoadRaw(array, index));
}

void IrEmitter::StoreCompute(const IrArray& array, const Index& index, llvm::Value* value) {
  StoreRaw(array, index, StorageFromCompute(array.shape.element_type, value));
}

llvm::Value* IrEmitter::RoundToType(llvm::Value* value, PrimitiveType type) {
  if (IsNarrowFloat(type)) return NarrowRound(type, value);
  if (type == PrimitiveType::kBF16) return FloatFromBF16Bits(BF16BitsFromFloat(value));
  if (type == PrimitiveType::kF16) return b_.CreateFPExt(b_.CreateFPTrunc(value, b_.getHalfTy()), b_.getFloatTy());
  return value;
}

llvm::Value* IrEmitter::ConstantCompute(PrimitiveType type, const Literal& literal, int64_t i) {
  if (IsNarrowType(type)) return NarrowConstant(type, literal, i);
  if (IsComplexType(type)) return ComplexConstant(type, literal, i);
  switch (type) {
    case PrimitiveType::kPred:
      return b_.getInt1(literal.Get<uint8_t>(i) != 0);
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
      return llvm::ConstantFP::get(b_.getFloatTy(), static_cast<float>(literal.GetAsDouble(i)));
    case PrimitiveType::kF32:
      return llvm::ConstantFP::get(b_.getFloatTy(), literal.Get<float>(i));
    case PrimitiveType::kF64:
      return llvm::ConstantFP::get(b_.getDoubleTy(), literal.Get<double>(i));
    default: {
      uint64_t bits = 0;
      std::memcpy(&bits, literal.raw_data() + i * ByteWidth(type), static_cast<size_t>(ByteWidth(type)));
      return llvm::ConstantInt::get(ComputeType(type), bits);
    }
  }
}

void IrEmitter::ForLoop(int64_t start, int64_t end, const std::function<void(llvm::Value*)>& body) {
  if (start >= end) return;
  if (end - start == 1) {
    body(I64(start));
    return;
  }
  llvm::BasicBlock* preheader = b_.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx(), "loop", function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx(), "loop.exit", function_);
  b_.CreateBr(loop);
  b_.SetInsertPoint(loop);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, "iv");
  iv->addIncoming(I64(start), preheader);
  body(iv);
  llvm::Value* next = b_.CreateNSWAdd(iv, I64(1));
  iv->addIncoming(next, b_.GetInsertBlock());
  llvm::BranchInst* latch = b_.CreateCondBr(b_.CreateICmpSLT(next, I64(end)), loop, exit);
  if (b_.GetInsertBlock() == loop) InterleaveLongChains(*loop, *latch, end - start);
  b_.SetInsertPoint(exit);
}

void IrEmitter::LoopNest(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                         const std::function<void(const Index&)>& body) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  Index index(dims.size(), nullptr);
  std::function<void(size_t)> level = [&](size_t k) {
    if (k == order.size()) {
      body(index);
      return;
    }
    int64_t d = order[k];
    ForLoop(0, dims[d], [&](llvm::Value* iv) {
      index[d] = iv;
      level(k + 1);
    });
  };
  level(0);
}

void IrEmitter::ShapeLoop(const Shape& shape, const std::function<void(const Index&)>& body) {
  LoopNest(shape.dimensions, MajorToMinor(shape), body);
}

void IrEmitter::MemCopy(llvm::Value* dst, llvm::Value* src, int64_t bytes) {
  if (bytes > 0) b_.CreateMemCpy(dst, llvm::MaybeAlign(1), src, llvm::MaybeAlign(1), bytes);
}

absl::Status IrEmitter::EmitConstantGlobals() {
  allocation_bases_.assign(assignment_.allocations().size(), nullptr);
  streamed_bases_.assign(assignment_.allocations().size(), nullptr);
  llvm::Argument* buffers = function_->getArg(0);
  for (const Allocation& alloc : assignment_.allocations()) {
    if (alloc.kind != AllocationKind::kConstant) {
      llvm::Value* slot = b_.CreateConstInBoundsGEP1_64(b_.getPtrTy(), buffers, static_cast<uint64_t>(alloc.index));
      allocation_bases_[alloc.index] = b_.CreateLoad(b_.getPtrTy(), slot, fmt::format("alloc{}", alloc.index));
      if (streamed_.allocations[static_cast<size_t>(alloc.index)]) {
        // A second, volatile load of the same base, so that no pass merges it with the first: the stores of the
        // streamed results go through it and only they become non-temporal (MarkStreamingStores).
        llvm::LoadInst* base =
            b_.CreateLoad(b_.getPtrTy(), slot, /*isVolatile=*/true, fmt::format("stream{}", alloc.index));
        TagStreamedBase(*base);
        streamed_bases_[alloc.index] = base;
      }
      continue;
    }
    const Instruction* c = alloc.constant;
    const Literal& lit = c->literal();
    if (lit.is_unknown()) return Unimplemented(*c, "constant with elided values");
    // Literals are stored row-major; the buffer follows the constant's layout.
    std::vector<uint8_t> bytes(static_cast<size_t>(std::max<int64_t>(alloc.size, lit.byte_size())), 0);
    int64_t width = ByteWidth(lit.shape().element_type);
    if (HasDefaultLayout(c->shape())) {
      if (lit.byte_size() > 0) std::memcpy(bytes.data(), lit.raw_data(), static_cast<size_t>(lit.byte_size()));
    } else {
      std::vector<int64_t> strides = LayoutStrides(c->shape());
      std::vector<int64_t> idx(c->shape().dimensions.size(), 0);
      for (int64_t i = 0; i < lit.element_count(); ++i) {
        int64_t p = 0;
        for (size_t d = 0; d < idx.size(); ++d) p += idx[d] * strides[d];
        std::memcpy(bytes.data() + p * width, lit.raw_data() + i * width, static_cast<size_t>(width));
        for (size_t d = idx.size(); d-- > 0;) {
          if (++idx[d] < c->shape().dimensions[d]) break;
          idx[d] = 0;
        }
      }
    }
    llvm::Constant* init = llvm::ConstantDataArray::get(ctx(), llvm::ArrayRef<uint8_t>(bytes));
    auto* global = new llvm::GlobalVariable(llvm_module_, init->getType(), /*isConstant=*/true,
                                            llvm::GlobalValue::PrivateLinkage, init, "constant." + c->name());
    global->setAlignment(llvm::Align(64));
    global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    allocation_bases_[alloc.index] = global;
  }
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitEntry() {
  llvm::FunctionType* type = llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy()}, false);
  function_ = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, options_.entry_name, llvm_module_);
  entry_function_ = function_;
  function_->getArg(0)->setName("buffers");
  function_->getArg(1)->setName("dev");
  function_->addFnAttr(llvm::Attribute::NoUnwind);
  function_->addFnAttr(llvm::Attribute::UWTable);
  SetFunctionTargetAttributes(*function_, options_.target);
  b_.SetInsertPoint(llvm::BasicBlock::Create(ctx(), "entry", function_));
  streamed_ = ChooseStreamedResults(module_, assignment_, options_.target.triple, options_.streaming_store_bytes);
  XLAC_RETURN_IF_ERROR(EmitConstantGlobals());
  XLAC_RETURN_IF_ERROR(EmitSequential(*module_.entry_computation()));
  b_.CreateRetVoid();
  FinishKernels();
  std::string error;
  llvm::raw_string_ostream os(error);
  if (llvm::verifyFunction(*function_, &os)) return absl::InternalError("codegen produced invalid IR: " + error);
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitSequential(const Computation& comp) {
  std::vector<Instruction*> post = comp.MakePostOrder();
  std::vector<const Instruction*> order(post.begin(), post.end());
  std::vector<RowGroup> groups;
  if (options_.row_groups) groups = FindRowGroups(order, assignment_);
  std::map<const Instruction*, const RowGroup*> group_of;  // lookups only
  for (const RowGroup& g : groups) {
    for (const Instruction* m : g.members) group_of[m] = &g;
  }
  for (const Instruction* inst : order) {
    auto found = group_of.find(inst);
    if (found == group_of.end()) {
      const bool traced = TracesKernel(*inst);
      if (traced) EmitTraceHook("xlac_rt_trace_begin", inst->unique_id());
      XLAC_RETURN_IF_ERROR(EmitKernel(inst->name(), Outlinable(*inst), [&] { return EmitInstruction(*inst); }));
      if (traced) EmitTraceHook("xlac_rt_trace_end", inst->unique_id());
    } else if (found->second->members.front() == inst) {
      const bool traced = options_.trace_kernels && function_ == entry_function_;
      if (traced) EmitTraceHook("xlac_rt_trace_begin", inst->unique_id());
      const RowGroup& group = *found->second;
      const bool outline =
          std::all_of(group.members.begin(), group.members.end(), [&](const Instruction* m) { return Outlinable(*m); });
      XLAC_RETURN_IF_ERROR(EmitKernel("rows." + inst->name(), outline, [&] { return EmitRowGroup(group); }));
      if (traced) EmitTraceHook("xlac_rt_trace_end", inst->unique_id());
    }
  }
  return absl::OkStatus();
}

// Kernels are what does work at run time; parameters, constants and tuple plumbing emit no code worth a slice.
// Only in the entry function, where the device context is its second argument.
bool IrEmitter::TracesKernel(const Instruction& inst) const {
  if (!options_.trace_kernels || function_ != entry_function_) return false;
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
    case Opcode::kBitcast:
      return false;
    default:
      return true;
  }
}

void IrEmitter::EmitTraceHook(const char* hook, int64_t kernel_id) {
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      hook, llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty()}, false));
  b_.CreateCall(fn, {function_->getArg(1), b_.getInt64(static_cast<uint64_t>(kernel_id))});
}

void IrEmitter::CopyLeaves(const Instruction* src, const Instruction* dst, const Shape& shape,
                           std::vector<int64_t>& index) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      index.push_back(static_cast<int64_t>(i));
      CopyLeaves(src, dst, shape.tuple_shapes[i], index);
      index.pop_back();
    }
    return;
  }
  if (!shape.IsArray()) return;
  const BufferSlice& from = assignment_.GetSlice(src, index);
  const BufferSlice& to = assignment_.GetSlice(dst, index);
  if (from == to) return;
  MemCopy(SlicePointer(to), SlicePointer(from), std::min(from.size, to.size));
}

absl::Status IrEmitter::EmitWhile(const Instruction& inst) {
  const Computation* cond = inst.called_computation(0);
  const Computation* body = inst.called_computation(1);
  std::vector<int64_t> index;
  CopyLeaves(inst.operand(0), &inst, inst.shape(), index);
  CopyLeaves(&inst, cond->parameter(0), inst.shape(), index);
  CopyLeaves(&inst, body->parameter(0), inst.shape(), index);
  llvm::BasicBlock* header = llvm::BasicBlock::Create(ctx(), "while.cond", function_);
  llvm::BasicBlock* body_bb = llvm::BasicBlock::Create(ctx(), "while.body", function_);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx(), "while.exit", function_);
  b_.CreateBr(header);
  b_.SetInsertPoint(header);
  XLAC_RETURN_IF_ERROR(EmitSequential(*cond));
  IrArray pred = ArrayFor(cond->root());
  b_.CreateCondBr(LoadCompute(pred, {}), body_bb, exit);
  b_.SetInsertPoint(body_bb);
  XLAC_RETURN_IF_ERROR(EmitSequential(*body));
  CopyLeaves(body->root(), body->parameter(0), inst.shape(), index);
  CopyLeaves(body->root(), cond->parameter(0), inst.shape(), index);
  CopyLeaves(body->root(), &inst, inst.shape(), index);
  b_.CreateBr(header);
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitConditional(const Instruction& inst) {
  int64_t branches = static_cast<int64_t>(inst.called_computations().size());
  IrArray selector = ArrayFor(inst.operand(0));
  llvm::Value* branch;
  PrimitiveType st = selector.shape.element_type;
  if (st == PrimitiveType::kPred) {
    branch = b_.CreateSelect(LoadCompute(selector, {}), I64(0), I64(1));
  } else {
    llvm::Value* v = LoadCompute(selector, {});
    v = IsSignedIntegralType(st) ? b_.CreateSExt(v, b_.getInt64Ty()) : b_.CreateZExt(v, b_.getInt64Ty());
    // Out of range (including unsigned values past int64 max) runs the last branch.
    llvm::Value* in_range = IsSignedIntegralType(st)
                                ? b_.CreateAnd(b_.CreateICmpSGE(v, I64(0)), b_.CreateICmpSLT(v, I64(branches)))
                                : b_.CreateICmpULT(v, I64(branches));
    branch = b_.CreateSelect(in_range, v, I64(branches - 1));
  }
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx(), "cond.exit", function_);
  std::vector<llvm::BasicBlock*> blocks;
  for (int64_t i = 0; i < branches; ++i) {
    blocks.push_back(llvm::BasicBlock::Create(ctx(), fmt::format("cond.branch{}", i), function_));
  }
  llvm::SwitchInst* sw = b_.CreateSwitch(branch, blocks.back(), static_cast<unsigned>(branches - 1));
  for (int64_t i = 0; i + 1 < branches; ++i) sw->addCase(b_.getInt64(static_cast<uint64_t>(i)), blocks[i]);
  for (int64_t i = 0; i < branches; ++i) {
    const Computation* comp = inst.called_computation(i);
    b_.SetInsertPoint(blocks[i]);
    std::vector<int64_t> index;
    if (comp->parameter_count() > 0) {
      CopyLeaves(inst.operand(i + 1), comp->parameter(0), comp->parameter(0)->shape(), index);
    }
    XLAC_RETURN_IF_ERROR(EmitSequential(*comp));
    CopyLeaves(comp->root(), &inst, inst.shape(), index);
    b_.CreateBr(exit);
  }
  b_.SetInsertPoint(exit);
  return absl::OkStatus();
}

absl::Status IrEmitter::EmitInstruction(const Instruction& inst) {
  Opcode op = inst.opcode();
  std::vector<int64_t> index;
  switch (op) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kAfterAll:
    case Opcode::kAddDependency:
      if (op == Opcode::kAddDependency) CopyLeaves(inst.operand(0), &inst, inst.shape(), index);
      return absl::OkStatus();
    case Opcode::kTuple:
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        index = {i};
        std::vector<int64_t> sub;
        const Shape& s = inst.shape().tuple_shapes[i];
        if (s.IsArray()) {
          const BufferSlice& from = assignment_.GetSlice(inst.operand(i), {});
          const BufferSlice& to = assignment_.GetSlice(&inst, index);
          if (!(from == to)) MemCopy(SlicePointer(to), SlicePointer(from), to.size);
        } else if (s.IsTuple()) {
          // Nested tuple: copy leaf by leaf where they differ.
          std::function<void(const Shape&, std::vector<int64_t>&)> walk = [&](const Shape& sh,
                                                                              std::vector<int64_t>& path) {
            if (sh.IsTuple()) {
              for (size_t j = 0; j < sh.tuple_shapes.size(); ++j) {
                path.push_back(static_cast<int64_t>(j));
                walk(sh.tuple_shapes[j], path);
                path.pop_back();
              }
              return;
            }
            if (!sh.IsArray()) return;
            std::vector<int64_t> outer = {i};
            outer.insert(outer.end(), path.begin(), path.end());
            const BufferSlice& from = assignment_.GetSlice(inst.operand(i), path);
            const BufferSlice& to = assignment_.GetSlice(&inst, outer);
            if (!(from == to)) MemCopy(SlicePointer(to), SlicePointer(from), to.size);
          };
          walk(s, sub);
        }
      }
      return absl::OkStatus();
    case Opcode::kGetTupleElement: {
      int64_t which = inst.IntAttr("index");
      std::function<void(const Shape&, std::vector<int64_t>&)> walk = [&](const Shape& sh, std::vector<int64_t>& path) {
        if (sh.IsTuple()) {
          for (size_t j = 0; j < sh.tuple_shapes.size(); ++j) {
            path.push_back(static_cast<int64_t>(j));
            walk(sh.tuple_shapes[j], path);
            path.pop_back();
          }
          return;
        }
        if (!sh.IsArray()) return;
        std::vector<int64_t> outer = {which};
        outer.insert(outer.end(), path.begin(), path.end());
        const BufferSlice& from = assignment_.GetSlice(inst.operand(0), outer);
        const BufferSlice& to = assignment_.GetSlice(&inst, path);
        if (!(from == to)) MemCopy(SlicePointer(to), SlicePointer(from), to.size);
      };
      walk(inst.shape(), index);
      return absl::OkStatus();
    }
    case Opcode::kBitcast:
    case Opcode::kOptimizationBarrier:
      CopyLeaves(inst.operand(0), &inst, inst.shape(), index);
      return absl::OkStatus();
    case Opcode::kWhile:
      return EmitWhile(inst);
    case Opcode::kConditional:
      return EmitConditional(inst);
    case Opcode::kReduce:
      return EmitReduce(inst);
    case Opcode::kFusion:
      return EmitFusion(inst);
    case Opcode::kDot:
      return EmitDot(inst);
    case Opcode::kConvolution:
      return EmitConvolution(inst);
    case Opcode::kReduceWindow:
      return EmitReduceWindow(inst);
    case Opcode::kSelectAndScatter:
      return EmitSelectAndScatter(inst);
    case Opcode::kGather:
      return EmitGather(inst);
    case Opcode::kScatter:
      return EmitScatter(inst);
    case Opcode::kSort:
      return EmitSort(inst);
    case Opcode::kMap:
      return EmitMap(inst);
    case Opcode::kRngBitGenerator:
      return EmitRngBitGenerator(inst);
    case Opcode::kTopK:
      return EmitTopK(inst);
    case Opcode::kRng:
    case Opcode::kRngGetAndUpdateState:
      return EmitRng(inst);
    case Opcode::kReplicaId:
    case Opcode::kPartitionId: {
      // int64_t xlac_rt_replica_id(XlacRtDevice*) / xlac_rt_partition_id (runtime/cpu/xlac_runtime.h).
      const char* name = op == Opcode::kReplicaId ? "xlac_rt_replica_id" : "xlac_rt_partition_id";
      llvm::FunctionCallee fn =
          llvm_module_.getOrInsertFunction(name, llvm::FunctionType::get(b_.getInt64Ty(), {b_.getPtrTy()}, false));
      llvm::Value* id = b_.CreateCall(fn, {function_->getArg(1)});
      StoreCompute(ArrayFor(&inst), {}, b_.CreateTrunc(id, ComputeType(inst.shape().element_type)));
      return absl::OkStatus();
    }
    default:
      break;
  }
  // Annotations, and shard_map boundaries left in an unpartitioned program whose shapes agree, are identities.
  if (op == Opcode::kCustomCall && inst.operand_count() == 1 && inst.shape().IsArray() &&
      (IsShardingIdentityTarget(inst.StringAttr("custom_call_target")) ||
       (IsShardMapBoundaryTarget(inst.StringAttr("custom_call_target")) &&
        inst.operand(0)->shape().Compatible(inst.shape())))) {
    CopyLeaves(inst.operand(0), &inst, inst.shape(), index);
    return absl::OkStatus();
  }
  if (IsDataMovement(op)) return EmitDataMovement(inst);
  if (IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kCompare || op == Opcode::kSelect ||
      op == Opcode::kClamp || op == Opcode::kConvert || op == Opcode::kReducePrecision ||
      IsElementwiseKernelCall(inst)) {
    return EmitElementwise(inst);
  }
  if (op == Opcode::kCustomCall) return EmitCustomCall(inst);
  if (op == Opcode::kInfeed) return EmitInfeed(inst);
  if (IsLibraryCall(op)) return EmitLibraryCall(inst);
  if (IsCollective(op)) return EmitCollective(inst);
  if (IsP2P(op)) return EmitP2P(inst);
  if (IsMiscOp(op)) return EmitMiscOp(inst);
  return Unimplemented(inst, "no lowering for this opcode yet");
}

}  // namespace internal

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitModule(const Module& module, const BufferAssignment& assignment,
                                                         llvm::LLVMContext& context, const CodegenOptions& options) {
  auto llvm_module = std::make_unique<llvm::Module>(module.name(), context);
  llvm_module->setTargetTriple(options.target.triple);
  internal::IrEmitter emitter(module, assignment, *llvm_module, options);
  XLAC_RETURN_IF_ERROR(emitter.EmitEntry());
  return llvm_module;
}

}  // namespace xlac::codegen
