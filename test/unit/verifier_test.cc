// Verifier tests: one per structural rule (modules built through the IR API), plus a corpus sweep that parses and
// verifies every module XLA's own tests accepted.
#include "passes/verifier.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace xlac {
namespace {

Shape F32(std::vector<int64_t> dims) { return Shape::Array(PrimitiveType::kF32, std::move(dims)); }
Shape Scalar(PrimitiveType t) { return Shape::Scalar(t); }

// Builds one computation; instructions get distinct source lines so diagnostics can be matched to them.
class CompBuilder {
 public:
  explicit CompBuilder(std::string name) : comp_(std::make_unique<Computation>(std::move(name))) {}

  Instruction* Param(int64_t number, const Shape& shape, std::string name = "") {
    if (name.empty()) name = comp_->name() + ".p" + std::to_string(number);
    return Add(Instruction::CreateParameter(number, std::move(name), shape));
  }
  Instruction* Op(Opcode op, const Shape& shape, std::vector<Instruction*> operands, std::string name = "") {
    if (name.empty()) name = std::string(OpcodeName(op)) + "." + std::to_string(comp_->instruction_count());
    return Add(Instruction::Create(op, std::move(name), shape, std::move(operands)));
  }
  Instruction* Add(std::unique_ptr<Instruction> inst) {
    inst->set_loc(SourceLoc{static_cast<int32_t>(comp_->instruction_count() + 2), 3});
    return comp_->AddInstruction(std::move(inst));
  }
  Computation* comp() { return comp_.get(); }
  std::unique_ptr<Computation> Take(Instruction* root) {
    comp_->set_root(root);
    return std::move(comp_);
  }

 private:
  std::unique_ptr<Computation> comp_;
};

struct Result {
  bool ok;
  std::vector<Diagnostic> diags;
  std::string Messages() const {
    std::string out;
    for (const Diagnostic& d : diags) out += d.message + "\n";
    return out;
  }
  bool Has(const std::string& needle) const { return Messages().find(needle) != std::string::npos; }
};

Result Verify(const Module& module, VerifierOptions options = {}) {
  DiagnosticEngine diags;
  bool ok = VerifyModule(module, diags, options);
  return {ok, diags.diagnostics()};
}

// ENTRY main { p0 = f32[2] parameter(0); p1 = f32[2] parameter(1); ROOT add = <root_shape> add(p0, p1) }
std::unique_ptr<Module> AddModule(const Shape& root_shape) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p0 = b.Param(0, F32({2}));
  Instruction* p1 = b.Param(1, F32({2}));
  Instruction* add = b.Op(Opcode::kAdd, root_shape, {p0, p1}, "add.3");
  module->AddEntryComputation(b.Take(add));
  return module;
}

// (f32[], f32[]) -> f32[] adder, added to `module`.
Computation* AddScalarAdder(Module& module, const std::string& name = "adder") {
  CompBuilder b(name);
  Instruction* x = b.Param(0, Scalar(PrimitiveType::kF32));
  Instruction* y = b.Param(1, Scalar(PrimitiveType::kF32));
  return module.AddComputation(b.Take(b.Op(Opcode::kAdd, Scalar(PrimitiveType::kF32), {x, y})));
}

TEST(VerifierTest, AcceptsWellFormedModule) {
  auto module = AddModule(F32({2}));
  Result r = Verify(*module);
  EXPECT_TRUE(r.ok) << r.Messages();
  EXPECT_TRUE(r.diags.empty());
}

TEST(VerifierTest, ReportsShapeMismatchAtTheInstruction) {
  auto module = AddModule(F32({3}));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.diags.size(), 1u) << r.Messages();
  EXPECT_EQ(r.diags[0].message, "instruction 'add.3' has shape f32[3] but its operands imply f32[2]");
  EXPECT_EQ(r.diags[0].loc.line, 4);  // add.3 is the third instruction
  EXPECT_EQ(r.diags[0].severity, Severity::kError);
}

