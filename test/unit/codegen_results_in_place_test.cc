// JitExecutable::RunBuffers writes a result leaf straight into the caller's buffer when the JIT's buffer assignment
// gave it an allocation of its own (BufferAssignmentOptions::result_allocations), the buffer is element-aligned
// (64-byte aligned for a result written with streaming stores), the layout row-major and the buffer overlaps no
// parameter or other result; otherwise it copies the leaf out of the arena as before. A leaf in a donated parameter's
// buffer (input_output_alias) is updated in the caller's result buffer: the parameter is copied there first, or not
// at all when the caller passes the parameter's own buffer as the result (codegen/result_placement.h). Every case is
// checked bit for bit against the reference interpreter (exact mode), and the count of in-place leaves
// (ExecutionProfile::results_in_place) against which path each case must take.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/jit.h"
#include "codegen/pipeline.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::codegen {
namespace {

struct Compiled {
  std::unique_ptr<Module> module;
  std::unique_ptr<JitExecutable> exe;
};

Compiled Compile(const std::string& text, int64_t replicas = 1) {
  Compiled c;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return c;
  c.module = *std::move(module);
  JitOptions options;
  options.compile.exact = true;
  options.num_replicas = replicas;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*c.module, options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  if (exe.ok()) c.exe = *std::move(exe);
  return c;
}

void FlattenLeaves(const Literal& lit, std::vector<const Literal*>& leaves) {
  if (lit.is_tuple()) {
    for (const Literal& e : lit.tuple_elements()) FlattenLeaves(e, leaves);
  } else if (lit.shape().IsArray()) {
    leaves.push_back(&lit);
  }
}

void FlattenShape(const Shape& shape, std::vector<Shape>& leaves) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes) FlattenShape(s, leaves);
  } else if (shape.IsArray()) {
    Shape logical = shape;
    logical.ClearLayout();
    leaves.push_back(logical);
  }
}

// Caller memory: `bytes` at offset `skew` into a 64-byte-aligned block filled with garbage.
struct CallerBuffer {
  std::vector<uint8_t> storage;
  uint8_t* data = nullptr;
  CallerBuffer(int64_t bytes, int64_t skew) : storage(static_cast<size_t>(bytes + 128), 0xAB) {
    auto base = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((64 - base % 64) % 64) + skew;
  }
};

// The logical (row-major) shape of a parameter or result leaf: the bytes callers pass and get.
Shape Logical(Shape shape) {
  shape.ClearLayout();
  return shape;
}

struct RunOutcome {
  std::vector<Literal> args;
  std::vector<std::unique_ptr<CallerBuffer>> results;
  int64_t in_place = -1;
};

// One RunBuffers on seeded random arguments; result leaf j is written at `skews[j]` bytes past 64-byte alignment.
RunOutcome RunOnce(const Compiled& c, uint64_t seed, const std::vector<int64_t>& skews) {
  RunOutcome out;
  const Computation* entry = c.module->entry_computation();
  std::vector<std::unique_ptr<CallerBuffer>> params;
  std::vector<const void*> param_ptrs;
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    out.args.push_back(interp::MakeRandomLiteral(Logical(entry->parameter(i)->shape()), seed + i));
    params.push_back(std::make_unique<CallerBuffer>(out.args.back().byte_size(), 0));
    std::memcpy(params.back()->data, out.args.back().raw_data(), static_cast<size_t>(out.args.back().byte_size()));
    param_ptrs.push_back(params.back()->data);
  }
  std::vector<Shape> leaves;
  FlattenShape(entry->root()->shape(), leaves);
  std::vector<void*> result_ptrs;
  for (size_t j = 0; j < leaves.size(); ++j) {
    out.results.push_back(
        std::make_unique<CallerBuffer>(leaves[j].ByteSizeOf().value_or(0), j < skews.size() ? skews[j] : 0));
    result_ptrs.push_back(out.results.back()->data);
  }
  absl::Status status = c.exe->RunBuffers(param_ptrs, result_ptrs);
  EXPECT_TRUE(status.ok()) << status;
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(std::memcmp(params[i]->data, out.args[i].raw_data(), static_cast<size_t>(out.args[i].byte_size())), 0)
        << "the run wrote parameter " << i;
  }
  out.in_place = c.exe->last_profile().results_in_place;
  return out;
}

