// cholesky, triangular-solve and the batch-norm ops, computed in double (complex<double>) precision and rounded to
// the element type once.
#include <cmath>
#include <complex>

#include "runtime/interpreter/internal.h"

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

// A = L L^H (lower) or U^H U (upper); the other triangle of the result is zero.
absl::StatusOr<Literal> Cholesky(const Instruction& inst, const Literal& a) {
  const std::vector<int64_t>& dims = a.shape().dimensions;
  if (dims.size() < 2 || dims[dims.size() - 1] != dims[dims.size() - 2]) return Error(inst, "needs square matrices");
  bool lower = BoolAttr(inst, "lower", false);
  int64_t n = dims.back();
  std::vector<cd> v = Load(a), out(v.size(), cd(0));
  int64_t batches = n == 0 ? 0 : a.element_count() / (n * n);
  for (int64_t b = 0; b < batches; ++b) {
    // Work on the lower factor; for upper, read A transposed (conjugated) and write the factor back transposed.
    auto in = [&](int64_t i, int64_t j) {
      return lower ? v[b * n * n + i * n + j] : std::conj(v[b * n * n + j * n + i]);
    };
    std::vector<cd> l(static_cast<size_t>(n * n), cd(0));
    for (int64_t j = 0; j < n; ++j) {
      cd d = in(j, j);
      for (int64_t k = 0; k < j; ++k) d -= l[j * n + k] * std::conj(l[j * n + k]);
      double diag = std::sqrt(d.real());  // NaN when the matrix is not positive definite
      l[j * n + j] = diag;
      for (int64_t i = j + 1; i < n; ++i) {
        cd s = in(i, j);
        for (int64_t k = 0; k < j; ++k) s -= l[i * n + k] * std::conj(l[j * n + k]);
        l[i * n + j] = s / diag;
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        out[b * n * n + i * n + j] = lower ? l[i * n + j] : std::conj(l[j * n + i]);
      }
    }
  }
  Literal result(inst.shape());
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
  bool trans = transpose == "TRANSPOSE" || transpose == "ADJOINT";
  bool conj = transpose == "ADJOINT";
  int64_t m = ad.back();
  int64_t rows = bd[bd.size() - 2], cols = bd.back();
  std::vector<cd> av = Load(a), bv = Load(b);
  int64_t batches = rows * cols == 0 ? 0 : b.element_count() / (rows * cols);
  for (int64_t bt = 0; bt < batches; ++bt) {
    // op(A)[i][j], reading only the stored triangle.
    auto op = [&](int64_t i, int64_t j) -> cd {
      int64_t r = trans ? j : i, c = trans ? i : j;
      if (r == c) return unit ? cd(1) : (conj ? std::conj(av[bt * m * m + r * m + c]) : av[bt * m * m + r * m + c]);
      if ((lower && c > r) || (!lower && c < r)) return 0;
      cd v = av[bt * m * m + r * m + c];
      return conj ? std::conj(v) : v;
    };
    bool op_lower = lower != trans;
    cd* x = bv.data() + bt * rows * cols;
    if (left) {
      // op(A) is m x m, X is m x cols.
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t step = 0; step < m; ++step) {
          int64_t i = op_lower ? step : m - 1 - step;
          cd s = x[i * cols + c];
          for (int64_t k = 0; k < m; ++k) {
            if ((op_lower && k < i) || (!op_lower && k > i)) s -= op(i, k) * x[k * cols + c];
          }
          x[i * cols + c] = s / op(i, i);
        }
      }
    } else {
      // X op(A) = B: X is rows x m; column j of X depends on the later (lower) or earlier (upper) columns.
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t step = 0; step < m; ++step) {
          int64_t j = op_lower ? m - 1 - step : step;
          cd s = x[r * cols + j];
          for (int64_t k = 0; k < m; ++k) {
            if ((op_lower && k > j) || (!op_lower && k < j)) s -= x[r * cols + k] * op(k, j);
          }
          x[r * cols + j] = s / op(j, j);
        }
      }
    }
  }
  Literal result(inst.shape());
  Store(result, bv);
  return result;
}

// Per-feature statistics helpers over all dimensions but `feature`.
struct FeatureView {
  int64_t features, outer, inner;
  int64_t Feature(int64_t i) const { return (i / inner) % features; }
};

FeatureView ViewOf(const Shape& shape, int64_t feature) {
  FeatureView v{shape.dimensions[feature], 1, 1};
  for (int64_t d = 0; d < feature; ++d) v.outer *= shape.dimensions[d];
  for (size_t d = static_cast<size_t>(feature) + 1; d < shape.dimensions.size(); ++d) v.inner *= shape.dimensions[d];
  return v;
}

std::vector<double> LoadReal(const Literal& lit) {
  std::vector<double> out(static_cast<size_t>(lit.element_count()));
  for (int64_t i = 0; i < lit.element_count(); ++i) out[i] = lit.GetAsDouble(i);
  return out;
}

