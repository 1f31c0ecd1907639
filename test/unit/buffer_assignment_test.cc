#include "passes/buffer_assignment.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "passes/codegen_prepare.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

namespace fs = std::filesystem;
using Index = std::vector<int64_t>;

std::unique_ptr<Module> Parse(std::string_view text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**module, diags)) << diags.Render(SourceFile("<test>", text));
  return std::move(module).value();
}

void Leaves(const Shape& shape, Index& prefix, std::vector<Index>& out) {
  if (shape.IsTuple()) {
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      prefix.push_back(static_cast<int64_t>(i));
      Leaves(shape.tuple_shapes[i], prefix, out);
      prefix.pop_back();
    }
  } else if (shape.IsArray()) {
    out.push_back(prefix);
  }
}
std::vector<Index> Leaves(const Shape& shape) {
  std::vector<Index> out;
  Index prefix;
  Leaves(shape, prefix, out);
  return out;
}

// An independent check of a buffer assignment against the header's contract: every array leaf of every sequential
// instruction has an in-bounds slice; the header's aliases share a slice; parameters and constants live in their
// allocations; and two different values whose temp bytes overlap are never live at the same time, except where an
// elementwise op writes its result over an operand that dies at it. Returns the violations.
std::vector<std::string> CheckAssignment(const Module& module, const BufferAssignment& ba, int64_t alignment) {
  std::vector<std::string> errors;
  const Computation* entry = module.entry_computation();
  // Schedule, as the header defines liveness.
  std::map<const Instruction*, int64_t> pos;
  std::map<const Computation*, std::pair<int64_t, int64_t>> segment;
  std::vector<const Instruction*> at;
  std::function<void(const Computation*)> linearize = [&](const Computation* comp) {
    int64_t start = static_cast<int64_t>(at.size());
    at.push_back(nullptr);
    for (const Instruction* inst : comp->MakePostOrder()) {
      if (inst->opcode() == Opcode::kWhile || inst->opcode() == Opcode::kConditional) {
        for (const Computation* c : inst->called_computations()) linearize(c);
      }
      pos[inst] = static_cast<int64_t>(at.size());
      at.push_back(inst);
    }
    segment[comp] = {start, static_cast<int64_t>(at.size())};
    at.push_back(nullptr);
  };
  linearize(entry);

  // Leaves and the header's aliasing.
  std::map<std::pair<const Instruction*, Index>, int64_t> id;
  std::vector<std::pair<const Instruction*, Index>> leaf;
  for (const Instruction* inst : at) {
    if (inst == nullptr) continue;
    for (const Index& index : Leaves(inst->shape())) {
      id[{inst, index}] = static_cast<int64_t>(leaf.size());
      leaf.push_back({inst, index});
    }
  }
  std::vector<int64_t> uf(leaf.size());
  for (size_t i = 0; i < uf.size(); ++i) uf[i] = static_cast<int64_t>(i);
  std::function<int64_t(int64_t)> find = [&](int64_t x) { return uf[x] == x ? x : uf[x] = find(uf[x]); };
  auto unite = [&](const Instruction* a, const Index& ia, const Instruction* b, const Index& ib) {
    uf[find(id.at({a, ia}))] = find(id.at({b, ib}));
  };
  auto cat = [](int64_t k, const Index& rest) {
    Index out = {k};
    out.insert(out.end(), rest.begin(), rest.end());
    return out;
  };
  for (const Instruction* inst : at) {
    if (inst == nullptr) continue;
    switch (inst->opcode()) {
      case Opcode::kTuple:
        for (int64_t k = 0; k < inst->operand_count(); ++k) {
          for (const Index& i : Leaves(inst->operand(k)->shape())) unite(inst, cat(k, i), inst->operand(k), i);
        }
        break;
      case Opcode::kGetTupleElement:
        for (const Index& i : Leaves(inst->shape())) unite(inst, i, inst->operand(0), cat(inst->IntAttr("index"), i));
        break;
      case Opcode::kBitcast:
        if (inst->shape().IsArray() && inst->operand(0)->shape().IsArray()) unite(inst, {}, inst->operand(0), {});
        break;
      case Opcode::kWhile:
        for (const Index& i : Leaves(inst->shape())) {
          unite(inst, i, inst->operand(0), i);
          unite(inst, i, inst->called_computation(0)->parameter(0), i);
          unite(inst, i, inst->called_computation(1)->parameter(0), i);
          unite(inst, i, inst->called_computation(1)->root(), i);
        }
        break;
      case Opcode::kConditional:
        for (size_t b = 0; b < inst->called_computations().size(); ++b) {
          const Computation* branch = inst->called_computation(static_cast<int64_t>(b));
          for (const Index& i : Leaves(inst->shape())) unite(inst, i, branch->root(), i);
          for (const Index& i : Leaves(branch->parameter(0)->shape())) {
            unite(branch->parameter(0), i, inst->operand(static_cast<int64_t>(b) + 1), i);
          }
        }
        break;
      default:
        break;
    }
  }
  for (const InputOutputAlias& a : module.config().input_output_alias) {
    unite(entry->parameter(a.parameter_number), a.parameter_index, entry->root(), a.output_index);
  }

  // Slices, aliasing, allocation kinds.
  std::map<int64_t, BufferSlice> set_slice;
  std::map<int64_t, std::pair<int64_t, int64_t>> range;  // set -> live range
  const auto& allocations = ba.allocations();
  for (size_t n = 0; n < leaf.size(); ++n) {
    const auto& [inst, index] = leaf[n];
    std::string name = inst->name() + ShapeIndexToString(index);
    if (!ba.HasSlice(inst, index)) {
      errors.push_back("no slice for " + name);
      continue;
    }
    const BufferSlice& slice = ba.GetSlice(inst, index);
    int64_t bytes = inst->shape().Subshape(index)->ByteSizeOf().value_or(-1);
    if (slice.allocation < 0 || slice.allocation >= static_cast<int64_t>(allocations.size())) {
      errors.push_back("bad allocation for " + name);
      continue;
    }
    const Allocation& a = allocations[slice.allocation];
    if (slice.size < bytes || slice.offset < 0 || slice.offset + slice.size > a.size) {
      errors.push_back("slice of " + name + " out of bounds or too small");
    }
    if (a.kind == AllocationKind::kTemp && slice.offset % alignment != 0) errors.push_back("misaligned " + name);
    if (inst->opcode() == Opcode::kParameter && inst->parent() == entry &&
        (a.kind != AllocationKind::kParameter || a.parameter_number != inst->parameter_number() ||
         a.parameter_shape_index != index)) {
      errors.push_back("entry parameter leaf " + name + " is not in its parameter allocation");
    }
    if (inst->opcode() == Opcode::kConstant && (a.kind != AllocationKind::kConstant || a.constant != inst)) {
      errors.push_back("constant " + name + " is not in its constant allocation");
    }
    int64_t set = find(static_cast<int64_t>(n));
    auto [it, inserted] = set_slice.emplace(set, slice);
    if (!inserted && !(it->second == slice)) errors.push_back("aliased values disagree on their slice at " + name);
    // Liveness contribution.
    int64_t def = inst->opcode() == Opcode::kParameter ? segment.at(inst->parent()).first : pos.at(inst);
    auto [r, fresh] = range.emplace(set, std::make_pair(def, def));
    int64_t lo = std::min(r->second.first, def), hi = std::max(r->second.second, def);
    for (const Instruction* user : inst->users()) {
      if (user->opcode() == Opcode::kGetTupleElement && (index.empty() || index[0] != user->IntAttr("index"))) continue;
      hi = std::max(hi, pos.at(user));
    }
    if (inst == inst->parent()->root()) hi = std::max(hi, segment.at(inst->parent()).second);
    r->second = {lo, hi};
  }
  std::vector<BufferSlice> expected_results;
  for (const Index& i : Leaves(entry->root()->shape())) {
    if (ba.HasSlice(entry->root(), i)) expected_results.push_back(ba.GetSlice(entry->root(), i));
  }
  if (expected_results != ba.entry_result_slices()) errors.push_back("entry_result_slices disagree with GetSlice");

  // Interference in the temp arena.
  std::vector<std::pair<BufferSlice, int64_t>> temps;
  for (const auto& [set, slice] : set_slice) {
    if (allocations[slice.allocation].kind == AllocationKind::kTemp && slice.size > 0) temps.push_back({slice, set});
  }
  std::sort(temps.begin(), temps.end(), [](const auto& a, const auto& b) { return a.first.offset < b.first.offset; });
  auto member_at = [&](int64_t set, const Instruction* inst) {
    for (const Index& i : Leaves(inst->shape())) {
      if (find(id.at({inst, i})) == set) return true;
    }
    return false;
  };
  for (size_t i = 0; i < temps.size(); ++i) {
    for (size_t j = i + 1; j < temps.size() && temps[j].first.offset < temps[i].first.offset + temps[i].first.size;
         ++j) {
      auto [a0, a1] = range.at(temps[i].second);
      auto [b0, b1] = range.at(temps[j].second);
      if (a1 < b0 || b1 < a0) continue;
      // Allowed: touching at one elementwise op that defines one set and reads the other.
      int64_t early = a0 < b0 ? temps[i].second : temps[j].second;
      int64_t late = a0 < b0 ? temps[j].second : temps[i].second;
      int64_t touch = std::min(a1, b1);
      const Instruction* op = touch == std::max(a0, b0) ? at[touch] : nullptr;
      bool in_place = op != nullptr && op->shape().IsArray() &&
                      (IsElementwiseUnary(op->opcode()) || IsElementwiseBinary(op->opcode()) ||
                       op->opcode() == Opcode::kSelect || op->opcode() == Opcode::kClamp) &&
                      member_at(late, op) && range.at(early).second == touch &&
                      std::any_of(op->operands().begin(), op->operands().end(),
                                  [&](const Instruction* o) { return member_at(early, o); });
      if (!in_place) {
        const auto& la = leaf[temps[i].second];
        const auto& lb = leaf[temps[j].second];
        errors.push_back("live values " + la.first->name() + ShapeIndexToString(la.second) + " [" + std::to_string(a0) +
                         "," + std::to_string(a1) + "] and " + lb.first->name() + ShapeIndexToString(lb.second) + " [" +
                         std::to_string(b0) + "," + std::to_string(b1) + "] overlap in the arena");
      }
    }
  }
  if (ba.peak_live_bytes() > ba.temp_bytes()) errors.push_back("peak live bytes exceed the arena");
  return errors;
}

