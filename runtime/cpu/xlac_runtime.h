/* The xlac CPU runtime: the C ABI that compiled code (JIT and AOT object files) calls into, and the host API that
 * runs compiled entry functions on a group of emulated devices.
 *
 * Valid C99 and C++. The library (CMake target xlac_runtime, a static library) needs only the C++ standard library
 * and pthreads; a C program links it with the C++ driver or adds -lstdc++ -lpthread.
 *
 * Devices. A group emulates num_replicas x num_partitions devices, numbered
 *   device = replica * num_partitions + partition,
 * each running the same compiled entry on its own thread (or multiplexed on fewer: xlac_rt_group_set_os_threads).
 * Every entry function has the signature XlacRtEntryFn and receives its device's context as the last argument; the
 * context is valid only during that call and only on the thread running that device.
 *
 * Errors. Compiled code reports a failure with xlac_rt_set_error (the first error of a device wins) and, after any
 * runtime call that can fail, checks xlac_rt_failed and returns early. Runtime calls made on a failed device do
 * nothing. The first error of a run (in time; errors that are only consequences of another device's failure never
 * count) is what xlac_rt_group_run reports.
 *
 * Collectives. Codegen resolves participant groups at compile time (ir/collective_groups.h) into global device ids,
 * so the runtime never knows about replica/partition group modes: `groups` is a flat array of num_groups x
 * group_size device ids, each group in rank order. A device's rank is its position in the group that contains it.
 * Every collective has an op_id, unique per collective instruction of the program, and a name for messages (e.g.
 * the HLO instruction name). The k-th execution of op_id on one device meets the k-th execution on its peers, so
 * collectives inside loops work. A device that waits for peers longer than the group's collective timeout fails
 * with a message naming the peers that never arrived and where they are; a device that waits for a peer that
 * finished its entry without reaching the collective fails at once; when any device fails, every device waiting in
 * (or later entering) a collective is released with XLAC_RT_ERROR_CANCELLED. No call ever blocks forever.
 * Data is exchanged synchronously: a collective returns only after every participant has read what it needs, so src
 * may be reused right after the call, and dst may overlap the device's own src.
 */
#ifndef XLAC_RUNTIME_CPU_XLAC_RUNTIME_H_
#define XLAC_RUNTIME_CPU_XLAC_RUNTIME_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- status ---- */

typedef enum XlacRtStatusCode {
  XLAC_RT_OK = 0,
  XLAC_RT_ERROR_INVALID_ARGUMENT = 1,   /* bad host-API or collective arguments */
  XLAC_RT_ERROR_EXECUTION = 2,          /* compiled code reported a failure (xlac_rt_set_error) */
  XLAC_RT_ERROR_DEADLINE_EXCEEDED = 3,  /* a collective waited longer than the timeout */
  XLAC_RT_ERROR_CANCELLED = 4,          /* released from a collective because another device failed */
  XLAC_RT_ERROR_UNIMPLEMENTED = 5,      /* e.g. a custom-call target nobody handles */
  XLAC_RT_ERROR_RESOURCE_EXHAUSTED = 6, /* allocation or thread creation failed */
  XLAC_RT_ERROR_COLLECTIVE_MISMATCH = 7 /* peers disagree about a collective, or one finished without it */
} XlacRtStatusCode;

#define XLAC_RT_MESSAGE_CAPACITY 1024

/* Result of a host-API call. `message` is NUL-terminated (long messages are truncated). */
typedef struct XlacRtStatus {
  int code;       /* an XlacRtStatusCode */
  int64_t device; /* the failing device, or -1 when the failure is not a device's */
  char message[XLAC_RT_MESSAGE_CAPACITY];
} XlacRtStatus;

/* ---- devices and groups ---- */

typedef struct XlacRtDevice XlacRtDevice;
typedef struct XlacRtGroup XlacRtGroup;
typedef struct XlacRtThreadPool XlacRtThreadPool;

/* A compiled entry: buffers are the entry's buffer table (parameters, results, temporaries: codegen's choice). */
typedef void (*XlacRtEntryFn)(void* const* buffers, XlacRtDevice* dev);

int64_t xlac_rt_device_id(XlacRtDevice* dev);
int64_t xlac_rt_replica_id(XlacRtDevice* dev);
int64_t xlac_rt_partition_id(XlacRtDevice* dev);
int64_t xlac_rt_num_replicas(XlacRtDevice* dev);
int64_t xlac_rt_num_partitions(XlacRtDevice* dev);

