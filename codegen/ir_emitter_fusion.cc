// Fusions (passes/fusion/fusible.h): a loop fusion is one loop nest over its output, an input fusion one pass of
// EmitReduction over its elemental input, an output fusion the dot/convolution emitter writing the fusion's buffer
// followed by the epilogue over that buffer in place. Fused values come from ElementalEmitter.
#include <algorithm>

#include "codegen/elemental_emitter.h"
#include "llvm/IR/MDBuilder.h"

namespace xlac::codegen::internal {
namespace {

// The fused values a fusion writes, with the output array of each.
struct Outputs {
  std::vector<const Instruction*> values;
  std::vector<IrArray> arrays;
};

Outputs LoopOutputs(IrEmitter& e, const Instruction& fusion) {
  Outputs out;
  const Instruction* root = fusion.called_computation(0)->root();
  if (root->opcode() == Opcode::kTuple) {
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      out.values.push_back(root->operand(i));
      out.arrays.push_back(e.ArrayFor(&fusion, {i}));
    }
  } else {
    out.values.push_back(root);
    out.arrays.push_back(e.ArrayFor(&fusion));
  }
  return out;
}

// Marks the loads and stores of `fn`'s blocks from `first` on, and of the parallel loops outlined after `last`:
// stores write the fusion's outputs, loads read its operands (or, in place, the output element about to be
// written), so they never alias across elements. Without this LLVM cannot vectorize a loop that reloads a broadcast
// operand from the same arena the output lives in.
void MarkOutputsDisjoint(IrEmitter& e, llvm::Function& fn, size_t first, llvm::Function* last) {
  llvm::MDBuilder md(e.ctx());
  llvm::MDNode* domain = md.createAnonymousAliasScopeDomain("xlac.fusion");
  llvm::MDNode* scope = md.createAnonymousAliasScope(domain, "outputs");
  llvm::MDNode* scopes = llvm::MDNode::get(e.ctx(), {scope});
  auto mark = [&](llvm::BasicBlock& block) {
    for (llvm::Instruction& inst : block) {
      if (llvm::isa<llvm::StoreInst>(inst)) inst.setMetadata(llvm::LLVMContext::MD_alias_scope, scopes);
      if (llvm::isa<llvm::LoadInst>(inst)) inst.setMetadata(llvm::LLVMContext::MD_noalias, scopes);
    }
  };
  size_t index = 0;
  for (llvm::BasicBlock& block : fn) {
    if (index++ >= first) mark(block);
  }
  for (auto it = std::next(last->getIterator()); it != e.llvm_module().end(); ++it) {
    if (!it->getName().starts_with("xlac.par.")) continue;
    // The captures frame is read-only and distinct from every buffer.
    for (llvm::BasicBlock& block : *it) {
      if (&block != &it->getEntryBlock()) mark(block);
    }
  }
}

// One loop nest in the first output's memory order; every output is written at each index.
absl::Status EmitElementalLoop(IrEmitter& e, const Instruction& fusion, const Outputs& out) {
  for (const IrArray& a : out.arrays) {
    if (a.shape.dimensions != out.arrays[0].shape.dimensions) {
      return Unimplemented(fusion, "multi-output loop fusion with outputs of different dimensions");
    }
  }
  ElementalEmitter elemental(e, fusion);
  absl::Status status;
  llvm::Function& fn = *e.b().GetInsertBlock()->getParent();
  size_t first_block = fn.size();
  llvm::Function* last = &e.llvm_module().getFunctionList().back();
  const Shape& shape = out.arrays[0].shape;
  XLAC_RETURN_IF_ERROR(e.ParallelShapeLoop(shape, fusion.name(), [&](const Index& index) {
    if (!status.ok()) return;
    elemental.Reset();
    std::vector<llvm::Value*> values;
    for (const Instruction* value : out.values) {
      absl::StatusOr<llvm::Value*> v = elemental.Emit(value, index);
      if (!v.ok()) {
        status = v.status();
        return;
      }
      values.push_back(*v);
    }
    // Stores after every value: an output written early must not change what a later value reads.
    for (size_t k = 0; k < values.size(); ++k) e.StoreCompute(out.arrays[k], index, values[k]);
  }));
  if (status.ok()) MarkOutputsDisjoint(e, fn, first_block, last);
  return status;
}

absl::Status EmitInputFusion(IrEmitter& e, const Instruction& fusion) {
  const Instruction* root = fusion.called_computation(0)->root();
  std::vector<const Instruction*> reduces;
  std::vector<std::vector<int64_t>> prefixes;
  if (root->opcode() == Opcode::kReduce) {
    reduces.push_back(root);
    prefixes.push_back({});
  } else if (root->opcode() == Opcode::kTuple) {
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      reduces.push_back(root->operand(i));
      prefixes.push_back({i});
    }
  }
  if (reduces.empty()) return Unimplemented(fusion, "input fusion whose root is not a reduce or tuple of reduces");
  std::vector<ReduceGroup> groups;
  // The walk follows the input's layout: the caller's operand's when the reduce reads a parameter directly.
  const Instruction* input = reduces[0]->operand(0);
  const Shape& input_shape =
      input->opcode() == Opcode::kParameter ? fusion.operand(input->parameter_number())->shape() : input->shape();
  std::vector<int64_t> reduced = reduces[0]->dimensions();
  std::sort(reduced.begin(), reduced.end());
  for (size_t k = 0; k < reduces.size(); ++k) {
    const Instruction* r = reduces[k];
    std::vector<int64_t> dims = r->dimensions();
    std::sort(dims.begin(), dims.end());
    if (r->opcode() != Opcode::kReduce || dims != reduced ||
        r->operand(0)->shape().dimensions != input_shape.dimensions) {
      return Unimplemented(fusion, "input fusion of reduces with different inputs or reduced dimensions");
    }
    ReduceGroup group;
    group.reduce = r;
    int64_t n = r->operand_count() / 2;
    for (int64_t i = 0; i < n; ++i) {
      std::vector<int64_t> index = prefixes[k];
      if (r->shape().IsTuple()) index.push_back(i);
      group.outputs.push_back(e.ArrayFor(&fusion, index));
      XLAC_RETURN_IF_ERROR(e.CheckComputeType(*r, r->operand(i)->shape().element_type));
      XLAC_RETURN_IF_ERROR(e.CheckComputeType(*r, group.outputs.back().shape.element_type));
    }
    groups.push_back(std::move(group));
  }
  ElementalEmitter elemental(e, fusion);
  auto values = [&](bool init, const Index& index) -> absl::StatusOr<std::vector<llvm::Value*>> {
    elemental.Reset();
    std::vector<llvm::Value*> out;
    for (const ReduceGroup& g : groups) {
      int64_t n = g.reduce->operand_count() / 2;
      for (int64_t i = 0; i < n; ++i) {
        XLAC_ASSIGN_OR_RETURN(llvm::Value * v, elemental.Emit(g.reduce->operand(init ? n + i : i), index));
        out.push_back(v);
      }
    }
    return out;
  };
  return EmitReduction(
      e, input_shape, reduced, groups, [&](const Index& index) { return values(true, index); },
      [&](const Index& index) { return values(false, index); });
}

