#include "codegen/parallel_programs.h"

#include <functional>
#include <map>
#include <mutex>
#include <set>

#include "fmt/format.h"
#include "ir/decomposition_calls.h"
#include "ir/run_parallel.h"
#include "ir/status_macros.h"
#include "ir/winograd.h"

namespace xlac::codegen {
namespace {

constexpr std::string_view kRunParallel = "interpreter.run_parallel";
constexpr std::string_view kProbe = "interpreter.probe";

absl::Status SiteError(const Instruction& inst, std::string message) {
  return absl::InvalidArgumentError(fmt::format("{}: {}", inst.name(), message));
}

absl::StatusOr<std::vector<std::vector<int64_t>>> GridOf(const Instruction& run_parallel) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> grid = RunParallelPrograms(run_parallel);
  if (!grid.ok()) return SiteError(run_parallel, std::string(grid.status().message()));
  return grid;
}

// Result elements of a program as the interpreter counts them: a tuple root's elements, else the root.
std::vector<Shape> ResultElements(const Computation& program) {
  const Shape& root = program.root()->shape();
  if (root.IsTuple()) return root.tuple_shapes;
  return {root};
}

// Appends instructions to one computation of the module under construction.
class Builder {
 public:
  Builder(Module& module, Computation* comp) : module_(module), comp_(comp) {}
  Instruction* Add(Opcode op, std::string_view prefix, Shape shape, std::vector<Instruction*> operands) {
    return comp_->AddInstruction(
        Instruction::Create(op, module_.UniqueInstructionName(prefix), std::move(shape), std::move(operands)));
  }
  Instruction* Parameter(int64_t number, Shape shape) {
    return comp_->AddInstruction(
        Instruction::CreateParameter(number, module_.UniqueInstructionName("arg"), std::move(shape)));
  }
  Instruction* Zeros(const Shape& shape) {
    Shape logical = shape;
    logical.ClearLayout();
    return comp_->AddInstruction(Instruction::CreateConstant(module_.UniqueInstructionName("zeros"), Literal(logical)));
  }
  Instruction* Element(Instruction* tuple, int64_t index) {
    Instruction* gte =
        Add(Opcode::kGetTupleElement, "element", tuple->shape().tuple_shapes[static_cast<size_t>(index)], {tuple});
    gte->SetAttr("index", AttrValue::Int(index));
    return gte;
  }
  Instruction* Tuple(std::vector<Instruction*> parts) {
    std::vector<Shape> shapes;
    for (const Instruction* p : parts) shapes.push_back(p->shape());
    return Add(Opcode::kTuple, "tuple", Shape::Tuple(std::move(shapes)), std::move(parts));
  }
  Instruction* Token() {
    if (token_ == nullptr) token_ = Add(Opcode::kAfterAll, "token", Shape::Token(), {});
    return token_;
  }
  // Calls `program` on `args`, where null entries are the program's token parameters.
  Instruction* Call(Computation* program, std::vector<Instruction*> args) {
    for (Instruction*& a : args) {
      if (a == nullptr) a = Token();
    }
    Instruction* call = Add(Opcode::kCall, "call", program->root()->shape(), std::move(args));
    call->set_called_computations({program});
    return call;
  }
  // Result element `e` of a call (see ResultElements).
  Instruction* ResultElement(Instruction* call, int64_t e) { return call->shape().IsTuple() ? Element(call, e) : call; }
  Computation* comp() const { return comp_; }

