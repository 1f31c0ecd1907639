// The outputs of a run as labelled leaves (result_0, device_1/result_2, ...) and their .npy files (--output-dir).
#include "tools/lib/run_outputs.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "runtime/harness/npy.h"
#include "tools/lib/run_driver.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;

void CollectLeaves(const Literal& literal, const std::string& label, std::vector<LabeledOutput>& out) {
  if (!literal.is_tuple()) {
    out.push_back({label, &literal});
    return;
  }
  for (size_t i = 0; i < literal.tuple_elements().size(); ++i) {
    CollectLeaves(literal.tuple_elements()[i], label + "_" + std::to_string(i), out);
  }
}

}  // namespace

std::vector<LabeledOutput> LabelOutputs(const std::vector<Literal>& device_results) {
  std::vector<LabeledOutput> outputs;
  for (size_t d = 0; d < device_results.size(); ++d) {
    std::string prefix = device_results.size() > 1 ? "device_" + std::to_string(d) + "/result" : "result";
    const Literal& result = device_results[d];
    if (result.is_tuple()) {
      CollectLeaves(result, prefix, outputs);
    } else {
      outputs.push_back({prefix + "_0", &result});
    }
  }
  return outputs;
}

// Writes every array output as <dir>/<label>.npy. All files are written under temporary names first and renamed
// only when every one was written, so a failure leaves no partial set of outputs behind.
bool WriteOutputs(const std::string& dir, const std::vector<LabeledOutput>& outputs, std::ostream& err) {
  struct Pending {
    fs::path tmp, final_path;
  };
  std::vector<Pending> pending;
  auto cleanup = [&] {
    for (const Pending& p : pending) {
      std::error_code ec;
      fs::remove(p.tmp, ec);
    }
  };
  for (const LabeledOutput& output : outputs) {
    if (!output.value->shape().IsArray()) continue;  // tokens have no value to write
    absl::StatusOr<std::string> bytes = harness::LiteralToNpy(*output.value);
    if (!bytes.ok()) {
      err << "xla-run: error: cannot write " << output.label << ": " << bytes.status().message() << "\n";
      cleanup();
      return false;
    }
    fs::path final_path = fs::path(dir) / (output.label + ".npy");
    std::error_code ec;
    fs::create_directories(final_path.parent_path(), ec);
    if (ec) {
      err << "xla-run: error: cannot create directory '" << final_path.parent_path().string() << "': " << ec.message()
          << "\n";
      cleanup();
      return false;
    }
    fs::path tmp = final_path;
    tmp += ".xla-run-tmp." + std::to_string(::getpid());
    pending.push_back({tmp, final_path});
    std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
    if (file) file << *bytes;
    file.close();
    if (!file) {
      err << "xla-run: error: cannot write '" << final_path.string() << "': " << std::strerror(errno) << "\n";
      cleanup();
      return false;
    }
  }
  for (const Pending& p : pending) {
    std::error_code ec;
    fs::rename(p.tmp, p.final_path, ec);
    if (ec) {
      err << "xla-run: error: cannot write '" << p.final_path.string() << "': " << ec.message() << "\n";
      cleanup();
      return false;
    }
  }
  return true;
}

}  // namespace xlac
