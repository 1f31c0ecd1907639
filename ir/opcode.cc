#include "ir/opcode.h"

#include <array>

namespace xlac {
namespace {

struct OpcodeInfo {
  std::string_view name;
  int arity;
};

constexpr std::array kOpcodes = {
#define XLAC_OPCODE(e, text, arity) OpcodeInfo{text, arity},
#include "ir/opcodes.def"
#undef XLAC_OPCODE
};
static_assert(kOpcodes.size() == kNumOpcodes);

}  // namespace

std::string_view OpcodeName(Opcode op) { return kOpcodes[static_cast<size_t>(op)].name; }

std::optional<Opcode> ParseOpcode(std::string_view name) {
  // The list is sorted by enumerator, not by text; a linear scan over 136 entries is cheap next to parsing.
  for (size_t i = 0; i < kOpcodes.size(); ++i) {
    if (kOpcodes[i].name == name) return static_cast<Opcode>(i);
  }
  return std::nullopt;
}

std::optional<int> OpcodeArity(Opcode op) {
  int arity = kOpcodes[static_cast<size_t>(op)].arity;
  if (arity < 0) return std::nullopt;
  return arity;
}

bool IsElementwiseUnary(Opcode op) {
  switch (op) {
    case Opcode::kAbs: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin: case Opcode::kAsinh:
    case Opcode::kAtan: case Opcode::kAtanh: case Opcode::kCbrt: case Opcode::kCeil: case Opcode::kClz:
    case Opcode::kCos: case Opcode::kCosh: case Opcode::kErf: case Opcode::kExp: case Opcode::kExpm1:
    case Opcode::kFloor: case Opcode::kImag: case Opcode::kIsFinite: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kNegate: case Opcode::kNot: case Opcode::kPopulationCount:
    case Opcode::kReal: case Opcode::kRoundNearestAfz: case Opcode::kRoundNearestEven: case Opcode::kRsqrt:
    case Opcode::kSign: case Opcode::kSin: case Opcode::kSinh: case Opcode::kSqrt: case Opcode::kTan:
    case Opcode::kTanh:
      return true;
    default:
      return false;
  }
}

bool IsElementwiseBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kAnd: case Opcode::kAtan2: case Opcode::kComplex: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kMulhi: case Opcode::kMultiply: case Opcode::kOr:
    case Opcode::kPower: case Opcode::kRemainder: case Opcode::kShiftLeft: case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical: case Opcode::kSubtract: case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsCommutativeBinary(Opcode op) {
  switch (op) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMulhi: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      return true;
    default:
      return false;
  }
}

bool IsAsyncOpcode(Opcode op) {
  return op == Opcode::kAsyncStart || op == Opcode::kAsyncUpdate || op == Opcode::kAsyncDone;
}

bool HasSideEffectOpcode(Opcode op) {
  switch (op) {
    case Opcode::kSend: case Opcode::kSendDone: case Opcode::kRecv: case Opcode::kRecvDone:
    case Opcode::kRng: case Opcode::kRngGetAndUpdateState: case Opcode::kInfeed: case Opcode::kOutfeed:
    case Opcode::kAllReduceStart: case Opcode::kAllReduceDone: case Opcode::kAllGatherStart:
    case Opcode::kAllGatherDone: case Opcode::kCollectivePermuteStart: case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
      return true;
    default:
      return false;
  }
}

}  // namespace xlac
