// Buffer allocation for compiled code and AOT hosts.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/cpu/xlac_runtime.h"

extern "C" {

void* xlac_rt_aligned_alloc(size_t bytes, size_t alignment) {
  if (alignment < sizeof(void*)) alignment = sizeof(void*);
  if ((alignment & (alignment - 1)) != 0) return nullptr;
  // Large buffers (activations, gradients, weights of emulated devices) start on a 2 MiB boundary and ask for
  // transparent huge pages: with THP in "madvise" mode (Debian's default) they would otherwise sit on 4 KiB pages,
  // and 8 devices' buffers on 2 threads then spend a third of a data-parallel train step in TLB misses in some runs
  // and not in others (docs/performance.md, "The emulated pod").
  constexpr size_t kHugePage = size_t{2} << 20;
  const bool huge = bytes >= 2 * kHugePage;
  if (huge && alignment < kHugePage) alignment = kHugePage;
  void* ptr = nullptr;
  // posix_memalign has no size constraint (unlike aligned_alloc) and its result is released by free().
  if (posix_memalign(&ptr, alignment, bytes == 0 ? 1 : bytes) != 0) return nullptr;
#if defined(MADV_HUGEPAGE)
  // Advice only: without THP support the buffer simply keeps small pages.
  if (huge) (void)madvise(ptr, bytes, MADV_HUGEPAGE);
#endif
  return ptr;
}

void xlac_rt_free(void* ptr) { std::free(ptr); }

void* xlac_rt_thread_scratch(int64_t bytes) {
  // One buffer per OS thread, freed when the thread exits. Devices multiplexed as fibers on one thread share it:
  // a fiber switches only inside a collective, never inside the leaf kernels that use the buffer.
  struct Scratch {
    void* ptr = nullptr;
    size_t bytes = 0;
    ~Scratch() { std::free(ptr); }
  };
  thread_local Scratch scratch;
  const size_t wanted = bytes <= 0 ? 1 : static_cast<size_t>(bytes);
  if (wanted > scratch.bytes) {
    std::free(scratch.ptr);
    scratch.ptr = nullptr;
    scratch.bytes = 0;
    // No room to report an error from inside a kernel: running out of memory for a few MiB is fatal.
    if (posix_memalign(&scratch.ptr, 64, wanted) != 0) {
      std::fprintf(stderr, "xlac runtime: cannot allocate %zu bytes of kernel scratch\n", wanted);
      std::abort();
    }
    scratch.bytes = wanted;
  }
  return scratch.ptr;
}

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
