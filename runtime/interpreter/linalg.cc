// cholesky, triangular-solve and the batch-norm ops, computed in double (complex<double>)
// precision and rounded to the element type once.
#include <algorithm>
#include <cmath>
#include <complex>
#include <optional>

#include "runtime/cpu/xlac_runtime_kernels.h"
#include "runtime/interpreter/fast_kernels.h"
#include "runtime/interpreter/internal.h"

#define XLAC_BN_INLINE inline __attribute__((always_inline))

namespace xlac::interp {
namespace {

using cd = std::complex<double>;

std::vector<cd> Load(const Literal& lit) {
  std::vector<cd> out(static_cast<size_t>(lit.element_count()));
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    switch (lit.shape().element_type) {
      case PrimitiveType::kC64:
        out[i] = cd(LoadOne<c64>(lit, i));
        break;
      case PrimitiveType::kC128:
        out[i] = LoadOne<c128>(lit, i);
        break;
      default:
        out[i] = cd(lit.GetAsDouble(i), 0);
        break;
    }
  }
  return out;
}

void Store(Literal& lit, const std::vector<cd>& v) {
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    switch (lit.shape().element_type) {
      case PrimitiveType::kC64:
        StoreOne<c64>(lit, i, c64(static_cast<float>(v[i].real()), static_cast<float>(v[i].imag())));
        break;
      case PrimitiveType::kC128:
        StoreOne<c128>(lit, i, v[i]);
        break;
      default:
        lit.SetFromDouble(i, v[i].real());
        break;
    }
  }
}

// cholesky and triangular-solve run the runtime's library kernels (runtime/cpu/linalg.cc), which compiled code calls
// too. Element types without a kernel of their own (the 8-bit floats) go through the c128 kernel on the values
// Load widens exactly, rounded back by Store: the same complex<double> computation.
using CholeskyKernel = void (*)(const void*, void*, int64_t, int64_t, int32_t);
using TriangularSolveKernel = void (*)(const void*, const void*, void*, int64_t, int64_t, int64_t, int64_t, int32_t,
                                       int32_t, int32_t, int32_t);

CholeskyKernel CholeskyFor(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32:
      return &xlac_rt_cholesky_f32;
    case PrimitiveType::kF64:
      return &xlac_rt_cholesky_f64;
    case PrimitiveType::kC64:
      return &xlac_rt_cholesky_c64;
    case PrimitiveType::kC128:
      return &xlac_rt_cholesky_c128;
    case PrimitiveType::kBF16:
      return &xlac_rt_cholesky_bf16;
    case PrimitiveType::kF16:
      return &xlac_rt_cholesky_f16;
    default:
      return nullptr;
  }
}

TriangularSolveKernel TriangularSolveFor(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32:
      return &xlac_rt_triangular_solve_f32;
    case PrimitiveType::kF64:
      return &xlac_rt_triangular_solve_f64;
    case PrimitiveType::kC64:
      return &xlac_rt_triangular_solve_c64;
    case PrimitiveType::kC128:
      return &xlac_rt_triangular_solve_c128;
    case PrimitiveType::kBF16:
      return &xlac_rt_triangular_solve_bf16;
    case PrimitiveType::kF16:
      return &xlac_rt_triangular_solve_f16;
    default:
      return nullptr;
  }
}

// A = L L^H (lower) or U^H U (upper); the other triangle of the result is zero.
absl::StatusOr<Literal> Cholesky(const Instruction& inst, const Literal& a) {
  const std::vector<int64_t>& dims = a.shape().dimensions;
  if (dims.size() < 2 || dims[dims.size() - 1] != dims[dims.size() - 2]) return Error(inst, "needs square matrices");
  bool lower = BoolAttr(inst, "lower", false);
  int64_t n = dims.back();
  int64_t batches = n == 0 ? 0 : a.element_count() / (n * n);
  Literal result(inst.shape());
  if (CholeskyKernel kernel = CholeskyFor(a.shape().element_type); kernel != nullptr) {
    kernel(a.raw_data(), result.mutable_raw_data(), batches, n, lower);
    return result;
  }
  std::vector<cd> v = Load(a), out(v.size(), cd(0));
  xlac_rt_cholesky_c128(v.data(), out.data(), batches, n, lower);
  Store(result, out);
  return result;
}

