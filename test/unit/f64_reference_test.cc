// The f64-reference pass (passes/f64_reference.h) on structures the lit test does not reach: loops carrying tuples
// through called computations, kept custom-calls, and what it refuses; and its f32 target (the f32 reference).
#include "passes/f64_reference.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac {
namespace {

std::unique_ptr<Module> Parse(const char* text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// A while loop carrying (s32, bf16[8]) whose body divides by 3 and takes exp: in bf16 every step rounds, in the
// reference none does.
constexpr char kLoop[] = R"(HloModule loop
cond {
  p = (s32[], bf16[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  k = s32[] constant(6)
  ROOT lt = pred[] compare(i, k), direction=LT
}
body {
  p = (s32[], bf16[8]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  v = bf16[8] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  three = bf16[] constant(3)
  t = bf16[8] broadcast(three), dimensions={}
  w = bf16[8] divide(v, t)
  e = bf16[8] exponential(w)
  ROOT r = (s32[], bf16[8]) tuple(j, e)
}
ENTRY e {
  x = (s32[], bf16[8]) parameter(0)
  l = (s32[], bf16[8]) while(x), condition=cond, body=body
  ROOT v = bf16[8] get-tuple-element(l), index=1
})";

TEST(F64ReferencePassTest, LoopsCarryTuplesOfPromotedValues) {
  std::unique_ptr<Module> module = Parse(kLoop);
  ASSERT_NE(module, nullptr);
  const std::string before = PrintModule(*module);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*module);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  EXPECT_EQ(PrintModule(*module), before);  // the input is not changed
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**promoted, diags)) << PrintModule(**promoted);
  const Computation* body = (*promoted)->FindComputation("body");
  ASSERT_NE(body, nullptr);
  EXPECT_EQ(body->parameter(0)->shape().tuple_shapes[1].element_type, PrimitiveType::kF64);
  EXPECT_EQ(body->root()->shape().tuple_shapes[1].element_type, PrimitiveType::kF64);

  Literal counter(Shape::Scalar(PrimitiveType::kS32));
  counter.Set<int32_t>(0, 0);
  std::vector<Literal> parts;
  parts.push_back(std::move(counter));
  parts.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kBF16, {8}), 4));
  std::vector<Literal> args;
  args.push_back(Literal::CreateTuple(std::move(parts)));
  absl::StatusOr<std::vector<Literal>> narrow = interp::Evaluate(*module, {args});
  absl::StatusOr<std::vector<Literal>> wide = interp::Evaluate(**promoted, {args});
  ASSERT_TRUE(narrow.ok() && wide.ok());
  const Literal& n = (*narrow)[0];
  const Literal& w = (*wide)[0];
  ASSERT_EQ(w.shape().element_type, PrimitiveType::kF64);
  // The same function, computed once with bf16 rounding after every op and once without: a few bf16 ulps apart,
  // and not bitwise equal (the reference really computes wider).
  bool any_differs = false;
  for (int64_t i = 0; i < 8; ++i) {
    const double a = n.GetAsDouble(i), b = w.GetAsDouble(i);
    EXPECT_NEAR(a, b, 0.05 * std::fabs(b)) << i;
    any_differs |= a != b;
  }
  EXPECT_TRUE(any_differs);
}

TEST(F64ReferencePassTest, CustomCallsKeepTheirDeclaredTypes) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] exponential(a)
  s = f32[4] custom-call(b), custom_call_target="Sharding", sharding={replicated}
  c = f32[4] custom-call(s), custom_call_target="my.kernel"
  ROOT d = f32[4] add(c, s)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(RunF64Reference(*module).value());
  const Computation* entry = module->entry_computation();
  // The Sharding annotation is an identity: promoted. my.kernel's contract is unknown: f32 in, f32 out, widened.
  EXPECT_EQ(entry->FindInstruction("s")->shape().element_type, PrimitiveType::kF64);
  const Instruction* c = entry->FindInstruction("c");
  EXPECT_EQ(c->shape().element_type, PrimitiveType::kF32);
  EXPECT_EQ(c->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(c->operand(0)->shape().element_type, PrimitiveType::kF32);
  const Instruction* d = entry->FindInstruction("d");
  EXPECT_EQ(d->shape().element_type, PrimitiveType::kF64);
  EXPECT_EQ(d->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(d->operand(0)->operand(0), c);
}

TEST(F64ReferencePassTest, AKeptOpThatCallsComputationsIsRefused) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  a = f32[4] parameter(0)
  ROOT c = f32[4] custom-call(a), custom_call_target="my.reduce", called_computations={add}
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteToF64(*module);
  ASSERT_FALSE(promoted.ok());
  EXPECT_EQ(promoted.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(promoted.status().message().find("c keeps its declared types but calls computations"), std::string::npos)
      << promoted.status();
}

// A bf16 op chain with a narrowing convert to bf16, one bf16 -> f16 -> bf16, and an f64 branch. Promoted to f32,
// every bf16 op computes and rounds in f32, the narrowing converts still round, f32 and f64 keep their types.
constexpr char kBf16Chain[] = R"(HloModule chain
ENTRY e {
  a = bf16[8] parameter(0)
  b = bf16[8] parameter(1)
  c = bf16[8] parameter(2)
  m = bf16[8] multiply(a, b)
  s = bf16[8] add(m, c)
  q = bf16[8] divide(s, b)
  aq = bf16[8] abs(q)
  r = bf16[8] sqrt(aq)
  f = f32[8] convert(r)
  g = f32[8] multiply(f, f)
  h = bf16[8] convert(g)
  k = f16[8] convert(s)
  kk = bf16[8] convert(k)
  hk = bf16[8] subtract(h, kk)
  ad = f64[8] convert(a)
  sq = f64[8] multiply(ad, ad)
  third = f64[] constant(0.3333333333333333)
  t = f64[8] broadcast(third), dimensions={}
  e = f64[8] multiply(sq, t)
  eb = bf16[8] convert(e)
  o = bf16[8] add(hk, eb)
  ROOT out = (bf16[8], f32[8], f64[8]) tuple(o, g, e)
})";