TEST(VerifierTest, MixedFloatPrecisionIsAllowedExceptForPassThroughOps) {
  // XLA lets arithmetic produce another float precision (bf16 <- f32 + f32) ...
  EXPECT_TRUE(Verify(*AddModule(Shape::Array(PrimitiveType::kBF16, {2}))).ok);
  // ... but not change an integer type ...
  EXPECT_FALSE(Verify(*AddModule(Shape::Array(PrimitiveType::kS32, {2}))).ok);
  // ... and ops that only forward data (tuple) must match exactly.
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Instruction* t = b.Op(Opcode::kTuple, Shape::Tuple({Shape::Array(PrimitiveType::kBF16, {2})}), {p}, "t");
  module->AddEntryComputation(b.Take(t));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 't' has shape (bf16[2]) but its operands imply (f32[2])")) << r.Messages();
}

TEST(VerifierTest, ReportsShapeInferenceErrorsWithTheInstructionName) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* lhs = b.Param(0, F32({2, 3}));
  Instruction* rhs = b.Param(1, F32({3, 4}));
  Instruction* dot = b.Op(Opcode::kDot, F32({2, 4}), {lhs, rhs}, "dot");
  dot->SetAttr("lhs_contracting_dims", AttrValue::IntList({3}));
  dot->SetAttr("rhs_contracting_dims", AttrValue::IntList({0}));
  module->AddEntryComputation(b.Take(dot));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'dot': dot: lhs_contracting_dims 3 out of range for rank 2")) << r.Messages();
}

TEST(VerifierTest, ChecksOperandCountAgainstArity) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Instruction* neg = b.Op(Opcode::kNegate, F32({2}), {p, p}, "neg");
  module->AddEntryComputation(b.Take(neg));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'neg': negate takes 1 operand but has 2")) << r.Messages();
}

TEST(VerifierTest, RequiresARoot) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  b.Param(0, F32({2}));
  module->AddEntryComputation(b.Take(nullptr));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("computation 'main' has no root instruction")) << r.Messages();
}

TEST(VerifierTest, RequiresAnEntryComputation) {
  Module module("m");
  CompBuilder b("c");
  module.AddComputation(b.Take(b.Param(0, F32({1}))));
  Result r = Verify(module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("module has no entry computation")) << r.Messages();
}

TEST(VerifierTest, ParameterNumbersMustBeDenseAndUnique) {
  {
    auto module = std::make_unique<Module>("m");
    CompBuilder b("main");
    Instruction* p0 = b.Param(0, F32({2}));
    b.Param(2, F32({2}));
    module->AddEntryComputation(b.Take(p0));
    Result r = Verify(*module);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.Has("computation 'main' has 2 parameters but none numbered 1")) << r.Messages();
  }
  {
    auto module = std::make_unique<Module>("m");
    CompBuilder b("main");
    Instruction* p0 = b.Param(0, F32({2}), "a");
    b.Param(0, F32({2}), "b");
    module->AddEntryComputation(b.Take(p0));
    Result r = Verify(*module);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.Has("parameter number 0 of computation 'main' is used by both 'a' and 'b'")) << r.Messages();
  }
}

TEST(VerifierTest, InstructionNamesMustBeUnique) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}), "x");
  Instruction* n = b.Op(Opcode::kNegate, F32({2}), {p}, "x");
  module->AddEntryComputation(b.Take(n));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'x': name is used by more than one instruction")) << r.Messages();
}

TEST(VerifierTest, OperandsMustBelongToTheSameComputation) {
  auto module = std::make_unique<Module>("m");
  CompBuilder other("other");
  Instruction* foreign = other.Param(0, F32({2}), "foreign");
  module->AddComputation(other.Take(foreign));
  CompBuilder b("main");
  b.Param(0, F32({2}));
  Instruction* n = b.Op(Opcode::kNegate, F32({2}), {foreign}, "n");
  module->AddEntryComputation(b.Take(n));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'n': operand 0 ('foreign') belongs to computation 'other', not 'main'"))
      << r.Messages();
}

