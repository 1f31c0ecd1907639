// Infeed in compiled code asks JitOptions::infeed_handler for each execution's data. With a handler answering
// interp::InfeedValue, compiled code must reproduce the interpreter's seeded infeed data bit for bit: the same
// instruction names, devices and occurrence counts (per instruction and device, across loop iterations and inlined
// copies).
#include <mutex>
#include <set>
#include <tuple>

#include "codegen_test_util.h"
#include "runtime/cpu/xlac_runtime.h"

namespace xlac::codegen::testing {
namespace {

InfeedHandler InterpreterInfeeds(uint64_t seed) {
  return [seed](const Instruction& infeed, int64_t device_id, uint64_t occurrence) -> absl::StatusOr<Literal> {
    return interp::InfeedValue(infeed.shape().tuple_shapes.at(0), infeed.name(), seed, device_id, occurrence);
  };
}

// Runs `text` on both backends (every device) with infeeds answered like the interpreter answers them.
void ExpectInfeedsMatchInterpreter(const std::string& text, int64_t replicas = 1, uint64_t seed = 42) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  std::vector<Literal> args;
  const Computation* entry = module->entry_computation();
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), 7 + static_cast<uint64_t>(i)));
  }
  interp::InterpreterOptions interp_options;
  interp_options.num_replicas = replicas;
  interp_options.seed = seed;
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args}, interp_options);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  JitOptions options;
  options.num_replicas = replicas;
  options.infeed_handler = InterpreterInfeeds(seed);
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  // Twice: occurrence counts start again with every run, as every interpreter evaluation starts afresh.
  for (int run = 0; run < 2; ++run) {
    absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t d = 0; d < actual->size(); ++d) {
      std::string difference = DescribeDifference((*expected)[d], (*actual)[d]);
      EXPECT_TRUE(difference.empty()) << "run " << run << ", device " << d << ": " << difference;
    }
  }
}

TEST(CodegenInfeed, ArrayData) {
  ExpectInfeedsMatchInterpreter(R"(
HloModule m
ENTRY e {
  p = f32[3,4] parameter(0)
  t = token[] after-all()
  in = (f32[3,4], token[]) infeed(t)
  d = f32[3,4] get-tuple-element(in), index=0
  ROOT r = f32[3,4] add(p, d)
})");
}

TEST(CodegenInfeed, TupleDataOfSeveralTypes) {
  ExpectInfeedsMatchInterpreter(R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  in = ((s32[5], f64[2,2], pred[3], bf16[4]), token[]) infeed(t), infeed_config="cfg"
  d = (s32[5], f64[2,2], pred[3], bf16[4]) get-tuple-element(in), index=0
  a = s32[5] get-tuple-element(d), index=0
  b = f64[2,2] get-tuple-element(d), index=1
  c = pred[3] get-tuple-element(d), index=2
  h = bf16[4] get-tuple-element(d), index=3
  ROOT r = (s32[5], f64[2,2], pred[3], bf16[4]) tuple(a, b, c, h)
})");
}

TEST(CodegenInfeed, NestedTupleAndScalarData) {
  ExpectInfeedsMatchInterpreter(R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  in = ((f32[], (u8[2,3], s64[2])), token[]) infeed(t)
  ROOT d = (f32[], (u8[2,3], s64[2])) get-tuple-element(in), index=0
})");
}

TEST(CodegenInfeed, NonDefaultLayouts) {
  ExpectInfeedsMatchInterpreter(R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  in = ((f32[2,3,4]{0,2,1}, s32[3,5]{0,1}), token[]) infeed(t)
  d = (f32[2,3,4]{0,2,1}, s32[3,5]{0,1}) get-tuple-element(in), index=0
  a = f32[2,3,4]{0,2,1} get-tuple-element(d), index=0
  b = s32[3,5]{0,1} get-tuple-element(d), index=1
  ta = f32[4,3,2]{2,1,0} transpose(a), dimensions={2,1,0}
  ROOT r = (f32[4,3,2], s32[3,5]{0,1}, f32[2,3,4]{0,2,1}) tuple(ta, b, a)
})");
}