/* Records `message` as this device's error (code XLAC_RT_ERROR_EXECUTION) unless it already failed. */
void xlac_rt_set_error(XlacRtDevice* dev, const char* message);
/* As xlac_rt_set_error with an explicit XlacRtStatusCode (not XLAC_RT_OK). */
void xlac_rt_set_error_code(XlacRtDevice* dev, int code, const char* message);
/* Nonzero once this device has failed. Cheap: an atomic load. */
int xlac_rt_failed(XlacRtDevice* dev);

/* Returns NULL (and fills *status when given) if the arguments are invalid: both counts must be >= 1; a timeout
 * <= 0 means the default of 30000 ms. */
XlacRtGroup* xlac_rt_group_create(int64_t num_replicas, int64_t num_partitions, int64_t collective_timeout_ms,
                                  XlacRtStatus* status);
void xlac_rt_group_destroy(XlacRtGroup* group);
int64_t xlac_rt_group_num_devices(XlacRtGroup* group);

/* Runs entry(buffers_per_device[d], device d) for every device concurrently: one thread per device, device 0 on the
 * caller's thread (so a single device runs entirely on it), and joins them. Returns the XlacRtStatusCode of the
 * run's first error (and fills *status when given: code, failing device, "device D: message"). A group runs one
 * entry at a time; collective generations start from zero in every run. */
int xlac_rt_group_run(XlacRtGroup* group, XlacRtEntryFn entry, void* const* const* buffers_per_device,
                      XlacRtStatus* status);
/* Runs the group's devices on at most `threads` OS threads, the caller's included, when it has more (local) devices
 * than that: each device becomes a fiber (its own stack) of one of the threads, device d always on the same one, and
 * a device that waits in a collective or recv yields its thread to another device of it instead of blocking. 256
 * emulated cores on 2 CPUs are then 2 busy threads, and a collective costs no futex wake-up per device. A waiting
 * device times out only once no device of the group has made progress (arrived at a collective, finished) for the
 * timeout, since its peers may be waiting for their turn on a thread. 0 (the default): one thread per device. Not
 * with a transport (xlac_rt_group_set_transport): a device waiting for other processes blocks its thread. */
void xlac_rt_group_set_os_threads(XlacRtGroup* group, int64_t threads);
/* The outcome of `device` in the last run (including errors that were consequences of another device's). */
int xlac_rt_group_device_status(XlacRtGroup* group, int64_t device, XlacRtStatus* status);

/* ---- collectives (called from a device thread; return nonzero on failure, which is also recorded on dev) ---- */

/* Combines `count` elements: acc[i] = reducer(acc[i], in[i]). Generated by codegen; must be elementwise (the runtime
 * splits ranges across participants) and may be called concurrently from several threads. */
typedef void (*XlacRtCombineFn)(void* acc, const void* in, int64_t count, void* ctx);

/* dst = p0 (+) p1 (+) ... (+) p(n-1) elementwise, participants in rank order, folded left to right exactly like the
 * reference interpreter, so every participant gets bit-identical results. src and dst hold count elements of
 * element_bytes each. */
int xlac_rt_all_reduce(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                       int64_t group_size, const void* src, void* dst, int64_t count, int64_t element_bytes,
                       XlacRtCombineFn combine, void* combine_ctx);

/* dst (group_size * bytes) = the rank-ordered concatenation of every participant's src (bytes). Gathering along a
 * non-leading dimension is codegen's job (rearrange before or after). */
int xlac_rt_all_gather(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                       int64_t group_size, const void* src, void* dst, int64_t bytes);

/* src holds group_size * count elements; dst (count elements) = chunk `rank` of the all-reduce of the srcs. */
int xlac_rt_reduce_scatter(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups,
                           int64_t num_groups, int64_t group_size, const void* src, void* dst, int64_t count,
                           int64_t element_bytes, XlacRtCombineFn combine, void* combine_ctx);

/* src and dst hold group_size chunks of chunk_bytes; chunk j of rank i's src becomes chunk i of rank j's dst. */
int xlac_rt_all_to_all(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                       int64_t group_size, const void* src, void* dst, int64_t chunk_bytes);

/* pairs: num_pairs (source, target) global device ids, flat. dst = src of the source paired with this device (the
 * last such pair wins), zeros if none. Every device named in a pair takes part in the rendezvous. */
int xlac_rt_collective_permute(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* pairs,
                               int64_t num_pairs, const void* src, void* dst, int64_t bytes);

/* dst = src of the group's rank 0; devices in no group get zeros. */
int xlac_rt_collective_broadcast(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups,
                                 int64_t num_groups, int64_t group_size, const void* src, void* dst, int64_t bytes);

