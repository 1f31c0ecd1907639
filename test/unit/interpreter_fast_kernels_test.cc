// The interpreter's fast dot and convolution kernels (runtime/interpreter/fast_kernels.*) against naive
// implementations written here from the operation definitions: bit for bit (NaN matches NaN) on random
// configurations (odd shapes, all dim orders, padding, dilations, reversal, feature and batch groups), and the same
// bits for every thread count.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "interpreter_test_util.h"

namespace xlac::interp::testing {
namespace {

const char* TypeName(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kF32:
      return "f32";
    case PrimitiveType::kF64:
      return "f64";
    case PrimitiveType::kBF16:
      return "bf16";
    case PrimitiveType::kF16:
      return "f16";
    default:
      return "s32";
  }
}

std::string Dims(const std::vector<int64_t>& d) {
  std::string s;
  for (size_t i = 0; i < d.size(); ++i) s += (i ? "," : "") + std::to_string(d[i]);
  return s;
}

// Values whose sums depend on the order of accumulation (mixed magnitudes), with some specials.
Literal RandomValues(PrimitiveType type, const std::vector<int64_t>& dims, std::mt19937_64& rng, bool specials) {
  Literal lit(Shape::Array(type, dims));
  std::uniform_real_distribution<double> u(-2, 2);
  std::uniform_int_distribution<int> e(-12, 12), small(-8, 8), pick(0, 60);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    if (type == PrimitiveType::kS32) {
      lit.SetFromInt64(i, small(rng));
      continue;
    }
    double v = std::ldexp(u(rng), e(rng));
    if (specials) {
      int p = pick(rng);
      if (p == 0) v = std::nan("");
      if (p == 1) v = INFINITY;
      if (p == 2) v = -0.0;
      if (p == 3) v = -INFINITY;
    }
    lit.SetFromDouble(i, v);
  }
  return lit;
}

// Bitwise equality, NaN matching NaN (payloads are not part of the contract).
void ExpectSameBits(const Literal& expected, const Literal& actual, const std::string& what) {
  ASSERT_EQ(expected.element_count(), actual.element_count()) << what;
  PrimitiveType t = expected.shape().element_type;
  int64_t w = ByteWidth(t);
  int mismatches = 0;
  for (int64_t i = 0; i < expected.element_count() && mismatches < 5; ++i) {
    if (std::memcmp(expected.raw_data() + i * w, actual.raw_data() + i * w, static_cast<size_t>(w)) == 0) continue;
    if (t != PrimitiveType::kS32 && std::isnan(expected.GetAsDouble(i)) && std::isnan(actual.GetAsDouble(i))) continue;
    ADD_FAILURE() << what << "\nelement " << i << ": expected " << expected.GetAsDouble(i) << ", got "
                  << actual.GetAsDouble(i);
    ++mismatches;
  }
}

// The compute type's sum of products, stored into element i of `out` (floats round once, at the end).
struct Acc {
  PrimitiveType type;
  float f = 0;
  double d = 0;
  int64_t s = 0;
  void Add(const Literal& a, int64_t i, const Literal& b, int64_t j) {
    if (type == PrimitiveType::kF64) {
      double p = a.GetAsDouble(i) * b.GetAsDouble(j);  // separate statements: never contracted to an FMA
      d = d + p;
    } else if (type == PrimitiveType::kS32) {
      s += a.GetAsInt64(i) * b.GetAsInt64(j);
    } else {
      float x = static_cast<float>(a.GetAsDouble(i)), y = static_cast<float>(b.GetAsDouble(j));
      float p = x * y;
      f = f + p;
    }
  }
  void StoreTo(Literal& out, int64_t i) const {
    if (type == PrimitiveType::kF64)
      out.SetFromDouble(i, d);
    else if (type == PrimitiveType::kS32)
      out.SetFromInt64(i, s);
    else
      out.SetFromDouble(i, f);  // float -> double is exact, so this rounds float -> type once
  }
};

int64_t Linear(const std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  int64_t l = 0;
  for (size_t i = 0; i < dims.size(); ++i) l = l * dims[i] + index[i];
  return l;
}

bool Next(std::vector<int64_t>& index, const std::vector<int64_t>& dims) {
  for (size_t i = index.size(); i-- > 0;) {
    if (++index[i] < dims[i]) return true;
    index[i] = 0;
  }
  return false;
}