TEST(VerifierTest, DetectsCyclesThroughOperandsAndControlEdges) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Instruction* a = b.Op(Opcode::kNegate, F32({2}), {p}, "a");
  Instruction* c = b.Op(Opcode::kNegate, F32({2}), {a}, "c");
  // c uses a, and a must run after c: a cycle only visible through the control edge.
  c->AddControlDependencyTo(a);
  module->AddEntryComputation(b.Take(c));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("is part of a cycle in computation 'main'")) << r.Messages();

  auto module2 = std::make_unique<Module>("m2");
  CompBuilder b2("main");
  Instruction* q = b2.Param(0, F32({2}));
  Instruction* x = b2.Op(Opcode::kAdd, F32({2}), {q, q}, "x");
  Instruction* y = b2.Op(Opcode::kNegate, F32({2}), {x}, "y");
  x->ReplaceOperandWith(1, y);
  module2->AddEntryComputation(b2.Take(y));
  EXPECT_TRUE(Verify(*module2).Has("is part of a cycle")) << Verify(*module2).Messages();
}

TEST(VerifierTest, CalledComputationsMustExistAndMatchTheirCallers) {
  // A callee that is not part of the module.
  Computation outsider("outsider");
  {
    auto module = std::make_unique<Module>("m");
    CompBuilder b("main");
    Instruction* p = b.Param(0, F32({2}));
    Instruction* call = b.Op(Opcode::kCall, F32({2}), {p}, "call");
    call->set_called_computations({&outsider});
    module->AddEntryComputation(b.Take(call));
    Result r = Verify(*module);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.Has("instruction 'call': calls computation 'outsider', which is not in the module")) << r.Messages();
  }
  // A while whose body takes two parameters.
  {
    auto module = std::make_unique<Module>("m");
    Computation* adder = AddScalarAdder(*module, "body");
    CompBuilder cb("cond");
    cb.Param(0, Scalar(PrimitiveType::kF32));
    Computation* cond = module->AddComputation(
        cb.Take(cb.Add(Instruction::CreateConstant("t", Literal(Scalar(PrimitiveType::kPred))))));
    CompBuilder b("main");
    Instruction* p = b.Param(0, Scalar(PrimitiveType::kF32));
    Instruction* w = b.Op(Opcode::kWhile, Scalar(PrimitiveType::kF32), {p}, "w");
    w->set_called_computations({cond, adder});
    module->AddEntryComputation(b.Take(w));
    Result r = Verify(*module);
    EXPECT_FALSE(r.ok);
    EXPECT_TRUE(r.Has("instruction 'w': while: body must take 1 parameter, takes 2")) << r.Messages();
  }
  // Only caller opcodes may carry called computations.
  {
    auto module = std::make_unique<Module>("m");
    Computation* adder = AddScalarAdder(*module);
    CompBuilder b("main");
    Instruction* p = b.Param(0, F32({2}));
    Instruction* n = b.Op(Opcode::kNegate, F32({2}), {p}, "n");
    n->set_called_computations({adder});
    module->AddEntryComputation(b.Take(n));
    EXPECT_TRUE(Verify(*module).Has("instruction 'n': negate cannot call computations"));
  }
}

TEST(VerifierTest, RejectsRecursion) {
  auto module = std::make_unique<Module>("m");
  CompBuilder a("a");
  Instruction* pa = a.Param(0, F32({2}));
  Instruction* call_b = a.Op(Opcode::kCall, F32({2}), {pa}, "call_b");
  Computation* comp_a = module->AddComputation(a.Take(call_b));
  CompBuilder b("b");
  Instruction* pb = b.Param(0, F32({2}));
  Instruction* call_a = b.Op(Opcode::kCall, F32({2}), {pb}, "call_a");
  call_a->set_called_computations({comp_a});
  Computation* comp_b = module->AddComputation(b.Take(call_a));
  call_b->set_called_computations({comp_b});
  CompBuilder main("main");
  Instruction* p = main.Param(0, F32({2}));
  Instruction* call = main.Op(Opcode::kCall, F32({2}), {p}, "call");
  call->set_called_computations({comp_a});
  module->AddEntryComputation(main.Take(call));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'call_a': calls computation 'a', which is already on the call stack (recursion)"))
      << r.Messages();
}

