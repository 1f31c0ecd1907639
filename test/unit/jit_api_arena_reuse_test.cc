// An executable's buffers are allocated on its first run and reused by later ones (codegen/jit.cc): every run of
// one executable on new inputs must still match the reference interpreter, results the caller kept from earlier runs
// must stay intact, values left in the reused buffers by the previous run must not leak into the next, and the
// caller's parameters must never be written (donated ones included). Covers both paths: the public API
// (JitExecutable::RunBuffers, parameters read in place or staged) and literals (JitExecutable::RunPerDevice).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "codegen/jit.h"
#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"
#include "xlac/jit.h"

namespace xlac {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  return module.ok() ? *std::move(module) : nullptr;
}

void FlattenLeaves(const Literal& lit, std::vector<const Literal*>& leaves) {
  if (lit.is_tuple()) {
    for (const Literal& e : lit.tuple_elements()) FlattenLeaves(e, leaves);
  } else if (lit.shape().IsArray()) {
    leaves.push_back(&lit);
  }
}

// Floats within a few ulps of the interpreter (the default mode may reassociate), everything else exact.
std::string Compare(const Literal& expected, const std::vector<uint8_t>& actual) {
  PrimitiveType type = expected.shape().element_type;
  int64_t n = expected.element_count();
  if (static_cast<int64_t>(actual.size()) != n * ByteWidth(type)) return "size differs";
  for (int64_t i = 0; i < n; ++i) {
    if (type == PrimitiveType::kF32) {
      float e, a;
      std::memcpy(&e, expected.raw_data() + 4 * i, 4);
      std::memcpy(&a, actual.data() + 4 * i, 4);
      if (!(e == a || std::fabs(e - a) <= 1e-5f + 1e-5f * std::fabs(e))) {
        return "element " + std::to_string(i) + ": expected " + std::to_string(e) + ", got " + std::to_string(a);
      }
    } else if (std::memcmp(expected.raw_data() + i * ByteWidth(type), actual.data() + i * ByteWidth(type),
                           static_cast<size_t>(ByteWidth(type))) != 0) {
      return "element " + std::to_string(i) + " differs";
    }
  }
  return "";
}

struct RunRecord {
  std::vector<Literal> args;
  std::vector<std::vector<uint8_t>> results;
};

// Runs `text` through the public API `runs` times on different random inputs (parameter `misaligned` is passed one
// byte off its allocation, which forces a staged copy), keeping every run's results in its own buffers, then checks
// all of them against the interpreter.
void ExpectRepeatedRunsMatch(const std::string& text, int runs, int misaligned = -1, CompileOptions options = {}) {
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<Executable>> exe = Executable::Compile(text, options);
  ASSERT_TRUE(exe.ok()) << exe.status();
  const Computation* entry = module->entry_computation();
  std::vector<RunRecord> records;
  for (int run = 0; run < runs; ++run) {
    RunRecord record;
    std::vector<std::vector<uint8_t>> storage;  // parameters, with one spare byte in front
    std::vector<const void*> params;
    for (int64_t i = 0; i < entry->parameter_count(); ++i) {
      Shape logical = entry->parameter(i)->shape();
      logical.ClearLayout();
      record.args.push_back(interp::MakeRandomLiteral(logical, 1000 * static_cast<uint64_t>(run) + i));
      const Literal& arg = record.args.back();
      storage.emplace_back(static_cast<size_t>(arg.byte_size()) + 8);
      uint8_t* data = storage.back().data() + (i == misaligned ? 1 : 0);
      std::memcpy(data, arg.raw_data(), static_cast<size_t>(arg.byte_size()));
      params.push_back(data);
    }
    std::vector<void*> results;
    for (const ArrayInfo& info : (*exe)->results()) {
      record.results.emplace_back(static_cast<size_t>(info.byte_size()), 0xAB);
      results.push_back(record.results.back().data());
    }
    absl::Status status = (*exe)->Run(params, results);
    ASSERT_TRUE(status.ok()) << "run " << run << ": " << status;
    for (size_t i = 0; i < params.size(); ++i) {
      EXPECT_EQ(std::memcmp(params[i], record.args[i].raw_data(), static_cast<size_t>(record.args[i].byte_size())), 0)
          << "run " << run << " wrote parameter " << i;
    }
    records.push_back(std::move(record));
  }
  for (int run = 0; run < runs; ++run) {
    interp::InterpreterOptions interp_options;
    interp_options.num_replicas = options.num_replicas;
    absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {records[run].args}, interp_options);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<const Literal*> leaves;
    FlattenLeaves((*expected)[0], leaves);
    ASSERT_EQ(leaves.size(), records[run].results.size());
    for (size_t j = 0; j < leaves.size(); ++j) {
      std::string difference = Compare(*leaves[j], records[run].results[j]);
      EXPECT_TRUE(difference.empty()) << "run " << run << ", result " << j << ": " << difference;
    }
  }
}