Literal Bf16Array(const std::vector<float>& values) {
  Literal lit(Shape::Array(PrimitiveType::kBF16, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) lit.SetFromDouble(static_cast<int64_t>(i), values[i]);
  return lit;
}

TEST(F64ReferencePassTest, TheF32ReferenceOfABf16ChainIsNumpysFloat32Computation) {
  std::unique_ptr<Module> module = Parse(kBf16Chain);
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteFloats(*module, PrimitiveType::kF32);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**promoted, diags)) << PrintModule(**promoted);
  const Computation* entry = (*promoted)->entry_computation();
  EXPECT_EQ(entry->FindInstruction("a")->shape().element_type, PrimitiveType::kBF16);  // the arguments' types
  EXPECT_EQ(entry->FindInstruction("m")->shape().element_type, PrimitiveType::kF32);
  EXPECT_EQ(entry->FindInstruction("e")->shape().element_type, PrimitiveType::kF64);  // f64 keeps its type
  // The narrowing converts keep their types, and a convert back to f32 follows them.
  EXPECT_EQ(entry->FindInstruction("h")->shape().element_type, PrimitiveType::kBF16);
  EXPECT_EQ(entry->FindInstruction("k")->shape().element_type, PrimitiveType::kF16);
  EXPECT_EQ(entry->FindInstruction("eb")->shape().element_type, PrimitiveType::kBF16);
  EXPECT_EQ(entry->FindInstruction("hk")->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(ReferenceShape(module->entry_computation()->root()->shape(), PrimitiveType::kF32), entry->root()->shape());
  EXPECT_EQ(ReferenceType(PrimitiveType::kC64, PrimitiveType::kF32), PrimitiveType::kC64);
  EXPECT_EQ(ReferenceType(PrimitiveType::kF8E4M3FN, PrimitiveType::kF32), PrimitiveType::kF32);

  std::vector<Literal> args;
  args.push_back(Bf16Array({1.5, -2.25, 3.140625, 0.1015625, 7.75, -0.330078125, 12.5, 0.984375}));
  args.push_back(Bf16Array({0.6875, 1.3359375, -2.5, 3.0, 0.1171875, -5.25, 0.4296875, 1.0078125}));
  args.push_back(Bf16Array({-1.0, 0.5546875, 2.21875, -0.0625, 9.5, 1.90625, -3.375, 0.25}));
  absl::StatusOr<std::vector<Literal>> narrow = interp::Evaluate(*module, {args});
  absl::StatusOr<std::vector<Literal>> wide = interp::Evaluate(**promoted, {args});
  ASSERT_TRUE(narrow.ok() && wide.ok());
  const std::vector<Literal>& got = (*wide)[0].tuple_elements();
  ASSERT_EQ(got[0].shape().element_type, PrimitiveType::kF32);
  ASSERT_EQ(got[1].shape().element_type, PrimitiveType::kF32);
  ASSERT_EQ(got[2].shape().element_type, PrimitiveType::kF64);
  // numpy (/usr/bin/python3): the chain in np.float32 (m = a*b; s = m+c; q = s/b; g = sqrt(|q|)**2), bf16 rounding
  // to nearest even where the program converts to bf16 (h, kk, eb), s.astype(np.float16) for k, and e in float64.
  const uint32_t want_o[8] = {0x3f43a000, 0x40bf4000, 0x41328000, 0xbe21fc00,
                              0x42c54000, 0xc03a6c00, 0x425aa000, 0x3ea10000};
  const uint32_t want_g[8] = {0x3d3a2e8c, 0x3feada93, 0x40103333, 0x3da55555,
                              0x42b1a221, 0x3f3173cf, 0x4094a790, 0x3f9dc07e};
  const double want_e[8] = {0x1.8p-1,
                            0x1.bp+0,
                            0x1.a4d8p+1,
                            0x1.c2aaaaaaaaaaap-9,
                            0x1.4055555555555p+4,
                            0x1.2982aaaaaaaaap-5,
                            0x1.a0aaaaaaaaaaap+5,
                            0x1.4acp-2};
  const Literal& narrow_g = (*narrow)[0].tuple_elements()[1];
  int narrow_differs = 0;
  for (int64_t i = 0; i < 8; ++i) {
    const float o = got[0].Get<float>(i), g = got[1].Get<float>(i);
    uint32_t o_bits, g_bits;
    std::memcpy(&o_bits, &o, 4);
    std::memcpy(&g_bits, &g, 4);
    EXPECT_EQ(o_bits, want_o[i]) << i;
    EXPECT_EQ(g_bits, want_g[i]) << i;
    EXPECT_EQ(got[2].Get<double>(i), want_e[i]) << i;
    // The bf16 program rounds every intermediate: its g differs from the f32 chain's everywhere here.
    narrow_differs += narrow_g.Get<float>(i) != g;
  }
  EXPECT_EQ(narrow_differs, 8);
}

