// HLO opcodes: the full XLA list, with their text names and arities.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace xlac {

enum class Opcode : uint8_t {
#define XLAC_OPCODE(e, text, arity) e,
#include "ir/opcodes.def"
#undef XLAC_OPCODE
};

inline constexpr int kNumOpcodes = 0
#define XLAC_OPCODE(e, text, arity) +1
#include "ir/opcodes.def"
#undef XLAC_OPCODE
    ;

std::string_view OpcodeName(Opcode op);
std::optional<Opcode> ParseOpcode(std::string_view name);
// Fixed operand count, or nullopt for variadic opcodes.
std::optional<int> OpcodeArity(Opcode op);

bool IsElementwiseUnary(Opcode op);   // abs, exp, convert?, not ... (not convert/bitcast-convert: they change type)
bool IsElementwiseBinary(Opcode op);  // add, compare? no: compare has its own rule; see shape inference
bool IsCommutativeBinary(Opcode op);
bool IsAsyncOpcode(Opcode op);        // async-start / -update / -done
// Ops that have side effects beyond their result and must not be removed or merged by DCE/CSE.
bool HasSideEffectOpcode(Opcode op);

}  // namespace xlac
