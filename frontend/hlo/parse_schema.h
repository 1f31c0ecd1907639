// Which attributes each opcode accepts in HLO text, following the per-opcode attribute sets of XLA's parser
// (HloParserImpl::CreateInstruction). Attributes every instruction accepts (sharding=, metadata=, ...) are not
// listed here.
#pragma once

#include <string_view>
#include <vector>

#include "ir/opcode.h"

namespace xlac::hlo {

struct OpAttrSpec {
  std::string_view name;
  bool required = false;
  // For kEnum / kEnumList attributes: the accepted spellings (empty = any identifier).
  std::vector<std::string_view> enum_values;
  // Accept any letter case and store the value in lowercase (XLA prints these lowercase).
  bool enum_case_insensitive = false;
};

// Attributes naming called computations; they become Instruction::called_computations in `computations` order.
struct CompAttrSpec {
  std::string_view name;
  bool required = false;
  bool is_list = false;  // branch_computations={a, b}, called_computations={a, b}
};

struct OpSchema {
  std::vector<OpAttrSpec> attrs;
  std::vector<CompAttrSpec> computations;
  bool result_accuracy = false;  // result_accuracy= is accepted (transcendental unary ops)
};

const OpSchema& GetOpSchema(Opcode opcode);
const OpAttrSpec* FindAttrSpec(const OpSchema& schema, std::string_view name);
const CompAttrSpec* FindCompAttrSpec(const OpSchema& schema, std::string_view name);

}  // namespace xlac::hlo
