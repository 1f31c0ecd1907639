// Collectives through the CPU runtime (runtime/cpu/xlac_runtime.h): all-reduce, all-gather, reduce-scatter,
// all-to-all (array and tuple forms), collective-permute and collective-broadcast. Async forms reach codegen as
// their synchronous forms (passes/async_to_sync.h).
//
// Participant groups are resolved at compile time (ir/collective_groups.h) for the module's replica_count and
// num_partitions and passed as constant arrays of global device ids; the op id is the instruction's unique id.
// The runtime exchanges whole contiguous blocks, so gathering, scattering or splitting along a dimension that is
// not the outermost one in memory goes through a temporary buffer that a loop rearranges. Reductions call a
// generated XlacRtCombineFn that applies the reducer computation elementwise, like the interpreter, in rank order.
// After every runtime call a failure returns from the entry at once (the runtime has recorded the error).
#include <algorithm>

#include "codegen/ir_emitter_internal.h"
#include "ir/collective_groups.h"
#include "llvm/IR/Constants.h"

namespace xlac::codegen {
namespace internal {
namespace {

int64_t ElementsOf(const Shape& shape) { return shape.ElementCount().value_or(0); }
int64_t BytesOf(const Shape& shape) { return ElementsOf(shape) * ByteWidth(shape.element_type); }

// `array` with its base moved by `byte_offset` (a block of a temporary in `array`'s layout).
IrArray Block(llvm::IRBuilder<>& b, const Shape& shape, llvm::Value* base, llvm::Value* byte_offset) {
  IrArray block;
  block.base = b.CreateInBoundsGEP(b.getInt8Ty(), base, byte_offset);
  block.shape = shape;
  block.strides = LayoutStrides(shape);
  return block;
}

Index Shifted(IrEmitter& e, const Index& index, int64_t dim, llvm::Value* offset) {
  Index out = index;
  out[static_cast<size_t>(dim)] = e.b().CreateNSWAdd(index[static_cast<size_t>(dim)], offset);
  return out;
}

bool SameLayout(const Shape& a, const Shape& b) {
  return a.element_type == b.element_type && a.dimensions == b.dimensions && MajorToMinor(a) == MajorToMinor(b);
}

}  // namespace

bool IrEmitter::IsCollective(Opcode op) {
  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
    case Opcode::kAllToAll:
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kAllReduceStart:
    case Opcode::kAllReduceDone:
    case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
    case Opcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

llvm::Value* IrEmitter::ConstantI64Array(const std::vector<int64_t>& values, const std::string& name) {
  if (values.empty()) return llvm::ConstantPointerNull::get(b_.getPtrTy());
  std::vector<uint64_t> data(values.begin(), values.end());
  llvm::Constant* init = llvm::ConstantDataArray::get(ctx(), llvm::ArrayRef<uint64_t>(data));
  auto* global = new llvm::GlobalVariable(llvm_module_, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return global;
}

void IrEmitter::ReturnIfFailed(llvm::Value* code, absl::Span<llvm::Value* const> temps_to_free) {
  llvm::BasicBlock* fail = llvm::BasicBlock::Create(ctx(), "rt.fail", function_);
  llvm::BasicBlock* ok = llvm::BasicBlock::Create(ctx(), "rt.ok", function_);
  b_.CreateCondBr(b_.CreateICmpNE(code, b_.getInt32(0)), fail, ok);
  b_.SetInsertPoint(fail);
  for (llvm::Value* temp : temps_to_free) FreeTemp(temp);
  b_.CreateRetVoid();
  b_.SetInsertPoint(ok);
}

llvm::Value* IrEmitter::AllocTemp(int64_t bytes) {
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      "xlac_rt_aligned_alloc", llvm::FunctionType::get(b_.getPtrTy(), {b_.getInt64Ty(), b_.getInt64Ty()}, false));
  return b_.CreateCall(fn, {I64(std::max<int64_t>(bytes, 1)), I64(64)});
}

void IrEmitter::FreeTemp(llvm::Value* ptr) {
  llvm::FunctionCallee fn =
      llvm_module_.getOrInsertFunction("xlac_rt_free", llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy()}, false));
  b_.CreateCall(fn, {ptr});
}

absl::StatusOr<llvm::Function*> IrEmitter::CombineFunction(const Instruction& inst, PrimitiveType type) {
  if (inst.called_computations().empty()) return Unimplemented(inst, "missing reduction computation");
  XLAC_RETURN_IF_ERROR(CheckComputeType(inst, type));
  const Computation& reducer = *inst.called_computation(0);
  std::string name = fmt::format("xlac.combine.{}.{}", reducer.name(), PrimitiveTypeName(type));
  if (llvm::Function* existing = llvm_module_.getFunction(name)) return existing;
  llvm::FunctionType* type_of =
      llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getPtrTy(), b_.getInt64Ty(), b_.getPtrTy()}, false);
  llvm::Function* fn = llvm::Function::Create(type_of, llvm::GlobalValue::InternalLinkage, name, llvm_module_);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  SetFunctionTargetAttributes(*fn, options_.target);
  llvm::IRBuilderBase::InsertPoint saved_ip = b_.saveIP();
  llvm::Function* saved_function = function_;
  function_ = fn;
  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx(), "entry", fn);
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx(), "loop", fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx(), "exit", fn);
  b_.SetInsertPoint(entry);
  llvm::Value* count = fn->getArg(2);
  b_.CreateCondBr(b_.CreateICmpSGT(count, I64(0)), loop, exit);
  b_.SetInsertPoint(loop);
  llvm::PHINode* iv = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
  iv->addIncoming(I64(0), entry);
  // Flat views of the element ranges (a dimension of size 2 keeps LinearIndex from dropping the index).
  IrArray acc, in;
  acc.shape = in.shape = Shape::Array(type, {2});
  acc.strides = in.strides = {1};
  acc.base = fn->getArg(0);
  in.base = fn->getArg(1);
  llvm::Value* args[2] = {LoadCompute(acc, {iv}), LoadCompute(in, {iv})};
  absl::StatusOr<std::vector<llvm::Value*>> result = EmitScalarComputation(reducer, args);
  if (result.ok() && result->size() != 1) result = Unimplemented(inst, "reducer with {} results", result->size());
  if (result.ok()) {
    StoreCompute(acc, {iv}, (*result)[0]);
    llvm::Value* next = b_.CreateNSWAdd(iv, I64(1));
    iv->addIncoming(next, b_.GetInsertBlock());
    b_.CreateCondBr(b_.CreateICmpSLT(next, count), loop, exit);
    b_.SetInsertPoint(exit);
    b_.CreateRetVoid();
  }
  function_ = saved_function;
  b_.restoreIP(saved_ip);
  if (!result.ok()) {
    fn->eraseFromParent();
    return result.status();
  }
  return fn;
}