// Every path from `from` to the root reads `from` at the index it writes (elementwise ops only).
bool ReadsAtOutputIndex(const Instruction* from, const Instruction* root) {
  if (from == root) return true;
  for (const Instruction* user : from->users()) {
    Opcode op = user->opcode();
    bool same_index = IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kCompare ||
                      op == Opcode::kSelect || op == Opcode::kClamp || op == Opcode::kConvert ||
                      op == Opcode::kReducePrecision || op == Opcode::kCopy;
    if (!same_index || user->shape().dimensions != from->shape().dimensions) return false;
    if (!ReadsAtOutputIndex(user, root)) return false;
  }
  return true;
}

absl::Status EmitOutputFusion(IrEmitter& e, const Instruction& fusion) {
  const Computation& comp = *fusion.called_computation(0);
  const Instruction* gemm = nullptr;
  for (const Instruction* inst : comp.MakePostOrder()) {
    if (inst->opcode() == Opcode::kDot || inst->opcode() == Opcode::kConvolution) {
      if (gemm != nullptr) return Unimplemented(fusion, "output fusion with several dots or convolutions");
      gemm = inst;
    }
  }
  if (gemm == nullptr || comp.root()->opcode() == Opcode::kTuple) {
    return Unimplemented(fusion, "output fusion without exactly one dot or convolution and one output");
  }
  // Buffer assignment gives the fused dot the fusion's output slice (and its parameters their operands' slices)
  // only when it fits there and the epilogue reads it where it writes.
  if (!e.assignment().HasSlice(gemm) || !ReadsAtOutputIndex(gemm, comp.root())) {
    return Unimplemented(fusion, "output fusion whose {} result does not fit the fusion's buffer", gemm->name());
  }
  for (const Instruction* operand : gemm->operands()) {
    if (operand->opcode() != Opcode::kParameter || !e.assignment().HasSlice(operand)) {
      return Unimplemented(fusion, "output fusion whose {} operands are not fusion parameters", gemm->name());
    }
  }
  XLAC_RETURN_IF_ERROR(gemm->opcode() == Opcode::kDot ? e.EmitDot(*gemm) : e.EmitConvolution(*gemm));
  if (comp.root() == gemm) return absl::OkStatus();
  return EmitElementalLoop(e, fusion, LoopOutputs(e, fusion));
}

}  // namespace

absl::Status IrEmitter::EmitFusion(const Instruction& inst) {
  if (inst.called_computations().size() != 1) return Unimplemented(inst, "fusion must call one computation");
  std::string_view kind = inst.StringAttr("kind");
  if (kind == "kLoop") return EmitElementalLoop(*this, inst, LoopOutputs(*this, inst));
  if (kind == "kInput") return EmitInputFusion(*this, inst);
  if (kind == "kOutput") return EmitOutputFusion(*this, inst);
  return Unimplemented(inst, "fusion kind {}", std::string(kind));
}

}  // namespace xlac::codegen::internal
