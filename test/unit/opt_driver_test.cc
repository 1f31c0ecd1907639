// In-process tests of the xla-opt driver (tools/lib): argument parsing, input splitting, diagnostic verification
// and whole runs. The lit tests in test/lit/xla-opt cover the same behaviour through the binary.
#include "tools/lib/opt_driver.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tools/lib/expected_diagnostics.h"
#include "tools/lib/opt_options.h"

namespace xlac {
namespace {

absl::StatusOr<OptOptions> Parse(std::vector<std::string_view> args) { return ParseOptArgs(args); }

TEST(OptArgsTest, Defaults) {
  absl::StatusOr<OptOptions> o = Parse({});
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->input_filename, "-");
  EXPECT_TRUE(o->output_filename.empty());
  EXPECT_TRUE(o->verify);
  EXPECT_TRUE(o->passes.empty());
}

TEST(OptArgsTest, AllFlags) {
  absl::StatusOr<OptOptions> o =
      Parse({"in.hlo", "--passes=cse,dce", "--no-verify", "-print-short", "--split-input-file", "--verify-diagnostics",
             "--print-after-all", "--time-passes", "-o", "out.hlo"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->input_filename, "in.hlo");
  EXPECT_EQ(o->passes, (std::vector<std::string>{"cse", "dce"}));
  EXPECT_FALSE(o->verify);
  EXPECT_TRUE(o->print_short);
  EXPECT_TRUE(o->split_input_file);
  EXPECT_TRUE(o->verify_diagnostics);
  EXPECT_TRUE(o->print_after_all);
  EXPECT_TRUE(o->time_passes);
  EXPECT_EQ(o->output_filename, "out.hlo");
}

TEST(OptArgsTest, ValueForms) {
  absl::StatusOr<OptOptions> o = Parse({"--passes", "dce", "-o=x.hlo", "-"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->passes, (std::vector<std::string>{"dce"}));
  EXPECT_EQ(o->output_filename, "x.hlo");
  EXPECT_EQ(o->input_filename, "-");
  o = Parse({"--", "-weird-name.hlo"});
  ASSERT_TRUE(o.ok()) << o.status().message();
  EXPECT_EQ(o->input_filename, "-weird-name.hlo");
}

TEST(OptArgsTest, Errors) {
  auto message = [](std::vector<std::string_view> args) {
    absl::StatusOr<OptOptions> o = ParseOptArgs(args);
    return o.ok() ? std::string("<ok>") : std::string(o.status().message());
  };
  EXPECT_EQ(message({"--bogus"}), "unknown option '--bogus' (see --help)");
  EXPECT_EQ(message({"a.hlo", "b.hlo"}), "more than one input file: 'a.hlo' and 'b.hlo'");
  EXPECT_EQ(message({"--no-verify=1"}), "option '--no-verify' does not take a value");
  EXPECT_EQ(message({"-o"}), "option '-o' needs a value");
  EXPECT_EQ(message({"--passes=dce,,cse"}), "empty pass name in --passes=dce,,cse");
  EXPECT_EQ(message({"--passes="}), "--passes needs a comma-separated list of pass names");
}

TEST(SplitInputFileTest, SplitsAtMarkerLinesWithLineOffsets) {
  std::string text = "a\nb\n// -----\nc\n  // -----  \nd\ne\n";
  std::vector<InputChunk> chunks = SplitInputFile(text);
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[0].text, "a\nb\n");
  EXPECT_EQ(chunks[0].line_offset, 0);
  EXPECT_EQ(chunks[1].text, "c\n");
  EXPECT_EQ(chunks[1].line_offset, 3);
  EXPECT_EQ(chunks[2].text, "d\ne\n");
  EXPECT_EQ(chunks[2].line_offset, 5);
}

TEST(SplitInputFileTest, NoMarkerMeansOneChunk) {
  std::vector<InputChunk> chunks = SplitInputFile("x\n// ------ not a marker\n// ----- x\n");
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].line_offset, 0);
  EXPECT_EQ(SplitInputFile("").size(), 1u);
}

