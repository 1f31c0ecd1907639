// Buffer assignment, layout half: in-place merging, offset packing of the temp arena, allocations and the dump.
#include <algorithm>
#include <map>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "fmt/format.h"
#include "ir/computation.h"
#include "passes/buffer_assignment_internal.h"

namespace xlac::buffer_assignment_internal {
namespace {

int64_t AlignUp(int64_t value, int64_t alignment) { return (value + alignment - 1) / alignment * alignment; }

// One unit per temp set, then in-place merges: an elementwise op (or loop fusion, CanWriteOver) whose result set
// starts at the op may take over an operand's unit when that unit's last use is the op and the shapes and layouts
// agree.
void FormUnits(State& s) {
  for (int64_t i = 0; i < static_cast<int64_t>(s.sets.size()); ++i) {
    AliasSet& set = s.sets[i];
    if (set.kind != AllocationKind::kTemp) continue;
    set.unit = static_cast<int64_t>(s.units.size());
    s.units.push_back({{i}, set.size, set.start, set.end, 0});
  }
  if (!s.options.reuse_buffers || !s.options.allow_in_place) return;
  absl::flat_hash_map<const Instruction*, int64_t> array_set;  // lookups only
  for (const Node& node : s.nodes) {
    if (node.index.empty()) array_set[node.inst] = node.set;
  }
  for (int64_t pos = 0; pos < static_cast<int64_t>(s.schedule.size()); ++pos) {
    const Instruction* inst = s.schedule[pos];
    if (inst == nullptr || !inst->shape().IsArray() ||
        !(IsInPlaceCapable(*inst) || inst->opcode() == Opcode::kFusion)) {
      continue;
    }
    int64_t result = array_set.at(inst);
    AliasSet& rs = s.sets[result];
    if (rs.kind != AllocationKind::kTemp || rs.start != pos || s.units[rs.unit].sets.size() != 1) continue;
    for (int64_t i = 0; i < inst->operand_count(); ++i) {
      const Instruction* operand = inst->operand(i);
      if (!SameArrayLayout(operand->shape(), inst->shape()) || !CanWriteOver(*inst, i)) continue;
      int64_t source = array_set.at(operand);
      AliasSet& os = s.sets[source];
      if (os.kind != AllocationKind::kTemp || source == result) continue;
      // Every other operand holding the same data must also be read only where it is written.
      bool all_same_index = true;
      for (int64_t j = 0; j < inst->operand_count(); ++j) {
        auto other = array_set.find(inst->operand(j));
        if (j != i && other != array_set.end() && other->second == source) all_same_index &= CanWriteOver(*inst, j);
      }
      if (!all_same_index) continue;
      Unit& ou = s.units[os.unit];
      if (ou.end != pos || ou.size != rs.size) continue;
      Unit& ru = s.units[rs.unit];
      ou.sets.push_back(result);
      ou.end = std::max(ou.end, ru.end);
      ru.sets.clear();
      rs.unit = os.unit;
      s.in_place.emplace_back(result, source);
      break;
    }
  }
  // Drop the emptied units and renumber.
  std::vector<Unit> kept;
  for (Unit& unit : s.units) {
    if (unit.sets.empty()) continue;
    for (int64_t set : unit.sets) s.sets[set].unit = static_cast<int64_t>(kept.size());
    kept.push_back(std::move(unit));
  }
  s.units = std::move(kept);
}

// Largest units first (ties by first value in schedule order); each goes into the smallest gap between units live at
// the same time that fits it, else above them all. Returns the arena's end.
int64_t PackUnits(State& s) {
  const int64_t align = s.options.alignment;
  std::vector<int64_t> order;
  for (int64_t u = 0; u < static_cast<int64_t>(s.units.size()); ++u) order.push_back(u);
  auto key = [&](int64_t u) {
    int64_t first = std::numeric_limits<int64_t>::max();
    for (int64_t set : s.units[u].sets) first = std::min(first, s.sets[set].nodes.front());
    return first;
  };
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return std::make_tuple(-s.units[a].size, key(a)) < std::make_tuple(-s.units[b].size, key(b));
  });
  std::vector<int64_t> placed;
  int64_t arena_end = 0;
  for (int64_t u : order) {
    Unit& unit = s.units[u];
    if (unit.size == 0 || unit.entry_result) {
      unit.offset = 0;
      continue;
    }
    if (!s.options.reuse_buffers) {
      unit.offset = AlignUp(arena_end, align);
    } else {
      std::vector<const Unit*> busy;
      for (int64_t p : placed) {
        const Unit& other = s.units[p];
        if (other.start <= unit.end && unit.start <= other.end) busy.push_back(&other);
      }
      std::sort(busy.begin(), busy.end(), [](const Unit* a, const Unit* b) {
        return std::tie(a->offset, a->size) < std::tie(b->offset, b->size);
      });
      int64_t cursor = 0;
      int64_t best = -1, best_gap = std::numeric_limits<int64_t>::max();
      for (const Unit* other : busy) {
        int64_t candidate = AlignUp(cursor, align);
        int64_t gap = other->offset - candidate;
        if (gap >= unit.size && gap < best_gap) {
          best = candidate;
          best_gap = gap;
        }
        cursor = std::max(cursor, other->offset + other->size);
      }
      unit.offset = best >= 0 ? best : AlignUp(cursor, align);
    }
    placed.push_back(u);
    arena_end = std::max(arena_end, unit.offset + unit.size);
  }
  return arena_end;
}

