// Data movement, reduce, dot and control flow compiled with the JIT against the interpreter, over several element
// types and layouts.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

const std::vector<std::string> kTypes = {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32", "pred"};
const std::vector<std::string> kNumericTypes = {"f32", "f64", "bf16", "f16", "s8", "s32", "s64", "u8", "u32"};

TEST(CodegenDataMovement, AllOpsAllTypes) {
  for (const std::string& t : kTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[4,6] parameter(0)
  s = s32[] parameter(1)
  u = $T[2,3] parameter(2)
  pv = $T[] parameter(3)
  b = $T[3,4,6] broadcast(a), dimensions={1,2}
  t = $T[6,3,4] transpose(b), dimensions={2,0,1}
  r = $T[24,3] reshape(t)
  rv = $T[24,3] reverse(r), dimensions={0}
  sl = $T[8,2] slice(rv), slice={[1:24:3], [1:3]}
  ds = $T[2,3] dynamic-slice(a, s, s), dynamic_slice_sizes={2,3}
  dus = $T[4,6] dynamic-update-slice(a, u, s, s)
  c = $T[4,18] concatenate(a, dus, a), dimensions={1}
  p = $T[8,12] pad(a, pv), padding=1_0_1x-1_2_1
  cp = $T[4,6]{0,1} copy(a)
  ROOT out = ($T[8,2], $T[2,3], $T[4,18], $T[8,12], $T[4,6]{0,1}) tuple(sl, ds, c, p, cp)
})",
                                      t));
  }
}

// Copies and transposes whose input and output have different, long most-minor dimensions move 32x32 tiles
// (codegen/ir_emitter_data_movement.cc EmitTiledRelayout); extents that are not multiples of the tile leave partial
// tiles on both edges.
TEST(CodegenDataMovement, TiledRelayouts) {
  for (const char* t : {"f32", "bf16", "s8", "f64", "pred"}) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[5,37,3,50] parameter(0)
  c = $T[5,37,3,50]{1,0,2,3} copy(a)
  t = $T[5,50,3,37] transpose(a), dimensions={0,3,2,1}
  ROOT out = ($T[5,37,3,50]{1,0,2,3}, $T[5,50,3,37]) tuple(c, t)
})",
                                      t));
  }
}

// The relayouts of an NCHW training step (layout assignment streams convolution operands): minor dimensions of 14
// on one side, large enough to run on the device's threads; and a transpose inside a while body (a nested
// computation), which keeps the emitted loops.
TEST(CodegenDataMovement, RuntimeRelayouts) {
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[4,96,14,14] parameter(0)
  c = f32[4,96,14,14]{1,3,2,0} copy(a)
  d = f32[4,96,14,14]{0,3,2,1} copy(a)
  t = f32[14,4,96,14] transpose(a), dimensions={2,0,1,3}
  ROOT out = (f32[4,96,14,14]{1,3,2,0}, f32[4,96,14,14]{0,3,2,1}, f32[14,4,96,14]) tuple(c, d, t)
})");
  ExpectMatchesInterpreter(R"(
HloModule m
cond {
  p = (s32[], f32[6,40,20]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[6,40,20]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[6,40,20] get-tuple-element(p), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  t = f32[6,20,40] transpose(x), dimensions={0,2,1}
  r = f32[6,40,20] reshape(t)
  ROOT out = (s32[], f32[6,40,20]) tuple(j, r)
}
ENTRY e {
  x = f32[6,40,20] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[6,40,20]) tuple(zero, x)
  w = (s32[], f32[6,40,20]) while(init), condition=cond, body=body
  ROOT y = f32[6,40,20] get-tuple-element(w), index=1
})");
}

TEST(CodegenDataMovement, IotaAndBitcastConvert) {
  for (const std::string& t : kNumericTypes) {
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  ROOT i = $T[3,5] iota(), iota_dimension=1
})",
                                      t));
  }
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[4,3] parameter(0)
  b = s32[4,3] bitcast-convert(a)
  c = u8[4,3,4] bitcast-convert(a)
  d = f16[4,3,2] bitcast-convert(a)
  ROOT t = (s32[4,3], u8[4,3,4], f16[4,3,2]) tuple(b, c, d)
})");
}