void ExpectMatchesInterpreter(const Compiled& c, const RunOutcome& run, int64_t replicas = 1) {
  interp::InterpreterOptions options;
  options.num_replicas = replicas;
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*c.module, {run.args}, options);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<const Literal*> leaves;
  FlattenLeaves((*expected)[0], leaves);
  ASSERT_EQ(leaves.size(), run.results.size());
  for (size_t j = 0; j < leaves.size(); ++j) {
    EXPECT_EQ(std::memcmp(run.results[j]->data, leaves[j]->raw_data(), static_cast<size_t>(leaves[j]->byte_size())), 0)
        << "result " << j << " differs from the interpreter";
  }
}

// One RunOnce, the number of leaves it must have written in place, and its results against the interpreter.
void ExpectRun(const Compiled& c, uint64_t seed, const std::vector<int64_t>& skews, int64_t in_place) {
  RunOutcome run = RunOnce(c, seed, skews);
  EXPECT_EQ(run.in_place, in_place);
  ExpectMatchesInterpreter(c, run);
}

// An elementwise chain whose last op writes in place over an earlier value (as softmax's and layer norm's final
// fusions do): both then live in the caller's buffer.
constexpr char kChain[] = R"(
HloModule m
ENTRY e {
  p = f32[4,64] parameter(0)
  q = f32[4,64] parameter(1)
  a = f32[4,64] multiply(p, q)
  b = f32[4,64] tanh(a)
  ROOT c = f32[4,64] add(b, q)
}
)";

TEST(ResultsInPlace, TheJitGivesResultsTheirOwnAllocation) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kChain, "<test>");
  ASSERT_TRUE(module.ok());
  CompileOptions options;
  options.buffers.result_allocations = true;
  absl::StatusOr<PreparedModule> prepared = PrepareModule(**module, options);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  const BufferAssignment& ba = prepared->assignment;
  ASSERT_EQ(ba.entry_result_slices().size(), 1u);
  const BufferSlice& slice = ba.entry_result_slices()[0];
  const Allocation& alloc = ba.allocations()[static_cast<size_t>(slice.allocation)];
  EXPECT_TRUE(alloc.entry_result);
  EXPECT_EQ(alloc.kind, AllocationKind::kTemp);
  EXPECT_NE(slice.allocation, ba.temp_allocation());
  EXPECT_EQ(slice.offset, 0);
  EXPECT_EQ(alloc.size, 4 * 64 * 4);
  // Without the option (AOT) the result stays a slice of the one temp arena.
  options.buffers.result_allocations = false;
  absl::StatusOr<PreparedModule> aot = PrepareModule(**module, options);
  ASSERT_TRUE(aot.ok());
  EXPECT_EQ(aot->assignment.entry_result_slices()[0].allocation, aot->assignment.temp_allocation());
}

TEST(ResultsInPlace, AlignedBufferIsWrittenInPlace) {
  Compiled c = Compile(kChain);
  ASSERT_NE(c.exe, nullptr);
  ExpectRun(c, 1, {0}, 1);
  // Element alignment is all compiled code assumes: 4 bytes past a 64-byte boundary still qualifies.
  ExpectRun(c, 2, {4}, 1);
}

// A result of 16 MiB that one loop writes and nothing reads again is written with streaming stores
// (CodegenOptions::streaming_store_bytes, codegen/streaming_stores.h), which assume a 64-byte aligned base: the
// caller's buffer is used in place only when it is 64-byte aligned, and copied into otherwise.
TEST(ResultsInPlace, StreamedResultNeeds64ByteAlignment) {
  Compiled c = Compile(R"(
HloModule m
ENTRY e {
  p = f32[4096,1024] parameter(0)
  q = f32[4096,1024] parameter(1)
  ROOT r = f32[4096,1024] multiply(p, q)
}
)");
  ASSERT_NE(c.exe, nullptr);
  ExpectRun(c, 5, {0}, 1);
  for (int64_t skew : {4, 32}) {
    SCOPED_TRACE("skew " + std::to_string(skew));
    ExpectRun(c, 6 + static_cast<uint64_t>(skew), {skew}, 0);
  }
}

TEST(ResultsInPlace, MisalignedBufferIsCopied) {
  Compiled c = Compile(kChain);
  ASSERT_NE(c.exe, nullptr);
  ExpectRun(c, 3, {1}, 0);
}

// Different caller buffers on every run, aligned and not, in turn: each run's results land in its own buffers, and
// the buffers of earlier runs keep their values (a later run must not write through a stale binding).
TEST(ResultsInPlace, RepeatedRunsWithDifferentBuffers) {
  Compiled c = Compile(kChain);
  ASSERT_NE(c.exe, nullptr);
  std::vector<RunOutcome> runs;
  for (int r = 0; r < 5; ++r) {
    runs.push_back(RunOnce(c, 100 * static_cast<uint64_t>(r), {r % 2 == 0 ? 0 : 2}));
    EXPECT_EQ(runs.back().in_place, r % 2 == 0 ? 1 : 0) << "run " << r;
  }
  for (const RunOutcome& run : runs) ExpectMatchesInterpreter(c, run);
}