/* Waits until every participant of this device's group has arrived. */
int xlac_rt_barrier(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                    int64_t group_size);

/* ---- several processes (docs/multihost.md) ---- */

/* One step of a collective spanning processes: every process that owns a participant sends one message to every
 * other such process and receives one from each (possibly empty: arrival is what a barrier needs). */
typedef struct XlacRtExchange {
  int64_t op_id;
  const char* name;
  int64_t generation; /* the k-th execution of op_id by this participant group in the run, from 0 */
  int64_t step;       /* collectives of several steps (all-reduce) number them from 0 */
  int kind;           /* which collective, for mismatch messages only: its name is kind_name */
  const char* kind_name;
  const int64_t* devices; /* the participants' global device ids, rank order */
  int64_t num_devices;
  int64_t devices_per_process; /* device d lives in process d / devices_per_process */
  /* Indexed by process (process_count entries): the message for it, and where the one it sends goes, which must be
   * exactly recv_bytes[q] long (any other size is a mismatch). Entries of this process and of processes without
   * participants are unused. */
  const void* const* send;
  const int64_t* send_bytes;
  void* const* recv;
  const int64_t* recv_bytes;
  int64_t timeout_ms; /* the group's collective timeout */
} XlacRtExchange;

/* How a group reaches the devices of other processes (runtime/mpi/ implements it over MPI). The group's devices are
 * split evenly over process_count processes, contiguous by device id; this process runs only its own. A collective
 * among local devices stays in memory as in one process. One that spans processes meets its local participants in
 * memory, then the lowest-ranked local one calls exchange for all of them (once per step) with just the data each
 * other process needs; every element of a result is computed from the same contributions in the same order as in
 * one process, so results are bit-identical.
 * exchange may be called concurrently from several device threads (for different participant groups). It returns
 * 0, or an XlacRtStatusCode with a NUL-terminated message (e.g. naming a process that never arrived) written to
 * message (message_capacity bytes). */
typedef struct XlacRtTransport {
  int64_t process_index;
  int64_t process_count;
  void* user;
  int (*exchange)(void* user, const XlacRtExchange* exchange, char* message, size_t message_capacity);
  /* Optional (NULL: peers learn of a failure only at their timeout). Called once per failed run, with the group's
   * lock held, when a device of this process records the run's first error ("device D: message"; not for errors
   * that are consequences of another's, such as an exchange cancelled because another process failed): tells the
   * other processes, whose exchanges with this one should then end at once with XLAC_RT_ERROR_CANCELLED. Must not
   * block or call back into the runtime. */
  void (*fail)(void* user, const char* message);
  /* Optional, both or neither (NULL: send/recv fail with XLAC_RT_ERROR_UNIMPLEMENTED when the devices span
   * processes). Point-to-point send/recv (xlac_runtime_p2p.h) across processes. A channel's k-th message is the
   * k-th send of its (single) sending device, wherever the receiver lives; the runtime cannot know which process
   * that is, so p2p_post delivers message (run, channel, seq) to every other process without waiting (`run`
   * counts the group's runs from 0, identically in every process; `device` is the sender). p2p_take never blocks:
   * when message (run, channel, seq) has arrived from another process it copies it to `data` (a size other than
   * `bytes` is XLAC_RT_ERROR_COLLECTIVE_MISMATCH), sets *found and returns 0; it drops messages of earlier runs, and
   * fails with XLAC_RT_ERROR_CANCELLED once another process failed. The runtime calls p2p_take with channel -1 (and
   * data NULL) at the start of every run just to drop what earlier runs left behind. Both may be called
   * concurrently from several device threads, never with the group's lock held. */
  int (*p2p_post)(void* user, int64_t run, int64_t channel, int64_t seq, int64_t device, const void* data,
                  int64_t bytes, char* message, size_t message_capacity);
  int (*p2p_take)(void* user, int64_t run, int64_t channel, int64_t seq, void* data, int64_t bytes, int* found,
                  char* message, size_t message_capacity);
} XlacRtTransport;

/* Installs `transport` (not copied: it must outlive the group's runs; NULL removes it). The group's device count
 * must be a multiple of process_count. Afterwards xlac_rt_group_run runs only this process's devices
 * (buffers_per_device is still indexed by global device id; other entries are not read). Point-to-point
 * send/recv (xlac_runtime_p2p.h) across processes needs the transport's p2p functions.
 * Returns an XlacRtStatusCode (and fills *status when given). */