TEST(VerifierTest, ReduceChecksItsReducerSignature) {
  auto module = std::make_unique<Module>("m");
  Computation* adder = AddScalarAdder(*module);
  CompBuilder b("main");
  Instruction* p = b.Param(0, Shape::Array(PrimitiveType::kS32, {4}));
  Instruction* init = b.Param(1, Scalar(PrimitiveType::kS32));
  Instruction* reduce = b.Op(Opcode::kReduce, Scalar(PrimitiveType::kS32), {p, init}, "reduce");
  reduce->SetAttr("dimensions", AttrValue::IntList({0}));
  reduce->set_called_computations({adder});
  module->AddEntryComputation(b.Take(reduce));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(
      r.Has("instruction 'reduce': reduce: reduction computation accumulator 0 has shape f32[] but the init "
            "value has shape s32[]"))
      << r.Messages();
}

TEST(VerifierTest, TupleIndexMustBeInRange) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, Shape::Tuple({F32({2})}));
  Instruction* gte = b.Op(Opcode::kGetTupleElement, F32({2}), {p}, "gte");
  gte->SetAttr("index", AttrValue::Int(1));
  module->AddEntryComputation(b.Take(gte));
  EXPECT_TRUE(Verify(*module).Has("instruction 'gte': get-tuple-element: index 1 out of range for tuple (f32[2])"));
}

TEST(VerifierTest, OpsWithoutInferenceAreNotCompared) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Instruction* scan = b.Op(Opcode::kScan, Shape::Array(PrimitiveType::kS8, {7}), {p}, "scan");
  module->AddEntryComputation(b.Take(scan));
  Result r = Verify(*module);
  EXPECT_TRUE(r.ok) << r.Messages();
}

TEST(VerifierTest, MalformedShapesAreReported) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Shape bad = F32({2, 3});
  bad.layout = Layout{};
  bad.layout->minor_to_major = {0, 0};
  Instruction* p = b.Param(0, bad, "p");
  module->AddEntryComputation(b.Take(p));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'p': malformed shape")) << r.Messages();
  EXPECT_TRUE(r.Has("is not a permutation of the 2 dimensions")) << r.Messages();
}

TEST(VerifierTest, EntryComputationLayoutMustMatch) {
  auto module = AddModule(F32({2}));
  ComputationLayout layout;
  layout.parameters = {F32({2}), F32({2})};
  layout.result = F32({2});
  module->mutable_config().entry_computation_layout = layout;
  EXPECT_TRUE(Verify(*module).ok);

  layout.parameters = {F32({2})};
  module->mutable_config().entry_computation_layout = layout;
  EXPECT_TRUE(Verify(*module).Has("entry_computation_layout has 1 parameters but entry computation 'main' has 2"));

  layout.parameters = {F32({2}), F32({5})};
  module->mutable_config().entry_computation_layout = layout;
  EXPECT_TRUE(
      Verify(*module).Has("entry parameter 1 'main.p1' has shape f32[2] but entry_computation_layout "
                          "declares f32[5]"));

  // Layouts only matter when asked for.
  layout.parameters = {F32({2}), F32({2})};
  layout.result = F32({2});
  layout.result.layout = Layout::Default(1);
  module->mutable_config().entry_computation_layout = layout;
  module->entry_computation()->root()->mutable_shape()->layout = Layout::Default(1);
  EXPECT_TRUE(Verify(*module, {.check_layouts = true}).ok);
}

TEST(VerifierTest, LayoutsOfForwardingOpsAreCheckedOnRequest) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Shape col_major = F32({2, 3});
  col_major.layout = Layout{};
  col_major.layout->minor_to_major = {0, 1};
  Instruction* p = b.Param(0, col_major);
  Shape row_major_tuple = Shape::Tuple({F32({2, 3})});
  row_major_tuple.tuple_shapes[0].layout = Layout::Default(2);
  Instruction* t = b.Op(Opcode::kTuple, row_major_tuple, {p}, "t");
  module->AddEntryComputation(b.Take(t));
  EXPECT_TRUE(Verify(*module).ok);
  Result r = Verify(*module, {.check_layouts = true});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 't' has layout (f32[2,3]{1,0}) but forwards (f32[2,3]{0,1})")) << r.Messages();
}

