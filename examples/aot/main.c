/* Runs the ahead-of-time compiled examples/aot/mlp.hlo from C (and, built as custom_call_aot_example, the same
 * program with a C++ GELU kernel compiled into the object: examples/custom_call/mlp_gelu.hlo).
 *
 * mlp.o and mlp.h come from `xlac --emit=obj` and `xlac --emit=header` (examples/CMakeLists.txt). The header
 * describes the entry's buffer table: how many buffers, their sizes, which one holds each parameter and where the
 * result lives. This program allocates the table, fills the parameters with fixed values, runs the entry on one
 * device through the xlac runtime and prints the result, one value per line ("result[i] = v" with %.9g, enough
 * digits to round-trip a float).
 *
 * Usage: aot_example [DIR]   With DIR, also writes the inputs as DIR/x.npy, DIR/w.npy and DIR/b.npy so that
 *                            `xla-run --backend=interpreter` can run the module on exactly the same values.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime first: the generated header then skips its own XlacRtDevice typedef (C99 forbids repeating it). */
#include "runtime/cpu/xlac_runtime.h"
#include "mlp.h"

enum { kRows = 8, kInner = 16, kCols = 32 };

/* Values are small multiples of powers of two, so every product and partial sum is exact in f32 and the result
 * does not depend on the summation order. */
static float XValue(int i, int k) { return (float)((i * kInner + k) % 7 - 3) * 0.25f; }
static float WValue(int k, int j) { return (float)((k * kCols + j) % 5 - 2) * 0.125f; }
static float BValue(int j) { return (float)(j % 3 - 1) * 0.5f; }

/* A little-endian float32 .npy (version 1.0) of `count` values with the given numpy shape text, e.g. "(8, 16)". */
static int WriteNpy(const char* dir, const char* name, const char* shape, const float* values, size_t count) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "wb");
  if (f == NULL) {
    fprintf(stderr, "aot_example: cannot write %s\n", path);
    return 0;
  }
  char header[128];
  int n = snprintf(header, sizeof header, "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }", shape);
  /* magic (6) + version (2) + header length (2) + header, padded with spaces to 128 bytes and ending in '\n'. */
  memset(header + n, ' ', sizeof header - (size_t)n);
  header[127 - 10] = '\n';
  const unsigned char prefix[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 118, 0};
  int ok = fwrite(prefix, 1, sizeof prefix, f) == sizeof prefix && fwrite(header, 1, 118, f) == 118 &&
           fwrite(values, sizeof(float), count, f) == count;
  ok &= fclose(f) == 0;
  if (!ok) fprintf(stderr, "aot_example: cannot write %s\n", path);
  return ok;
}

int main(int argc, char** argv) {
  static float x[kRows * kInner], w[kInner * kCols], b[kCols];
  for (int i = 0; i < kRows; ++i)
    for (int k = 0; k < kInner; ++k) x[i * kInner + k] = XValue(i, k);
  for (int k = 0; k < kInner; ++k)
    for (int j = 0; j < kCols; ++j) w[k * kCols + j] = WValue(k, j);
  for (int j = 0; j < kCols; ++j) b[j] = BValue(j);
  if (argc > 1 && !(WriteNpy(argv[1], "x.npy", "(8, 16)", x, kRows * kInner) &&
                    WriteNpy(argv[1], "w.npy", "(16, 32)", w, kInner * kCols) &&
                    WriteNpy(argv[1], "b.npy", "(32,)", b, kCols))) {
    return 1;
  }

  /* The buffer table: every buffer allocated with its size, the parameters copied into theirs. */
  void* buffers[xlac_entry_NUM_BUFFERS];
  for (int i = 0; i < xlac_entry_NUM_BUFFERS; ++i) {
    buffers[i] = xlac_rt_aligned_alloc((size_t)xlac_entry_buffer_sizes[i], 64);
    if (buffers[i] == NULL) {
      fprintf(stderr, "aot_example: out of memory\n");
      return 1;
    }
  }
  const float* params[xlac_entry_NUM_PARAMETERS] = {x, w, b};
  const size_t param_bytes[xlac_entry_NUM_PARAMETERS] = {sizeof x, sizeof w, sizeof b};
  for (int p = 0; p < xlac_entry_NUM_PARAMETERS; ++p) {
    int64_t buffer = xlac_entry_parameter_buffers[p];
    if (buffer < 0 || xlac_entry_buffer_sizes[buffer] != (int64_t)param_bytes[p]) {
      fprintf(stderr, "aot_example: parameter %d: unexpected buffer table (rebuild mlp.h)\n", p);
      return 1;
    }
    memcpy(buffers[buffer], params[p], param_bytes[p]);
  }

  XlacRtStatus status;
  XlacRtGroup* group = xlac_rt_group_create(1, 1, 0, &status);
  if (group == NULL) {
    fprintf(stderr, "aot_example: %s\n", status.message);
    return 1;
  }
  void* const* tables[1] = {buffers};
  int code = xlac_rt_group_run(group, xlac_entry, tables, &status);
  xlac_rt_group_destroy(group);
  if (code != XLAC_RT_OK) {
    fprintf(stderr, "aot_example: the entry failed: %s\n", status.message);
    return 1;
  }

  /* The root is f32[8], a single result leaf. */
  const int64_t* slice = xlac_entry_result_slices[0];
  if (slice[0] < 0 || slice[2] != (int64_t)(kRows * sizeof(float))) {
    fprintf(stderr, "aot_example: unexpected result slice\n");
    return 1;
  }
  const float* result = (const float*)((const char*)buffers[slice[0]] + slice[1]);
  for (int i = 0; i < kRows; ++i) printf("result[%d] = %.9g\n", i, result[i]);
  for (int i = 0; i < xlac_entry_NUM_BUFFERS; ++i) xlac_rt_free(buffers[i]);
  return 0;
}
