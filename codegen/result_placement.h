// Where JitExecutable::RunBuffers lets compiled code write the entry result leaves: straight into the caller's
// result buffers (nothing copied after the run), or into the executable's arena (copied out after the run).
//
// Two kinds of leaves can live in the caller's buffer:
//  - a leaf with an allocation of its own (BufferAssignmentOptions::result_allocations);
//  - a leaf that input_output_alias places in a donated parameter's allocation. The program updates that buffer
//    in place, so it must start out holding the parameter: when the caller passes the parameter's own buffer as
//    the result (JAX's donation: the weights are updated where they are) nothing is copied at all; otherwise the
//    parameter is copied into the result buffer before the run, instead of into the arena and back out after it.
// Either way the buffer must be the leaf's whole allocation, row-major, element-aligned (64-byte aligned when the
// program writes it with streaming stores) and overlap no other parameter or result: the program would overwrite
// data it still reads, or two results each other's values. Earlier values that share the allocation then live in
// the caller's buffer too, which is its output memory; nothing reads the allocation after the program ends.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/module.h"
#include "ir/shape.h"
#include "passes/buffer_assignment.h"

namespace xlac::codegen {

struct ResultPlacement {
  // Per result leaf: compiled code writes results[j] directly (bound to the leaf's allocation).
  std::vector<bool> in_place;
  // Per result leaf in place in a donated parameter's allocation: the parameter to copy into results[j] before
  // the run, or -1 when there is nothing to copy (results[j] is that parameter's buffer, or the leaf has an
  // allocation of its own).
  std::vector<int64_t> stage_parameter;
};

struct ResultBuffers {
  const std::vector<Allocation>* allocations = nullptr;
  const std::vector<BufferSlice>* result_slices = nullptr;  // per result leaf
  const std::vector<bool>* streamed = nullptr;              // per allocation: written with streaming stores
  std::vector<int64_t> param_bytes, leaf_bytes, leaf_element_bytes;
  std::vector<bool> param_row_major, leaf_row_major;
};

// Per array leaf of `result_shape` (flattened depth first, as RunBuffers' results): the entry parameter whose
// buffer input_output_alias lets it reuse, or -1. Aliases of tuple-parameter leaves are left out (RunBuffers takes
// array parameters only).
std::vector<int64_t> ResultDonors(const Shape& result_shape, const std::vector<InputOutputAlias>& aliases);

ResultPlacement PlaceResults(const ResultBuffers& program, const std::vector<const void*>& parameters,
                             const std::vector<void*>& results);

}  // namespace xlac::codegen
