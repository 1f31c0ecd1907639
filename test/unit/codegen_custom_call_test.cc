// Custom-calls in compiled code go to JitOptions::custom_call_handler with literals built from the raw buffers
// (physical layouts undone), and the handler's result lands in the result buffers.
#include <mutex>

#include "codegen_test_util.h"
#include "runtime/harness/checks.h"

namespace xlac::codegen::testing {
namespace {

struct Call {
  std::string target, backend_config, name;
  std::vector<Literal> operands;
  Shape result;
  SourceLoc loc;
};

TEST(CodegenCustomCall, HandlerSeesOperandsAndProducesResult) {
  const std::string text = R"(
HloModule m
ENTRY e {
  a = f32[2,3]{0,1} parameter(0)
  b = s32[3] parameter(1)
  n = f32[2,3]{0,1} negate(a)
  c = (f32[3,2], s32[3]) custom-call(n, b), custom_call_target="my.op", backend_config="cfg"
  c0 = f32[3,2] get-tuple-element(c), index=0
  c1 = s32[3] get-tuple-element(c), index=1
  ROOT t = (f32[3,2], s32[3]) tuple(c0, c1)
})";
  std::unique_ptr<Module> module = ParseAndVerify(text);
  ASSERT_NE(module, nullptr);
  std::mutex mu;
  std::vector<Call> calls;
  JitOptions options;
  options.num_replicas = 2;
  options.custom_call_handler = [&](const Instruction& inst,
                                    const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
    std::lock_guard<std::mutex> lock(mu);
    Call call{std::string(inst.StringAttr("custom_call_target")),
              inst.backend_config(),
              inst.name(),
              {},
              inst.shape(),
              inst.loc()};
    for (const Literal* op : operands) call.operands.push_back(*op);
    calls.push_back(std::move(call));
    // Result: the transposed first operand and the second operand plus one.
    Literal t(Shape::Array(PrimitiveType::kF32, {3, 2}));
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) t.Set<float>(j * 2 + i, operands[0]->Get<float>(i * 3 + j));
    }
    Literal s(Shape::Array(PrimitiveType::kS32, {3}));
    for (int64_t i = 0; i < 3; ++i) s.Set<int32_t>(i, operands[1]->Get<int32_t>(i) + 1);
    std::vector<Literal> parts;
    parts.push_back(std::move(t));
    parts.push_back(std::move(s));
    return Literal::CreateTuple(std::move(parts));
  };
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  std::vector<Literal> args = {interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {2, 3}), 3),
                               interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kS32, {3}), 4)};
  absl::StatusOr<std::vector<Literal>> out = (*exe)->Run(args);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(calls.size(), 2u);  // one per device
  for (const Call& call : calls) {
    EXPECT_EQ(call.target, "my.op");
    EXPECT_EQ(call.backend_config, "cfg");
    EXPECT_EQ(call.name, "c");
    EXPECT_EQ(call.loc.line, 7);
    ASSERT_EQ(call.operands.size(), 2u);
    for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(call.operands[0].Get<float>(i), -args[0].Get<float>(i));
    EXPECT_TRUE(call.operands[1] == args[1]);
  }
  for (const Literal& r : *out) {
    for (int64_t i = 0; i < 2; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        EXPECT_EQ(r.tuple_elements()[0].Get<float>(j * 2 + i), -args[0].Get<float>(i * 3 + j));
      }
    }
    for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(r.tuple_elements()[1].Get<int32_t>(i), args[1].Get<int32_t>(i) + 1);
  }
}

TEST(CodegenCustomCall, CheckCollectorOnCompiledCode) {
  // A side-effecting check with no users survives and runs; the harness evaluates it like the interpreter would.
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] add(a, a)
  c = f32[4] multiply(a, a)
  ok = () custom-call(b, b), custom_call_target="check.expect_eq", custom_call_has_side_effect=true
  bad = () custom-call(b, c), custom_call_target="check.expect_eq", custom_call_has_side_effect=true
  ROOT r = f32[4] negate(a)
})");
  ASSERT_NE(module, nullptr);
  harness::CheckCollector collector;
  JitOptions options;
  options.custom_call_handler = [&](const Instruction& inst, const std::vector<const Literal*>& operands) {
    return collector.Handle(inst, operands);
  };
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  Literal arg(Shape::Array(PrimitiveType::kF32, {4}));
  for (int64_t i = 0; i < 4; ++i) arg.Set<float>(i, static_cast<float>(i));
  absl::StatusOr<std::vector<Literal>> out = (*exe)->Run({arg});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  std::vector<harness::CheckResult> results = collector.Results();
  ASSERT_EQ(results.size(), 2u);
  int passed = 0, failed = 0;
  for (const harness::CheckResult& r : results) {
    EXPECT_EQ(r.target, "check.expect_eq");
    if (r.status == harness::CheckStatus::kPassed) ++passed;
    if (r.status == harness::CheckStatus::kFailed) ++failed;
  }
  EXPECT_EQ(passed, 1);  // 2a == 2a
  EXPECT_EQ(failed, 1);  // 2a != a*a at a = 1 and 3
}

TEST(CodegenCustomCall, UnhandledTargetsFailCleanly) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="unknown.target"
})");
  ASSERT_NE(module, nullptr);
  // Without a handler: at compile time.
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented) << exe.status().ToString();
  EXPECT_NE(exe.status().ToString().find("unknown.target"), std::string::npos) << exe.status().ToString();
  // A handler that does not know the target: when it runs, keeping the code.
  JitOptions options;
  options.custom_call_handler = [](const Instruction& inst,
                                   const std::vector<const Literal*>&) -> absl::StatusOr<Literal> {
    return absl::UnimplementedError("unsupported custom call target " +
                                    std::string(inst.StringAttr("custom_call_target")));
  };
  exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> out =
      (*exe)->Run({interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {4}), 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status().ToString();
  EXPECT_NE(out.status().ToString().find("unknown.target"), std::string::npos) << out.status().ToString();
}

TEST(CodegenCustomCall, HandlerErrorsPropagate) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="x"
})");
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.custom_call_handler = [](const Instruction&, const std::vector<const Literal*>&) -> absl::StatusOr<Literal> {
    return Literal(Shape::Array(PrimitiveType::kF32, {5}));  // wrong shape
  };
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> out =
      (*exe)->Run({interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {4}), 1)});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().ToString().find("expected f32[4]"), std::string::npos) << out.status().ToString();
}

}  // namespace
}  // namespace xlac::codegen::testing
