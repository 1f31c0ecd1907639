// What the command-line tools share for observability (docs/observability.md): XLAC_FLAGS, the environment
// variable that adds flags to every tool's command line (as XLA_FLAGS does for XLA), and the progress line long
// compiles and interpreter runs show on a terminal. Libraries never read the environment: only the tools' main
// functions call WithXlacFlags.
#pragma once

#include <condition_variable>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace xlac {

// `args` (argv without argv[0]) with the whitespace-separated flags of `xlac_flags` (the value of XLAC_FLAGS, may be
// null) inserted before them, so a flag given on the command line wins over the environment's.
std::vector<std::string> WithXlacFlags(std::span<const std::string_view> args, const char* xlac_flags);

// While alive, and once `delay_seconds` have passed, redraws "<label>... 3.2 s" on stderr every quarter second;
// erases the line when destroyed. Does nothing unless stderr is a terminal, so logs and tests never see it.
class ProgressLine {
 public:
  explicit ProgressLine(std::string label, double delay_seconds = 2.0);
  ~ProgressLine();
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  static bool StderrIsTerminal();

 private:
  std::string label_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool drawn_ = false;
  std::thread thread_;
};

}  // namespace xlac
