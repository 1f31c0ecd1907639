// XlacRtTransport over MPI point-to-point messages (see xlac_runtime_mpi.h for the protocol and the threading).
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/mpi/xlac_runtime_mpi.h"

namespace {

struct State {
  bool initialized_here = false;
  bool ready = false;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0;
  int size = 1;
  int tag_ub = 32767;
  XlacRtTransport transport{};
  std::atomic<int64_t> bytes_sent{0};
  // Failure notices (tag tag_ub - 1): once one arrives, or this process sent one, every exchange fails at once. The
  // processes are out of step after a failed run, so it stays so until finalize.
  std::mutex fail_mu;
  std::atomic<bool> failed{false};
  std::string failure;  // "process P failed (device D: message)", guarded by fail_mu
  // Point-to-point send/recv (tag tag_ub - 2), guarded by p2p_mu.
  std::mutex p2p_mu;
  struct Outgoing {
    std::vector<MPI_Request> requests;  // one per other process
    std::vector<unsigned char> buffer;  // header and payload, read by MPI until the requests complete
  };
  std::vector<std::unique_ptr<Outgoing>> outgoing;
  // Arrived messages by (run, channel, seq): the sender's process and the message (header first).
  std::map<std::tuple<int64_t, int64_t, int64_t>, std::pair<int, std::vector<unsigned char>>> inbox;
  std::vector<int64_t> p2p_sent, p2p_received;  // messages to / from each process, for finalize
};
State& S() {
  static State state;
  return state;
}

// Messages larger than one MPI count can say go as several pieces of the same tag (they cannot overtake each other).
constexpr int64_t kPiece = int64_t{1} << 30;

struct Header {
  int64_t kind, op_id, generation, step, bytes;
};

void Fill(XlacRtStatus* status, int code, const std::string& message) {
  if (status == nullptr) return;
  status->code = code;
  status->device = -1;
  std::snprintf(status->message, sizeof status->message, "%s", message.c_str());
}

int Message(char* out, size_t capacity, int code, const std::string& message) {
  std::snprintf(out, capacity, "%s", message.c_str());
  return code;
}

std::string MpiError(int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) return "MPI error " + std::to_string(rc);
  return std::string(text, static_cast<size_t>(len));
}

std::string DevicesOf(int64_t process, int64_t per_process) {
  return "process " + std::to_string(process) + " (devices " + std::to_string(process * per_process) + "-" +
         std::to_string((process + 1) * per_process - 1) + ")";
}

// Posts sends or receives of `bytes` at `data` in pieces; each request is tagged with the peer for messages.
int Post(bool send, unsigned char* data, int64_t bytes, int peer, int tag, std::vector<MPI_Request>& requests,
         std::vector<int>& peers) {
  int64_t offset = 0;
  do {
    int count = static_cast<int>(std::min(kPiece, bytes - offset));
    MPI_Request request;
    int rc = send ? MPI_Isend(data + offset, count, MPI_BYTE, peer, tag, S().comm, &request)
                  : MPI_Irecv(data + offset, count, MPI_BYTE, peer, tag, S().comm, &request);
    if (rc != MPI_SUCCESS) return rc;
    requests.push_back(request);
    peers.push_back(peer);
    offset += count;
  } while (offset < bytes);
  return MPI_SUCCESS;
}

// Gives up on an exchange whose requests may still be in flight: receives are cancelled, every request is freed, and
// the buffers they point into are kept alive for the rest of the process (MPI may still read or write them). Only
// failed runs get here, and those end the processes.
void Abandon(std::vector<MPI_Request>& requests, const std::vector<char>& done,
             std::vector<std::vector<unsigned char>>&& out, std::vector<std::vector<unsigned char>>&& in) {
  for (size_t r = 0; r < requests.size(); ++r) {
    if (done[r] || requests[r] == MPI_REQUEST_NULL) continue;
    MPI_Cancel(&requests[r]);
    MPI_Request_free(&requests[r]);
  }
  struct Kept {
    std::vector<std::vector<unsigned char>> out, in;
  };
  static std::vector<Kept*>* kept = new std::vector<Kept*>;  // never freed, on purpose
  static std::mutex mu;
  std::lock_guard<std::mutex> lock(mu);
  kept->push_back(new Kept{std::move(out), std::move(in)});
}

