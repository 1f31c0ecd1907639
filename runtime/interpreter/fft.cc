// fft: FFT, IFFT (normalized by 1/N), RFFT and IRFFT over the innermost len(fft_length) dimensions.
//
// The numbers come from the runtime's library kernel (runtime/cpu/fft.cc), which compiled code calls too, so both
// backends agree bit for bit; this file only validates attributes and hands over the row-major literal data.
#include "runtime/cpu/xlac_runtime_kernels.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

absl::StatusOr<Literal> EvalFft(const Instruction& inst, Operands operands) {
  const Literal& x = *operands[0];
  std::string_view type = TextAttr(inst, "fft_type");
  const std::vector<int64_t>& lengths = IntList(inst, "fft_length");
  const std::vector<int64_t>& in_dims = x.shape().dimensions;
  size_t rank = in_dims.size(), l = lengths.size();
  if (l == 0 || l > 3 || l > rank) return Error(inst, "fft_length must name 1 to 3 innermost dimensions");
  Literal result(inst.shape());
  if (result.element_count() == 0) return result;
  int32_t kind = type == "FFT"     ? XLAC_RT_FFT
                 : type == "IFFT"  ? XLAC_RT_IFFT
                 : type == "RFFT"  ? XLAC_RT_RFFT
                 : type == "IRFFT" ? XLAC_RT_IRFFT
                                   : -1;
  if (kind < 0) return Error(inst, "unknown fft_type '{}'", std::string(type));
  PrimitiveType complex = kind == XLAC_RT_RFFT ? result.shape().element_type : x.shape().element_type;
  auto* fn = complex == PrimitiveType::kC64    ? &xlac_rt_fft_c64
             : complex == PrimitiveType::kC128 ? &xlac_rt_fft_c128
                                               : nullptr;
  if (fn == nullptr) return Error(inst, "fft needs c64 or c128 values, got {}", PrimitiveTypeName(complex));
  if (fn(x.raw_data(), result.mutable_raw_data(), kind, static_cast<int32_t>(rank), in_dims.data(),
         result.shape().dimensions.data(), static_cast<int32_t>(l), lengths.data()) != 0) {
    return Error(inst, "invalid fft arguments");
  }
  return result;
}

}  // namespace xlac::interp
