// Collectives compiled with the JIT against the interpreter on 2, 4 and 8 devices (replicas and partitions, list and
// iota replica_groups, channel ids and global device ids), their async forms, and clean failures.
#include "codegen_test_util.h"

namespace xlac::codegen::testing {
namespace {

// A module header plus reducers and, in the entry, `x`: parameter 0 scaled by a per-device factor, so every device
// contributes different data. `body` follows and must define ROOT.
std::string Hlo(const std::string& config, const std::string& type, const std::string& dims, const std::string& body) {
  return WithType("HloModule m, " + config + R"(
add {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] add(a, b)
}
max {
  a = $T[] parameter(0)
  b = $T[] parameter(1)
  ROOT s = $T[] maximum(a, b)
}
ENTRY e {
  p = $T)" + dims + R"( parameter(0)
  r = u32[] replica-id()
  q = u32[] partition-id()
  seven = u32[] constant(7)
  three = u32[] constant(3)
  one = u32[] constant(1)
  r7 = u32[] multiply(r, seven)
  q3 = u32[] multiply(q, three)
  rq = u32[] add(r7, q3)
  f = u32[] add(rq, one)
  fc = $T[] convert(f)
  fb = $T)" + dims + R"( broadcast(fc), dimensions={}
  x = $T)" + dims + R"( multiply(p, fb)
)" + body + "\n}\n",
                  type);
}

TEST(CodegenCollectives, AllReduce) {
  for (const char* type : {"f32", "bf16", "s32", "f64"}) {
    SCOPED_TRACE(type);
    for (const char* config : {"replica_count=2", "replica_count=4", "replica_count=8"}) {
      SCOPED_TRACE(config);
      ExpectMatchesInterpreter(
          Hlo(config, type, "[3,5]", "  ROOT ar = $T[3,5] all-reduce(x), replica_groups={}, to_apply=add"));
    }
    ExpectMatchesInterpreter(Hlo("replica_count=4", type, "[3,5]",
                                 "  ROOT ar = $T[3,5] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=max"));
    ExpectMatchesInterpreter(Hlo("replica_count=4", type, "[3,5]",
                                 "  ROOT ar = $T[3,5] all-reduce(x), replica_groups=[2,2]<=[4], to_apply=add"));
    ExpectMatchesInterpreter(Hlo("replica_count=8", type, "[7]",
                                 "  ROOT ar = $T[7] all-reduce(x), replica_groups=[2,4]<=[2,4]T(1,0), to_apply=add"));
  }
}

TEST(CodegenCollectives, AllReduceVariadicAndPartitions) {
  ExpectMatchesInterpreter(Hlo("replica_count=4", "f32", "[3,5]", R"(
  y = f32[3,5] negate(x)
  ROOT ar = (f32[3,5], f32[3,5]) all-reduce(x, y), replica_groups={{3,1},{0,2}}, to_apply=add)"));
  // 2 replicas x 2 partitions: cross-replica without channel, cross-replica-and-partition, flattened ids, and
  // cross-partition (4 partitions).
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=2", "f32", "[6]",
                               "  ROOT ar = f32[6] all-reduce(x), replica_groups={}, to_apply=add"));
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=2", "f32", "[6]",
                               "  ROOT ar = f32[6] all-reduce(x), channel_id=1, replica_groups={{0,1}}, "
                               "to_apply=add"));
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=2", "f32", "[6]",
                               "  ROOT ar = f32[6] all-reduce(x), channel_id=1, replica_groups={{0,3},{2,1}}, "
                               "use_global_device_ids=true, to_apply=add"));
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=4", "s32", "[6]",
                               "  ROOT ar = s32[6] all-reduce(x), channel_id=1, replica_groups=[4,2]<=[8], "
                               "use_global_device_ids=true, to_apply=max"));
}

