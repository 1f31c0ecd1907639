// xla-run: see docs/cli.md. All behaviour is in tools/lib (xlac_tool_driver).
#include <malloc.h>

#include "tools/lib/run_driver.h"

int main(int argc, char** argv) {
  // The interpreter allocates a fresh literal per instruction. glibc serves large blocks with mmap and unmaps them on
  // free, so every big value of a model costs page faults and the kernel's zeroing again (MobileNetV2's training
  // step spent 40 % of the interpreter's time there); keeping freed memory in the heap lets the next value reuse
  // pages that are already mapped. A process-wide allocator setting, so it belongs to the tool, not a library.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, -1);
  return xlac::RunMain(argc, argv);
}