TEST(VerifierTest, InputOutputAliasMustNameValidBuffers) {
  auto module = AddModule(F32({2}));
  ModuleConfig& config = module->mutable_config();
  config.input_output_alias = {InputOutputAlias{{}, 0, {}, false}};
  EXPECT_TRUE(Verify(*module).ok) << Verify(*module).Messages();

  config.input_output_alias = {InputOutputAlias{{}, 5, {}, false}};
  EXPECT_TRUE(Verify(*module).Has("input_output_alias names parameter 5, but the entry computation has 2"));

  config.input_output_alias = {InputOutputAlias{{0}, 0, {}, false}};
  EXPECT_TRUE(Verify(*module).Has("input_output_alias output index {0} is not valid for the entry result f32[2]"));

  config.input_output_alias = {InputOutputAlias{{}, 0, {1}, true}};
  EXPECT_TRUE(Verify(*module).Has("input_output_alias index {1} is not valid for parameter 0 of shape f32[2]"));

  config.input_output_alias = {InputOutputAlias{{}, 0, {}, false}, InputOutputAlias{{}, 1, {}, false}};
  EXPECT_TRUE(Verify(*module).Has("input_output_alias aliases output {} more than once"));

  config.input_output_alias = {InputOutputAlias{{}, 0, {}, false}};
  config.buffer_donor = {BufferDonor{0, {}}};
  EXPECT_TRUE(Verify(*module).Has("parameter 0 at {} is both a buffer donor and in input_output_alias"));
  config.buffer_donor = {BufferDonor{1, {}}};
  EXPECT_TRUE(Verify(*module).ok);
  config.buffer_donor = {BufferDonor{2, {}}};
  EXPECT_TRUE(Verify(*module).Has("buffer_donor names parameter 2"));
}

TEST(VerifierTest, AsyncPairsAreMatched) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Shape start_shape = Shape::Tuple({F32({2}), F32({2}), Scalar(PrimitiveType::kU32)});
  Instruction* start = b.Op(Opcode::kCopyStart, start_shape, {p}, "cs");
  Instruction* d1 = b.Op(Opcode::kCopyDone, F32({2}), {start}, "cd1");
  Instruction* d2 = b.Op(Opcode::kCopyDone, F32({2}), {start}, "cd2");
  Instruction* t = b.Op(Opcode::kTuple, Shape::Tuple({F32({2}), F32({2})}), {d1, d2}, "t");
  module->AddEntryComputation(b.Take(t));
  Result r = Verify(*module);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.Has("instruction 'cs': copy-start must have exactly one user, has 2")) << r.Messages();
}

TEST(VerifierTest, ReplicaGroupsMustPartitionTheIds) {
  auto module = std::make_unique<Module>("m");
  Computation* adder = AddScalarAdder(*module);
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Instruction* ar = b.Op(Opcode::kAllReduce, F32({2}), {p}, "ar");
  ReplicaGroups groups;
  groups.groups = {{0, 1}, {1, 2}};
  ar->SetAttr("replica_groups", AttrValue::Of(groups));
  ar->set_called_computations({adder});
  module->AddEntryComputation(b.Take(ar));
  EXPECT_TRUE(Verify(*module).Has("instruction 'ar': replica 1 appears more than once in replica_groups"));
  groups.groups = {{0, 2}};
  ar->SetAttr("replica_groups", AttrValue::Of(groups));
  EXPECT_TRUE(Verify(*module).Has("replica_groups do not name replica 1"));
  groups.groups = {{0, 2}, {1, 3}};
  ar->SetAttr("replica_groups", AttrValue::Of(groups));
  EXPECT_TRUE(Verify(*module).ok);
}

TEST(VerifierTest, CalleesRunOnTheCallersThread) {
  auto module = std::make_unique<Module>("m");
  Computation* adder = AddScalarAdder(*module);
  adder->set_execution_thread("parallel");
  CompBuilder b("main");
  Instruction* x = b.Param(0, Scalar(PrimitiveType::kF32));
  Instruction* call = b.Op(Opcode::kCall, Scalar(PrimitiveType::kF32), {x, x}, "call");
  call->set_called_computations({adder});
  module->AddEntryComputation(b.Take(call));
  EXPECT_TRUE(Verify(*module).Has(
      "instruction 'call': calls computation 'adder' on execution thread \"parallel\" but it runs on \"main\""));
  adder->set_execution_thread("main");
  EXPECT_TRUE(Verify(*module).ok);
}