int FailTag() { return S().tag_ub - 1; }

// Sends `message` to every other process. Called with the runtime's group lock held: only non-blocking calls.
void Fail(void* /*user*/, const char* message) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.fail_mu);
  if (s.failed.exchange(true)) return;  // the processes already know of a failure
  s.failure = "process " + std::to_string(s.rank) + " failed (" + message + ")";
  static std::vector<std::string>* notices = new std::vector<std::string>;  // read by MPI after we return
  notices->push_back(s.failure);
  const std::string& notice = notices->back();
  for (int p = 0; p < s.size; ++p) {
    if (p == s.rank) continue;
    MPI_Request request;
    if (MPI_Isend(notice.data(), static_cast<int>(std::min<size_t>(notice.size(), 4096)), MPI_CHAR, p, FailTag(),
                  s.comm, &request) == MPI_SUCCESS) {
      MPI_Request_free(&request);
    }
  }
}

// True (with the message) once any process has failed: a notice arrived, or this process sent one.
bool KnownFailure(std::string& failure) {
  State& s = S();
  if (!s.failed.load()) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, FailTag(), s.comm, &flag, &st) != MPI_SUCCESS || !flag) return false;
    std::lock_guard<std::mutex> lock(s.fail_mu);
    if (!s.failed.load()) {
      int count = 0;
      MPI_Get_count(&st, MPI_CHAR, &count);
      std::string notice(static_cast<size_t>(std::max(count, 0)), '\0');
      MPI_Recv(notice.data(), count, MPI_CHAR, st.MPI_SOURCE, FailTag(), s.comm, MPI_STATUS_IGNORE);
      s.failure = notice;
      s.failed.store(true);
    }
  }
  std::lock_guard<std::mutex> lock(s.fail_mu);
  failure = s.failure;
  return true;
}

int Cancelled(char* message, size_t capacity, const std::string& failure) {
  return Message(message, capacity, XLAC_RT_ERROR_CANCELLED, "cancelled because " + failure);
}

const char* KindName(int64_t kind, const XlacRtExchange* x) {
  return kind == x->kind ? x->kind_name : "another collective";
}