TEST(ExpectedDiagnosticsTest, ParsesDirectives) {
  std::string text =
      "line one // expected-error {{bad thing}}\n"
      "// expected-warning@+1 {{warn}} expected-note@-1 {{note}}\n"
      "x\n"
      "// expected-error@unknown {{somewhere}}\n"
      "// expected-error@12 {{absolute}}\n"
      "// prose about expected-errors is ignored\n";
  SourceFile file("f.hlo", text, /*line_offset=*/10);
  DiagnosticEngine problems;
  std::vector<ExpectedDiagnostic> expected = ParseExpectedDiagnostics(file, problems);
  EXPECT_FALSE(problems.has_errors()) << problems.Render(file);
  ASSERT_EQ(expected.size(), 5u);
  EXPECT_EQ(expected[0].severity, Severity::kError);
  EXPECT_EQ(expected[0].line, 11);
  EXPECT_EQ(expected[0].substring, "bad thing");
  EXPECT_EQ(expected[0].directive_loc.col, 13);
  EXPECT_EQ(expected[1].severity, Severity::kWarning);
  EXPECT_EQ(expected[1].line, 13);
  EXPECT_EQ(expected[2].severity, Severity::kNote);
  EXPECT_EQ(expected[2].line, 11);
  EXPECT_EQ(expected[3].line, 0);
  // @N is a whole-file line number, like the diagnostics' locations.
  EXPECT_EQ(expected[4].line, 12);
}

TEST(ExpectedDiagnosticsTest, ReportsMalformedDirectives) {
  SourceFile file("f.hlo", "// expected-error no braces\n// expected-error@+9 {{x}}\n// expected-error@zz {{x}}\n");
  DiagnosticEngine problems;
  std::vector<ExpectedDiagnostic> expected = ParseExpectedDiagnostics(file, problems);
  EXPECT_TRUE(expected.empty());
  ASSERT_EQ(problems.diagnostics().size(), 3u);
  EXPECT_EQ(problems.diagnostics()[0].message, "expected '{{message}}' after 'expected-error'");
  EXPECT_EQ(problems.diagnostics()[1].message, "'expected-error' refers to line 11, outside this input");
  EXPECT_EQ(problems.diagnostics()[2].loc.line, 3);
}

TEST(ExpectedDiagnosticsTest, MatchesAndReportsMismatches) {
  std::vector<ExpectedDiagnostic> expected = {
      {Severity::kError, 3, "unknown opcode", {3, 20}},
      {Severity::kError, 5, "never produced", {5, 4}},
  };
  std::vector<Diagnostic> produced = {
      {Severity::kError, {3, 7}, "unknown opcode 'foo'"},
      {Severity::kError, {4, 1}, "surprise"},
  };
  DiagnosticEngine problems;
  EXPECT_FALSE(CheckExpectedDiagnostics(expected, produced, problems));
  ASSERT_EQ(problems.diagnostics().size(), 2u);
  EXPECT_EQ(problems.diagnostics()[0].message, "unexpected error: surprise");
  EXPECT_EQ(problems.diagnostics()[0].loc.line, 4);
  EXPECT_EQ(problems.diagnostics()[1].message, "expected error \"never produced\" was not produced");
  EXPECT_EQ(problems.diagnostics()[1].loc.line, 5);

  DiagnosticEngine clean;
  EXPECT_TRUE(CheckExpectedDiagnostics({expected[0]}, {produced[0]}, clean));
  EXPECT_FALSE(clean.has_errors());
  // Severity must match too.
  DiagnosticEngine wrong_severity;
  EXPECT_FALSE(
      CheckExpectedDiagnostics({expected[0]}, {{Severity::kNote, {3, 7}, "unknown opcode 'foo'"}}, wrong_severity));
}

constexpr std::string_view kGood = R"(HloModule m

ENTRY main {
  p = f32[4] parameter(0)
  a1 = f32[4] add(p, p)
  a2 = f32[4] add(p, p)
  dead = f32[4] multiply(p, p)
  ROOT r = f32[4] multiply(a1, a2)
}
)";

struct RunResult {
  int rc;
  std::string out;
  std::string err;
};

RunResult RunText(const OptOptions& options, std::string_view text, std::string_view name = "in.hlo") {
  std::ostringstream out, err;
  int rc = RunOpt(options, name, text, out, err);
  return {rc, out.str(), err.str()};
}

