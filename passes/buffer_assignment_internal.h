// Internals of AssignBuffers shared by buffer_assignment.cc (analysis) and buffer_assignment_layout.cc (packing and
// the dump). Not for use outside passes/buffer_assignment*.cc.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "passes/alias_util.h"
#include "passes/buffer_assignment.h"

namespace xlac::buffer_assignment_internal {

// An array leaf of an instruction in a sequential computation.
struct Node {
  Instruction* inst = nullptr;
  ShapeIndex index;
  int64_t size = 0;
  int64_t set = -1;  // the alias set holding it
};

// Values that always share one slice (tuple/gte/bitcast forwarding, while and conditional aliasing, donation).
struct AliasSet {
  std::vector<int64_t> nodes;  // ascending
  int64_t size = 0;
  AllocationKind kind = AllocationKind::kTemp;
  int64_t parameter_node = -1;            // kParameter: the entry parameter leaf
  const Instruction* constant = nullptr;  // kConstant
  int64_t start = 0;                      // live range, schedule positions (inclusive)
  int64_t end = 0;
  int64_t unit = -1;  // packing unit (temp sets only)
};

// Temp sets packed at one offset: a set plus those written in place over it.
struct Unit {
  std::vector<int64_t> sets;
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t offset = 0;
  bool entry_result = false;  // holds an entry result leaf and gets its own allocation (result_allocations)
};

struct State {
  const Module* module = nullptr;
  BufferAssignmentOptions options;
  // Schedule: position -> instruction, or nullptr for the virtual start/end of a computation's segment.
  std::vector<const Instruction*> schedule;
  std::vector<const Computation*> schedule_comp;
  std::vector<bool> schedule_begin;  // true at a segment's virtual start
  std::vector<Node> nodes;
  std::vector<AliasSet> sets;
  std::vector<Unit> units;
  // (set written in place, set it overwrote), for the dump.
  std::vector<std::pair<int64_t, int64_t>> in_place;
  // Outputs.
  std::vector<Allocation> allocations;
  int64_t temp_allocation = -1;
  int64_t peak_live_bytes = 0;
  std::vector<BufferSlice> set_slices;  // per set
};

// Packs temp sets into the arena, creates the allocations and fills set_slices and peak_live_bytes.
void LayOut(State& state);
// The human-readable dump (BufferAssignment::ToString).
std::string Dump(const State& state);

}  // namespace xlac::buffer_assignment_internal