TEST(CodegenDataMovement, DynamicSliceClampsStarts) {
  for (const char* type : {"s32", "u8"}) {
    std::string text = WithType(R"(
HloModule m
ENTRY e {
  a = f32[5,7] parameter(0)
  i = $T[] parameter(1)
  j = $T[] parameter(2)
  u = f32[2,3] parameter(3)
  ds = f32[2,3] dynamic-slice(a, i, j), dynamic_slice_sizes={2,3}
  dus = f32[5,7] dynamic-update-slice(a, u, j, i)
  ROOT t = (f32[2,3], f32[5,7]) tuple(ds, dus)
})",
                                type);
    bool is_unsigned = type[0] == 'u';
    for (int64_t start : {-5, 0, 2, 9}) {
      SCOPED_TRACE(std::string(type) + " start " + std::to_string(start));
      std::vector<Literal> args;
      args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {5, 7}), 1));
      for (int k = 0; k < 2; ++k) {
        if (is_unsigned) {
          Literal v(Shape::Scalar(PrimitiveType::kU8));
          v.Set<uint8_t>(0, static_cast<uint8_t>(start < 0 ? 250 : start + k));
          args.push_back(std::move(v));
        } else {
          Literal v(Shape::Scalar(PrimitiveType::kS32));
          v.Set<int32_t>(0, static_cast<int32_t>(start + k));
          args.push_back(std::move(v));
        }
      }
      args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {2, 3}), 2));
      ExpectMatchesInterpreter(text, std::move(args));
    }
  }
}

TEST(CodegenReduce, SumMaxAcrossDimsAndTypes) {
  for (const std::string& t : kNumericTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
add {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] add(x, y)
}
max {
  x = $T[] parameter(0)
  y = $T[] parameter(1)
  ROOT s = $T[] maximum(x, y)
}
ENTRY e {
  a = $T[5,7,9] parameter(0)
  z = $T[] parameter(1)
  r0 = $T[7,9] reduce(a, z), dimensions={0}, to_apply=add
  r1 = $T[5] reduce(a, z), dimensions={1,2}, to_apply=add
  r2 = $T[] reduce(a, z), dimensions={0,1,2}, to_apply=max
  r3 = $T[5,9] reduce(a, z), dimensions={1}, to_apply=max
  ROOT t = ($T[7,9], $T[5], $T[], $T[5,9]) tuple(r0, r1, r2, r3)
})",
                                      t));
  }
}

TEST(CodegenReduce, VariadicArgmaxWithCompareSelect) {
  ExpectMatchesInterpreter(R"(
HloModule m
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  eq = pred[] compare(av, bv), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  pick = pred[] or(gt, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  a = f32[6,10] parameter(0)
  idx = s32[6,10] iota(), iota_dimension=1
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[6], s32[6]) reduce(a, idx, ninf, zero), dimensions={1}, to_apply=argmax
})");
}

TEST(CodegenReduce, NarrowFloatReducerRoundsEveryStep) {
  ExpectMatchesInterpreter(R"(
HloModule m
add {
  x = bf16[] parameter(0)
  y = bf16[] parameter(1)
  c = bf16[] constant(0.1)
  m = bf16[] multiply(y, c)
  ROOT s = bf16[] add(x, m)
}
ENTRY e {
  a = bf16[300] parameter(0)
  z = bf16[] constant(1)
  ROOT r = bf16[] reduce(a, z), dimensions={0}, to_apply=add
})");
}

TEST(CodegenDot, MatmulBatchAndMixedTypes) {
  for (const std::string& t : kNumericTypes) {
    SCOPED_TRACE(t);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  a = $T[7,33] parameter(0)
  b = $T[33,21] parameter(1)
  c = $T[3,7,5] parameter(2)
  d = $T[3,4,5] parameter(3)
  mm = $T[7,21] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bt = $T[3,7,4] dot(c, d), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
  v = $T[33] parameter(4)
  mv = $T[7] dot(a, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = ($T[7,21], $T[3,7,4], $T[7]) tuple(mm, bt, mv)
})",
                                      t));
  }
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = bf16[8,16] parameter(0)
  b = s8[16,4]{0,1} parameter(1)
  ROOT mm = f32[8,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  a = f32[2,3,4] parameter(0)
  b = f32[4,3,5] parameter(1)
  ROOT mm = f32[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={1,0}
})");
}

TEST(CodegenControlFlow, WhileLoopCountsAndAccumulates) {
  ExpectMatchesInterpreter(R"(
HloModule m
cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(10)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  x = f32[4] get-tuple-element(p), index=1
  one = s32[] constant(1)
  i1 = s32[] add(i, one)
  h = f32[] constant(0.5)
  hb = f32[4] broadcast(h), dimensions={}
  x1 = f32[4] multiply(x, hb)
  x2 = f32[4] add(x1, x)
  ROOT t = (s32[], f32[4]) tuple(i1, x2)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = s32[] constant(0)
  init = (s32[], f32[4]) tuple(z, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  ROOT r = f32[4] get-tuple-element(w), index=1
})");
}