TEST(VerifierTest, WhileShardingsMustAgree) {
  auto module = std::make_unique<Module>("m");
  CompBuilder body("body");
  Instruction* bp = body.Param(0, Scalar(PrimitiveType::kS32));
  bp->set_sharding(Sharding::Replicated());
  Computation* body_comp = module->AddComputation(body.Take(bp));
  CompBuilder cond("cond");
  Instruction* cp = cond.Param(0, Scalar(PrimitiveType::kS32));
  cp->set_sharding(Sharding::Maximal(0));
  Computation* cond_comp = module->AddComputation(
      cond.Take(cond.Add(Instruction::CreateConstant("t", Literal(Scalar(PrimitiveType::kPred))))));
  CompBuilder b("main");
  Instruction* init = b.Param(0, Scalar(PrimitiveType::kS32));
  Instruction* w = b.Op(Opcode::kWhile, Scalar(PrimitiveType::kS32), {init}, "w");
  w->set_called_computations({cond_comp, body_comp});
  module->AddEntryComputation(b.Take(w));
  EXPECT_TRUE(Verify(*module).Has("instruction 'w': inconsistent while sharding")) << Verify(*module).Messages();
  cp->set_sharding(Sharding::Replicated());
  EXPECT_TRUE(Verify(*module).ok) << Verify(*module).Messages();
}

TEST(VerifierTest, CollectivePermutePairs) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({4}));
  Instruction* cp = b.Op(Opcode::kCollectivePermute, F32({4}), {p}, "cp");
  cp->SetAttr("source_target_pairs", AttrValue::IntListList({{0, 1}, {1, 0}}));
  module->AddEntryComputation(b.Take(cp));
  EXPECT_TRUE(Verify(*module).ok);
  cp->SetAttr("source_target_pairs", AttrValue::IntListList({{0, 1}, {2, 1}}));
  EXPECT_TRUE(Verify(*module).Has("instruction 'cp': target 1 appears more than once in source_target_pairs"));
  module->mutable_config().replica_count = 2;
  cp->SetAttr("source_target_pairs", AttrValue::IntListList({{0, 1}, {1, 2}}));
  EXPECT_TRUE(Verify(*module).Has("target 2 in source_target_pairs is out of range [0, 2)"));
}

TEST(VerifierTest, AllReducesAgreeOnLayoutConstraints) {
  auto module = std::make_unique<Module>("m");
  Computation* adder = AddScalarAdder(*module);
  CompBuilder b("main");
  Instruction* p = b.Param(0, F32({2}));
  Instruction* a1 = b.Op(Opcode::kAllReduce, F32({2}), {p}, "a1");
  Instruction* a2 = b.Op(Opcode::kAllReduce, F32({2}), {a1}, "a2");
  a1->set_called_computations({adder});
  a2->set_called_computations({adder});
  a2->SetAttr("constrain_layout", AttrValue::Bool(true));
  module->AddEntryComputation(b.Take(a2));
  EXPECT_TRUE(Verify(*module).Has("instruction 'a2': constrain_layout differs from all-reduce 'a1'"));
}

TEST(VerifierTest, ElementwiseOpsKeepLayoutsWhenLayoutsAreChecked) {
  auto module = std::make_unique<Module>("m");
  CompBuilder b("main");
  Shape col_major = F32({2, 3});
  col_major.layout = Layout{};
  col_major.layout->minor_to_major = {0, 1};
  Shape row_major = F32({2, 3});
  row_major.layout = Layout::Default(2);
  Instruction* p = b.Param(0, col_major, "p");
  Instruction* neg = b.Op(Opcode::kNegate, row_major, {p}, "neg");
  Instruction* t = b.Op(Opcode::kTranspose, Shape::Array(PrimitiveType::kF32, {3, 2}), {neg}, "t");
  t->SetAttr("dimensions", AttrValue::IntList({1, 0}));
  module->AddEntryComputation(b.Take(t));
  EXPECT_TRUE(Verify(*module).ok);
  Result r = Verify(*module, {.check_layouts = true});
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(
      r.Has("instruction 'neg': negate cannot change layouts, but its result f32[2,3]{1,0} differs from "
            "operand 'p' f32[2,3]{0,1}"))
      << r.Messages();
}

// ---------------------------------------------------------------- corpus sweep

