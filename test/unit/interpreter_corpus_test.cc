// Runs every module of the execution corpora (hlo/xla_tests, hlo/evaluator, hlo/models, hlo/cpu and the PyTorch/XLA
// dumps) that parses and verifies
// per-module element budget are skipped and listed, so the sweep stays fast.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kElementBudget = int64_t{1} << 26;  // elements summed over every instruction's result

fs::path CorpusRoot() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return fs::path(src) / ".." / "shared" / "corpus";
  return fs::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" / "corpus";
}

// file (relative to corpus/) -> flags column of the manifest.
std::map<std::string, std::string> ReadManifestFlags(const fs::path& manifest) {
  std::map<std::string, std::string> flags;
  std::ifstream in(manifest);
  std::string line;
  std::getline(in, line);  // header
  while (std::getline(in, line)) {
    std::vector<std::string> cols;
    std::stringstream ss(line);
    std::string col;
    while (std::getline(ss, col, '\t')) cols.push_back(col);
    if (cols.size() > 10) flags[cols[0]] = cols[10];
  }
  return flags;
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

int64_t ModuleElements(const Module& module) {
  int64_t total = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) total += ElementsOf(inst->shape());
  }
  return total;
}

// Largest id any replica_groups / source_target_pairs / send-recv pair mentions, so replica-only test modules
// (which get their replica count from the C++ test, not the text) run with enough devices.
int64_t MaxMentionedId(const Module& module) {
  int64_t max_id = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (const AttrValue* g = inst->FindAttr("replica_groups"); g && g->kind == AttrKind::kReplicaGroups) {
        for (const auto& group : g->get<ReplicaGroups>().Expanded()) {
          for (int64_t id : group) max_id = std::max(max_id, id);
        }
      }
      if (const AttrValue* p = inst->FindAttr("source_target_pairs"); p && p->kind == AttrKind::kIntListList) {
        for (const auto& pair : p->get<std::vector<std::vector<int64_t>>>()) {
          for (int64_t id : pair) max_id = std::max(max_id, id);
        }
      }
      // reduce-scatter and all-gather shapes fix their group size.
      bool gather_start = inst->opcode() == Opcode::kAllGatherStart && inst->shape().IsTuple() &&
                          inst->shape().tuple_shapes.size() == 2 && inst->shape().tuple_shapes[1].IsArray();
      if ((inst->opcode() == Opcode::kReduceScatter || inst->opcode() == Opcode::kAllGather || gather_start) &&
          inst->operand_count() == 1 && (inst->shape().IsArray() || gather_start) && !inst->dimensions().empty()) {
        const Shape& result = gather_start ? inst->shape().tuple_shapes[1] : inst->shape();
        int64_t d = inst->dimensions()[0];
        int64_t in = inst->operand(0)->shape().dimensions.at(d), out = result.dimensions.at(d);
        int64_t ratio = inst->opcode() == Opcode::kReduceScatter ? (out ? in / out : 1) : (in ? out / in : 1);
        max_id = std::max(max_id, ratio - 1);
      }
      for (const auto& [key, value] : inst->frontend_attributes()) {
        if (key != "_xla_send_recv_source_target_pairs") continue;
        int64_t cur = 0;
        for (char c : value + " ") {
          if (c >= '0' && c <= '9') {
            cur = cur * 10 + (c - '0');
          } else {
            max_id = std::max(max_id, cur);
            cur = 0;
          }
        }
      }
    }
  }
  return max_id;
}

std::string Category(const absl::Status& s) {
  std::string m(s.message());
  if (m.find("unsupported custom call target") != std::string::npos) return "unsupported custom call";
  // A shard_map program evaluated as one global program: its manual regions' shapes are per-core.
  if (m.find("only the partitioned program has") != std::string::npos) return "needs partitioning";
  if (s.code() == absl::StatusCode::kUnimplemented) return "unimplemented";
  if (s.code() == absl::StatusCode::kDeadlineExceeded) return "collective timeout";
  return "error";
}

