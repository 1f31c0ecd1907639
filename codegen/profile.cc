#include "codegen/profile.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "fmt/format.h"

namespace xlac::codegen {
namespace {

constexpr const char* kKindNames[kNumCollectiveKinds] = {"all-reduce", "all-gather",         "reduce-scatter",
                                                         "all-to-all", "collective-permute", "collective-broadcast",
                                                         "barrier"};

std::string FormatBytes(int64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (std::abs(v) >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  // The exact count too: the report is also read by scripts that compare it with the SPMD report.
  return u == 0 ? fmt::format("{}B", bytes) : fmt::format("{:.2f}{} ({}B)", v, units[u], bytes);
}

std::string JsonEscape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<int>(c));
        } else {
          out += c;
        }
    }
  }
  return out;
}

}  // namespace

const char* CollectiveKindName(int kind) {
  return kind >= 0 && kind < kNumCollectiveKinds ? kKindNames[kind] : "collective";
}

std::string FormatDuration(int64_t ns) {
  std::string out;
  int64_t us_total = ns / 1000;
  double us_frac = static_cast<double>(ns % 1000) / 1000.0;
  int64_t minutes = us_total / 60000000, seconds = us_total / 1000000 % 60, ms = us_total / 1000 % 1000,
          us = us_total % 1000;
  if (minutes > 0) out += fmt::format("{:02}m", minutes);
  if (minutes > 0 || seconds > 0) out += fmt::format("{:02}s", seconds);
  if (!out.empty() || ms > 0) out += fmt::format("{:03}ms", ms);
  out += fmt::format("{:.3f}us", static_cast<double>(us) + us_frac);
  return out;
}

void Metrics::AddSampleLocked(const std::string& metric, Unit unit, int64_t value) {
  Metric& m = metrics_[metric];
  m.unit = unit;
  m.samples.push_back(value);
}

void Metrics::AddTimeSample(const std::string& metric, int64_t ns) {
  std::lock_guard<std::mutex> lock(mu_);
  AddSampleLocked(metric, Unit::kTime, ns);
}

void Metrics::AddBytesSample(const std::string& metric, int64_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  AddSampleLocked(metric, Unit::kBytes, bytes);
}

void Metrics::Increment(const std::string& counter, int64_t by) {
  std::lock_guard<std::mutex> lock(mu_);
  counters_[counter] += by;
}

void Metrics::AddCompile(const std::vector<PhaseTiming>& phases, std::optional<bool> cache_hit,
                         const std::string& module_key) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!module_key.empty()) compiles_per_module_[module_key] += 1;
  // Phases nest (a pass inside "optimize"): CompileTime is the span from the first phase's start to the last end.
  int64_t begin = std::numeric_limits<int64_t>::max(), end = std::numeric_limits<int64_t>::min();
  for (const PhaseTiming& p : phases) {
    begin = std::min(begin, p.begin_ns);
    end = std::max(end, p.end_ns);
    AddSampleLocked("PhaseTime." + p.name, Unit::kTime, p.end_ns - p.begin_ns);
  }
  if (!phases.empty()) AddSampleLocked("CompileTime", Unit::kTime, end - begin);
  if (cache_hit.has_value()) counters_[*cache_hit ? "CachedCompile" : "UncachedCompile"] += 1;
}

void Metrics::AddExecution(const ExecutionProfile& profile) {
  std::lock_guard<std::mutex> lock(mu_);
  AddSampleLocked("ExecuteTime", Unit::kTime, profile.end_ns - profile.begin_ns);
  counters_["Executions"] += 1;
  for (const DeviceProfile& d : profile.devices) {
    const std::string prefix = fmt::format("Core{}.", d.device);
    if (profile.traced) AddSampleLocked(prefix + "KernelTime", Unit::kTime, d.kernel_ns);
    for (int k = 0; k < kNumCollectiveKinds; ++k) {
      const CollectiveCounters& c = d.collectives[static_cast<size_t>(k)];
      if (c.count == 0) continue;
      const std::string kind = kKindNames[k];
      AddSampleLocked(prefix + "CollectiveWaitTime." + kind, Unit::kTime, c.wait_ns);
      AddSampleLocked(prefix + "CollectiveBytesSent." + kind, Unit::kBytes, c.bytes_sent);
      AddSampleLocked(prefix + "CollectiveBytesReceived." + kind, Unit::kBytes, c.bytes_received);
      counters_["Collective." + kind] += c.count;
    }
    AddSampleLocked(prefix + "ArenaBytes", Unit::kBytes, d.arena_bytes);
    AddSampleLocked(prefix + "PeakArenaBytes", Unit::kBytes, d.peak_live_bytes);
  }
}

std::string Metrics::Report() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string out;
  for (const auto& [name, m] : metrics_) {
    std::vector<int64_t> sorted = m.samples;
    std::sort(sorted.begin(), sorted.end());
    int64_t total = 0;
    for (int64_t v : sorted) total += v;
    auto format = [&](int64_t v) { return m.unit == Unit::kTime ? FormatDuration(v) : FormatBytes(v); };
    out += fmt::format("Metric: {}\n  TotalSamples: {}\n  Accumulator: {}\n  Percentiles: ", name, sorted.size(),
                       format(total));
    const int percentiles[] = {1, 5, 10, 20, 50, 80, 90, 95, 99};
    for (size_t i = 0; i < std::size(percentiles); ++i) {
      // Nearest rank, as PyTorch/XLA's sample-based percentiles.
      size_t rank = static_cast<size_t>(std::ceil(percentiles[i] / 100.0 * static_cast<double>(sorted.size())));
      int64_t v = sorted.empty() ? 0 : sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
      out += fmt::format("{}{}%={}", i ? "; " : "", percentiles[i], format(v));
    }
    out += "\n";
  }
  for (const auto& [name, value] : counters_) out += fmt::format("Counter: {}\n  Value: {}\n", name, value);
  return out + HintsLocked();
}

