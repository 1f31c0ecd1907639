#include "ir/kernel_calls.h"

#include <charconv>

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

bool IsBufferKernelCall(const Instruction& inst) {
  return inst.opcode() == Opcode::kCustomCall && FrontendAttribute(inst, kKernelKindAttr) == kBufferKernel;
}

std::string KernelAttrBytes(const Instruction& inst) {
  std::string_view hex = FrontendAttribute(inst, kKernelAttrsAttr);
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    uint8_t byte = 0;
    std::from_chars(hex.data() + i, hex.data() + i + 2, byte, 16);
    bytes.push_back(static_cast<char>(byte));
  }
  return bytes;
}

std::string_view KernelSite(const Instruction& inst) { return FrontendAttribute(inst, kKernelSiteAttr); }

std::string DescribeKernelCall(const Instruction& inst) {
  std::string out =
      "custom call '" + inst.name() + "' (target '" + std::string(inst.StringAttr("custom_call_target")) + "')";
  if (std::string_view site = KernelSite(inst); !site.empty()) out += " at " + std::string(site);
  return out;
}

KernelCallSharding KernelCallShardingOf(const Instruction& inst, std::vector<int64_t>* batch_dims) {
  if (!IsBufferKernelCall(inst)) return KernelCallSharding::kNone;
  std::string_view rule = FrontendAttribute(inst, kKernelShardingAttr);
  if (rule == "elementwise") return KernelCallSharding::kElementwise;
  constexpr std::string_view kBatch = "batch_dims=";
  if (!rule.starts_with(kBatch)) return KernelCallSharding::kReplicated;
  std::vector<int64_t> dims;
  std::string_view list = rule.substr(kBatch.size());
  while (!list.empty()) {
    size_t comma = list.find(',');
    std::string_view item = list.substr(0, comma);
    int64_t d = -1;
    auto [end, error] = std::from_chars(item.data(), item.data() + item.size(), d);
    if (error != std::errc() || end != item.data() + item.size() || d < 0) return KernelCallSharding::kReplicated;
    dims.push_back(d);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  if (dims.empty()) return KernelCallSharding::kReplicated;
  if (batch_dims != nullptr) *batch_dims = std::move(dims);
  return KernelCallSharding::kBatchDims;
}

}  // namespace xlac