TEST(CodegenCollectives, AllGatherAnyDimension) {
  for (const auto& [config, n] : std::vector<std::pair<std::string, int>>{
           {"replica_count=2", 2}, {"replica_count=8", 8}, {"replica_count=2, num_partitions=4", 2}}) {
    SCOPED_TRACE(config);
    std::string rows = std::to_string(2 * n), cols = std::to_string(3 * n);
    ExpectMatchesInterpreter(Hlo(config, "f32", "[2,3]",
                                 "  g0 = f32[" + rows +
                                     ",3] all-gather(x), replica_groups={}, dimensions={0}\n  g1 = f32[2," + cols +
                                     "] all-gather(x), replica_groups={}, dimensions={1}\n  g2 = f32[2," + cols +
                                     "]{0,1} all-gather(x), replica_groups={}, dimensions={1}\n  ROOT t = (f32[" +
                                     rows + ",3], f32[2," + cols + "], f32[2," + cols + "]{0,1}) tuple(g0, g1, g2)"));
  }
}

TEST(CodegenCollectives, AllGatherGroups) {
  ExpectMatchesInterpreter(Hlo("replica_count=4", "bf16", "[2,3]", R"(
  ROOT g = bf16[2,6]{0,1} all-gather(x), replica_groups={{3,0},{2,1}}, dimensions={1})"));
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=4", "s32", "[3,2]", R"(
  ROOT g = s32[3,8] all-gather(x), channel_id=2, replica_groups=[2,4]<=[8], use_global_device_ids=true, dimensions={1})"));
  ExpectMatchesInterpreter(Hlo("replica_count=1, num_partitions=4", "f32", "[3]", R"(
  y = f32[3] negate(x)
  ROOT g = (f32[12], f32[12]) all-gather(x, y), channel_id=1, replica_groups={{0,1,2,3}}, use_global_device_ids=true, dimensions={0})"));
}

TEST(CodegenCollectives, ReduceScatterAnyDimension) {
  ExpectMatchesInterpreter(Hlo("replica_count=4", "f32", "[8,3]", R"(
  s0 = f32[2,3] reduce-scatter(x), replica_groups={}, dimensions={0}, to_apply=add
  t = f32[3,8] transpose(x), dimensions={1,0}
  s1 = f32[3,2]{0,1} reduce-scatter(t), replica_groups={}, dimensions={1}, to_apply=add
  ROOT o = (f32[2,3], f32[3,2]{0,1}) tuple(s0, s1))"));
  ExpectMatchesInterpreter(Hlo("replica_count=8", "bf16", "[4,6]", R"(
  ROOT s = bf16[4,3] reduce-scatter(x), replica_groups={{0,1},{2,3},{4,5},{6,7}}, dimensions={1}, to_apply=max)"));
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=2", "s32", "[4,6]", R"(
  ROOT s = s32[4,3] reduce-scatter(x), channel_id=1, replica_groups={{0,3},{1,2}}, use_global_device_ids=true, dimensions={1}, to_apply=add)"));
}

TEST(CodegenCollectives, AllToAll) {
  for (const char* config : {"replica_count=2", "replica_count=4", "replica_count=8"}) {
    SCOPED_TRACE(config);
    ExpectMatchesInterpreter(Hlo(config, "f32", "[8,8]", R"(
  a0 = f32[8,8] all-to-all(x), replica_groups={}, dimensions={0}
  a1 = f32[8,8] all-to-all(x), replica_groups={}, dimensions={1}
  c = f32[8,8]{0,1} copy(x)
  a2 = f32[8,8]{0,1} all-to-all(c), replica_groups={}, dimensions={1}
  ROOT t = (f32[8,8], f32[8,8], f32[8,8]{0,1}) tuple(a0, a1, a2))"));
  }
  ExpectMatchesInterpreter(Hlo("replica_count=1, num_partitions=4", "s32", "[4,2]", R"(
  ROOT a = s32[4,2] all-to-all(x), channel_id=3, replica_groups={{2,3},{0,1}}, dimensions={0})"));
  // Tuple form: operand j goes to participant j.
  ExpectMatchesInterpreter(Hlo("replica_count=2", "f32", "[3]", R"(
  y = f32[3] negate(x)
  ROOT a = (f32[3], f32[3]) all-to-all(x, y), replica_groups={})"));
}

TEST(CodegenCollectives, CollectivePermuteAndBroadcast) {
  ExpectMatchesInterpreter(Hlo("replica_count=4", "f32", "[2,3]", R"(
  ROOT cp = f32[2,3] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,0}})"));
  ExpectMatchesInterpreter(Hlo("replica_count=8", "bf16", "[5]", R"(
  ROOT cp = bf16[5] collective-permute(x), source_target_pairs={{0,7},{7,0},{3,4}})"));
  ExpectMatchesInterpreter(Hlo("replica_count=2, num_partitions=2", "s32", "[5]", R"(
  ROOT cp = s32[5] collective-permute(x), channel_id=1, source_target_pairs={{0,1},{1,0}})"));
  ExpectMatchesInterpreter(Hlo("replica_count=4", "f32", "[2,3]", R"(
  ROOT b = f32[2,3] collective-broadcast(x), replica_groups={{2,0},{1,3}})"));
  ExpectMatchesInterpreter(Hlo("replica_count=4", "s32", "[3]", R"(
  ROOT b = s32[3] collective-broadcast(x), replica_groups={{1,2}})"));
  // Ids beyond the device count: devices whose group does not resolve get zeros, as in the interpreter.
  ExpectMatchesInterpreter(Hlo("replica_count=2", "s32", "[3]", R"(
  ROOT b = s32[3] collective-broadcast(x), replica_groups={{1,0,2,3}})"));
}

TEST(CodegenCollectives, AsyncForms) {
  ExpectMatchesInterpreter(Hlo("replica_count=4", "f32", "[4]", R"(
  ars = f32[4] all-reduce-start(x), replica_groups={}, to_apply=add
  ard = f32[4] all-reduce-done(ars)
  ags = (f32[4], f32[16]) all-gather-start(x), replica_groups={}, dimensions={0}
  agd = f32[16] all-gather-done(ags)
  cps = (f32[4], f32[4], u32[], u32[]) collective-permute-start(x), source_target_pairs={{0,1},{1,0},{3,2}}
  cpd = f32[4] collective-permute-done(cps)
  ROOT t = (f32[4], f32[16], f32[4]) tuple(ard, agd, cpd))"));
  std::string text = Hlo("replica_count=2", "f32", "[4]", R"(
  as = ((f32[4]), f32[8], s32[]) async-start(x), calls=gather
  au = ((f32[4]), f32[8], s32[]) async-update(as)
  ROOT ad = f32[8] async-done(au))");
  text.replace(text.find("ENTRY"), 0, R"(gather {
  g = f32[4] parameter(0)
  ROOT ag = f32[8] all-gather(g), replica_groups={}, dimensions={0}
}
)");
  ExpectMatchesInterpreter(text);
}

TEST(CodegenCollectives, InsideWhileLoop) {
  std::string text = Hlo("replica_count=4", "f32", "[3]", R"(
  zero = s32[] constant(0)
  init = (s32[], f32[3]) tuple(zero, x)
  ROOT w = (s32[], f32[3]) while(init), condition=cond, body=body)");
  text.replace(text.find("ENTRY"), 0, R"(cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  k = s32[] constant(1)
  j = s32[] add(i, k)
  ar = f32[3] all-reduce(v), replica_groups={}, to_apply=add
  cp = f32[3] collective-permute(ar), source_target_pairs={{0,1},{1,2},{2,3},{3,0}}
  m = f32[3] multiply(cp, v)
  ROOT t = (s32[], f32[3]) tuple(j, m)
}
)");
  ExpectMatchesInterpreter(text);
}

TEST(CodegenCollectives, OverriddenDeviceCount) {
  // JitOptions device counts override the module's; groups are resolved for them.
  std::unique_ptr<Module> module = ParseAndVerify(Hlo("replica_count=1", "f32", "[2]", R"(
  ROOT ar = f32[2] all-reduce(x), replica_groups={}, to_apply=add)"));
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.num_replicas = 4;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  Literal arg(Shape::Array(PrimitiveType::kF32, {2}));
  arg.Set<float>(0, 1.0f);
  arg.Set<float>(1, 0.5f);
  absl::StatusOr<std::vector<Literal>> out = (*exe)->Run({arg});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  ASSERT_EQ(out->size(), 4u);
  // factors 1, 8, 15, 22 sum to 46.
  for (const Literal& l : *out) {
    EXPECT_EQ(l.Get<float>(0), 46.0f);
    EXPECT_EQ(l.Get<float>(1), 23.0f);
  }
}

}  // namespace
}  // namespace xlac::codegen::testing
