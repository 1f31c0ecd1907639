// rng-bit-generator (bit-exact with XLA's ThreeFry and Philox expansions in xla/hlo/builder/lib/prng.cc, as
// RngBitGeneratorExpander wires them up; rng_default is Philox, as on XLA's CPU and GPU backends), and the
// stateful `rng` op, which has no bit-exact reference and draws from a seeded counter-based stream.
#include <array>
#include <cmath>
#include <cstring>

#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

uint32_t Rotl(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

// Threefry2x32 with 20 rounds.
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> x, std::array<uint32_t, 2> key) {
  constexpr int kRot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {key[0], key[1], 0x1BD11BDA ^ key[0] ^ key[1]};
  x[0] += ks[0];
  x[1] += ks[1];
  auto rounds = [&](int first) {
    for (int r = first; r < first + 4; ++r) {
      x[0] += x[1];
      x[1] = Rotl(x[1], kRot[r]);
      x[1] ^= x[0];
    }
  };
  rounds(0);
  x[0] += ks[1];
  x[1] += ks[2] + 1;
  rounds(4);
  x[0] += ks[2];
  x[1] += ks[0] + 2;
  rounds(0);
  x[0] += ks[0];
  x[1] += ks[1] + 3;
  rounds(4);
  x[0] += ks[1];
  x[1] += ks[2] + 4;
  rounds(0);
  x[0] += ks[2];
  x[1] += ks[0] + 5;
  return x;
}

// Philox4x32 with 10 rounds.
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> s, std::array<uint32_t, 2> key) {
  constexpr uint32_t kW32A = 0x9E3779B9, kW32B = 0xBB67AE85, kM4x32A = 0xD2511F53, kM4x32B = 0xCD9E8D57;
  for (int round = 0; round < 10; ++round) {
    uint64_t p0 = static_cast<uint64_t>(s[0]) * kM4x32A;
    uint64_t p1 = static_cast<uint64_t>(s[2]) * kM4x32B;
    s = {static_cast<uint32_t>(p1 >> 32) ^ s[1] ^ key[0], static_cast<uint32_t>(p1),
         static_cast<uint32_t>(p0 >> 32) ^ s[3] ^ key[1], static_cast<uint32_t>(p0)};
    key[0] += kW32A;
    key[1] += kW32B;
  }
  return s;
}

std::array<uint32_t, 2> Split(uint64_t v) { return {static_cast<uint32_t>(v), static_cast<uint32_t>(v >> 32)}; }

// Writes the low BitWidth bits of `bits` as element i (bit generators fill any non-pred type with raw bits).
void PutBits(Literal& lit, int64_t i, uint64_t bits) {
  PrimitiveType t = lit.shape().element_type;
  if (IsIntegralType(t)) {
    lit.SetFromInt64(i, static_cast<int64_t>(bits));  // wraps to the width, sign-extending sub-byte types
    return;
  }
  int width = BitWidth(t);
  if (width < 64) bits &= (uint64_t{1} << width) - 1;
  std::memcpy(lit.mutable_raw_data() + i * ByteWidth(t), &bits, static_cast<size_t>(ByteWidth(t)));
}

// ThreeFry: 32-bit (and narrower) outputs split a dimension in halves, fed pairwise by one Threefry call; 64-bit
// outputs combine the two words of each call. Returns the advanced counter.
uint64_t ThreeFryFill(uint64_t key, uint64_t counter, Literal& data) {
  const std::vector<int64_t>& dims = data.shape().dimensions;
  int bits = BitWidth(data.shape().element_type);
  std::array<uint32_t, 2> k = Split(key);
  if (bits == 64) {
    for (int64_t i = 0; i < data.element_count(); ++i) {
      std::array<uint32_t, 2> out = ThreeFry2x32(Split(counter + static_cast<uint64_t>(i)), k);
      PutBits(data, i, static_cast<uint64_t>(out[0]) | (static_cast<uint64_t>(out[1]) << 32));
    }
    return counter + static_cast<uint64_t>(data.element_count());
  }
  // SplitShapeIntoHalves: the first even dim, else the largest (first on ties); scalars act as [2] sliced to 1.
  int64_t split = -1;
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] % 2 == 0) {
      split = static_cast<int64_t>(d);
      break;
    }
  }
  if (split < 0) {
    for (size_t d = 0; d < dims.size(); ++d) {
      if (split < 0 || dims[d] > dims[static_cast<size_t>(split)]) split = static_cast<int64_t>(d);
    }
  }
  std::vector<int64_t> half = dims;
  if (dims.empty()) {
    half = {1};
  } else {
    half[static_cast<size_t>(split)] = (dims[static_cast<size_t>(split)] + 1) / 2;
  }
  int64_t half_count = 1;
  for (int64_t d : half) half_count *= d;
  std::vector<int64_t> half_strides = RowMajorStrides(half);
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < data.element_count(); ++i, NextIndex(index, dims)) {
    int64_t h = 0, which = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t v = index[d];
      if (static_cast<int64_t>(d) == split) {
        which = v % 2;
        v /= 2;
      }
      h += v * half_strides[d];
    }
    std::array<uint32_t, 2> out = ThreeFry2x32(Split(counter + static_cast<uint64_t>(h)), k);
    PutBits(data, i, out[static_cast<size_t>(which)]);
  }
  return counter + static_cast<uint64_t>(half_count);
}

