// The compile pipeline's front half (compiler/compiler.h): loading, the partition step, the pipeline's listing.
#include "compiler/compiler.h"

#include <algorithm>
#include <string>

#include "gtest/gtest.h"
#include "passes/pass.h"

namespace xlac {
namespace {

constexpr char kSharded[] = R"(HloModule m, num_partitions=2

ENTRY %e (x: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  ROOT %n = f32[8,4] negate(%x), sharding={devices=[2,1]0,1}
}
)";

TEST(Compiler, LoadModuleReportsWhereTheTextIsWrong) {
  SourceFile file("bad.hlo", "HloModule m\n\nENTRY %e () -> f32[] {\n  ROOT %c = f32[] constant(1\n}\n");
  DiagnosticEngine diags;
  EXPECT_EQ(LoadModule(file, CompilerOptions{}, diags), nullptr);
  ASSERT_TRUE(diags.has_errors());
  EXPECT_NE(diags.Render(file).find("bad.hlo:5:1: error: expects ')'"), std::string::npos) << diags.Render(file);
}

TEST(Compiler, LoadModuleCallsBackOnceParsed) {
  // A front door's observer starts in the callback: called for a module that parses, not for one that does not.
  SourceFile file("m.hlo", kSharded);
  DiagnosticEngine diags;
  std::string seen;
  EXPECT_NE(LoadModule(file, CompilerOptions{}, diags, [&](const Module& m) { seen = m.name(); }), nullptr);
  EXPECT_EQ(seen, "m");
  seen.clear();
  SourceFile bad("bad.hlo", "HloModule m\n\nENTRY %e () -> f32[] {\n");
  EXPECT_EQ(LoadModule(bad, CompilerOptions{}, diags, [&](const Module& m) { seen = m.name(); }), nullptr);
  EXPECT_EQ(seen, "");
}

TEST(Compiler, LoadModuleRewritesDeclaredIdentities) {
  SourceFile file("m.hlo",
                  "HloModule m\n\nENTRY %e (x: f32[2]) -> f32[2] {\n  %x = f32[2] parameter(0)\n"
                  "  ROOT %c = f32[2] custom-call(%x), custom_call_target=\"tt.mark\"\n}\n");
  CompilerOptions options;
  options.custom_call_identity = {"tt.mark"};
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = LoadModule(file, options, diags);
  ASSERT_NE(module, nullptr) << diags.Render(file);
  EXPECT_NE(module->entry_computation()->root()->opcode(), Opcode::kCustomCall);
}

TEST(Compiler, PartitionsOnlyShardedModulesOnSeveralPartitions) {
  SourceFile file("m.hlo", kSharded);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = LoadModule(file, CompilerOptions{}, diags);
  ASSERT_NE(module, nullptr) << diags.Render(file);
  SpmdReport report;
  absl::StatusOr<bool> partitioned = PartitionModule(*module, CompilerOptions{}, report, diags);
  ASSERT_TRUE(partitioned.ok()) << partitioned.status();
  EXPECT_TRUE(*partitioned);
  EXPECT_EQ(module->entry_computation()->parameter(0)->shape().dimensions, (std::vector<int64_t>{4, 4}));
  ASSERT_EQ(report.parameter_shardings.size(), 1u);

  // One partition (the options win over the module's num_partitions=2): nothing to do.
  std::unique_ptr<Module> whole = LoadModule(file, CompilerOptions{}, diags);
  CompilerOptions one;
  one.num_partitions = 1;
  partitioned = PartitionModule(*whole, one, report, diags);
  ASSERT_TRUE(partitioned.ok());
  EXPECT_FALSE(*partitioned);
  EXPECT_EQ(whole->entry_computation()->parameter(0)->shape().dimensions, (std::vector<int64_t>{8, 4}));
}

TEST(Compiler, FusesBeforeItPartitions) {
  SourceFile file("m.hlo", R"(HloModule m, num_partitions=2

ENTRY %e (x: f32[8,4], y: f32[8,4]) -> f32[8,4] {
  %x = f32[8,4] parameter(0), sharding={devices=[2,1]0,1}
  %y = f32[8,4] parameter(1), sharding={devices=[2,1]0,1}
  %n = f32[8,4] negate(%x)
  ROOT %a = f32[8,4] add(%n, %y), sharding={devices=[2,1]0,1}
}
)");
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = LoadModule(file, CompilerOptions{}, diags);
  ASSERT_NE(module, nullptr) << diags.Render(file);
  SpmdReport report;
  absl::StatusOr<bool> partitioned = PartitionModule(*module, CompilerOptions{}, report, diags);
  ASSERT_TRUE(partitioned.ok()) << diags.Render(file);
  ASSERT_TRUE(*partitioned);
  // One loop fusion of both ops, partitioned as a unit: per-core shapes, no collective.
  const Instruction* root = module->entry_computation()->root();
  ASSERT_EQ(root->opcode(), Opcode::kFusion);
  EXPECT_EQ(root->shape().dimensions, (std::vector<int64_t>{4, 4}));
  EXPECT_TRUE(report.collectives.empty());
}

TEST(Compiler, PipelineStagesRunInTheDesignsOrderAndNameRegisteredPasses) {
  OptimizationOptions optimization;
  std::vector<PipelineStep> steps = DefaultPipeline(optimization);
  const std::vector<std::string> stages = {"load", "optimize", "partition", "layout", "prepare", "codegen"};
  size_t stage = 0;
  for (const PipelineStep& step : steps) {
    while (stage < stages.size() && stages[stage] != step.stage) ++stage;
    ASSERT_LT(stage, stages.size()) << step.stage << " " << step.name << " out of order";
    // The passes of the middle stages are real passes, so the listing cannot drift from what runs.
    if ((step.stage == "optimize" || step.stage == "partition" || step.stage == "layout" || step.stage == "prepare") &&
        step.name != "verify" && step.name != "buffer-assignment") {
      EXPECT_NE(FindPass(step.name), nullptr) << step.name;
    }
  }
  auto position = [&](const std::string& name) {
    return std::find_if(steps.begin(), steps.end(), [&](const PipelineStep& s) { return s.name == name; }) -
           steps.begin();
  };
  // The design's order: fusion, then the partitioner, then layout assignment.
  EXPECT_LT(position("fusion"), position("spmd-partitioner"));
  EXPECT_LT(position("spmd-partitioner"), position("layout-assignment"));
  EXPECT_LT(position("layout-assignment"), position("copy-insertion"));
}

// A module that is not partitioned runs the same order with nothing in between: the steps before partitioning
// (without sharding propagation), then the layout stage, so fusion comes before layout assignment for every module.
TEST(Compiler, UnpartitionedModulesRunTheDesignsOrder) {
  for (bool exact : {true, false}) {
    OptimizationOptions options;
    options.exact = exact;
    options.stage = OptimizationStage::kBeforePartitioning;
    std::vector<std::string> expected = OptimizationPipeline(options);
    expected.erase(std::remove(expected.begin(), expected.end(), "sharding-propagation"), expected.end());
    options.stage = OptimizationStage::kAfterPartitioning;
    std::vector<std::string> after = OptimizationPipeline(options);
    expected.insert(expected.end(), after.begin(), after.end());
    options.stage = OptimizationStage::kWhole;
    EXPECT_EQ(OptimizationPipeline(options), expected);
    EXPECT_EQ(expected.back(), "fusion");
    EXPECT_LT(std::find(expected.begin(), expected.end(), "fusion"),
              std::find(expected.begin(), expected.end(), "layout-assignment"));
  }
}

}  // namespace
}  // namespace xlac