int Exchange(void* /*user*/, const XlacRtExchange* x, char* message, size_t capacity) {
  State& s = S();
  const int64_t per = x->devices_per_process;
  const int64_t total_devices = per * s.size;
  std::string failure;
  if (KnownFailure(failure)) return Cancelled(message, capacity, failure);
  // Tags: op_id * devices + the group's first device; tag_ub - 2 is for send/recv, tag_ub - 1 for failure notices,
  // tag_ub for the gather.
  const int64_t tag64 = x->op_id * total_devices + x->devices[0];
  if (x->op_id < 0 || tag64 >= s.tag_ub - 2) {
    return Message(message, capacity, XLAC_RT_ERROR_UNIMPLEMENTED,
                   "op " + std::to_string(x->op_id) + " over " + std::to_string(total_devices) +
                       " devices exceeds the MPI library's tag range (" + std::to_string(s.tag_ub) + ")");
  }
  const int tag = static_cast<int>(tag64);
  std::vector<char> participates(static_cast<size_t>(s.size), 0);
  for (int64_t i = 0; i < x->num_devices; ++i) participates[static_cast<size_t>(x->devices[i] / per)] = 1;

  // One message per peer: a header the receiver checks, then the payload.
  std::vector<int> peers;
  std::vector<std::vector<unsigned char>> out(static_cast<size_t>(s.size)), in(static_cast<size_t>(s.size));
  std::vector<MPI_Request> requests;
  std::vector<int> request_peer;
  int64_t sent = 0;
  for (int p = 0; p < s.size; ++p) {
    if (p == s.rank || !participates[static_cast<size_t>(p)]) continue;
    peers.push_back(p);
    std::vector<unsigned char>& to = out[static_cast<size_t>(p)];
    std::vector<unsigned char>& from = in[static_cast<size_t>(p)];
    Header header{x->kind, x->op_id, x->generation, x->step, x->send_bytes[p]};
    to.resize(sizeof(Header) + static_cast<size_t>(x->send_bytes[p]));
    std::memcpy(to.data(), &header, sizeof header);
    if (x->send_bytes[p] > 0) {
      std::memcpy(to.data() + sizeof(Header), x->send[p], static_cast<size_t>(x->send_bytes[p]));
    }
    sent += x->send_bytes[p];
    from.resize(sizeof(Header) + static_cast<size_t>(x->recv_bytes[p]));
    int rc = Post(false, from.data(), static_cast<int64_t>(from.size()), p, tag, requests, request_peer);
    if (rc == MPI_SUCCESS) rc = Post(true, to.data(), static_cast<int64_t>(to.size()), p, tag, requests, request_peer);
    if (rc != MPI_SUCCESS) {
      Abandon(requests, std::vector<char>(requests.size(), 0), std::move(out), std::move(in));
      return Message(message, capacity, XLAC_RT_ERROR_EXECUTION, "MPI: " + MpiError(rc));
    }
  }
  // Poll rather than block, so a peer that never comes ends this exchange at the timeout, naming the peer.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(x->timeout_ms);
  std::vector<char> done(requests.size(), 0);
  size_t remaining = requests.size();
  for (int spin = 0; remaining > 0; ++spin) {
    for (size_t r = 0; r < requests.size(); ++r) {
      if (done[r]) continue;
      int flag = 0;
      MPI_Status st;
      int rc = MPI_Test(&requests[r], &flag, &st);
      if (rc != MPI_SUCCESS) {
        done[r] = 1;  // an erroneous request is complete
        Abandon(requests, done, std::move(out), std::move(in));
        return Message(message, capacity, XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                       "exchanging with " + DevicesOf(request_peer[r], per) + ": MPI: " + MpiError(rc) +
                           " (do all processes run the same program?)");
      }
      if (flag) {
        done[r] = 1;
        --remaining;
      }
    }
    if (remaining == 0) break;
    if (KnownFailure(failure)) {
      Abandon(requests, done, std::move(out), std::move(in));
      return Cancelled(message, capacity, failure);
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      std::string missing;
      for (size_t r = 0; r < requests.size(); ++r) {
        if (done[r]) continue;
        std::string who = DevicesOf(request_peer[r], per);
        if (missing.find(who) == std::string::npos) missing += (missing.empty() ? "" : ", ") + who;
      }
      Abandon(requests, done, std::move(out), std::move(in));
      return Message(message, capacity, XLAC_RT_ERROR_DEADLINE_EXCEEDED,
                     "waited " + std::to_string(x->timeout_ms) + " ms but " + missing + " never arrived");
    }
    // Back off from busy polling: ranks often share cores (mpirun --oversubscribe).
    if (spin < 64) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(spin < 1024 ? 20 : 200));
    }
  }
  for (int p : peers) {
    const std::vector<unsigned char>& from = in[static_cast<size_t>(p)];
    Header got;
    std::memcpy(&got, from.data(), sizeof got);
    if (got.kind != x->kind || got.op_id != x->op_id || got.generation != x->generation || got.step != x->step ||
        got.bytes != x->recv_bytes[p]) {
      return Message(message, capacity, XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                     DevicesOf(p, per) + " sent " + KindName(got.kind, x) + " op " + std::to_string(got.op_id) +
                         " (execution " + std::to_string(got.generation) + ", step " + std::to_string(got.step) +
                         ") with " + std::to_string(got.bytes) + " bytes where this process ran " + x->kind_name +
                         " op " + std::to_string(x->op_id) + " (execution " + std::to_string(x->generation) +
                         ", step " + std::to_string(x->step) + ") expecting " + std::to_string(x->recv_bytes[p]) +
                         " bytes");
    }
    if (x->recv_bytes[p] > 0) {
      std::memcpy(x->recv[p], from.data() + sizeof(Header), static_cast<size_t>(x->recv_bytes[p]));
    }
  }
  s.bytes_sent.fetch_add(sent, std::memory_order_relaxed);
  return XLAC_RT_OK;
}

