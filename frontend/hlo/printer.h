// Printer for XLA's HLO text format.
#pragma once

#include <string>

#include "ir/literal.h"
#include "ir/module.h"
#include "ir/sharding.h"

namespace xlac {

struct HloPrintOptions {
  // Canonical long form (XLA's HloPrintOptions::Default): `%` names, operand shapes, computation signatures,
  // layouts, metadata.
  static HloPrintOptions Long() { return {}; }
  // XLA's ShortParsable(): no `%`, no operand shapes, no computation signatures, no metadata.
  static HloPrintOptions Short() {
    HloPrintOptions o;
    o.print_percent = false;
    o.print_operand_shape = false;
    o.print_computation_signature = false;
    o.print_metadata = false;
    return o;
  }
  bool print_percent = true;
  bool print_operand_shape = true;
  bool print_computation_signature = true;  // "%name (p: f32[]) -> f32[] {" vs "name {"
  bool print_metadata = true;
  bool print_layout = true;
  bool print_backend_config = true;
  bool print_large_constants = true;
};

std::string PrintModule(const Module& module, const HloPrintOptions& options = HloPrintOptions::Long());
std::string PrintComputation(const Computation& computation, const HloPrintOptions& options = HloPrintOptions::Long());
// One instruction line without indentation or ROOT marker: "%add = f32[] add(f32[] %a, f32[] %b)".
std::string PrintInstruction(const Instruction& instruction, const HloPrintOptions& options = HloPrintOptions::Long());

// Sub-grammar printers, shared with tools and tests.
std::string LiteralToString(const Literal& literal, bool print_shape = true);
std::string ShardingToString(const Sharding& sharding);
std::string OpMetadataToString(const OpMetadata& metadata);

}  // namespace xlac
