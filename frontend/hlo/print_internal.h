// Helpers shared by the HLO printer's translation units (printer.cc, print_attributes.cc, print_literal.cc,
// print_sharding.cc). Not part of the public API.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/hlo/printer.h"
#include "ir/attributes.h"
#include "ir/instruction.h"
#include "ir/shape.h"

namespace xlac::hlo_print {

// absl::CEscape: \n \r \t \" \' \\ escaped, other non-printable bytes (and bytes >= 0x80) as 3-digit octal.
std::string CEscape(std::string_view s);
// XLA's LexesAsJsonDict: `{...}` with balanced braces outside double-quoted strings, surrounded only by whitespace.
bool LexesAsJsonDict(std::string_view s);
// frontend_attributes={k="v",...}: sorted by key, values that lex as JSON dicts unquoted.
std::string FrontendAttributesToString(const StringMap& attributes);

// ShapeUtil::HumanString / HumanStringWithLayout: tuples carry `/*index=N*/` before every fifth element and arrays
// without a layout get the default one when `print_layout` is set (XLA's shapes always have layouts).
std::string PrintShape(const Shape& shape, bool print_layout);

std::string WindowToString(const Window& window);
std::string ConvDnumsToString(const ConvolutionDimensionNumbers& dnums);
std::string PaddingConfigToString(const PaddingConfig& padding);
std::string SliceRangesToString(const std::vector<SliceRange>& slices);
// `[d0,d1]<=[r0,r1]T(p0,p1)` after XLA's IotaTileAssignment canonicalization of reshape dims and permutation.
std::string IotaListToString(const IotaList& iota);
std::string ReplicaGroupsToString(const ReplicaGroups& groups);
std::string AliasingToString(const std::vector<OutputOperandAlias>& aliasing);

// Oneline literal (XLA's PrintWithoutShapeOneline / PrintWithLayoutOneline).
std::string LiteralText(const Literal& literal, bool print_shape);

// Appends the opcode-specific attributes of `inst` (XLA's PrintExtraAttributesImpl) to `out`, one "name=value"
// string per attribute, in XLA's print order.
void AppendOpcodeAttributes(const Instruction& inst, const HloPrintOptions& options, std::vector<std::string>& out);
// Appends everything XLA's PrintExtraAttributes prints: opcode attributes, called computations, sharding,
// frontend attributes, control predecessors, statistics and result accuracy.
void AppendExtraAttributes(const Instruction& inst, const HloPrintOptions& options, std::vector<std::string>& out);

// Whole-instruction attributes kept verbatim in Instruction::extra_attributes that AppendExtraAttributes prints
// (statistics, result_accuracy, parameter_replication); the instruction printer skips them.
bool IsPrintedWithExtraAttributes(std::string_view name);

// True if `op` prints attribute `name` among its own attributes (AppendOpcodeAttributes).
bool OpcodePrintsAttribute(Opcode op, std::string_view name);

// Async ops (print_async.cc).
// The async-start of an async chain (the instruction itself for an async-start).
const Instruction* AsyncChainStart(const Instruction& inst);
// True if the chain's wrapped instruction is stored inline on the async ops (the parser's representation of
// `op-start` syntax): its attributes sit on the async-start and its called computations are the wrapped op's.
bool StoresWrappedInline(const Instruction& inst);
// The computation an async op wraps (through its chain to the async-start), or nullptr.
const Computation* AsyncWrappedComputation(const Instruction& inst);
// The opcode an async op wraps: its wrapped computation's root, or the inline one.
std::optional<Opcode> AsyncWrappedOpcode(const Instruction& inst);
// True if `comp` is only parameters plus a root (XLA's CanExpandIntoSingleInstruction).
bool CanExpandIntoSingleInstruction(const Computation& comp);
// True if `inst` is an async op printed with the `<wrapped-opcode>-start` syntax sugar under `options`: where XLA
// uses it and the text parses back to the same module (see print_async.cc).
bool UsesAsyncSyntaxSugar(const Instruction& inst, const HloPrintOptions& options);
// "custom-call-start", "all-gather-done", ...; only valid when UsesAsyncSyntaxSugar.
std::string AsyncSugarOpcodeName(const Instruction& inst);

// `%name` or `name`.
// `name` as the parser reads it back: unchanged when it is a valid name there (after '%' when `after_percent`);
// otherwise with characters HLO names cannot hold replaced by '_', and a leading '_' when it would still read as a
// keyword, type or number.
std::string PrintableName(std::string_view name, bool after_percent);
std::string NameRef(std::string_view name, const HloPrintOptions& options);

}  // namespace xlac::hlo_print
