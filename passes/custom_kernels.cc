#include "passes/custom_kernels.h"

#include <map>
#include <optional>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "ir/kernel_calls.h"
#include "passes/kernel_attrs.h"

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
      return fmt::format(
          "operand {} of custom call {} is {}, but an elementwise kernel's operands have the "
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

// Returns whether the attribute changed.
bool SetFrontendAttribute(Instruction& inst, std::string_view key, std::string_view value) {
  StringMap& attrs = *inst.mutable_frontend_attributes();
  for (auto& [name, v] : attrs) {
    if (name == key) {
      if (v == value) return false;
      v = std::string(value);
      return true;
    }
  }
  attrs.emplace_back(std::string(key), std::string(value));
  return true;
}

// Why a call does not match its kernel: the error at the call, and the note's place and text on the C++ side.
struct Mismatch {
  std::string message;
  const KernelSourceLoc* note_loc = nullptr;
  std::string note;
};

// "f32[?,?] x": a buffer parameter as the kernel declares it.
std::string ParamString(const KernelBufferParam& p) {
  std::string dims;
  if (p.rank < 0) {
    dims = "...";
  } else {
    for (int64_t i = 0; i < p.rank; ++i) dims += i ? ",?" : "?";
  }
  return fmt::format("{}[{}] {}", PrimitiveTypeName(p.type), dims, p.name);
}

std::string BufferSignature(const KernelSignature& kernel) {
  auto list = [](const std::vector<KernelBufferParam>& params) {
    std::string out;
    for (const KernelBufferParam& p : params) out += (out.empty() ? "" : ", ") + ParamString(p);
    return out;
  };
  return fmt::format("({}) -> ({})", list(kernel.operands), list(kernel.results));
}

// The array leaves a buffer kernel writes: the result, or the elements of a tuple result.
std::vector<const Shape*> ResultLeaves(const Shape& shape) {
  std::vector<const Shape*> out;
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes) out.push_back(&element);
  } else {
    out.push_back(&shape);
  }
  return out;
}

std::optional<Mismatch> BufferMismatch(const Instruction& call, const KernelSignature& kernel) {
  const std::string target(call.StringAttr("custom_call_target"));
  auto at_kernel = [&](std::string message) {
    return Mismatch{std::move(message), &kernel.loc,
                    fmt::format("the kernel {} for \"{}\" is declared here", kernel.function, kernel.target)};
  };
  auto at_param = [&](std::string message, const KernelBufferParam& p) {
    return Mismatch{std::move(message), &p.loc,
                    fmt::format("parameter '{}' of {} is declared here", p.name, kernel.function)};
  };
  if (call.operand_count() != static_cast<int64_t>(kernel.operands.size())) {
    return at_kernel(fmt::format("custom call {} has {} operand(s), but the buffer kernel {} for \"{}\" takes {}: {}",
                                 call.name(), call.operand_count(), kernel.function, target, kernel.operands.size(),
                                 BufferSignature(kernel)));
  }
  const std::vector<const Shape*> results = ResultLeaves(call.shape());
  if (results.size() != kernel.results.size()) {
    return at_kernel(
        fmt::format("custom call {} has {} result(s) ({}), but the buffer kernel {} for \"{}\" writes {}: "
                    "{}",
                    call.name(), results.size(), ShapeToString(call.shape(), false), kernel.function, target,
                    kernel.results.size(), BufferSignature(kernel)));
  }
  auto check = [&](const Shape& shape, const KernelBufferParam& p, const std::string& what) -> std::optional<Mismatch> {
    if (!shape.IsArray()) {
      return at_param(
          fmt::format("{} of custom call {} is {}, but the kernel {} for \"{}\" takes an array there: {}", what,
                      call.name(), ShapeToString(shape, false), kernel.function, target, BufferSignature(kernel)),
          p);
    }
    if (shape.element_type != p.type) {
      return at_param(fmt::format("{} of custom call {} is {}, but the kernel {} for \"{}\" takes {} there: {}", what,
                                  call.name(), ShapeToString(shape, false), kernel.function, target,
                                  PrimitiveTypeName(p.type), BufferSignature(kernel)),
                      p);
    }
    if (p.rank >= 0 && shape.rank() != p.rank) {
      return at_param(fmt::format("{} of custom call {} is {}, of rank {}, but the kernel {} for \"{}\" takes rank {} "
                                  "there: {}",
                                  what, call.name(), ShapeToString(shape, false), shape.rank(), kernel.function, target,
                                  p.rank, BufferSignature(kernel)),
                      p);
    }
    if (!shape.IsStatic()) {
      return at_param(fmt::format("{} of custom call {} has dynamic dimensions", what, call.name()), p);
    }
    return std::nullopt;
  };
  for (int64_t i = 0; i < call.operand_count(); ++i) {
    if (auto m = check(call.operand(i)->shape(), kernel.operands[i], fmt::format("operand {}", i))) return m;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    const std::string what = call.shape().IsTuple() ? fmt::format("result {}", i) : std::string("the result");
    if (auto m = check(*results[i], kernel.results[i], what)) return m;
  }
  // The sharding rule's promises about shapes, checked here so that the partitioner may rely on them.
  std::vector<std::pair<std::string, const Shape*>> all;
  for (int64_t i = 0; i < call.operand_count(); ++i) {
    all.emplace_back(fmt::format("operand {}", i), &call.operand(i)->shape());
  }
  for (size_t i = 0; i < results.size(); ++i) all.emplace_back(fmt::format("result {}", i), results[i]);
  if (kernel.sharding == KernelShardingRule::kBatchDims) {
    const Shape& first = *all.front().second;
    for (const auto& [what, shape] : all) {
      for (int64_t d : kernel.batch_dims) {
        if (d >= shape->rank() || d >= first.rank() || shape->dimensions[d] != first.dimensions[d]) {
          return at_kernel(
              fmt::format("{} of custom call {} is {}, but the kernel {} for \"{}\" declares batch "
                          "dimensions {{{}}}, which every operand and result has with the sizes of {} "
                          "({})",
                          what, call.name(), ShapeToString(*shape, false), kernel.function, target,
                          fmt::join(kernel.batch_dims, ","), all.front().first, ShapeToString(first, false)));
        }
      }
    }
  } else if (kernel.sharding == KernelShardingRule::kElementwise) {
    for (const auto& [what, shape] : all) {
      if (shape->dimensions != all.front().second->dimensions) {
        return at_kernel(
            fmt::format("{} of custom call {} is {}, but the kernel {} for \"{}\" is declared "
                        "elementwise, so every operand and result has the dimensions of {} ({})",
                        what, call.name(), ShapeToString(*shape, false), kernel.function, target, all.front().first,
                        ShapeToString(*all.front().second, false)));
      }
    }
  }
  return std::nullopt;
}

