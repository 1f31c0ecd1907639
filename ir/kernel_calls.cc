#include "ir/kernel_calls.h"

namespace xlac {
namespace {

std::string_view FrontendAttribute(const Instruction& inst, std::string_view key) {
  for (const auto& [name, value] : inst.frontend_attributes()) {
    if (name == key) return value;
  }
  return {};
}

}  // namespace

bool IsElementwiseKernelCall(const Instruction& inst) {
  return inst.opcode() == Opcode::kCustomCall && inst.shape().IsArray() &&
         FrontendAttribute(inst, kKernelKindAttr) == kElementwiseKernel;
}

bool IsElementwiseKernelCallOfOneShape(const Instruction& inst) {
  if (!IsElementwiseKernelCall(inst)) return false;
  for (const Instruction* operand : inst.operands()) {
    if (!operand->shape().IsArray() || operand->shape().dimensions != inst.shape().dimensions) return false;
  }
  return true;
}

std::string_view KernelSymbol(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCustomCall) return {};
  return FrontendAttribute(inst, kKernelSymbolAttr);
}

}  // namespace xlac
