// Interpreter framework: parameters, constants (incl. elided ones), tuples, call, while, conditional, fusion, map,
// async wrappers, custom-call errors and argument checking.
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType S32 = PrimitiveType::kS32;
constexpr PrimitiveType PRED = PrimitiveType::kPred;

TEST(InterpreterFramework, ParametersAndConstants) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  p0 = f32[3] parameter(0)
  c = f32[3] constant({1, 2, 3.5})
  ROOT a = f32[3] add(p0, c)
})",
                                              {Vec(F32, {10, 20, 30})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{11, 22, 33.5}));
}

TEST(InterpreterFramework, TuplesAndGetTupleElement) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  p0 = (f32[2], s32[]) parameter(0)
  a = f32[2] get-tuple-element(p0), index=0
  b = s32[] get-tuple-element(p0), index=1
  n = f32[2] negate(a)
  ROOT t = (s32[], (f32[2], f32[2])) tuple(b, (f32[2], f32[2]) tuple(a, n))
})",
                                              {[] {
                                                std::vector<Literal> e;
                                                e.push_back(Vec(F32, {1, -2}));
                                                e.push_back(Scalar(S32, 7));
                                                return Literal::CreateTuple(std::move(e));
                                              }()}));
  ASSERT_TRUE(r.is_tuple());
  EXPECT_EQ(Int64s(r.tuple_elements()[0]), (std::vector<int64_t>{7}));
  EXPECT_EQ(Doubles(r.tuple_elements()[1].tuple_elements()[1]), (std::vector<double>{-1, 2}));
}

TEST(InterpreterFramework, CallAndFusion) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
sq {
  x = f32[2] parameter(0)
  ROOT m = f32[2] multiply(x, x)
}
fused {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  ROOT s = f32[2] subtract(a, b)
}
ENTRY e {
  p = f32[2] parameter(0)
  c = f32[2] call(p), to_apply=sq
  ROOT f = f32[2] fusion(c, p), kind=kLoop, calls=fused
})",
                                              {Vec(F32, {3, -4})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{6, 20}));
}

TEST(InterpreterFramework, WhileLoopSumsToTen) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  acc1 = s32[] add(acc, i)
  ROOT t = (s32[], s32[]) tuple(i1, acc1)
}
ENTRY e {
  z = s32[] constant(0)
  init = (s32[], s32[]) tuple(z, z)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT acc = s32[] get-tuple-element(w), index=1
})"));
  EXPECT_EQ(Int64s(r), (std::vector<int64_t>{10}));
}

constexpr char kConditionalIndex[] = R"(
HloModule m
b0 {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
b1 {
  x = f32[] parameter(0)
  ROOT a = f32[] add(x, x)
}
b2 {
  x = f32[] parameter(0)
  ROOT m = f32[] multiply(x, x)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[] parameter(1)
  ROOT c = f32[] conditional(i, x, x, x), branch_computations={b0, b1, b2}
})";

TEST(InterpreterFramework, ConditionalIndexFormAndOutOfRangeRunsLastBranch) {
  auto run = [](int64_t index) {
    absl::StatusOr<Literal> r = RunHlo(kConditionalIndex, {Scalar(S32, static_cast<double>(index)), Scalar(F32, 3)});
    EXPECT_TRUE(r.ok()) << r.status().ToString();
    return r.ok() ? r->GetAsDouble(0) : 0.0;
  };
  EXPECT_EQ(run(0), -3);
  EXPECT_EQ(run(1), 6);
  EXPECT_EQ(run(2), 9);
  EXPECT_EQ(run(3), 9);   // out of range -> last branch
  EXPECT_EQ(run(-1), 9);  // negative -> last branch
}

TEST(InterpreterFramework, ConditionalPredForm) {
  constexpr char kText[] = R"(
HloModule m
t {
  x = f32[] parameter(0)
  ROOT n = f32[] negate(x)
}
f {
  y = s32[] parameter(0)
  ROOT c = f32[] convert(y)
}
ENTRY e {
  p = pred[] parameter(0)
  x = f32[] constant(2)
  y = s32[] constant(7)
  ROOT c = f32[] conditional(p, x, y), true_computation=t, false_computation=f
})";
  XLAC_ASSERT_OK_AND_ASSIGN(Literal yes, RunHlo(kText, {Scalar(PRED, 1)}));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal no, RunHlo(kText, {Scalar(PRED, 0)}));
  EXPECT_EQ(yes.GetAsDouble(0), -2);
  EXPECT_EQ(no.GetAsDouble(0), 7);
}

TEST(InterpreterFramework, MapAppliesComputationElementwise) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = f32[] constant(2)
  m = f32[] multiply(a, c)
  ROOT s = f32[] subtract(m, b)
}
ENTRY e {
  x = f32[3] parameter(0)
  y = f32[3] parameter(1)
  ROOT r = f32[3] map(x, y), dimensions={0}, to_apply=f
})",
                                              {Vec(F32, {1, 2, 3}), Vec(F32, {1, 1, 10})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{1, 3, -4}));
}