 private:
  Module& module_;
  Computation* comp_;
  Instruction* token_ = nullptr;
};

// Removes every computation the entry does not reach (the original entry with its checks, other sites' programs).
absl::Status RemoveUnreachable(Module& module) {
  std::set<const Computation*> reached;
  std::function<void(const Computation*)> visit = [&](const Computation* comp) {
    if (!reached.insert(comp).second) return;
    for (const auto& inst : comp->instructions()) {
      for (const Computation* callee : inst->called_computations()) visit(callee);
    }
  };
  visit(module.entry_computation());
  // A computation can only go once its unreachable callers are gone.
  for (bool progress = true; progress;) {
    progress = false;
    for (Computation* comp : module.MakeComputationList()) {
      if (!reached.count(comp) && module.RemoveComputation(comp).ok()) progress = true;
    }
  }
  return absl::OkStatus();
}

// One compiled run_parallel call site.
struct Site {
  GridModule grid;
  std::unique_ptr<JitExecutable> executable;
  std::mutex mu;  // JitExecutable::Run is not reentrant
};

absl::StatusOr<Literal> RunSite(Site& site, const Instruction& inst, const std::vector<const Literal*>& operands) {
  std::vector<Literal> args;
  for (const Literal* operand : operands) {
    if (!operand->shape().IsToken()) args.push_back(*operand);
  }
  absl::StatusOr<std::vector<Literal>> results;
  {
    std::lock_guard<std::mutex> lock(site.mu);
    results = site.executable->Run(args);
  }
  if (!results.ok()) {
    return absl::Status(results.status().code(),
                        fmt::format("{}: {}", kRunParallel, std::string(results.status().message())));
  }
  std::vector<Literal> flat;
  for (size_t d = 0; d < site.grid.slots.size(); ++d) {
    for (int64_t slot : site.grid.slots[d]) {
      if (slot < 0) {
        flat.emplace_back(Shape::Token());
      } else {
        flat.push_back((*results)[d].tuple_elements()[static_cast<size_t>(slot)]);
      }
    }
  }
  if (!inst.shape().IsTuple()) {
    if (flat.size() != 1) return SiteError(inst, "the programs do not return a single value");
    return std::move(flat[0]);
  }
  return Literal::CreateTuple(std::move(flat));
}

}  // namespace

bool IsBuiltinCustomCallTarget(std::string_view target) {
  return target == kRunParallel || target == kProbe || IsWinogradTarget(target) ||
         DecompositionKindOf(target).has_value();
}

