// rng-bit-generator (bit-exact with XLA's ThreeFry and Philox expansions in xla/hlo/builder/lib/prng.cc, as
// RngBitGeneratorExpander wires them up; rng_default is Philox, as on XLA's CPU and GPU backends), and the
// stateful `rng` op, which has no bit-exact reference and draws from a seeded counter-based stream.
#include <cmath>
#include <cstring>

#include "runtime/cpu/xlac_runtime_rng.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {

absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, Operands operands) {
  const Literal& state = *operands[0];
  const Shape& shape = inst.shape();
  if (!shape.IsTuple() || shape.tuple_shapes.size() != 2 || state.shape().element_type != PrimitiveType::kU64 ||
      state.shape().dimensions.size() != 1) {
    return Error(inst, "expected a u64[n] state and a (state, data) result");
  }
  int64_t state_size = state.element_count();
  Literal new_state(shape.tuple_shapes[0]);
  Literal data(shape.tuple_shapes[1]);
  int bits = BitWidth(data.shape().element_type);
  if (data.shape().element_type == PrimitiveType::kPred || IsComplexType(data.shape().element_type) ||
      (bits != 64 && bits > 32)) {
    return Unsupported(inst, "rng-bit-generator cannot produce {}", PrimitiveTypeName(data.shape().element_type));
  }
  std::string_view algorithm = TextAttr(inst, "algorithm");
  int32_t alg;
  if (algorithm == "rng_three_fry") {
    if (state_size < 2) return Error(inst, "ThreeFry needs a u64[2] state");
    alg = XLAC_RT_RNG_THREE_FRY;
  } else if (algorithm == "rng_philox" || algorithm == "rng_default" || algorithm.empty()) {
    if (state_size < 2) return Error(inst, "Philox needs a u64[2] or u64[3] state");
    alg = XLAC_RT_RNG_PHILOX;
  } else {
    return Unsupported(inst, "unknown rng algorithm {}", std::string(algorithm));
  }
  // The runtime kernel is shared with compiled code, so both backends produce the same bits.
  std::vector<uint64_t> in_state(static_cast<size_t>(state_size)), out_state(in_state.size());
  for (int64_t i = 0; i < state_size; ++i) in_state[i] = LoadOne<uint64_t>(state, i);
  PrimitiveType t = data.shape().element_type;
  const std::vector<int64_t>& dims = data.shape().dimensions;
  xlac_rt_rng_bit_generator(alg, in_state.data(), state_size, out_state.data(), data.mutable_raw_data(), dims.data(),
                            static_cast<int64_t>(dims.size()), bits, static_cast<int32_t>(ByteWidth(t)),
                            IsSignedIntegralType(t) ? 1 : 0);
  for (int64_t i = 0; i < state_size; ++i) StoreOne<uint64_t>(new_state, i, out_state[i]);
  std::vector<Literal> elements;
  elements.push_back(std::move(new_state));
  elements.push_back(std::move(data));
  return Literal::CreateTuple(std::move(elements));
}

absl::StatusOr<Literal> EvalRng(const Instruction& inst, Operands operands, DeviceContext& device) {
  if (inst.opcode() == Opcode::kRngGetAndUpdateState) {
    Literal result(inst.shape());
    if (result.shape().element_type != PrimitiveType::kU64 || result.element_count() < 1) {
      return Error(inst, "expected a u64 state result");
    }
    StoreOne<uint64_t>(result, 0, device.rng_counter);
    device.rng_counter += static_cast<uint64_t>(IntAttr(inst, "delta", 0));
    return result;
  }
  if (operands.size() != 2) return Error(inst, "rng takes two operands");
  std::string_view dist = TextAttr(inst, "distribution");
  Literal result(inst.shape());
  PrimitiveType t = inst.shape().element_type;
  uint64_t stream = HashString(inst.name(), device.options->seed) ^ SplitMix64(device.rng_counter++);
  auto uniform01 = [&](int64_t i, int which) {
    uint64_t r = SplitMix64(stream ^ SplitMix64(static_cast<uint64_t>(2 * i + which)));
    return static_cast<double>(r >> 11) * 0x1p-53;
  };
  NumKind kind = KindOf(t);
  if (dist == "rng_uniform") {
    if (kind == NumKind::kFloat || kind == NumKind::kDouble) {
      double a = operands[0]->GetAsDouble(0), b = operands[1]->GetAsDouble(0);
      for (int64_t i = 0; i < result.element_count(); ++i) {
        result.SetFromDouble(i, a + (b - a) * uniform01(i, 0));
        if (result.GetAsDouble(i) >= b) result.SetFromDouble(i, a);  // keep the interval half-open
      }
      return result;
    }
    if (kind == NumKind::kSigned || kind == NumKind::kUnsigned) {
      int64_t a = IndexValue(*operands[0], 0), b = IndexValue(*operands[1], 0);
      uint64_t range = b > a ? static_cast<uint64_t>(b) - static_cast<uint64_t>(a) : 1;
      for (int64_t i = 0; i < result.element_count(); ++i) {
        uint64_t r = SplitMix64(stream ^ SplitMix64(static_cast<uint64_t>(i)));
        result.SetFromInt64(i, static_cast<int64_t>(static_cast<uint64_t>(a) + r % range));
      }
      return result;
    }
  } else if (dist == "rng_normal" && (kind == NumKind::kFloat || kind == NumKind::kDouble)) {
    double mean = operands[0]->GetAsDouble(0), stddev = operands[1]->GetAsDouble(0);
    for (int64_t i = 0; i < result.element_count(); ++i) {
      double u1 = std::max(uniform01(i, 0), 1e-300), u2 = uniform01(i, 1);
      double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
      result.SetFromDouble(i, mean + stddev * z);
    }
    return result;
  }
  return Unsupported(inst, "rng distribution '{}' for {}", std::string(dist), PrimitiveTypeName(t));
}

}  // namespace xlac::interp
