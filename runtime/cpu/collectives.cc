// The collectives of the C ABI on top of the rendezvous. Every multi-device collective runs in three steps: arrive
// (publish src/dst, wait for all participants), compute (read peers' sources, write results), and sync (nobody
// returns, and so nobody may overwrite its source, before every participant has read what it needs). Results are
// written straight to dst unless dst overlaps a participant's source; then they go through a temporary and are
// copied after the sync.
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "runtime/cpu/internal.h"

namespace xlac::rt {
namespace {

// From this size on an all-reduce writes results straight into every destination (xlac_rt_all_reduce).
constexpr int64_t kDirectAllReduceBytes = int64_t{256} << 10;

bool Overlaps(const void* a, int64_t a_bytes, const void* b, int64_t b_bytes) {
  if (a == nullptr || b == nullptr || a_bytes <= 0 || b_bytes <= 0) return false;
  auto x = reinterpret_cast<uintptr_t>(a), y = reinterpret_cast<uintptr_t>(b);
  return x < y + static_cast<uintptr_t>(b_bytes) && y < x + static_cast<uintptr_t>(a_bytes);
}

void Copy(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0 && dst != src) std::memmove(dst, src, static_cast<size_t>(bytes));
}

std::string What(const char* name, int64_t op_id) {
  return std::string(name != nullptr ? name : "collective") + " (op " + std::to_string(op_id) + ")";
}

bool Fail(XlacRtDevice* dev, int code, const std::string& message) {
  RecordError(dev, code, message, /*consequence=*/false);
  return false;
}

// Finds the device's group in a flat num_groups x group_size array. Returns false after recording an error for
// malformed arguments; `devices` stays empty when the device is in no group.
bool FindGroup(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
               int64_t group_size, std::vector<int64_t>& devices, int64_t& rank) {
  if (num_groups < 0 || group_size < 1 || (num_groups > 0 && groups == nullptr)) {
    return Fail(dev, XLAC_RT_ERROR_INVALID_ARGUMENT,
                What(name, op_id) + ": bad participant groups (" + std::to_string(num_groups) + " groups of " +
                    std::to_string(group_size) + ")");
  }
  int64_t num_devices = static_cast<int64_t>(dev->group->devices.size());
  for (int64_t g = 0; g < num_groups; ++g) {
    const int64_t* group = groups + g * group_size;
    const int64_t* me = std::find(group, group + group_size, dev->id);
    if (me == group + group_size) continue;
    devices.assign(group, group + group_size);
    rank = me - group;
    std::vector<bool> seen(static_cast<size_t>(num_devices));  // linear: a pod's groups have 256 members
    for (int64_t id : devices) {
      if (id < 0 || id >= num_devices || seen[static_cast<size_t>(id)]) {
        devices.clear();
        return Fail(dev, XLAC_RT_ERROR_INVALID_ARGUMENT,
                    What(name, op_id) + ": participant group of device " + std::to_string(dev->id) + " names device " +
                        std::to_string(id) + " out of range or twice (" + std::to_string(num_devices) + " devices)");
      }
      seen[static_cast<size_t>(id)] = true;
    }
    return true;
  }
  return true;
}

int Status(XlacRtDevice* dev) { return dev->failed.load(std::memory_order_acquire) ? dev->code : XLAC_RT_OK; }

int NotInAnyGroup(XlacRtDevice* dev, int64_t op_id, const char* name) {
  Fail(dev, XLAC_RT_ERROR_INVALID_ARGUMENT,
       What(name, op_id) + ": device " + std::to_string(dev->id) + " is in no participant group");
  return Status(dev);
}

bool Negative(XlacRtDevice* dev, int64_t op_id, const char* name, int64_t size) {
  if (size >= 0) return false;
  Fail(dev, XLAC_RT_ERROR_INVALID_ARGUMENT, What(name, op_id) + ": negative size " + std::to_string(size));
  return true;
}

// Where this rank's results go: dst itself, or a temporary when dst overlaps any participant's source.
struct Output {
  unsigned char* ptr;
  std::vector<unsigned char> temp;
};
Output OutputFor(const Instance& inst, void* dst, int64_t dst_bytes, int64_t src_bytes) {
  for (const void* s : inst.src) {
    if (Overlaps(dst, dst_bytes, s, src_bytes)) {
      Output out{nullptr, std::vector<unsigned char>(static_cast<size_t>(dst_bytes))};
      out.ptr = out.temp.data();
      return out;
    }
  }
  return Output{static_cast<unsigned char*>(dst), {}};
}

// Sync, move a temporary result into place, depart.
void Finish(XlacRtDevice* dev, Instance* inst, Output& out, void* dst, int64_t bytes) {
  Sync(dev, inst);
  if (!out.temp.empty()) Copy(dst, out.temp.data(), bytes);
  Depart(dev, inst);
}

// Folds elements [begin, end) of every rank's source, rank order, into acc (which has those elements at offset 0).
void Fold(const Instance& inst, int64_t src_offset_bytes, int64_t begin, int64_t end, int64_t element_bytes,
          unsigned char* acc, XlacRtCombineFn combine, void* ctx) {
  if (end <= begin) return;
  int64_t off = src_offset_bytes + begin * element_bytes;
  Copy(acc, static_cast<const unsigned char*>(inst.src[0]) + off, (end - begin) * element_bytes);
  for (size_t i = 1; i < inst.src.size(); ++i) {
    combine(acc, static_cast<const unsigned char*>(inst.src[i]) + off, end - begin, ctx);
  }
}

// All-reduce and reduce-scatter over devices of several processes: the same fold, `count` result elements.
int ReduceAcrossProcesses(XlacRtDevice* dev, CollectiveKind kind, int64_t op_id, const char* name,
                          const std::vector<int64_t>& devices, const void* src, void* dst, int64_t count,
                          int64_t element_bytes, XlacRtCombineFn combine, void* combine_ctx, int64_t match_size) {
  CrossCollective c{kind, op_id, name, &devices, src, dst};
  c.count = count;
  c.element_bytes = element_bytes;
  c.combine = combine;
  c.combine_ctx = combine_ctx;
  c.match_size = match_size;
  return RunAcrossProcesses(dev, c);
}

}  // namespace
}  // namespace xlac::rt