TEST(RunOptTest, PrintsAndRunsPasses) {
  OptOptions options;
  RunResult plain = RunText(options, kGood);
  ASSERT_EQ(plain.rc, 0) << plain.err;
  EXPECT_EQ(plain.err, "");
  EXPECT_NE(plain.out.find("a2"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("dead"), std::string::npos) << plain.out;

  options.passes = {"cse", "dce"};
  RunResult optimized = RunText(options, kGood);
  ASSERT_EQ(optimized.rc, 0) << optimized.err;
  EXPECT_EQ(optimized.out.find("a2"), std::string::npos) << optimized.out;
  EXPECT_EQ(optimized.out.find("dead"), std::string::npos) << optimized.out;
  EXPECT_NE(optimized.out.find("a1"), std::string::npos) << optimized.out;
}

TEST(RunOptTest, PrintShortDropsPercentSigns) {
  OptOptions options;
  RunResult long_form = RunText(options, kGood);
  options.print_short = true;
  RunResult short_form = RunText(options, kGood);
  ASSERT_EQ(short_form.rc, 0) << short_form.err;
  EXPECT_NE(long_form.out.find('%'), std::string::npos) << long_form.out;
  EXPECT_EQ(short_form.out.find('%'), std::string::npos) << short_form.out;
}

TEST(RunOptTest, ParseErrorsRenderWithLocationAndCaret) {
  std::string text = "HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] frobnicate(p)\n}\n";
  RunResult result = RunText(OptOptions{}, text);
  EXPECT_EQ(result.rc, 1);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err.rfind("in.hlo:5:", 0), 0u) << result.err;
  EXPECT_NE(result.err.find(": error: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("\n  ROOT r = f32[4] frobnicate(p)\n"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("^\n"), std::string::npos) << result.err;
}

TEST(RunOptTest, VerifierErrorsFailUnlessNoVerify) {
  std::string text = "HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0)\n  ROOT r = f32[7] negate(p)\n}\n";
  RunResult verified = RunText(OptOptions{}, text);
  EXPECT_EQ(verified.rc, 1);
  EXPECT_EQ(verified.out, "");
  EXPECT_EQ(verified.err.rfind("in.hlo:5:", 0), 0u) << verified.err;

  OptOptions no_verify;
  no_verify.verify = false;
  RunResult unverified = RunText(no_verify, text);
  EXPECT_EQ(unverified.rc, 0) << unverified.err;
  EXPECT_NE(unverified.out.find("f32[7]"), std::string::npos) << unverified.out;
}

TEST(RunOptTest, SplitInputFileReportsWholeFileLines) {
  std::string text = std::string(kGood) + "// -----\nHloModule bad\n\nENTRY main {\n  ROOT r = f32[] bogus()\n}\n" +
                     "// -----\n" + std::string(kGood);
  OptOptions options;
  options.split_input_file = true;
  RunResult result = RunText(options, text);
  EXPECT_EQ(result.rc, 1);
  // kGood is 9 lines, then the marker, so the bad instruction is on line 14.
  EXPECT_EQ(result.err.rfind("in.hlo:14:", 0), 0u) << result.err;
  EXPECT_NE(result.err.find("\n  ROOT r = f32[] bogus()\n"), std::string::npos) << result.err;
  // Both good chunks are printed, with a separator for each chunk boundary.
  size_t first = result.out.find("HloModule m");
  ASSERT_NE(first, std::string::npos) << result.out;
  EXPECT_NE(result.out.find("HloModule m", first + 1), std::string::npos) << result.out;
  size_t sep = result.out.find("// -----\n");
  ASSERT_NE(sep, std::string::npos);
  EXPECT_NE(result.out.find("// -----\n", sep + 1), std::string::npos) << result.out;
}

TEST(RunOptTest, VerifyDiagnostics) {
  std::string text =
      "HloModule m\n\nENTRY main {\n  p = f32[4] parameter(0)\n"
      "  // expected-error@+1 {{frobnicate}}\n"
      "  ROOT r = f32[4] frobnicate(p)\n}\n";
  OptOptions options;
  options.verify_diagnostics = true;
  RunResult ok = RunText(options, text);
  EXPECT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.err, "");

  std::string wrong = text;
  wrong.replace(wrong.find("{{frobnicate}}"), 14, "{{something else}}");
  RunResult mismatch = RunText(options, wrong);
  EXPECT_EQ(mismatch.rc, 1);
  EXPECT_NE(mismatch.err.find("in.hlo:6:"), std::string::npos) << mismatch.err;
  EXPECT_NE(mismatch.err.find("unexpected error: "), std::string::npos) << mismatch.err;
  EXPECT_NE(mismatch.err.find("in.hlo:5:6: error: expected error \"something else\" was not produced"),
            std::string::npos)
      << mismatch.err;

  // A valid module with an expectation that nothing produces fails.
  std::string unmet = std::string(kGood) + "// expected-error {{anything}}\n";
  RunResult unmet_result = RunText(options, unmet);
  EXPECT_EQ(unmet_result.rc, 1);
  EXPECT_NE(unmet_result.err.find("was not produced"), std::string::npos) << unmet_result.err;
}

TEST(RunOptTest, UnknownPassIsAUserError) {
  OptOptions options;
  options.passes = {"nope"};
  RunResult result = RunText(options, kGood);
  EXPECT_EQ(result.rc, 1);
  EXPECT_EQ(result.err, "xla-opt: error: unknown pass 'nope' (see --list-passes)\n");
  EXPECT_EQ(result.out, "");
}

TEST(RunOptTest, PrintAfterAllGoesToErr) {
  OptOptions options;
  options.passes = {"cse", "dce"};
  options.print_after_all = true;
  RunResult result = RunText(options, kGood);
  ASSERT_EQ(result.rc, 0) << result.err;
  size_t cse = result.err.find("// -----// IR Dump After cse //----- //\n");
  size_t dce = result.err.find("// -----// IR Dump After dce //----- //\n");
  ASSERT_NE(cse, std::string::npos) << result.err;
  ASSERT_NE(dce, std::string::npos) << result.err;
  EXPECT_LT(cse, dce);
  // After cse the dead multiply is still there; after dce it is gone.
  EXPECT_NE(result.err.substr(cse, dce - cse).find("dead"), std::string::npos);
  EXPECT_EQ(result.err.substr(dce).find("dead"), std::string::npos);
}

class OptMainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("xla_opt_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, std::string_view text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  RunResult Main(std::vector<std::string_view> args, std::string_view stdin_text = "") {
    std::istringstream in{std::string(stdin_text)};
    std::ostringstream out, err;
    int rc = OptMain(args, in, out, err);
    return {rc, out.str(), err.str()};
  }
  std::filesystem::path dir_;
};

