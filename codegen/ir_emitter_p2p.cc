// Transfer ops: send/recv (with their -done halves) through the runtime's channel mailboxes
// (runtime/cpu/xlac_runtime_p2p.h), outfeed, and copy-start/copy-done (a copy between memory spaces, which the CPU
// does not have: copy-start holds the value as both its destination {0} and its source {1}).
//
// Like the interpreter, send/recv without source-target pairs (host transfers, StableHLO programs) pair up per
// channel id in program order: the k-th send on a channel feeds the k-th recv on it, whichever devices run them. A
// send does not wait for its receiver. The bytes travel as laid out in the sender's buffer, so both ends must agree
// on the layout. send-done has nothing left to do; recv-done hands on the received data. Outfeed data leaves the
// program, which the interpreter models as doing nothing.
#include "codegen/ir_emitter_internal.h"
#include "ir/collective_groups.h"

namespace xlac::codegen {
namespace internal {
namespace {

bool HasSourceTargetPairs(const Instruction& inst) {
  for (const auto& [key, value] : inst.frontend_attributes()) {
    if (key == "_xla_send_recv_source_target_pairs") return true;
  }
  return false;
}

}  // namespace

bool IrEmitter::IsP2P(Opcode op) {
  return op == Opcode::kSend || op == Opcode::kSendDone || op == Opcode::kRecv || op == Opcode::kRecvDone ||
         op == Opcode::kOutfeed || op == Opcode::kCopyStart || op == Opcode::kCopyDone;
}

absl::Status IrEmitter::EmitP2P(const Instruction& inst) {
  Opcode op = inst.opcode();
  if (op == Opcode::kOutfeed || op == Opcode::kSendDone) return absl::OkStatus();
  if (op == Opcode::kCopyStart || op == Opcode::kCopyDone) {
    const Shape& value = op == Opcode::kCopyStart ? inst.operand(0)->shape() : inst.shape();
    if (!value.IsArray()) return Unimplemented(inst, "{} of {}", OpcodeName(op), ShapeToString(value));
    const BufferSlice& from = assignment_.GetSlice(
        inst.operand(0), op == Opcode::kCopyStart ? std::vector<int64_t>{} : std::vector<int64_t>{0});
    for (int64_t leaf : op == Opcode::kCopyStart ? std::vector<int64_t>{0, 1} : std::vector<int64_t>{-1}) {
      const BufferSlice& to =
          assignment_.GetSlice(&inst, leaf < 0 ? std::vector<int64_t>{} : std::vector<int64_t>{leaf});
      if (!(from == to)) MemCopy(SlicePointer(to), SlicePointer(from), to.size);
    }
    return absl::OkStatus();
  }
  if (op == Opcode::kRecvDone) {
    const Shape& data = inst.shape().tuple_shapes.at(0);
    if (!data.IsArray()) return Unimplemented(inst, "recv-done of {}", ShapeToString(data));
    const BufferSlice& from = assignment_.GetSlice(inst.operand(0), {0});
    const BufferSlice& to = assignment_.GetSlice(&inst, {0});
    if (!(from == to)) MemCopy(SlicePointer(to), SlicePointer(from), to.size);
    return absl::OkStatus();
  }
  if (HasSourceTargetPairs(inst)) return Unimplemented(inst, "send/recv with source-target pairs");
  const Shape& data = inst.shape().tuple_shapes.at(0);
  if (!data.IsArray()) return Unimplemented(inst, "{} of {} (only arrays)", OpcodeName(op), ShapeToString(data));
  int64_t bytes = data.ElementCount().value_or(0) * ByteWidth(data.element_type);
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  const char* fn_name = op == Opcode::kSend ? "xlac_rt_p2p_send" : "xlac_rt_p2p_recv";
  llvm::FunctionCallee fn = llvm_module_.getOrInsertFunction(
      fn_name, llvm::FunctionType::get(b_.getInt32Ty(), {ptr, i64, ptr, i64, ptr}, false));
  llvm::Value* buffer =
      op == Opcode::kSend ? ArrayFor(inst.operand(0)).base : SlicePointer(assignment_.GetSlice(&inst, {0}));
  if (op == Opcode::kSend) {
    // The send's own data leaf is what send-done would hand back; keep it equal to the operand.
    const BufferSlice& own = assignment_.GetSlice(&inst, {0});
    const BufferSlice& operand = assignment_.GetSlice(inst.operand(0), {});
    if (!(own == operand)) MemCopy(SlicePointer(own), buffer, own.size);
  }
  llvm::Value* code = b_.CreateCall(fn, {function_->getArg(1), I64(inst.IntAttr("channel_id", 0)), buffer, I64(bytes),
                                         b_.CreateGlobalString(inst.name(), "p2p.name")});
  ReturnIfFailed(code, {});
  return absl::OkStatus();
}

}  // namespace internal
}  // namespace xlac::codegen
