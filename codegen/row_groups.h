// Row groups: runs of consecutive loop and reduction fusions that codegen emits as one loop over rows.
//
// Softmax and layer norm are chains of kernels over the same rows: a row reduction (max, mean), a loop that reads the
// row and the reduced value (exp, centering), another reduction, another loop. Emitted kernel by kernel, every
// kernel streams the whole tensor through memory; emitted row by row (every member of the group for row r, then
// row r + 1), a row is read from memory once and re-read from L1 by the later members. Results are unchanged:
// every member computes every element exactly as it would alone (same loops inside the row, same reduction order),
// only the interleaving of independent rows changes.
//
// A group is valid when
//   - every member is a kLoop fusion whose loop order starts with the row dimensions, or a kInput fusion of row
//     reductions (kept dimensions = the row dimensions, reduced = the rest);
//   - every member iterates the same leading row dimensions (same sizes);
//   - a member reads values produced by earlier members only at its own row (through elementwise ops and
//     broadcasts that keep the row dimensions in place), so row r of a member never needs a later row of another;
//   - buffers do not get in the way: a member's output never overlaps a buffer another member accesses, except the
//     very same slice with the same shape (buffer reuse in place, safe because that buffer is only read by rows).
// Free instructions (parameters, constants, tuple-element views that need no copy) may sit between members.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/computation.h"
#include "passes/buffer_assignment.h"

namespace xlac::codegen {

struct RowGroup {
  std::vector<const Instruction*> members;  // schedule order, at least two
  std::vector<int64_t> rows;                // sizes of the row dimensions (the leading logical dimensions)
};

// Row groups of the sequential schedule `order` (a computation's post order), in schedule order; instructions in no
// group are emitted on their own.
std::vector<RowGroup> FindRowGroups(const std::vector<const Instruction*>& order, const BufferAssignment& assignment);

}  // namespace xlac::codegen
