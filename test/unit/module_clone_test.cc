// Module::Clone: a deep copy that shares nothing with the original (instructions, computations, literals) and keeps
// names, unique ids, calls and the config, so compiling the copy is compiling the original.
#include <memory>
#include <string>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "ir/module.h"

namespace xlac {
namespace {

constexpr char kText[] = R"(HloModule m, replica_count=2, input_output_alias={ {}: (0, {}, may-alias) }

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

cond {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

body {
  p = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  one = s32[] constant(1)
  j = s32[] add(i, one)
  v = f32[4] get-tuple-element(p), index=1
  w = f32[4] add(v, v)
  ROOT t = (s32[], f32[4]) tuple(j, w)
}

ENTRY main {
  x = f32[4]{0} parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  loop = (s32[], f32[4]) while(init), condition=cond, body=body
  r = f32[4] get-tuple-element(loop), index=1
  c = f32[4] constant({1, 2, 3, 4})
  z = f32[] constant(0)
  sum = f32[] reduce(r, z), dimensions={0}, to_apply=add
  ROOT out = f32[4] add(r, c)
}
)";

TEST(ModuleClone, PrintsIdenticallyAndSharesNothing) {
  absl::StatusOr<std::unique_ptr<Module>> parsed = ParseHloModule(kText, "clone.hlo");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const Module& original = **parsed;
  std::unique_ptr<Module> clone = original.Clone();
  EXPECT_EQ(PrintModule(*clone), PrintModule(original));
  EXPECT_EQ(clone->source_name(), "clone.hlo");
  EXPECT_EQ(clone->config().replica_count, 2);
  ASSERT_EQ(clone->computations().size(), original.computations().size());
  ASSERT_NE(clone->entry_computation(), nullptr);
  EXPECT_EQ(clone->entry_computation()->parent(), clone.get());
  EXPECT_NE(clone->entry_computation(), original.entry_computation());
  for (size_t c = 0; c < clone->computations().size(); ++c) {
    const Computation& copy = *clone->computations()[c];
    const Computation& from = *original.computations()[c];
    EXPECT_EQ(copy.unique_id(), from.unique_id());
    ASSERT_EQ(copy.instruction_count(), from.instruction_count());
    for (int64_t i = 0; i < copy.instruction_count(); ++i) {
      const Instruction& a = *copy.instructions()[i];
      const Instruction& b = *from.instructions()[i];
      EXPECT_NE(&a, &b);
      EXPECT_EQ(a.unique_id(), b.unique_id()) << a.name();
      EXPECT_EQ(a.parent(), &copy);
      // Calls go to the clone's own computations.
      for (const Computation* callee : a.called_computations()) EXPECT_EQ(callee->parent(), clone.get()) << a.name();
      for (const Instruction* operand : a.operands()) EXPECT_EQ(operand->parent(), &copy) << a.name();
    }
  }
  // Mutating the clone leaves the original alone, and fresh names continue the original's sequence.
  const std::string before = PrintModule(original);
  Instruction* out = clone->entry_computation()->root();
  out->set_name("renamed");
  EXPECT_EQ(clone->UniqueInstructionName("sum"), "sum.1");
  EXPECT_EQ(PrintModule(original), before);
  EXPECT_NE(PrintModule(*clone), before);
}

}  // namespace
}  // namespace xlac