// Parameters keep their types through ops that only move values; a convert widens them where an op computes, and a
// dot reads a narrow operand as it is: the same values as widening the parameter first (written out below), without
// holding a widened copy of a weight matrix.
TEST(F64ReferencePassTest, ParametersStayNarrowThroughDataMovement) {
  std::unique_ptr<Module> module = Parse(R"(HloModule m
ENTRY e {
  w = bf16[6,16] parameter(0)
  x = bf16[3,16] parameter(1)
  r = bf16[16,6] transpose(w), dimensions={1,0}
  s = bf16[16,4] slice(r), slice={[0:16], [1:5]}
  d = bf16[3,4] dot(x, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = bf16[16,4] exponential(s)
  ROOT out = (bf16[3,4], bf16[16,4], bf16[16,6]) tuple(d, e, r)
})");
  std::unique_ptr<Module> widened_first = Parse(R"(HloModule m
ENTRY e {
  w = bf16[6,16] parameter(0)
  x = bf16[3,16] parameter(1)
  w32 = f32[6,16] convert(w)
  x32 = f32[3,16] convert(x)
  r = f32[16,6] transpose(w32), dimensions={1,0}
  s = f32[16,4] slice(r), slice={[0:16], [1:5]}
  d = f32[3,4] dot(x32, s), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  e = f32[16,4] exponential(s)
  ROOT out = (f32[3,4], f32[16,4], f32[16,6]) tuple(d, e, r)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_NE(widened_first, nullptr);
  absl::StatusOr<std::unique_ptr<Module>> promoted = PromoteFloats(*module, PrimitiveType::kF32);
  ASSERT_TRUE(promoted.ok()) << promoted.status();
  DiagnosticEngine diags;
  EXPECT_TRUE(VerifyModule(**promoted, diags)) << PrintModule(**promoted);
  const Computation* entry = (*promoted)->entry_computation();
  const Instruction* r = entry->FindInstruction("r");
  const Instruction* s = entry->FindInstruction("s");
  const Instruction* d = entry->FindInstruction("d");
  EXPECT_EQ(r->shape().element_type, PrimitiveType::kBF16);
  EXPECT_EQ(s->shape().element_type, PrimitiveType::kBF16);
  EXPECT_EQ(d->shape().element_type, PrimitiveType::kF32);
  EXPECT_EQ(d->operand(0)->opcode(), Opcode::kParameter);  // x, read as it is
  EXPECT_EQ(d->operand(1), s);
  const Instruction* e = entry->FindInstruction("e");
  EXPECT_EQ(e->shape().element_type, PrimitiveType::kF32);
  ASSERT_EQ(e->operand(0)->opcode(), Opcode::kConvert);
  EXPECT_EQ(e->operand(0)->operand(0), s);
  EXPECT_EQ(entry->root()->shape(), widened_first->entry_computation()->root()->shape());

  std::vector<Literal> args;
  args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kBF16, {6, 16}), 7));
  args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kBF16, {3, 16}), 8));
  absl::StatusOr<std::vector<Literal>> got = interp::Evaluate(**promoted, {args});
  absl::StatusOr<std::vector<Literal>> want = interp::Evaluate(*widened_first, {args});
  ASSERT_TRUE(got.ok() && want.ok());
  for (size_t i = 0; i < 3; ++i) {
    const Literal& g = (*got)[0].tuple_elements()[i];
    const Literal& w = (*want)[0].tuple_elements()[i];
    ASSERT_EQ(g.shape().element_type, PrimitiveType::kF32);
    EXPECT_EQ(std::memcmp(g.raw_data(), w.raw_data(), static_cast<size_t>(w.byte_size())), 0) << i;
  }
}

}  // namespace
}  // namespace xlac