absl::StatusOr<BufferAssignment> PrepareAndAssign(Module& module, const BufferAssignmentOptions& options = {}) {
  absl::Status prepared = PrepareForCodegen(module);
  if (!prepared.ok()) return prepared;
  return AssignBuffers(module, options);
}

// Parses, prepares, assigns and checks; fails the test on any violation.
struct Assigned {
  std::unique_ptr<Module> module;
  std::optional<BufferAssignment> ba;
  const Instruction* Get(std::string_view name) const {
    for (const auto& comp : module->computations()) {
      if (const Instruction* inst = comp->FindInstruction(name)) return inst;
    }
    ADD_FAILURE() << "no instruction " << name;
    return nullptr;
  }
  const BufferSlice& Slice(std::string_view name, const Index& index = {}) const {
    return ba->GetSlice(Get(name), index);
  }
};

Assigned Assign(std::string_view text, const BufferAssignmentOptions& options = {}) {
  Assigned out;
  out.module = Parse(text);
  if (!out.module) return out;
  absl::StatusOr<BufferAssignment> ba = PrepareAndAssign(*out.module, options);
  EXPECT_TRUE(ba.ok()) << ba.status().message();
  if (!ba.ok()) return out;
  for (const std::string& e : CheckAssignment(*out.module, *ba, options.alignment)) ADD_FAILURE() << e;
  out.ba = std::move(*ba);
  return out;
}

