// reduce (variadic) and the scalar emission of embedded computations (reducers, comparators).
//
// Accumulation order is the interpreter's: per output element, sequentially over the reduced elements in row-major
// order, the accumulators being the reducer's first arguments; every reducer op rounds to its element type.
#include <algorithm>

#include "codegen/ir_emitter_internal.h"

namespace xlac::codegen::internal {

absl::StatusOr<std::vector<llvm::Value*>> IrEmitter::EmitScalarComputation(const Computation& comp,
                                                                           absl::Span<llvm::Value* const> args) {
  std::map<int64_t, std::vector<llvm::Value*>> values;  // by instruction unique id
  for (const Instruction* inst : comp.MakePostOrder()) {
    const Shape& shape = inst->shape();
    std::vector<llvm::Value*>& out = values[inst->unique_id()];
    switch (inst->opcode()) {
      case Opcode::kParameter:
        if (!shape.IsScalar() || inst->parameter_number() >= static_cast<int64_t>(args.size())) {
          return Unimplemented(*inst, "embedded computation with non-scalar parameters");
        }
        out = {args[inst->parameter_number()]};
        continue;
      case Opcode::kConstant:
        if (!shape.IsScalar() || inst->literal().is_unknown()) {
          return Unimplemented(*inst, "non-scalar constant in an embedded computation");
        }
        XLAC_RETURN_IF_ERROR(CheckComputeType(*inst, shape.element_type));
        out = {ConstantCompute(shape.element_type, inst->literal(), 0)};
        continue;
      case Opcode::kTuple:
        for (const Instruction* operand : inst->operands()) {
          const std::vector<llvm::Value*>& v = values[operand->unique_id()];
          out.insert(out.end(), v.begin(), v.end());
        }
        continue;
      case Opcode::kGetTupleElement: {
        const Shape& tuple = inst->operand(0)->shape();
        int64_t which = inst->IntAttr("index");
        for (const Shape& s : tuple.tuple_shapes) {
          if (!s.IsScalar()) return Unimplemented(*inst, "nested tuples in an embedded computation");
        }
        out = {values[inst->operand(0)->unique_id()].at(static_cast<size_t>(which))};
        continue;
      }
      default:
        break;
    }
    Opcode op = inst->opcode();
    bool elementwise = IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kCompare ||
                       op == Opcode::kSelect || op == Opcode::kClamp || op == Opcode::kConvert;
    if (!elementwise || !shape.IsScalar()) {
      return Unimplemented(*inst, "op in an embedded (scalar) computation");
    }
    std::vector<llvm::Value*> operands;
    for (const Instruction* operand : inst->operands()) {
      if (!operand->shape().IsScalar()) return Unimplemented(*inst, "non-scalar operand in an embedded computation");
      operands.push_back(values[operand->unique_id()].at(0));
    }
    int64_t typed = op == Opcode::kSelect || op == Opcode::kClamp ? 1 : 0;
    XLAC_ASSIGN_OR_RETURN(llvm::Value * v, EmitScalarOp(*inst, inst->operand(typed)->shape().element_type, operands));
    out = {RoundToType(v, shape.element_type)};
  }
  return values[comp.root()->unique_id()];
}

absl::Status IrEmitter::EmitReduce(const Instruction& inst) {
  size_t n = static_cast<size_t>(inst.operand_count()) / 2;
  const Computation& reducer = *inst.called_computation(0);
  std::vector<IrArray> inputs, inits, outputs;
  for (size_t i = 0; i < n; ++i) {
    inputs.push_back(ArrayFor(inst.operand(static_cast<int64_t>(i))));
    inits.push_back(ArrayFor(inst.operand(static_cast<int64_t>(n + i))));
    outputs.push_back(inst.shape().IsTuple() ? ArrayFor(&inst, {static_cast<int64_t>(i)}) : ArrayFor(&inst));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, inputs.back().shape.element_type));
    XLAC_RETURN_IF_ERROR(CheckComputeType(inst, outputs.back().shape.element_type));
  }
  const std::vector<int64_t>& in_dims = inputs[0].shape.dimensions;
  std::vector<int64_t> reduced = inst.dimensions();
  std::sort(reduced.begin(), reduced.end());
  std::vector<int64_t> kept;
  for (int64_t d = 0; d < static_cast<int64_t>(in_dims.size()); ++d) {
    if (!std::binary_search(reduced.begin(), reduced.end(), d)) kept.push_back(d);
  }
  // Accumulators live in allocas of the entry block, which mem2reg turns into registers.
  std::vector<llvm::AllocaInst*> accs;
  {
    llvm::IRBuilder<> entry(&function_->getEntryBlock(), function_->getEntryBlock().begin());
    for (size_t i = 0; i < n; ++i) {
      accs.push_back(entry.CreateAlloca(ComputeType(outputs[i].shape.element_type), nullptr, "acc"));
    }
  }
  std::vector<int64_t> reduced_dims;
  for (int64_t d : reduced) reduced_dims.push_back(in_dims[d]);
  std::vector<int64_t> reduced_order(reduced.size());
  for (size_t i = 0; i < reduced_order.size(); ++i) reduced_order[i] = static_cast<int64_t>(i);
  absl::Status status;
  ShapeLoop(outputs[0].shape, [&](const Index& out_index) {
    for (size_t i = 0; i < n; ++i) b_.CreateStore(LoadCompute(inits[i], {}), accs[i]);
    LoopNest(reduced_dims, reduced_order, [&](const Index& red_index) {
      if (!status.ok()) return;
      Index in_index(in_dims.size());
      for (size_t k = 0; k < kept.size(); ++k) in_index[kept[k]] = out_index[k];
      for (size_t k = 0; k < reduced.size(); ++k) in_index[reduced[k]] = red_index[k];
      std::vector<llvm::Value*> args;
      for (size_t i = 0; i < n; ++i) args.push_back(b_.CreateLoad(accs[i]->getAllocatedType(), accs[i]));
      for (size_t i = 0; i < n; ++i) args.push_back(LoadCompute(inputs[i], in_index));
      absl::StatusOr<std::vector<llvm::Value*>> r = EmitScalarComputation(reducer, args);
      if (!r.ok()) {
        status = r.status();
        return;
      }
      if (r->size() != n) {
        status = Unimplemented(inst, "reducer result arity");
        return;
      }
      for (size_t i = 0; i < n; ++i) b_.CreateStore((*r)[i], accs[i]);
    });
    for (size_t i = 0; i < n; ++i) {
      StoreCompute(outputs[i], out_index, b_.CreateLoad(accs[i]->getAllocatedType(), accs[i]));
    }
  });
  return status;
}

}  // namespace xlac::codegen::internal
