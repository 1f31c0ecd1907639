// The Winograd transforms and convolution (ir/winograd.h): for every tile, its n x n values; the input transform along
// the tile's columns (d B), then its rows (B^T .), the output transform along rows (A^T M), then columns (. A); every
// 1-D output starts from +0 and takes acc = fma(coef, value, acc) in increasing index order, skipping zero coefficients
// (an explicit fused multiply-add, rounded once: this library otherwise never contracts a * b + c).
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

// V [n*n, C, N*T0*T1] of the image `in` (row-major strides `strides`).
void InputTransform(const WinogradGeometry& g, const float* in, const std::vector<int64_t>& strides, float* out) {
  const int64_t n = g.n, m = g.m;
  const int64_t tiles = g.tiles[0] * g.tiles[1], row_length = g.tile_count();
  const int64_t point_stride = g.features * row_length;
  const int64_t sb = strides[g.batch_dim], sf = strides[g.feature_dim];
  const int64_t sh = strides[g.spatial_dims[0]], sw = strides[g.spatial_dims[1]];
  const std::vector<float> bt = WinogradBtF32(m);
  float d[kMaxN][kMaxN], t[kMaxN][kMaxN];
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
}

// The image `out` (row-major strides `strides`) of M [n*n, K, N*T0*T1] at `in`.
void OutputTransform(const WinogradGeometry& g, const float* in, const std::vector<int64_t>& strides, float* out) {
  const int64_t n = g.n, m = g.m;
  const int64_t tiles = g.tiles[0] * g.tiles[1], row_length = g.tile_count();
  const int64_t point_stride = g.features * row_length;
  const int64_t sb = strides[g.batch_dim], sf = strides[g.feature_dim];
  const int64_t sh = strides[g.spatial_dims[0]], sw = strides[g.spatial_dims[1]];
  const std::vector<float> at = WinogradAtF32(m);
  float d[kMaxN][kMaxN], t[kMaxN][kMaxN];
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
}

// "xlac.winograd_conv": V, then M[p][k][t] = sum over c in order of U'[p][c][k] * V[p][c][t] (from +0, one fma per
// channel), then the output transform.
absl::StatusOr<Literal> EvalWinogradConv(const Instruction& inst, Operands operands) {
  absl::StatusOr<WinogradConvGeometry> geometry = WinogradConvGeometryOf(inst);
  if (!geometry.ok()) return Error(inst, "{}", std::string(geometry.status().message()));
  if (operands.size() != 2) return Error(inst, "takes two operands");
  const WinogradGeometry& gi = geometry->input;
  const WinogradGeometry& go = geometry->output;
  const int64_t points = gi.n * gi.n, channels = gi.features, features = go.features, columns = gi.tile_count();
  std::vector<float> v(static_cast<size_t>(points * channels * columns));
  InputTransform(gi, reinterpret_cast<const float*>(operands[0]->raw_data()), RowMajorStrides(operands[0]->shape()),
                 v.data());
  const auto* u = reinterpret_cast<const float*>(operands[1]->raw_data());
  std::vector<float> mm(static_cast<size_t>(points * features * columns));
  for (int64_t p = 0; p < points; ++p) {
    for (int64_t k = 0; k < features; ++k) {
      float* row = &mm[(p * features + k) * columns];
      for (int64_t t = 0; t < columns; ++t) {
        float acc = 0.0f;
        for (int64_t c = 0; c < channels; ++c) {
          acc = std::fma(u[(p * channels + c) * features + k], v[(p * channels + c) * columns + t], acc);
        }
        row[t] = acc;
      }
    }
  }
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written below
  OutputTransform(go, mm.data(), RowMajorStrides(result.shape()), reinterpret_cast<float*>(result.mutable_raw_data()));
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalWinogradTransform(const Instruction& inst, Operands operands) {
  if (inst.StringAttr("custom_call_target") == kWinogradConvTarget) return EvalWinogradConv(inst, operands);
  absl::StatusOr<WinogradGeometry> geometry = WinogradGeometryOf(inst);
  if (!geometry.ok()) return Error(inst, "{}", std::string(geometry.status().message()));
  if (operands.size() != 1) return Error(inst, "takes one operand");
  const WinogradGeometry& g = *geometry;
  const bool input = inst.StringAttr("custom_call_target") == kWinogradInputTarget;
  const Literal& operand = *operands[0];
  Literal result = Literal::CreateUninitialized(inst.shape());  // every element is written below
  const auto* in = reinterpret_cast<const float*>(operand.raw_data());
  auto* out = reinterpret_cast<float*>(result.mutable_raw_data());
  if (input) {
    InputTransform(g, in, RowMajorStrides(operand.shape()), out);
  } else {
    OutputTransform(g, in, RowMajorStrides(result.shape()), out);
  }
  return result;
}

}  // namespace xlac::interp
