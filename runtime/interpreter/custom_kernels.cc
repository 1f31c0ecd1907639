// Custom calls bound to C++ elementwise kernels: the interpreter runs the kernel's own compiled function over the
// operands' elements, so the oracle and the program compute the kernel with the same code.
#include "ir/kernel_calls.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

absl::StatusOr<Literal> EvalElementwiseKernel(const Instruction& inst, Operands operands,
                                              const InterpreterOptions& options) {
  const std::string symbol(KernelSymbol(inst));
  const ElementwiseKernels* kernels = options.elementwise_kernels;
  auto it = kernels == nullptr ? ElementwiseKernels::const_iterator() : kernels->find(symbol);
  if (kernels == nullptr || it == kernels->end()) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: custom call {} is bound to the C++ kernel {}, which the interpreter was not given (compile the kernel "
        "sources for it: --custom-call-src)",
        inst.name(), std::string(inst.StringAttr("custom_call_target")), symbol));
  }
  Literal result(inst.shape());
  std::vector<const void*> data;
  std::vector<uint8_t> broadcast;
  for (const Literal* operand : operands) {
    if (operand->is_unknown()) return absl::InvalidArgumentError(inst.name() + ": operand with unknown values");
    const bool scalar = operand->shape().rank() == 0;
    if (!scalar && operand->element_count() != result.element_count()) {
      return absl::InvalidArgumentError(fmt::format("{}: operand of {} elements for a result of {}", inst.name(),
                                                    operand->element_count(), result.element_count()));
    }
    data.push_back(operand->raw_data());
    broadcast.push_back(scalar ? 1 : 0);
  }
  it->second(data.data(), broadcast.data(), result.mutable_raw_data(), result.element_count());
  return result;
}

}  // namespace xlac::interp