int xlac_rt_group_set_transport(XlacRtGroup* group, const XlacRtTransport* transport, XlacRtStatus* status);
/* The devices this process runs: [*begin, *end) (all of them without a transport). */
void xlac_rt_group_local_devices(XlacRtGroup* group, int64_t* begin, int64_t* end);

/* ---- memory ---- */

/* `alignment` must be a power of two (values below sizeof(void*) are raised to it). Zero bytes give a unique
 * pointer. NULL on failure. Free with xlac_rt_free. */
void* xlac_rt_aligned_alloc(size_t bytes, size_t alignment);
void xlac_rt_free(void* ptr);
/* A 64-byte aligned buffer of at least `bytes` bytes that belongs to the calling OS thread: valid until the thread
 * calls this again or exits. Compiled leaf kernels (the GEMM's packing buffers) keep their scratch here rather than
 * on the stack, where every device multiplexed as a fiber would keep its own resident copy. Aborts when out of
 * memory. */
void* xlac_rt_thread_scratch(int64_t bytes);
/* Bytes of memory the process could allocate without swapping (MemAvailable), or -1 when unknown. */
int64_t xlac_rt_available_memory(void);

/* ---- thread pool ---- */

/* `threads` workers in total, the calling thread included (so threads <= 1 creates no thread). Safe to use from
 * several threads at once; parallel_for calls from inside a task are fine too (the caller helps). */
XlacRtThreadPool* xlac_rt_thread_pool_create(int threads);
void xlac_rt_thread_pool_destroy(XlacRtThreadPool* pool);
/* Workers plus the calling thread (1 for NULL). */
int xlac_rt_thread_pool_threads(XlacRtThreadPool* pool);
/* The process-wide pool every executable shares, grown to at least `threads` threads in total (it never shrinks and
 * is never destroyed). One pool per process keeps several executables and devices from oversubscribing the CPUs. */
XlacRtThreadPool* xlac_rt_shared_thread_pool(int threads);
/* The CPUs this process may run on (its affinity mask: `taskset -c 0` gives 1). */
int xlac_rt_available_cpus(void);
/* Calls fn on disjoint contiguous ranges covering [0, n) and returns when all are done. pool may be NULL: runs
 * inline. */
void xlac_rt_parallel_for(XlacRtThreadPool* pool, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                          void* ctx);
/* Gives the group's devices a pool for parallel loops (not owned; NULL removes it). Device threads themselves are
 * never pool threads: collectives need every device to run at once. */
void xlac_rt_group_set_thread_pool(XlacRtGroup* group, XlacRtThreadPool* pool);
/* The threads one device's parallel loops may use, its own included. 0 (the default) shares the pool evenly:
 * max(1, pool threads / devices), so D devices on C cores never run more than C threads. */
void xlac_rt_group_set_threads_per_device(XlacRtGroup* group, int64_t threads);
/* The group's pool, or NULL (xlac_rt_parallel_for then runs inline). */
XlacRtThreadPool* xlac_rt_device_thread_pool(XlacRtDevice* dev);
int64_t xlac_rt_device_threads(XlacRtDevice* dev);
/* What compiled code calls for a parallel loop: xlac_rt_parallel_for on the device's pool with at most
 * xlac_rt_device_threads(dev) threads (inline without a pool). Which ranges run on which thread never changes a
 * result: compiled loops split only over independent outputs. */
void xlac_rt_device_parallel_for(XlacRtDevice* dev, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                                 void* ctx);
/* xlac_rt_device_parallel_for with one contiguous range per thread instead of a few (claimed the same way: a late
 * thread's range runs on another). For loops whose every range has a fixed cost, as GEMMs that pack the panels of
 * their range: more ranges would pack the same panels more times. */
void xlac_rt_device_parallel_split(XlacRtDevice* dev, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                                   void* ctx);

/* ---- data movement ---- */

/* Copies a `rank`-dimensional array of `dims` from one layout into another: for every index i, the element at
 * sum(i[d] * src_strides[d]) elements into src goes to sum(i[d] * dst_strides[d]) elements into dst. element_bytes is
 * 1, 2, 4, 8 or 16 (other values copy nothing and return -1; 0 otherwise); src and dst do not overlap. Tiles of the
 * two dimensions that are most minor in src and in dst move through L1 together; large copies run on the device's
 * threads (dev may be NULL: on the calling thread). Compiled code calls it for copies and transposes that change
 * the layout, so they cost no compile time. */
int32_t xlac_rt_relayout(XlacRtDevice* dev, const void* src, void* dst, int64_t element_bytes, int64_t rank,
                         const int64_t* dims, const int64_t* src_strides, const int64_t* dst_strides);

