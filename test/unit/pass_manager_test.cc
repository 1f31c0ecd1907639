#include "passes/pass_manager.h"

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace xlac {
namespace {

constexpr std::string_view kModule = R"(
HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  dead = f32[4] multiply(p, p)
  ROOT r = f32[4] negate(p)
}
)";

std::unique_ptr<Module> Parse() {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kModule, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().message();
  return module.ok() ? std::move(module).value() : nullptr;
}

PassInfo RecordingPass(std::string name, std::vector<std::string>& log, bool changes) {
  return {name, "test pass", [name, &log, changes](Module&) -> absl::StatusOr<bool> {
            log.push_back(name);
            return changes;
          }};
}

TEST(RegistryTest, PassesAreSortedAndFindable) {
  const std::vector<PassInfo>& passes = RegisteredPasses();
  ASSERT_GE(passes.size(), 2u);
  for (size_t i = 1; i < passes.size(); ++i) EXPECT_LT(passes[i - 1].name, passes[i].name);
  for (const PassInfo& pass : passes) {
    EXPECT_FALSE(pass.description.empty()) << pass.name;
    EXPECT_TRUE(pass.run) << pass.name;
    EXPECT_EQ(FindPass(pass.name), &pass);
  }
  EXPECT_NE(FindPass("dce"), nullptr);
  EXPECT_NE(FindPass("cse"), nullptr);
  EXPECT_EQ(FindPass("no-such-pass"), nullptr);
  EXPECT_EQ(FindPass(""), nullptr);
}

TEST(PassManagerTest, RunsPassesInOrderAndReportsChange) {
  std::vector<std::string> log;
  PassManager pm;
  pm.AddPass(RecordingPass("first", log, false));
  pm.AddPass(RecordingPass("second", log, true));
  pm.AddPass(RecordingPass("third", log, false));
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = pm.Run(*module, diags);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(log, (std::vector<std::string>{"first", "second", "third"}));
  EXPECT_FALSE(diags.has_errors());
}

TEST(PassManagerTest, NoChangeWhenNoPassChanges) {
  std::vector<std::string> log;
  PassManager pm;
  pm.AddPass(RecordingPass("a", log, false));
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  EXPECT_FALSE(pm.Run(*module, diags).value());
}

TEST(PassManagerTest, AddPassesLooksUpTheRegistry) {
  PassManager pm;
  ASSERT_TRUE(pm.AddPasses({"cse", "dce"}).ok());
  ASSERT_EQ(pm.passes().size(), 2u);
  EXPECT_EQ(pm.passes()[0].name, "cse");
  EXPECT_EQ(pm.passes()[1].name, "dce");

  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = pm.Run(*module, diags);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_TRUE(*changed);
  EXPECT_EQ(module->entry_computation()->FindInstruction("dead"), nullptr);
}

TEST(PassManagerTest, UnknownPassIsAnErrorAndAddsNothing) {
  PassManager pm;
  absl::Status status = pm.AddPasses({"dce", "bogus"});
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("unknown pass 'bogus'"), std::string_view::npos) << status.message();
  EXPECT_TRUE(pm.passes().empty());
}

TEST(PassManagerTest, VerifiesAfterEachPassAndStops) {
  std::vector<std::string> log;
  PassManager pm;
  // Breaks the module: the root's shape no longer matches what negate of f32[4] produces.
  pm.AddPass({"breaker", "breaks the module", [](Module& module) -> absl::StatusOr<bool> {
                module.entry_computation()->root()->set_shape(Shape::Array(PrimitiveType::kF32, {7}));
                return true;
              }});
  pm.AddPass(RecordingPass("after", log, false));
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = pm.Run(*module, diags);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(changed.status().message().find("after pass 'breaker'"), std::string_view::npos)
      << changed.status().message();
  EXPECT_TRUE(diags.has_errors());
  EXPECT_TRUE(log.empty()) << "the pipeline must stop at the first failure";
}

TEST(PassManagerTest, VerificationCanBeTurnedOff) {
  PassManagerOptions options;
  options.verify_each = false;
  PassManager pm(options);
  pm.AddPass({"breaker", "breaks the module", [](Module& module) -> absl::StatusOr<bool> {
                module.entry_computation()->root()->set_shape(Shape::Array(PrimitiveType::kF32, {7}));
                return true;
              }});
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  EXPECT_TRUE(pm.Run(*module, diags).ok());
  EXPECT_FALSE(diags.has_errors());
}

TEST(PassManagerTest, PassErrorsNameThePass) {
  std::vector<std::string> log;
  PassManager pm;
  pm.AddPass({"failing", "fails",
              [](Module&) -> absl::StatusOr<bool> { return absl::FailedPreconditionError("cannot handle this"); }});
  pm.AddPass(RecordingPass("after", log, false));
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  absl::StatusOr<bool> changed = pm.Run(*module, diags);
  ASSERT_FALSE(changed.ok());
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(changed.status().message(), "pass 'failing' failed: cannot handle this");
  EXPECT_TRUE(log.empty());
}

TEST(PassManagerTest, PrintsAfterEachPass) {
  std::ostringstream dump;
  PassManagerOptions options;
  options.print_after_all = &dump;
  options.printer = [](const Module& module) {
    return "<" + module.name() + " " + std::to_string(module.entry_computation()->instruction_count()) + ">";
  };
  PassManager pm(options);
  ASSERT_TRUE(pm.AddPasses({"cse", "dce"}).ok());
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  ASSERT_TRUE(pm.Run(*module, diags).ok());
  EXPECT_EQ(dump.str(),
            "// -----// IR Dump After cse //----- //\n<m 3>\n"
            "// -----// IR Dump After dce //----- //\n<m 2>\n");
}

TEST(PassManagerTest, TimesPassesWhenAsked) {
  std::vector<std::string> log;
  PassManagerOptions options;
  options.time_passes = true;
  PassManager pm(options);
  pm.AddPass(RecordingPass("a", log, true));
  pm.AddPass(RecordingPass("b", log, false));
  auto module = Parse();
  ASSERT_NE(module, nullptr);
  DiagnosticEngine diags;
  ASSERT_TRUE(pm.Run(*module, diags).ok());
  ASSERT_EQ(pm.timings().size(), 2u);
  EXPECT_EQ(pm.timings()[0].pass_name, "a");
  EXPECT_TRUE(pm.timings()[0].changed);
  EXPECT_EQ(pm.timings()[1].pass_name, "b");
  EXPECT_FALSE(pm.timings()[1].changed);
  std::ostringstream report;
  pm.PrintTimingReport(report);
  EXPECT_NE(report.str().find("Total Execution Time"), std::string::npos) << report.str();
  EXPECT_NE(report.str().find("b (no change)"), std::string::npos) << report.str();

  PassManager untimed;
  untimed.AddPass(RecordingPass("a", log, true));
  ASSERT_TRUE(untimed.Run(*module, diags).ok());
  EXPECT_TRUE(untimed.timings().empty());
}

}  // namespace
}  // namespace xlac
