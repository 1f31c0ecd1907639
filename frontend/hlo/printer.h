// Printer for XLA's HLO text format.
//
// The output matches XLA's HloModule::ToString byte for byte for modules in canonical form: instruction order is
// XLA's post order (or the schedule for is_scheduled modules), computations are in XLA's call-graph post order, and
// every opcode's attributes follow XLA's print order and default-omission rules.
#pragma once

#include <cstdint>
#include <string>

#include "ir/literal.h"
#include "ir/module.h"
#include "ir/sharding.h"

namespace xlac {

struct HloPrintOptions {
  // Canonical long form (XLA's HloPrintOptions::Default with large constants and operand shapes, as
  // HloModule::ToString printed them): `%` names, operand shapes, computation signatures, layouts, metadata.
  static HloPrintOptions Long() { return {}; }
  // XLA's ShortParsable(): no `%`, no operand shapes, no computation signatures, no metadata, no
  // control-predecessors, no /*index=N*/ operand annotations.
  static HloPrintOptions Short() {
    HloPrintOptions o;
    o.print_percent = false;
    o.print_operand_shape = false;
    o.print_computation_signature = false;
    o.print_metadata = false;
    o.print_control_dependencies = false;
    o.operand_index_annotation_interval = 0;
    return o;
  }
  bool print_percent = true;
  bool print_operand_shape = true;
  bool print_computation_signature = true;  // "%name (p: f32[]) -> f32[] {" vs "name {"
  bool print_metadata = true;
  bool print_layout = true;
  bool print_backend_config = true;
  // Constants with more than 10 elements (and tuple constants) print as `{...}` when false.
  bool print_large_constants = true;
  bool print_control_dependencies = true;
  // Operand lists carry `/*index=N*/` before every N-th operand; 0 disables.
  int64_t operand_index_annotation_interval = 5;
  // Async ops whose wrapped computation is a single instruction print as e.g. `custom-call-start(...)`, and the
  // wrapped computations are not printed.
  bool syntax_sugar_async_ops = true;
};

std::string PrintModule(const Module& module, const HloPrintOptions& options = HloPrintOptions::Long());
std::string PrintComputation(const Computation& computation, const HloPrintOptions& options = HloPrintOptions::Long());
// One instruction line without indentation or ROOT marker: "%add = f32[] add(f32[] %a, f32[] %b)".
std::string PrintInstruction(const Instruction& instruction, const HloPrintOptions& options = HloPrintOptions::Long());

// Sub-grammar printers, shared with tools and tests.
// One-line literal text; with `print_shape` it is preceded by the shape with layout ("f32[2]{0} {1, 2}", as
// custom-call's literal= prints), otherwise it is the payload of constant(...).
std::string LiteralToString(const Literal& literal, bool print_shape = true);
// "{replicated}", "{devices=[2,1]0,1 metadata={...}}", ...; metadata only when `include_metadata`.
std::string ShardingToString(const Sharding& sharding, bool include_metadata = true);
// The inside of metadata={...}: op_type="Add" op_name="a/b" source_file="x.py" source_line=12.
std::string OpMetadataToString(const OpMetadata& metadata);
// An element of a floating-point type (given as its bit pattern, or the value for f32/f64) the way XLA's
// RoundTripFpToString prints it: "%.Ng" with the type's digit count, "-nan", "nan(0x..)" for NaN payloads.
std::string FloatElementToString(PrimitiveType type, uint64_t bits);

}  // namespace xlac
