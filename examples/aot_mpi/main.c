/* Runs the ahead-of-time compiled examples/aot_mpi/dp_step.hlo (8 partitions) over MPI, from C.
 *
 * dp_step.o and dp_step.h come from `xlac --emit=obj` and `xlac --emit=header`. Under `mpirun -np P` each process
 * runs 8 / P of the partitions: xlac_rt_group_set_transport installs the MPI transport of xlac_runtime_mpi on the
 * device group, and the group's all-reduce spans the processes. Every process builds the same global inputs and
 * gives each of its partitions its shard of x (8 rows); process 0 gathers the y shards and prints y and the weight
 * gradient, one value per line with %.9g (enough to round-trip a float). The printout is the same, bit for bit, for
 * any P (ctest aot_mpi_example compares P = 1, 2 and 4). Without mpirun it runs as a single process.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The runtime first: the generated header then skips its own XlacRtDevice typedef (C99 forbids repeating it). */
/* clang-format off */
#include "runtime/cpu/xlac_runtime.h"
#include "runtime/mpi/xlac_runtime_mpi.h"
#include "dp_step.h"
/* clang-format on */

enum { kBatch = 64, kIn = 32, kHidden = 64, kOut = 16, kRowsPerPartition = kBatch / xlac_entry_NUM_PARTITIONS };

/* Values of very different magnitudes (an LCG's mantissa times 2^-6..2^6), so that a different summation order in
 * the all-reduce would change the printed bits. */
static float Value(uint32_t* state) {
  *state = *state * 1664525u + 1013904223u;
  float mantissa = (float)(*state >> 8) / (float)(1u << 24) - 0.5f;
  int exponent = (int)((*state >> 4) % 13) - 6;
  float scale = 1.0f;
  for (int i = 0; i < exponent; ++i) scale *= 2.0f;
  for (int i = 0; i > exponent; --i) scale *= 0.5f;
  return mantissa * scale;
}

static void Fail(const char* what, const char* message) {
  fprintf(stderr, "aot_mpi_example: process %lld: %s: %s\n", (long long)xlac_rt_mpi_process_index(), what, message);
  if (xlac_rt_mpi_process_count() > 1) xlac_rt_mpi_abort(1); /* the others would wait for this process */
  exit(1);
}

int main(void) {
  XlacRtStatus status;
  if (xlac_rt_mpi_init(&status) != XLAC_RT_OK) Fail("MPI", status.message);
  const int64_t me = xlac_rt_mpi_process_index(), processes = xlac_rt_mpi_process_count();

  static float x[kBatch * kIn], w1[kIn * kHidden], w2[kHidden * kOut];
  uint32_t state = 12345u;
  for (int i = 0; i < kBatch * kIn; ++i) x[i] = Value(&state);
  for (int i = 0; i < kIn * kHidden; ++i) w1[i] = Value(&state);
  for (int i = 0; i < kHidden * kOut; ++i) w2[i] = Value(&state);

  XlacRtGroup* group = xlac_rt_group_create(1, xlac_entry_NUM_PARTITIONS, 0, &status);
  if (group == NULL) Fail("devices", status.message);
  if (xlac_rt_group_set_transport(group, processes > 1 ? xlac_rt_mpi_transport() : NULL, &status) != XLAC_RT_OK) {
    Fail("devices", status.message);
  }
  int64_t begin = 0, end = 0;
  xlac_rt_group_local_devices(group, &begin, &end);

  /* This process's partitions' buffer tables; other processes' entries stay NULL (never read). */
  static void* buffers[xlac_entry_NUM_PARTITIONS][xlac_entry_NUM_BUFFERS];
  void* const* tables[xlac_entry_NUM_PARTITIONS] = {NULL};
  const size_t shard_bytes = sizeof(float) * kRowsPerPartition * kIn;
  const float* params[xlac_entry_NUM_PARAMETERS] = {x, w1, w2};
  const size_t param_bytes[xlac_entry_NUM_PARAMETERS] = {shard_bytes, sizeof w1, sizeof w2};
  for (int64_t d = begin; d < end; ++d) {
    for (int i = 0; i < xlac_entry_NUM_BUFFERS; ++i) {
      buffers[d][i] = xlac_rt_aligned_alloc((size_t)xlac_entry_buffer_sizes[i], 64);
      if (buffers[d][i] == NULL) Fail("buffers", "out of memory");
    }
    for (int p = 0; p < xlac_entry_NUM_PARAMETERS; ++p) {
      int64_t buffer = xlac_entry_parameter_buffers[p];
      if (buffer < 0 || xlac_entry_buffer_sizes[buffer] != (int64_t)param_bytes[p]) {
        Fail("buffers", "unexpected buffer table (rebuild dp_step.h)");
      }
      /* Parameter 0 is sharded by rows: partition d takes rows [d * 8, d * 8 + 8). */
      const float* src = p == 0 ? x + d * kRowsPerPartition * kIn : params[p];
      memcpy(buffers[d][buffer], src, param_bytes[p]);
    }
    tables[d] = buffers[d];
  }

  if (xlac_rt_group_run(group, xlac_entry, tables, &status) != XLAC_RT_OK) Fail("run", status.message);
  xlac_rt_group_destroy(group);

  /* Results: y's shard (f32[8,16]) and the replicated gradient (f32[64,16]). */
  const int64_t* y_slice = xlac_entry_result_slices[0];
  const int64_t* g_slice = xlac_entry_result_slices[1];
  const size_t y_bytes = sizeof(float) * kRowsPerPartition * kOut;
  if (y_slice[2] != (int64_t)y_bytes || g_slice[2] != (int64_t)(sizeof(float) * kHidden * kOut)) {
    Fail("results", "unexpected result slices (rebuild dp_step.h)");
  }
  static float local_y[kBatch * kOut], y[kBatch * kOut];
  for (int64_t d = begin; d < end; ++d) {
    memcpy((char*)local_y + (d - begin) * y_bytes, (const char*)buffers[d][y_slice[0]] + y_slice[1], y_bytes);
  }
  if (xlac_rt_mpi_gather(local_y, (int64_t)((end - begin) * y_bytes), y, &status) != XLAC_RT_OK) {
    Fail("gather", status.message);
  }
  if (me == 0) {
    const float* gw2 = (const float*)((const char*)buffers[0][g_slice[0]] + g_slice[1]);
    for (int i = 0; i < kBatch * kOut; ++i) printf("y[%d] = %.9g\n", i, y[i]);
    for (int i = 0; i < kHidden * kOut; ++i) printf("gw2[%d] = %.9g\n", i, gw2[i]);
  }
  for (int64_t d = begin; d < end; ++d) {
    for (int i = 0; i < xlac_entry_NUM_BUFFERS; ++i) xlac_rt_free(buffers[d][i]);
  }
  fflush(stdout);
  xlac_rt_mpi_finalize();
  return 0;
}
