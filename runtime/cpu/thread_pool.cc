// A fixed pool of worker threads for parallel loops. A parallel_for publishes a job of equal-sized chunks; idle
// workers and the calling thread claim chunks until none is left, and the caller returns when all have run. Because
// the caller works on its own job, nested and concurrent parallel_for calls always make progress.
#include <algorithm>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "runtime/cpu/xlac_runtime.h"

namespace {

struct Job {
  int64_t n;
  int64_t chunks;
  void (*fn)(int64_t, int64_t, void*);
  void* ctx;
  int64_t next = 0;  // next chunk to claim
  int64_t done = 0;  // chunks finished
};

void RunChunk(const Job& job, int64_t index) {
  int64_t base = job.n / job.chunks, rem = job.n % job.chunks;
  int64_t begin = index * base + std::min(index, rem);
  int64_t end = begin + base + (index < rem ? 1 : 0);
  job.fn(begin, end, job.ctx);
}

}  // namespace

struct XlacRtThreadPool {
  std::mutex mu;
  std::condition_variable work_cv;
  std::condition_variable done_cv;
  std::deque<Job*> jobs;  // jobs with unclaimed chunks, oldest first
  bool stop = false;
  std::vector<std::thread> workers;

  // Claims a chunk of the oldest job; the caller holds mu. Returns the job (or nullptr) and sets `index`.
  Job* Claim(int64_t& index) {
    if (jobs.empty()) return nullptr;
    Job* job = jobs.front();
    index = job->next++;
    if (job->next == job->chunks) jobs.pop_front();
    return job;
  }

  void Finished(Job* job) {
    std::lock_guard<std::mutex> lock(mu);
    if (++job->done == job->chunks) done_cv.notify_all();
  }

  void WorkerLoop() {
    for (;;) {
      Job* job;
      int64_t index;
      {
        std::unique_lock<std::mutex> lock(mu);
        work_cv.wait(lock, [&] { return stop || !jobs.empty(); });
        if (stop && jobs.empty()) return;
        job = Claim(index);
      }
      RunChunk(*job, index);
      Finished(job);
    }
  }
};

extern "C" {

XlacRtThreadPool* xlac_rt_thread_pool_create(int threads) {
  auto* pool = new XlacRtThreadPool;
  for (int i = 1; i < threads; ++i) {
    try {
      pool->workers.emplace_back([pool] { pool->WorkerLoop(); });
    } catch (const std::system_error&) {
      break;  // fewer workers only means less parallelism
    }
  }
  return pool;
}

void xlac_rt_thread_pool_destroy(XlacRtThreadPool* pool) {
  if (pool == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    pool->stop = true;
  }
  pool->work_cv.notify_all();
  for (std::thread& t : pool->workers) t.join();
  delete pool;
}

void xlac_rt_parallel_for(XlacRtThreadPool* pool, int64_t n, void (*fn)(int64_t begin, int64_t end, void* ctx),
                          void* ctx) {
  if (n <= 0) return;
  if (pool == nullptr || pool->workers.empty() || n == 1) {
    fn(0, n, ctx);
    return;
  }
  // A few chunks per thread balance uneven chunk costs without much scheduling overhead.
  int64_t threads = static_cast<int64_t>(pool->workers.size()) + 1;
  Job job{n, std::min<int64_t>(n, 4 * threads), fn, ctx};
  {
    std::lock_guard<std::mutex> lock(pool->mu);
    pool->jobs.push_back(&job);
  }
  pool->work_cv.notify_all();
  for (;;) {
    int64_t index;
    {
      std::lock_guard<std::mutex> lock(pool->mu);
      if (job.next >= job.chunks) break;
      index = job.next++;
      if (job.next == job.chunks) pool->jobs.erase(std::find(pool->jobs.begin(), pool->jobs.end(), &job));
    }
    RunChunk(job, index);
    pool->Finished(&job);
  }
  std::unique_lock<std::mutex> lock(pool->mu);
  pool->done_cv.wait(lock, [&] { return job.done == job.chunks; });
}

}  // extern "C"
