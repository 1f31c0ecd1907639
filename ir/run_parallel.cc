#include "ir/run_parallel.h"

#include <string>

#include "absl/status/status.h"

namespace xlac {

absl::StatusOr<std::vector<std::vector<int64_t>>> RunParallelPrograms(const Instruction& run_parallel) {
  const std::string& config = run_parallel.backend_config();
  size_t pos = config.find("\"programs\"");
  if (pos == std::string::npos || (pos = config.find('[', pos)) == std::string::npos) {
    return absl::InvalidArgumentError("backend_config has no programs grid: " + config);
  }
  std::vector<std::vector<int64_t>> grid;
  int depth = 0;
  int64_t number = -1;
  for (; pos < config.size(); ++pos) {
    char c = config[pos];
    if (c == '[') {
      if (++depth == 2) grid.emplace_back();
      if (depth > 2) break;
    } else if (c >= '0' && c <= '9') {
      number = (number < 0 ? 0 : number * 10) + (c - '0');
      if (number > (int64_t{1} << 40)) break;
    } else if (c == ',' || c == ']') {
      if (number >= 0 && depth == 2) grid.back().push_back(number);
      number = -1;
      if (c == ']' && --depth == 0) break;
    } else if (c != ' ') {
      break;
    }
  }
  bool ok = depth == 0 && !grid.empty();
  for (const auto& row : grid) ok = ok && !row.empty() && row.size() == grid[0].size();
  for (const auto& row : grid) {
    for (int64_t index : row) ok = ok && index < static_cast<int64_t>(run_parallel.called_computations().size());
  }
  if (!ok) return absl::InvalidArgumentError("malformed programs grid in " + config);
  return grid;
}

}  // namespace xlac
