// The worker pool behind parallel loops. A parallel_for publishes a job of contiguous chunks; the calling thread and
// up to `max_helpers` pool workers claim chunks with one atomic increment each until none is left, and the caller
// returns once every helper has left the job. Because the caller works on its own job, nested and concurrent
// parallel_for calls always make progress.
//
// Latency matters more than fairness here: a compiled program issues one parallel loop per kernel, often a few
// microseconds apart, so idle workers spin on an epoch counter for a short while before they sleep on the condition
// variable (a futex wake costs tens of microseconds, a whole small kernel).
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

#include "runtime/cpu/internal.h"

namespace {

void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

// About 50-100 us of pause instructions: longer than the gap between two kernels of one program, short enough
// that an idle process does not burn a core.
constexpr int kSpinIterations = 1 << 12;

struct Job {
  void (*fn)(int64_t, int64_t, void*);
  void* ctx;
  int64_t n;
  int64_t chunks;
  int max_helpers;
  int helpers = 0;               // joined so far (guarded by the pool mutex)
  std::atomic<int64_t> next{0};  // next chunk to claim
  std::atomic<int> active{0};    // helpers still inside the job

  // Runs chunks until none is left.
  void Work() {
    for (;;) {
      int64_t index = next.fetch_add(1, std::memory_order_relaxed);
      if (index >= chunks) return;
      int64_t base = n / chunks, rem = n % chunks;
      int64_t begin = index * base + std::min(index, rem);
      int64_t end = begin + base + (index < rem ? 1 : 0);
      fn(begin, end, ctx);
    }
  }
};

}  // namespace

struct XlacRtThreadPool {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Job*> jobs;  // jobs that may take more helpers (guarded by mu)
  std::atomic<uint64_t> epoch{0};
  int sleepers = 0;  // guarded by mu
  bool stop = false;
  std::vector<std::thread> workers;  // guarded by mu
  std::atomic<int> threads{1};       // workers + the calling thread

  // A job with unclaimed chunks that takes another helper; the caller holds mu.
  Job* Joinable() {
    for (Job* job : jobs) {
      if (job->helpers < job->max_helpers && job->next.load(std::memory_order_relaxed) < job->chunks) return job;
    }
    return nullptr;
  }

  void WorkerLoop() {
    uint64_t seen = epoch.load(std::memory_order_acquire);
    for (;;) {
      for (int spin = 0; spin < kSpinIterations; ++spin) {
        if (epoch.load(std::memory_order_acquire) != seen) break;
        CpuRelax();
      }
      Job* job = nullptr;
      {
        std::unique_lock<std::mutex> lock(mu);
        for (;;) {
          seen = epoch.load(std::memory_order_acquire);
          if (stop) return;
          job = Joinable();
          if (job != nullptr) break;
          if (epoch.load(std::memory_order_acquire) != seen) continue;
          ++sleepers;
          cv.wait(lock, [&] { return stop || epoch.load(std::memory_order_acquire) != seen; });
          --sleepers;
        }
        ++job->helpers;
        job->active.fetch_add(1, std::memory_order_relaxed);
      }
      job->Work();
      // The last access to the job: its owner may return (and free it) right after.
      job->active.fetch_sub(1, std::memory_order_release);
    }
  }

  void AddWorkers(int total) {
    std::lock_guard<std::mutex> lock(mu);
    while (static_cast<int>(workers.size()) + 1 < total) {
      try {
        workers.emplace_back([this] { WorkerLoop(); });
      } catch (const std::system_error&) {
        break;  // fewer workers only means less parallelism
      }
    }
    threads.store(static_cast<int>(workers.size()) + 1, std::memory_order_release);
  }

  void ParallelFor(int64_t n, void (*fn)(int64_t, int64_t, void*), void* ctx, int max_threads,
                   int64_t chunks_per_thread = 4) {
    int participants = std::min(max_threads, threads.load(std::memory_order_acquire));
    if (n <= 0) return;
    if (participants <= 1 || n == 1) {
      fn(0, n, ctx);
      return;
    }
    // A few chunks per thread balance uneven chunk costs (and a late worker) at one atomic increment each.
    Job job{fn, ctx, n, std::min<int64_t>(n, chunks_per_thread * participants), participants - 1};
    {
      std::lock_guard<std::mutex> lock(mu);
      jobs.push_back(&job);
      epoch.fetch_add(1, std::memory_order_acq_rel);
      if (sleepers > 0) cv.notify_all();
    }
    job.Work();
    {
      std::lock_guard<std::mutex> lock(mu);
      jobs.erase(std::find(jobs.begin(), jobs.end(), &job));
    }
    // No helper joins any more; wait for those inside (they are finishing their last chunk).
    for (int spin = 0; job.active.load(std::memory_order_acquire) != 0; ++spin) {
      if (spin < kSpinIterations) {
        CpuRelax();
      } else {
        std::this_thread::yield();
      }
    }
  }
};

extern "C" {

XlacRtThreadPool* xlac_rt_thread_pool_create(int threads) {
  auto* pool = new XlacRtThreadPool;
  pool->AddWorkers(threads);
  return pool;
}

void xlac_rt_thread_pool_destroy(XlacRtThreadPool* pool) {
  if (pool == nullptr) return;
  std::vector<std::thread> workers;
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    pool->stop = true;
    pool->epoch.fetch_add(1, std::memory_order_acq_rel);
    workers.swap(pool->workers);
  }
  pool->cv.notify_all();
  for (std::thread& t : workers) t.join();
  delete pool;
}

int xlac_rt_thread_pool_threads(XlacRtThreadPool* pool) {
  return pool == nullptr ? 1 : pool->threads.load(std::memory_order_acquire);
}

XlacRtThreadPool* xlac_rt_shared_thread_pool(int threads) {
  // Never destroyed: its workers may be in use until the process exits.
  static XlacRtThreadPool* const pool = new XlacRtThreadPool;
  if (threads > xlac_rt_thread_pool_threads(pool)) pool->AddWorkers(threads);
  return pool;
}

int xlac_rt_available_cpus(void) {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    int count = CPU_COUNT(&set);
    if (count > 0) return count;
  }
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

void xlac_rt_parallel_for(XlacRtThreadPool* pool, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                          void* ctx) {
  if (pool == nullptr) {
    if (n > 0) fn(0, n, ctx);
    return;
  }
  pool->ParallelFor(n, fn, ctx, pool->threads.load(std::memory_order_acquire));
}

// The device's share of its group's pool runs [0, n) in chunks_per_thread ranges per thread (inline without a pool).
static void DeviceParallelFor(XlacRtDevice* dev, int64_t n, void (*fn)(int64_t, int64_t, void*), void* ctx,
                              int64_t chunks_per_thread) {
  XlacRtThreadPool* pool = dev == nullptr ? nullptr : dev->group->pool;
  if (pool == nullptr) {
    if (n > 0) fn(0, n, ctx);
    return;
  }
  pool->ParallelFor(n, fn, ctx, static_cast<int>(xlac_rt_device_threads(dev)), chunks_per_thread);
}

void xlac_rt_device_parallel_for(XlacRtDevice* dev, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                                 void* ctx) {
  DeviceParallelFor(dev, n, fn, ctx, /*chunks_per_thread=*/4);
}

void xlac_rt_device_parallel_split(XlacRtDevice* dev, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                                   void* ctx) {
  DeviceParallelFor(dev, n, fn, ctx, /*chunks_per_thread=*/1);
}

}  // extern "C"