TEST(InterpreterFramework, CompiledAndGenericScalarComputationsAgree) {
  // The same bf16 reducer, once as a plain add (compiled register program) and once behind a call (evaluated
  // through literals): both must round after every add.
  constexpr char kText[] = R"(
HloModule m
add {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
add_via_call {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT c = bf16[] call(a, b), to_apply=add
}
ENTRY e {
  x = bf16[6] parameter(0)
  z = bf16[] constant(0)
  r1 = bf16[] reduce(x, z), dimensions={0}, to_apply=add
  r2 = bf16[] reduce(x, z), dimensions={0}, to_apply=add_via_call
  ROOT t = (bf16[], bf16[]) tuple(r1, r2)
})";
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(kText, {Vec(PrimitiveType::kBF16, {256, 1, 1, 1, 1, 3})}));
  EXPECT_EQ(r.tuple_elements()[0].GetAsDouble(0), 260);  // 256 +1 +1 +1 +1 stays 256; +3 -> 259 -> 260
  EXPECT_EQ(r.tuple_elements()[1].GetAsDouble(0), 260);
}

TEST(InterpreterFramework, ElidedConstantsAreDeterministicAndSeeded) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  ROOT c = f32[8] constant({...})
})";
  XLAC_ASSERT_OK_AND_ASSIGN(Literal a, RunHlo(kText));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal b, RunHlo(kText));
  InterpreterOptions other;
  other.seed = 7;
  XLAC_ASSERT_OK_AND_ASSIGN(Literal c, RunHlo(kText, {}, other));
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  for (double v : Doubles(a)) {
    EXPECT_GE(v, -1);
    EXPECT_LT(v, 1);
  }
}

TEST(InterpreterFramework, InfeedYieldsFreshSeededValuesPerExecution) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  t0 = token[] after-all()
  in0 = (f32[4], token[]) infeed(t0)
  d0 = f32[4] get-tuple-element(in0), index=0
  t1 = token[] get-tuple-element(in0), index=1
  in1 = (f32[4], token[]) infeed(t1)
  d1 = f32[4] get-tuple-element(in1), index=0
  ROOT r = (f32[4], f32[4]) tuple(d0, d1)
})";
  XLAC_ASSERT_OK_AND_ASSIGN(Literal a, RunHlo(kText));
  XLAC_ASSERT_OK_AND_ASSIGN(Literal b, RunHlo(kText));
  InterpreterOptions other;
  other.seed = 9;
  XLAC_ASSERT_OK_AND_ASSIGN(Literal c, RunHlo(kText, {}, other));
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == c);
  EXPECT_FALSE(a.tuple_elements()[0] == a.tuple_elements()[1]);
}

TEST(InterpreterFramework, MakeRandomLiteralRanges) {
  Literal ints = MakeRandomLiteral(Shape::Array(S32, {64}), 3);
  for (int64_t v : Int64s(ints)) {
    EXPECT_GE(v, 0);
    EXPECT_LT(v, 8);
  }
  EXPECT_TRUE(MakeRandomLiteral(Shape::Array(F32, {4}), 3) == MakeRandomLiteral(Shape::Array(F32, {4}), 3));
}

TEST(InterpreterFramework, CustomCallIsAClearError) {
  absl::StatusOr<Literal> r = RunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  ROOT c = f32[2] custom-call(p), custom_call_target="my_kernel"
})",
                                     {Vec(F32, {1, 2})});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("unsupported custom call target my_kernel"), std::string::npos)
      << r.status().ToString();
}

TEST(InterpreterFramework, AsyncWrappedComputationAndInlineAsync) {
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
wrapped {
  x = f32[2] parameter(0)
  ROOT n = f32[2] negate(x)
}
ENTRY e {
  p = f32[2] parameter(0)
  s = ((f32[2]), f32[2], s32[]) async-start(p), calls=wrapped
  u = ((f32[2]), f32[2], s32[]) async-update(s)
  d = f32[2] async-done(u)
  cs = (f32[2], f32[2], u32[]) copy-start(d)
  ROOT cd = f32[2] copy-done(cs)
})",
                                              {Vec(F32, {1, -5})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{-1, 5}));
}

TEST(InterpreterFramework, RejectsWrongArguments) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  ROOT p = f32[2] parameter(0)
})");
  ASSERT_NE(module, nullptr);
  std::vector<std::vector<Literal>> none(1);
  EXPECT_FALSE(Evaluate(*module, none).ok());
  std::vector<std::vector<Literal>> wrong(1);
  wrong[0].push_back(Vec(S32, {1, 2}));
  absl::StatusOr<std::vector<Literal>> r = Evaluate(*module, wrong);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("argument 0"), std::string::npos) << r.status().ToString();
}

TEST(InterpreterFramework, DeadInstructionsAreNotEvaluated) {
  // The dead custom-call would fail if evaluated.
  XLAC_ASSERT_OK_AND_ASSIGN(Literal r, RunHlo(R"(
HloModule m
ENTRY e {
  p = f32[2] parameter(0)
  dead = f32[2] custom-call(p), custom_call_target="nope"
  ROOT n = f32[2] negate(p)
})",
                                              {Vec(F32, {1, 2})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{-1, -2}));
}

}  // namespace
}  // namespace xlac::interp::testing