constexpr std::string_view kChain = R"(
HloModule chain

ENTRY main {
  p = f32[16] parameter(0)
  a = f32[16] exponential(p)
  b = f32[16] negate(a)
  c = f32[16] sine(b)
  d = f32[16] cosine(c)
  ROOT e = f32[16] add(d, p)
}
)";

TEST(BufferAssignmentTest, ChainReusesBytesWithoutInPlace) {
  BufferAssignmentOptions options;
  options.allow_in_place = false;
  Assigned r = Assign(kChain, options);
  ASSERT_TRUE(r.ba);
  // Two buffers alternate: a and c share, b and d share (64 bytes each).
  EXPECT_EQ(r.Slice("a"), r.Slice("c"));
  EXPECT_EQ(r.Slice("b"), r.Slice("d"));
  EXPECT_NE(r.Slice("a"), r.Slice("b"));
  EXPECT_EQ(r.ba->temp_bytes(), 128);
  EXPECT_EQ(r.ba->peak_live_bytes(), 128);
  EXPECT_EQ(r.ba->allocations()[r.Slice("p").allocation].kind, AllocationKind::kParameter);
  EXPECT_EQ(r.ba->entry_result_slices(), std::vector<BufferSlice>{r.Slice("e")});
}

TEST(BufferAssignmentTest, ChainRunsInPlace) {
  Assigned r = Assign(kChain);
  ASSERT_TRUE(r.ba);
  for (const char* name : {"b", "c", "d", "e"}) EXPECT_EQ(r.Slice(name), r.Slice("a")) << name;
  EXPECT_EQ(r.ba->temp_bytes(), 64);
  EXPECT_EQ(r.ba->peak_live_bytes(), 64);
  EXPECT_NE(r.ba->ToString().find("b{} over a{}"), std::string::npos) << r.ba->ToString();
}