TEST(CodegenControlFlow, ConditionalIndexAndPred) {
  std::string text = R"(
HloModule m
b0 {
  p = f32[3] parameter(0)
  ROOT n = f32[3] negate(p)
}
b1 {
  p = f32[3] parameter(0)
  ROOT e = f32[3] exponential(p)
}
b2 {
  p = f32[3] parameter(0)
  ROOT a = f32[3] add(p, p)
}
ENTRY e {
  i = s32[] parameter(0)
  x = f32[3] parameter(1)
  ROOT c = f32[3] conditional(i, x, x, x), branch_computations={b0, b1, b2}
})";
  for (int32_t branch : {-1, 0, 1, 2, 7}) {
    std::vector<Literal> args;
    Literal i(Shape::Scalar(PrimitiveType::kS32));
    i.Set<int32_t>(0, branch);
    args.push_back(std::move(i));
    args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {3}), 5));
    ExpectMatchesInterpreter(text, std::move(args));
  }
  ExpectMatchesInterpreter(R"(
HloModule m
t {
  p = (f32[2], s32[]) parameter(0)
  ROOT g = f32[2] get-tuple-element(p), index=0
}
f {
  p = f32[2] parameter(0)
  ROOT n = f32[2] negate(p)
}
ENTRY e {
  c = pred[] parameter(0)
  x = f32[2] parameter(1)
  k = s32[] constant(3)
  tup = (f32[2], s32[]) tuple(x, k)
  ROOT r = f32[2] conditional(c, tup, x), true_computation=t, false_computation=f
})");
}

TEST(CodegenUnsupported, CleanUnimplementedError) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m, replica_count=2
ENTRY e {
  id = u32[] replica-id()
  x = f32[] convert(id)
  tok = token[] after-all()
  s = (f32[], u32[], token[]) send(x, tok), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}
  r = (f32[], u32[], token[]) recv(tok), channel_id=2,
      frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}
  sd = token[] send-done(s), channel_id=1
  rd = (f32[], token[]) recv-done(r), channel_id=2
  ROOT v = f32[] get-tuple-element(rd), index=0
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module);
  ASSERT_FALSE(exe.ok());
  EXPECT_EQ(exe.status().code(), absl::StatusCode::kUnimplemented) << exe.status().ToString();
  EXPECT_NE(exe.status().message().find("send/recv with source-target pairs"), std::string::npos)
      << exe.status().ToString();
}

// bf16/f16 batch norm: double results rounded once to the element type (through float rounded to odd).
TEST(CodegenOps, NarrowBatchNorm) {
  for (const char* type : {"bf16", "f16"}) {
    SCOPED_TRACE(type);
    ExpectMatchesInterpreter(WithType(R"(
HloModule m
ENTRY e {
  x = $T[4,5,3] parameter(0)
  s = $T[5] parameter(1)
  o = $T[5] parameter(2)
  m = $T[5] parameter(3)
  v = $T[5] parameter(4)
  dy = $T[4,5,3] parameter(5)
  va = $T[5] abs(v)
  bni = $T[4,5,3] batch-norm-inference(x, s, o, m, va), epsilon=0.001, feature_index=1
  tr = ($T[4,5,3], $T[5], $T[5]) batch-norm-training(x, s, o), epsilon=0.01, feature_index=1
  gr = ($T[4,5,3], $T[5], $T[5]) batch-norm-grad(x, s, m, va, dy), epsilon=0.001, feature_index=1
  ROOT r = ($T[4,5,3], ($T[4,5,3], $T[5], $T[5]), ($T[4,5,3], $T[5], $T[5])) tuple(bni, tr, gr)
})",
                                      type));
  }
  // Enough values that rounding through float to nearest (instead of to odd) would round some of them twice wrong.
  ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f16[64,5,200] parameter(0)
  s = f16[5] parameter(1)
  o = f16[5] parameter(2)
  ROOT tr = (f16[64,5,200], f16[5], f16[5]) batch-norm-training(x, s, o), epsilon=0.01, feature_index=1
})",
                           {}, 1);
}

TEST(CodegenJit, ReusableAcrossRuns) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m
ENTRY e {
  a = f32[16] parameter(0)
  ROOT r = f32[16] add(a, a)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  for (uint64_t seed = 0; seed < 3; ++seed) {
    std::vector<Literal> args;
    args.push_back(interp::MakeRandomLiteral(Shape::Array(PrimitiveType::kF32, {16}), seed));
    absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
    absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    EXPECT_TRUE((*actual)[0] == (*expected)[0]);
  }
  std::vector<Literal> wrong;
  wrong.push_back(Literal(Shape::Array(PrimitiveType::kF32, {3})));
  EXPECT_EQ((*exe)->Run(wrong).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace xlac::codegen::testing

namespace xlac::codegen::testing {
namespace {

TEST(CodegenJit, ReplicaAndPartitionIdOnEveryDevice) {
  std::unique_ptr<Module> module = ParseAndVerify(R"(
HloModule m, replica_count=2, num_partitions=2
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  ROOT t = (u32[], u32[]) tuple(r, p)
})");
  ASSERT_NE(module, nullptr);
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  EXPECT_EQ((*exe)->num_devices(), 4);
  absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run({});
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t d = 0; d < actual->size(); ++d) EXPECT_TRUE((*actual)[d] == (*expected)[d]) << "device " << d;
}

}  // namespace
}  // namespace xlac::codegen::testing