// Leaves that are a parameter, a constant, the same value twice (copy insertion separates them) and a computed value.
TEST(ResultsInPlace, TupleWithParameterConstantAndRepeatedLeaves) {
  Compiled c = Compile(R"(
HloModule m
ENTRY e {
  p = f32[16] parameter(0)
  q = f32[16] parameter(1)
  k = s32[3] constant({7, -1, 42})
  s = f32[16] subtract(p, q)
  ROOT t = (f32[16], s32[3], f32[16], f32[16], f32[16]) tuple(p, k, s, s, q)
}
)");
  ASSERT_NE(c.exe, nullptr);
  RunOutcome run = RunOnce(c, 5, {});
  ExpectMatchesInterpreter(c, run);
  // Copy insertion gives the parameter and constant leaves, and the second use of s, copies of their own (the root
  // may not share a parameter's, a constant's or another leaf's buffer), so every leaf is a temp of its own.
  EXPECT_EQ(run.in_place, 5);
}

// A donated parameter aliased to the result, given a result buffer of its own: the parameter is copied into the
// caller's result buffer and the program updates it there; the caller's parameter stays as it was (RunOnce checks).
TEST(ResultsInPlace, DonatedParameterIsStagedInTheResultBuffer) {
  Compiled c = Compile(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  s = f32[64] add(p, q)
  ROOT m = f32[64] multiply(s, q)
}
)");
  ASSERT_NE(c.exe, nullptr);
  for (uint64_t seed : {11, 12}) {
    RunOutcome run = RunOnce(c, seed, {0});
    EXPECT_EQ(run.in_place, 1);
    ExpectMatchesInterpreter(c, run);
  }
  // Misaligned by a byte: staged in the arena and copied out, as before.
  RunOutcome run = RunOnce(c, 13, {1});
  EXPECT_EQ(run.in_place, 0);
  ExpectMatchesInterpreter(c, run);
}

// A training step with donated weights (JAX's donate_argnums): the loss reads the weights, the update overwrites
// them. The step's result leaves are (loss, w - 0.125 * x^T (x w)); w is donated to the second.
constexpr char kDonatedStep[] = R"(
HloModule m, input_output_alias={ {1}: (0, {}, may-alias) }
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  w = f32[64,32] parameter(0)
  x = f32[16,64] parameter(1)
  y = f32[16,32] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  loss = f32[] reduce(y, zero), dimensions={0,1}, to_apply=add
  g = f32[64,32] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  lr = f32[] constant(0.125)
  lrb = f32[64,32] broadcast(lr), dimensions={}
  step = f32[64,32] multiply(g, lrb)
  w2 = f32[64,32] subtract(w, step)
  ROOT t = (f32[], f32[64,32]) tuple(loss, w2)
}
)";

// Passing the donated parameter's own buffer as its result: the program updates the weights where they are, with
// no copy, and two steps in a row give the interpreter's two steps.
TEST(ResultsInPlace, DonatedBufferPassedAsItsResultIsUpdatedInPlace) {
  Compiled c = Compile(kDonatedStep);
  ASSERT_NE(c.exe, nullptr);
  EXPECT_EQ(c.exe->result_donors(), (std::vector<int64_t>{-1, 0}));
  Literal w = interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {64, 32}), 51);
  Literal x = interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {16, 64}), 52);
  CallerBuffer weights(w.byte_size(), 0), inputs(x.byte_size(), 0), loss(4, 0);
  std::memcpy(weights.data, w.raw_data(), static_cast<size_t>(w.byte_size()));
  std::memcpy(inputs.data, x.raw_data(), static_cast<size_t>(x.byte_size()));
  for (int step = 0; step < 2; ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*c.module, {{w, x}}, {});
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_TRUE(c.exe->RunBuffers({weights.data, inputs.data}, {loss.data, weights.data}).ok());
    EXPECT_EQ(c.exe->last_profile().results_in_place, 2);
    const std::vector<Literal>& leaves = (*expected)[0].tuple_elements();
    EXPECT_EQ(std::memcmp(loss.data, leaves[0].raw_data(), 4), 0);
    EXPECT_EQ(std::memcmp(weights.data, leaves[1].raw_data(), static_cast<size_t>(w.byte_size())), 0);
    EXPECT_EQ(std::memcmp(inputs.data, x.raw_data(), static_cast<size_t>(x.byte_size())), 0) << "x was written";
    w = leaves[1];
  }
}

