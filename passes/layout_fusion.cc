#include "passes/layout_fusion.h"

#include <algorithm>
#include <string_view>
#include <vector>

namespace xlac {

absl::flat_hash_set<const Computation*> ComputationsCalledOnce(const Module& module) {
  absl::flat_hash_set<const Computation*> once, more;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) {
        if (more.contains(callee)) continue;
        if (!once.insert(callee).second) {
          once.erase(callee);
          more.insert(callee);
        }
      }
    }
  }
  return once;
}

namespace {

// A fusion whose fused computation layout assignment may change: one of the kinds codegen emits, called by it alone.
const Computation* OwnFusedComputation(const Instruction& fusion, const absl::flat_hash_set<const Computation*>& once,
                                       std::string_view kind = {}) {
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1) return nullptr;
  const std::string_view actual = fusion.StringAttr("kind");
  if (actual != "kLoop" && actual != "kInput" && actual != "kOutput") return nullptr;
  if (!kind.empty() && actual != kind) return nullptr;
  const Computation* body = fusion.called_computation(0);
  if (!once.contains(body) || body->root() == nullptr || body->parameter_count() != fusion.operand_count()) {
    return nullptr;
  }
  return body;
}

// Whether `param` is read by fused instructions that index logically (and, if `conv` is given, by it).
bool ReadLogically(const Instruction* param, const Instruction* conv = nullptr) {
  if (param->parent()->root() == param) return false;
  for (const Instruction* user : param->users()) {
    if (user == conv) continue;
    const Opcode op = user->opcode();
    if (op == Opcode::kBitcast || op == Opcode::kConvolution || op == Opcode::kTuple) return false;
  }
  return true;
}

}  // namespace

bool FusionReadsAnyLayout(const Instruction& fusion, int64_t i, const absl::flat_hash_set<const Computation*>& once) {
  const Computation* body = OwnFusedComputation(fusion, once);
  if (body == nullptr || i < 0 || i >= fusion.operand_count()) return false;
  const Instruction* param = body->parameter(i);
  return IsPlainArray(param->shape()) && IsPlainArray(fusion.operand(i)->shape()) && ReadLogically(param);
}

Instruction* FusedConvolutionReadingParameters(const Instruction& fusion,
                                               const absl::flat_hash_set<const Computation*>& once) {
  const Computation* body = OwnFusedComputation(fusion, once, "kOutput");
  if (body == nullptr) return nullptr;
  for (const auto& inst : body->instructions()) {
    if (inst->opcode() != Opcode::kConvolution || inst->operand_count() != 2) continue;
    const Instruction* lhs = inst->operand(0);
    const Instruction* rhs = inst->operand(1);
    if (lhs == rhs || lhs->opcode() != Opcode::kParameter || rhs->opcode() != Opcode::kParameter) return nullptr;
    if (!ReadLogically(lhs, inst.get()) || !ReadLogically(rhs, inst.get())) return nullptr;
    return inst.get();
  }
  return nullptr;
}

bool RelayoutLoopFusion(Instruction& fusion, const DimOrder& order,
                        const absl::flat_hash_set<const Computation*>& once) {
  const Computation* body = OwnFusedComputation(fusion, once, "kLoop");
  if (body == nullptr || !IsPlainArray(fusion.shape())) return false;
  Instruction* root = body->root();
  const Opcode op = root->opcode();
  if (op == Opcode::kParameter || op == Opcode::kBitcast || op == Opcode::kTuple || !IsPlainArray(root->shape())) {
    return false;
  }
  for (Instruction* inst : {&fusion, root}) {
    Shape shape = inst->shape();
    shape.EnsureLayout();
    shape.layout->minor_to_major = order;
    inst->set_shape(std::move(shape));
  }
  return true;
}

std::optional<DimOrder> FusedTransposeReadOrder(const Instruction& fusion, const Instruction* producer,
                                                const absl::flat_hash_set<const Computation*>& once) {
  std::optional<DimOrder> order;
  for (int64_t i = 0; i < fusion.operand_count(); ++i) {
    if (fusion.operand(i) != producer) continue;
    if (!FusionReadsAnyLayout(fusion, i, once)) return std::nullopt;
    const Instruction* param = fusion.called_computation(0)->parameter(i);
    if (param->user_count() == 0) return std::nullopt;
    for (const Instruction* user : param->users()) {
      if (user->opcode() != Opcode::kTranspose || !IsPlainArray(user->shape())) return std::nullopt;
      DimOrder read = TransposeOperandOrder(user->dimensions(), OrderOf(user->shape()));
      if (order && *order != read) return std::nullopt;
      order = std::move(read);
    }
  }
  return order;
}

bool RelayoutOutputFusion(Instruction& fusion, const DimOrder& order) {
  if (OrderOf(fusion.shape()) == order) return false;
  const Computation* body = fusion.called_computation(0);
  std::vector<Instruction*> chain;
  for (const auto& inst : body->instructions()) {
    if (inst->opcode() == Opcode::kConvolution) chain.push_back(inst.get());
  }
  // The epilogue: everything the convolution's value reaches (fusible.h's kOutput reads it at the output index).
  for (size_t i = 0; i < chain.size(); ++i) {
    for (Instruction* user : chain[i]->users()) {
      if (std::find(chain.begin(), chain.end(), user) == chain.end()) chain.push_back(user);
    }
  }
  chain.push_back(&fusion);
  for (Instruction* inst : chain) {
    if (inst->shape().dimensions != fusion.shape().dimensions || !IsPlainArray(inst->shape())) continue;
    Shape shape = inst->shape();
    shape.EnsureLayout();
    shape.layout->minor_to_major = order;
    inst->set_shape(std::move(shape));
  }
  return true;
}

bool SetFusionParameterLayouts(Instruction& fusion, const absl::flat_hash_set<const Computation*>& once) {
  bool changed = false;
  for (int64_t i = 0; i < fusion.operand_count(); ++i) {
    if (!FusionReadsAnyLayout(fusion, i, once)) continue;
    Instruction* param = fusion.called_computation(0)->parameter(i);
    DimOrder order = OrderOf(fusion.operand(i)->shape());
    if (OrderOf(param->shape()) == order) continue;
    Shape shape = param->shape();
    shape.EnsureLayout();
    shape.layout->minor_to_major = std::move(order);
    param->set_shape(std::move(shape));
    changed = true;
  }
  return changed;
}

}  // namespace xlac