std::string Metrics::Hints() const {
  std::lock_guard<std::mutex> lock(mu_);
  return HintsLocked();
}

std::string Metrics::HintsLocked() const {
  // PyTorch/XLA's rule with executions for its steps: compiling is expensive, so a process that keeps compiling
  // (new shapes every step, many distinct modules, or the same one again) spends its time there.
  std::string out;
  auto compile = metrics_.find("CompileTime");
  const int64_t compiles = compile == metrics_.end() ? 0 : static_cast<int64_t>(compile->second.samples.size());
  auto executions_it = counters_.find("Executions");
  const int64_t executions = executions_it == counters_.end() ? 0 : executions_it->second;
  if (compiles > kCompileWarmup && 2 * compiles > executions) {
    out +=
        fmt::format("xlac-profiler: CompileTime too frequent: {} counts during {} executions\n", compiles, executions);
  }
  for (const auto& [key, count] : compiles_per_module_) {
    if (count < kRecompileThreshold) continue;
    out += fmt::format(
        "xlac-profiler: {} compiled {} times: keep the executable and call it again, or give a cache directory "
        "(cache_dir=, --cache-dir) to load it instead\n",
        key, count);
  }
  return out;
}

void Metrics::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  metrics_.clear();
  counters_.clear();
  compiles_per_module_.clear();
}

bool Metrics::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return metrics_.empty() && counters_.empty() && compiles_per_module_.empty();
}

std::string ChromeTraceJson(const std::vector<PhaseTiming>& compile_phases, const std::vector<ExecutionProfile>& runs) {
  int64_t origin = std::numeric_limits<int64_t>::max();
  for (const PhaseTiming& p : compile_phases) origin = std::min(origin, p.begin_ns);
  for (const ExecutionProfile& r : runs) {
    origin = std::min(origin, r.begin_ns);
    for (const DeviceProfile& d : r.devices) {
      for (const TraceSlice& s : d.slices) origin = std::min(origin, s.begin_ns);
    }
  }
  if (origin == std::numeric_limits<int64_t>::max()) origin = 0;
  auto us = [origin](int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(ns - origin) / 1000.0); };
  auto dur = [](int64_t ns) { return fmt::format("{:.3f}", static_cast<double>(std::max<int64_t>(ns, 0)) / 1000.0); };
  std::vector<std::string> events;
  events.push_back(R"({"name":"process_name","ph":"M","pid":1,"tid":0,"args":{"name":"xlac"}})");
  events.push_back(R"({"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"compile"}})");
  events.push_back(R"({"name":"thread_sort_index","ph":"M","pid":1,"tid":0,"args":{"sort_index":0}})");
  for (const PhaseTiming& p : compile_phases) {
    events.push_back(fmt::format(R"({{"name":"{}","cat":"{}","ph":"X","pid":1,"tid":0,"ts":{},"dur":{}}})",
                                 JsonEscape(p.name), JsonEscape(p.category), us(p.begin_ns),
                                 dur(p.end_ns - p.begin_ns)));
  }
  std::map<int64_t, bool> named;
  for (size_t r = 0; r < runs.size(); ++r) {
    const ExecutionProfile& run = runs[r];
    for (const DeviceProfile& d : run.devices) {
      const int64_t tid = d.device + 1;
      if (!named[tid]) {
        named[tid] = true;
        events.push_back(fmt::format(
            R"({{"name":"thread_name","ph":"M","pid":1,"tid":{},"args":{{"name":"core {}"}}}})", tid, d.device));
        events.push_back(fmt::format(
            R"({{"name":"thread_sort_index","ph":"M","pid":1,"tid":{},"args":{{"sort_index":{}}}}})", tid, tid));
      }
      events.push_back(fmt::format(
          R"({{"name":"run {}","cat":"execute","ph":"X","pid":1,"tid":{},"ts":{},"dur":{},"args":{{"device":{}}}}})", r,
          tid, us(run.begin_ns), dur(run.end_ns - run.begin_ns), d.device));
      for (const TraceSlice& s : d.slices) {
        std::string args = s.category == "collective"
                               ? fmt::format(R"({{"bytes_sent":{},"bytes_received":{},"wait_us":{}}})", s.bytes_sent,
                                             s.bytes_received, dur(s.wait_ns))
                               : std::string("{}");
        events.push_back(fmt::format(
            R"({{"name":"{}","cat":"{}","ph":"X","pid":1,"tid":{},"ts":{},"dur":{},"args":{}}})", JsonEscape(s.name),
            JsonEscape(s.category), tid, us(s.begin_ns), dur(s.end_ns - s.begin_ns), args));
      }
    }
  }
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (size_t i = 0; i < events.size(); ++i) out += events[i] + (i + 1 < events.size() ? ",\n" : "\n");
  out += "]}\n";
  return out;
}

}  // namespace xlac::codegen
