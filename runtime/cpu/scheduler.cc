// Devices multiplexed on fewer OS threads (xlac_rt_group_set_os_threads). Each local device runs as a fiber (its own
// stack, ucontext) on one of W worker threads, device d on worker (d - first) % W, and never moves: whatever a
// thread-local holds stays with the device's worker. A fiber runs until it has to wait in the runtime (a collective
// whose peers have not arrived, a recv whose message has not been sent); then it parks and its worker resumes the
// next ready fiber of its own, so a wait costs a context switch in user space instead of a futex wake per device,
// and 256 emulated cores on 2 CPUs are 2 runnable threads, not 256.
//
// Every wait of the runtime goes through WaitLocked, every wake-up through WakeAllLocked (both under the group's
// mutex): with fibers a wake-up makes every parked fiber of the group ready, and each re-checks what it waits for,
// exactly as threads re-check after the group's condition variable. A worker with nothing ready sleeps on its own
// condition variable until a wake-up or the earliest deadline of its parked fibers, so an idle worker never spins.
#include <sys/mman.h>
#include <sys/resource.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <deque>
#include <string>
#include <system_error>
#include <thread>

#include "runtime/cpu/internal.h"
#include "runtime/cpu/sanitizers.h"
#ifdef XLAC_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

namespace xlac::rt {

using Clock = std::chrono::steady_clock;

struct Worker;

struct Fiber {
  enum class State { kReady, kRunning, kParked, kDone };
  XlacRtGroup* group = nullptr;
  XlacRtEntryFn entry = nullptr;
  void* const* buffers = nullptr;
  int64_t device = 0;
  Worker* worker = nullptr;
  ucontext_t context{};
  void* stack = nullptr;  // the mapping, guard page included
  size_t stack_bytes = 0;
  State state = State::kReady;  // guarded by the worker's mutex
  bool has_deadline = false;
  Clock::time_point deadline;
  void* fake_stack = nullptr;  // AddressSanitizer's fake stack while switched out
};

struct Worker {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<Fiber*> ready;    // guarded by mu
  std::vector<Fiber*> parked;  // guarded by mu
  int64_t unfinished = 0;      // guarded by mu
  ucontext_t scheduler{};
  // The worker thread's own stack, for AddressSanitizer's switch annotations.
  const void* stack_bottom = nullptr;
  size_t stack_size = 0;
  void* fake_stack = nullptr;
};

namespace {

// What a fiber needs to start: makecontext passes only ints, so the starting fiber is handed over here.
thread_local Fiber* starting = nullptr;

void StartSwitch([[maybe_unused]] void** save, [[maybe_unused]] const void* bottom, [[maybe_unused]] size_t size) {
#ifdef XLAC_ASAN
  __sanitizer_start_switch_fiber(save, bottom, size);
#endif
}

void FinishSwitch([[maybe_unused]] void* saved, [[maybe_unused]] const void** old_bottom,
                  [[maybe_unused]] size_t* old_size) {
#ifdef XLAC_ASAN
  __sanitizer_finish_switch_fiber(saved, old_bottom, old_size);
#endif
}

// The stack a thread would get (RLIMIT_STACK, 8 MiB when unlimited or unknown): compiled code sized its frames for
// device threads. Pages are only committed when touched.
size_t StackBytes() {
  rlimit limit{};
  size_t bytes = size_t{8} << 20;
  if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    bytes = std::clamp<size_t>(limit.rlim_cur, size_t{1} << 20, size_t{64} << 20);
  }
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

void FiberMain() {
  Fiber* f = starting;
  Worker* w = f->worker;
  FinishSwitch(nullptr, &w->stack_bottom, &w->stack_size);
  RunDevice(f->group, f->entry, f->buffers, f->device);
  {
    std::lock_guard<std::mutex> lock(w->mu);
    f->state = Fiber::State::kDone;
  }
  StartSwitch(nullptr, w->stack_bottom, w->stack_size);  // this stack dies: no fake stack to keep
  setcontext(&w->scheduler);
}

// Runs the worker's fibers until all are done.
void Schedule(Worker* w) {
  for (;;) {
    Fiber* f = nullptr;
    {
      std::unique_lock<std::mutex> lock(w->mu);
      for (;;) {
        if (w->unfinished == 0) return;
        if (!w->ready.empty()) {
          f = w->ready.front();
          w->ready.pop_front();
          break;
        }
        // Parked fibers whose deadline passed look at their wait again (they time out or wait on).
        Clock::time_point now = Clock::now(), earliest = Clock::time_point::max();
        for (auto it = w->parked.begin(); it != w->parked.end();) {
          if ((*it)->has_deadline && (*it)->deadline <= now) {
            (*it)->state = Fiber::State::kReady;
            w->ready.push_back(*it);
            it = w->parked.erase(it);
          } else {
            if ((*it)->has_deadline) earliest = std::min(earliest, (*it)->deadline);
            ++it;
          }
        }
        if (!w->ready.empty()) continue;
        if (earliest == Clock::time_point::max()) {
          w->cv.wait(lock);
        } else {
          w->cv.wait_until(lock, earliest);
        }
      }
      f->state = Fiber::State::kRunning;
    }
    starting = f;
    StartSwitch(&w->fake_stack, f->stack, f->stack_bytes);
    swapcontext(&w->scheduler, &f->context);
    FinishSwitch(w->fake_stack, nullptr, nullptr);
    std::lock_guard<std::mutex> lock(w->mu);
    if (f->state == Fiber::State::kDone) --w->unfinished;
  }
}

}  // namespace

Clock::time_point WaitDeadline(const XlacRtDevice* dev, Clock::time_point begin) {
  const XlacRtGroup* group = dev->group;
  Clock::time_point deadline = begin + group->timeout;
  if (dev->fiber != nullptr) deadline = std::max(deadline, group->progress + group->timeout);
  return deadline;
}

void WaitLocked(XlacRtDevice* dev, std::unique_lock<std::mutex>& lock, std::optional<Clock::time_point> deadline) {
  Fiber* f = dev->fiber;
  if (f == nullptr) {
    if (deadline.has_value()) {
      dev->group->cv.wait_until(lock, *deadline);
    } else {
      dev->group->cv.wait(lock);
    }
    return;
  }
  Worker* w = f->worker;
  {
    // Parked while the group's mutex is still held: a wake-up after it is released finds the fiber parked. Only
    // this worker resumes it, and not before the switch below has saved its context.
    std::lock_guard<std::mutex> worker_lock(w->mu);
    f->state = Fiber::State::kParked;
    f->has_deadline = deadline.has_value();
    if (deadline.has_value()) f->deadline = *deadline;
    w->parked.push_back(f);
  }
  lock.unlock();
  StartSwitch(&f->fake_stack, w->stack_bottom, w->stack_size);
  swapcontext(&f->context, &w->scheduler);
  FinishSwitch(f->fake_stack, nullptr, nullptr);
  lock.lock();
}

void WakeAllLocked(XlacRtGroup* group) {
  group->progress = Clock::now();
  group->cv.notify_all();
  for (Worker* w : group->workers) {
    std::lock_guard<std::mutex> lock(w->mu);
    if (w->parked.empty()) continue;
    for (Fiber* f : w->parked) {
      f->state = Fiber::State::kReady;
      w->ready.push_back(f);
    }
    w->parked.clear();
    w->cv.notify_one();
  }
}

int RunMultiplexed(XlacRtGroup* group, XlacRtEntryFn entry, void* const* const* buffers, int64_t first, int64_t end,
                   int64_t threads, std::string& error) {
  const int64_t n = end - first;
  const int64_t workers = std::clamp<int64_t>(threads, 1, n);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  if (group->fiber_stack_bytes == 0) group->fiber_stack_bytes = StackBytes();
  const size_t stack_bytes = group->fiber_stack_bytes;
  while (static_cast<int64_t>(group->fiber_stacks.size()) < n) {
    void* mapping =
        mmap(nullptr, stack_bytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (mapping == MAP_FAILED) {
      error =
          "cannot map a stack for device " + std::to_string(first + static_cast<int64_t>(group->fiber_stacks.size()));
      return XLAC_RT_ERROR_RESOURCE_EXHAUSTED;
    }
    mprotect(mapping, page, PROT_NONE);  // the guard page: an overflow faults instead of corrupting a neighbour
    group->fiber_stacks.push_back(mapping);
  }
  std::vector<Worker> pool(static_cast<size_t>(workers));
  std::vector<Fiber> fibers(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    Fiber& f = fibers[static_cast<size_t>(i)];
    f.stack_bytes = stack_bytes;
    f.stack = static_cast<char*>(group->fiber_stacks[static_cast<size_t>(i)]) + page;
    f.group = group;
    f.entry = entry;
    f.buffers = buffers[first + i];
    f.device = first + i;
    f.worker = &pool[static_cast<size_t>(i % workers)];
    getcontext(&f.context);
    f.context.uc_stack.ss_sp = f.stack;
    f.context.uc_stack.ss_size = f.stack_bytes;
    f.context.uc_link = nullptr;
    makecontext(&f.context, FiberMain, 0);
    f.worker->ready.push_back(&f);
    ++f.worker->unfinished;
  }
  {
    std::lock_guard<std::mutex> lock(group->mu);
    for (Worker& w : pool) group->workers.push_back(&w);
    for (Fiber& f : fibers) group->devices[static_cast<size_t>(f.device)]->fiber = &f;
  }
  std::vector<std::thread> threads_started;
  for (int64_t k = 1; k < workers; ++k) {
    try {
      threads_started.emplace_back(Schedule, &pool[static_cast<size_t>(k)]);
    } catch (const std::system_error&) {
      // This worker's fibers move to the calling thread's worker (none of them has started).
      Worker& lost = pool[static_cast<size_t>(k)];
      std::lock_guard<std::mutex> lock(lost.mu);
      std::lock_guard<std::mutex> mine(pool[0].mu);
      for (Fiber* f : lost.ready) {
        f->worker = &pool[0];
        pool[0].ready.push_back(f);
        ++pool[0].unfinished;
      }
      lost.ready.clear();
      lost.unfinished = 0;
    }
  }
  Schedule(&pool[0]);
  for (std::thread& t : threads_started) t.join();
  std::lock_guard<std::mutex> lock(group->mu);
  group->workers.clear();
  for (int64_t d = first; d < end; ++d) group->devices[static_cast<size_t>(d)]->fiber = nullptr;
  return XLAC_RT_OK;
}

}  // namespace xlac::rt

XlacRtGroup::~XlacRtGroup() {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  for (void* mapping : fiber_stacks) munmap(mapping, fiber_stack_bytes + page);
}

using namespace xlac::rt;

extern "C" {

void xlac_rt_group_set_os_threads(XlacRtGroup* group, int64_t threads) {
  group->os_threads = std::max<int64_t>(0, threads);
}

}  // extern "C"
