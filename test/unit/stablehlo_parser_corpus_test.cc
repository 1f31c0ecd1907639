// Sweep over the shared corpus: every StableHLO file of stablehlo/testdata (not the dynamic/ and quantized/ subsets),
// stablehlo/interpret/cases and stablehlo/math must parse and verify, and its HLO print must parse back. Reports
// tallies: parsed+verified / unsupported op (by op) / other failures (first message). Numeric checks of the same
// files run in interpreter_stablehlo_corpus_test.cc.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "frontend/stablehlo/parser.h"
#include "gtest/gtest.h"
#include "ir/module.h"
#include "passes/verifier.h"

namespace xlac {
namespace {

std::filesystem::path CorpusRoot() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return std::filesystem::path(src) / ".." / "shared" / "corpus";
  return std::filesystem::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" / "corpus";
}

struct Tally {
  int total = 0;
  int ok = 0;
  int reparsed = 0;                        // printed as HLO text and parsed back by the HLO parser
  std::map<std::string, int> unsupported;  // op -> files
  std::vector<std::string> failures;       // "file: first message"
  std::vector<std::string> reparse_failures;
};

void SweepDirectory(const std::filesystem::path& dir, Tally* tally) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file() && entry.path().extension() == ".mlir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    SourceFile file(path.filename().string(), text);
    DiagnosticEngine diags;
    ++tally->total;
    std::unique_ptr<Module> module = ParseStableHloModule(file, diags);
    std::string first;
    if (module != nullptr) {
      DiagnosticEngine verify_diags;
      if (VerifyModule(*module, verify_diags)) {
        ++tally->ok;
        // The printed module must be valid HLO text: attribute kinds and values are what the HLO parser makes.
        absl::StatusOr<std::unique_ptr<Module>> reparsed = ParseHloModule(PrintModule(*module), path.string());
        if (reparsed.ok()) {
          ++tally->reparsed;
        } else {
          tally->reparse_failures.push_back(path.filename().string() + ": " +
                                            std::string(reparsed.status().message()).substr(0, 200));
        }
        continue;
      }
      first =
          "verify: " + (verify_diags.diagnostics().empty() ? std::string("?") : verify_diags.diagnostics()[0].message);
    } else {
      first = diags.diagnostics().empty() ? std::string("?") : diags.diagnostics()[0].message;
    }
    const std::string marker = "unsupported op '";
    if (size_t at = first.find(marker); at != std::string::npos) {
      size_t end = first.find('\'', at + marker.size());
      ++tally->unsupported[first.substr(at + marker.size(), end - at - marker.size())];
    } else {
      tally->failures.push_back(path.filename().string() + ": " + first);
    }
  }
}

void Report(const std::string& name, const Tally& t) {
  std::cout << name << ": " << t.ok << "/" << t.total << " parsed+verified";
  int unsupported = 0;
  for (const auto& [op, n] : t.unsupported) unsupported += n;
  std::cout << ", " << unsupported << " unsupported-op, " << t.failures.size() << " other\n";
  for (const auto& [op, n] : t.unsupported) std::cout << "  unsupported " << op << ": " << n << "\n";
  for (size_t i = 0; i < t.failures.size() && i < 25; ++i) std::cout << "  " << t.failures[i] << "\n";
  std::cout << "  printed HLO reparses: " << t.reparsed << "/" << t.ok << "\n";
  for (size_t i = 0; i < t.reparse_failures.size() && i < 5; ++i) std::cout << "  " << t.reparse_failures[i] << "\n";
}

TEST(StableHloCorpusTest, ParsesAndVerifies) {
  const std::filesystem::path root = CorpusRoot() / "stablehlo";
  if (!std::filesystem::exists(root / "manifest.tsv")) GTEST_SKIP() << "corpus not found at " << root;
  Tally testdata, interpret, math;
  SweepDirectory(root / "testdata", &testdata);
  SweepDirectory(root / "interpret" / "cases", &interpret);
  SweepDirectory(root / "math", &math);
  Report("testdata", testdata);
  Report("interpret", interpret);
  Report("math", math);
  EXPECT_GE(testdata.total, 900);  // guards against a moved or truncated corpus
  EXPECT_GE(testdata.ok, testdata.total * 98 / 100);
  EXPECT_GE(interpret.ok, interpret.total * 95 / 100);
  EXPECT_GE(math.ok, math.total * 90 / 100);
  EXPECT_GE(testdata.reparsed + interpret.reparsed + math.reparsed, (testdata.ok + interpret.ok + math.ok) * 99 / 100);
}

}  // namespace
}  // namespace xlac