TEST(BufferAssignmentTest, NoReuseGivesEveryValueItsOwnBytes) {
  BufferAssignmentOptions options;
  options.reuse_buffers = false;
  Assigned r = Assign(kChain, options);
  ASSERT_TRUE(r.ba);
  EXPECT_EQ(r.ba->temp_bytes(), 5 * 64);
  std::set<int64_t> offsets;
  for (const char* name : {"a", "b", "c", "d", "e"}) offsets.insert(r.Slice(name).offset);
  EXPECT_EQ(offsets.size(), 5u);
}

TEST(BufferAssignmentTest, NoInPlaceWhenOperandStaysLive) {
  Assigned r = Assign(R"(
HloModule m
ENTRY main {
  p = f32[8] parameter(0)
  a = f32[8] exponential(p)
  b = f32[8] negate(a)
  ROOT t = (f32[8], f32[8]) tuple(a, b)
}
)");
  ASSERT_TRUE(r.ba);
  EXPECT_NE(r.Slice("a"), r.Slice("b"));
  EXPECT_EQ(r.Slice("t", {0}), r.Slice("a"));
  EXPECT_EQ(r.Slice("t", {1}), r.Slice("b"));
  EXPECT_EQ(r.ba->entry_result_slices().size(), 2u);
}

TEST(BufferAssignmentTest, NoInPlaceAcrossShapeChange) {
  Assigned r = Assign(R"(
HloModule m
ENTRY main {
  p = f32[4,4] parameter(0)
  a = f32[4,4]{1,0} exponential(p)
  b = f32[4,4]{0,1} negate(a)
  ROOT c = f32[4,4]{0,1} sine(b)
}
)");
  ASSERT_TRUE(r.ba);
  EXPECT_NE(r.Slice("a"), r.Slice("b"));  // layouts differ
  EXPECT_EQ(r.Slice("b"), r.Slice("c"));
}

TEST(BufferAssignmentTest, DonatedParameterHoldsTheResult) {
  Assigned r = Assign(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY main {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  ROOT r = f32[8] add(p, q)
}
)");
  ASSERT_TRUE(r.ba);
  const BufferSlice& s = r.Slice("r");
  EXPECT_EQ(s, r.Slice("p"));
  EXPECT_EQ(r.ba->allocations()[s.allocation].kind, AllocationKind::kParameter);
  EXPECT_EQ(r.ba->temp_allocation(), -1);
}

TEST(BufferAssignmentTest, DonationWaitsForLaterReaders) {
  // p is read by `later`, which does not depend on r, so r is ordered after it and writes p directly. q is read
  // by late2, which depends on `after`, so `after` cannot overwrite q itself: the second output is a copy.
  Assigned r = Assign(R"(
HloModule m, input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}, may-alias) }
ENTRY main {
  p = f32[8] parameter(0)
  q = f32[8] parameter(1)
  later = f32[8] multiply(p, p)
  r = f32[8] add(q, q)
  after = f32[8] subtract(r, q)
  late2 = f32[8] multiply(after, q)
  ROOT t = (f32[8], f32[8], f32[8], f32[8]) tuple(r, after, later, late2)
}
)");
  ASSERT_TRUE(r.ba);
  const Instruction* root = r.module->entry_computation()->root();
  EXPECT_EQ(r.ba->entry_result_slices()[0], r.Slice("p"));
  EXPECT_EQ(r.ba->entry_result_slices()[1], r.Slice("q"));
  EXPECT_EQ(root->operand(1)->opcode(), Opcode::kCopy);
  EXPECT_EQ(root->operand(0)->name(), "r");
}

