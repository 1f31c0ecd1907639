// Custom calls bound to C++ kernels: the interpreter runs the kernel's own compiled function over the operands'
// elements (elementwise kernels) or buffers (buffer kernels, whose frame it builds from the literals, row-major as
// the kernels expect), so the oracle and the program compute the kernel with the same code.
#include <cstring>

#include "include/xlac/custom_call.h"
#include "ir/kernel_calls.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

absl::StatusOr<Literal> EvalElementwiseKernel(const Instruction& inst, Operands operands,
                                              const InterpreterOptions& options) {
  const std::string symbol(KernelSymbol(inst));
  const CompiledKernels* kernels = options.elementwise_kernels;
  auto it = kernels == nullptr ? decltype(kernels->elementwise)::const_iterator() : kernels->elementwise.find(symbol);
  if (kernels == nullptr || it == kernels->elementwise.end()) {
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

absl::StatusOr<Literal> EvalBufferKernel(const Instruction& inst, Operands operands,
                                         const InterpreterOptions& options) {
  const std::string symbol(KernelSymbol(inst));
  const CompiledKernels* kernels = options.elementwise_kernels;
  auto it = kernels == nullptr ? decltype(kernels->buffer)::const_iterator() : kernels->buffer.find(symbol);
  if (kernels == nullptr || it == kernels->buffer.end()) {
    return absl::FailedPreconditionError(fmt::format(
        "{}: custom call {} is bound to the C++ kernel {}, which the interpreter was not given (compile the kernel "
        "sources for it: --custom-call-src)",
        inst.name(), std::string(inst.StringAttr("custom_call_target")), symbol));
  }
  auto view = [](const Literal& literal, void* data) {
    return XlacKernelBuffer{data, literal.shape().dimensions.data(), literal.shape().rank()};
  };
  std::vector<XlacKernelBuffer> in;
  for (const Literal* operand : operands) {
    if (operand->is_unknown()) return absl::InvalidArgumentError(inst.name() + ": operand with unknown values");
    if (!operand->shape().IsArray()) return absl::InvalidArgumentError(inst.name() + ": a tuple operand");
    // Kernels read operands through const views only.
    in.push_back(view(*operand, const_cast<uint8_t*>(operand->raw_data())));
  }
  Literal result(inst.shape());
  std::vector<XlacKernelBuffer> out;
  if (result.is_tuple()) {
    for (Literal& element : result.mutable_tuple_elements()) out.push_back(view(element, element.mutable_raw_data()));
  } else {
    out.push_back(view(result, result.mutable_raw_data()));
  }
  const std::string attrs = KernelAttrBytes(inst);
  // Aligned for any scalar field, as compiled code's constant is.
  alignas(16) char attr_storage[256];
  std::vector<char> large_attrs;
  char* attr_data = attr_storage;
  if (attrs.size() > sizeof(attr_storage)) {
    large_attrs.resize(attrs.size() + 16);
    attr_data = large_attrs.data() + (16 - reinterpret_cast<uintptr_t>(large_attrs.data()) % 16) % 16;
  }
  std::memcpy(attr_data, attrs.data(), attrs.size());
  char message[512] = {};
  XlacKernelFrame frame{in.data(),
                        static_cast<int64_t>(in.size()),
                        out.data(),
                        static_cast<int64_t>(out.size()),
                        attrs.empty() ? nullptr : attr_data,
                        message,
                        sizeof(message) - 1};
  if (it->second(&frame) != 0) {
    return absl::AbortedError(fmt::format("{} failed: {}", DescribeKernelCall(inst), message));
  }
  return result;
}

}  // namespace xlac::interp
