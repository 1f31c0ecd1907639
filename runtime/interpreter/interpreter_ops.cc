// The StableHLO reference interpreter's own ops, as the StableHLO frontend lowers them (frontend/stablehlo/parser.h):
//  - custom-call "interpreter.run_parallel": called computations are the distinct programs; backend_config
//    {"programs":[[i, ...], ...]} places them on a grid whose rows are replicas and columns partitions. Operands are
//    the processes' arguments and results their results, both in grid order.
//  - custom-call "interpreter.probe": an identity (the recorded value is the runner's business).
// and the compiler's built-in Winograd transforms (ir/winograd.h; winograd.cc).
#include "ir/run_parallel.h"
#include "ir/winograd.h"
#include "runtime/interpreter/internal.h"
#include "runtime/interpreter/winograd.h"

namespace xlac::interp {
namespace {

absl::StatusOr<Literal> RunParallel(const Instruction& inst, Operands operands, Evaluator& ev) {
  absl::StatusOr<std::vector<std::vector<int64_t>>> grid = RunParallelPrograms(inst);
  if (!grid.ok()) return Error(inst, "{}", std::string(grid.status().message()));
  int64_t replicas = static_cast<int64_t>(grid->size());
  int64_t partitions = static_cast<int64_t>((*grid)[0].size());
  std::vector<const Computation*> programs;
  std::vector<std::vector<const Literal*>> args;
  size_t next = 0;
  for (const auto& row : *grid) {
    for (int64_t index : row) {
      if (index < 0 || index >= static_cast<int64_t>(inst.called_computations().size())) {
        return Error(inst, "program index {} out of range", index);
      }
      const Computation* program = inst.called_computation(index);
      std::vector<const Literal*> program_args;
      for (int64_t p = 0; p < program->parameter_count(); ++p) {
        if (next >= operands.size()) return Error(inst, "not enough operands for the programs");
        program_args.push_back(operands[next++]);
      }
      programs.push_back(program);
      args.push_back(std::move(program_args));
    }
  }
  if (next != operands.size()) return Error(inst, "{} operands are left over", operands.size() - next);
  absl::StatusOr<std::vector<Literal>> results =
      RunDevices(ev.module(), programs, args, replicas, partitions, *ev.device().options);
  if (!results.ok()) return results.status();
  std::vector<Literal> flat;
  for (size_t d = 0; d < results->size(); ++d) {
    Literal& r = (*results)[d];
    if (programs[d]->root()->shape().IsTuple()) {
      for (Literal& e : r.mutable_tuple_elements()) flat.push_back(std::move(e));
    } else {
      flat.push_back(std::move(r));
    }
  }
  if (!inst.shape().IsTuple()) {
    if (flat.size() != 1) return Error(inst, "the programs return {} values for a single result", flat.size());
    return std::move(flat[0]);
  }
  if (flat.size() != inst.shape().tuple_shapes.size()) {
    return Error(inst, "the programs return {} values but the result has {}", flat.size(),
                 inst.shape().tuple_shapes.size());
  }
  return Literal::CreateTuple(std::move(flat));
}

}  // namespace

absl::StatusOr<Literal> EvalInterpreterOp(const Instruction& inst, Operands operands, Evaluator& ev) {
  if (IsWinogradTarget(inst.StringAttr("custom_call_target"))) return EvalWinogradTransform(inst, operands);
  if (inst.StringAttr("custom_call_target") == "interpreter.probe") {
    if (operands.size() != 1) return Error(inst, "interpreter.probe takes one operand");
    return *operands[0];
  }
  return RunParallel(inst, operands, ev);
}

}  // namespace xlac::interp
