// The generator itself runs without prebuilt GEMMs: it is what makes them (codegen/prebuilt_gemms.h).
#include "codegen/prebuilt_gemms.h"

extern "C" const XlacPrebuiltGemmSet* xlac_prebuilt_gemm_sets(int64_t* count) {
  *count = 0;
  return nullptr;
}