/* ---- Winograd F(m x m, 3 x 3) transforms (ir/winograd.h defines them; the interpreter computes them bit for bit
 * the same) ---- */

/* The input transform of x, an f32 image [N, C, H, W] at element strides x_strides (of N, C, H and W, in that
 * order), into v [n*n, C, N*T0*T1] (dense, row-major; n = m + 2): v[a*n + b][c][(i*T0 + ty)*T1 + tx] = (B^T d B)[a][b]
 * with d the n x n window of image i, channel c at rows m*ty - pad_low0 + [0, n) and columns m*tx - pad_low1 + [0, n)
 * (zero outside the image). bt is B^T, n*n row-major. sizes = {N, C, H, W, T0, T1, pad_low0, pad_low1}. m is 2, 4
 * or 6 (anything else writes nothing). Large transforms run on the device's threads (dev may be NULL). */
void xlac_rt_winograd_input_f32(XlacRtDevice* dev, const float* x, float* v, int64_t m, const float* bt,
                                const int64_t* sizes, const int64_t* x_strides);
/* The output transform of mm [n*n, K, N*T0*T1] (dense, row-major) into y, an f32 image [N, K, H, W] at element
 * strides y_strides: y[i][k][m*ty + r][m*tx + q] = (A^T M A)[r][q] for the rows and columns below H and W, M the
 * n x n values of tile (ty, tx) of image i, feature k. at is A^T, m*n row-major. sizes = {N, K, H, W, T0, T1}. */
void xlac_rt_winograd_output_f32(XlacRtDevice* dev, const float* mm, float* y, int64_t m, const float* at,
                                 const int64_t* sizes, const int64_t* y_strides);
/* The whole Winograd convolution y = x (*) w of ir/winograd.h's "xlac.winograd_conv": x [N, C, H, W] at element
 * strides x_strides, u = G w G^T as [n*n, C, K] (dense, row-major), y [N, K, OH, OW] at y_strides. Per tile, V is the
 * input transform as above, M[p][k] = the sum over c = 0, 1, ... of u[p][c][k] * V[p][c] (from +0, one fused
 * multiply-add per channel, in order), and y the output transform of M. sizes = {N, C, H, W, K, OH, OW, T0, T1,
 * pad_low0, pad_low1}; bt and at as above. Runs on the device's threads (dev may be NULL); the transformed tiles
 * never leave the cache. */
void xlac_rt_winograd_conv_f32(XlacRtDevice* dev, const float* x, const float* u, float* y, int64_t m, const float* bt,
                               const float* at, const int64_t* sizes, const int64_t* x_strides,
                               const int64_t* y_strides);

/* ---- custom calls ---- */

/* Returns 0 on success. On failure, it should call xlac_rt_set_error(dev, ...) with a message; otherwise the runtime
 * records a generic one. Called concurrently from every device thread. */
typedef int (*XlacRtCustomCallFn)(void* user, const char* target, const char* backend_config, void* const* operands,
                                  void* result, XlacRtDevice* dev);
void xlac_rt_group_set_custom_call_handler(XlacRtGroup* group, XlacRtCustomCallFn fn, void* user);
/* Dispatches to the group's handler; without one, fails with "unsupported custom call target 'T'". Nonzero on
 * failure. */
int xlac_rt_custom_call(XlacRtDevice* dev, const char* target, const char* backend_config, void* const* operands,
                        void* result);

/* ---- infeed ---- */

/* Supplies the data of one execution of an infeed: `leaves` points to the array leaves of the infeed's data (element
 * 0 of its result; depth first, each in its shape's layout), `site` to the per-call-site constant string compiled
 * code passes (also an exported symbol, see codegen/custom_call_abi.h). Executions are not counted for the handler:
 * it keeps its own counts, per device (xlac_rt_device_id) if it needs them. Returns 0 on success; on failure it
 * should call xlac_rt_set_error(dev, ...). Called concurrently from every device thread. */
typedef int (*XlacRtInfeedFn)(void* user, const char* site, void* const* leaves, XlacRtDevice* dev);
void xlac_rt_group_set_infeed_handler(XlacRtGroup* group, XlacRtInfeedFn fn, void* user);
/* Dispatches to the group's infeed handler; without one, fails with XLAC_RT_ERROR_UNIMPLEMENTED. Nonzero on
 * failure. */
int xlac_rt_infeed(XlacRtDevice* dev, const char* site, void* const* leaves);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XLAC_RUNTIME_CPU_XLAC_RUNTIME_H_ */