std::filesystem::path CorpusDir() {
  if (const char* src = std::getenv("XLAC_SOURCE_DIR")) return std::filesystem::path(src) / ".." / "shared" / "corpus";
  return std::filesystem::path("..") / "shared" / "corpus";
}

std::vector<std::string> SplitTabs(const std::string& line) {
  std::vector<std::string> cols;
  std::stringstream ss(line);
  std::string col;
  while (std::getline(ss, col, '\t')) cols.push_back(col);
  return cols;
}

// Modules the manifest marks `ok` that XLA's verifier would reject too (their tests load them unverified). Every
// other failure is a bug in the parser, shape inference or the verifier.
const std::map<std::string, std::string>& KnownUnverifiedModules() {
  static const auto* known = new std::map<std::string, std::string>{
      {"hlo/pass_tests/hlo__utils__hlo_query_test/"
       "HloQueryTest.GetInstructionWithOpCodeReturnsMatchingInstructionForComputation.hlo",
       "call passes 3 operands to a 4-parameter computation"},
      {"hlo/pass_tests/service__buffer_assignment_test/BufferAssignmentTest.AsyncCallImplicitSharding.hlo",
       "dynamic-update-slice with f32 start indices"},
      {"hlo/xla_files/xla/hlo/builder/tests/math_next_after__001.hlo",
       "lit CHECK file: entry_computation_layout says f32 but parameters are f8e5m2fnuz"},
      {"hlo/xla_files/xla/hlo/transforms/tests/rewrite_bf16_conv_to_onednn__001.hlo",
       "lit CHECK file: the convolution result shape does not follow from its operands"},
      {"hlo/xla_files/xla/hlo/translate/hlo_to_mhlo/tests/import.hlo",
       "importer test of invalid HLO (tuple-returning map/sort/select computations, kernel/window mismatch)"},
  };
  return *known;
}

TEST(VerifierCorpusTest, VerifiesEveryModuleXlaAccepted) {
  const std::filesystem::path dir = CorpusDir();
  std::ifstream manifest(dir / "hlo" / "manifest.tsv");
  if (!manifest) GTEST_SKIP() << "corpus not found at " << dir;
  std::string line;
  std::getline(manifest, line);
  int total = 0, parse_failures = 0, verified = 0, known_failures = 0;
  std::vector<std::string> failures;
  std::vector<std::string> stale;  // known-unverified modules that now verify: drop them from the list
  while (std::getline(manifest, line)) {
    std::vector<std::string> cols = SplitTabs(line);
    if (cols.size() < 11) continue;
    const std::string& file = cols[0];
    const std::string& format = cols[2];
    if ((format != "hlo_module" && format != "hlo_no_header") || cols[3] != "ok" ||
        cols[10].find("templated") != std::string::npos) {
      continue;
    }
    ++total;
    std::ifstream in(dir / file);
    std::stringstream buffer;
    buffer << in.rdbuf();
    const std::string text = buffer.str();
    SourceFile source(file, text);
    DiagnosticEngine parse_diags;
    std::unique_ptr<Module> module = ParseHloModule(source, parse_diags);
    if (module == nullptr) {
      ++parse_failures;  // the parser's own corpus test reports these
      continue;
    }
    DiagnosticEngine diags;
    if (VerifyModule(*module, diags)) {
      ++verified;
      if (KnownUnverifiedModules().count(file)) stale.push_back(file);
      continue;
    }
    if (KnownUnverifiedModules().count(file)) {
      ++known_failures;
      continue;
    }
    std::string first = diags.diagnostics().empty() ? "" : RenderDiagnostic(diags.diagnostics()[0], source);
    failures.push_back(file + (cols[4].empty() ? "" : " [" + cols[4] + "]") + "\n  " + first);
  }
  std::cout << "corpus: " << total << " modules, " << parse_failures << " not parsed, " << verified << " verified, "
            << known_failures << " known unverified, " << failures.size() << " failed verification\n";
  for (const std::string& file : stale) ADD_FAILURE() << "listed as known unverified but verifies: " << file;
  std::string report;
  for (size_t i = 0; i < failures.size() && i < 40; ++i) report += failures[i] + "\n";
  EXPECT_TRUE(failures.empty()) << report;
}

}  // namespace
}  // namespace xlac
