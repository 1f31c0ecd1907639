// Collectives over real device threads: all-reduce (list and iota replica groups, cross-partition with channel
// ids and global device ids), all-gather, reduce-scatter, all-to-all, collective-permute, collective-broadcast,
// send/recv, replica-id/partition-id, and the diagnosis of mismatched collectives.
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

constexpr PrimitiveType F32 = PrimitiveType::kF32;
constexpr PrimitiveType U32 = PrimitiveType::kU32;

InterpreterOptions Devices(int64_t replicas, int64_t partitions = 1) {
  InterpreterOptions o;
  o.num_replicas = replicas;
  o.num_partitions = partitions;
  o.collective_timeout_ms = 10000;
  return o;
}

// Runs `text` (no parameters) and returns each device's result as doubles.
std::vector<std::vector<double>> PerDevice(const std::string& text, InterpreterOptions options) {
  absl::StatusOr<std::vector<Literal>> r = RunAll(text, {{}}, options);
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  std::vector<std::vector<double>> out;
  if (!r.ok()) return out;
  for (const Literal& l : *r) out.push_back(Doubles(l));
  return out;
}

constexpr char kSum[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

std::string WithBody(const std::string& body) {
  return std::string(kSum) + "ENTRY e {\n  id = u32[] replica-id()\n  x = f32[] convert(id)\n" + body + "\n}\n";
}

TEST(InterpreterCollectives, ReplicaAndPartitionIds) {
  auto r = PerDevice(R"(
HloModule m
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  r1 = u32[1] reshape(r)
  p1 = u32[1] reshape(p)
  ROOT t = u32[2] concatenate(r1, p1), dimensions={0}
})",
                     Devices(2, 3));
  ASSERT_EQ(r.size(), 6u);
  for (int d = 0; d < 6; ++d)
    EXPECT_EQ(r[d], (std::vector<double>{static_cast<double>(d / 3), static_cast<double>(d % 3)}));
}

TEST(InterpreterCollectives, AllReduceGroups) {
  auto all = PerDevice(WithBody("  ROOT s = f32[] all-reduce(x), replica_groups={}, to_apply=add"), Devices(4));
  for (const auto& v : all) EXPECT_EQ(v, (std::vector<double>{6}));
  auto pairs =
      PerDevice(WithBody("  ROOT s = f32[] all-reduce(x), replica_groups={{0,2},{1,3}}, to_apply=add"), Devices(4));
  EXPECT_EQ(pairs, (std::vector<std::vector<double>>{{2}, {4}, {2}, {4}}));
  // Iota form [2,2]<=[2,2]T(1,0) is {{0,2},{1,3}}.
  auto iota = PerDevice(WithBody("  ROOT s = f32[] all-reduce(x), replica_groups=[2,2]<=[2,2]T(1,0), to_apply=add"),
                        Devices(4));
  EXPECT_EQ(iota, pairs);
  auto plain_iota =
      PerDevice(WithBody("  ROOT s = f32[] all-reduce(x), replica_groups=[2,2]<=[4], to_apply=add"), Devices(4));
  EXPECT_EQ(plain_iota, (std::vector<std::vector<double>>{{1}, {1}, {5}, {5}}));
}

TEST(InterpreterCollectives, AllReduceAcrossPartitions) {
  // 2 replicas x 2 partitions; value = device id (replica * 2 + partition).
  std::string body = R"(
ENTRY e {
  r = u32[] replica-id()
  p = u32[] partition-id()
  two = u32[] constant(2)
  rr = u32[] multiply(r, two)
  d = u32[] add(rr, p)
  x = f32[] convert(d)
  ROOT s = f32[] all-reduce(x), %s, to_apply=add
})";
  auto run = [&](const std::string& attrs) {
    char text[1024];
    std::snprintf(text, sizeof(text), body.c_str(), attrs.c_str());
    return PerDevice(std::string(kSum) + text, Devices(2, 2));
  };
  // No channel: replicas of the same partition reduce (0+2, 1+3).
  EXPECT_EQ(run("replica_groups={}"), (std::vector<std::vector<double>>{{2}, {4}, {2}, {4}}));
  // Channel, replica ids across all partitions: everything.
  EXPECT_EQ(run("channel_id=1, replica_groups={{0,1}}"), (std::vector<std::vector<double>>{{6}, {6}, {6}, {6}}));
  // Global device ids.
  EXPECT_EQ(run("channel_id=1, replica_groups={{0,1},{2,3}}, use_global_device_ids=true"),
            (std::vector<std::vector<double>>{{1}, {1}, {5}, {5}}));
}

