// xla-run over several processes (docs/multihost.md): a thin C++ layer over runtime/mpi/xlac_runtime_mpi.h. In a
// build without MPI (XLAC_HAVE_MPI unset) StartMpi fails with a message saying so.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "runtime/cpu/xlac_runtime.h"
#include "tools/lib/run_options.h"

namespace xlac {

struct MpiProcesses {
  int64_t index = 0;  // this process (MPI rank)
  int64_t count = 1;
  const XlacRtTransport* transport = nullptr;  // null with one process
  // Set once every process is certain to end by itself (they all passed the last step that exchanges data, or
  // all failed the same way). Until then an error on one process must end all of them (MpiAbort): the others would
  // otherwise wait for it until their collective timeout.
  bool settled = false;
};

// The environment of a process started by mpirun / mpiexec (OpenMPI, or a PMI / PMIx launcher such as MPICH's
// Hydra or Slurm's srun).
bool LaunchedByMpirun();
absl::StatusOr<MpiProcesses> StartMpi();
// -1 when every process passed the same fingerprint, else the lowest process whose differs from process 0's.
int64_t MpiFirstMismatch(uint64_t fingerprint);
// Every process passes the same number of bytes; process 0 gets them all, in process order.
absl::Status MpiGatherToFirst(const std::string& local, std::string& all);
[[noreturn]] void MpiAbort(int code);
void MpiFinish();
// Payload bytes this process sent to others through the transport.
int64_t MpiBytesSent();

// What every process of an MPI run must agree on: the module, its inputs and the options that change results.
uint64_t MpiFingerprint(const RunOptions& options, std::string_view text, std::vector<Literal> args);
// Brings every process's device results to process 0 (all processes call it): each sends its own devices' leaves.
absl::Status MpiGatherResults(const MpiProcesses& mpi, std::vector<Literal>& results);
// --mpi-report: every process's run time and bytes sent, gathered on process 0 (all processes call it).
absl::Status MpiReportProcesses(const MpiProcesses& mpi, double run_seconds, std::string& report);

}  // namespace xlac