std::string ShardingRuleText(const KernelSignature& kernel) {
  switch (kernel.sharding) {
    case KernelShardingRule::kElementwise:
      return "elementwise";
    case KernelShardingRule::kBatchDims:
      return fmt::format("batch_dims={}", fmt::join(kernel.batch_dims, ","));
    case KernelShardingRule::kReplicated:
      break;
  }
  return "replicated";
}

std::string Hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
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
                                       DiagnosticEngine& diags, std::string* kernel_notes, const SourceFile* file) {
  // Elementwise kernels of one target may differ in their element types (overloads): a call binds to the one its
  // types match, and a call matching none is reported against the first.
  std::map<std::string, std::vector<const KernelSignature*>, std::less<>> by_target;
  for (const KernelSignature& kernel : kernels) by_target[kernel.target].push_back(&kernel);
  bool changed = false;
  std::string first_error;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      auto it = by_target.find(inst->StringAttr("custom_call_target"));
      if (it == by_target.end()) continue;
      const KernelSignature* chosen = it->second.front();
      for (const KernelSignature* candidate : it->second) {
        if (candidate->kind == KernelKind::kElementwise && !ElementwiseMismatch(*inst, *candidate)) {
          chosen = candidate;
          break;
        }
      }
      const KernelSignature& kernel = *chosen;
      std::optional<Mismatch> mismatch;
      std::string attr_bytes;
      if (kernel.kind == KernelKind::kElementwise) {
        if (std::optional<std::string> why = ElementwiseMismatch(*inst, kernel)) {
          mismatch = Mismatch{*why, &kernel.loc,
                              fmt::format("the kernel {} for \"{}\" is declared here", kernel.function, kernel.target)};
        }
      } else {
        mismatch = BufferMismatch(*inst, kernel);
        KernelAttrProblem problem;
        std::string config = inst->backend_config();
        // A kernel without attributes ignores an opaque (non-dictionary) backend_config.
        if (kernel.attrs_size == 0 && config.find('{') == std::string::npos) config.clear();
        std::optional<std::string> bytes =
            mismatch ? std::optional<std::string>("") : FillKernelAttrs(kernel, config, inst->name(), problem);
        if (!bytes) {
          mismatch =
              problem.field != nullptr
                  ? Mismatch{problem.message, &problem.field->loc,
                             fmt::format("attribute '{}' of {} is declared here", problem.field->name, kernel.function)}
                  : Mismatch{
                        problem.message, kernel.attrs_size > 0 ? &kernel.attrs_loc : &kernel.loc,
                        kernel.attrs_size > 0
                            ? fmt::format("the attributes of {} are declared here", kernel.function)
                            : fmt::format("the kernel {} for \"{}\" is declared here", kernel.function, kernel.target)};
        } else {
          attr_bytes = *std::move(bytes);
        }
      }
      if (mismatch) {
        std::string note = RenderKernelNote(*mismatch->note_loc, mismatch->note);
        diags.Error(inst->loc(), mismatch->message);
        diags.AttachForeignNote(note);
        if (kernel_notes != nullptr) *kernel_notes += note;
        if (first_error.empty()) {
          first_error = inst->loc().known()
                            ? fmt::format("{}:{}: {}", inst->loc().line, inst->loc().col, mismatch->message)
                            : mismatch->message;
        }
        continue;
      }
      const bool buffer = kernel.kind == KernelKind::kBuffer;
      changed |= SetFrontendAttribute(*inst, kKernelKindAttr, buffer ? kBufferKernel : kElementwiseKernel);
      changed |= SetFrontendAttribute(*inst, kKernelSymbolAttr, kernel.symbol);
      if (!buffer) continue;
      if (!attr_bytes.empty()) changed |= SetFrontendAttribute(*inst, kKernelAttrsAttr, Hex(attr_bytes));
      changed |= SetFrontendAttribute(*inst, kKernelShardingAttr, ShardingRuleText(kernel));
      if (file != nullptr && inst->loc().known()) {
        changed |= SetFrontendAttribute(
            *inst, kKernelSiteAttr,
            fmt::format("{}:{}:{}", file->name(), inst->loc().line + file->line_offset(), inst->loc().col));
      }
    }
  }
  if (!first_error.empty()) return absl::InvalidArgumentError(first_error);
  return changed;
}

}  // namespace xlac