absl::Status IrEmitter::EmitCollective(const Instruction& inst) {
  Opcode op = inst.opcode();
  int64_t replicas = std::max<int64_t>(1, module_.config().replica_count);
  int64_t partitions = std::max<int64_t>(1, module_.config().num_partitions);
  llvm::Value* dev = function_->getArg(1);
  llvm::Value* op_id = I64(inst.unique_id());
  llvm::Value* name = b_.CreateGlobalString(inst.name(), "collective.name");
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  auto runtime = [&](const char* fn_name, std::vector<llvm::Type*> params) {
    return llvm_module_.getOrInsertFunction(fn_name, llvm::FunctionType::get(i32, params, false));
  };

  if (op == Opcode::kCollectivePermute) {
    XLAC_ASSIGN_OR_RETURN(auto pairs, ResolveSourceTargetPairs(inst, replicas, partitions));
    if (inst.operand_count() != 1 || !inst.shape().IsArray()) return Unimplemented(inst, "in-place or tuple form");
    IrArray src = ArrayFor(inst.operand(0)), dst = ArrayFor(&inst);
    if (!SameLayout(src.shape, dst.shape)) return Unimplemented(inst, "operand and result layouts differ");
    std::vector<int64_t> flat;
    for (const auto& [s, t] : pairs) flat.insert(flat.end(), {s, t});
    llvm::Value* code =
        b_.CreateCall(runtime("xlac_rt_collective_permute", {ptr, i64, ptr, ptr, i64, ptr, ptr, i64}),
                      {dev, op_id, name, ConstantI64Array(flat, "collective.pairs"),
                       I64(static_cast<int64_t>(pairs.size())), src.base, dst.base, I64(BytesOf(dst.shape))});
    ReturnIfFailed(code, {});
    return absl::OkStatus();
  }
  if (op != Opcode::kAllReduce && op != Opcode::kAllGather && op != Opcode::kReduceScatter && op != Opcode::kAllToAll &&
      op != Opcode::kCollectiveBroadcast) {
    return Unimplemented(inst, "no lowering for this collective yet");
  }

  absl::StatusOr<std::vector<std::vector<int64_t>>> resolved = ResolveDeviceGroups(inst, replicas, partitions);
  if (!resolved.ok() && op == Opcode::kCollectiveBroadcast && !ReplicaGroupsOf(inst).empty()) {
    // Like the interpreter, collective-broadcast gives zeros to every device whose group cannot be resolved (ids
    // out of range included) instead of failing: keep the groups of the devices that do resolve.
    resolved.emplace();
    for (int64_t d = 0; d < replicas * partitions; ++d) {
      absl::StatusOr<std::vector<int64_t>> group = ParticipatingDevices(inst, replicas, partitions, d);
      if (group.ok() && std::find(resolved->begin(), resolved->end(), *group) == resolved->end()) {
        bool overlaps = false;
        for (const std::vector<int64_t>& g : *resolved) {
          for (int64_t id : *group) overlaps |= std::find(g.begin(), g.end(), id) != g.end();
        }
        if (overlaps) return Unimplemented(inst, "overlapping participant groups");
        resolved->push_back(*group);
      }
    }
  }
  if (!resolved.ok()) return resolved.status();
  std::vector<std::vector<int64_t>> groups = *std::move(resolved);
  if (groups.empty() && op == Opcode::kCollectiveBroadcast) {
    // Nobody takes part: every device gets zeros (the runtime wants at least one group).
    for (int64_t i = 0; i < inst.operand_count(); ++i) {
      IrArray dst = inst.shape().IsTuple() ? ArrayFor(&inst, {i}) : ArrayFor(&inst);
      b_.CreateMemSet(dst.base, b_.getInt8(0), BytesOf(dst.shape), llvm::MaybeAlign(1));
    }
    return absl::OkStatus();
  }
  int64_t group_size = groups.empty() ? 0 : static_cast<int64_t>(groups[0].size());
  std::vector<int64_t> flat;
  for (const std::vector<int64_t>& g : groups) {
    if (static_cast<int64_t>(g.size()) != group_size) return Unimplemented(inst, "participant groups of unequal size");
    flat.insert(flat.end(), g.begin(), g.end());
  }
  if (group_size == 0 && op != Opcode::kCollectiveBroadcast) return Unimplemented(inst, "no participant groups");
  llvm::Value* groups_ptr = ConstantI64Array(flat, "collective.groups");
  std::vector<llvm::Value*> group_args = {
      dev, op_id, name, groups_ptr, I64(static_cast<int64_t>(groups.size())), I64(group_size)};
  auto call = [&](const char* fn_name, std::vector<llvm::Type*> extra_types, std::vector<llvm::Value*> extra) {
    std::vector<llvm::Type*> types = {ptr, i64, ptr, ptr, i64, i64};
    types.insert(types.end(), extra_types.begin(), extra_types.end());
    std::vector<llvm::Value*> args = group_args;
    args.insert(args.end(), extra.begin(), extra.end());
    return b_.CreateCall(runtime(fn_name, types), args);
  };
  auto leaf = [&](const Instruction* of, int64_t i) {
    return of->shape().IsTuple() ? ArrayFor(of, {i}) : ArrayFor(of);
  };
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!inst.operand(i)->shape().IsArray()) return Unimplemented(inst, "non-array operand");
  }
  int64_t results = inst.shape().IsTuple() ? static_cast<int64_t>(inst.shape().tuple_shapes.size()) : 1;
  if (op != Opcode::kAllToAll && results != inst.operand_count()) {
    return Unimplemented(inst, "{} results for {} operands", results, inst.operand_count());
  }

  switch (op) {
    case Opcode::kAllReduce:
    case Opcode::kCollectiveBroadcast:
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        IrArray src = ArrayFor(inst.operand(i)), dst = leaf(&inst, i);
        if (!SameLayout(src.shape, dst.shape)) return Unimplemented(inst, "operand and result layouts differ");
        llvm::Value* code;
        if (op == Opcode::kAllReduce) {
          XLAC_ASSIGN_OR_RETURN(llvm::Function * combine, CombineFunction(inst, src.shape.element_type));
          code = call("xlac_rt_all_reduce", {ptr, ptr, i64, i64, ptr, ptr},
                      {src.base, dst.base, I64(ElementsOf(dst.shape)), I64(ByteWidth(dst.shape.element_type)), combine,
                       llvm::ConstantPointerNull::get(b_.getPtrTy())});
        } else {
          code = call("xlac_rt_collective_broadcast", {ptr, ptr, i64}, {src.base, dst.base, I64(BytesOf(dst.shape))});
        }
        ReturnIfFailed(code, {});
      }
      return absl::OkStatus();
    case Opcode::kAllGather:
    case Opcode::kReduceScatter: {
      if (inst.dimensions().size() != 1) return Unimplemented(inst, "expected one dimension");
      int64_t dim = inst.dimensions()[0];
      for (int64_t i = 0; i < inst.operand_count(); ++i) {
        IrArray src = ArrayFor(inst.operand(i)), dst = leaf(&inst, i);
        // The per-rank block: the operand for all-gather, the result for reduce-scatter.
        const IrArray& small = op == Opcode::kAllGather ? src : dst;
        const IrArray& big = op == Opcode::kAllGather ? dst : src;
        if (dim < 0 || dim >= small.shape.rank() ||
            small.shape.dimensions[dim] * group_size != big.shape.dimensions[dim]) {
          return Unimplemented(inst, "dimension {} does not split {} over {} participants", dim,
                               ShapeToString(big.shape), group_size);
        }
        int64_t n = small.shape.dimensions[dim];
        int64_t block_bytes = BytesOf(small.shape);
        llvm::Value* temp = AllocTemp(group_size * block_bytes);
        auto for_blocks = [&](const std::function<void(const IrArray& block, const Index& small_index,
                                                       const Index& big_index)>& body) {
          ForLoop(0, group_size, [&](llvm::Value* r) {
            IrArray block = Block(b_, small.shape, temp, b_.CreateNSWMul(r, I64(block_bytes)));
            ShapeLoop(small.shape, [&](const Index& index) {
              body(block, index, Shifted(*this, index, dim, b_.CreateNSWMul(r, I64(n))));
            });
          });
        };
        llvm::Value* code;
        if (op == Opcode::kAllGather) {
          code = call("xlac_rt_all_gather", {ptr, ptr, i64}, {src.base, temp, I64(block_bytes)});
          ReturnIfFailed(code, {temp});
          for_blocks(
              [&](const IrArray& block, const Index& s, const Index& g) { StoreRaw(dst, g, LoadRaw(block, s)); });
        } else {
          XLAC_ASSIGN_OR_RETURN(llvm::Function * combine, CombineFunction(inst, src.shape.element_type));
          for_blocks(
              [&](const IrArray& block, const Index& s, const Index& g) { StoreRaw(block, s, LoadRaw(src, g)); });
          code = call("xlac_rt_reduce_scatter", {ptr, ptr, i64, i64, ptr, ptr},
                      {temp, dst.base, I64(ElementsOf(dst.shape)), I64(ByteWidth(dst.shape.element_type)), combine,
                       llvm::ConstantPointerNull::get(b_.getPtrTy())});
          ReturnIfFailed(code, {temp});
        }
        FreeTemp(temp);
      }
      return absl::OkStatus();
    }
    case Opcode::kAllToAll: {
      const std::vector<int64_t>& dims = inst.dimensions();
      if (!dims.empty()) {
        // Array form (split and concat along the same dimension, as the interpreter does).
        if (inst.operand_count() != 1 || !inst.shape().IsArray()) return Unimplemented(inst, "array form arity");
        IrArray src = ArrayFor(inst.operand(0)), dst = ArrayFor(&inst);
        int64_t dim = dims[0];
        if (dim < 0 || dim >= dst.shape.rank() || dst.shape.dimensions[dim] % group_size != 0 ||
            src.shape.dimensions != dst.shape.dimensions) {
          return Unimplemented(inst, "cannot split dimension {} of {} over {} participants", dim,
                               ShapeToString(src.shape), group_size);
        }
        Shape chunk = dst.shape;
        chunk.dimensions[dim] /= group_size;
        int64_t c = chunk.dimensions[dim];
        int64_t chunk_bytes = BytesOf(chunk);
        llvm::Value* send = AllocTemp(group_size * chunk_bytes);
        llvm::Value* recv = AllocTemp(group_size * chunk_bytes);
        auto for_chunks = [&](llvm::Value* temp,
                              const std::function<void(const IrArray&, const Index&, const Index&)>& body) {
          ForLoop(0, group_size, [&](llvm::Value* r) {
            IrArray block = Block(b_, chunk, temp, b_.CreateNSWMul(r, I64(chunk_bytes)));
            ShapeLoop(chunk, [&](const Index& index) {
              body(block, index, Shifted(*this, index, dim, b_.CreateNSWMul(r, I64(c))));
            });
          });
        };
        for_chunks(send,
                   [&](const IrArray& block, const Index& s, const Index& g) { StoreRaw(block, s, LoadRaw(src, g)); });
        llvm::Value* code = call("xlac_rt_all_to_all", {ptr, ptr, i64}, {send, recv, I64(chunk_bytes)});
        ReturnIfFailed(code, {send, recv});
        for_chunks(recv,
                   [&](const IrArray& block, const Index& s, const Index& g) { StoreRaw(dst, g, LoadRaw(block, s)); });
        FreeTemp(send);
        FreeTemp(recv);
        return absl::OkStatus();
      }
      // Tuple form: operand j goes to participant j; result element i comes from participant i.
      if (inst.operand_count() != group_size || results != group_size) {
        return Unimplemented(inst, "tuple form needs one operand per participant ({})", group_size);
      }
      const Shape& first = inst.operand(0)->shape();
      int64_t bytes = BytesOf(first);
      for (int64_t i = 0; i < group_size; ++i) {
        if (!SameLayout(inst.operand(i)->shape(), first) || !SameLayout(leaf(&inst, i).shape, first)) {
          return Unimplemented(inst, "tuple form with operands of different shapes or layouts");
        }
      }
      llvm::Value* send = AllocTemp(group_size * bytes);
      llvm::Value* recv = AllocTemp(group_size * bytes);
      for (int64_t i = 0; i < group_size; ++i) {
        MemCopy(b_.CreateInBoundsGEP(b_.getInt8Ty(), send, I64(i * bytes)), ArrayFor(inst.operand(i)).base, bytes);
      }
      llvm::Value* code = call("xlac_rt_all_to_all", {ptr, ptr, i64}, {send, recv, I64(bytes)});
      ReturnIfFailed(code, {send, recv});
      for (int64_t i = 0; i < group_size; ++i) {
        MemCopy(leaf(&inst, i).base, b_.CreateInBoundsGEP(b_.getInt8Ty(), recv, I64(i * bytes)), bytes);
      }
      FreeTemp(send);
      FreeTemp(recv);
      return absl::OkStatus();
    }
    default:
      return Unimplemented(inst, "no lowering for this collective yet");
  }
}

}  // namespace internal
}  // namespace xlac::codegen
