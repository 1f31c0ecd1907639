// rng-bit-generator (XLA's ThreeFry and Philox expansions as RngBitGeneratorExpander wires them up) and the top-k
// selection, one implementation for the interpreter and compiled code.
#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <vector>

#include "runtime/cpu/xlac_runtime_rng.h"

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

struct Output {
  uint8_t* data;
  int bit_width;
  int elem_bytes;
  bool sign_extend;
  // Element i gets the low bit_width bits (bit generators fill any non-pred type with raw bits).
  void Put(int64_t i, uint64_t bits) const {
    if (bit_width < 64) {
      uint64_t mask = (uint64_t{1} << bit_width) - 1;
      bits &= mask;
      if (sign_extend && ((bits >> (bit_width - 1)) & 1)) bits |= ~mask;
    }
    std::memcpy(data + i * elem_bytes, &bits, static_cast<size_t>(elem_bytes));
  }
};

// ThreeFry: 32-bit (and narrower) outputs split a dimension in halves, fed pairwise by one Threefry call; 64-bit
// outputs combine the two words of each call. Returns the advanced counter.
uint64_t ThreeFryFill(uint64_t key, uint64_t counter, const Output& out, const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::array<uint32_t, 2> k = Split(key);
  if (out.bit_width == 64) {
    for (int64_t i = 0; i < count; ++i) {
      std::array<uint32_t, 2> r = ThreeFry2x32(Split(counter + static_cast<uint64_t>(i)), k);
      out.Put(i, static_cast<uint64_t>(r[0]) | (static_cast<uint64_t>(r[1]) << 32));
    }
    return counter + static_cast<uint64_t>(count);
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
  std::vector<int64_t> half_strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) half_strides[d - 1] = half_strides[d] * half[d];
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t i = 0; i < count; ++i) {
    int64_t h = 0, which = 0;
    for (size_t d = 0; d < dims.size(); ++d) {
      int64_t v = index[d];
      if (static_cast<int64_t>(d) == split) {
        which = v % 2;
        v /= 2;
      }
      h += v * half_strides[d];
    }
    std::array<uint32_t, 2> r = ThreeFry2x32(Split(counter + static_cast<uint64_t>(h)), k);
    out.Put(i, r[static_cast<size_t>(which)]);
    for (size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return counter + static_cast<uint64_t>(half_count);
}

// Philox: blocks of four 32-bit words from a 128-bit counter (low, high), dealt round-robin; 64-bit outputs pair
// words (0,1) and (2,3). Returns the advanced 128-bit counter.
std::array<uint64_t, 2> PhiloxFill(uint64_t key, std::array<uint64_t, 2> counter, const Output& out, int64_t n) {
  int64_t words = out.bit_width == 64 ? 2 * n : n;
  int64_t blocks = (words + 3) / 4;
  std::array<uint32_t, 2> k = Split(key);
  for (int64_t b = 0; b < blocks; ++b) {
    uint64_t lo = counter[0] + static_cast<uint64_t>(b);
    uint64_t hi = lo < counter[0] ? counter[1] + 1 : counter[1];
    std::array<uint32_t, 2> l = Split(lo), h = Split(hi);
    std::array<uint32_t, 4> r = Philox4x32({l[0], l[1], h[0], h[1]}, k);
    if (out.bit_width == 64) {
      for (int j = 0; j < 2; ++j) {
        int64_t i = 2 * b + j;
        if (i < n) out.Put(i, static_cast<uint64_t>(r[2 * j]) | (static_cast<uint64_t>(r[2 * j + 1]) << 32));
      }
    } else {
      for (int j = 0; j < 4; ++j) {
        int64_t i = 4 * b + j;
        if (i < n) out.Put(i, r[static_cast<size_t>(j)]);
      }
    }
  }
  uint64_t lo = counter[0] + static_cast<uint64_t>(blocks);
  return {lo, lo < counter[0] ? counter[1] + 1 : counter[1]};
}

}  // namespace

extern "C" int32_t xlac_rt_rng_bit_generator(int32_t algorithm, const uint64_t* state, int64_t state_size,
                                             uint64_t* new_state, void* data, const int64_t* dims, int64_t rank,
                                             int32_t bit_width, int32_t elem_bytes, int32_t sign_extend) {
  if (state_size < 2) return 1;
  // Read the whole state first: new_state may alias it.
  std::vector<uint64_t> s(state, state + state_size);
  std::vector<int64_t> shape(dims, dims + rank);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  Output out{static_cast<uint8_t*>(data), bit_width, elem_bytes, sign_extend != 0};
  uint64_t key = s[0];
  if (algorithm == XLAC_RT_RNG_THREE_FRY) {
    s[1] = ThreeFryFill(key, s[1], out, shape);
  } else {
    // A u64[3] state holds (key, counter_low, counter_high); a u64[2] state's key doubles as the counter's high word.
    std::array<uint64_t, 2> counter =
        state_size >= 3 ? std::array<uint64_t, 2>{s[1], s[2]} : std::array<uint64_t, 2>{s[1], key};
    std::array<uint64_t, 2> next = PhiloxFill(key, counter, out, n);
    s[1] = next[0];
    if (state_size >= 3) s[2] = next[1];
  }
  std::copy(s.begin(), s.end(), new_state);
  return 0;
}

extern "C" void xlac_rt_topk_keys(const int64_t* keys, int64_t rows, int64_t len, int64_t k, int32_t largest,
                                  int64_t* indices) {
  if (k <= 0 || len <= 0) return;
  std::vector<int64_t> perm(static_cast<size_t>(len));
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t* row = keys + r * len;
    std::iota(perm.begin(), perm.end(), 0);
    // Breaking ties by index makes the order total, so a partial sort selects what a stable sort would.
    auto before = [&](int64_t a, int64_t b) {
      if (row[a] != row[b]) return largest ? row[a] > row[b] : row[a] < row[b];
      return a < b;
    };
    std::partial_sort(perm.begin(), perm.begin() + k, perm.end(), before);
    std::copy(perm.begin(), perm.begin() + k, indices + r * k);
  }
}
