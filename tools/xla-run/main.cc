// xla-run: see docs/cli.md. All behaviour is in tools/lib (xlac_tool_driver).
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "tools/lib/run_driver.h"

int main(int argc, char** argv) {
  // Transparent huge pages for the heap: glibc's malloc madvises the memory it maps (glibc.malloc.hugetlb=1). The
  // first touch of each 4 KiB page of a run's values was the largest cost of the MobileNetV2 step on the
  // interpreter (2.4 M page faults, 40 of its 112 s in a VM); with 2 MiB pages it makes 10 K faults (70 -> 38 s
  // with the interpreter's own changes of the same day). glibc reads the tunable at process start, so the process
  // runs itself again with it set, once: not when the environment sets it already (or XLAC_NO_HUGE_PAGES is set),
  // and when that fails it carries on as it is.
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if ((tunables == nullptr || std::strstr(tunables, "glibc.malloc.hugetlb") == nullptr) &&
      std::getenv("XLAC_NO_HUGE_PAGES") == nullptr) {
    std::string value = "glibc.malloc.hugetlb=1";
    if (tunables != nullptr && *tunables != '\0') value = std::string(tunables) + ":" + value;
    if (setenv("GLIBC_TUNABLES", value.c_str(), 1) == 0) execv("/proc/self/exe", argv);
  }
  // The interpreter allocates a fresh literal per instruction. glibc serves large blocks with mmap and unmaps them on
  // free, so every big value of a model costs page faults and the kernel's zeroing again (MobileNetV2's training
  // step spent 40 % of the interpreter's time there); keeping freed memory in the heap lets the next value reuse
  // pages that are already mapped. A process-wide allocator setting, so it belongs to the tool, not a library.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  return xlac::RunMain(argc, argv);
}