// Accumulating ops (dot, reduce, convolution, a while loop carrying a sum, scatter-add) over temps the previous
// run filled; a parameter in a column-major layout (staged through a transposing copy) next to row-major ones (read
// in place).
constexpr char kAccumulating[] = R"(
HloModule m

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  t = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  t = (s32[], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(t), index=0
  acc = f32[8,8] get-tuple-element(t), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  e = f32[8,8] tanh(acc)
  scale = f32[] constant(0.25)
  sb = f32[8,8] broadcast(scale), dimensions={}
  acc1 = f32[8,8] multiply(e, sb)
  ROOT r = (s32[], f32[8,8]) tuple(i1, acc1)
}

ENTRY e {
  a = f32[8,16]{0,1} parameter(0)
  b = f32[16,8] parameter(1)
  img = f32[1,2,6,6] parameter(2)
  k = f32[3,2,3,3] parameter(3)
  idx = s32[4,1] parameter(4)
  upd = f32[4,8] parameter(5)
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  zero = f32[] constant(0)
  rows = f32[8] reduce(d, zero), dimensions={1}, to_apply=add
  c = f32[1,3,6,6] convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=bf01_oi01->bf01
  i0 = s32[] constant(0)
  init = (s32[], f32[8,8]) tuple(i0, d)
  w = (s32[], f32[8,8]) while(init), condition=cond, body=body
  acc = f32[8,8] get-tuple-element(w), index=1
  zeros = f32[8,8] broadcast(zero), dimensions={}
  sc = f32[8,8] scatter(zeros, idx, upd), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  ROOT out = (f32[8], f32[1,3,6,6], f32[8,8], f32[8,8]) tuple(rows, c, acc, sc)
}
)";

TEST(JitArenaReuse, RepeatedRunsMatchTheInterpreter) { ExpectRepeatedRunsMatch(kAccumulating, 4); }

TEST(JitArenaReuse, MisalignedParameterIsStaged) { ExpectRepeatedRunsMatch(kAccumulating, 3, /*misaligned=*/1); }

// The program writes a donated parameter's buffer; the caller's memory must stay as it was.
TEST(JitArenaReuse, DonatedParameterIsNotWritten) {
  ExpectRepeatedRunsMatch(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY e {
  p = f32[64] parameter(0)
  q = f32[64] parameter(1)
  s = f32[64] add(p, q)
  ROOT m = f32[64] multiply(s, q)
}
)",
                          3);
}

// Every device has its own buffers (two replicas summing across each other).
TEST(JitArenaReuse, ReplicasKeepSeparateBuffers) {
  CompileOptions options;
  options.num_replicas = 2;
  ExpectRepeatedRunsMatch(R"(
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
)",
                          3, -1, options);
}

// The literal path (xla-run's): devices get different arguments on every run, results are fresh literals that stay
// valid after later runs.
TEST(JitArenaReuse, RunPerDeviceResultsSurviveLaterRuns) {
  const std::string text = R"(
HloModule m, num_partitions=2
ENTRY e {
  p = f32[4,8]{0,1} parameter(0)
  q = f32[8] parameter(1)
  qb = f32[4,8] broadcast(q), dimensions={1}
  t = f32[4,8] multiply(p, qb)
  tt = f32[8,4] transpose(t), dimensions={1,0}
  ROOT r = (f32[4,8], f32[8,4]) tuple(t, tt)
}
)";
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> exe = codegen::JitExecutable::Compile(*module);
  ASSERT_TRUE(exe.ok()) << exe.status();
  std::vector<std::vector<std::vector<Literal>>> args;
  std::vector<std::vector<Literal>> outputs;
  for (uint64_t run = 0; run < 3; ++run) {
    std::vector<std::vector<Literal>> per_device(2);
    for (uint64_t d = 0; d < 2; ++d) {
      for (int64_t i = 0; i < 2; ++i) {
        Shape logical = module->entry_computation()->parameter(i)->shape();
        logical.ClearLayout();
        per_device[d].push_back(interp::MakeRandomLiteral(logical, 100 * run + 10 * d + static_cast<uint64_t>(i)));
      }
    }
    absl::StatusOr<std::vector<Literal>> out = (*exe)->RunPerDevice(per_device);
    ASSERT_TRUE(out.ok()) << out.status();
    outputs.push_back(*std::move(out));
    args.push_back(std::move(per_device));
  }
  for (size_t run = 0; run < outputs.size(); ++run) {
    absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, args[run]);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (size_t d = 0; d < 2; ++d) {
      std::vector<const Literal*> want, got;
      FlattenLeaves((*expected)[d], want);
      FlattenLeaves(outputs[run][d], got);
      ASSERT_EQ(want.size(), got.size());
      for (size_t j = 0; j < want.size(); ++j) {
        std::vector<uint8_t> bytes(got[j]->raw_data(), got[j]->raw_data() + got[j]->byte_size());
        std::string difference = Compare(*want[j], bytes);
        EXPECT_TRUE(difference.empty()) << "run " << run << ", device " << d << ", result " << j << ": " << difference;
      }
    }
  }
}

}  // namespace
}  // namespace xlac