absl::StatusOr<GridModule> BuildGridModule(const Module& module, const Instruction& run_parallel) {
  XLAC_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> grid, GridOf(run_parallel));
  GridModule result;
  result.num_replicas = static_cast<int64_t>(grid.size());
  result.num_partitions = static_cast<int64_t>(grid[0].size());
  int64_t devices = result.num_replicas * result.num_partitions;
  result.module = module.Clone();
  Module& m = *result.module;
  const Computation* parent = run_parallel.parent();
  Computation* site_comp = parent != nullptr ? m.FindComputation(parent->name()) : nullptr;
  Instruction* site = site_comp != nullptr ? site_comp->FindInstruction(run_parallel.name()) : nullptr;
  if (site == nullptr) return SiteError(run_parallel, "call site not found in the module");

  // Each device's program and the operand positions of its arguments.
  std::vector<Computation*> programs;
  std::vector<std::vector<int64_t>> arg_positions;
  int64_t next = 0;
  for (const auto& row : grid) {
    for (int64_t index : row) {
      Computation* program = site->called_computation(index);
      std::vector<int64_t> positions;
      for (int64_t p = 0; p < program->parameter_count(); ++p) positions.push_back(next++);
      programs.push_back(program);
      arg_positions.push_back(std::move(positions));
    }
  }
  if (next != site->operand_count()) {
    return SiteError(run_parallel,
                     fmt::format("the programs take {} arguments but {} are passed", next, site->operand_count()));
  }
  int64_t results = 0;
  for (const Computation* program : programs) results += static_cast<int64_t>(ResultElements(*program).size());
  int64_t expected = site->shape().IsTuple() ? static_cast<int64_t>(site->shape().tuple_shapes.size()) : 1;
  if (results != expected) {
    return SiteError(run_parallel, fmt::format("the programs return {} values but the call has {}", results, expected));
  }
  bool same_program = true;
  for (const Computation* program : programs) same_program = same_program && program == programs[0];

  Computation* entry = m.AddComputation(std::make_unique<Computation>(m.UniqueComputationName("run_parallel")));
  Builder b(m, entry);
  // Non-token operands become entry parameters; every device receives all of them.
  std::vector<Instruction*> operand_values(static_cast<size_t>(site->operand_count()), nullptr);
  for (int64_t i = 0, number = 0; i < site->operand_count(); ++i) {
    const Shape& shape = site->operand(i)->shape();
    if (!shape.IsToken()) operand_values[static_cast<size_t>(i)] = b.Parameter(number++, shape);
  }
  Instruction* root = nullptr;
  if (devices == 1) {
    std::vector<Instruction*> args;
    for (int64_t pos : arg_positions[0]) args.push_back(operand_values[static_cast<size_t>(pos)]);
    Instruction* call = b.Call(programs[0], std::move(args));
    std::vector<Instruction*> parts;
    result.slots.assign(1, {});
    for (int64_t e = 0; e < static_cast<int64_t>(ResultElements(*programs[0]).size()); ++e) {
      Instruction* value = b.ResultElement(call, e);
      result.slots[0].push_back(value->shape().IsToken() ? -1 : static_cast<int64_t>(parts.size()));
      if (!value->shape().IsToken()) parts.push_back(value);
    }
    root = b.Tuple(std::move(parts));
  } else {
    // device = replica_id * num_partitions + partition_id selects a conditional branch.
    Shape u32 = Shape::Scalar(PrimitiveType::kU32);
    Instruction* replica = b.Add(Opcode::kReplicaId, "replica_id", u32, {});
    Instruction* partition = b.Add(Opcode::kPartitionId, "partition_id", u32, {});
    Literal columns(u32);
    *reinterpret_cast<uint32_t*>(columns.mutable_raw_data()) = static_cast<uint32_t>(result.num_partitions);
    Instruction* width =
        entry->AddInstruction(Instruction::CreateConstant(m.UniqueInstructionName("columns"), columns));
    Instruction* scaled = b.Add(Opcode::kMultiply, "scaled", u32, {replica, width});
    Instruction* device = b.Add(Opcode::kAdd, "device", u32, {scaled, partition});
    Instruction* branch_index = b.Add(Opcode::kConvert, "branch", Shape::Scalar(PrimitiveType::kS32), {device});

    // Branch d receives a tuple of device d's non-token arguments.
    std::vector<Instruction*> branch_operands;
    for (int64_t d = 0; d < devices; ++d) {
      std::vector<Instruction*> parts;
      for (int64_t pos : arg_positions[static_cast<size_t>(d)]) {
        if (operand_values[static_cast<size_t>(pos)] != nullptr)
          parts.push_back(operand_values[static_cast<size_t>(pos)]);
      }
      branch_operands.push_back(b.Tuple(std::move(parts)));
    }
    // Unpacks a branch's argument tuple into program arguments (null for tokens).
    auto unpack = [&](Builder& bb, Instruction* tuple, const Computation& program) {
      std::vector<Instruction*> args;
      int64_t k = 0;
      for (int64_t p = 0; p < program.parameter_count(); ++p) {
        args.push_back(program.parameter(p)->shape().IsToken() ? nullptr : bb.Element(tuple, k++));
      }
      return args;
    };
    std::vector<Computation*> branches;
    if (same_program) {
      // The program is called once, after the conditional picked the arguments: its collectives are then the same
      // instructions on every device, which is how devices meet.
      Computation* program = programs[0];
      for (int64_t d = 0; d < devices; ++d) {
        Computation* branch = m.AddComputation(std::make_unique<Computation>(m.UniqueComputationName("select_args")));
        Builder bb(m, branch);
        branch->set_root(bb.Parameter(0, branch_operands[static_cast<size_t>(d)]->shape()));
        branches.push_back(branch);
      }
      std::vector<Instruction*> operands = {branch_index};
      operands.insert(operands.end(), branch_operands.begin(), branch_operands.end());
      Instruction* picked = branch_operands[0];  // nothing to pick without arguments
      if (!branch_operands[0]->shape().tuple_shapes.empty()) {
        picked = b.Add(Opcode::kConditional, "args", branch_operands[0]->shape(), std::move(operands));
        picked->set_called_computations(branches);
      }
      Instruction* call = b.Call(program, unpack(b, picked, *program));
      std::vector<Instruction*> parts;
      std::vector<int64_t> slots;
      for (int64_t e = 0; e < static_cast<int64_t>(ResultElements(*program).size()); ++e) {
        Instruction* value = b.ResultElement(call, e);
        slots.push_back(value->shape().IsToken() ? -1 : static_cast<int64_t>(parts.size()));
        if (!value->shape().IsToken()) parts.push_back(value);
      }
      result.slots.assign(static_cast<size_t>(devices), slots);
      root = b.Tuple(std::move(parts));
    } else {
      // Every branch returns the results of all devices (zeros where they are another device's), so the branches
      // agree on one result shape; device d keeps its own slots.
      std::vector<Shape> slot_shapes;
      std::vector<std::pair<int64_t, int64_t>> slot_owner;  // (device, result element)
      result.slots.resize(static_cast<size_t>(devices));
      for (int64_t d = 0; d < devices; ++d) {
        std::vector<Shape> elements = ResultElements(*programs[static_cast<size_t>(d)]);
        for (int64_t e = 0; e < static_cast<int64_t>(elements.size()); ++e) {
          const Shape& s = elements[static_cast<size_t>(e)];
          result.slots[static_cast<size_t>(d)].push_back(s.IsToken() ? -1 : static_cast<int64_t>(slot_shapes.size()));
          if (s.IsToken()) continue;
          slot_shapes.push_back(s);
          slot_owner.emplace_back(d, e);
        }
      }
      for (int64_t d = 0; d < devices; ++d) {
        Computation* program = programs[static_cast<size_t>(d)];
        Computation* branch = m.AddComputation(std::make_unique<Computation>(m.UniqueComputationName("device")));
        Builder bb(m, branch);
        Instruction* param = bb.Parameter(0, branch_operands[static_cast<size_t>(d)]->shape());
        Instruction* call = bb.Call(program, unpack(bb, param, *program));
        std::vector<Instruction*> parts;
        for (size_t s = 0; s < slot_shapes.size(); ++s) {
          parts.push_back(slot_owner[s].first == d ? bb.ResultElement(call, slot_owner[s].second)
                                                   : bb.Zeros(slot_shapes[s]));
        }
        branch->set_root(bb.Tuple(std::move(parts)));
        branches.push_back(branch);
      }
      std::vector<Instruction*> operands = {branch_index};
      operands.insert(operands.end(), branch_operands.begin(), branch_operands.end());
      root = b.Add(Opcode::kConditional, "programs", Shape::Tuple(slot_shapes), std::move(operands));
      root->set_called_computations(branches);
    }
  }
  entry->set_root(root);
  m.set_entry_computation(entry);
  XLAC_RETURN_IF_ERROR(RemoveUnreachable(m));
  ModuleConfig& config = m.mutable_config();
  config.entry_computation_layout.reset();
  config.input_output_alias.clear();
  config.buffer_donor.clear();
  config.replica_count = result.num_replicas;
  config.num_partitions = result.num_partitions;
  return result;
}