void RunBoth(const std::string& hlo, const std::vector<Literal>& args, const Literal& expected,
             const std::string& what) {
  for (int64_t threads : {1, 3}) {
    InterpreterOptions options;
    options.threads = threads;
    std::vector<Literal> copy(args.begin(), args.end());
    absl::StatusOr<Literal> r = RunHlo(hlo, std::move(copy), options);
    ASSERT_TRUE(r.ok()) << r.status().ToString() << "\n" << hlo;
    ExpectSameBits(expected, *r, what + " threads=" + std::to_string(threads) + "\n" + hlo);
  }
}

const PrimitiveType kTypes[] = {PrimitiveType::kF32, PrimitiveType::kF64, PrimitiveType::kBF16, PrimitiveType::kF16,
                                PrimitiveType::kS32};

struct ConvCase {
  int spatial;
  int64_t fg = 1, bg = 1, in_group, out_per_group, batch_per_group;
  std::vector<int64_t> in_sp, k_sp, stride, lo, hi, lhs_dil, rhs_dil;
  std::vector<bool> rev;
  std::vector<int64_t> out_sp;
};

void CheckConvolution(const ConvCase& c, PrimitiveType type, std::mt19937_64& rng, bool specials) {
  int64_t in_batch = c.bg * c.batch_per_group, input_z = c.fg * c.in_group;
  int64_t output_z = c.fg * c.bg * c.out_per_group, out_batch = c.batch_per_group;
  // Logical dims in canonical roles: input (b, f, s...), kernel (o, i, s...), output (b, f, s...), then a random
  // order of each operand's dims.
  size_t rank = static_cast<size_t>(c.spatial) + 2;
  auto perm = [&] {
    std::vector<int64_t> p(rank);
    std::iota(p.begin(), p.end(), 0);
    std::shuffle(p.begin(), p.end(), rng);
    return p;  // p[position] = role
  };
  std::vector<int64_t> pin = perm(), pk = perm(), pout = perm();
  std::vector<int64_t> in_roles{in_batch, input_z}, k_roles{output_z, c.in_group}, out_roles{out_batch, output_z};
  for (int s = 0; s < c.spatial; ++s) {
    in_roles.push_back(c.in_sp[s]);
    k_roles.push_back(c.k_sp[s]);
    out_roles.push_back(c.out_sp[s]);
  }
  auto label = [&](const std::vector<int64_t>& p, const char* two) {
    std::string l;
    for (int64_t role : p) l += role < 2 ? two[role] : static_cast<char>('0' + role - 2);
    return l;
  };
  std::vector<int64_t> in_dims, k_dims, out_dims;
  for (size_t i = 0; i < rank; ++i) {
    in_dims.push_back(in_roles[pin[i]]);
    k_dims.push_back(k_roles[pk[i]]);
    out_dims.push_back(out_roles[pout[i]]);
  }
  std::string window = "size=", strides = "stride=", pad = "pad=", ld = "lhs_dilate=", rd = "rhs_dilate=",
              rv = "rhs_reversal=";
  for (int s = 0; s < c.spatial; ++s) {
    std::string x = s ? "x" : "";
    window += x + std::to_string(c.k_sp[s]);
    strides += x + std::to_string(c.stride[s]);
    pad += x + std::to_string(c.lo[s]) + "_" + std::to_string(c.hi[s]);
    ld += x + std::to_string(c.lhs_dil[s]);
    rd += x + std::to_string(c.rhs_dil[s]);
    rv += x + (c.rev[s] ? "1" : "0");
  }
  const char* t = TypeName(type);
  std::string hlo = fmt::format(
      "HloModule m\nENTRY e {{\n  a = {0}[{1}] parameter(0)\n  k = {0}[{2}] parameter(1)\n  ROOT c = {0}[{3}] "
      "convolution(a, k), window={{{4} {5} {6} {7} {8} {9}}}, dim_labels={10}_{11}->{12}, feature_group_count={13}, "
      "batch_group_count={14}\n}}\n",
      t, Dims(in_dims), Dims(k_dims), Dims(out_dims), window, strides, pad, ld, rd, rv, label(pin, "bf"),
      label(pk, "oi"), label(pout, "bf"), c.fg, c.bg);
  Literal a = RandomValues(type, in_dims, rng, specials), k = RandomValues(type, k_dims, rng, specials);

  Literal expected(Shape::Array(type, out_dims));
  std::vector<int64_t> o(rank, 0), w(static_cast<size_t>(c.spatial));
  std::vector<int64_t> in_index(rank), k_index(rank), role_value(rank);
  if (expected.element_count() > 0) do {
      for (size_t i = 0; i < rank; ++i) role_value[pout[i]] = o[i];
      int64_t ob = role_value[0], oz = role_value[1];
      int64_t fgi = oz / (output_z / c.fg), bgi = oz / (output_z / c.bg);
      Acc acc{type};
      std::fill(w.begin(), w.end(), 0);
      do {
        std::vector<int64_t> x(static_cast<size_t>(c.spatial));
        bool inside = true;
        for (int s = 0; s < c.spatial; ++s) {
          int64_t pos = role_value[2 + s] * c.stride[s] + w[s] * c.rhs_dil[s] - c.lo[s];
          if (pos < 0 || pos % c.lhs_dil[s] != 0 || pos / c.lhs_dil[s] >= c.in_sp[s]) inside = false;
          x[s] = pos / c.lhs_dil[s];
        }
        if (!inside) continue;
        for (int64_t iz = 0; iz < c.in_group; ++iz) {
          std::vector<int64_t> in_role{ob + bgi * c.batch_per_group, fgi * c.in_group + iz};
          std::vector<int64_t> k_role{oz, iz};
          for (int s = 0; s < c.spatial; ++s) {
            in_role.push_back(x[s]);
            k_role.push_back(c.rev[s] ? c.k_sp[s] - 1 - w[s] : w[s]);
          }
          for (size_t i = 0; i < rank; ++i) {
            in_index[i] = in_role[pin[i]];
            k_index[i] = k_role[pk[i]];
          }
          acc.Add(a, Linear(in_index, in_dims), k, Linear(k_index, k_dims));
        }
      } while (Next(w, c.k_sp));
      acc.StoreTo(expected, Linear(o, out_dims));
    } while (Next(o, out_dims));
  RunBoth(hlo, {std::move(a), std::move(k)}, expected, "convolution");
}