constexpr std::string_view kLoop = R"(
HloModule loop

cond {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(4)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  s = (s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  x = f32[8] get-tuple-element(s), index=1
  x1 = f32[8] multiply(x, x)
  ROOT t = (s32[], f32[8]) tuple(i1, x1)
}

ENTRY main {
  zero = s32[] constant(0)
  p = f32[8] parameter(0)
  init = (s32[], f32[8]) tuple(zero, p)
  w = (s32[], f32[8]) while(init), condition=cond, body=body
  ROOT r = f32[8] get-tuple-element(w), index=1
}
)";

TEST(BufferAssignmentTest, WhileStateSharesOneBufferPerLeaf) {
  Assigned r = Assign(kLoop);
  ASSERT_TRUE(r.ba);
  for (int64_t k : {0, 1}) {
    const BufferSlice& s = r.Slice("w", {k});
    EXPECT_EQ(r.module->FindComputation("body")->root()->name(), "t");
    EXPECT_EQ(r.ba->GetSlice(r.module->FindComputation("body")->parameter(0), {k}), s);
    EXPECT_EQ(r.ba->GetSlice(r.module->FindComputation("cond")->parameter(0), {k}), s);
    EXPECT_EQ(r.ba->GetSlice(r.module->FindComputation("body")->root(), {k}), s);
    EXPECT_EQ(r.ba->allocations()[s.allocation].kind, AllocationKind::kTemp);
  }
  // The body updates both leaves directly (no copies): i1 and x1 are elementwise over the leaf they replace.
  EXPECT_EQ(r.Slice("i1"), r.Slice("w", {0}));
  EXPECT_EQ(r.Slice("x1"), r.Slice("w", {1}));
  EXPECT_EQ(r.Slice("r"), r.Slice("w", {1}));
  // The init leaves are copies of the constant and the parameter.
  const Instruction* init = r.Get("w")->operand(0);
  EXPECT_EQ(r.ba->GetSlice(init, {0}), r.Slice("w", {0}));
  EXPECT_NE(r.Slice("p"), r.Slice("w", {1}));
  EXPECT_NE(r.Slice("zero"), r.Slice("w", {0}));
}

TEST(BufferAssignmentTest, ConditionalResultSharesBranchRoots) {
  Assigned r = Assign(R"(
HloModule m

b0 {
  x = f32[4] parameter(0)
  ROOT y = f32[4] exponential(x)
}

b1 {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}

ENTRY main {
  i = s32[] parameter(0)
  p = f32[4] parameter(1)
  q = f32[4] sine(p)
  c = f32[4] conditional(i, q, q), branch_computations={b0, b1}
  ROOT r = f32[4] add(c, q)
}
)");
  ASSERT_TRUE(r.ba);
  const BufferSlice& s = r.Slice("c");
  EXPECT_EQ(r.ba->GetSlice(r.module->FindComputation("b0")->root()), s);
  EXPECT_EQ(r.ba->GetSlice(r.module->FindComputation("b1")->root()), s);
  // Branch parameters read the operand in place.
  EXPECT_EQ(r.ba->GetSlice(r.module->FindComputation("b0")->parameter(0)), r.Slice("q"));
  EXPECT_NE(s, r.Slice("q"));
}

TEST(BufferAssignmentTest, TupleAndGteAlias) {
  Assigned r = Assign(R"(
HloModule m
ENTRY main {
  p = f32[4] parameter(0)
  a = f32[4] exponential(p)
  b = f32[2,2] bitcast(a)
  t1 = (f32[2,2], f32[4]) tuple(b, a)
  t = (f32[4], (f32[2,2], f32[4])) tuple(a, t1)
  g = (f32[2,2], f32[4]) get-tuple-element(t), index=1
  g0 = f32[2,2] get-tuple-element(g), index=0
  c = f32[2,2] negate(g0)
  ROOT r = (f32[2,2], f32[4]) tuple(c, a)
}
)");
  ASSERT_TRUE(r.ba);
  EXPECT_EQ(r.Slice("t", {0}), r.Slice("a"));
  EXPECT_EQ(r.Slice("t", {1, 0}), r.Slice("a"));
  EXPECT_EQ(r.Slice("g", {1}), r.Slice("a"));
  EXPECT_EQ(r.Slice("g0"), r.Slice("a"));
  EXPECT_EQ(r.Slice("b"), r.Slice("a"));
  EXPECT_NE(r.Slice("c"), r.Slice("a"));  // a is still live (it is an output)
}

