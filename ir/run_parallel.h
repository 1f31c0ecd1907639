// The programs grid of the StableHLO reference interpreter's `interpreter.run_parallel` custom-call (as
// frontend/stablehlo lowers it): backend_config {"programs":[[0,1],[1,0]]} places the called computations on a grid
// whose rows are replicas and columns partitions. Shared by the interpreter and codegen so both read it alike.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace xlac {

// The grid of program indices. InvalidArgument (message without the instruction's name) when the backend_config
// has no grid, the grid is malformed or ragged, or an index names no called computation.
absl::StatusOr<std::vector<std::vector<int64_t>>> RunParallelPrograms(const Instruction& run_parallel);

}  // namespace xlac
