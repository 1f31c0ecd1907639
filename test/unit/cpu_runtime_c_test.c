/* The runtime's header is valid C99 and its static library links into a C program: two devices all-reduce a float
 * vector through a C combine function, and an unhandled custom call fails with its message. */
#include <stdio.h>
#include <string.h>

#include "runtime/cpu/xlac_runtime.h"

static void AddF32(void* acc, const void* in, int64_t count, void* ctx) {
  float* a = (float*)acc;
  const float* b = (const float*)in;
  int64_t i;
  (void)ctx;
  for (i = 0; i < count; ++i) a[i] += b[i];
}

static const int64_t kGroups[] = {0, 1};

static void Entry(void* const* buffers, XlacRtDevice* dev) {
  float* data = (float*)buffers[0];
  float* out = (float*)buffers[1];
  data[0] = (float)(xlac_rt_device_id(dev) + 1);
  data[1] = 10.0f * (float)xlac_rt_replica_id(dev);
  xlac_rt_all_reduce(dev, 1, "all-reduce.1", kGroups, 1, 2, data, out, 2, sizeof(float), AddF32, NULL);
}

static void CustomCallEntry(void* const* buffers, XlacRtDevice* dev) {
  (void)buffers;
  if (xlac_rt_custom_call(dev, "my_target", "", NULL, NULL) == XLAC_RT_OK) xlac_rt_set_error(dev, "expected failure");
}

int main(void) {
  XlacRtStatus status;
  float data[2][2], out[2][2];
  void* table0[2];
  void* table1[2];
  void* const* per_device[2];
  XlacRtGroup* group = xlac_rt_group_create(2, 1, 1000, &status);
  if (group == NULL) {
    fprintf(stderr, "create failed: %s\n", status.message);
    return 1;
  }
  table0[0] = data[0];
  table0[1] = out[0];
  table1[0] = data[1];
  table1[1] = out[1];
  per_device[0] = table0;
  per_device[1] = table1;
  if (xlac_rt_group_run(group, Entry, per_device, &status) != XLAC_RT_OK) {
    fprintf(stderr, "run failed: %s\n", status.message);
    return 1;
  }
  if (out[0][0] != 3.0f || out[0][1] != 10.0f || out[1][0] != 3.0f || out[1][1] != 10.0f) {
    fprintf(stderr, "wrong all-reduce result %g %g %g %g\n", out[0][0], out[0][1], out[1][0], out[1][1]);
    return 1;
  }
  if (xlac_rt_group_run(group, CustomCallEntry, per_device, &status) != XLAC_RT_ERROR_UNIMPLEMENTED ||
      strstr(status.message, "unsupported custom call target 'my_target'") == NULL) {
    fprintf(stderr, "unexpected custom-call outcome %d: %s\n", status.code, status.message);
    return 1;
  }
  xlac_rt_group_destroy(group);
  printf("ok\n");
  return 0;
}