TEST(BufferAssignmentTest, DumpIsDeterministicAndListsTheArena) {
  std::string dumps[2];
  for (std::string& dump : dumps) {
    Assigned r = Assign(kLoop);
    ASSERT_TRUE(r.ba);
    dump = r.ba->ToString();
  }
  EXPECT_EQ(dumps[0], dumps[1]);
  EXPECT_NE(dumps[0].find("temp arena"), std::string::npos);
  EXPECT_NE(dumps[0].find("#0 parameter 0{} f32[8]"), std::string::npos) << dumps[0];
  EXPECT_NE(dumps[0].find("begin body"), std::string::npos) << dumps[0];
}

TEST(BufferAssignmentTest, DumpOfAThreeOpChain) {
  Assigned r = Assign(R"(
HloModule chain3
ENTRY main {
  p = f32[16] parameter(0)
  k = f32[] constant(2)
  kb = f32[16] broadcast(k), dimensions={}
  a = f32[16] multiply(p, kb)
  b = f32[16] exponential(a)
  ROOT c = f32[16] add(b, a)
}
)");
  ASSERT_TRUE(r.ba);
  EXPECT_EQ(r.ba->ToString(),
            R"(BufferAssignment: 3 allocations, temp arena 128 bytes, peak live 128 bytes, alignment 64
allocations:
  #0 parameter 0{} f32[16]: 64 bytes
  #1 constant k: 4 bytes
  #2 temp: 128 bytes
slices (allocation, offset, size, live range in schedule positions, value):
  #0            0         64  [0,4]  p{}
  #1            0          4  [2,3]  k{}
  #2            0         64  [4,6]  a{}
  #2            0         64  [3,4]  kb{}
  #2           64         64  [5,6]  b{}
  #2           64         64  [6,7]  c{}
in place:
  a{} over kb{}
  c{} over b{}
schedule:
      0 begin main
      1   p
      2   k
      3   kb
      4   a
      5   b
      6   c
      7 end main
)") << r.ba->ToString();
}

TEST(BufferAssignmentTest, ReportsMissingPreparation) {
  std::unique_ptr<Module> call = Parse(R"(
HloModule m
f {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY main {
  p = f32[4] parameter(0)
  ROOT c = f32[4] call(p), to_apply=f
}
)");
  ASSERT_NE(call, nullptr);
  absl::StatusOr<BufferAssignment> ba = AssignBuffers(*call);
  ASSERT_FALSE(ba.ok());
  EXPECT_NE(ba.status().message().find("run call-inliner first"), std::string::npos) << ba.status().message();

  std::unique_ptr<Module> loop = Parse(kLoop);
  ASSERT_NE(loop, nullptr);
  ba = AssignBuffers(*loop);
  ASSERT_FALSE(ba.ok());
  EXPECT_NE(ba.status().message().find("run copy-insertion first"), std::string::npos) << ba.status().message();

  // Donation without copy insertion: r would overwrite p while `later` still reads it.
  std::unique_ptr<Module> donated = Parse(R"(
HloModule m, input_output_alias={ {0}: (0, {}, may-alias) }
ENTRY main {
  p = f32[4] parameter(0)
  r = f32[4] exponential(p)
  later = f32[4] multiply(p, r)
  ROOT t = (f32[4], f32[4]) tuple(r, later)
}
)");
  ASSERT_NE(donated, nullptr);
  ba = AssignBuffers(*donated);
  ASSERT_FALSE(ba.ok());
  EXPECT_NE(ba.status().message().find("r{} overwrites the buffer of p{} while it is still read (last read at later)"),
            std::string::npos)
      << ba.status().message();

  std::unique_ptr<Module> shared = Parse(R"(
HloModule m
b {
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}
ENTRY main {
  i = s32[] parameter(0)
  p = f32[4] parameter(1)
  ROOT c = f32[4] conditional(i, p, p), branch_computations={b, b}
}
)");
  ASSERT_NE(shared, nullptr);
  ba = AssignBuffers(*shared);
  ASSERT_FALSE(ba.ok());
  EXPECT_NE(ba.status().message().find("run flatten-call-graph first"), std::string::npos) << ba.status().message();
}

// ---------------------------------------------------------------------------------------------------------------
// Corpus sweep: every execution-corpus module that parses and verifies is prepared, assigned and checked; modules
// small enough are evaluated before and after preparation and must give bit-identical results.

fs::path CorpusRoot() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return fs::path(src) / ".." / "shared" / "corpus";
  return fs::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared" / "corpus";
}