ConvCase RandomConv(std::mt19937_64& rng, int kind) {
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  while (true) {
    ConvCase c;
    c.spatial = static_cast<int>(r(1, 2));
    if (kind == 0) {  // dense or feature groups
      c.fg = r(0, 2) == 0 ? r(2, 3) : 1;
      c.in_group = r(1, 7);
      c.out_per_group = r(1, 40);
      c.batch_per_group = r(1, 3);
    } else if (kind == 1) {  // depthwise: one input feature per group, many groups
      c.fg = r(1, 45);
      c.in_group = 1;
      c.out_per_group = r(0, 2) == 0 ? r(2, 3) : 1;
      c.batch_per_group = r(1, 2);
    } else if (r(0, 1) == 0) {  // batch groups
      c.bg = r(2, 12);
      c.in_group = r(1, 5);
      c.out_per_group = r(1, 3);
      c.batch_per_group = r(1, 3);
    } else {  // depthwise filter gradients: one batch and one output feature per group, many groups
      c.bg = r(30, 70);
      c.in_group = r(1, 5);
      c.out_per_group = 1;
      c.batch_per_group = 1;
    }
    bool ok = true;
    for (int s = 0; s < c.spatial; ++s) {
      c.in_sp.push_back(r(1, 7));
      c.k_sp.push_back(r(1, 4));
      c.stride.push_back(r(1, 3));
      c.lo.push_back(r(-1, 2));
      c.hi.push_back(r(-1, 2));
      c.lhs_dil.push_back(r(0, 3) == 0 ? 2 : 1);
      c.rhs_dil.push_back(r(0, 3) == 0 ? 2 : 1);
      c.rev.push_back(r(0, 3) == 0);
      int64_t padded = (c.in_sp[s] - 1) * c.lhs_dil[s] + 1 + c.lo[s] + c.hi[s];
      int64_t span = (c.k_sp[s] - 1) * c.rhs_dil[s] + 1;
      if (padded < span) ok = false;
      c.out_sp.push_back(ok ? (padded - span) / c.stride[s] + 1 : 0);
    }
    if (ok) return c;
  }
}

