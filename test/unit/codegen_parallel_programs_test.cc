// interpreter.run_parallel / interpreter.probe under the JIT (codegen/parallel_programs.h), send/recv and outfeed
// (codegen/ir_emitter_p2p.cc, runtime/cpu/p2p.cc): compiled results must equal the reference interpreter's.
#include <string>

#include "codegen/parallel_programs.h"
#include "codegen_test_util.h"
#include "frontend/stablehlo/parser.h"

namespace xlac::codegen {
namespace {

using testing::DescribeDifference;

std::unique_ptr<Module> ParseStableHlo(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseStableHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  return *std::move(module);
}

// Runs `text` (a StableHLO module without parameters) on both backends with `replicas` devices and compares.
void ExpectStableHloMatches(const std::string& text, int64_t replicas = 1) {
  std::unique_ptr<Module> module = ParseStableHlo(text);
  ASSERT_NE(module, nullptr);
  interp::InterpreterOptions interp_options;
  interp_options.num_replicas = replicas;
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {{}}, interp_options);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  JitOptions options;
  options.num_replicas = replicas;
  options.collective_timeout_ms = 5000;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run({});
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t d = 0; d < actual->size(); ++d) {
    EXPECT_TRUE((*actual)[d] == (*expected)[d]) << DescribeDifference((*expected)[d], (*actual)[d]);
  }
}

constexpr char kAllGather[] = R"(
module @m {
  func.func @all_gather(%arg0 : tensor<2x2xi64>) -> tensor<2x4xi64> {
    %result = "stablehlo.all_gather"(%arg0) {
      all_gather_dim = 1 : i64,
      replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>
    } : (tensor<2x2xi64>) -> tensor<2x4xi64>
    return %result : tensor<2x4xi64>
  }
  func.func @main() -> (tensor<2x4xi64>, tensor<2x4xi64>) {
    %0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
    %1 = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
    %results:2 = "interpreter.run_parallel"(%0, %1) {
      programs=[[@all_gather], [@all_gather]]
    } : (tensor<2x2xi64>, tensor<2x2xi64>) -> (tensor<2x4xi64>, tensor<2x4xi64>)
    func.return %results#0, %results#1 : tensor<2x4xi64>, tensor<2x4xi64>
  }
}
)";

TEST(CodegenParallelPrograms, SameProgramWithCollective) { ExpectStableHloMatches(kAllGather); }

TEST(CodegenParallelPrograms, GridOrderOfReplicasAndPartitions) {
  ExpectStableHloMatches(R"(
module @m {
  func.func @ids(%x : tensor<i64>) -> (tensor<ui32>, tensor<ui32>, tensor<i64>) {
    %r = stablehlo.replica_id : tensor<ui32>
    %p = stablehlo.partition_id : tensor<ui32>
    return %r, %p, %x : tensor<ui32>, tensor<ui32>, tensor<i64>
  }
  func.func @main() -> (tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>,
                        tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>,
                        tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>) {
    %a = stablehlo.constant dense<10> : tensor<i64>
    %b = stablehlo.constant dense<11> : tensor<i64>
    %c = stablehlo.constant dense<12> : tensor<i64>
    %d = stablehlo.constant dense<13> : tensor<i64>
    %e = stablehlo.constant dense<14> : tensor<i64>
    %f = stablehlo.constant dense<15> : tensor<i64>
    %r:18 = "interpreter.run_parallel"(%a, %b, %c, %d, %e, %f) {
      programs=[[@ids, @ids, @ids], [@ids, @ids, @ids]]
    } : (tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>, tensor<i64>) ->
        (tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>,
         tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>,
         tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>)
    func.return %r#0, %r#1, %r#2, %r#3, %r#4, %r#5, %r#6, %r#7, %r#8, %r#9, %r#10, %r#11, %r#12, %r#13, %r#14,
                %r#15, %r#16, %r#17 :
        tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>,
        tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>,
        tensor<ui32>, tensor<ui32>, tensor<i64>, tensor<ui32>, tensor<ui32>, tensor<i64>
  }
}
)");
}

