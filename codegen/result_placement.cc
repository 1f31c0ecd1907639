#include "codegen/result_placement.h"

#include <utility>

#include "passes/alias_util.h"

namespace xlac::codegen {
namespace {

using Range = std::pair<uintptr_t, uintptr_t>;

Range RangeOf(const void* p, int64_t bytes) {
  auto begin = reinterpret_cast<uintptr_t>(p);
  return {begin, begin + static_cast<uintptr_t>(bytes)};
}

bool Overlap(Range a, Range b) { return a.first < b.second && b.first < a.second; }

}  // namespace

std::vector<int64_t> ResultDonors(const Shape& result_shape, const std::vector<InputOutputAlias>& aliases) {
  const std::vector<ShapeIndex> leaves = ArrayLeafIndices(result_shape);
  std::vector<int64_t> donors(leaves.size(), -1);
  for (const InputOutputAlias& alias : aliases) {
    if (!alias.parameter_index.empty()) continue;
    for (size_t j = 0; j < leaves.size(); ++j) {
      if (leaves[j] == alias.output_index) donors[j] = alias.parameter_number;
    }
  }
  return donors;
}

ResultPlacement PlaceResults(const ResultBuffers& program, const std::vector<const void*>& parameters,
                             const std::vector<void*>& results) {
  const std::vector<Allocation>& allocations = *program.allocations;
  const std::vector<BufferSlice>& slices = *program.result_slices;
  const size_t leaves = slices.size();
  ResultPlacement placement;
  placement.in_place.assign(leaves, false);
  placement.stage_parameter.assign(leaves, -1);
  std::vector<int64_t> users(allocations.size(), 0);
  for (const BufferSlice& slice : slices) {
    if (slice.allocation >= 0) ++users[static_cast<size_t>(slice.allocation)];
  }
  for (size_t j = 0; j < leaves; ++j) {
    const BufferSlice& slice = slices[j];
    if (slice.allocation < 0) continue;
    const Allocation& alloc = allocations[static_cast<size_t>(slice.allocation)];
    const int64_t bytes = program.leaf_bytes[j];
    const bool own = alloc.kind == AllocationKind::kTemp && alloc.entry_result;
    // A donated parameter leaf of an array parameter (tuple parameters never reach RunBuffers).
    const bool donated = alloc.kind == AllocationKind::kParameter && alloc.parameter_shape_index.empty();
    if ((!own && !donated) || slice.offset != 0 || slice.size != alloc.size || slice.size != bytes || bytes == 0 ||
        users[static_cast<size_t>(slice.allocation)] != 1 || !program.leaf_row_major[j]) {
      continue;
    }
    const auto address = reinterpret_cast<uintptr_t>(results[j]);
    if (address % static_cast<uintptr_t>(program.leaf_element_bytes[j]) != 0) continue;
    if ((*program.streamed)[static_cast<size_t>(slice.allocation)] && address % 64 != 0) continue;
    const int64_t donor = donated ? alloc.parameter_number : -1;
    if (donated && (!program.param_row_major[static_cast<size_t>(donor)] ||
                    program.param_bytes[static_cast<size_t>(donor)] != bytes)) {
      continue;
    }
    // The caller's own parameter buffer passed back as its result: the donation itself, not a clash.
    const bool same_buffer = donated && parameters[static_cast<size_t>(donor)] == results[j];
    bool clash = false;
    for (size_t i = 0; i < parameters.size() && !clash; ++i) {
      if (same_buffer && static_cast<int64_t>(i) == donor) continue;
      clash = Overlap(RangeOf(results[j], bytes), RangeOf(parameters[i], program.param_bytes[i]));
    }
    for (size_t k = 0; k < leaves && !clash; ++k) {
      clash = k != j && Overlap(RangeOf(results[j], bytes), RangeOf(results[k], program.leaf_bytes[k]));
    }
    if (clash) continue;
    placement.in_place[j] = true;
    if (donated && !same_buffer) placement.stage_parameter[j] = donor;
  }
  return placement;
}

}  // namespace xlac::codegen