// ---- send/recv across processes (XlacRtTransport::p2p_post / p2p_take) ----

struct P2pHeader {
  int64_t run, channel, seq, device, bytes;
};

int P2pTag() { return S().tag_ub - 2; }

// Frees the buffers of sends every process has received. Needs p2p_mu.
void ReapSends() {
  State& s = S();
  auto done = [](std::unique_ptr<State::Outgoing>& out) {
    int flag = 0;
    MPI_Testall(static_cast<int>(out->requests.size()), out->requests.data(), &flag, MPI_STATUSES_IGNORE);
    return flag != 0;
  };
  s.outgoing.erase(std::remove_if(s.outgoing.begin(), s.outgoing.end(), done), s.outgoing.end());
}

// Moves every message that has arrived into the inbox (dropping those of runs before `run`, and with run < 0 none).
// Needs p2p_mu, which also keeps two threads from receiving the message one of them probed.
void DrainInbox(int64_t run) {
  State& s = S();
  for (;;) {
    int flag = 0;
    MPI_Status st;
    if (MPI_Iprobe(MPI_ANY_SOURCE, P2pTag(), s.comm, &flag, &st) != MPI_SUCCESS || !flag) break;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    std::vector<unsigned char> message(static_cast<size_t>(std::max(count, 0)));
    MPI_Recv(message.data(), count, MPI_BYTE, st.MPI_SOURCE, P2pTag(), s.comm, MPI_STATUS_IGNORE);
    ++s.p2p_received[static_cast<size_t>(st.MPI_SOURCE)];
    if (message.size() < sizeof(P2pHeader)) continue;
    P2pHeader header;
    std::memcpy(&header, message.data(), sizeof header);
    if (run >= 0 && header.run < run) continue;
    s.inbox[{header.run, header.channel, header.seq}] = {st.MPI_SOURCE, std::move(message)};
  }
  if (run < 0) return;
  while (!s.inbox.empty() && std::get<0>(s.inbox.begin()->first) < run) s.inbox.erase(s.inbox.begin());
}

int P2pPost(void* /*user*/, int64_t run, int64_t channel, int64_t seq, int64_t device, const void* data, int64_t bytes,
            char* message, size_t capacity) {
  State& s = S();
  std::string failure;
  if (KnownFailure(failure)) return Cancelled(message, capacity, failure);
  if (bytes < 0 || bytes > INT_MAX - static_cast<int64_t>(sizeof(P2pHeader))) {
    return Message(message, capacity, XLAC_RT_ERROR_UNIMPLEMENTED,
                   "a message of " + std::to_string(bytes) + " bytes is too large to send between processes");
  }
  auto out = std::make_unique<State::Outgoing>();
  P2pHeader header{run, channel, seq, device, bytes};
  out->buffer.resize(sizeof header + static_cast<size_t>(bytes));
  std::memcpy(out->buffer.data(), &header, sizeof header);
  if (bytes > 0) std::memcpy(out->buffer.data() + sizeof header, data, static_cast<size_t>(bytes));
  std::lock_guard<std::mutex> lock(s.p2p_mu);
  ReapSends();
  for (int p = 0; p < s.size; ++p) {
    if (p == s.rank) continue;
    MPI_Request request;
    int rc =
        MPI_Isend(out->buffer.data(), static_cast<int>(out->buffer.size()), MPI_BYTE, p, P2pTag(), s.comm, &request);
    if (rc != MPI_SUCCESS) {
      s.outgoing.push_back(std::move(out));  // earlier sends may still read the buffer
      return Message(message, capacity, XLAC_RT_ERROR_EXECUTION, "MPI: " + MpiError(rc));
    }
    out->requests.push_back(request);
    ++s.p2p_sent[static_cast<size_t>(p)];
    s.bytes_sent.fetch_add(bytes, std::memory_order_relaxed);
  }
  s.outgoing.push_back(std::move(out));
  return XLAC_RT_OK;
}