constexpr char kSendRecv[] = R"(
module @m {
  func.func @send0(%operand : tensor<2x2xi64>, %token : !stablehlo.token) -> !stablehlo.token {
    %result = "stablehlo.send"(%operand, %token) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 2>, is_host_transfer = true
    } : (tensor<2x2xi64>, !stablehlo.token) -> !stablehlo.token
    return %result : !stablehlo.token
  }
  func.func @send1(%operand : tensor<2x2xi64>, %token : !stablehlo.token) -> !stablehlo.token {
    %result = "stablehlo.send"(%operand, %token) {
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 2>, is_host_transfer = true
    } : (tensor<2x2xi64>, !stablehlo.token) -> !stablehlo.token
    return %result : !stablehlo.token
  }
  func.func @recv0(%token : !stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token) {
    %results0, %results1 = "stablehlo.recv"(%token) {
      channel_handle = #stablehlo.channel_handle<handle = 1, type = 3>, is_host_transfer = true
    } : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
    return %results0, %results1 : tensor<2x2xi64>, !stablehlo.token
  }
  func.func @recv1(%token : !stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token) {
    %results0, %results1 = "stablehlo.recv"(%token) {
      channel_handle = #stablehlo.channel_handle<handle = 2, type = 3>, is_host_transfer = true
    } : (!stablehlo.token) -> (tensor<2x2xi64>, !stablehlo.token)
    return %results0, %results1 : tensor<2x2xi64>, !stablehlo.token
  }
  func.func @main() -> (tensor<2x2xi64>, tensor<2x2xi64>) {
    %0 = stablehlo.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
    %1 = stablehlo.constant dense<[[5, 6], [7, 8]]> : tensor<2x2xi64>
    %2 = stablehlo.after_all : !stablehlo.token
    %3:6 = "interpreter.run_parallel"(%0, %2, %2, %1, %2, %2) {
      programs=[[@send0], [@recv0], [@send1], [@recv1]]
    } : (tensor<2x2xi64>, !stablehlo.token, !stablehlo.token, tensor<2x2xi64>, !stablehlo.token, !stablehlo.token) ->
        (!stablehlo.token, tensor<2x2xi64>, !stablehlo.token, !stablehlo.token, tensor<2x2xi64>, !stablehlo.token)
    func.return %3#1, %3#4 : tensor<2x2xi64>, tensor<2x2xi64>
  }
}
)";

TEST(CodegenParallelPrograms, DifferentProgramsSendAndReceive) { ExpectStableHloMatches(kSendRecv); }

TEST(CodegenParallelPrograms, GridModuleSlotsSkipTokens) {
  std::unique_ptr<Module> module = ParseStableHlo(kSendRecv);
  ASSERT_NE(module, nullptr);
  const Instruction* site = nullptr;
  for (const auto& inst : module->entry_computation()->instructions()) {
    if (inst->opcode() == Opcode::kCustomCall) site = inst.get();
  }
  ASSERT_NE(site, nullptr);
  absl::StatusOr<GridModule> grid = BuildGridModule(*module, *site);
  ASSERT_TRUE(grid.ok()) << grid.status().ToString();
  EXPECT_EQ(grid->num_replicas, 4);
  EXPECT_EQ(grid->num_partitions, 1);
  std::vector<std::vector<int64_t>> slots = {{-1}, {0, -1}, {-1}, {1, -1}};
  EXPECT_EQ(grid->slots, slots);
  // Only the entry and what it reaches are left: the original main (with its run_parallel) is gone.
  for (const auto& comp : grid->module->computations()) {
    for (const auto& inst : comp->instructions()) EXPECT_NE(inst->opcode(), Opcode::kCustomCall) << inst->name();
  }
  EXPECT_EQ(grid->module->entry_computation()->parameter_count(), 2);
}

TEST(CodegenParallelPrograms, OutfeedAndProbe) {
  ExpectStableHloMatches(R"(
module @m {
  func.func @outfeed(%x : tensor<2x2x2xi64>, %token : !stablehlo.token) -> (!stablehlo.token, tensor<2x2x2xi64>) {
    %result = "stablehlo.outfeed"(%x, %token) : (tensor<2x2x2xi64>, !stablehlo.token) -> !stablehlo.token
    %y = stablehlo.add %x, %x : tensor<2x2x2xi64>
    func.return %result, %y : !stablehlo.token, tensor<2x2x2xi64>
  }
  func.func @main() -> tensor<2x2x2xi64> {
    %x = stablehlo.constant dense<[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]> : tensor<2x2x2xi64>
    %token = stablehlo.after_all : !stablehlo.token
    %r:2 = "interpreter.run_parallel"(%x, %token) {
      programs=[[@outfeed]]
    } : (tensor<2x2x2xi64>, !stablehlo.token) -> (!stablehlo.token, tensor<2x2x2xi64>)
    %p = interpreter.probe %r#1, probe_id = "p" : tensor<2x2x2xi64>
    func.return %p : tensor<2x2x2xi64>
  }
}
)");
}