Literal StoreReal(const Shape& shape, const std::vector<double>& v) {
  Literal lit(shape);
  for (int64_t i = 0; i < lit.element_count(); ++i) lit.SetFromDouble(i, v[i]);
  return lit;
}

}  // namespace

absl::StatusOr<Literal> EvalLinalg(const Instruction& inst, Operands operands) {
  if (inst.opcode() == Opcode::kCholesky) return Cholesky(inst, *operands[0]);
  return TriangularSolve(inst, *operands[0], *operands[1]);
}

absl::StatusOr<Literal> EvalBatchNorm(const Instruction& inst, Operands operands) {
  double eps = 0;
  if (const AttrValue* e = inst.FindAttr("epsilon"); e != nullptr && e->kind == AttrKind::kFloat) {
    eps = static_cast<float>(e->get<double>());
  }
  int64_t feature = IntAttr(inst, "feature_index", 0);
  const Literal& x = *operands[0];
  if (feature < 0 || feature >= static_cast<int64_t>(x.shape().dimensions.size())) {
    return Error(inst, "feature_index {} out of range", feature);
  }
  FeatureView view = ViewOf(x.shape(), feature);
  std::vector<double> xv = LoadReal(x);
  double count = static_cast<double>(view.outer * view.inner);
  auto per_feature_mean = [&](const std::vector<double>& v) {
    std::vector<double> sum(static_cast<size_t>(view.features), 0);
    for (size_t i = 0; i < v.size(); ++i) sum[view.Feature(static_cast<int64_t>(i))] += v[i];
    for (double& s : sum) s /= count;
    return sum;
  };
  Shape feature_shape = Shape::Array(x.shape().element_type, {view.features});
  switch (inst.opcode()) {
    case Opcode::kBatchNormTraining: {
      std::vector<double> scale = LoadReal(*operands[1]), offset = LoadReal(*operands[2]);
      std::vector<double> mean = per_feature_mean(xv);
      std::vector<double> sq(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        double c = xv[i] - mean[view.Feature(static_cast<int64_t>(i))];
        sq[i] = c * c;
      }
      std::vector<double> var = per_feature_mean(sq);
      std::vector<double> out(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        int64_t f = view.Feature(static_cast<int64_t>(i));
        out[i] = (xv[i] - mean[f]) / std::sqrt(var[f] + eps) * scale[f] + offset[f];
      }
      std::vector<Literal> parts;
      parts.push_back(StoreReal(x.shape(), out));
      parts.push_back(StoreReal(feature_shape, mean));
      parts.push_back(StoreReal(feature_shape, var));
      return Literal::CreateTuple(std::move(parts));
    }
    case Opcode::kBatchNormInference: {
      std::vector<double> scale = LoadReal(*operands[1]), offset = LoadReal(*operands[2]);
      std::vector<double> mean = LoadReal(*operands[3]), var = LoadReal(*operands[4]);
      std::vector<double> out(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        int64_t f = view.Feature(static_cast<int64_t>(i));
        out[i] = (xv[i] - mean[f]) / std::sqrt(var[f] + eps) * scale[f] + offset[f];
      }
      return StoreReal(x.shape(), out);
    }
    case Opcode::kBatchNormGrad: {
      std::vector<double> scale = LoadReal(*operands[1]), mean = LoadReal(*operands[2]);
      std::vector<double> var = LoadReal(*operands[3]), dy = LoadReal(*operands[4]);
      std::vector<double> sum_dy(static_cast<size_t>(view.features), 0), sum_dy_xc(sum_dy);
      for (size_t i = 0; i < xv.size(); ++i) {
        int64_t f = view.Feature(static_cast<int64_t>(i));
        sum_dy[f] += dy[i];
        sum_dy_xc[f] += dy[i] * (xv[i] - mean[f]);
      }
      std::vector<double> grad_x(xv.size()), grad_scale(sum_dy.size()), grad_offset = sum_dy;
      for (size_t f = 0; f < sum_dy.size(); ++f) grad_scale[f] = sum_dy_xc[f] / std::sqrt(var[f] + eps);
      for (size_t i = 0; i < xv.size(); ++i) {
        int64_t f = view.Feature(static_cast<int64_t>(i));
        double inv = 1 / std::sqrt(var[f] + eps);
        grad_x[i] =
            scale[f] * inv / count * (count * dy[i] - sum_dy[f] - (xv[i] - mean[f]) * sum_dy_xc[f] / (var[f] + eps));
      }
      std::vector<Literal> parts;
      parts.push_back(StoreReal(x.shape(), grad_x));
      parts.push_back(StoreReal(feature_shape, grad_scale));
      parts.push_back(StoreReal(feature_shape, grad_offset));
      return Literal::CreateTuple(std::move(parts));
    }
    default:
      return Unsupported(inst, "not a batch-norm op");
  }
}

}  // namespace xlac::interp
