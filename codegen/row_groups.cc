#include "codegen/row_groups.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include "codegen/ir_emitter_internal.h"

namespace xlac::codegen {
namespace {

using internal::MajorToMinor;

// How a fusion iterates: its iteration dimensions and the row ranks it can be cut at.
struct Iteration {
  std::vector<int64_t> dims;
  std::vector<int64_t> ranks;  // feasible numbers of leading row dimensions, ascending
};

// The first k entries of `order` are a permutation of 0..k-1.
bool LeadsWithFirst(const std::vector<int64_t>& order, size_t k) {
  if (order.size() < k) return false;
  std::vector<int64_t> head(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
  std::sort(head.begin(), head.end());
  for (size_t i = 0; i < k; ++i) {
    if (head[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<const Instruction*> RootValues(const Instruction* fusion) {
  const Instruction* root = fusion->called_computation(0)->root();
  if (root->opcode() != Opcode::kTuple) return {root};
  return {root->operands().begin(), root->operands().end()};
}

std::optional<Iteration> IterationOf(const Instruction* inst) {
  if (inst->opcode() != Opcode::kFusion || inst->called_computations().size() != 1) return std::nullopt;
  std::string_view kind = inst->StringAttr("kind");
  if (kind == "kLoop") {
    // EmitElementalLoop walks the first output's memory order; all outputs have its dimensions.
    const Shape& first = inst->shape().IsTuple() ? inst->shape().tuple_shapes[0] : inst->shape();
    if (!first.IsArray() || first.rank() == 0) return std::nullopt;
    for (const Shape& s : inst->shape().IsTuple() ? inst->shape().tuple_shapes : std::vector<Shape>{first}) {
      if (!s.IsArray() || s.dimensions != first.dimensions) return std::nullopt;
    }
    Iteration it{first.dimensions, {}};
    std::vector<int64_t> order = MajorToMinor(first);
    for (size_t k = 1; k <= order.size(); ++k) {
      if (LeadsWithFirst(order, k)) it.ranks.push_back(static_cast<int64_t>(k));
    }
    return it;
  }
  if (kind != "kInput") return std::nullopt;
  // Row reductions only: every reduce keeps exactly the leading dimensions, and the input's memory order starts
  // with them (EmitReduction then takes its row path, one output element at a time).
  std::vector<const Instruction*> reduces = RootValues(inst);
  const Instruction* input = reduces[0]->operand(0);
  const Shape& input_shape =
      input->opcode() == Opcode::kParameter ? inst->operand(input->parameter_number())->shape() : input->shape();
  int64_t n = input_shape.rank();
  std::vector<int64_t> reduced = reduces[0]->dimensions();
  std::sort(reduced.begin(), reduced.end());
  for (const Instruction* r : reduces) {
    if (r->opcode() != Opcode::kReduce || r->operand(0)->shape().dimensions != input_shape.dimensions) {
      return std::nullopt;
    }
    std::vector<int64_t> dims = r->dimensions();
    std::sort(dims.begin(), dims.end());
    if (dims != reduced) return std::nullopt;
  }
  for (size_t i = 0; i < reduced.size(); ++i) {
    if (reduced[i] != n - static_cast<int64_t>(reduced.size() - i)) return std::nullopt;
  }
  int64_t k = n - static_cast<int64_t>(reduced.size());
  if (k < 1 || !LeadsWithFirst(MajorToMinor(input_shape), static_cast<size_t>(k))) return std::nullopt;
  return Iteration{input_shape.dimensions, {k}};
}

// Whether evaluating `user` at an index whose first k coordinates are the row evaluates its operand `operand_index`
// only at indices with the same first k coordinates.
bool KeepsRow(const Instruction* user, int64_t operand_index, int64_t k) {
  const Instruction* operand = user->operand(operand_index);
  Opcode op = user->opcode();
  if (op == Opcode::kTuple) return true;  // the fusion root: outputs at the loop index
  if (op == Opcode::kBroadcast) {
    const std::vector<int64_t>& bd = user->dimensions();
    if (operand->shape().rank() < k) return false;
    for (int64_t i = 0; i < k; ++i) {
      if (bd[static_cast<size_t>(i)] != i) return false;
    }
    return true;
  }
  if (op == Opcode::kReduce) return operand_index < user->operand_count() / 2;  // inputs, not init values
  bool same_index = IsElementwiseUnary(op) || IsElementwiseBinary(op) || op == Opcode::kCompare ||
                    op == Opcode::kSelect || op == Opcode::kClamp || op == Opcode::kConvert ||
                    op == Opcode::kReducePrecision || op == Opcode::kCopy;
  return same_index && operand->shape().IsArray() && operand->shape().dimensions == user->shape().dimensions;
}

// For each parameter of `fusion`'s computation: read only at the row of the loop index (row rank k)?
std::vector<bool> RowLocalParameters(const Instruction* fusion, int64_t k) {
  const Computation& comp = *fusion->called_computation(0);
  std::vector<Instruction*> post = comp.MakePostOrder();
  std::map<const Instruction*, bool> local;
  for (auto it = post.rbegin(); it != post.rend(); ++it) {
    const Instruction* inst = *it;
    if (inst == comp.root()) {
      local[inst] = true;
      continue;
    }
    bool all = !inst->users().empty();
    for (const Instruction* user : inst->users()) {
      auto found = local.find(user);
      if (found == local.end() || !found->second) {
        all = false;
        break;
      }
      for (int64_t i = 0; i < user->operand_count() && all; ++i) {
        if (user->operand(i) == inst && !KeepsRow(user, i, k)) all = false;
      }
    }
    local[inst] = all;
  }
  std::vector<bool> out(static_cast<size_t>(fusion->operand_count()), false);
  for (const Instruction* inst : post) {
    if (inst->opcode() == Opcode::kParameter && inst->parameter_number() < fusion->operand_count()) {
      out[static_cast<size_t>(inst->parameter_number())] = local[inst];
    }
  }
  return out;
}

// Instructions between members that emit no code.
bool IsFree(const Instruction* inst, const BufferAssignment& assignment) {
  Opcode op = inst->opcode();
  if (op == Opcode::kParameter || op == Opcode::kConstant) return true;
  if (op == Opcode::kGetTupleElement && inst->shape().IsArray()) {
    return assignment.HasSlice(inst) && assignment.HasSlice(inst->operand(0), {inst->IntAttr("index")}) &&
           assignment.GetSlice(inst) == assignment.GetSlice(inst->operand(0), {inst->IntAttr("index")});
  }
  return false;
}

// The instruction whose output `inst` is (a free tuple-element view shows its tuple's leaf).
struct Value {
  const Instruction* producer;
  int64_t leaf;  // -1: an array result
  bool operator<(const Value& o) const {
    return producer->unique_id() != o.producer->unique_id() ? producer->unique_id() < o.producer->unique_id()
                                                            : leaf < o.leaf;
  }
  bool operator==(const Value& o) const { return producer == o.producer && leaf == o.leaf; }
};

Value Resolve(const Instruction* inst) {
  if (inst->opcode() == Opcode::kGetTupleElement && inst->operand(0)->opcode() == Opcode::kFusion) {
    return {inst->operand(0), inst->IntAttr("index")};
  }
  return {inst, -1};
}

bool Overlap(const BufferSlice& a, const BufferSlice& b) {
  return a.allocation == b.allocation && a.offset < b.offset + b.size && b.offset < a.offset + a.size;
}

class GroupChecker {
 public:
  explicit GroupChecker(const BufferAssignment& assignment) : assignment_(assignment) {}

  // Whether `members` (schedule order) form a valid group with k row dimensions.
  bool Valid(const std::vector<const Instruction*>& members, int64_t k) const {
    std::set<const Instruction*> in_group(members.begin(), members.end());
    struct Access {
      Value value;
      const Shape* shape;
      BufferSlice slice;
      bool write;
      bool row_local;
    };
    std::vector<Access> accesses;
    std::map<Value, bool> read_row_locally;  // every group read of the value is row-local
    for (const Instruction* m : members) {
      std::vector<bool> local = RowLocalParameters(m, k);
      for (int64_t i = 0; i < m->operand_count(); ++i) {
        const Instruction* operand = m->operand(i);
        if (!operand->shape().IsArray() || !assignment_.HasSlice(operand)) return false;
        Value v = Resolve(operand);
        bool row_local = local[static_cast<size_t>(i)] && operand->shape().rank() >= k;
        if (in_group.count(v.producer) && !row_local) return false;
        auto [it, fresh] = read_row_locally.emplace(v, row_local);
        if (!fresh) it->second = it->second && row_local;
        accesses.push_back({v, &operand->shape(), assignment_.GetSlice(operand), false, row_local});
      }
      if (m->shape().IsTuple()) {
        for (size_t j = 0; j < m->shape().tuple_shapes.size(); ++j) {
          if (!assignment_.HasSlice(m, {static_cast<int64_t>(j)})) return false;
          accesses.push_back({{m, static_cast<int64_t>(j)},
                              &m->shape().tuple_shapes[j],
                              assignment_.GetSlice(m, {static_cast<int64_t>(j)}),
                              true,
                              true});
        }
      } else {
        if (!assignment_.HasSlice(m)) return false;
        accesses.push_back({{m, -1}, &m->shape(), assignment_.GetSlice(m), true, true});
      }
    }
    for (const Access& w : accesses) {
      if (!w.write) continue;
      for (const Access& x : accesses) {
        if (&x == &w || x.value == w.value || !Overlap(w.slice, x.slice)) continue;
        // Reuse in place: the same bytes per row, and the old value is only ever read by rows.
        bool same_place = w.slice == x.slice && w.shape->dimensions == x.shape->dimensions &&
                          MajorToMinor(*w.shape) == MajorToMinor(*x.shape);
        auto reads = read_row_locally.find(x.value);
        bool old_read_by_rows = reads == read_row_locally.end() || reads->second;
        if (!same_place || !old_read_by_rows) return false;
      }
    }
    return true;
  }

 private:
  const BufferAssignment& assignment_;
};

}  // namespace

std::vector<RowGroup> FindRowGroups(const std::vector<const Instruction*>& order, const BufferAssignment& assignment) {
  GroupChecker checker(assignment);
  std::vector<RowGroup> groups;
  std::vector<const Instruction*> run;
  std::vector<int64_t> dims;  // the run's common iteration dims (prefix use only)
  std::vector<int64_t> ranks;
  int64_t chosen = 0;
  auto close = [&] {
    if (run.size() >= 2) {
      groups.push_back({run, std::vector<int64_t>(dims.begin(), dims.begin() + chosen)});
    }
    run.clear();
  };
  for (const Instruction* inst : order) {
    if (IsFree(inst, assignment)) continue;
    std::optional<Iteration> it = IterationOf(inst);
    if (!it) {
      close();
      continue;
    }
    if (!run.empty()) {
      // Ranks both can be cut at with the same row sizes, largest first.
      std::vector<int64_t> common;
      for (int64_t k : ranks) {
        if (std::binary_search(it->ranks.begin(), it->ranks.end(), k) &&
            std::equal(dims.begin(), dims.begin() + k, it->dims.begin())) {
          common.push_back(k);
        }
      }
      std::vector<const Instruction*> extended = run;
      extended.push_back(inst);
      int64_t pick = 0;
      for (auto k = common.rbegin(); k != common.rend(); ++k) {
        if (checker.Valid(extended, *k)) {
          pick = *k;
          break;
        }
      }
      if (pick > 0) {
        run = std::move(extended);
        ranks = {};
        for (int64_t k : common) {
          if (k <= pick) ranks.push_back(k);
        }
        chosen = pick;
        continue;
      }
      close();
    }
    run = {inst};
    dims = it->dims;
    ranks = it->ranks;
    chosen = ranks.empty() ? 0 : ranks.back();
  }
  close();
  return groups;
}

}  // namespace xlac::codegen
