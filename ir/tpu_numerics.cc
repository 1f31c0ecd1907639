#include "ir/tpu_numerics.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/strings/ascii.h"

namespace xlac {

TpuDotMode TpuDotModeOf(const Instruction& inst, std::string* why) {
  auto f32 = [](const Shape& s) { return s.IsArray() && s.element_type == PrimitiveType::kF32; };
  if (!f32(inst.shape()) || inst.operand_count() < 2 || !f32(inst.operand(0)->shape()) ||
      !f32(inst.operand(1)->shape())) {
    return TpuDotMode::kF32;
  }
  std::string algorithm = absl::AsciiStrToLower(std::string(inst.StringAttr("algorithm")));
  if (!algorithm.empty() && algorithm != "unset") {
    if (algorithm == "dot_bf16_bf16_f32") return TpuDotMode::kBf16Operands;
    if (algorithm == "dot_f32_f32_f32") return TpuDotMode::kF32;
    if (algorithm == "dot_bf16_bf16_f32_x3") return TpuDotMode::kBf16x3;
    if (why != nullptr) *why = "algorithm=" + algorithm;
    return TpuDotMode::kUnsupported;
  }
  int level = 0;  // 0 default, 1 high, 2 highest
  if (const AttrValue* precision = inst.FindAttr("operand_precision")) {
    for (const std::string& p : precision->get<std::vector<std::string>>()) {
      std::string lower = absl::AsciiStrToLower(p);
      if (lower == "high") level = std::max(level, 1);
      if (lower == "highest") level = 2;
    }
  }
  if (level == 2) return TpuDotMode::kF32;
  if (level == 1) return TpuDotMode::kBf16x3;
  return TpuDotMode::kBf16Operands;
}

float RoundToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  if ((bits & 0x7f800000u) == 0x7f800000u) return value;  // inf, NaN
  bits += 0x7fffu + ((bits >> 16) & 1u);
  bits &= 0xffff0000u;
  float out;
  std::memcpy(&out, &bits, sizeof out);
  return out;
}

}  // namespace xlac