// Philox: blocks of four 32-bit words from a 128-bit counter (low, high), dealt round-robin; 64-bit outputs pair
// words (0,1) and (2,3). Returns the advanced 128-bit counter.
std::array<uint64_t, 2> PhiloxFill(uint64_t key, std::array<uint64_t, 2> counter, Literal& data) {
  int bits = BitWidth(data.shape().element_type);
  int64_t n = data.element_count();
  int64_t words = bits == 64 ? 2 * n : n;
  int64_t blocks = (words + 3) / 4;
  std::array<uint32_t, 2> k = Split(key);
  for (int64_t b = 0; b < blocks; ++b) {
    uint64_t lo = counter[0] + static_cast<uint64_t>(b);
    uint64_t hi = lo < counter[0] ? counter[1] + 1 : counter[1];
    std::array<uint32_t, 2> l = Split(lo), h = Split(hi);
    std::array<uint32_t, 4> out = Philox4x32({l[0], l[1], h[0], h[1]}, k);
    if (bits == 64) {
      for (int j = 0; j < 2; ++j) {
        int64_t i = 2 * b + j;
        if (i < n) PutBits(data, i, static_cast<uint64_t>(out[2 * j]) | (static_cast<uint64_t>(out[2 * j + 1]) << 32));
      }
    } else {
      for (int j = 0; j < 4; ++j) {
        int64_t i = 4 * b + j;
        if (i < n) PutBits(data, i, out[static_cast<size_t>(j)]);
      }
    }
  }
  uint64_t lo = counter[0] + static_cast<uint64_t>(blocks);
  return {lo, lo < counter[0] ? counter[1] + 1 : counter[1]};
}

}  // namespace

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
  uint64_t key = LoadOne<uint64_t>(state, 0);
  std::vector<uint64_t> out_state(static_cast<size_t>(state_size));
  out_state[0] = key;
  if (algorithm == "rng_three_fry") {
    if (state_size < 2) return Error(inst, "ThreeFry needs a u64[2] state");
    uint64_t next = ThreeFryFill(key, LoadOne<uint64_t>(state, 1), data);
    out_state[1] = next;
    for (int64_t i = 2; i < state_size; ++i) out_state[i] = LoadOne<uint64_t>(state, i);
  } else if (algorithm == "rng_philox" || algorithm == "rng_default" || algorithm.empty()) {
    if (state_size < 2) return Error(inst, "Philox needs a u64[2] or u64[3] state");
    // A u64[3] state holds (key, counter_low, counter_high); a u64[2] state's key doubles as the counter's high word.
    std::array<uint64_t, 2> counter =
        state_size >= 3 ? std::array<uint64_t, 2>{LoadOne<uint64_t>(state, 1), LoadOne<uint64_t>(state, 2)}
                        : std::array<uint64_t, 2>{LoadOne<uint64_t>(state, 1), key};
    std::array<uint64_t, 2> next = PhiloxFill(key, counter, data);
    out_state[1] = next[0];
    if (state_size >= 3) out_state[2] = next[1];
    for (int64_t i = 3; i < state_size; ++i) out_state[i] = LoadOne<uint64_t>(state, i);
  } else {
    return Unsupported(inst, "unknown rng algorithm {}", std::string(algorithm));
  }
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
