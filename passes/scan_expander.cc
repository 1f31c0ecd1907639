#include "passes/scan_expander.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"

namespace xlac {
namespace {

// Absent layouts read as the default one, as codegen reads them.
bool SameLayout(const Shape& a, const Shape& b) {
  Shape x = a;
  Shape y = b;
  x.EnsureLayout();
  y.EnsureLayout();
  return x == y;
}

// `shape` without dimension `dim` (one element of the scan) or with it set to 1 (that element in place); no layout.
Shape WithoutDim(const Shape& shape, int64_t dim) {
  std::vector<int64_t> dims = shape.dimensions;
  dims.erase(dims.begin() + dim);
  return Shape::Array(shape.element_type, std::move(dims));
}
Shape WithUnitDim(const Shape& shape, int64_t dim) {
  std::vector<int64_t> dims = shape.dimensions;
  dims[static_cast<size_t>(dim)] = 1;
  return Shape::Array(shape.element_type, std::move(dims));
}

// Appends new instructions to one computation with module-unique names.
class Builder {
 public:
  Builder(Module& module, Computation& comp) : module_(module), comp_(comp) {}

  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    return comp_.AddInstruction(
        Instruction::Create(op, module_.UniqueInstructionName(OpcodeName(op)), std::move(shape), std::move(operands)));
  }
  Instruction* Parameter(const Shape& shape) {
    return comp_.AddInstruction(Instruction::CreateParameter(0, module_.UniqueInstructionName("param"), shape));
  }
  Instruction* S64(int64_t value) {
    Literal literal(Shape::Scalar(PrimitiveType::kS64));
    literal.Set<int64_t>(0, value);
    return comp_.AddInstruction(Instruction::CreateConstant(module_.UniqueInstructionName("constant"), literal));
  }
  Instruction* Gte(Instruction* tuple, int64_t index) {
    Instruction* gte = Add(Opcode::kGetTupleElement, tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
    gte->SetAttr("index", AttrValue::Int(index));
    return gte;
  }
  // The elements of a tuple-shaped value, or the value itself.
  std::vector<Instruction*> Elements(Instruction* value) {
    if (!value->shape().IsTuple()) return {value};
    std::vector<Instruction*> elements;
    for (size_t i = 0; i < value->shape().tuple_shapes.size(); ++i) {
      elements.push_back(Gte(value, static_cast<int64_t>(i)));
    }
    return elements;
  }
  // `value` in `shape`'s layout: buffers are read in their own shape's layout, so a state element must have one.
  Instruction* InLayoutOf(Instruction* value, const Shape& shape) {
    return SameLayout(value->shape(), shape) ? value : Add(Opcode::kCopy, shape, {value});
  }
  Instruction* Zeros(const Shape& shape) {
    Instruction* zero = comp_.AddInstruction(Instruction::CreateConstant(module_.UniqueInstructionName("constant"),
                                                                         Literal(Shape::Scalar(shape.element_type))));
    Instruction* broadcast = Add(Opcode::kBroadcast, shape, {zero});
    broadcast->SetAttr("dimensions", AttrValue::IntList({}));
    return broadcast;
  }
  // Start indices of element `t` along `dim` of a rank-`rank` array.
  std::vector<Instruction*> Indices(int64_t rank, int64_t dim, Instruction* t, Instruction* zero) {
    std::vector<Instruction*> indices(static_cast<size_t>(rank), zero);
    indices[static_cast<size_t>(dim)] = t;
    return indices;
  }

 private:
  Module& module_;
  Computation& comp_;
};

struct ScanInfo {
  int64_t dim = 0;
  bool reverse = false;
  size_t num_inputs = 0;
  size_t num_outputs = 0;
  size_t num_carries = 0;
  int64_t len = 0;
  std::vector<Shape> results;  // outputs then carries
};

absl::StatusOr<ScanInfo> Analyze(const Instruction& scan) {
  auto malformed = [&](const std::string& why) {
    return absl::InvalidArgumentError(absl::StrCat("scan-expander: malformed scan ", scan.name(), ": ", why));
  };
  ScanInfo info;
  const std::vector<int64_t>& dims = scan.dimensions();
  int64_t carries = scan.IntAttr("num_carries", 0);
  if (dims.size() != 1) return malformed("expects one dimension");
  if (scan.called_computations().size() != 1) return malformed("expects one body");
  if (carries < 0 || carries > scan.operand_count()) return malformed("bad num_carries");
  info.dim = dims[0];
  info.reverse = scan.BoolAttr("is_reverse", false);
  info.num_carries = static_cast<size_t>(carries);
  info.num_inputs = static_cast<size_t>(scan.operand_count()) - info.num_carries;
  info.results = scan.shape().IsTuple() ? scan.shape().tuple_shapes : std::vector<Shape>{scan.shape()};
  if (info.results.size() < info.num_carries) return malformed("fewer results than carries");
  info.num_outputs = info.results.size() - info.num_carries;
  if (!scan.shape().IsStatic()) {
    return absl::UnimplementedError(absl::StrCat("scan-expander: dynamic shape of scan ", scan.name()));
  }
  for (const Instruction* operand : scan.operands()) {
    if (!operand->shape().IsStatic()) {
      return absl::UnimplementedError(absl::StrCat("scan-expander: dynamic operand shape of scan ", scan.name()));
    }
  }
  auto has_dim = [&](const Shape& shape) { return shape.IsArray() && info.dim >= 0 && info.dim < shape.rank(); };
  for (size_t i = 0; i < info.num_inputs; ++i) {
    if (!has_dim(scan.operand(i)->shape())) return malformed("an input lacks the scan dimension");
  }
  for (size_t i = 0; i < info.num_outputs; ++i) {
    if (!has_dim(info.results[i])) return malformed("an output lacks the scan dimension");
  }
  if (info.num_inputs > 0) {
    info.len = scan.operand(0)->shape().dimensions[static_cast<size_t>(info.dim)];
  } else if (info.num_outputs > 0) {
    info.len = info.results[0].dimensions[static_cast<size_t>(info.dim)];
  }
  auto has_len = [&](const Shape& shape) { return shape.dimensions[static_cast<size_t>(info.dim)] == info.len; };
  for (size_t i = 0; i < info.num_inputs; ++i) {
    if (!has_len(scan.operand(i)->shape())) return malformed("inputs differ in length");
  }
  for (size_t i = 0; i < info.num_outputs; ++i) {
    if (!has_len(info.results[i])) return malformed("an output's length differs from the inputs'");
  }
  const Instruction* root = scan.called_computation(0)->root();
  if (root == nullptr) return malformed("the body has no root");
  size_t values = root->shape().IsTuple() ? root->shape().tuple_shapes.size() : 1;
  if (values != info.results.size()) {
    return malformed(absl::StrCat("the body returns ", values, " values for ", info.results.size(), " results"));
  }
  return info;
}

// The loop body: one scan step on the state (step, inputs..., outputs..., carries...).
Computation* BuildBody(Module& module, const Instruction& scan, const ScanInfo& info, const Shape& state) {
  Computation* body = module.AddComputation(
      std::make_unique<Computation>(module.UniqueComputationName(absl::StrCat(scan.name(), ".body"))));
  Builder b(module, *body);
  Instruction* param = b.Parameter(state);
  Instruction* step = b.Gte(param, 0);
  Instruction* t = step;
  if (info.reverse) {
    t = b.Add(Opcode::kSubtract, Shape::Scalar(PrimitiveType::kS64), {b.S64(info.len - 1), step});
  }
  Instruction* zero = b.S64(0);
  std::vector<Instruction*> next = {b.Add(Opcode::kAdd, Shape::Scalar(PrimitiveType::kS64), {step, b.S64(1)})};
  std::vector<Instruction*> args;
  for (size_t i = 0; i < info.num_inputs; ++i) {
    Instruction* input = b.Gte(param, static_cast<int64_t>(1 + i));
    next.push_back(input);
    const Shape& shape = input->shape();
    // The size-1 slice keeps the input's layout (dynamic-slice cannot change layouts); the reshape drops it.
    Shape slice_shape = shape;
    slice_shape.dimensions[static_cast<size_t>(info.dim)] = 1;
    std::vector<Instruction*> operands = b.Indices(shape.rank(), info.dim, t, zero);
    operands.insert(operands.begin(), input);
    Instruction* slice = b.Add(Opcode::kDynamicSlice, slice_shape, std::move(operands));
    slice->SetAttr("dynamic_slice_sizes", AttrValue::IntList(slice_shape.dimensions));
    args.push_back(b.Add(Opcode::kReshape, WithoutDim(shape, info.dim), {slice}));
  }
  const size_t carry_base = 1 + info.num_inputs + info.num_outputs;
  for (size_t i = 0; i < info.num_carries; ++i) args.push_back(b.Gte(param, static_cast<int64_t>(carry_base + i)));
  Computation* fn = scan.called_computation(0);
  Instruction* call = b.Add(Opcode::kCall, fn->root()->shape(), std::move(args));
  call->set_called_computations({fn});
  std::vector<Instruction*> parts = b.Elements(call);  // as many as results (checked by Analyze)
  for (size_t i = 0; i < info.num_outputs; ++i) {
    Instruction* output = b.Gte(param, static_cast<int64_t>(1 + info.num_inputs + i));
    Shape update_shape = WithUnitDim(output->shape(), info.dim);
    update_shape.element_type = parts[i]->shape().element_type;
    std::vector<Instruction*> operands = b.Indices(output->shape().rank(), info.dim, t, zero);
    operands.insert(operands.begin(), {output, b.Add(Opcode::kReshape, update_shape, {parts[i]})});
    next.push_back(b.Add(Opcode::kDynamicUpdateSlice, output->shape(), std::move(operands)));
  }
  for (size_t i = 0; i < info.num_carries; ++i) {
    next.push_back(b.InLayoutOf(parts[info.num_outputs + i], info.results[info.num_outputs + i]));
  }
  body->set_root(b.Add(Opcode::kTuple, state, std::move(next)));
  return body;
}

Computation* BuildCondition(Module& module, const Instruction& scan, const ScanInfo& info, const Shape& state) {
  Computation* cond = module.AddComputation(
      std::make_unique<Computation>(module.UniqueComputationName(absl::StrCat(scan.name(), ".condition"))));
  Builder b(module, *cond);
  Instruction* step = b.Gte(b.Parameter(state), 0);
  Instruction* less = b.Add(Opcode::kCompare, Shape::Scalar(PrimitiveType::kPred), {step, b.S64(info.len)});
  less->SetAttr("direction", AttrValue::Enum("LT"));
  cond->set_root(less);
  return cond;
}

absl::Status Expand(Module& module, Computation& comp, Instruction* scan) {
  XLAC_ASSIGN_OR_RETURN(ScanInfo info, Analyze(*scan));
  Builder b(module, comp);
  // Carries live in the layouts of the scan's carry results, so the final state is the result as is.
  std::vector<Instruction*> carries;
  for (size_t i = 0; i < info.num_carries; ++i) {
    carries.push_back(b.InLayoutOf(scan->operand(info.num_inputs + i), info.results[info.num_outputs + i]));
  }
  std::vector<Instruction*> results;
  Instruction* loop = nullptr;
  if (info.len == 0) {
    // No step runs; a loop would also need size-1 slices of empty inputs, which do not exist.
    for (size_t i = 0; i < info.num_outputs; ++i) results.push_back(b.Zeros(info.results[i]));
    results.insert(results.end(), carries.begin(), carries.end());
  } else {
    std::vector<Shape> state_shapes = {Shape::Scalar(PrimitiveType::kS64)};
    std::vector<Instruction*> init = {b.S64(0)};
    for (size_t i = 0; i < info.num_inputs; ++i) {
      state_shapes.push_back(scan->operand(i)->shape());
      init.push_back(scan->operand(i));
    }
    for (size_t i = 0; i < info.num_outputs; ++i) {
      state_shapes.push_back(info.results[i]);
      init.push_back(b.Zeros(info.results[i]));
    }
    for (size_t i = 0; i < info.num_carries; ++i) state_shapes.push_back(info.results[info.num_outputs + i]);
    init.insert(init.end(), carries.begin(), carries.end());
    Shape state = Shape::Tuple(std::move(state_shapes));
    Computation* body = BuildBody(module, *scan, info, state);
    Computation* cond = BuildCondition(module, *scan, info, state);
    loop = b.Add(Opcode::kWhile, state, {b.Add(Opcode::kTuple, state, std::move(init))});
    loop->set_called_computations({cond, body});
    *loop->mutable_metadata() = scan->metadata();
    loop->set_loc(scan->loc());
    for (size_t i = 0; i < info.results.size(); ++i) {
      results.push_back(b.Gte(loop, static_cast<int64_t>(1 + info.num_inputs + i)));
    }
  }
  Instruction* replacement =
      scan->shape().IsTuple() ? b.Add(Opcode::kTuple, scan->shape(), std::move(results)) : results[0];

  // Ordering constraints carry over to the loop, or straight from the predecessors to the successors.
  std::vector<Instruction*> preds = scan->control_predecessors();
  std::vector<Instruction*> succs = scan->control_successors();
  for (Instruction* pred : preds) {
    if (loop != nullptr) {
      pred->AddControlDependencyTo(loop);
    } else {
      for (Instruction* succ : succs) pred->AddControlDependencyTo(succ);
    }
  }
  if (loop != nullptr) {
    for (Instruction* succ : succs) loop->AddControlDependencyTo(succ);
  }
  scan->ReplaceAllUsesWith(replacement);
  if (comp.root() == scan) comp.set_root(replacement);
  scan->DetachFromOperandsAndEdges();
  return comp.RemoveInstruction(scan);
}

}  // namespace

absl::StatusOr<bool> RunScanExpander(Module& module) {
  bool changed = false;
  for (Computation* comp : module.MakeComputationPostOrder()) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kScan) continue;
      XLAC_RETURN_IF_ERROR(Expand(module, *comp, inst));
      changed = true;
    }
  }
  return changed;
}

}  // namespace xlac
