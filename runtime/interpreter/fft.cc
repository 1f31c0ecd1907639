// fft: FFT, IFFT (normalized by 1/N), RFFT and IRFFT over the innermost len(fft_length) dimensions.
//
// Computed as direct DFTs in long double (O(n^2) per line): the oracle wants accuracy, not speed. Results are
// rounded to the element type once at the end, so even f64 transforms are within about an ulp of exact.
#include <cmath>
#include <complex>

#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

using cd = std::complex<long double>;

// In-place DFT along `axis` of a row-major array `data` with dims `dims` (sign -1 forward, +1 inverse; no scale).
void DftAxis(std::vector<cd>& data, const std::vector<int64_t>& dims, size_t axis, int sign) {
  int64_t n = dims[axis];
  if (n <= 1 || data.empty()) return;
  std::vector<cd> twiddle(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) {
    // 2*pi to long double precision.
    const long double kTwoPi = 6.283185307179586476925286766559005768L;
    long double angle = sign * kTwoPi * static_cast<long double>(k) / static_cast<long double>(n);
    twiddle[k] = cd(std::cos(angle), std::sin(angle));
  }
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t stride = strides[axis];
  std::vector<int64_t> outer = dims;
  outer[axis] = 1;
  std::vector<int64_t> index(dims.size(), 0);
  std::vector<cd> line(static_cast<size_t>(n));
  do {
    int64_t base = 0;
    for (size_t d = 0; d < dims.size(); ++d) base += index[d] * strides[d];
    for (int64_t k = 0; k < n; ++k) {
      cd acc = 0;
      for (int64_t j = 0; j < n; ++j) acc += data[base + j * stride] * twiddle[(j * k) % n];
      line[k] = acc;
    }
    for (int64_t k = 0; k < n; ++k) data[base + k * stride] = line[k];
  } while (NextIndex(index, outer));
}

std::vector<cd> LoadComplex(const Literal& lit) {
  std::vector<cd> out(static_cast<size_t>(lit.element_count()));
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    switch (lit.shape().element_type) {
      case PrimitiveType::kC64: {
        c64 v = LoadOne<c64>(lit, i);
        out[i] = cd(v.real(), v.imag());
        break;
      }
      case PrimitiveType::kC128: {
        c128 v = LoadOne<c128>(lit, i);
        out[i] = cd(v.real(), v.imag());
        break;
      }
      default:
        out[i] = cd(lit.GetAsDouble(i), 0);
        break;
    }
  }
  return out;
}

void StoreComplex(Literal& lit, const std::vector<cd>& v) {
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    switch (lit.shape().element_type) {
      // Round straight from long double to the element type (one rounding).
      case PrimitiveType::kC64:
        StoreOne<c64>(lit, i, c64(static_cast<float>(v[i].real()), static_cast<float>(v[i].imag())));
        break;
      case PrimitiveType::kC128:
        StoreOne<c128>(lit, i, c128(static_cast<double>(v[i].real()), static_cast<double>(v[i].imag())));
        break;
      default:
        lit.SetFromDouble(i, static_cast<double>(v[i].real()));
        break;
    }
  }
}

}  // namespace

absl::StatusOr<Literal> EvalFft(const Instruction& inst, Operands operands) {
  const Literal& x = *operands[0];
  std::string_view type = TextAttr(inst, "fft_type");
  const std::vector<int64_t>& lengths = IntList(inst, "fft_length");
  const std::vector<int64_t>& in_dims = x.shape().dimensions;
  size_t rank = in_dims.size(), l = lengths.size();
  if (l == 0 || l > 3 || l > rank) return Error(inst, "fft_length must name 1 to 3 innermost dimensions");
  Literal result(inst.shape());
  const std::vector<int64_t>& out_dims = inst.shape().dimensions;
  if (result.element_count() == 0) return result;
  double scale = 1;
  for (int64_t n : lengths) scale *= static_cast<double>(n);
  if (type == "FFT" || type == "IFFT") {
    std::vector<cd> data = LoadComplex(x);
    int sign = type == "FFT" ? -1 : 1;
    for (size_t a = rank - l; a < rank; ++a) DftAxis(data, in_dims, a, sign);
    if (type == "IFFT") {
      for (cd& v : data) v /= static_cast<long double>(scale);
    }
    StoreComplex(result, data);
    return result;
  }
  if (type == "RFFT") {
    // Transform the real input (its innermost dims are fft_length), then keep n/2+1 outputs of the last axis.
    std::vector<cd> data = LoadComplex(x);
    for (size_t a = rank - l; a < rank; ++a) DftAxis(data, in_dims, a, -1);
    std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
    std::vector<int64_t> index(rank, 0);
    std::vector<cd> out(static_cast<size_t>(result.element_count()));
    for (size_t i = 0; i < out.size(); ++i, NextIndex(index, out_dims)) {
      int64_t off = 0;
      for (size_t d = 0; d < rank; ++d) off += index[d] * in_strides[d];
      out[i] = data[off];
    }
    StoreComplex(result, out);
    return result;
  }
  if (type == "IRFFT") {
    // Inverse-transform the outer fft axes, rebuild each last-axis line from Hermitian symmetry, then inverse it.
    int64_t n = lengths.back();
    std::vector<cd> data = LoadComplex(x);
    for (size_t a = rank - l; a + 1 < rank; ++a) DftAxis(data, in_dims, a, 1);
    std::vector<int64_t> full_dims = out_dims;
    std::vector<cd> full(static_cast<size_t>(result.element_count()));
    int64_t in_last = in_dims.back();
    int64_t lines = result.element_count() / n;
    for (int64_t line = 0; line < lines; ++line) {
      for (int64_t k = 0; k < n; ++k) {
        int64_t src = k <= n / 2 ? k : n - k;
        cd v = src < in_last ? data[line * in_last + src] : cd(0);
        full[line * n + k] = k <= n / 2 ? v : std::conj(v);
      }
    }
    DftAxis(full, full_dims, rank - 1, 1);
    for (cd& v : full) v /= static_cast<long double>(scale);
    StoreComplex(result, full);
    return result;
  }
  return Error(inst, "unknown fft_type '{}'", std::string(type));
}

}  // namespace xlac::interp
