// Collectives whose participants live in several processes (XlacRtTransport; docs/multihost.md). The local
// participants meet in memory; the lowest-ranked of them (the leader) exchanges with the other processes just what
// each needs, once per step, and leaves in the instance's scratch what every local participant reads after the
// sync. Every element of every result is computed from the same contributions in the same order as in one process
// (an all-reduce folds each element over all ranks, rank order, exactly once), so results are bit-identical.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/cpu/internal.h"

namespace xlac::rt {
namespace {

using Bytes = std::vector<unsigned char>;

void Copy(void* dst, const void* src, int64_t bytes) {
  if (bytes > 0) std::memcpy(dst, src, static_cast<size_t>(bytes));
}

const unsigned char* At(const void* base, int64_t offset) { return static_cast<const unsigned char*>(base) + offset; }

std::string What(const char* name, int64_t op_id) {
  return std::string(name != nullptr ? name : "collective") + " (op " + std::to_string(op_id) + ")";
}

// acc (count elements) = parts[0] (+) parts[1] (+) ..., left to right, as the in-process fold.
void FoldInto(unsigned char* acc, const std::vector<const unsigned char*>& parts, int64_t count, int64_t element_bytes,
              XlacRtCombineFn combine, void* ctx) {
  if (count <= 0) return;
  Copy(acc, parts[0], count * element_bytes);
  for (size_t i = 1; i < parts.size(); ++i) combine(acc, parts[i], count, ctx);
}

// FoldInto over the device's parallel-loop threads (ranges are independent: the combiner is elementwise).
void ParallelFoldInto(XlacRtDevice* dev, unsigned char* acc, const std::vector<const unsigned char*>& parts,
                      int64_t count, int64_t element_bytes, XlacRtCombineFn combine, void* ctx) {
  struct Work {
    unsigned char* acc;
    const std::vector<const unsigned char*>* parts;
    int64_t element_bytes;
    XlacRtCombineFn combine;
    void* ctx;
  } work{acc, &parts, element_bytes, combine, ctx};
  xlac_rt_device_parallel_for(
      dev, count,
      [](int64_t begin, int64_t end, void* p) {
        const Work& w = *static_cast<const Work*>(p);
        std::vector<const unsigned char*> shifted(w.parts->size());
        for (size_t i = 0; i < shifted.size(); ++i) shifted[i] = (*w.parts)[i] + begin * w.element_bytes;
        FoldInto(w.acc + begin * w.element_bytes, shifted, end - begin, w.element_bytes, w.combine, w.ctx);
      },
      &work);
}

// Who holds which participant.
struct Layout {
  int64_t me = 0;
  int64_t per_process = 1;
  std::vector<std::vector<int64_t>> ranks_of;  // per process: the ranks of its participants, ascending
  std::vector<int64_t> parts;                  // processes with participants, ascending
  std::vector<int64_t> process_of;             // per rank
  const std::vector<int64_t>& local() const { return ranks_of[static_cast<size_t>(me)]; }
};

Layout MakeLayout(const XlacRtGroup* group, const std::vector<int64_t>& devices) {
  Layout l;
  l.per_process = group->local_end - group->local_begin;
  l.me = group->local_begin / l.per_process;
  l.ranks_of.resize(static_cast<size_t>(group->transport->process_count));
  for (size_t r = 0; r < devices.size(); ++r) {
    int64_t p = devices[r] / l.per_process;
    l.ranks_of[static_cast<size_t>(p)].push_back(static_cast<int64_t>(r));
    l.process_of.push_back(p);
  }
  for (size_t p = 0; p < l.ranks_of.size(); ++p) {
    if (!l.ranks_of[p].empty()) l.parts.push_back(static_cast<int64_t>(p));
  }
  return l;
}

// The leader's side of one collective execution; fills inst->scratch for the participants' finish.
class Leader {
 public:
  Leader(XlacRtDevice* dev, const CrossCollective& c, Instance* inst, const Layout& l)
      : dev_(dev), c_(c), inst_(inst), l_(l), n_(static_cast<int64_t>(c.devices->size())) {}