// Solves op(A) X = B (left_side) or X op(A) = B, using only the `lower` or upper triangle of A.
absl::StatusOr<Literal> TriangularSolve(const Instruction& inst, const Literal& a, const Literal& b) {
  const std::vector<int64_t>& ad = a.shape().dimensions;
  const std::vector<int64_t>& bd = b.shape().dimensions;
  if (ad.size() < 2 || bd.size() != ad.size()) return Error(inst, "malformed operands");
  bool left = BoolAttr(inst, "left_side", false), lower = BoolAttr(inst, "lower", false);
  bool unit = BoolAttr(inst, "unit_diagonal", false);
  std::string_view transpose = TextAttr(inst, "transpose_a");
  int32_t trans = transpose == "TRANSPOSE" ? XLAC_RT_TRANSPOSE
                  : transpose == "ADJOINT" ? XLAC_RT_ADJOINT
                                           : XLAC_RT_NO_TRANSPOSE;
  int64_t m = ad.back();
  int64_t rows = bd[bd.size() - 2], cols = bd.back();
  int64_t batches = rows * cols == 0 ? 0 : b.element_count() / (rows * cols);
  Literal result(inst.shape());
  if (TriangularSolveKernel kernel = TriangularSolveFor(a.shape().element_type); kernel != nullptr) {
    kernel(a.raw_data(), b.raw_data(), result.mutable_raw_data(), batches, m, rows, cols, left, lower, unit, trans);
    return result;
  }
  std::vector<cd> av = Load(a), bv = Load(b);
  xlac_rt_triangular_solve_c128(av.data(), bv.data(), bv.data(), batches, m, rows, cols, left, lower, unit, trans);
  Store(result, bv);
  return result;
}

// Per-feature statistics helpers over all dimensions but `feature`.
struct FeatureView {
  int64_t features, outer, inner;
  // for (o, f, i) in row-major order over (outer, features, inner): fn(f, linear index). The linear index walks the
  // array in order, so per-feature accumulations see their elements in row-major order.
  template <typename Fn>
  void ForEach(Fn&& fn) const {
    int64_t i = 0;
    for (int64_t o = 0; o < outer; ++o) {
      for (int64_t f = 0; f < features; ++f) {
        for (int64_t j = 0; j < inner; ++j, ++i) fn(f, i);
      }
    }
  }
};

FeatureView ViewOf(const Shape& shape, int64_t feature) {
  FeatureView v{shape.dimensions[feature], 1, 1};
  for (int64_t d = 0; d < feature; ++d) v.outer *= shape.dimensions[d];
  for (size_t d = static_cast<size_t>(feature) + 1; d < shape.dimensions.size(); ++d) v.inner *= shape.dimensions[d];
  return v;
}

std::vector<double> LoadReal(const Literal& lit) {
  std::vector<double> out(static_cast<size_t>(lit.element_count()));
  if (lit.shape().element_type == PrimitiveType::kF32) {
    const auto* data = reinterpret_cast<const float*>(lit.raw_data());
    for (size_t i = 0; i < out.size(); ++i) out[i] = data[i];
    return out;
  }
  for (int64_t i = 0; i < lit.element_count(); ++i) out[i] = lit.GetAsDouble(i);
  return out;
}

// Element i of a literal as a double: what GetAsDouble gives, f32 read directly.
class RealReader {
 public:
  explicit RealReader(const Literal& lit)
      : lit_(lit),
        f32_(lit.shape().element_type == PrimitiveType::kF32 ? reinterpret_cast<const float*>(lit.raw_data())
                                                             : nullptr) {}
  double operator()(int64_t i) const { return f32_ != nullptr ? f32_[i] : lit_.GetAsDouble(i); }

 private:
  const Literal& lit_;
  const float* f32_;
};

// A fresh literal written element by element from doubles, rounded as StoreReal rounds.
struct RealWriter {
  explicit RealWriter(const Shape& shape)
      : lit(Literal::CreateUninitialized(shape)),
        f32(shape.element_type == PrimitiveType::kF32 ? reinterpret_cast<float*>(lit.mutable_raw_data()) : nullptr) {}
  void operator()(int64_t i, double v) {
    if (f32 != nullptr) {
      f32[i] = static_cast<float>(v);
    } else {
      lit.SetFromDouble(i, v);
    }
  }
  Literal lit;
  float* f32;
};

Literal StoreReal(const Shape& shape, const std::vector<double>& v) {
  Literal lit = Literal::CreateUninitialized(shape);  // v has every element
  if (shape.element_type == PrimitiveType::kF32) {
    auto* data = reinterpret_cast<float*>(lit.mutable_raw_data());
    for (size_t i = 0; i < v.size(); ++i) data[i] = static_cast<float>(v[i]);  // round to nearest, as SetFromDouble
    return lit;
  }
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.SetFromDouble(i, v[i]);
  return lit;
}

