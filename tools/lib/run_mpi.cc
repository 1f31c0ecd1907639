#include "tools/lib/run_mpi.h"

#include <cstdlib>

#include "absl/status/status.h"

#ifdef XLAC_HAVE_MPI
#include "runtime/mpi/xlac_runtime_mpi.h"
#endif

namespace xlac {

bool LaunchedByMpirun() {
  for (const char* var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK"}) {
    if (std::getenv(var) != nullptr) return true;
  }
  return false;
}

#ifdef XLAC_HAVE_MPI

absl::StatusOr<MpiProcesses> StartMpi() {
  XlacRtStatus status;
  if (xlac_rt_mpi_init(&status) != XLAC_RT_OK) return absl::UnavailableError(status.message);
  MpiProcesses mpi;
  mpi.index = xlac_rt_mpi_process_index();
  mpi.count = xlac_rt_mpi_process_count();
  mpi.transport = mpi.count > 1 ? xlac_rt_mpi_transport() : nullptr;
  return mpi;
}

int64_t MpiFirstMismatch(uint64_t fingerprint) { return xlac_rt_mpi_first_mismatch(fingerprint); }

absl::Status MpiGatherToFirst(const std::string& local, std::string& all) {
  all.assign(xlac_rt_mpi_process_index() == 0 ? local.size() * xlac_rt_mpi_process_count() : 0, '\0');
  XlacRtStatus status;
  if (xlac_rt_mpi_gather(local.data(), static_cast<int64_t>(local.size()), all.data(), &status) != XLAC_RT_OK) {
    return absl::InternalError(status.message);
  }
  return absl::OkStatus();
}

void MpiAbort(int code) {
  xlac_rt_mpi_abort(code);
  std::_Exit(code);  // not reached: MPI_Abort ends the process
}

void MpiFinish() { xlac_rt_mpi_finalize(); }

int64_t MpiBytesSent() { return xlac_rt_mpi_bytes_sent(); }

#else

absl::StatusOr<MpiProcesses> StartMpi() {
  return absl::UnavailableError("this xla-run was built without MPI (install libopenmpi-dev and rerun cmake)");
}
int64_t MpiFirstMismatch(uint64_t) { return -1; }
absl::Status MpiGatherToFirst(const std::string& local, std::string& all) {
  all = local;
  return absl::OkStatus();
}
void MpiAbort(int code) { std::_Exit(code); }
void MpiFinish() {}
int64_t MpiBytesSent() { return 0; }

#endif

}  // namespace xlac