int P2pTake(void* /*user*/, int64_t run, int64_t channel, int64_t seq, void* data, int64_t bytes, int* found,
            char* message, size_t capacity) {
  State& s = S();
  *found = 0;
  std::string failure;
  if (KnownFailure(failure)) return Cancelled(message, capacity, failure);
  std::lock_guard<std::mutex> lock(s.p2p_mu);
  ReapSends();
  DrainInbox(run);
  if (channel < 0) return XLAC_RT_OK;
  auto it = s.inbox.find({run, channel, seq});
  if (it == s.inbox.end()) return XLAC_RT_OK;
  const std::vector<unsigned char>& got = it->second.second;
  P2pHeader header;
  std::memcpy(&header, got.data(), sizeof header);
  if (header.bytes != bytes || got.size() != sizeof header + static_cast<size_t>(bytes)) {
    return Message(message, capacity, XLAC_RT_ERROR_COLLECTIVE_MISMATCH,
                   "received " + std::to_string(header.bytes) + " bytes from device " + std::to_string(header.device) +
                       " (process " + std::to_string(it->second.first) + ") but expected " + std::to_string(bytes));
  }
  if (bytes > 0) std::memcpy(data, got.data() + sizeof header, static_cast<size_t>(bytes));
  s.inbox.erase(it);
  *found = 1;
  return XLAC_RT_OK;
}

// Collective, at finalize: receives every message no receiver took (a process only learns here how many the others
// sent it) and waits for this process's sends, so none is left in flight.
void FlushP2p() {
  State& s = S();
  std::vector<int64_t> incoming(static_cast<size_t>(s.size), 0);
  MPI_Alltoall(s.p2p_sent.data(), 1, MPI_INT64_T, incoming.data(), 1, MPI_INT64_T, s.comm);
  std::lock_guard<std::mutex> lock(s.p2p_mu);
  for (int p = 0; p < s.size; ++p) {
    while (s.p2p_received[static_cast<size_t>(p)] < incoming[static_cast<size_t>(p)]) {
      MPI_Status st;
      MPI_Probe(p, P2pTag(), s.comm, &st);
      DrainInbox(-1);
    }
  }
  s.inbox.clear();
  for (auto& out : s.outgoing) {
    MPI_Waitall(static_cast<int>(out->requests.size()), out->requests.data(), MPI_STATUSES_IGNORE);
  }
  s.outgoing.clear();
}

}  // namespace

extern "C" {

int xlac_rt_mpi_init(XlacRtStatus* status) {
  State& s = S();
  if (s.ready) {
    Fill(status, XLAC_RT_OK, "");
    return XLAC_RT_OK;
  }
  int initialized = 0, provided = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
      Fill(status, XLAC_RT_ERROR_EXECUTION, "MPI_Init_thread failed");
      return XLAC_RT_ERROR_EXECUTION;
    }
    s.initialized_here = true;
  } else {
    MPI_Query_thread(&provided);
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    Fill(status, XLAC_RT_ERROR_UNIMPLEMENTED,
         "the MPI library does not provide MPI_THREAD_MULTIPLE (device threads exchange concurrently)");
    return XLAC_RT_ERROR_UNIMPLEMENTED;
  }
  MPI_Comm_dup(MPI_COMM_WORLD, &s.comm);
  // Errors come back as codes and become messages; the default handler would abort without saying which collective.
  MPI_Comm_set_errhandler(s.comm, MPI_ERRORS_RETURN);
  MPI_Comm_rank(s.comm, &s.rank);
  MPI_Comm_size(s.comm, &s.size);
  int* tag_ub = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tag_ub, &flag);
  if (flag && tag_ub != nullptr) s.tag_ub = *tag_ub;
  s.transport = XlacRtTransport{s.rank, s.size, nullptr, &Exchange, &Fail, &P2pPost, &P2pTake};
  s.p2p_sent.assign(static_cast<size_t>(s.size), 0);
  s.p2p_received.assign(static_cast<size_t>(s.size), 0);
  s.ready = true;
  Fill(status, XLAC_RT_OK, "");
  return XLAC_RT_OK;
}

void xlac_rt_mpi_finalize(void) {
  State& s = S();
  if (!s.ready) return;
  // Every process has written its output before any leaves: mpirun ends the job when the first process exits with
  // an error, and the others' messages must not be lost then.
  FlushP2p();
  MPI_Barrier(s.comm);
  MPI_Comm_free(&s.comm);
  s.ready = false;
  if (s.initialized_here) MPI_Finalize();
}