// ---- f32 batch norm: the generic loops' double expressions in the same order, each feature's sums in registers ----

// Calls fn(f0, n) for groups of up to kBnGroup consecutive features covering [0, features), split over threads. A
// feature's sums stay sequential in one call, so who computes which group never changes a result.
constexpr int kBnGroup = 4;
template <typename Fn>
void ForFeatureGroups(int64_t features, int64_t threads, const Fn& fn) {
  int64_t groups = (features + kBnGroup - 1) / kBnGroup;
  ParallelBlocks(groups, threads, [&](int64_t g) {
    int64_t f0 = g * kBnGroup;
    fn(f0, std::min<int64_t>(kBnGroup, features - f0));
  });
}

// Calls fn(f, begin, end) for every row (outer index, feature f) of the elements [begin, end), blocks of rows over
// threads (elementwise work: every element is computed on its own).
template <typename Fn>
void ForRows(const FeatureView& v, int64_t threads, const Fn& fn) {
  int64_t rows = v.outer * v.features;
  int64_t per_block = std::max<int64_t>(1, (int64_t{1} << 16) / std::max<int64_t>(1, v.inner));
  ParallelBlocks((rows + per_block - 1) / per_block, threads, [&](int64_t b) {
    for (int64_t r = b * per_block; r < std::min(rows, (b + 1) * per_block); ++r) {
      fn(r % v.features, r * v.inner, (r + 1) * v.inner);
    }
  });
}

// acc[k] (k < N) folded over feature f0 + k's elements in row-major order: step(k, acc, linear index) per element.
template <int N, typename Step>
XLAC_BN_INLINE void FoldFeatures(const FeatureView& v, int64_t f0, double* acc, const Step& step) {
  double a[2 * N];
  for (int k = 0; k < 2 * N; ++k) a[k] = acc[k];
  for (int64_t o = 0; o < v.outer; ++o) {
    int64_t row = (o * v.features + f0) * v.inner;
    for (int64_t j = 0; j < v.inner; ++j) {
      for (int k = 0; k < N; ++k) step(k, a, row + k * v.inner + j);
    }
  }
  for (int k = 0; k < 2 * N; ++k) acc[k] = a[k];
}

// Up to two sums per feature: acc[2k] and acc[2k + 1] of feature f0 + k, for n features.
template <typename Step>
void FoldGroup(const FeatureView& v, int64_t f0, int64_t n, double* acc, const Step& step) {
  if (n == kBnGroup) {
    FoldFeatures<kBnGroup>(v, f0, acc, step);
  } else {
    for (int64_t k = 0; k < n; ++k) FoldFeatures<1>(v, f0 + k, acc + 2 * k, step);
  }
}

