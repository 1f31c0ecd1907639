// xla-run's seeded parameter values (SeededParameterValue; the formula is in docs/cli.md, xla-run step 3).
#include <cstdint>
#include <utility>
#include <vector>

#include "runtime/interpreter/interpreter.h"
#include "tools/lib/run_driver.h"

namespace xlac {
namespace {

uint64_t Mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// A 32-bit integer hash (Wellons' "lowbias32"): two 32-bit multiplies, which AVX2 does eight at a time. The earlier
// generator's two 64-bit SplitMix64 hashes per element have no AVX2 multiply and were most of a cache hit's start.
inline uint32_t Hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  return x ^ (x >> 16);
}

// Element i's 32 random bits: Hash32(Hash32(i) ^ s). Indices stay below 2^32: xla-run generates at most 4 GB.
// (Clang multiversions no templates: one function per type.)
__attribute__((target_clones("avx2", "default"))) void FillF32(float* out, int64_t count, uint32_t s) {
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t h = Hash32(Hash32(static_cast<uint32_t>(i)) ^ s);
    out[i] = static_cast<float>(static_cast<int32_t>(h >> 8)) * 0x1p-23f - 1.0f;  // 24 bits: exact
  }
}
__attribute__((target_clones("avx2", "default"))) void FillF64(double* out, int64_t count, uint32_t s) {
  for (int64_t i = 0; i < count; ++i) {
    const uint32_t h = Hash32(Hash32(static_cast<uint32_t>(i)) ^ s);
    out[i] = static_cast<double>(static_cast<int32_t>(h >> 1)) * 0x1p-30 - 1.0;  // 31 bits: exact
  }
}

Literal SeededValue(const Shape& shape, uint64_t s) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (size_t j = 0; j < shape.tuple_shapes.size(); ++j) {
      // SplitMix64(s + j), as interp::MakeRandomLiteral seeds tuple elements: other leaves keep their values.
      elements.push_back(SeededValue(shape.tuple_shapes[j], Mix64(s + j + 0x9E3779B97F4A7C15ull)));
    }
    return Literal::CreateTuple(std::move(elements));
  }
  const PrimitiveType type = shape.element_type;
  if (!shape.IsArray() || (type != PrimitiveType::kF32 && type != PrimitiveType::kF64)) {
    return interp::MakeRandomLiteral(shape, s);
  }
  Literal value(shape);
  const uint32_t s32 = static_cast<uint32_t>(s ^ (s >> 32));
  if (type == PrimitiveType::kF32) {
    FillF32(reinterpret_cast<float*>(value.mutable_raw_data()), value.element_count(), s32);
  } else {
    FillF64(reinterpret_cast<double*>(value.mutable_raw_data()), value.element_count(), s32);
  }
  return value;
}

}  // namespace

Literal SeededParameterValue(const Shape& shape, uint64_t seed, int64_t index) {
  // Neighbouring seeds and indices give unrelated streams; adding a parameter does not change the others.
  return SeededValue(shape, Mix64(seed + 0x9E3779B97F4A7C15ull * static_cast<uint64_t>(index + 1)));
}

}  // namespace xlac