void xlac_rt_mpi_abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
}

int xlac_rt_mpi_recover(XlacRtStatus* status) {
  State& s = S();
  if (!s.ready) {
    Fill(status, XLAC_RT_OK, "");
    return XLAC_RT_OK;
  }
  MPI_Comm fresh;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &fresh);
  if (rc != MPI_SUCCESS) {
    Fill(status, XLAC_RT_ERROR_EXECUTION, "MPI: " + MpiError(rc));
    return XLAC_RT_ERROR_EXECUTION;
  }
  MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
  std::lock_guard<std::mutex> lock(s.fail_mu);
  // Unreceived messages of the failed run stay behind with the old communicator (and the buffers of unfinished
  // sends stay allocated: MPI may still read them).
  MPI_Comm_free(&s.comm);
  {
    std::lock_guard<std::mutex> p2p_lock(s.p2p_mu);
    s.inbox.clear();
    for (auto& out : s.outgoing) {
      for (MPI_Request& request : out->requests) {
        if (request != MPI_REQUEST_NULL) MPI_Request_free(&request);
      }
      (void)out.release();  // never freed, on purpose
    }
    s.outgoing.clear();
    s.p2p_sent.assign(static_cast<size_t>(s.size), 0);
    s.p2p_received.assign(static_cast<size_t>(s.size), 0);
  }
  s.comm = fresh;
  s.failure.clear();
  s.failed.store(false);
  Fill(status, XLAC_RT_OK, "");
  return XLAC_RT_OK;
}

int64_t xlac_rt_mpi_process_index(void) { return S().ready ? S().rank : 0; }
int64_t xlac_rt_mpi_process_count(void) { return S().ready ? S().size : 1; }
const XlacRtTransport* xlac_rt_mpi_transport(void) { return S().ready ? &S().transport : nullptr; }
int64_t xlac_rt_mpi_bytes_sent(void) { return S().bytes_sent.load(); }

int64_t xlac_rt_mpi_first_mismatch(uint64_t fingerprint) {
  State& s = S();
  if (!s.ready || s.size == 1) return -1;
  std::vector<uint64_t> all(static_cast<size_t>(s.size));
  MPI_Allgather(&fingerprint, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, s.comm);
  for (int p = 1; p < s.size; ++p) {
    if (all[static_cast<size_t>(p)] != all[0]) return p;
  }
  return -1;
}

int xlac_rt_mpi_gather(const void* data, int64_t bytes, void* out, XlacRtStatus* status) {
  State& s = S();
  if (bytes < 0 || (s.rank == 0 && out == nullptr && bytes > 0)) {
    Fill(status, XLAC_RT_ERROR_INVALID_ARGUMENT, "xlac_rt_mpi_gather: bad arguments");
    return XLAC_RT_ERROR_INVALID_ARGUMENT;
  }
  if (s.rank == 0 && bytes > 0) std::memcpy(out, data, static_cast<size_t>(bytes));
  if (!s.ready || s.size == 1) {
    Fill(status, XLAC_RT_OK, "");
    return XLAC_RT_OK;
  }
  std::vector<MPI_Request> requests;
  std::vector<int> peers;
  int rc = MPI_SUCCESS;
  if (s.rank == 0) {
    for (int p = 1; p < s.size && rc == MPI_SUCCESS; ++p) {
      rc = Post(false, static_cast<unsigned char*>(out) + p * bytes, bytes, p, s.tag_ub, requests, peers);
    }
  } else {
    rc = Post(true, static_cast<unsigned char*>(const_cast<void*>(data)), bytes, 0, s.tag_ub, requests, peers);
  }
  if (rc == MPI_SUCCESS) rc = MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  if (rc != MPI_SUCCESS) {
    Fill(status, XLAC_RT_ERROR_EXECUTION, "gathering the results on process 0: MPI: " + MpiError(rc));
    return XLAC_RT_ERROR_EXECUTION;
  }
  Fill(status, XLAC_RT_OK, "");
  return XLAC_RT_OK;
}

}  // extern "C"
