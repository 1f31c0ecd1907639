// The Winograd transforms (ir/winograd.h): for every tile, its n x n values; the input transform along the tile's
// columns (d B), then its rows (B^T .), the output transform along rows (A^T M), then columns (. A); every 1-D output
// starts from +0 and takes acc = fma(coef, value, acc) in increasing index order, skipping zero coefficients (an
// explicit fused multiply-add, rounded once: this library otherwise never contracts a * b + c).
#include "runtime/interpreter/winograd.h"

#include <cmath>
#include <string>
#include <vector>

#include "ir/winograd.h"

namespace xlac::interp {
namespace {

constexpr int kMaxN = 8;

// sum over j of coef[j] * values[j * step]: from +0, one fma per nonzero coefficient, in order.
float Combine(const float* coef, const float* values, int64_t step, int64_t n) {
  float acc = 0.0f;
  for (int64_t j = 0; j < n; ++j) {
    if (coef[j] != 0.0f) acc = std::fma(coef[j], values[j * step], acc);
  }
  return acc;
}

// Row-major element strides of `shape`'s dimensions.
std::vector<int64_t> RowMajorStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.dimensions.size(), 1);
  for (size_t d = shape.dimensions.size(); d-- > 1;) strides[d - 1] = strides[d] * shape.dimensions[d];
  return strides;
}

}  // namespace

absl::StatusOr<Literal> EvalWinogradTransform(const Instruction& inst, Operands operands) {
  absl::StatusOr<WinogradGeometry> geometry = WinogradGeometryOf(inst);
  if (!geometry.ok()) return Error(inst, "{}", std::string(geometry.status().message()));
  if (operands.size() != 1) return Error(inst, "takes one operand");
  const WinogradGeometry& g = *geometry;
  const bool input = inst.StringAttr("custom_call_target") == kWinogradInputTarget;
  const int64_t n = g.n, m = g.m;
  const int64_t tiles = g.tiles[0] * g.tiles[1], row_length = g.tile_count();
  const int64_t point_stride = g.features * row_length;  // between transform points in V or M
  const Literal& operand = *operands[0];
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written below
  const auto* in = reinterpret_cast<const float*>(operand.raw_data());
  auto* out = reinterpret_cast<float*>(result.mutable_raw_data());
  const std::vector<int64_t> strides = RowMajorStrides(input ? operand.shape() : result.shape());
  const int64_t sb = strides[g.batch_dim], sf = strides[g.feature_dim];
  const int64_t sh = strides[g.spatial_dims[0]], sw = strides[g.spatial_dims[1]];
  float d[kMaxN][kMaxN], t[kMaxN][kMaxN];
  if (input) {
    const std::vector<float> bt = WinogradBtF32(m);
    for (int64_t i = 0; i < g.batch; ++i) {
      for (int64_t c = 0; c < g.features; ++c) {
        for (int64_t ty = 0; ty < g.tiles[0]; ++ty) {
          for (int64_t tx = 0; tx < g.tiles[1]; ++tx) {
            for (int64_t k = 0; k < n; ++k) {
              const int64_t row = m * ty - g.padding_low[0] + k;
              for (int64_t l = 0; l < n; ++l) {
                const int64_t col = m * tx - g.padding_low[1] + l;
                const bool inside = row >= 0 && row < g.image_size[0] && col >= 0 && col < g.image_size[1];
                d[k][l] = inside ? in[i * sb + c * sf + row * sh + col * sw] : 0.0f;
              }
            }
            for (int64_t k = 0; k < n; ++k) {
              for (int64_t b = 0; b < n; ++b) t[k][b] = Combine(&bt[b * n], d[k], 1, n);
            }
            const int64_t column = c * row_length + i * tiles + ty * g.tiles[1] + tx;
            for (int64_t a = 0; a < n; ++a) {
              for (int64_t b = 0; b < n; ++b) {
                out[(a * n + b) * point_stride + column] = Combine(&bt[a * n], &t[0][b], kMaxN, n);
              }
            }
          }
        }
      }
    }
    return result;
  }
  const std::vector<float> at = WinogradAtF32(m);
  for (int64_t i = 0; i < g.batch; ++i) {
    for (int64_t k = 0; k < g.features; ++k) {
      for (int64_t ty = 0; ty < g.tiles[0]; ++ty) {
        for (int64_t tx = 0; tx < g.tiles[1]; ++tx) {
          const int64_t column = k * row_length + i * tiles + ty * g.tiles[1] + tx;
          for (int64_t a = 0; a < n; ++a) {
            for (int64_t b = 0; b < n; ++b) d[a][b] = in[(a * n + b) * point_stride + column];
          }
          for (int64_t r = 0; r < m; ++r) {
            for (int64_t b = 0; b < n; ++b) t[r][b] = Combine(&at[r * n], &d[0][b], kMaxN, n);
          }
          for (int64_t r = 0; r < m && m * ty + r < g.image_size[0]; ++r) {
            for (int64_t q = 0; q < m && m * tx + q < g.image_size[1]; ++q) {
              out[i * sb + k * sf + (m * ty + r) * sh + (m * tx + q) * sw] = Combine(&at[q * n], t[r], 1, n);
            }
          }
        }
      }
    }
  }
  return result;
}

}  // namespace xlac::interp