  // Returns XLAC_RT_OK, or the transport's code with its message in `error`.
  int Run(std::string& error) {
    switch (c_.kind) {
      case CollectiveKind::kAllGather:
        return AllGather(error);
      case CollectiveKind::kAllReduce:
        return AllReduce(error);
      case CollectiveKind::kReduceScatter:
        return ChunksToOwners(c_.count * c_.element_bytes, error);
      case CollectiveKind::kAllToAll:
        return ChunksToOwners(c_.bytes, error);
      case CollectiveKind::kPermute:
        return Permute(error);
      case CollectiveKind::kBroadcast:
        return Broadcast(error);
      case CollectiveKind::kBarrier:
        return Step(0, error);
    }
    return XLAC_RT_OK;
  }

 private:
  const void* LocalSrc(size_t local_index) const { return inst_->src[local_index]; }
  Bytes& Send(int64_t p) { return send_[static_cast<size_t>(p)]; }
  Bytes& Recv(int64_t p) { return recv_[static_cast<size_t>(p)]; }
  int64_t Members(int64_t p) const { return static_cast<int64_t>(l_.ranks_of[static_cast<size_t>(p)].size()); }

  // Exchanges send_ / recv_ (recv_ sized by the caller) with every other participating process.
  int Step(int64_t step, std::string& error) {
    const XlacRtTransport* t = dev_->group->transport;
    const size_t processes = static_cast<size_t>(t->process_count);
    send_.resize(processes);
    recv_.resize(processes);
    std::vector<const void*> send(processes);
    std::vector<void*> recv(processes);
    std::vector<int64_t> send_bytes(processes), recv_bytes(processes);
    for (size_t p = 0; p < processes; ++p) {
      send[p] = send_[p].data();
      send_bytes[p] = static_cast<int64_t>(send_[p].size());
      recv[p] = recv_[p].data();
      recv_bytes[p] = static_cast<int64_t>(recv_[p].size());
    }
    XlacRtExchange x{};
    x.op_id = c_.op_id;
    x.name = c_.name != nullptr ? c_.name : KindName(c_.kind);
    x.generation = dev_->generation[c_.op_id] - 1;  // Arrive counted this execution
    x.step = step;
    x.kind = static_cast<int>(c_.kind);
    x.kind_name = KindName(c_.kind);
    x.devices = c_.devices->data();
    x.num_devices = n_;
    x.devices_per_process = l_.per_process;
    x.send = send.data();
    x.send_bytes = send_bytes.data();
    x.recv = recv.data();
    x.recv_bytes = recv_bytes.data();
    x.timeout_ms = static_cast<int64_t>(dev_->group->timeout.count());
    char message[XLAC_RT_MESSAGE_CAPACITY] = "";
    int code = t->exchange(t->user, &x, message, sizeof message);
    if (code != XLAC_RT_OK) {
      message[sizeof message - 1] = 0;
      error = message;
    }
    return code;
  }

  // scratch = every contribution (bytes each), rank order.
  int AllGather(std::string& error) {
    const int64_t b = c_.bytes;
    const std::vector<int64_t>& local = l_.local();
    Bytes pack(local.size() * static_cast<size_t>(b));
    for (size_t i = 0; i < local.size(); ++i) Copy(pack.data() + i * b, LocalSrc(i), b);
    send_.assign(l_.ranks_of.size(), Bytes());
    recv_.assign(l_.ranks_of.size(), Bytes());
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      Send(p) = pack;
      Recv(p).resize(static_cast<size_t>(Members(p) * b));
    }
    if (int code = Step(0, error); code != XLAC_RT_OK) return code;
    inst_->scratch.resize(static_cast<size_t>(n_ * b));
    for (int64_t p : l_.parts) {
      const std::vector<int64_t>& ranks = l_.ranks_of[static_cast<size_t>(p)];
      const Bytes& from = p == l_.me ? pack : Recv(p);
      for (size_t j = 0; j < ranks.size(); ++j) Copy(inst_->scratch.data() + ranks[j] * b, from.data() + j * b, b);
    }
    return XLAC_RT_OK;
  }