int64_t ModuleElements(const Module& module) {
  int64_t total = 0;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      for (const Index& i : Leaves(inst->shape())) {
        total += inst->shape().Subshape(i)->ElementCount().value_or(int64_t{1} << 40);
      }
    }
  }
  return total;
}

TEST(BufferAssignmentCorpus, PreparedModulesAssignWithoutInterferenceAndKeepTheirResults) {
  fs::path root = CorpusRoot();
  if (!fs::exists(root / "hlo" / "manifest.tsv")) GTEST_SKIP() << "corpus not found at " << root;
  std::vector<fs::path> files;
  for (const char* dir : {"xla_tests", "evaluator", "models"}) {
    for (const auto& entry : fs::recursive_directory_iterator(root / "hlo" / dir)) {
      if (entry.is_regular_file() && entry.path().extension() == ".hlo") files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  int total = 0, unusable = 0, assigned = 0, compared = 0, same = 0, not_evaluated = 0, too_big = 0;
  std::map<std::string, std::vector<std::string>> failures;  // category -> modules
  for (const fs::path& path : files) {
    ++total;
    std::string rel = fs::relative(path, root).string();
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    absl::StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(text.str(), rel);
    DiagnosticEngine diags;
    if (!parsed.ok() || !VerifyModule(**parsed, diags)) {
      ++unusable;
      continue;
    }
    Module& module = **parsed;
    bool small = ModuleElements(module) < 1000000;
    std::vector<Literal> args;
    for (const Instruction* p : module.entry_computation()->parameters()) {
      args.push_back(interp::MakeRandomLiteral(p->shape(), 7 + args.size()));
    }
    interp::InterpreterOptions options;
    options.collective_timeout_ms = 2000;
    absl::StatusOr<std::vector<Literal>> before;
    if (small) {
      before = interp::Evaluate(module, {args}, options);
    } else {
      ++too_big;
    }
    absl::Status prepared = PrepareForCodegen(module);
    if (!prepared.ok()) {
      failures["prepare: " + std::string(prepared.message()).substr(0, 60)].push_back(rel);
      continue;
    }
    absl::StatusOr<BufferAssignment> ba = AssignBuffers(module);
    if (!ba.ok()) {
      failures["assign: " + std::string(ba.status().message()).substr(0, 60)].push_back(rel);
      continue;
    }
    ++assigned;
    std::vector<std::string> errors = CheckAssignment(module, *ba, 64);
    EXPECT_TRUE(errors.empty()) << rel << ": " << errors.size() << " violations, first: " << errors.front();
    if (!small) continue;
    if (!before.ok()) {
      ++not_evaluated;
      continue;
    }
    absl::StatusOr<std::vector<Literal>> after = interp::Evaluate(module, {args}, options);
    ++compared;
    if (after.ok() && *after == *before) {
      ++same;
    } else {
      ADD_FAILURE() << rel << ": results changed after PrepareForCodegen"
                    << (after.ok() ? "" : ": " + std::string(after.status().message()));
    }
  }
  std::cout << "corpus modules: " << total << ", not parsed/verified: " << unusable
            << ", assigned and checked: " << assigned << "\n"
            << "interpreter comparison: " << compared << " compared, " << same << " bit-identical, " << not_evaluated
            << " not evaluable before preparation, " << too_big << " over 1e6 elements\n";
  for (const auto& [category, list] : failures) {
    std::cout << "  skipped (" << category << "): " << list.size() << "\n";
    for (const std::string& f : list) std::cout << "    " << f << "\n";
  }
  EXPECT_GT(assigned, 100);
}

}  // namespace
}  // namespace xlac