TEST(InterpreterCorpus, EvaluatesExecutionCorpora) {
  fs::path root = CorpusRoot();
  if (!fs::exists(root / "hlo" / "manifest.tsv")) GTEST_SKIP() << "corpus not found at " << root;
  std::map<std::string, std::string> flags = ReadManifestFlags(root / "hlo" / "manifest.tsv");
  std::vector<fs::path> files;
  for (const char* dir : {"xla_tests", "evaluator", "models", "cpu", "external_pytorch_xla"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / "hlo" / dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  int total = 0, templated = 0, unparsed = 0, unverified = 0, too_big = 0, ok = 0;
  std::map<std::string, std::vector<std::string>> failures;
  std::vector<std::string> skipped_big, unparsed_list;
  std::vector<std::pair<double, std::string>> slowest;
  for (const fs::path& path : files) {
    std::string rel = fs::relative(path, root).string();
    ++total;
    if (flags[rel].find("templated") != std::string::npos) {
      ++templated;
      continue;
    }
    std::ifstream in(path);
    std::stringstream buffer;
    buffer << in.rdbuf();
    std::string text = buffer.str();
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, rel);
    if (!module.ok()) {
      ++unparsed;
      std::string m(module.status().message());
      unparsed_list.push_back(rel + ": " + m.substr(0, m.find('\n')));
      continue;
    }
    DiagnosticEngine diags;
    if (!VerifyModule(**module, diags)) {
      ++unverified;
      continue;
    }
    if (int64_t elements = ModuleElements(**module); elements > kElementBudget) {
      ++too_big;
      skipped_big.push_back(rel + " (" + std::to_string(elements) + " elements)");
      continue;
    }
    InterpreterOptions options;
    options.collective_timeout_ms = 5000;
    if ((*module)->config().replica_count <= 1 && (*module)->config().num_partitions <= 1) {
      options.num_replicas = MaxMentionedId(**module) + 1;
    }
    const Computation* entry = (*module)->entry_computation();
    // Random offsets/sizes would send ragged-all-to-all out of bounds; zero integers make empty transfers.
    bool zero_ints = text.find("ragged-all-to-all") != std::string::npos;
    std::vector<Literal> args;
    for (int64_t i = 0; i < entry->parameter_count(); ++i) {
      const Shape& shape = entry->parameter(i)->shape();
      args.push_back(zero_ints && IsIntegralType(shape.element_type)
                         ? Literal(shape)
                         : MakeRandomLiteral(shape, 1000 + static_cast<uint64_t>(i)));
    }
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::vector<Literal>> result = Evaluate(**module, {std::move(args)}, options);
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    slowest.emplace_back(seconds, rel);
    if (result.ok()) {
      ++ok;
    } else {
      failures[Category(result.status())].push_back(rel + ": " + std::string(result.status().message()));
    }
  }
  std::sort(slowest.rbegin(), slowest.rend());
  int evaluated = total - templated - unparsed - unverified - too_big;
  std::cout << "corpus modules: " << total << ", templated: " << templated << ", unparsed: " << unparsed
            << ", unverified: " << unverified << ", over the element budget: " << too_big << "\n"
            << "evaluated: " << evaluated << ", ok: " << ok << "\n";
  for (const std::string& s : skipped_big) std::cout << "  skipped (too big): " << s << "\n";
  for (const std::string& s : unparsed_list) std::cout << "  not parsed: " << s << "\n";
  for (const auto& [category, list] : failures) {
    std::cout << category << ": " << list.size() << "\n";
    for (const std::string& f : list) std::cout << "  " << f.substr(0, 400) << "\n";
  }
  for (size_t i = 0; i < std::min<size_t>(5, slowest.size()); ++i) {
    std::cout << "  slow: " << slowest[i].second << " " << slowest[i].first << " s\n";
  }
  // Only targets the interpreter cannot know (backend custom calls) and shard_map programs, which this sweep does
  // not partition, may fail.
  for (const auto& [category, list] : failures) {
    EXPECT_TRUE(category == "unsupported custom call" || category == "needs partitioning")
        << list.size() << " modules failed with " << category;
  }
  EXPECT_GT(ok, 0);
}

}  // namespace
}  // namespace xlac::interp::testing
