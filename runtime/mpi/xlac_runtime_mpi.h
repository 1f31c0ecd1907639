/* Running one program's devices over several processes with MPI (CMake target xlac_runtime_mpi; docs/multihost.md).
 *
 * Valid C99 and C++. The library links xlac_runtime and MPI (OpenMPI or any MPI-3 library) and nothing else, so AOT
 * hosts can use it as well as xla-run. Every process runs the same program on the same number of devices; process
 * p runs devices [p * D / P, (p + 1) * D / P) (xlac_rt_group_set_transport with xlac_rt_mpi_transport()).
 *
 * Threads. MPI is initialized with MPI_THREAD_MULTIPLE: a collective spanning processes is exchanged by the device
 * thread that leads its local participants, and several participant groups (e.g. four pairs {d, d + 4}) exchange at
 * the same time from different device threads. Funneling them through one thread would add a queue and a hop to
 * every exchange for no gain, as OpenMPI supports MPI_THREAD_MULTIPLE.
 *
 * Messages. Exchanges are point-to-point messages on a duplicate of MPI_COMM_WORLD, tagged by (op_id, lowest device
 * of the participant group), so concurrent groups never match each other's messages, and successive executions of
 * one collective (and the steps of one) match in order (MPI never lets messages with the same source and tag
 * overtake each other). Each message starts with a header (collective, op_id, execution, step, bytes) that the
 * receiver checks, so processes running different collectives fail with XLAC_RT_ERROR_COLLECTIVE_MISMATCH instead
 * of exchanging garbage. A process that does not arrive within the group's collective timeout fails the exchange
 * with XLAC_RT_ERROR_DEADLINE_EXCEEDED naming it (and its devices); never a hang. A process whose device fails
 * tells the others at once (XlacRtTransport::fail), so their exchanges end with XLAC_RT_ERROR_CANCELLED naming it
 * (see xlac_rt_mpi_recover).
 *
 * Send/recv. A send goes to every other process (tag tag_ub - 2, a header naming run, channel, sequence number and
 * sender), as the runtime cannot know where its receiver lives; receivers take it from an inbox that any polling
 * thread fills. Messages nobody takes are dropped at the next run and, at the latest, received in
 * xlac_rt_mpi_finalize (which first exchanges how many each process sent), so no send is left in flight.
 */
#ifndef XLAC_RUNTIME_MPI_XLAC_RUNTIME_MPI_H_
#define XLAC_RUNTIME_MPI_XLAC_RUNTIME_MPI_H_

#include <stddef.h>
#include <stdint.h>

#include "runtime/cpu/xlac_runtime.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Initializes MPI with MPI_THREAD_MULTIPLE, unless the host already did (then it must have asked for that level).
 * Returns an XlacRtStatusCode (and fills *status when given). Call once, from the main thread. */
int xlac_rt_mpi_init(XlacRtStatus* status);
/* Collective: waits for every process (so all have written their output before one exits), then MPI_Finalize
 * (only if xlac_rt_mpi_init initialized MPI). */
void xlac_rt_mpi_finalize(void);
/* Ends every process of the run (MPI_Abort) with exit code `code`. Use it when this process cannot go on: its peers
 * would otherwise wait for it until their collective timeout. */
void xlac_rt_mpi_abort(int code);

/* This process's index (MPI rank) and the number of processes; 0 and 1 before xlac_rt_mpi_init. */
int64_t xlac_rt_mpi_process_index(void);
int64_t xlac_rt_mpi_process_count(void);

/* The transport to install on device groups (valid until xlac_rt_mpi_finalize). */
const XlacRtTransport* xlac_rt_mpi_transport(void);

/* Collective over all processes (main thread, no run in progress): -1 when every process passed the same value,
 * else the lowest process index whose value differs from process 0's. Used to refuse runs whose processes compiled
 * different programs or options. */
int64_t xlac_rt_mpi_first_mismatch(uint64_t fingerprint);

/* Collective over all processes (main thread, no run in progress): every process sends `bytes` from `data`; on
 * process 0, `out` receives process_count * bytes, in process order (its own first). `out` is unused elsewhere.
 * Returns an XlacRtStatusCode (and fills *status when given). */
int xlac_rt_mpi_gather(const void* data, int64_t bytes, void* out, XlacRtStatus* status);

/* After a failed run (any process): every exchange fails with XLAC_RT_ERROR_CANCELLED from the moment a process
 * fails until all processes call this (collectively, main thread, no run in progress). It forgets the failure and
 * moves to a fresh communicator, so messages the failed run left unreceived never match later exchanges. Returns
 * an XlacRtStatusCode (and fills *status when given). xla-run does not need it: it ends every process instead. */
int xlac_rt_mpi_recover(XlacRtStatus* status);

/* Payload bytes this process has sent to other processes through the transport since xlac_rt_mpi_init. */
int64_t xlac_rt_mpi_bytes_sent(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* XLAC_RUNTIME_MPI_XLAC_RUNTIME_MPI_H_ */
