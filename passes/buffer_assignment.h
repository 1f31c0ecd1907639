// Buffer assignment: where every array value of a module lives while compiled code runs. Codegen reads it; it never
// changes the module.
//
// Preconditions (the codegen pipeline establishes them; AssignBuffers checks and reports an error otherwise):
//  - the module verifies;
//  - `call` instructions have been inlined (passes/call_inliner.h) and every while/conditional computation has
//    exactly one caller (passes/flatten_call_graph.h);
//  - copies that make the aliasing below possible have been inserted (passes/copy_insertion.h).
//
// Model. A *sequential* computation is the entry or a computation called by while (condition, body) or conditional
// (branches); it runs instruction by instruction and every array leaf of every instruction in it gets a slice. All
// other called computations (reduce/map/sort/scatter/select-and-scatter/reduce-window/all-reduce reducers, fusion
// bodies) are *embedded*: codegen emits them inline as scalar or loop code, so they get no slices.
//
// Allocations:
//  - one per entry parameter leaf (kParameter): the caller's buffer, read-only unless input_output_alias donates it;
//  - one per constant (kConstant): emitted as global data;
//  - one temp arena (kTemp) for everything else, including the entry result leaves (with result_allocations, each
//    entry result leaf and the values written in place before it get a kTemp allocation of their own instead).
// Aliasing (same slice, no data movement): tuple and get-tuple-element, bitcast; a while's result, its init operand
// leaves' copies, its condition/body parameter leaves and its body root leaves; a conditional's result and every
// branch root leaf; a conditional branch's parameter leaves and the matching leaves of the conditional's operand for
// that branch (branches only read them); an entry result leaf and the parameter it is aliased to by
// input_output_alias.
// Reuse: two values share temp bytes only if their live ranges (in the sequential computation's post order,
// with called sequential computations live for the whole calling instruction) do not overlap. Elementwise ops may
// write in place over an operand that dies at them, when shapes and layouts match.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xlac {

struct BufferAssignmentOptions {
  int64_t alignment = 64;     // every slice offset in the temp arena is a multiple of this
  bool reuse_buffers = true;  // false: every value gets its own bytes (debugging codegen)
  bool allow_in_place = true;
  // Every entry result leaf (with the values written in place before it) gets a kTemp allocation of its own instead
  // of a slice of the temp arena, so a host can bind it to its output buffer and skip the copy out (the JIT's
  // RunBuffers). Off for AOT, whose headers describe one temp buffer.
  bool result_allocations = false;
};

enum class AllocationKind { kParameter, kConstant, kTemp };

struct Allocation {
  int64_t index = 0;  // position in BufferAssignment::allocations()
  AllocationKind kind = AllocationKind::kTemp;
  int64_t size = 0;
  // kParameter: which entry parameter leaf.
  int64_t parameter_number = -1;
  std::vector<int64_t> parameter_shape_index;
  // kConstant: the constant instruction.
  const Instruction* constant = nullptr;
  // kTemp: an entry result leaf's own allocation (BufferAssignmentOptions::result_allocations), not the temp arena.
  bool entry_result = false;
};

struct BufferSlice {
  int64_t allocation = -1;
  int64_t offset = 0;
  int64_t size = 0;
  bool operator==(const BufferSlice&) const = default;
};

// One alias set: array leaves that always share one slice (tuple, get-tuple-element and bitcast forwarding, while
// and conditional aliasing, donation), and the schedule positions where its data is live (inclusive; a value is live
// from its first definition to its last read, and a computation's root until the computation's end). The caller owns
// entry parameters for the whole call and constants are program data, whatever their range says.
struct LiveValue {
  std::vector<std::pair<const Instruction*, std::vector<int64_t>>> leaves;  // in schedule order
  AllocationKind kind = AllocationKind::kTemp;
  int64_t parameter_number = -1;  // kParameter: the entry parameter
  int64_t start = 0;
  int64_t end = 0;
  BufferSlice slice;
};

class BufferAssignment {
 public:
  // The slice of the array leaf at `index` of `inst`'s result. `inst` must be in a sequential computation and the
  // leaf must be an array (asserts otherwise).
  const BufferSlice& GetSlice(const Instruction* inst, const std::vector<int64_t>& index = {}) const;
  bool HasSlice(const Instruction* inst, const std::vector<int64_t>& index = {}) const;

  const std::vector<Allocation>& allocations() const { return allocations_; }
  // Index of the temp arena allocation, or -1 if nothing needs temp bytes.
  int64_t temp_allocation() const { return temp_allocation_; }
  int64_t temp_bytes() const;
  // Bytes live at the worst point of the program (temp arena usage before alignment padding), for reports.
  int64_t peak_live_bytes() const { return peak_live_bytes_; }
  // Slices of the entry root's array leaves, in flattened tuple order.
  const std::vector<BufferSlice>& entry_result_slices() const { return entry_result_slices_; }

  // The linear schedule the live ranges refer to: position -> instruction, nullptr at a sequential computation's
  // virtual start and end. The entry computation spans all of it; a while's condition and body (a conditional's
  // branches) come right before the instruction that calls them.
  const std::vector<const Instruction*>& schedule() const { return schedule_; }
  // Every alias set, ordered by its first leaf's schedule position.
  const std::vector<LiveValue>& live_values() const { return live_values_; }

  // Human-readable dump: allocations, then every slice with its value and live range, ordered by offset.
  // Deterministic (ordered by unique ids, never pointers).
  std::string ToString() const;

 private:
  friend absl::StatusOr<BufferAssignment> AssignBuffers(const Module&, const BufferAssignmentOptions&);
  std::vector<Allocation> allocations_;
  int64_t temp_allocation_ = -1;
  int64_t peak_live_bytes_ = 0;
  // (instruction unique id, shape index) -> slice.
  std::map<std::pair<int64_t, std::vector<int64_t>>, BufferSlice> slices_;
  std::vector<BufferSlice> entry_result_slices_;
  std::vector<const Instruction*> schedule_;
  std::vector<LiveValue> live_values_;
  std::string dump_;
};

absl::StatusOr<BufferAssignment> AssignBuffers(const Module& module, const BufferAssignmentOptions& options = {});

}  // namespace xlac