  // Chunk r of every participant's source goes to rank r: scratch holds, per local participant (local order), the n
  // chunks it receives in rank order. All-to-all copies them out, reduce-scatter folds them.
  int ChunksToOwners(int64_t chunk, std::string& error) {
    const std::vector<int64_t>& local = l_.local();
    const int64_t m = static_cast<int64_t>(local.size());
    send_.assign(l_.ranks_of.size(), Bytes());
    recv_.assign(l_.ranks_of.size(), Bytes());
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      const std::vector<int64_t>& theirs = l_.ranks_of[static_cast<size_t>(p)];
      Bytes& out = Send(p);
      out.resize(static_cast<size_t>(m * Members(p) * chunk));
      for (int64_t i = 0; i < m; ++i) {
        for (size_t j = 0; j < theirs.size(); ++j) {
          Copy(out.data() + (i * Members(p) + static_cast<int64_t>(j)) * chunk, At(LocalSrc(i), theirs[j] * chunk),
               chunk);
        }
      }
      Recv(p).resize(static_cast<size_t>(Members(p) * m * chunk));
    }
    if (int code = Step(0, error); code != XLAC_RT_OK) return code;
    inst_->scratch.resize(static_cast<size_t>(m * n_ * chunk));
    unsigned char* scratch = inst_->scratch.data();
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        Copy(scratch + (i * n_ + local[static_cast<size_t>(j)]) * chunk, At(LocalSrc(j), local[i] * chunk), chunk);
      }
    }
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      const std::vector<int64_t>& theirs = l_.ranks_of[static_cast<size_t>(p)];
      for (size_t j = 0; j < theirs.size(); ++j) {
        for (int64_t i = 0; i < m; ++i) {
          Copy(scratch + (i * n_ + theirs[j]) * chunk, Recv(p).data() + (static_cast<int64_t>(j) * m + i) * chunk,
               chunk);
        }
      }
    }
    return XLAC_RT_OK;
  }

  // Each participating process folds one slice of the elements over all ranks (step 0 brings it every
  // participant's slice), then the folded slices go to everyone (step 1): scratch holds the whole result.
  int AllReduce(std::string& error) {
    const int64_t eb = c_.element_bytes, count = c_.count, k = static_cast<int64_t>(l_.parts.size());
    auto slice_begin = [&](size_t index) { return count * static_cast<int64_t>(index) / k; };
    std::vector<int64_t> begin(l_.ranks_of.size()), size(l_.ranks_of.size());
    size_t mine = 0;
    for (size_t index = 0; index < l_.parts.size(); ++index) {
      size_t p = static_cast<size_t>(l_.parts[index]);
      begin[p] = slice_begin(index);
      size[p] = slice_begin(index + 1) - begin[p];
      if (l_.parts[index] == l_.me) mine = p;
    }
    const std::vector<int64_t>& local = l_.local();
    const int64_t m = static_cast<int64_t>(local.size());
    send_.assign(l_.ranks_of.size(), Bytes());
    recv_.assign(l_.ranks_of.size(), Bytes());
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      const int64_t s = size[static_cast<size_t>(p)] * eb;
      Bytes& out = Send(p);
      out.resize(static_cast<size_t>(m * s));
      for (int64_t i = 0; i < m; ++i) Copy(out.data() + i * s, At(LocalSrc(i), begin[static_cast<size_t>(p)] * eb), s);
      Recv(p).resize(static_cast<size_t>(Members(p) * size[mine] * eb));
    }
    if (int code = Step(0, error); code != XLAC_RT_OK) return code;
    std::vector<const unsigned char*> parts(static_cast<size_t>(n_));
    for (int64_t p : l_.parts) {
      const std::vector<int64_t>& ranks = l_.ranks_of[static_cast<size_t>(p)];
      for (size_t j = 0; j < ranks.size(); ++j) {
        parts[static_cast<size_t>(ranks[j])] =
            p == l_.me ? At(LocalSrc(j), begin[mine] * eb) : Recv(p).data() + static_cast<int64_t>(j) * size[mine] * eb;
      }
    }
    Bytes folded(static_cast<size_t>(size[mine] * eb));
    ParallelFoldInto(dev_, folded.data(), parts, size[mine], eb, c_.combine, c_.combine_ctx);
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      Send(p) = folded;
      Recv(p).assign(static_cast<size_t>(size[static_cast<size_t>(p)] * eb), 0);
    }
    if (int code = Step(1, error); code != XLAC_RT_OK) return code;
    inst_->scratch.resize(static_cast<size_t>(count * eb));
    for (int64_t p : l_.parts) {
      const Bytes& from = p == l_.me ? folded : Recv(p);
      Copy(inst_->scratch.data() + begin[static_cast<size_t>(p)] * eb, from.data(), size[static_cast<size_t>(p)] * eb);
    }
    return XLAC_RT_OK;
  }

  // scratch: rank 0's source.
  int Broadcast(std::string& error) {
    const int64_t owner = l_.process_of[0];
    send_.assign(l_.ranks_of.size(), Bytes());
    recv_.assign(l_.ranks_of.size(), Bytes());
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      if (l_.me == owner) Send(p).assign(At(LocalSrc(0), 0), At(LocalSrc(0), c_.bytes));
      if (p == owner) Recv(p).resize(static_cast<size_t>(c_.bytes));
    }
    if (int code = Step(0, error); code != XLAC_RT_OK) return code;
    if (l_.me == owner) {
      inst_->scratch.assign(At(LocalSrc(0), 0), At(LocalSrc(0), c_.bytes));
    } else {
      inst_->scratch = Recv(owner);
    }
    return XLAC_RT_OK;
  }

  // scratch: per rank, the source of every rank some local participant receives from (others unset).
  int Permute(std::string& error) {
    const int64_t b = c_.bytes;
    std::vector<int64_t> source = PermuteSources(c_);
    // The source ranks process p needs, ascending.
    auto needed_by = [&](int64_t p) {
      std::vector<int64_t> ranks;
      for (int64_t r : l_.ranks_of[static_cast<size_t>(p)]) {
        if (source[static_cast<size_t>(r)] >= 0) ranks.push_back(source[static_cast<size_t>(r)]);
      }
      std::sort(ranks.begin(), ranks.end());
      ranks.erase(std::unique(ranks.begin(), ranks.end()), ranks.end());
      return ranks;
    };
    const std::vector<int64_t>& local = l_.local();
    auto local_index = [&](int64_t rank) { return std::find(local.begin(), local.end(), rank) - local.begin(); };
    send_.assign(l_.ranks_of.size(), Bytes());
    recv_.assign(l_.ranks_of.size(), Bytes());
    std::vector<int64_t> mine = needed_by(l_.me);
    for (int64_t p : l_.parts) {
      if (p == l_.me) continue;
      for (int64_t r : needed_by(p)) {
        if (l_.process_of[static_cast<size_t>(r)] != l_.me) continue;
        const unsigned char* s = At(LocalSrc(static_cast<size_t>(local_index(r))), 0);
        Send(p).insert(Send(p).end(), s, s + b);
      }
      for (int64_t r : mine) {
        if (l_.process_of[static_cast<size_t>(r)] == p) Recv(p).resize(Recv(p).size() + static_cast<size_t>(b));
      }
    }
    if (int code = Step(0, error); code != XLAC_RT_OK) return code;
    inst_->scratch.assign(static_cast<size_t>(n_ * b), 0);
    std::vector<int64_t> offset(l_.ranks_of.size(), 0);
    for (int64_t r : mine) {
      const int64_t p = l_.process_of[static_cast<size_t>(r)];
      const unsigned char* from = p == l_.me ? At(LocalSrc(static_cast<size_t>(local_index(r))), 0)
                                             : Recv(p).data() + offset[static_cast<size_t>(p)];
      if (p != l_.me) offset[static_cast<size_t>(p)] += b;
      Copy(inst_->scratch.data() + r * b, from, b);
    }
    return XLAC_RT_OK;
  }

  XlacRtDevice* dev_;
  const CrossCollective& c_;
  Instance* inst_;
  const Layout& l_;
  const int64_t n_;
  std::vector<Bytes> send_, recv_;
};

}  // namespace

