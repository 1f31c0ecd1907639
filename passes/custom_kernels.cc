#include "passes/custom_kernels.h"

#include <map>
#include <optional>

#include "fmt/format.h"
#include "ir/kernel_calls.h"

namespace xlac {
namespace {

std::string TypeList(const std::vector<PrimitiveType>& types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i) out += fmt::format("{}{}", i ? ", " : "", PrimitiveTypeName(types[i]));
  return out;
}

std::string Signature(const KernelSignature& kernel) {
  return fmt::format("({}) -> {}", TypeList(kernel.operand_types), PrimitiveTypeName(kernel.result_type));
}

// Why `call` cannot run the elementwise `kernel`, or nothing when it can.
std::optional<std::string> ElementwiseMismatch(const Instruction& call, const KernelSignature& kernel) {
  const std::string target(call.StringAttr("custom_call_target"));
  if (!call.shape().IsArray()) {
    return fmt::format("custom call {} has a {} result, but the elementwise kernel {} for \"{}\" computes one {}",
                       call.name(), ShapeToString(call.shape(), false), kernel.function, target,
                       PrimitiveTypeName(kernel.result_type));
  }
  if (call.operand_count() != static_cast<int64_t>(kernel.operand_types.size())) {
    return fmt::format("custom call {} has {} operand(s), but the kernel {} for \"{}\" takes {} {}", call.name(),
                       call.operand_count(), kernel.function, target, kernel.operand_types.size(), Signature(kernel));
  }
  for (int64_t i = 0; i < call.operand_count(); ++i) {
    const Shape& shape = call.operand(i)->shape();
    if (!shape.IsArray() || shape.element_type != kernel.operand_types[i]) {
      return fmt::format("operand {} of custom call {} is {}, but the kernel {} for \"{}\" takes {} there {}", i,
                         call.name(), ShapeToString(shape, false), kernel.function, target,
                         PrimitiveTypeName(kernel.operand_types[i]), Signature(kernel));
    }
    if (shape.rank() != 0 && shape.dimensions != call.shape().dimensions) {
      return fmt::format("operand {} of custom call {} is {}, but an elementwise kernel's operands have the "
                         "result's dimensions ({}) or rank 0",
                         i, call.name(), ShapeToString(shape, false), ShapeToString(call.shape(), false));
    }
    if (!shape.IsStatic()) return fmt::format("operand {} of custom call {} has dynamic dimensions", i, call.name());
  }
  if (call.shape().element_type != kernel.result_type) {
    return fmt::format("custom call {} returns {}, but the kernel {} for \"{}\" returns {} {}", call.name(),
                       ShapeToString(call.shape(), false), kernel.function, target,
                       PrimitiveTypeName(kernel.result_type), Signature(kernel));
  }
  if (!call.shape().IsStatic()) return fmt::format("custom call {} has dynamic dimensions", call.name());
  return std::nullopt;
}

void SetFrontendAttribute(Instruction& inst, std::string_view key, std::string_view value) {
  StringMap& attrs = *inst.mutable_frontend_attributes();
  for (auto& [name, v] : attrs) {
    if (name == key) {
      v = std::string(value);
      return;
    }
  }
  attrs.emplace_back(std::string(key), std::string(value));
}

}  // namespace

std::string RenderKernelNote(const KernelSourceLoc& loc, std::string_view message) {
  std::string out = fmt::format("{}:{}:{}: note: {}\n", loc.file, loc.line, loc.col, message);
  if (loc.line > 0) {
    std::string caret;
    for (int32_t i = 1; i < loc.col && static_cast<size_t>(i - 1) < loc.line_text.size(); ++i) {
      caret += loc.line_text[i - 1] == '\t' ? '\t' : ' ';
    }
    out += fmt::format("{}\n{}^\n", loc.line_text, caret);
  }
  return out;
}

absl::StatusOr<bool> BindCustomKernels(Module& module, const std::vector<KernelSignature>& kernels,
                                       DiagnosticEngine& diags, std::string* kernel_notes) {
  std::map<std::string, const KernelSignature*, std::less<>> by_target;
  for (const KernelSignature& kernel : kernels) by_target.emplace(kernel.target, &kernel);
  bool changed = false;
  std::string first_error;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      auto it = by_target.find(inst->StringAttr("custom_call_target"));
      if (it == by_target.end()) continue;
      const KernelSignature& kernel = *it->second;
      if (std::optional<std::string> why = ElementwiseMismatch(*inst, kernel)) {
        std::string note = RenderKernelNote(
            kernel.loc, fmt::format("the kernel {} for \"{}\" is declared here", kernel.function, kernel.target));
        diags.Error(inst->loc(), *why);
        diags.AttachForeignNote(note);
        if (kernel_notes != nullptr) *kernel_notes += note;
        if (first_error.empty()) {
          first_error = inst->loc().known() ? fmt::format("{}:{}: {}", inst->loc().line, inst->loc().col, *why) : *why;
        }
        continue;
      }
      if (KernelSymbol(*inst) == kernel.symbol && IsElementwiseKernelCall(*inst)) continue;
      SetFrontendAttribute(*inst, kKernelKindAttr, kElementwiseKernel);
      SetFrontendAttribute(*inst, kKernelSymbolAttr, kernel.symbol);
      changed = true;
    }
  }
  if (!first_error.empty()) return absl::InvalidArgumentError(first_error);
  return changed;
}

}  // namespace xlac
