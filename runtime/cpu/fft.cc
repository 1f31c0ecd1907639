// fft kernels shared by compiled code and the interpreter (xlac_runtime_kernels.h).
//
// Fast transforms in long double (LineTransform: O(n log n) per line, the accuracy of the direct sums this oracle used
// to do). Results are rounded to the element type once at the end (IRFFT's real f32 output goes through double
// first, as the interpreter always did), so even f64 transforms are within about an ulp of exact.
#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/cpu/xlac_runtime_kernels.h"

namespace {

using cd = std::complex<long double>;

std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t d = dims.size(); d-- > 1;) strides[d - 1] = strides[d] * dims[d];
  return strides;
}

bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (size_t d = dims.size(); d-- > 0;) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

int64_t Product(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

// Discrete Fourier transforms of one contiguous line, y[k] = sum_j x[j] exp(sign 2 pi i j k / n), in long double:
// mixed-radix Cooley-Tukey over n's prime factors (a direct sum for each factor), or Bluestein's chirp convolution
// (through power-of-two transforms) when n has a prime factor above kMaxDirectFactor. O(n log n) for smooth n where
// the direct sums the oracle used to do were O(n^2) (a 1024-point line: 60x the work); long double keeps the error
// (about log2(n) long double ulps) far below the one rounding to the element type.
class LineTransform {
 public:
  LineTransform(int64_t n, int sign) : n_(n), sign_(sign) {
    for (int64_t m = n, p = 2; m > 1;) {
      if (p * p > m) p = m;
      if (m % p != 0) {
        ++p;
        continue;
      }
      factors_.push_back(p);
      m /= p;
    }
    if (!factors_.empty() && factors_.back() > kMaxDirectFactor) {
      InitBluestein();
      return;
    }
    twiddles_ = Twiddles(n, sign);
  }

  // In place on `line` (n elements).
  void Run(cd* line) {
    if (n_ <= 1) return;
    if (!chirp_.empty()) return RunBluestein(line);
    input_.assign(line, line + n_);
    Recurse(input_.data(), 1, line, n_, 0);
  }

 private:
  static constexpr int64_t kMaxDirectFactor = 64;

  static std::vector<cd> Twiddles(int64_t n, int sign) {
    // 2*pi to long double precision.
    const long double kTwoPi = 6.283185307179586476925286766559005768L;
    std::vector<cd> w(static_cast<size_t>(n));
    for (int64_t k = 0; k < n; ++k) {
      long double angle = sign * kTwoPi * static_cast<long double>(k) / static_cast<long double>(n);
      w[static_cast<size_t>(k)] = cd(std::cos(angle), std::sin(angle));
    }
    return w;
  }

  // y[0, n) = the DFT of x[0], x[xs], ... (n elements): the p interleaved sub-sequences' DFTs of length n / p, then
  // for each k the p-point DFT of their k-th outputs times the twiddles W_n^(r k).
  void Recurse(const cd* x, int64_t xs, cd* y, int64_t n, size_t f) {
    if (n == 1) {
      y[0] = x[0];
      return;
    }
    const int64_t p = factors_[f], m = n / p, step = n_ / n;
    for (int64_t r = 0; r < p; ++r) Recurse(x + r * xs, xs * p, y + r * m, m, f + 1);
    products_.resize(static_cast<size_t>(p));
    sums_.resize(static_cast<size_t>(p));
    for (int64_t k = 0; k < m; ++k) {
      for (int64_t r = 0; r < p; ++r) products_[r] = y[r * m + k] * twiddles_[(r * k * step) % n_];
      for (int64_t q = 0; q < p; ++q) {
        cd acc = 0;
        for (int64_t r = 0; r < p; ++r) acc += products_[r] * twiddles_[(r * q * m * step) % n_];
        sums_[q] = acc;
      }
      for (int64_t q = 0; q < p; ++q) y[k + q * m] = sums_[q];
    }
  }

  // X_k = c_k sum_j (x_j c_j) conj(c_(k-j)) with c_j = exp(sign pi i j^2 / n): a circular convolution of length
  // M >= 2n - 1, a power of two, done with M-point transforms.
  void InitBluestein() {
    const long double kPi = 3.141592653589793238462643383279502884L;
    chirp_.resize(static_cast<size_t>(n_));
    for (int64_t j = 0; j < n_; ++j) {
      // j^2 mod 2n keeps the angle small and exact (j < n < 2^31).
      const int64_t e = (j * j) % (2 * n_);
      long double angle = sign_ * kPi * static_cast<long double>(e) / static_cast<long double>(n_);
      chirp_[static_cast<size_t>(j)] = cd(std::cos(angle), std::sin(angle));
    }
    int64_t m = 1;
    while (m < 2 * n_ - 1) m *= 2;
    forward_ = std::make_unique<LineTransform>(m, -1);
    inverse_ = std::make_unique<LineTransform>(m, 1);
    filter_.assign(static_cast<size_t>(m), cd(0));
    filter_[0] = std::conj(chirp_[0]);
    for (int64_t j = 1; j < n_; ++j) filter_[j] = filter_[m - j] = std::conj(chirp_[static_cast<size_t>(j)]);
    forward_->Run(filter_.data());
  }

  void RunBluestein(cd* line) {
    const size_t m = filter_.size();
    buffer_.assign(m, cd(0));
    for (int64_t j = 0; j < n_; ++j) buffer_[j] = line[j] * chirp_[static_cast<size_t>(j)];
    forward_->Run(buffer_.data());
    for (size_t i = 0; i < m; ++i) buffer_[i] *= filter_[i];
    inverse_->Run(buffer_.data());
    for (int64_t k = 0; k < n_; ++k) {
      line[k] = chirp_[static_cast<size_t>(k)] * buffer_[k] / static_cast<long double>(m);
    }
  }

  int64_t n_;
  int sign_;
  std::vector<int64_t> factors_;  // n's prime factors, ascending
  std::vector<cd> twiddles_;      // exp(sign 2 pi i k / n)
  std::vector<cd> input_, products_, sums_;
  // Bluestein
  std::vector<cd> chirp_, filter_, buffer_;
  std::unique_ptr<LineTransform> forward_, inverse_;
};

// In-place DFT along `axis` of a row-major array `data` with dims `dims` (sign -1 forward, +1 inverse; no scale).
void DftAxis(std::vector<cd>& data, const std::vector<int64_t>& dims, size_t axis, int sign) {
  int64_t n = dims[axis];
  if (n <= 1 || data.empty()) return;
  LineTransform transform(n, sign);
  std::vector<int64_t> strides = RowMajorStrides(dims);
  int64_t stride = strides[axis];
  std::vector<int64_t> outer = dims;
  outer[axis] = 1;
  std::vector<int64_t> index(dims.size(), 0);
  std::vector<cd> line(static_cast<size_t>(n));
  do {
    int64_t base = 0;
    for (size_t d = 0; d < dims.size(); ++d) base += index[d] * strides[d];
    for (int64_t k = 0; k < n; ++k) line[k] = data[base + k * stride];
    transform.Run(line.data());
    for (int64_t k = 0; k < n; ++k) data[base + k * stride] = line[k];
  } while (NextIndex(index, outer));
}

// R is the real component type (float or double) of the complex element type.
template <typename R>
std::vector<cd> LoadComplex(const void* p, int64_t count) {
  const std::complex<R>* v = static_cast<const std::complex<R>*>(p);
  std::vector<cd> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = cd(v[i].real(), v[i].imag());
  return out;
}

template <typename R>
std::vector<cd> LoadReal(const void* p, int64_t count) {
  const R* v = static_cast<const R*>(p);
  std::vector<cd> out(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) out[i] = cd(static_cast<double>(v[i]), 0);
  return out;
}

template <typename R>
void StoreComplex(void* p, const std::vector<cd>& v) {
  std::complex<R>* out = static_cast<std::complex<R>*>(p);
  // Round straight from long double to the element type (one rounding).
  for (size_t i = 0; i < v.size(); ++i)
    out[i] = std::complex<R>(static_cast<R>(v[i].real()), static_cast<R>(v[i].imag()));
}

template <typename R>
void StoreReal(void* p, const std::vector<cd>& v) {
  R* out = static_cast<R*>(p);
  for (size_t i = 0; i < v.size(); ++i) out[i] = static_cast<R>(static_cast<double>(v[i].real()));
}

template <typename R>
int32_t Fft(const void* in, void* out, int32_t fft_type, int32_t rank, const int64_t* in_dims_p,
            const int64_t* out_dims_p, int32_t fft_rank, const int64_t* fft_length) {
  if (fft_rank < 1 || fft_rank > 3 || fft_rank > rank || fft_type < XLAC_RT_FFT || fft_type > XLAC_RT_IRFFT) {
    return -1;
  }
  const std::vector<int64_t> in_dims(in_dims_p, in_dims_p + rank), out_dims(out_dims_p, out_dims_p + rank);
  const std::vector<int64_t> lengths(fft_length, fft_length + fft_rank);
  size_t r = static_cast<size_t>(rank), l = static_cast<size_t>(fft_rank);
  int64_t out_count = Product(out_dims), in_count = Product(in_dims);
  if (out_count == 0) return 0;
  double scale = 1;
  for (int64_t n : lengths) scale *= static_cast<double>(n);
  if (fft_type == XLAC_RT_FFT || fft_type == XLAC_RT_IFFT) {
    std::vector<cd> data = LoadComplex<R>(in, in_count);
    int sign = fft_type == XLAC_RT_FFT ? -1 : 1;
    for (size_t a = r - l; a < r; ++a) DftAxis(data, in_dims, a, sign);
    if (fft_type == XLAC_RT_IFFT) {
      for (cd& v : data) v /= static_cast<long double>(scale);
    }
    StoreComplex<R>(out, data);
    return 0;
  }
  if (fft_type == XLAC_RT_RFFT) {
    // Transform the real input (its innermost dims are fft_length), then keep n/2+1 outputs of the last axis.
    std::vector<cd> data = LoadReal<R>(in, in_count);
    for (size_t a = r - l; a < r; ++a) DftAxis(data, in_dims, a, -1);
    std::vector<int64_t> in_strides = RowMajorStrides(in_dims);
    std::vector<int64_t> index(r, 0);
    std::vector<cd> result(static_cast<size_t>(out_count));
    for (size_t i = 0; i < result.size(); ++i, NextIndex(index, out_dims)) {
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) off += index[d] * in_strides[d];
      result[i] = data[off];
    }
    StoreComplex<R>(out, result);
    return 0;
  }
  // IRFFT: inverse-transform the outer fft axes, rebuild each last-axis line from Hermitian symmetry, then inverse it.
  int64_t n = lengths.back();
  std::vector<cd> data = LoadComplex<R>(in, in_count);
  for (size_t a = r - l; a + 1 < r; ++a) DftAxis(data, in_dims, a, 1);
  std::vector<cd> full(static_cast<size_t>(out_count));
  int64_t in_last = in_dims.back();
  int64_t lines = out_count / n;
  for (int64_t line = 0; line < lines; ++line) {
    for (int64_t k = 0; k < n; ++k) {
      int64_t src = k <= n / 2 ? k : n - k;
      cd v = src < in_last ? data[line * in_last + src] : cd(0);
      full[line * n + k] = k <= n / 2 ? v : std::conj(v);
    }
  }
  DftAxis(full, out_dims, r - 1, 1);
  for (cd& v : full) v /= static_cast<long double>(scale);
  StoreReal<R>(out, full);
  return 0;
}

}  // namespace

extern "C" {

int32_t xlac_rt_fft_c64(const void* in, void* out, int32_t fft_type, int32_t rank, const int64_t* in_dims,
                        const int64_t* out_dims, int32_t fft_rank, const int64_t* fft_length) {
  return Fft<float>(in, out, fft_type, rank, in_dims, out_dims, fft_rank, fft_length);
}

int32_t xlac_rt_fft_c128(const void* in, void* out, int32_t fft_type, int32_t rank, const int64_t* in_dims,
                         const int64_t* out_dims, int32_t fft_rank, const int64_t* fft_length) {
  return Fft<double>(in, out, fft_type, rank, in_dims, out_dims, fft_rank, fft_length);
}

}  // extern "C"