// The donated buffer also passed as another parameter: updating it in place would change what the program reads
// as that parameter, so the donation falls back to the arena and a copy after the run.
TEST(ResultsInPlace, DonatedBufferReadAsAnotherParameterIsCopied) {
  Compiled c = Compile(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[128] parameter(0)
  q = f32[128] parameter(1)
  r = f32[128] reverse(q), dimensions={0}
  ROOT s = f32[128] add(p, r)
}
)");
  ASSERT_NE(c.exe, nullptr);
  Literal arg = interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {128}), 61);
  CallerBuffer buffer(arg.byte_size(), 0);
  std::memcpy(buffer.data, arg.raw_data(), static_cast<size_t>(arg.byte_size()));
  ASSERT_TRUE(c.exe->RunBuffers({buffer.data, buffer.data}, {buffer.data}).ok());
  EXPECT_EQ(c.exe->last_profile().results_in_place, 0);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*c.module, {{arg, arg}}, {});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(std::memcmp(buffer.data, (*expected)[0].raw_data(), static_cast<size_t>(arg.byte_size())), 0);
}

// A column-major result: the copy out transposes into the row-major bytes callers get, so it is never in place.
TEST(ResultsInPlace, NonRowMajorResultIsCopied) {
  Compiled c = Compile(R"(
HloModule m
ENTRY e {
  p = f32[8,16] parameter(0)
  e = f32[8,16]{0,1} exponential(p)
  ROOT n = f32[8,16]{0,1} negate(e)
}
)");
  ASSERT_NE(c.exe, nullptr);
  ExpectRun(c, 13, {0}, 0);
}

// The caller passes one buffer as both the parameter and the result: writing the result while the program still
// reads the parameter (reverse reads the other end) would be wrong, so it is copied after the run.
TEST(ResultsInPlace, ResultOverlappingAParameterIsCopied) {
  Compiled c = Compile(R"(
HloModule m
ENTRY e {
  p = f32[256] parameter(0)
  r = f32[256] reverse(p), dimensions={0}
  ROOT s = f32[256] sine(r)
}
)");
  ASSERT_NE(c.exe, nullptr);
  Literal arg = interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {256}), 21);
  CallerBuffer buffer(arg.byte_size(), 0);
  std::memcpy(buffer.data, arg.raw_data(), static_cast<size_t>(arg.byte_size()));
  ASSERT_TRUE(c.exe->RunBuffers({buffer.data}, {buffer.data}).ok());
  EXPECT_EQ(c.exe->last_profile().results_in_place, 0);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*c.module, {{arg}}, {});
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(std::memcmp(buffer.data, (*expected)[0].raw_data(), static_cast<size_t>(arg.byte_size())), 0);
}

// A zero-element leaf beside a real one: nothing to write for it, the other still in place.
TEST(ResultsInPlace, ZeroElementLeaf) {
  Compiled c = Compile(R"(
HloModule m
ENTRY e {
  p = f32[0,4] parameter(0)
  q = f32[32] parameter(1)
  n = f32[0,4] negate(p)
  s = f32[32] sqrt(q)
  ROOT t = (f32[0,4], f32[32]) tuple(n, s)
}
)");
  ASSERT_NE(c.exe, nullptr);
  ExpectRun(c, 41, {0, 0}, 1);
}

// Two replicas: the first device's result goes to the caller's buffer, the other device keeps its arena.
TEST(ResultsInPlace, ReplicasWriteOnlyTheFirstDeviceInPlace) {
  constexpr char kText[] = R"(
HloModule m, replica_count=2
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  p = f32[32] parameter(0)
  r = u32[] replica-id()
  rf = f32[] convert(r)
  rb = f32[32] broadcast(rf), dimensions={}
  x = f32[32] add(p, rb)
  ROOT s = f32[32] all-reduce(x), replica_groups={{0,1}}, to_apply=add
}
)";
  Compiled c = Compile(kText, /*replicas=*/2);
  ASSERT_NE(c.exe, nullptr);
  for (uint64_t seed : {31, 32}) {
    RunOutcome run = RunOnce(c, seed, {0});
    ExpectMatchesInterpreter(c, run, /*replicas=*/2);
  }
}

}  // namespace
}  // namespace xlac::codegen
