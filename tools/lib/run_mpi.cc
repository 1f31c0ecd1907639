#include "tools/lib/run_mpi.h"

#include <cstdlib>
#include <cstring>
#include <functional>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/status_macros.h"

#ifdef XLAC_HAVE_MPI
#include "runtime/mpi/xlac_runtime_mpi.h"
#endif

namespace xlac {

namespace {

// Every array leaf of `literal`, in order.
void ForEachLeaf(Literal& literal, const std::function<void(uint8_t*, size_t)>& fn) {
  if (!literal.is_tuple()) {
    fn(literal.mutable_raw_data(), static_cast<size_t>(literal.byte_size()));
    return;
  }
  for (Literal& element : literal.mutable_tuple_elements()) ForEachLeaf(element, fn);
}

}  // namespace

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

uint64_t MpiFingerprint(const RunOptions& options, std::string_view text, std::vector<Literal> args) {
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a
  auto mix = [&h](const void* data, size_t size) {
    for (size_t i = 0; i < size; ++i) h = (h ^ static_cast<const uint8_t*>(data)[i]) * 0x100000001b3ull;
  };
  std::string settings =
      fmt::format("{}|{}|{}|{}|{}|{}|{}|{}", options.backend, options.exact, options.tpu_numerics, options.seed,
                  options.num_replicas, options.num_partitions, options.no_partition, text.size());
  mix(settings.data(), settings.size());
  mix(text.data(), text.size());
  for (Literal& arg : args) ForEachLeaf(arg, mix);
  return h;
}

absl::Status MpiGatherResults(const MpiProcesses& mpi, std::vector<Literal>& results) {
  const int64_t per = static_cast<int64_t>(results.size()) / mpi.count;
  std::string local;
  for (int64_t d = mpi.index * per; d < (mpi.index + 1) * per; ++d) {
    ForEachLeaf(results[static_cast<size_t>(d)],
                [&](uint8_t* data, size_t size) { local.append(reinterpret_cast<const char*>(data), size); });
  }
  std::string all;
  XLAC_RETURN_IF_ERROR(MpiGatherToFirst(local, all));
  if (mpi.index != 0) return absl::OkStatus();
  for (int64_t p = 1; p < mpi.count; ++p) {
    size_t offset = static_cast<size_t>(p) * local.size();
    for (int64_t d = p * per; d < (p + 1) * per; ++d) {
      ForEachLeaf(results[static_cast<size_t>(d)], [&](uint8_t* data, size_t size) {
        std::memcpy(data, all.data() + offset, size);
        offset += size;
      });
    }
  }
  return absl::OkStatus();
}

absl::Status MpiReportProcesses(const MpiProcesses& mpi, double run_seconds, std::string& report) {
  int64_t mine[2] = {static_cast<int64_t>(run_seconds * 1e6), MpiBytesSent()};
  std::string all;
  XLAC_RETURN_IF_ERROR(MpiGatherToFirst(std::string(reinterpret_cast<const char*>(mine), sizeof mine), all));
  if (mpi.index != 0) return absl::OkStatus();
  for (int64_t p = 0; p < mpi.count; ++p) {
    int64_t theirs[2];
    std::memcpy(theirs, all.data() + p * sizeof theirs, sizeof theirs);
    report += fmt::format("mpi: process {}: run {:.3f} ms, sent {} bytes\n", p, theirs[0] / 1e3, theirs[1]);
  }
  return absl::OkStatus();
}

}  // namespace xlac