using namespace xlac::rt;

extern "C" {

int xlac_rt_all_reduce(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                       int64_t group_size, const void* src, void* dst, int64_t count, int64_t element_bytes,
                       XlacRtCombineFn combine, void* combine_ctx) {
  if (xlac_rt_failed(dev)) return dev->code;
  if (Negative(dev, op_id, name, count) || Negative(dev, op_id, name, element_bytes)) return Status(dev);
  std::vector<int64_t> devices;
  int64_t rank = 0;
  if (!FindGroup(dev, op_id, name, groups, num_groups, group_size, devices, rank)) return Status(dev);
  int64_t bytes = count * element_bytes;
  if (devices.empty()) return NotInAnyGroup(dev, op_id, name);
  if (devices.size() == 1) {
    Copy(dst, src, bytes);
    return XLAC_RT_OK;
  }
  CollectiveScope scope(dev, CollectiveKind::kAllReduce, name, bytes, bytes);
  if (SpansProcesses(dev->group, devices)) {
    return ReduceAcrossProcesses(dev, CollectiveKind::kAllReduce, op_id, name, devices, src, dst, count, element_bytes,
                                 combine, combine_ctx, bytes);
  }
  // Each rank folds an equal share of the elements, so the work is spread over all device threads while every
  // element is still folded in rank order.
  const int64_t n = static_cast<int64_t>(devices.size());
  const int64_t begin = count * rank / n, end = count * (rank + 1) / n;
  if (bytes >= kDirectAllReduceBytes) {
    // Large arrays: each rank writes its folded share straight into every participant's destination (once all
    // sources are read, so destinations may overlap them), which moves each result byte once instead of through a
    // shared result that every rank then copies whole. One more sync, negligible at this size.
    Instance* inst =
        Arrive(dev, op_id, name, CollectiveKind::kAllReduce, devices, rank, src, dst, bytes, element_bytes, 0);
    if (inst == nullptr) return Status(dev);
    const int64_t share_bytes = (end - begin) * element_bytes;
    std::unique_ptr<unsigned char[]> share(new unsigned char[static_cast<size_t>(std::max<int64_t>(share_bytes, 1))]);
    Fold(*inst, 0, begin, end, element_bytes, share.get(), combine, combine_ctx);
    Sync(dev, inst);
    for (void* to : inst->dst) Copy(static_cast<unsigned char*>(to) + begin * element_bytes, share.get(), share_bytes);
    Sync(dev, inst);
    Depart(dev, inst);
    return XLAC_RT_OK;
  }
  Instance* inst =
      Arrive(dev, op_id, name, CollectiveKind::kAllReduce, devices, rank, src, dst, bytes, element_bytes, bytes);
  if (inst == nullptr) return Status(dev);
  Fold(*inst, 0, begin, end, element_bytes, inst->scratch.data() + begin * element_bytes, combine, combine_ctx);
  Sync(dev, inst);
  Copy(dst, inst->scratch.data(), bytes);
  Depart(dev, inst);
  return XLAC_RT_OK;
}

int xlac_rt_reduce_scatter(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups,
                           int64_t num_groups, int64_t group_size, const void* src, void* dst, int64_t count,
                           int64_t element_bytes, XlacRtCombineFn combine, void* combine_ctx) {
  if (xlac_rt_failed(dev)) return dev->code;
  if (Negative(dev, op_id, name, count) || Negative(dev, op_id, name, element_bytes)) return Status(dev);
  std::vector<int64_t> devices;
  int64_t rank = 0;
  if (!FindGroup(dev, op_id, name, groups, num_groups, group_size, devices, rank)) return Status(dev);
  if (devices.empty()) return NotInAnyGroup(dev, op_id, name);
  int64_t chunk = count * element_bytes;
  if (devices.size() == 1) {
    Copy(dst, src, chunk);
    return XLAC_RT_OK;
  }
  CollectiveScope scope(dev, CollectiveKind::kReduceScatter, name, chunk * static_cast<int64_t>(devices.size()), chunk);
  if (SpansProcesses(dev->group, devices)) {
    return ReduceAcrossProcesses(dev, CollectiveKind::kReduceScatter, op_id, name, devices, src, dst, count,
                                 element_bytes, combine, combine_ctx, chunk);
  }
  Instance* inst =
      Arrive(dev, op_id, name, CollectiveKind::kReduceScatter, devices, rank, src, dst, chunk, element_bytes, 0);
  if (inst == nullptr) return Status(dev);
  int64_t n = static_cast<int64_t>(devices.size());
  Output out = OutputFor(*inst, dst, chunk, chunk * n);
  Fold(*inst, rank * chunk, 0, count, element_bytes, out.ptr, combine, combine_ctx);
  Finish(dev, inst, out, dst, chunk);
  return XLAC_RT_OK;
}

int xlac_rt_all_gather(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                       int64_t group_size, const void* src, void* dst, int64_t bytes) {
  if (xlac_rt_failed(dev)) return dev->code;
  if (Negative(dev, op_id, name, bytes)) return Status(dev);
  std::vector<int64_t> devices;
  int64_t rank = 0;
  if (!FindGroup(dev, op_id, name, groups, num_groups, group_size, devices, rank)) return Status(dev);
  if (devices.empty()) return NotInAnyGroup(dev, op_id, name);
  if (devices.size() == 1) {
    Copy(dst, src, bytes);
    return XLAC_RT_OK;
  }
  CollectiveScope scope(dev, CollectiveKind::kAllGather, name, bytes, bytes * static_cast<int64_t>(devices.size()));
  if (SpansProcesses(dev->group, devices)) {
    CrossCollective c{CollectiveKind::kAllGather, op_id, name, &devices, src, dst};
    c.bytes = c.match_size = bytes;
    return RunAcrossProcesses(dev, c);
  }
  Instance* inst = Arrive(dev, op_id, name, CollectiveKind::kAllGather, devices, rank, src, dst, bytes, 0, 0);
  if (inst == nullptr) return Status(dev);
  int64_t n = static_cast<int64_t>(devices.size());
  // In-place gathering (src is exactly this rank's block of dst) is common and needs no temporary.
  bool needs_temp = false;
  for (int64_t i = 0; i < n; ++i) {
    const void* s = inst->src[static_cast<size_t>(i)];
    bool own_block = i == rank && s == static_cast<unsigned char*>(dst) + rank * bytes;
    if (!own_block && Overlaps(dst, bytes * n, s, bytes)) needs_temp = true;
  }
  Output out{static_cast<unsigned char*>(dst), {}};
  if (needs_temp) {
    out.temp.resize(static_cast<size_t>(bytes * n));
    out.ptr = out.temp.data();
  }
  for (int64_t i = 0; i < n; ++i) Copy(out.ptr + i * bytes, inst->src[static_cast<size_t>(i)], bytes);
  Finish(dev, inst, out, dst, bytes * n);
  return XLAC_RT_OK;
}

int xlac_rt_all_to_all(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                       int64_t group_size, const void* src, void* dst, int64_t chunk_bytes) {
  if (xlac_rt_failed(dev)) return dev->code;
  if (Negative(dev, op_id, name, chunk_bytes)) return Status(dev);
  std::vector<int64_t> devices;
  int64_t rank = 0;
  if (!FindGroup(dev, op_id, name, groups, num_groups, group_size, devices, rank)) return Status(dev);
  if (devices.empty()) return NotInAnyGroup(dev, op_id, name);
  if (devices.size() == 1) {
    Copy(dst, src, chunk_bytes);
    return XLAC_RT_OK;
  }
  const int64_t all_chunks = chunk_bytes * static_cast<int64_t>(devices.size());
  CollectiveScope scope(dev, CollectiveKind::kAllToAll, name, all_chunks, all_chunks);
  if (SpansProcesses(dev->group, devices)) {
    CrossCollective c{CollectiveKind::kAllToAll, op_id, name, &devices, src, dst};
    c.bytes = c.match_size = chunk_bytes;
    return RunAcrossProcesses(dev, c);
  }
  Instance* inst = Arrive(dev, op_id, name, CollectiveKind::kAllToAll, devices, rank, src, dst, chunk_bytes, 0, 0);
  if (inst == nullptr) return Status(dev);
  int64_t n = static_cast<int64_t>(devices.size());
  Output out = OutputFor(*inst, dst, chunk_bytes * n, chunk_bytes * n);
  for (int64_t i = 0; i < n; ++i) {
    Copy(out.ptr + i * chunk_bytes,
         static_cast<const unsigned char*>(inst->src[static_cast<size_t>(i)]) + rank * chunk_bytes, chunk_bytes);
  }
  Finish(dev, inst, out, dst, chunk_bytes * n);
  return XLAC_RT_OK;
}

int xlac_rt_collective_permute(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* pairs,
                               int64_t num_pairs, const void* src, void* dst, int64_t bytes) {
  if (xlac_rt_failed(dev)) return dev->code;
  if (Negative(dev, op_id, name, bytes)) return Status(dev);
  if (num_pairs < 0 || (num_pairs > 0 && pairs == nullptr)) {
    Fail(dev, XLAC_RT_ERROR_INVALID_ARGUMENT, What(name, op_id) + ": bad source-target pairs");
    return Status(dev);
  }
  int64_t num_devices = static_cast<int64_t>(dev->group->devices.size());
  std::vector<int64_t> devices;
  int64_t source = -1;
  for (int64_t p = 0; p < num_pairs; ++p) {
    int64_t s = pairs[2 * p], t = pairs[2 * p + 1];
    if (s < 0 || t < 0 || s >= num_devices || t >= num_devices) {
      Fail(dev, XLAC_RT_ERROR_INVALID_ARGUMENT,
           What(name, op_id) + ": source-target pair {" + std::to_string(s) + "," + std::to_string(t) +
               "} is out of range for " + std::to_string(num_devices) + " devices");
      return Status(dev);
    }
    devices.push_back(s);
    devices.push_back(t);
    if (t == dev->id) source = s;
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  auto me = std::find(devices.begin(), devices.end(), dev->id);
  if (me == devices.end()) {
    if (bytes > 0) std::memset(dst, 0, static_cast<size_t>(bytes));
    return XLAC_RT_OK;
  }
  if (devices.size() == 1) {  // only pairs {d,d}
    Copy(dst, src, bytes);
    return XLAC_RT_OK;
  }
  int64_t rank = me - devices.begin();
  bool sends = false;
  for (int64_t p = 0; p < num_pairs; ++p) sends |= pairs[2 * p] == dev->id;
  CollectiveScope scope(dev, CollectiveKind::kPermute, name, sends ? bytes : 0, source >= 0 ? bytes : 0);
  if (SpansProcesses(dev->group, devices)) {
    CrossCollective c{CollectiveKind::kPermute, op_id, name, &devices, src, dst};
    c.bytes = c.match_size = bytes;
    c.pairs = pairs;
    c.num_pairs = num_pairs;
    return RunAcrossProcesses(dev, c);
  }
  Instance* inst = Arrive(dev, op_id, name, CollectiveKind::kPermute, devices, rank, src, dst, bytes, 0, 0);
  if (inst == nullptr) return Status(dev);
  Output out = OutputFor(*inst, dst, bytes, bytes);
  if (source < 0) {
    if (bytes > 0) std::memset(out.ptr, 0, static_cast<size_t>(bytes));
  } else {
    int64_t source_rank = std::find(devices.begin(), devices.end(), source) - devices.begin();
    Copy(out.ptr, inst->src[static_cast<size_t>(source_rank)], bytes);
  }
  Finish(dev, inst, out, dst, bytes);
  return XLAC_RT_OK;
}

int xlac_rt_collective_broadcast(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups,
                                 int64_t num_groups, int64_t group_size, const void* src, void* dst, int64_t bytes) {
  if (xlac_rt_failed(dev)) return dev->code;
  if (Negative(dev, op_id, name, bytes)) return Status(dev);
  std::vector<int64_t> devices;
  int64_t rank = 0;
  if (!FindGroup(dev, op_id, name, groups, num_groups, group_size, devices, rank)) return Status(dev);
  if (devices.empty()) {
    // StableHLO: devices outside every group get zeros.
    if (bytes > 0) std::memset(dst, 0, static_cast<size_t>(bytes));
    return XLAC_RT_OK;
  }
  if (devices.size() == 1) {
    Copy(dst, src, bytes);
    return XLAC_RT_OK;
  }
  CollectiveScope scope(dev, CollectiveKind::kBroadcast, name, rank == 0 ? bytes : 0, bytes);
  if (SpansProcesses(dev->group, devices)) {
    CrossCollective c{CollectiveKind::kBroadcast, op_id, name, &devices, src, dst};
    c.bytes = c.match_size = bytes;
    return RunAcrossProcesses(dev, c);
  }
  Instance* inst = Arrive(dev, op_id, name, CollectiveKind::kBroadcast, devices, rank, src, dst, bytes, 0, 0);
  if (inst == nullptr) return Status(dev);
  Output out = OutputFor(*inst, dst, bytes, bytes);
  Copy(out.ptr, inst->src[0], bytes);
  Finish(dev, inst, out, dst, bytes);
  return XLAC_RT_OK;
}

int xlac_rt_barrier(XlacRtDevice* dev, int64_t op_id, const char* name, const int64_t* groups, int64_t num_groups,
                    int64_t group_size) {
  if (xlac_rt_failed(dev)) return dev->code;
  std::vector<int64_t> devices;
  int64_t rank = 0;
  if (!FindGroup(dev, op_id, name, groups, num_groups, group_size, devices, rank)) return Status(dev);
  if (devices.empty()) return NotInAnyGroup(dev, op_id, name);
  if (devices.size() == 1) return XLAC_RT_OK;
  CollectiveScope scope(dev, CollectiveKind::kBarrier, name, 0, 0);
  if (SpansProcesses(dev->group, devices)) {
    CrossCollective c{CollectiveKind::kBarrier, op_id, name, &devices, nullptr, nullptr};
    return RunAcrossProcesses(dev, c);
  }
  Instance* inst = Arrive(dev, op_id, name, CollectiveKind::kBarrier, devices, rank, nullptr, nullptr, 0, 0, 0);
  if (inst == nullptr) return Status(dev);
  Depart(dev, inst);
  return XLAC_RT_OK;
}

}  // extern "C"