// Every outer device runs its own nested device group from its device thread, concurrently.
TEST(CodegenParallelPrograms, NestedGroupsFromSeveralDevices) { ExpectStableHloMatches(kAllGather, /*replicas=*/3); }

TEST(CodegenParallelPrograms, CopyStartDoneAndHostTransfersInHlo) {
  testing::ExpectMatchesInterpreter(R"(
HloModule m
ENTRY e {
  x = f32[3,2] parameter(0)
  cs = (f32[3,2], f32[3,2], u32[]) copy-start(x)
  cd = f32[3,2] copy-done(cs)
  t = token[] after-all()
  s = (f32[3,2], u32[], token[]) send(cd, t), channel_id=3, is_host_transfer=true
  sd = token[] send-done(s), channel_id=3, is_host_transfer=true
  o = token[] outfeed(x, sd), outfeed_shape=f32[3,2]
  r = (f32[3,2], u32[], token[]) recv(o), channel_id=3, is_host_transfer=true
  rd = (f32[3,2], token[]) recv-done(r), channel_id=3, is_host_transfer=true
  v = f32[3,2] get-tuple-element(rd), index=0
  ROOT sum = f32[3,2] add(v, x)
})");
}

// A receive nobody sends fails at once instead of hanging.
TEST(CodegenParallelPrograms, UnmatchedReceiveFails) {
  std::unique_ptr<Module> module = ParseStableHlo(R"(
module @m {
  func.func @recv(%token : !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token) {
    %r0, %r1 = "stablehlo.recv"(%token) {
      channel_handle = #stablehlo.channel_handle<handle = 5, type = 3>, is_host_transfer = true
    } : (!stablehlo.token) -> (tensor<2xi64>, !stablehlo.token)
    return %r0, %r1 : tensor<2xi64>, !stablehlo.token
  }
  func.func @nothing(%token : !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token) {
    %c = stablehlo.constant dense<[1, 2]> : tensor<2xi64>
    return %c, %token : tensor<2xi64>, !stablehlo.token
  }
  func.func @main() -> tensor<2xi64> {
    %t = stablehlo.after_all : !stablehlo.token
    %r:4 = "interpreter.run_parallel"(%t, %t) {
      programs=[[@recv, @nothing]]
    } : (!stablehlo.token, !stablehlo.token) -> (tensor<2xi64>, !stablehlo.token, tensor<2xi64>, !stablehlo.token)
    func.return %r#0 : tensor<2xi64>
  }
}
)");
  ASSERT_NE(module, nullptr);
  JitOptions options;
  options.collective_timeout_ms = 60000;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> result = (*exe)->Run({});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("never sent"), std::string::npos) << result.status().ToString();
}

// Other targets still reach the user's handler; without one, compilation reports them.
TEST(CodegenParallelPrograms, UserHandlerGetsOtherTargets) {
  std::unique_ptr<Module> module = ParseStableHlo(R"(
module @m {
  func.func @main() -> tensor<2xf32> {
    %c = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %p = interpreter.probe %c, probe_id = "p" : tensor<2xf32>
    %r = stablehlo.custom_call @my_target(%p) {has_side_effect = true} : (tensor<2xf32>) -> tensor<2xf32>
    func.return %r : tensor<2xf32>
  }
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_FALSE(JitExecutable::Compile(*module).ok());
  JitOptions options;
  int calls = 0;
  options.custom_call_handler = [&](const Instruction& inst,
                                    const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
    ++calls;
    EXPECT_EQ(inst.StringAttr("custom_call_target"), "my_target");
    return *operands[0];
  };
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
  ASSERT_TRUE(exe.ok()) << exe.status().ToString();
  absl::StatusOr<std::vector<Literal>> result = (*exe)->Run({});
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(calls, 1);
}

}  // namespace
}  // namespace xlac::codegen