TEST(InterpreterCollectives, AllGatherReduceScatterAllToAll) {
  auto gathered =
      PerDevice(WithBody("  v = f32[1] reshape(x)\n  ROOT g = f32[3] all-gather(v), dimensions={0}"), Devices(3));
  for (const auto& v : gathered) EXPECT_EQ(v, (std::vector<double>{0, 1, 2}));
  // Each device holds [id, id+10, id+20, id+30]; each pair sums them and device i of the pair keeps chunk i.
  std::string rs = WithBody(R"(
  b = f32[4] broadcast(x), dimensions={}
  o = f32[4] constant({0, 10, 20, 30})
  v = f32[4] add(b, o)
  ROOT s = f32[2] reduce-scatter(v), dimensions={0}, replica_groups={{0,1},{2,3}}, to_apply=add)");
  EXPECT_EQ(PerDevice(rs, Devices(4)), (std::vector<std::vector<double>>{{1, 21}, {41, 61}, {5, 25}, {45, 65}}));
  // all-to-all: device i sends element j to device j, which concatenates what it receives in sender order.
  std::string a2a = WithBody(R"(
  t = f32[] constant(10)
  xt = f32[] multiply(x, t)
  b = f32[3] broadcast(xt), dimensions={}
  o = f32[3] constant({0, 1, 2})
  v = f32[3] add(b, o)
  ROOT a = f32[3] all-to-all(v), dimensions={0})");
  EXPECT_EQ(PerDevice(a2a, Devices(3)), (std::vector<std::vector<double>>{{0, 10, 20}, {1, 11, 21}, {2, 12, 22}}));
}

TEST(InterpreterCollectives, CollectivePermuteAndBroadcast) {
  auto rotated = PerDevice(WithBody("  ROOT c = f32[] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,0}}"),
                           Devices(4));
  // Device 3 is nobody's target: zeros.
  EXPECT_EQ(rotated, (std::vector<std::vector<double>>{{2}, {0}, {1}, {0}}));
  auto bcast =
      PerDevice(WithBody("  ROOT c = f32[] collective-broadcast(x), replica_groups={{2,0},{1,3}}"), Devices(4));
  EXPECT_EQ(bcast, (std::vector<std::vector<double>>{{2}, {1}, {2}, {1}}));
}

TEST(InterpreterCollectives, SendRecvPairsInProgramOrder) {
  auto r = PerDevice(R"(
HloModule m
ENTRY e {
  id = u32[] replica-id()
  x = f32[] convert(id)
  tok = token[] after-all()
  s = (f32[], u32[], token[]) send(x, tok), channel_id=1,
      frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2}}}
  r = (f32[], u32[], token[]) recv(tok), channel_id=2,
      frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2}}}
  sd = token[] send-done(s), channel_id=1
  rd = (f32[], token[]) recv-done(r), channel_id=2
  ROOT v = f32[] get-tuple-element(rd), index=0
})",
                     Devices(3));
  EXPECT_EQ(r, (std::vector<std::vector<double>>{{0}, {0}, {1}}));
}

TEST(InterpreterCollectives, MismatchedCollectiveReportsWhoWaitedForWhom) {
  // Only replica 0 takes the branch with the all-reduce: it must report that device 1 finished without it.
  std::string text = std::string(kSum) + R"(
reduce_branch {
  v = f32[] parameter(0)
  ROOT s = f32[] all-reduce(v), replica_groups={}, to_apply=add
}
skip_branch {
  ROOT v = f32[] parameter(0)
}
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  p = pred[] compare(id, zero), direction=EQ
  x = f32[] convert(id)
  ROOT c = f32[] conditional(p, x, x), true_computation=reduce_branch, false_computation=skip_branch
})";
  InterpreterOptions o = Devices(2);
  o.collective_timeout_ms = 2000;
  absl::StatusOr<std::vector<Literal>> r = RunAll(text, {{}}, o);
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("device 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("all-reduce 's'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("device 1 finished its program without reaching it"), std::string::npos) << msg;
}

TEST(InterpreterCollectives, DeadlockTimesOutNamingWhereEachDeviceWaits) {
  // Replica 0 waits at one all-reduce, replica 1 at another: neither can finish.
  std::string text = std::string(kSum) + R"(
a_branch {
  v = f32[] parameter(0)
  ROOT s = f32[] all-reduce(v), replica_groups={}, to_apply=add
}
b_branch {
  v = f32[] parameter(0)
  ROOT t = f32[] all-reduce(v), replica_groups={}, to_apply=add
}
ENTRY e {
  id = u32[] replica-id()
  zero = u32[] constant(0)
  p = pred[] compare(id, zero), direction=EQ
  x = f32[] convert(id)
  ROOT c = f32[] conditional(p, x, x), true_computation=a_branch, false_computation=b_branch
})";
  InterpreterOptions o = Devices(2);
  o.collective_timeout_ms = 300;
  absl::StatusOr<std::vector<Literal>> r = RunAll(text, {{}}, o);
  ASSERT_FALSE(r.ok());
  std::string msg(r.status().message());
  EXPECT_NE(msg.find("timed out after 300 ms"), std::string::npos) << msg;
  EXPECT_NE(msg.find("is waiting at all-reduce"), std::string::npos) << msg;
}

TEST(InterpreterCollectives, PerDeviceArguments) {
  std::string text = std::string(kSum) + R"(
ENTRY e {
  x = f32[2] parameter(0)
  ROOT s = f32[2] all-reduce(x), replica_groups={}, to_apply=add
})";
  std::vector<std::vector<Literal>> args(2);
  args[0].push_back(Vec(F32, {1, 2}));
  args[1].push_back(Vec(F32, {10, 20}));
  absl::StatusOr<std::vector<Literal>> r = RunAll(text, std::move(args), Devices(2));
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(Doubles((*r)[0]), (std::vector<double>{11, 22}));
  EXPECT_EQ(Doubles((*r)[1]), (std::vector<double>{11, 22}));
  (void)U32;
}

}  // namespace
}  // namespace xlac::interp::testing