TEST(CodegenInfeed, ChainedInfeedsGetDifferentData) {
  ExpectInfeedsMatchInterpreter(R"(
HloModule m
ENTRY e {
  t0 = token[] after-all()
  in0 = (f32[4], token[]) infeed(t0)
  t1 = token[] get-tuple-element(in0), index=1
  in1 = (f32[4], token[]) infeed(t1)
  a = f32[4] get-tuple-element(in0), index=0
  b = f32[4] get-tuple-element(in1), index=0
  t2 = token[] get-tuple-element(in1), index=1
  o = token[] outfeed(a, t2)
  ROOT r = (f32[4], f32[4]) tuple(a, b)
})");
}

constexpr char kLoop[] = R"(
HloModule m
cond {
  s = (s32[], f32[3], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3], token[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = f32[3] get-tuple-element(s), index=1
  tok = token[] get-tuple-element(s), index=2
  in = ((f32[3], s32[]), token[]) infeed(tok)
  d = (f32[3], s32[]) get-tuple-element(in), index=0
  x = f32[3] get-tuple-element(d), index=0
  k = s32[] get-tuple-element(d), index=1
  kf = f32[] convert(k)
  kb = f32[3] broadcast(kf), dimensions={}
  m = f32[3] multiply(acc, x)
  sum = f32[3] add(m, kb)
  one = s32[] constant(1)
  next = s32[] add(i, one)
  t2 = token[] get-tuple-element(in), index=1
  ROOT r = (s32[], f32[3], token[]) tuple(next, sum, t2)
}
ENTRY e {
  acc0 = f32[3] parameter(0)
  zero = s32[] constant(0)
  t = token[] after-all()
  init = (s32[], f32[3], token[]) tuple(zero, acc0, t)
  w = (s32[], f32[3], token[]) while(init), condition=cond, body=body
  ROOT out = f32[3] get-tuple-element(w), index=1
})";

TEST(CodegenInfeed, InsideWhileLoopEveryIterationReadsFreshData) { ExpectInfeedsMatchInterpreter(kLoop); }

TEST(CodegenInfeed, TwoReplicasGetTheirOwnData) {
  ExpectInfeedsMatchInterpreter(kLoop, /*replicas=*/2);
  ExpectInfeedsMatchInterpreter(R"(
HloModule m, replica_count=2
ENTRY e {
  t = token[] after-all()
  in = (f32[8], token[]) infeed(t)
  d = f32[8] get-tuple-element(in), index=0
  ROOT s = f32[8] all-reduce(d), replica_groups={{0,1}}, to_apply={
    a = f32[] parameter(0)
    b = f32[] parameter(1)
    ROOT c = f32[] add(a, b)
  }
})",
                                /*replicas=*/2);
}

TEST(CodegenInfeed, OtherSeedsGiveOtherData) { ExpectInfeedsMatchInterpreter(kLoop, 1, /*seed=*/1234); }

// A computation called twice is inlined twice; both copies are still the one infeed the interpreter counts.
TEST(CodegenInfeed, InlinedCopiesShareTheOriginalsCount) {
  ExpectInfeedsMatchInterpreter(R"(
HloModule m
read {
  tok = token[] parameter(0)
  in = (f32[2], token[]) infeed(tok)
  d = f32[2] get-tuple-element(in), index=0
  t = token[] get-tuple-element(in), index=1
  ROOT r = (f32[2], token[]) tuple(d, t)
}
ENTRY e {
  t0 = token[] after-all()
  c0 = (f32[2], token[]) call(t0), to_apply=read
  t1 = token[] get-tuple-element(c0), index=1
  c1 = (f32[2], token[]) call(t1), to_apply=read
  a = f32[2] get-tuple-element(c0), index=0
  b = f32[2] get-tuple-element(c1), index=0
  ROOT r = (f32[2], f32[2]) tuple(a, b)
})");
}