absl::StatusOr<Literal> BatchNormF32(const Instruction& inst, Operands operands, const FeatureView& view, double eps,
                                     int64_t threads) {
  const float* x = reinterpret_cast<const float*>(operands[0]->raw_data());
  double count = static_cast<double>(view.outer * view.inner);
  size_t features = static_cast<size_t>(view.features);
  Shape feature_shape = Shape::Array(PrimitiveType::kF32, {view.features});
  Literal out = Literal::CreateUninitialized(operands[0]->shape());  // every element is written
  float* y = reinterpret_cast<float*>(out.mutable_raw_data());
  if (inst.opcode() == Opcode::kBatchNormTraining) {
    std::vector<double> scale = LoadReal(*operands[1]), offset = LoadReal(*operands[2]);
    std::vector<double> mean(features, 0), var(features, 0);
    ForFeatureGroups(view.features, threads, [&](int64_t f0, int64_t n) {
      double acc[2 * kBnGroup] = {};
      FoldGroup(view, f0, n, acc, [&](int k, double* a, int64_t i) { a[2 * k] += x[i]; });
      for (int64_t k = 0; k < n; ++k) mean[f0 + k] = acc[2 * k] / count;
      double m[kBnGroup] = {};
      for (int64_t k = 0; k < n; ++k) m[k] = mean[f0 + k];
      double acc2[2 * kBnGroup] = {};
      // FoldGroup's k is the feature's place in the group: mean m[k] (single features: acc2 + 2k, m[k] via f0 + k).
      if (n == kBnGroup) {
        FoldFeatures<kBnGroup>(view, f0, acc2, [&](int k, double* a, int64_t i) {
          double c = x[i] - m[k];
          a[2 * k] += c * c;
        });
      } else {
        for (int64_t k = 0; k < n; ++k) {
          double mk = m[k];
          FoldFeatures<1>(view, f0 + k, acc2 + 2 * k, [&](int, double* a, int64_t i) {
            double c = x[i] - mk;
            a[0] += c * c;
          });
        }
      }
      for (int64_t k = 0; k < n; ++k) var[f0 + k] = acc2[2 * k] / count;
    });
    std::vector<double> root(features);
    for (size_t f = 0; f < features; ++f) root[f] = std::sqrt(var[f] + eps);
    ForRows(view, threads, [&](int64_t f, int64_t b, int64_t e) {
      double m = mean[f], r = root[f], sc = scale[f], of = offset[f];
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>((x[i] - m) / r * sc + of);
    });
    std::vector<Literal> parts;
    parts.push_back(std::move(out));
    parts.push_back(StoreReal(feature_shape, mean));
    parts.push_back(StoreReal(feature_shape, var));
    return Literal::CreateTuple(std::move(parts));
  }
  if (inst.opcode() == Opcode::kBatchNormInference) {
    std::vector<double> scale = LoadReal(*operands[1]), offset = LoadReal(*operands[2]);
    std::vector<double> mean = LoadReal(*operands[3]), var = LoadReal(*operands[4]);
    std::vector<double> root(features);
    for (size_t f = 0; f < features; ++f) root[f] = std::sqrt(var[f] + eps);
    ForRows(view, threads, [&](int64_t f, int64_t b, int64_t e) {
      double m = mean[f], r = root[f], sc = scale[f], of = offset[f];
      for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>((x[i] - m) / r * sc + of);
    });
    return out;
  }
  // batch-norm-grad
  std::vector<double> scale = LoadReal(*operands[1]), mean = LoadReal(*operands[2]), var = LoadReal(*operands[3]);
  const float* dy = reinterpret_cast<const float*>(operands[4]->raw_data());
  std::vector<double> sum_dy(features, 0), sum_dy_xc(features, 0);
  ForFeatureGroups(view.features, threads, [&](int64_t f0, int64_t n) {
    double acc[2 * kBnGroup] = {};
    double m[kBnGroup] = {};
    for (int64_t k = 0; k < n; ++k) m[k] = mean[f0 + k];
    if (n == kBnGroup) {
      FoldFeatures<kBnGroup>(view, f0, acc, [&](int k, double* a, int64_t i) {
        double d = dy[i];
        a[2 * k] += d;
        a[2 * k + 1] += d * (x[i] - m[k]);
      });
    } else {
      for (int64_t k = 0; k < n; ++k) {
        double mk = m[k];
        FoldFeatures<1>(view, f0 + k, acc + 2 * k, [&](int, double* a, int64_t i) {
          double d = dy[i];
          a[0] += d;
          a[1] += d * (x[i] - mk);
        });
      }
    }
    for (int64_t k = 0; k < n; ++k) {
      sum_dy[f0 + k] = acc[2 * k];
      sum_dy_xc[f0 + k] = acc[2 * k + 1];
    }
  });
  std::vector<double> grad_scale(features), factor(features);
  for (size_t f = 0; f < features; ++f) {
    grad_scale[f] = sum_dy_xc[f] / std::sqrt(var[f] + eps);
    double inv = 1 / std::sqrt(var[f] + eps);
    factor[f] = scale[f] * inv / count;
  }
  ForRows(view, threads, [&](int64_t f, int64_t b, int64_t e) {
    double fa = factor[f], sd = sum_dy[f], m = mean[f], sx = sum_dy_xc[f], ve = var[f] + eps;
    for (int64_t i = b; i < e; ++i) y[i] = static_cast<float>(fa * (count * dy[i] - sd - (x[i] - m) * sx / ve));
  });
  std::vector<Literal> parts;
  parts.push_back(std::move(out));
  parts.push_back(StoreReal(feature_shape, grad_scale));
  parts.push_back(StoreReal(feature_shape, sum_dy));
  return Literal::CreateTuple(std::move(parts));
}

}  // namespace

absl::StatusOr<Literal> EvalLinalg(const Instruction& inst, Operands operands) {
  if (inst.opcode() == Opcode::kCholesky) return Cholesky(inst, *operands[0]);
  return TriangularSolve(inst, *operands[0], *operands[1]);
}

