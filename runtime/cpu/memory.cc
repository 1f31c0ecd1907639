// Buffer allocation for compiled code and AOT hosts.
#include <cstdlib>

#include "runtime/cpu/xlac_runtime.h"

extern "C" {

void* xlac_rt_aligned_alloc(size_t bytes, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  void* ptr = nullptr;
  // posix_memalign has no size constraint (unlike aligned_alloc) and its result is released by free().
  if (posix_memalign(&ptr, alignment, bytes == 0 ? 1 : bytes) != 0) return nullptr;
  return ptr;
}

void xlac_rt_free(void* ptr) { std::free(ptr); }

}  // extern "C"