absl::StatusOr<CustomCallHandler> WithBuiltinCustomCalls(const Module& prepared, const JitOptions& options) {
  auto sites = std::make_shared<std::map<const Instruction*, std::unique_ptr<Site>>>();
  bool builtin = false;
  for (const auto& comp : prepared.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      std::string_view target = inst->StringAttr("custom_call_target");
      // The Winograd transforms are calls of runtime kernels (ir_emitter_winograd.cc), never of the handler.
      if (!IsBuiltinCustomCallTarget(target) || IsWinogradTarget(target) || DecompositionKindOf(target).has_value()) {
        continue;
      }
      builtin = true;
      if (target != kRunParallel) continue;
      auto site = std::make_unique<Site>();
      XLAC_ASSIGN_OR_RETURN(site->grid, BuildGridModule(prepared, *inst));
      JitOptions inner = options;
      inner.num_replicas = site->grid.num_replicas;
      inner.num_partitions = site->grid.num_partitions;
      inner.keep_llvm_ir = false;
      absl::StatusOr<std::unique_ptr<JitExecutable>> executable = JitExecutable::Compile(*site->grid.module, inner);
      if (!executable.ok()) {
        return absl::Status(executable.status().code(), fmt::format("{} ({}): {}", kRunParallel, inst->name(),
                                                                    std::string(executable.status().message())));
      }
      site->executable = std::move(*executable);
      (*sites)[inst.get()] = std::move(site);
    }
  }
  if (!builtin) return options.custom_call_handler;
  CustomCallHandler user = options.custom_call_handler;
  return CustomCallHandler(
      [sites, user](const Instruction& inst, const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
        std::string_view target = inst.StringAttr("custom_call_target");
        if (target == kProbe) {
          if (operands.size() != 1) return SiteError(inst, "interpreter.probe takes one operand");
          return *operands[0];
        }
        if (target == kRunParallel) {
          auto it = sites->find(&inst);
          if (it == sites->end()) return SiteError(inst, "run_parallel call site was not compiled");
          return RunSite(*it->second, inst, operands);
        }
        if (user) return user(inst, operands);
        return absl::UnimplementedError(fmt::format("unsupported custom call target '{}'", std::string(target)));
      });
}

}  // namespace xlac::codegen
