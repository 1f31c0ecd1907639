// Sweep: every single-device module of the execution corpora (hlo/xla_tests, hlo/evaluator, hlo/models) that the
// interpreter runs is compiled with the JIT. Codegen either reports a clean Unimplemented error (tallied by opcode)
// or must reproduce the interpreter's result: in exact mode bit for bit (floats included: codegen follows the
// interpreter's per-op rounding, accumulation order and libm calls), in the default mode within the documented
// tolerance (docs/numerics.md). Both modes run on every module (the sweep's time is mostly the interpreter's).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kElementBudget = int64_t{1} << 22;

fs::path CorpusRoot() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return fs::path(src) / ".." / "shared" / "corpus";
  return fs::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" / "corpus";
}

int64_t ElementsOf(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes) n += ElementsOf(s);
    return n;
  }
  if (!shape.IsArray()) return 0;
  std::optional<int64_t> n = shape.ElementCount();
  return n ? *n : std::numeric_limits<int64_t>::max() / 4;
}

// "codegen does not support <opcode> (<name>): ..." -> "<opcode>: <detail>"; other Unimplemented errors (from
// codegen preparation) by their first words.
std::string UnsupportedKey(const absl::Status& s) {
  std::string m(s.message());
  constexpr std::string_view kPrefix = "codegen does not support ";
  if (m.starts_with(kPrefix)) {
    std::string rest = m.substr(kPrefix.size());
    std::string op = rest.substr(0, rest.find(' '));
    size_t colon = rest.find("): ");
    std::string detail = colon == std::string::npos ? "" : rest.substr(colon + 3);
    if (detail.starts_with("custom-call target")) return op + ": " + detail;
    if (detail.starts_with("element type")) return op + ": " + detail.substr(0, detail.find(" is not"));
    return op + (detail == "no lowering for this opcode yet" ? "" : ": " + detail);
  }
  return m.substr(0, 60);
}

TEST(CodegenCorpus, MatchesInterpreterOrUnimplemented) {
  fs::path root = CorpusRoot();
  if (!fs::exists(root / "hlo" / "manifest.tsv")) GTEST_SKIP() << "corpus not found at " << root;
  std::vector<fs::path> files;
  for (const char* dir : {"xla_tests", "evaluator", "models"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / "hlo" / dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  int considered = 0, compiled = 0, matched = 0;
  std::map<std::string, int> unsupported;
  std::vector<std::string> mismatches, errors;
  double compile_seconds = 0;
  for (const fs::path& path : files) {
    std::string rel = fs::relative(path, root).string();
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, rel);
    if (!module.ok()) continue;
    DiagnosticEngine diags;
    if (!VerifyModule(**module, diags)) continue;
    if ((*module)->config().replica_count > 1 || (*module)->config().num_partitions > 1) continue;
    int64_t elements = 0;
    for (const auto& comp : (*module)->computations()) {
      for (const auto& inst : comp->instructions()) elements += ElementsOf(inst->shape());
    }
    if (elements > kElementBudget) continue;
    const Computation* entry = (*module)->entry_computation();
    std::vector<Literal> args;
    for (int64_t i = 0; i < entry->parameter_count(); ++i) {
      args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), 1000 + static_cast<uint64_t>(i)));
    }
    interp::InterpreterOptions options;
    options.num_replicas = 1;
    options.num_partitions = 1;
    options.collective_timeout_ms = 2000;
    absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(**module, {args}, options);
    if (!expected.ok()) continue;  // not runnable on one device by the oracle
    ++considered;
    bool matched_both = true;
    for (bool exact : {true, false}) {
      std::string mode = exact ? " (exact mode)" : " (default mode)";
      JitOptions jit_options;
      jit_options.compile.exact = exact;
      auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(**module, jit_options);
      compile_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (!exe.ok()) {
        if (exe.status().code() == absl::StatusCode::kUnimplemented) {
          if (exact) ++unsupported[UnsupportedKey(exe.status())];
        } else {
          errors.push_back(rel + mode + ": " + exe.status().ToString().substr(0, 300));
        }
        matched_both = false;
        break;
      }
      if (exact) ++compiled;
      absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
      if (!actual.ok()) {
        errors.push_back(rel + mode + ": run: " + actual.status().ToString().substr(0, 300));
        matched_both = false;
        break;
      }
      bool same = exact ? (*actual)[0] == (*expected)[0]
                        : DescribeDifference((*expected)[0], (*actual)[0], /*tolerant=*/true).empty();
      if (!same) {
        mismatches.push_back(rel + mode + ": " + DescribeDifference((*expected)[0], (*actual)[0], !exact));
        matched_both = false;
      }
    }
    matched += matched_both;
  }
  std::cout << "codegen corpus sweep: " << considered << " modules the interpreter runs on one device; compiled "
            << compiled << ", matched in both modes " << matched << ", mismatched " << mismatches.size() << ", errors "
            << errors.size() << ", unsupported " << (considered - compiled - static_cast<int>(errors.size()))
            << " (compile time " << compile_seconds << " s)\n";
  std::vector<std::pair<int, std::string>> by_count;
  for (const auto& [key, n] : unsupported) by_count.emplace_back(n, key);
  std::sort(by_count.rbegin(), by_count.rend());
  for (const auto& [n, key] : by_count) std::cout << "  unsupported " << n << "  " << key << "\n";
  for (const std::string& m : mismatches) std::cout << "  MISMATCH " << m << "\n";
  for (const std::string& e : errors) std::cout << "  ERROR " << e << "\n";
  EXPECT_TRUE(mismatches.empty());
  EXPECT_TRUE(errors.empty());
  EXPECT_GT(matched, 0);
}

}  // namespace
}  // namespace xlac::codegen::testing
