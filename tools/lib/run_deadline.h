// xla-run --timeout: the watchdog that ends the process when a run takes too long.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>

namespace xlac {

// --timeout: a thread that ends the process with an error if it is not disarmed in time. Compiled code and the
// interpreter have no cancellation points (an infinite while loop never returns), so ending the process is the only
// way out; it happens before any output is printed or written, never in the middle of it.
class Deadline {
 public:
  Deadline(double seconds, std::string message) : message_(std::move(message)) {
    thread_ = std::thread([this, seconds] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return disarmed_; })) {
        std::fputs(message_.c_str(), stderr);
        std::fflush(stderr);
        std::_Exit(1);
      }
    });
  }
  ~Deadline() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      disarmed_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::string message_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool disarmed_ = false;
  std::thread thread_;
};

}  // namespace xlac