std::vector<int64_t> PermuteSources(const CrossCollective& c) {
  const std::vector<int64_t>& devices = *c.devices;
  std::vector<int64_t> source(devices.size(), -1);
  auto rank_of = [&](int64_t device) {
    return static_cast<int64_t>(std::find(devices.begin(), devices.end(), device) - devices.begin());
  };
  for (int64_t p = 0; p < c.num_pairs; ++p) {
    source[static_cast<size_t>(rank_of(c.pairs[2 * p + 1]))] = rank_of(c.pairs[2 * p]);  // the last pair wins
  }
  return source;
}

bool SpansProcesses(const XlacRtGroup* group, const std::vector<int64_t>& devices) {
  if (group->transport == nullptr) return false;
  return std::any_of(devices.begin(), devices.end(),
                     [&](int64_t d) { return d < group->local_begin || d >= group->local_end; });
}

int RunAcrossProcesses(XlacRtDevice* dev, const CrossCollective& c) {
  XlacRtGroup* group = dev->group;
  const std::vector<int64_t>& devices = *c.devices;
  Layout layout = MakeLayout(group, devices);
  const std::vector<int64_t>& local = layout.local();
  std::vector<int64_t> local_devices;
  int64_t local_rank = 0, rank = 0;
  for (int64_t r : local) {
    if (devices[static_cast<size_t>(r)] == dev->id) {
      local_rank = static_cast<int64_t>(local_devices.size());
      rank = r;
    }
    local_devices.push_back(devices[static_cast<size_t>(r)]);
  }
  Instance* inst =
      Arrive(dev, c.op_id, c.name, c.kind, local_devices, local_rank, c.src, c.dst, c.match_size, c.element_bytes, 0);
  if (inst == nullptr) return dev->code;
  if (local_rank == 0) {
    std::string error;
    int code = Leader(dev, c, inst, layout).Run(error);
    if (code != XLAC_RT_OK) {
      inst->exchange_failed = true;  // peers read it after the sync, which orders it through the group mutex
      // Cancelled: another process failed first and has told everyone.
      RecordError(dev, code, What(c.name, c.op_id) + ": " + error, /*consequence=*/code == XLAC_RT_ERROR_CANCELLED);
    }
  }
  Sync(dev, inst);
  if (inst->exchange_failed) {
    if (local_rank != 0) {
      RecordError(dev, XLAC_RT_ERROR_CANCELLED,
                  What(c.name, c.op_id) + ": cancelled because the exchange with other processes failed",
                  /*consequence=*/true);
    }
    Depart(dev, inst);
    return dev->code;
  }
  // Only the scratch is read from here on: every source was copied before the sync, so dst may be written.
  const unsigned char* scratch = inst->scratch.data();
  auto* dst = static_cast<unsigned char*>(c.dst);
  const int64_t n = static_cast<int64_t>(devices.size());
  switch (c.kind) {
    case CollectiveKind::kAllGather:
      Copy(dst, scratch, n * c.bytes);
      break;
    case CollectiveKind::kAllReduce:
      Copy(dst, scratch, c.count * c.element_bytes);
      break;
    case CollectiveKind::kAllToAll:
      Copy(dst, scratch + local_rank * n * c.bytes, n * c.bytes);
      break;
    case CollectiveKind::kReduceScatter: {
      const int64_t chunk = c.count * c.element_bytes;
      std::vector<const unsigned char*> parts(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) parts[static_cast<size_t>(i)] = scratch + (local_rank * n + i) * chunk;
      FoldInto(dst, parts, c.count, c.element_bytes, c.combine, c.combine_ctx);
      break;
    }
    case CollectiveKind::kPermute: {
      int64_t source = PermuteSources(c)[static_cast<size_t>(rank)];
      if (source < 0) {
        if (c.bytes > 0) std::memset(dst, 0, static_cast<size_t>(c.bytes));
      } else {
        Copy(dst, scratch + source * c.bytes, c.bytes);
      }
      break;
    }
    case CollectiveKind::kBroadcast:
      Copy(dst, scratch, c.bytes);
      break;
    case CollectiveKind::kBarrier:
      break;
  }
  Depart(dev, inst);
  return XLAC_RT_OK;
}

}  // namespace xlac::rt
