/* Observability of the xlac CPU runtime: per-device counters that every group keeps (collective calls, bytes sent
 * and received per collective kind, time blocked at collectives) and, when tracing is switched on for a group, a
 * timeline of kernel and collective events per device (docs/observability.md).
 *
 * The counters cost two clock reads per collective, which already takes a mutex and waits for its peers. Kernel
 * events come from compiled code that was built with trace hooks (CodegenOptions::trace_kernels); code compiled
 * without them calls nothing. Valid C99 and C++. */
#ifndef XLAC_RUNTIME_TRACE_H_
#define XLAC_RUNTIME_TRACE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* struct XlacRtGroup / XlacRtDevice are xlac_runtime.h's (spelled out so this header stands alone). */

/* Collective kinds, the index of XlacRtDeviceStats::collectives. */
enum XlacRtCollectiveKind {
  XLAC_RT_ALL_REDUCE = 0,
  XLAC_RT_ALL_GATHER = 1,
  XLAC_RT_REDUCE_SCATTER = 2,
  XLAC_RT_ALL_TO_ALL = 3,
  XLAC_RT_COLLECTIVE_PERMUTE = 4,
  XLAC_RT_COLLECTIVE_BROADCAST = 5,
  XLAC_RT_BARRIER = 6,
  XLAC_RT_NUM_COLLECTIVE_KINDS = 7
};
/* "all-reduce", "all-gather", ... (HLO spelling); "collective" for an unknown kind. */
const char* xlac_rt_collective_kind_name(int kind);

typedef struct XlacRtCollectiveStats {
  int64_t count;          /* calls with more than one participant */
  int64_t bytes_sent;     /* this device's source bytes (its operand, as the SPMD report counts them) */
  int64_t bytes_received; /* bytes of the result this device receives */
  int64_t wait_ns;        /* time blocked waiting for the other participants */
} XlacRtCollectiveStats;

typedef struct XlacRtDeviceStats {
  XlacRtCollectiveStats collectives[XLAC_RT_NUM_COLLECTIVE_KINDS];
  int64_t kernels;   /* top-level kernel executions seen by the trace hooks (0 without them) */
  int64_t kernel_ns; /* their total time */
} XlacRtDeviceStats;

/* The counters of `device` for the group's last run (reset by every xlac_rt_group_run). 0, or -1 for a bad device. */
int xlac_rt_group_device_stats(struct XlacRtGroup* group, int64_t device, XlacRtDeviceStats* stats);

/* Tracing: events are recorded (and kept until the next run) only while enabled; off by default. */
void xlac_rt_group_set_tracing(struct XlacRtGroup* group, int enabled);

typedef struct XlacRtTraceEvent {
  int64_t begin_ns; /* xlac_rt_now_ns() clock */
  int64_t end_ns;
  int64_t kernel_id;   /* the id compiled code passed to xlac_rt_trace_begin, or -1 for a collective */
  int collective_kind; /* XlacRtCollectiveKind, or -1 for a kernel */
  const char* name;    /* collectives: the name compiled code passed (valid while that code is loaded); else NULL */
  int64_t bytes_sent;
  int64_t bytes_received;
  int64_t wait_ns;
} XlacRtTraceEvent;

/* The events `device` recorded in the group's last run, in order of their end; *events stays valid until the next
 * run or the group's destruction. Returns the count (0 when tracing was off). */
int64_t xlac_rt_group_trace_events(struct XlacRtGroup* group, int64_t device, const XlacRtTraceEvent** events);

/* Called by compiled code around each top-level kernel when it was compiled with trace hooks. Properly nested. */
void xlac_rt_trace_begin(struct XlacRtDevice* dev, int64_t kernel_id);
void xlac_rt_trace_end(struct XlacRtDevice* dev, int64_t kernel_id);

/* Monotonic nanoseconds (steady clock), the time base of the events. */
int64_t xlac_rt_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif /* XLAC_RUNTIME_TRACE_H_ */
