// codegen/profile.h (metrics report, Chrome trace JSON) and passes/compile_observer.h (dump names, pass regex).
#include <filesystem>
#include <fstream>

#include "codegen/profile.h"
#include "gtest/gtest.h"
#include "passes/compile_observer.h"

namespace xlac::codegen {
namespace {

// Microseconds are not zero-padded, as PyTorch/XLA prints them ("001ms32.778us").
TEST(ProfileTest, FormatDurationAsPyTorchXla) {
  EXPECT_EQ(FormatDuration(1500), "1.500us");
  EXPECT_EQ(FormatDuration(2'345'678), "002ms345.678us");
  EXPECT_EQ(FormatDuration(61'002'003'004), "01m01s002ms3.004us");
}

TEST(ProfileTest, ReportHasSamplesAccumulatorPercentilesAndCounters) {
  Metrics metrics;
  for (int64_t ms : {1, 2, 3, 4}) metrics.AddTimeSample("ExecuteTime", ms * 1'000'000);
  metrics.AddBytesSample("Core0.CollectiveBytesSent.all-gather", 4608);
  metrics.Increment("Executions", 4);
  std::string report = metrics.Report();
  EXPECT_NE(report.find("Metric: ExecuteTime\n  TotalSamples: 4\n  Accumulator: 010ms0.000us\n  Percentiles: "
                        "1%=001ms0.000us; 5%=001ms0.000us; 10%=001ms0.000us; 20%=001ms0.000us; "
                        "50%=002ms0.000us; 80%=004ms0.000us;"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("Metric: Core0.CollectiveBytesSent.all-gather\n  TotalSamples: 1\n  Accumulator: 4.50KB "
                        "(4608B)\n"),
            std::string::npos)
      << report;
  EXPECT_NE(report.find("Counter: Executions\n  Value: 4\n"), std::string::npos) << report;
  metrics.Clear();
  EXPECT_TRUE(metrics.empty());
}

TEST(ProfileTest, ExecutionAddsPerCoreCollectiveMetricsOnlyForKindsThatRan) {
  ExecutionProfile run;
  run.begin_ns = 0;
  run.end_ns = 5000;
  for (int64_t d = 0; d < 2; ++d) {
    DeviceProfile device;
    device.device = d;
    device.collectives[0] = CollectiveCounters{1, 2048, 2048, 700};  // all-reduce
    run.devices.push_back(device);
  }
  Metrics metrics;
  metrics.AddExecution(run);
  std::string report = metrics.Report();
  EXPECT_NE(report.find("Metric: Core1.CollectiveBytesSent.all-reduce\n  TotalSamples: 1\n  Accumulator: 2.00KB"),
            std::string::npos);
  EXPECT_EQ(report.find("all-gather"), std::string::npos);
  EXPECT_EQ(report.find("KernelTime"), std::string::npos);  // not traced
  EXPECT_NE(report.find("Counter: Collective.all-reduce\n  Value: 2\n"), std::string::npos);
}

TEST(ProfileTest, ChromeTraceHasCompileTrackAndOneTrackPerCore) {
  std::vector<PhaseTiming> phases = {{"pass \"dce\"", "pass", 1000, 3000}};
  ExecutionProfile run;
  run.begin_ns = 4000;
  run.end_ns = 9000;
  DeviceProfile device;
  device.device = 3;
  device.slices.push_back({"all-gather.1", "collective", 5000, 6000, 512, 4096, 250});
  run.devices.push_back(device);
  std::string json = ChromeTraceJson(phases, {run});
  EXPECT_NE(json.find(R"({"name":"thread_name","ph":"M","pid":1,"tid":0,"args":{"name":"compile"}})"),
            std::string::npos);
  EXPECT_NE(json.find(R"("name":"pass \"dce\"","cat":"pass","ph":"X","pid":1,"tid":0,"ts":0.000,"dur":2.000)"),
            std::string::npos)
      << json;
  EXPECT_NE(json.find(R"("args":{"name":"core 3"})"), std::string::npos);
  EXPECT_NE(json.find(R"("name":"all-gather.1","cat":"collective","ph":"X","pid":1,"tid":4,"ts":4.000,"dur":1.000,)"
                      R"("args":{"bytes_sent":512,"bytes_received":4096,"wait_us":0.250}})"),
            std::string::npos)
      << json;
}

TEST(CompileObserverTest, DumpNamesAndPassRegex) {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "xlac_observer_test";
  std::filesystem::remove_all(dir);
  absl::StatusOr<std::unique_ptr<CompileObserver>> observer = CompileObserver::Create(
      DumpOptions{dir.string(), "^fus", 7}, "my module", [](const Module&) { return std::string("text"); });
  ASSERT_TRUE(observer.ok()) << observer.status();
  Module module("m");
  (*observer)->DumpAfterPass(module, "optimization", "dce");
  (*observer)->DumpAfterPass(module, "optimization", "fusion");
  (*observer)->DumpText("ir-no-opt.ll", "ir");
  ASSERT_TRUE((*observer)->status().ok());
  ASSERT_EQ((*observer)->files().size(), 2u);
  EXPECT_EQ(std::filesystem::path((*observer)->files()[0]).filename(),
            "module_0007.my_module.0001.optimization.after_fusion.txt");
  EXPECT_EQ(std::filesystem::path((*observer)->files()[1]).filename(), "module_0007.my_module.ir-no-opt.ll");
  std::ifstream in((*observer)->files()[0]);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(text, "text");
  std::filesystem::remove_all(dir);

  EXPECT_FALSE(CompileObserver::Create(DumpOptions{"", "(", 1}, "m", nullptr).ok());
  CompileObserver timing_only;
  EXPECT_FALSE(timing_only.dumping());
}

}  // namespace
}  // namespace xlac::codegen
