// Layout changes (copies and transposes whose operand and result layouts differ) for compiled code.
//
// Walking the destination in memory order reads the source with a large stride: every element comes from another
// cache line, evicted before its neighbours are read. So the two dimensions that are most minor in the source (a)
// and in the destination (b) move in kTile x kTile tiles, each touching kTile lines on either side, used whole while
// in L1; the other dimensions are outer loops in the destination's memory order. When both layouts share their most
// minor dimension, whole runs along it move at once (memcpy when both are contiguous). Work units (tiles or runs) are
// numbered in that order and split into contiguous ranges across the device's threads; a range walks its units with
// an odometer (no division per unit). Scalar moves: vectorizing one side of a transpose turns the other side into
// gathers or scatters, which cost more per element than scalar moves on the CPUs xlac targets.
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "runtime/cpu/xlac_runtime.h"

namespace {

constexpr int64_t kTile = 32;
// Below this many elements the copy runs on the calling thread (waking the pool costs more).
constexpr int64_t kMinParallelElements = int64_t{1} << 15;

struct Element16 {
  uint64_t lo, hi;
};

struct Plan {
  const char* src = nullptr;
  char* dst = nullptr;
  int64_t bytes = 0;
  // Digits of a unit's number, most significant first: the outer dimensions, then (tiled) tile indices along a and
  // b. `size` digits, each with its extent and element strides in src and dst per step.
  std::vector<int64_t> extent, src_step, dst_step;
  bool tiled = false;
  int64_t a = 0, b = 0;  // extents of the two tile dimensions (tiled), or the run length along a (runs)
  int64_t src_a = 0, dst_a = 0, src_b = 0, dst_b = 0;
};

template <typename T>
void MoveTile(const T* src, T* dst, int64_t na, int64_t nb, int64_t src_a, int64_t src_b, int64_t dst_a,
              int64_t dst_b) {
  // Destination-contiguous inner loop (b is dst's most minor dimension).
  for (int64_t i = 0; i < na; ++i) {
    const T* s = src + i * src_a;
    T* d = dst + i * dst_a;
    for (int64_t j = 0; j < nb; ++j) d[j * dst_b] = s[j * src_b];
  }
}

template <typename T>
void MoveRun(const T* src, T* dst, int64_t n, int64_t src_a, int64_t dst_a) {
  if (src_a == 1 && dst_a == 1) {
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(T));
    return;
  }
  for (int64_t i = 0; i < n; ++i) dst[i * dst_a] = src[i * src_a];
}

template <typename T>
void MoveUnits(const Plan& plan, int64_t begin, int64_t end) {
  const size_t digits = plan.extent.size();
  std::vector<int64_t> digit(digits);
  int64_t rest = begin;
  for (size_t i = digits; i-- > 0;) {
    digit[i] = rest % plan.extent[i];
    rest /= plan.extent[i];
  }
  const T* src = reinterpret_cast<const T*>(plan.src);
  T* dst = reinterpret_cast<T*>(plan.dst);
  for (int64_t unit = begin; unit < end; ++unit) {
    int64_t so = 0, dof = 0;
    for (size_t i = 0; i < digits; ++i) {
      so += digit[i] * plan.src_step[i];
      dof += digit[i] * plan.dst_step[i];
    }
    if (plan.tiled) {
      // The last two digits are the tile indices along a and b; the steps above moved to the tile's corner.
      int64_t ia = digit[digits - 2] * kTile, ib = digit[digits - 1] * kTile;
      int64_t na = plan.a - ia < kTile ? plan.a - ia : kTile;
      int64_t nb = plan.b - ib < kTile ? plan.b - ib : kTile;
      MoveTile(src + so, dst + dof, na, nb, plan.src_a, plan.src_b, plan.dst_a, plan.dst_b);
    } else {
      MoveRun(src + so, dst + dof, plan.a, plan.src_a, plan.dst_a);
    }
    for (size_t i = digits; i-- > 0;) {
      if (++digit[i] < plan.extent[i]) break;
      digit[i] = 0;
    }
  }
}

void MoveRange(int64_t begin, int64_t end, void* ctx) {
  const Plan& plan = *static_cast<const Plan*>(ctx);
  switch (plan.bytes) {
    case 1:
      return MoveUnits<uint8_t>(plan, begin, end);
    case 2:
      return MoveUnits<uint16_t>(plan, begin, end);
    case 4:
      return MoveUnits<uint32_t>(plan, begin, end);
    case 8:
      return MoveUnits<uint64_t>(plan, begin, end);
    default:
      return MoveUnits<Element16>(plan, begin, end);
  }
}

// The dimension of size > 1 with the smallest stride, or -1 when every dimension has size 1.
int64_t MostMinor(int64_t rank, const int64_t* dims, const int64_t* strides) {
  int64_t best = -1;
  for (int64_t d = 0; d < rank; ++d) {
    if (dims[d] > 1 && (best < 0 || strides[d] < strides[best])) best = d;
  }
  return best;
}

}  // namespace

extern "C" {

int32_t xlac_rt_relayout(XlacRtDevice* dev, const void* src, void* dst, int64_t element_bytes, int64_t rank,
                         const int64_t* dims, const int64_t* src_strides, const int64_t* dst_strides) {
  if (element_bytes != 1 && element_bytes != 2 && element_bytes != 4 && element_bytes != 8 && element_bytes != 16) {
    return -1;
  }
  int64_t elements = 1;
  for (int64_t d = 0; d < rank; ++d) elements *= dims[d];
  if (elements == 0) return 0;
  Plan plan;
  plan.src = static_cast<const char*>(src);
  plan.dst = static_cast<char*>(dst);
  plan.bytes = element_bytes;
  const int64_t a = MostMinor(rank, dims, src_strides), b = MostMinor(rank, dims, dst_strides);
  if (a < 0) {  // a single element
    std::memcpy(dst, src, static_cast<size_t>(element_bytes));
    return 0;
  }
  plan.tiled = a != b;
  plan.a = dims[a];
  plan.src_a = src_strides[a];
  plan.dst_a = dst_strides[a];
  if (plan.tiled) {
    plan.b = dims[b];
    plan.src_b = src_strides[b];
    plan.dst_b = dst_strides[b];
  }
  // Outer dimensions in the destination's memory order (largest stride first; ties keep dimension order).
  std::vector<int64_t> outer;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != a && d != b && dims[d] > 1) outer.push_back(d);
  }
  for (size_t i = 1; i < outer.size(); ++i) {
    for (size_t j = i; j > 0 && dst_strides[outer[j]] > dst_strides[outer[j - 1]]; --j) {
      std::swap(outer[j], outer[j - 1]);
    }
  }
  for (int64_t d : outer) {
    plan.extent.push_back(dims[d]);
    plan.src_step.push_back(src_strides[d]);
    plan.dst_step.push_back(dst_strides[d]);
  }
  if (plan.tiled) {
    plan.extent.push_back((plan.a + kTile - 1) / kTile);
    plan.src_step.push_back(kTile * plan.src_a);
    plan.dst_step.push_back(kTile * plan.dst_a);
    plan.extent.push_back((plan.b + kTile - 1) / kTile);
    plan.src_step.push_back(kTile * plan.src_b);
    plan.dst_step.push_back(kTile * plan.dst_b);
  }
  int64_t units = 1;
  for (int64_t e : plan.extent) units *= e;
  if (elements < kMinParallelElements) dev = nullptr;
  xlac_rt_device_parallel_for(dev, units, MoveRange, &plan);
  return 0;
}

}  // extern "C"
