// Elementwise kernels for the lit tests of --custom-call-src.
#include <xlac/custom_call.h>

#include <cmath>
#include <cstdint>

XLAC_ELEMENTWISE("test.swish")
float Swish(float x) { return x / (1.0f + std::exp(-x)); }

// Several operands of different types, and a bf16 result.
XLAC_ELEMENTWISE("test.scale_by_int")
__bf16 ScaleByInt(float x, int32_t k) { return static_cast<__bf16>(x * static_cast<float>(k)); }

XLAC_ELEMENTWISE("test.is_big")
bool IsBig(double x) { return std::fabs(x) > 1.0; }