TEST(InterpreterFastKernels, ConvolutionMatchesNaiveBitwise) {
  std::mt19937_64 rng(1234);
  for (int kind = 0; kind < 3; ++kind) {
    for (int i = 0; i < 16; ++i) {
      ConvCase c = RandomConv(rng, kind);
      for (PrimitiveType type : kTypes) {
        CheckConvolution(c, type, rng, /*specials=*/i % 4 == 3);
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// Dots with random batch / contracting / free dims in random positions; sizes that cross the kernels' blocks.
TEST(InterpreterFastKernels, DotMatchesNaiveBitwise) {
  std::mt19937_64 rng(99);
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  for (int i = 0; i < 24; ++i) {
    int64_t nb = r(0, 1), nc = r(1, 2), nl = r(0, 2), nr = r(0, 2);
    bool big = i % 6 == 5;
    std::vector<int64_t> bsz, csz, lsz, rsz;
    for (int64_t j = 0; j < nb; ++j) bsz.push_back(r(1, 3));
    for (int64_t j = 0; j < nc; ++j) csz.push_back(big && j == 0 ? r(250, 300) : r(1, 9));
    for (int64_t j = 0; j < nl; ++j) lsz.push_back(big && j == 0 ? r(60, 70) : r(1, 9));
    for (int64_t j = 0; j < nr; ++j) rsz.push_back(big && j == 0 ? r(17, 40) : r(1, 19));
    // Roles: 0..nb-1 batch, then contracting, then free; lhs_pos[p] = role.
    auto layout = [&](int64_t nfree) {
      std::vector<int64_t> p(static_cast<size_t>(nb + nc + nfree));
      std::iota(p.begin(), p.end(), 0);
      std::shuffle(p.begin(), p.end(), rng);
      return p;
    };
    std::vector<int64_t> lp = layout(nl), rp = layout(nr);
    auto role_size = [&](int64_t role, const std::vector<int64_t>& fsz) {
      if (role < nb) return bsz[role];
      if (role < nb + nc) return csz[role - nb];
      return fsz[role - nb - nc];
    };
    std::vector<int64_t> ldims, rdims, lbd(nb), rbd(nb), lcd(nc), rcd(nc);
    for (size_t p = 0; p < lp.size(); ++p) {
      ldims.push_back(role_size(lp[p], lsz));
      if (lp[p] < nb)
        lbd[lp[p]] = static_cast<int64_t>(p);
      else if (lp[p] < nb + nc)
        lcd[lp[p] - nb] = static_cast<int64_t>(p);
    }
    for (size_t p = 0; p < rp.size(); ++p) {
      rdims.push_back(role_size(rp[p], rsz));
      if (rp[p] < nb)
        rbd[rp[p]] = static_cast<int64_t>(p);
      else if (rp[p] < nb + nc)
        rcd[rp[p] - nb] = static_cast<int64_t>(p);
    }
    // Output: batch dims, then each operand's free dims in the order they appear in the operand.
    std::vector<int64_t> odims = bsz, lout(lp.size(), -1), rout(rp.size(), -1);
    for (size_t p = 0; p < lp.size(); ++p) {
      if (lp[p] >= nb + nc) {
        lout[p] = static_cast<int64_t>(odims.size());
        odims.push_back(ldims[p]);
      }
    }
    for (size_t p = 0; p < rp.size(); ++p) {
      if (rp[p] >= nb + nc) {
        rout[p] = static_cast<int64_t>(odims.size());
        odims.push_back(rdims[p]);
      }
    }
    for (PrimitiveType type : kTypes) {
      const char* t = TypeName(type);
      std::string hlo = fmt::format(
          "HloModule m\nENTRY e {{\n  a = {0}[{1}] parameter(0)\n  b = {0}[{2}] parameter(1)\n  ROOT d = {0}[{3}] "
          "dot(a, b), lhs_batch_dims={{{4}}}, rhs_batch_dims={{{5}}}, lhs_contracting_dims={{{6}}}, "
          "rhs_contracting_dims={{{7}}}\n}}\n",
          t, Dims(ldims), Dims(rdims), Dims(odims), Dims(lbd), Dims(rbd), Dims(lcd), Dims(rcd));
      Literal a = RandomValues(type, ldims, rng, i % 4 == 3), b = RandomValues(type, rdims, rng, i % 4 == 3);
      Literal expected(Shape::Array(type, odims));
      std::vector<int64_t> o(odims.size(), 0), kk(csz.size(), 0), li(ldims.size()), ri(rdims.size());
      if (expected.element_count() > 0) do {
          Acc acc{type};
          std::fill(kk.begin(), kk.end(), 0);
          do {
            for (size_t p = 0; p < lp.size(); ++p) {
              int64_t role = lp[p];
              li[p] = role < nb ? o[role] : role < nb + nc ? kk[role - nb] : o[lout[p]];
            }
            for (size_t p = 0; p < rp.size(); ++p) {
              int64_t role = rp[p];
              ri[p] = role < nb ? o[role] : role < nb + nc ? kk[role - nb] : o[rout[p]];
            }
            acc.Add(a, Linear(li, ldims), b, Linear(ri, rdims));
          } while (Next(kk, csz));
          acc.StoreTo(expected, Linear(o, odims));
        } while (Next(o, odims));
      RunBoth(hlo, {std::move(a), std::move(b)}, expected, "dot");
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Single-op reducers (add, swapped add, max) over every subset of dims of rank-3 arrays with layouts: each output
// folds its elements in row-major order of the reduced dims, starting from the init value.
TEST(InterpreterFastKernels, ReduceMatchesNaiveBitwise) {
  std::mt19937_64 rng(7);
  const char* bodies[] = {"add(x, y)", "add(y, x)", "maximum(x, y)"};
  for (PrimitiveType type : {PrimitiveType::kF32, PrimitiveType::kF64}) {
    for (int mask = 1; mask < 8; ++mask) {
      for (int body = 0; body < 3; ++body) {
        std::vector<int64_t> dims{3 + mask, 70 + body, 5}, kept_dims, reduced;
        for (int64_t d = 0; d < 3; ++d) {
          if (mask & (1 << d))
            reduced.push_back(d);
          else
            kept_dims.push_back(dims[static_cast<size_t>(d)]);
        }
        const char* t = TypeName(type);
        std::string hlo = fmt::format(
            "HloModule m\nr {{\n  x = {0}[] parameter(0)\n  y = {0}[] parameter(1)\n  ROOT s = {0}[] {1}\n}}\n"
            "ENTRY e {{\n  a = {0}[{2}]{{0,2,1}} parameter(0)\n  z = {0}[] constant(0.5)\n"
            "  ROOT o = {0}[{3}] reduce(a, z), dimensions={{{4}}}, to_apply=r\n}}\n",
            t, bodies[body], Dims(dims), Dims(kept_dims), Dims(reduced));
        Literal a = RandomValues(type, dims, rng, mask == 5);
        Literal expected(Shape::Array(type, kept_dims));
        std::vector<int64_t> o(kept_dims.size(), 0), rdims;
        for (int64_t d : reduced) rdims.push_back(dims[static_cast<size_t>(d)]);
        do {
          double acc = 0.5;
          float accf = 0.5f;
          std::vector<int64_t> rk(rdims.size(), 0), full(3);
          do {
            size_t ki = 0, ri = 0;
            for (int64_t d = 0; d < 3; ++d) full[d] = (mask & (1 << d)) ? rk[ri++] : o[ki++];
            double v = a.GetAsDouble(Linear(full, dims));
            if (type == PrimitiveType::kF64) {
              acc = body == 0   ? acc + v
                    : body == 1 ? v + acc
                                : (std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v));
            } else {
              float vf = static_cast<float>(v);
              accf = body == 0   ? accf + vf
                     : body == 1 ? vf + accf
                                 : (std::isnan(accf) || std::isnan(vf) ? NAN : std::max(accf, vf));
            }
          } while (Next(rk, rdims));
          int64_t oi = kept_dims.empty() ? 0 : Linear(o, kept_dims);
          expected.SetFromDouble(oi, type == PrimitiveType::kF64 ? acc : accf);
        } while (Next(o, kept_dims));
        RunBoth(hlo, {std::move(a)}, expected, "reduce");
        if (::testing::Test::HasFailure()) return;
      }
    }
  }
}

// reduce-window with single-op reducers: random windows (sizes, strides, padding, base and window dilation) on
// rank-2/3 arrays; each output folds its in-bounds window elements in row-major window order from the init value.
TEST(InterpreterFastKernels, ReduceWindowMatchesNaiveBitwise) {
  std::mt19937_64 rng(11);
  auto r = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const char* bodies[] = {"add(x, y)", "add(y, x)", "maximum(x, y)"};
  for (int i = 0; i < 30; ++i) {
    PrimitiveType type = i % 2 ? PrimitiveType::kF64 : PrimitiveType::kF32;
    int body = i % 3;
    size_t rank = static_cast<size_t>(r(2, 3));
    std::vector<int64_t> dims, size, stride, lo, hi, bdil, wdil, out_dims;
    bool ok = true;
    for (size_t d = 0; d < rank; ++d) {
      dims.push_back(r(1, 9));
      size.push_back(r(1, 3));
      stride.push_back(r(1, 2));
      lo.push_back(r(0, 2));
      hi.push_back(r(0, 2));
      bdil.push_back(r(0, 3) == 0 ? 2 : 1);
      wdil.push_back(r(0, 3) == 0 ? 2 : 1);
      int64_t padded = (dims[d] - 1) * bdil[d] + 1 + lo[d] + hi[d], span = (size[d] - 1) * wdil[d] + 1;
      if (padded < span) ok = false;
      out_dims.push_back(ok ? (padded - span) / stride[d] + 1 : 0);
    }
    if (!ok) continue;
    std::string w = "size=", st = "stride=", pad = "pad=", bd = "lhs_dilate=", wd = "rhs_dilate=";
    for (size_t d = 0; d < rank; ++d) {
      std::string x = d ? "x" : "";
      w += x + std::to_string(size[d]);
      st += x + std::to_string(stride[d]);
      pad += x + std::to_string(lo[d]) + "_" + std::to_string(hi[d]);
      bd += x + std::to_string(bdil[d]);
      wd += x + std::to_string(wdil[d]);
    }
    const char* t = TypeName(type);
    std::string hlo = fmt::format(
        "HloModule m\nr {{\n  x = {0}[] parameter(0)\n  y = {0}[] parameter(1)\n  ROOT s = {0}[] {1}\n}}\n"
        "ENTRY e {{\n  a = {0}[{2}] parameter(0)\n  z = {0}[] constant(-0.25)\n"
        "  ROOT o = {0}[{3}] reduce-window(a, z), window={{{4} {5} {6} {7} {8}}}, to_apply=r\n}}\n",
        t, bodies[body], Dims(dims), Dims(out_dims), w, st, pad, bd, wd);
    Literal a = RandomValues(type, dims, rng, i % 5 == 4);
    Literal expected(Shape::Array(type, out_dims));
    std::vector<int64_t> o(rank, 0), k(rank, 0), in(rank);
    do {
      double acc = -0.25;
      float accf = -0.25f;
      std::fill(k.begin(), k.end(), 0);
      do {
        bool inside = true;
        for (size_t d = 0; d < rank; ++d) {
          int64_t pos = o[d] * stride[d] + k[d] * wdil[d] - lo[d];
          if (pos < 0 || pos % bdil[d] != 0 || pos / bdil[d] >= dims[d]) inside = false;
          in[d] = pos / bdil[d];
        }
        if (!inside) continue;
        double v = a.GetAsDouble(Linear(in, dims));
        float vf = static_cast<float>(v);
        if (body == 0) {
          acc = acc + v;
          accf = accf + vf;
        } else if (body == 1) {
          acc = v + acc;
          accf = vf + accf;
        } else {
          acc = std::isnan(acc) || std::isnan(v) ? NAN : std::max(acc, v);
          accf = std::isnan(accf) || std::isnan(vf) ? NAN : std::max(accf, vf);
        }
      } while (Next(k, size));
      expected.SetFromDouble(Linear(o, out_dims), type == PrimitiveType::kF64 ? acc : accf);
    } while (Next(o, out_dims));
    RunBoth(hlo, {std::move(a)}, expected, "reduce-window");
    if (::testing::Test::HasFailure()) return;
  }
}

}  // namespace
}  // namespace xlac::interp::testing
