// Pieces of the verifier shared by passes/verifier*.cc; not a public API.
#pragma once

#include <string>
#include <utility>

#include "fmt/format.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "passes/verifier.h"

namespace xlac::verifier_internal {

// Collects errors and remembers whether any was reported.
class Reporter {
 public:
  explicit Reporter(DiagnosticEngine& diags) : diags_(diags) {}
  void Error(SourceLoc loc, std::string message) {
    diags_.Error(loc, std::move(message));
    ok_ = false;
  }
  // "instruction '<name>': <message>" at the instruction.
  void InstError(const Instruction& inst, std::string_view message) {
    Error(inst.loc(), fmt::format("instruction '{}': {}", inst.name(), message));
  }
  bool ok() const { return ok_; }

 private:
  DiagnosticEngine& diags_;
  bool ok_ = true;
};

inline std::string Str(const Shape& shape) { return ShapeToString(shape, /*print_layout=*/false); }
inline std::string StrWithLayout(const Shape& shape) { return ShapeToString(shape, /*print_layout=*/true); }

// Layout equality for arrays (recursing through tuples); absent layouts count as the default descending one.
bool LayoutsMatch(const Shape& a, const Shape& b, bool ignore_tiles_and_memory_space);

// The invariants XLA checks for one instruction beyond its shape: replica groups and source-target pairs of
// collectives, -start/-done pairing, execution threads of callees, sharding consistency of loops and branches,
// custom-call layout constraints and, with check_layouts, ops that may not change layouts. `inst` is structurally
// sound (operands and callees are valid) when this is called.
void VerifyInstructionInvariants(const Instruction& inst, const Module& module, const VerifierOptions& options,
                                 Reporter& reporter);

// Module-level configuration: entry_computation_layout, input_output_alias, buffer_donor and the consistency of
// all-reduce layout constraints. The entry computation exists and is structurally sound.
void VerifyModuleConfig(const Module& module, const VerifierOptions& options, Reporter& reporter);

}  // namespace xlac::verifier_internal
