#include "tools/lib/observe_flags.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

namespace xlac {

std::vector<std::string> WithXlacFlags(std::span<const std::string_view> args, const char* xlac_flags) {
  std::vector<std::string> out;
  if (xlac_flags != nullptr) {
    std::istringstream words(xlac_flags);
    for (std::string word; words >> word;) out.push_back(word);
  }
  for (std::string_view a : args) out.emplace_back(a);
  return out;
}

bool ProgressLine::StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

ProgressLine::ProgressLine(std::string label, double delay_seconds) : label_(std::move(label)) {
  if (!StderrIsTerminal()) return;
  thread_ = std::thread([this, delay_seconds] {
    const auto start = std::chrono::steady_clock::now();
    std::unique_lock<std::mutex> lock(mu_);
    if (cv_.wait_for(lock, std::chrono::duration<double>(delay_seconds), [this] { return done_; })) return;
    do {
      double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::fprintf(stderr, "\r%s... %.1f s ", label_.c_str(), seconds);
      std::fflush(stderr);
      drawn_ = true;
    } while (!cv_.wait_for(lock, std::chrono::milliseconds(250), [this] { return done_; }));
  });
}

ProgressLine::~ProgressLine() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
  if (drawn_) {
    std::fputs("\r\033[K", stderr);  // erase the line, so what follows starts clean
    std::fflush(stderr);
  }
}

}  // namespace xlac