TEST_F(OptMainTest, ReadsStdinAndFiles) {
  RunResult from_stdin = Main({"-"}, kGood);
  ASSERT_EQ(from_stdin.rc, 0) << from_stdin.err;
  std::string path = Write("in.hlo", kGood);
  RunResult from_file = Main({path});
  ASSERT_EQ(from_file.rc, 0) << from_file.err;
  EXPECT_EQ(from_stdin.out, from_file.out);
  RunResult missing = Main({(dir_ / "missing.hlo").string()});
  EXPECT_EQ(missing.rc, 1);
  EXPECT_NE(missing.err.find("cannot open input file"), std::string::npos) << missing.err;
}

TEST_F(OptMainTest, StdinDiagnosticsAreNamedStdin) {
  RunResult result = Main({}, "HloModule m\nENTRY e {\n  ROOT r = f32[] bogus()\n}\n");
  EXPECT_EQ(result.rc, 1);
  EXPECT_EQ(result.err.rfind("<stdin>:3:", 0), 0u) << result.err;
}

TEST_F(OptMainTest, OutputFileWrittenOnlyOnSuccess) {
  std::string good = Write("good.hlo", kGood);
  std::string out = (dir_ / "out.hlo").string();
  RunResult ok = Main({good, "-o", out});
  ASSERT_EQ(ok.rc, 0) << ok.err;
  EXPECT_EQ(ok.out, "");
  std::string written = Read(out);
  EXPECT_NE(written.find("HloModule m"), std::string::npos) << written;

  std::string bad = Write("bad.hlo", "HloModule m\nENTRY e {\n  ROOT r = f32[] bogus()\n}\n");
  RunResult failed = Main({bad, "-o", out});
  EXPECT_EQ(failed.rc, 1);
  EXPECT_EQ(Read(out), written) << "a failed run must not touch the output file";
  std::string never = (dir_ / "never.hlo").string();
  EXPECT_EQ(Main({bad, "-o", never}).rc, 1);
  EXPECT_FALSE(std::filesystem::exists(never));
  // No temporary files are left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 3);
}

TEST_F(OptMainTest, HelpAndListPasses) {
  RunResult help = Main({"--help"});
  EXPECT_EQ(help.rc, 0);
  EXPECT_NE(help.out.find("--split-input-file"), std::string::npos);
  RunResult list = Main({"--list-passes"});
  EXPECT_EQ(list.rc, 0);
  EXPECT_NE(list.out.find("cse "), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("dce "), std::string::npos) << list.out;
  RunResult bad = Main({"--frobnicate"});
  EXPECT_EQ(bad.rc, 1);
  EXPECT_EQ(bad.err, "xla-opt: error: unknown option '--frobnicate' (see --help)\n");
}

}  // namespace
}  // namespace xlac