int64_t PeakLive(const State& s) {
  std::vector<std::pair<int64_t, int64_t>> events;  // (position, delta); removals sort first
  for (const Unit& unit : s.units) {
    events.emplace_back(unit.start, unit.size);
    events.emplace_back(unit.end + 1, -unit.size);
  }
  std::sort(events.begin(), events.end());
  int64_t live = 0, peak = 0;
  for (const auto& [pos, delta] : events) {
    live += delta;
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

void LayOut(State& s) {
  FormUnits(s);
  const Computation* entry = s.module->entry_computation();
  if (s.options.result_allocations) {
    for (const Node& node : s.nodes) {
      const AliasSet& set = s.sets[node.set];
      if (node.inst == entry->root() && set.kind == AllocationKind::kTemp) s.units[set.unit].entry_result = true;
    }
  }
  int64_t arena_end = PackUnits(s);
  s.peak_live_bytes = PeakLive(s);

  std::map<std::pair<int64_t, ShapeIndex>, int64_t> parameter_allocation;
  for (const Instruction* param : entry->parameters()) {
    for (const ShapeIndex& index : ArrayLeafIndices(param->shape())) {
      Allocation a;
      a.index = static_cast<int64_t>(s.allocations.size());
      a.kind = AllocationKind::kParameter;
      a.size = param->shape().Subshape(index)->ByteSizeOf().value_or(0);
      a.parameter_number = param->parameter_number();
      a.parameter_shape_index = index;
      parameter_allocation[{a.parameter_number, index}] = a.index;
      s.allocations.push_back(std::move(a));
    }
  }
  // Constants in schedule order; a tuple constant's leaves lie one after another at aligned offsets.
  absl::flat_hash_map<const Instruction*, int64_t> constant_allocation;  // lookups only
  std::map<std::pair<int64_t, ShapeIndex>, int64_t> constant_offset;
  for (const Instruction* inst : s.schedule) {
    if (inst == nullptr || inst->opcode() != Opcode::kConstant) continue;
    Allocation a;
    a.index = static_cast<int64_t>(s.allocations.size());
    a.kind = AllocationKind::kConstant;
    a.constant = inst;
    for (const ShapeIndex& index : ArrayLeafIndices(inst->shape())) {
      a.size = AlignUp(a.size, s.options.alignment);
      constant_offset[{inst->unique_id(), index}] = a.size;
      a.size += inst->shape().Subshape(index)->ByteSizeOf().value_or(0);
    }
    constant_allocation[inst] = a.index;
    s.allocations.push_back(std::move(a));
  }
  if (std::any_of(s.units.begin(), s.units.end(), [](const Unit& u) { return !u.entry_result; })) {
    Allocation a;
    a.index = static_cast<int64_t>(s.allocations.size());
    a.kind = AllocationKind::kTemp;
    a.size = AlignUp(arena_end, s.options.alignment);
    s.temp_allocation = a.index;
    s.allocations.push_back(std::move(a));
  }
  std::vector<int64_t> unit_allocation(s.units.size(), -1);  // result units: their own allocation
  for (size_t u = 0; u < s.units.size(); ++u) {
    if (!s.units[u].entry_result) continue;
    Allocation a;
    a.index = static_cast<int64_t>(s.allocations.size());
    a.kind = AllocationKind::kTemp;
    a.size = s.units[u].size;  // exactly the result's bytes: the host's output buffer has no more
    a.entry_result = true;
    unit_allocation[u] = a.index;
    s.allocations.push_back(std::move(a));
  }

  s.set_slices.resize(s.sets.size());
  for (size_t i = 0; i < s.sets.size(); ++i) {
    const AliasSet& set = s.sets[i];
    BufferSlice& slice = s.set_slices[i];
    slice.size = set.size;
    if (set.kind == AllocationKind::kParameter) {
      const Node& param = s.nodes[set.parameter_node];
      slice.allocation = parameter_allocation.at({param.inst->parameter_number(), param.index});
    } else if (set.kind == AllocationKind::kConstant) {
      slice.allocation = constant_allocation.at(set.constant);
      for (int64_t n : set.nodes) {
        if (s.nodes[n].inst == set.constant)
          slice.offset = constant_offset.at({set.constant->unique_id(), s.nodes[n].index});
      }
    } else {
      int64_t own = unit_allocation[static_cast<size_t>(set.unit)];
      slice.allocation = own >= 0 ? own : s.temp_allocation;
      slice.offset = own >= 0 ? 0 : s.units[set.unit].offset;
    }
  }
}

std::string Dump(const State& s) {
  std::string out = fmt::format(
      "BufferAssignment: {} allocations, temp arena {} bytes, peak live {} bytes, alignment {}\n", s.allocations.size(),
      s.temp_allocation >= 0 ? s.allocations[s.temp_allocation].size : 0, s.peak_live_bytes, s.options.alignment);
  out += "allocations:\n";
  for (const Allocation& a : s.allocations) {
    switch (a.kind) {
      case AllocationKind::kParameter: {
        const Shape* shape =
            s.module->entry_computation()->parameter(a.parameter_number)->shape().Subshape(a.parameter_shape_index);
        out += fmt::format("  #{} parameter {}{} {}: {} bytes\n", a.index, a.parameter_number,
                           ShapeIndexToString(a.parameter_shape_index), ShapeToString(*shape), a.size);
        break;
      }
      case AllocationKind::kConstant:
        out += fmt::format("  #{} constant {}: {} bytes\n", a.index, a.constant->name(), a.size);
        break;
      case AllocationKind::kTemp:
        out += fmt::format("  #{} temp{}: {} bytes\n", a.index, a.entry_result ? " (entry result)" : "", a.size);
        break;
    }
  }
  // One row per array leaf, by allocation, then offset, then name.
  std::vector<std::tuple<int64_t, int64_t, std::string, ShapeIndex, int64_t>> rows;
  for (const Node& node : s.nodes) {
    const BufferSlice& slice = s.set_slices[node.set];
    rows.emplace_back(slice.allocation, slice.offset, node.inst->name(), node.index, node.set);
  }
  std::sort(rows.begin(), rows.end());
  out += "slices (allocation, offset, size, live range in schedule positions, value):\n";
  for (const auto& [allocation, offset, name, index, set] : rows) {
    const AliasSet& alias = s.sets[set];
    out += fmt::format("  #{:<3} {:>10} {:>10}  [{},{}]  {}{}\n", allocation, offset, alias.size, alias.start,
                       alias.end, name, ShapeIndexToString(index));
  }
  if (!s.in_place.empty()) {
    out += "in place:\n";
    for (const auto& [result, source] : s.in_place) {
      const Node& r = s.nodes[s.sets[result].nodes.front()];
      const Node& o = s.nodes[s.sets[source].nodes.front()];
      out += fmt::format("  {}{} over {}{}\n", r.inst->name(), ShapeIndexToString(r.index), o.inst->name(),
                         ShapeIndexToString(o.index));
    }
  }
  out += "schedule:\n";
  for (size_t pos = 0; pos < s.schedule.size(); ++pos) {
    const Computation* comp = s.schedule_comp[pos];
    if (s.schedule[pos] != nullptr) {
      out += fmt::format("  {:>5}   {}\n", pos, s.schedule[pos]->name());
    } else {
      out += fmt::format("  {:>5} {} {}\n", pos, s.schedule_begin[pos] ? "begin" : "end", comp->name());
    }
  }
  return out;
}

}  // namespace xlac::buffer_assignment_internal