absl::StatusOr<Literal> EvalBatchNorm(const Instruction& inst, Operands operands, int64_t threads) {
  double eps = 0;
  if (const AttrValue* e = inst.FindAttr("epsilon"); e != nullptr && e->kind == AttrKind::kFloat) {
    eps = static_cast<float>(e->get<double>());
  }
  int64_t feature = IntAttr(inst, "feature_index", 0);
  const Literal& xl = *operands[0];
  if (feature < 0 || feature >= static_cast<int64_t>(xl.shape().dimensions.size())) {
    return Error(inst, "feature_index {} out of range", feature);
  }
  // Computed in double, element by element in row-major order, per-feature sums accumulated in that order; the
  // operands are read and the results written in place (no array-sized double copies: a MobileNetV2 step's batch
  // norms spent most of their time allocating and zero-filling those). Per-feature factors are the same doubles
  // the per-element expressions computed, so the bits are too.
  FeatureView view = ViewOf(xl.shape(), feature);
  if (xl.shape().element_type == PrimitiveType::kF32 &&
      (inst.opcode() != Opcode::kBatchNormGrad || operands[4]->shape().element_type == PrimitiveType::kF32)) {
    return BatchNormF32(inst, operands, view, eps, threads);
  }
  RealReader x(xl);
  double count = static_cast<double>(view.outer * view.inner);
  Shape feature_shape = Shape::Array(xl.shape().element_type, {view.features});
  std::vector<double> mean(static_cast<size_t>(view.features), 0);
  auto per_feature_mean = [&](std::vector<double>& sum) {
    for (double& s : sum) s /= count;
  };
  switch (inst.opcode()) {
    case Opcode::kBatchNormTraining: {
      std::vector<double> scale = LoadReal(*operands[1]), offset = LoadReal(*operands[2]);
      view.ForEach([&](int64_t f, int64_t i) { mean[f] += x(i); });
      per_feature_mean(mean);
      std::vector<double> var(mean.size(), 0);
      view.ForEach([&](int64_t f, int64_t i) {
        double c = x(i) - mean[f];
        var[f] += c * c;
      });
      per_feature_mean(var);
      std::vector<double> root(mean.size());
      for (size_t f = 0; f < root.size(); ++f) root[f] = std::sqrt(var[f] + eps);
      RealWriter out(xl.shape());
      view.ForEach([&](int64_t f, int64_t i) { out(i, (x(i) - mean[f]) / root[f] * scale[f] + offset[f]); });
      std::vector<Literal> parts;
      parts.push_back(std::move(out.lit));
      parts.push_back(StoreReal(feature_shape, mean));
      parts.push_back(StoreReal(feature_shape, var));
      return Literal::CreateTuple(std::move(parts));
    }
    case Opcode::kBatchNormInference: {
      std::vector<double> scale = LoadReal(*operands[1]), offset = LoadReal(*operands[2]);
      mean = LoadReal(*operands[3]);
      std::vector<double> var = LoadReal(*operands[4]);
      std::vector<double> root(mean.size());
      for (size_t f = 0; f < root.size(); ++f) root[f] = std::sqrt(var[f] + eps);
      RealWriter out(xl.shape());
      view.ForEach([&](int64_t f, int64_t i) { out(i, (x(i) - mean[f]) / root[f] * scale[f] + offset[f]); });
      return std::move(out.lit);
    }
    case Opcode::kBatchNormGrad: {
      std::vector<double> scale = LoadReal(*operands[1]);
      mean = LoadReal(*operands[2]);
      std::vector<double> var = LoadReal(*operands[3]);
      RealReader dy(*operands[4]);
      std::vector<double> sum_dy(static_cast<size_t>(view.features), 0), sum_dy_xc(sum_dy);
      view.ForEach([&](int64_t f, int64_t i) {
        sum_dy[f] += dy(i);
        sum_dy_xc[f] += dy(i) * (x(i) - mean[f]);
      });
      std::vector<double> grad_scale(sum_dy.size()), grad_offset = sum_dy, factor(sum_dy.size());
      for (size_t f = 0; f < sum_dy.size(); ++f) {
        grad_scale[f] = sum_dy_xc[f] / std::sqrt(var[f] + eps);
        double inv = 1 / std::sqrt(var[f] + eps);
        factor[f] = scale[f] * inv / count;
      }
      RealWriter grad_x(xl.shape());
      view.ForEach([&](int64_t f, int64_t i) {
        grad_x(i, factor[f] * (count * dy(i) - sum_dy[f] - (x(i) - mean[f]) * sum_dy_xc[f] / (var[f] + eps)));
      });
      std::vector<Literal> parts;
      parts.push_back(std::move(grad_x.lit));
      parts.push_back(StoreReal(feature_shape, grad_scale));
      parts.push_back(StoreReal(feature_shape, grad_offset));
      return Literal::CreateTuple(std::move(parts));
    }
    default:
      return Unsupported(inst, "not a batch-norm op");
  }
}

}  // namespace xlac::interp
