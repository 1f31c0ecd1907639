// Buffer allocation for compiled code and AOT hosts.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

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

int64_t xlac_rt_available_memory(void) {
  // MemAvailable counts what can be had without swapping (free plus reclaimable caches); MemFree would understate it.
  if (FILE* f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    long long kib = -1;
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::strncmp(line, "MemAvailable:", 13) == 0 && std::sscanf(line + 13, "%lld", &kib) == 1) break;
    }
    std::fclose(f);
    if (kib >= 0) return static_cast<int64_t>(kib) * 1024;
  }
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<int64_t>(pages) * page : -1;
}

}  // extern "C"