TEST(CodegenInfeed, HandlerSeesInstructionDeviceAndOccurrence) {
  std::unique_ptr<Module> module = ParseAndVerify(kLoop);
  ASSERT_NE(module, nullptr);
  std::mutex mu;
  std::set<std::tuple<std::string, int64_t, uint64_t>> seen;
  JitOptions options;
  options.num_replicas = 2;
  options.infeed_handler = [&](const Instruction& infeed, int64_t device_id,
                               uint64_t occurrence) -> absl::StatusOr<Literal> {
    std::lock_guard<std::mutex> lock(mu);
    EXPECT_EQ(infeed.opcode(), Opcode::kInfeed);
    EXPECT_EQ(infeed.loc().line, 14);  // where the module given to Compile has it
    seen.insert({infeed.name(), device_id, occurrence});
    return interp::InfeedValue(infeed.shape().tuple_shapes.at(0), infeed.name(), 0, device_id, occurrence);
  };
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> result =
      (*exe)->Run({interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {3}), 1)});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  std::set<std::tuple<std::string, int64_t, uint64_t>> want;
  for (int64_t d = 0; d < 2; ++d) {
    for (uint64_t k = 0; k < 5; ++k) want.insert({"in", d, k});
  }
  EXPECT_EQ(seen, want);
}

TEST(CodegenInfeed, WithoutHandlerCompileFails) {
  std::unique_ptr<Module> module = ParseAndVerify(kLoop);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, JitOptions{});
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(exe.status().message().find("infeed (in)"), std::string::npos) << exe.status().message();
  EXPECT_NE(exe.status().message().find("needs an infeed handler"), std::string::npos) << exe.status().message();
}

TEST(CodegenInfeed, HandlerErrorsFailTheRun) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  t = token[] after-all()
  in = (f32[4], token[]) infeed(t)
  ROOT d = f32[4] get-tuple-element(in), index=0
})");
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.infeed_handler = [](const Instruction&, int64_t, uint64_t) -> absl::StatusOr<Literal> {
    return Literal(Shape::Array(PrimitiveType::kF32, {5}));
  };
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> result = (*exe)->Run({});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("infeed handler returned f32[5], expected f32[4]"), std::string::npos)
      << result.status().message();

  options.infeed_handler = [](const Instruction&, int64_t, uint64_t) -> absl::StatusOr<Literal> {
    return absl::ResourceExhaustedError("the host ran dry");
  };
  exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  result = (*exe)->Run({});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("in: the host ran dry"), std::string::npos) << result.status().message();
}

// The runtime entry point on its own (as AOT code calls it): without a handler an infeed is Unimplemented, and a
// handler that fails without saying why gets a generic message.
TEST(CodegenInfeed, RuntimeEntryPoint) {
  XlacRtStatus status;
  XlacRtGroup* group = xlac_rt_group_create(1, 1, 0, &status);
  ASSERT_NE(group, nullptr);
  void* buffers[1] = {nullptr};
  void* const* per_device[1] = {buffers};
  XlacRtEntryFn entry = [](void* const*, XlacRtDevice* dev) { xlac_rt_infeed(dev, "feed", nullptr); };
  EXPECT_EQ(xlac_rt_group_run(group, entry, per_device, &status), XLAC_RT_ERROR_UNIMPLEMENTED);
  EXPECT_STREQ(status.message, "device 0: infeed 'feed' has no infeed handler");

  int calls = 0;
  xlac_rt_group_set_infeed_handler(
      group,
      [](void* user, const char* site, void* const* leaves, XlacRtDevice*) {
        ++*static_cast<int*>(user);
        return std::string(site) == "feed" && leaves == nullptr ? 7 : 0;
      },
      &calls);
  EXPECT_EQ(xlac_rt_group_run(group, entry, per_device, &status), XLAC_RT_ERROR_EXECUTION);
  EXPECT_STREQ(status.message, "device 0: infeed 'feed' failed (handler returned 7)");
  EXPECT_EQ(calls, 1);
  xlac_rt_group_destroy(group);
}

}  // namespace
}  // namespace xlac::codegen::testing
