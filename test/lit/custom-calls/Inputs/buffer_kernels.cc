// Buffer kernels for the lit tests of --custom-call-src: whole operands and results as row-major views, an
// attribute struct filled from backend_config, a status, and declared sharding rules.
#include <xlac/custom_call.h>

#include <cstdint>

struct TopKAttrs {
  int32_t k;
  float scale;
};

// The k largest values of each row (descending, ties by lower column) times `scale`, and their columns.
xlac::Status TopK(xlac::Buffer<const float, 2> x, xlac::Buffer<float, 2> values, xlac::Buffer<int32_t, 2> indices,
                  const TopKAttrs& attrs) {
  if (attrs.k <= 0) return xlac::Status::Error("k must be positive, got %d", attrs.k);
  if (values.dim(1) != attrs.k || attrs.k > x.dim(1)) {
    return xlac::Status::Error("k = %d, but the row has %lld columns and the result %lld", attrs.k,
                               static_cast<long long>(x.dim(1)), static_cast<long long>(values.dim(1)));
  }
  for (int64_t row = 0; row < x.dim(0); ++row) {
    for (int64_t j = 0; j < attrs.k; ++j) {
      // The best element that ranks below the previous pick.
      int64_t best = -1;
      for (int64_t col = 0; col < x.dim(1); ++col) {
        const float v = x.at(row, col);
        if (j > 0) {
          const float last = x.at(row, indices.at(row, j - 1));
          if (v > last || (v == last && col <= indices.at(row, j - 1))) continue;
        }
        if (best < 0 || v > x.at(row, best)) best = col;
      }
      indices.at(row, j) = static_cast<int32_t>(best);
      values.at(row, j) = x.at(row, best) * attrs.scale;
    }
  }
  return xlac::Status::Ok();
}
XLAC_BUFFER_KERNEL("test.topk", TopK, XLAC_SHARDING_BATCH_DIMS(0));

// Any rank, no attributes, replicated (the default): the running sum of all elements in row-major order.
void CumSum(xlac::Buffer<const double> x, xlac::Buffer<double> out) {
  double sum = 0;
  for (int64_t i = 0; i < x.size(); ++i) out[i] = sum += x[i];
}
XLAC_BUFFER_KERNEL("test.cumsum", CumSum);

// Declared elementwise: each result element depends on the operand element at its index only, so any sharding runs
// per shard.
void Triple(xlac::Buffer<const float> x, xlac::Buffer<float> out) {
  for (int64_t i = 0; i < x.size(); ++i) out[i] = 3.0f * x[i];
}
XLAC_BUFFER_KERNEL("test.triple", Triple, XLAC_SHARDING_ELEMENTWISE);
