#include "ir/decomposition_calls.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "ir/primitive_type.h"
#include "ir/shape.h"

namespace xlac {
namespace {

absl::Status Malformed(const Instruction& call, std::string_view expected) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): expected {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), expected));
}

// Checks that `s` is an array of `type` with the batch dimensions `batch` followed by `tail`.
bool Is(const Shape& s, PrimitiveType type, const std::vector<int64_t>& batch, const std::vector<int64_t>& tail) {
  if (!s.IsArray() || s.element_type != type || s.dimensions.size() != batch.size() + tail.size()) return false;
  for (size_t i = 0; i < batch.size(); ++i) {
    if (s.dimensions[i] != batch[i]) return false;
  }
  for (size_t i = 0; i < tail.size(); ++i) {
    if (s.dimensions[batch.size() + i] != tail[i]) return false;
  }
  return true;
}

// The result's array leaves: the result itself, or the elements of a flat tuple of arrays.
std::vector<const Shape*> Leaves(const Shape& result) {
  std::vector<const Shape*> out;
  if (result.IsArray()) {
    out.push_back(&result);
  } else if (result.IsTuple()) {
    for (const Shape& s : result.tuple_shapes) out.push_back(&s);
  }
  return out;
}

std::vector<std::string> ConfigFields(const std::string& config) {
  std::vector<std::string> fields;
  if (config.empty()) return fields;
  size_t start = 0;
  for (size_t comma; (comma = config.find(',', start)) != std::string::npos; start = comma + 1) {
    fields.push_back(config.substr(start, comma - start));
  }
  fields.push_back(config.substr(start));
  return fields;
}

// "flag0,flag1,..." (XLA's TPU Eigh: "lower,sort_eigenvalues,..."): the first flags.size() fields, each 0 or 1;
// missing ones keep their defaults, further ones are ignored.
bool ParseFlags(const std::string& config, std::vector<bool*> flags) {
  const std::vector<std::string> fields = ConfigFields(config);
  for (size_t i = 0; i < flags.size() && i < fields.size(); ++i) {
    if (fields[i] != "0" && fields[i] != "1") return false;
    *flags[i] = fields[i] == "1";
  }
  return true;
}

// "low,high": two decimal integers.
bool ParseLowHigh(const std::string& config, int64_t* low, int64_t* high) {
  const std::vector<std::string> fields = ConfigFields(config);
  if (fields.empty()) return true;
  if (fields.size() != 2) return false;
  int64_t* values[2] = {low, high};
  for (size_t i = 0; i < 2; ++i) {
    if (fields[i].empty() || fields[i].size() > 9 || fields[i].find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
    *values[i] = std::stoll(fields[i]);
  }
  return true;
}

bool IsLapackType(PrimitiveType type) {
  return type == PrimitiveType::kF32 || type == PrimitiveType::kF64 || type == PrimitiveType::kC64 ||
         type == PrimitiveType::kC128;
}

// The complex type of a LAPACK type (geev's eigenvectors of a real matrix).
PrimitiveType ComplexOf(PrimitiveType type) {
  if (type == PrimitiveType::kF32) return PrimitiveType::kC64;
  if (type == PrimitiveType::kF64) return PrimitiveType::kC128;
  return type;
}

}  // namespace

std::optional<DecompositionKind> DecompositionKindOf(std::string_view target) {
  if (target == "LuDecomposition") return DecompositionKind::kLu;
  if (target == "Qr") return DecompositionKind::kQr;
  if (target == "ProductOfElementaryHouseholderReflectors") return DecompositionKind::kHouseholderProduct;
  if (target == "Eigh") return DecompositionKind::kEigh;
  if (target == kSvdTarget) return DecompositionKind::kSvd;
  if (target == kTridiagonalSolveTarget) return DecompositionKind::kTridiagonalSolve;
  if (target == kTridiagonalTarget) return DecompositionKind::kTridiagonal;
  if (target == kHessenbergTarget) return DecompositionKind::kHessenberg;
  if (target == kEigTarget) return DecompositionKind::kEig;
  if (target == kSchurTarget) return DecompositionKind::kSchur;
  return std::nullopt;
}

const char* DecompositionKernelSuffix(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32:
      return "f32";
    case PrimitiveType::kF64:
      return "f64";
    case PrimitiveType::kC64:
      return "c64";
    case PrimitiveType::kC128:
      return "c128";
    case PrimitiveType::kBF16:
      return "bf16";
    case PrimitiveType::kF16:
      return "f16";
    default:
      return nullptr;
  }
}

absl::StatusOr<DecompositionCall> DecompositionCallOf(const Instruction& call) {
  const std::optional<DecompositionKind> kind = DecompositionKindOf(call.StringAttr("custom_call_target"));
  if (!kind.has_value()) return Malformed(call, "a decomposition target");
  DecompositionCall d;
  d.kind = *kind;
  static constexpr std::string_view kSignature[] = {
      "(a[..., m, n]) -> (lu[..., m, n], pivots s32[..., min(m, n)], permutation s32[..., m][, info s32[...]])",
      "(a[..., m, n]) -> (r[..., m, n], taus[..., min(m, n)])",
      "(a[..., m, n], taus[..., k]) -> q[..., m, n] with k <= n <= m",
      "(a[..., n, n]) -> (vectors[..., n, n], eigenvalues[..., n] of the real type[, info s32[...]])",
      "(a[..., m, n]) -> (s[..., k] of the real type, u[..., m, m or k], vt[..., n or k, n], info s32[...]) or "
      "(s, info), k = min(m, n)",
      "(dl[..., n], d[..., n], du[..., n], b[..., n, r]) -> (dl, d, du, x[..., n, r], info s32[...])",
      "(a[..., n, n]) -> (a[..., n, n], d[..., n] and e[..., n-1] of the real type, taus[..., n-1])",
      "(a[..., n, n]) -> (h[..., n, n], taus[..., n-1])",
      "(a[..., n, n]) -> (w[..., n], vl[..., n, n], vr[..., n, n], info s32[...]) for complex types, (wr[..., n], "
      "wi[..., n], vl, vr, info) with complex vl and vr for real types",
      "(a[..., n, n]) -> (t[..., n, n], z[..., n, n], w[..., n], info s32[...]) for complex types, (t, z, "
      "wr[..., n], wi[..., n], info) for real types"};
  const std::string_view signature = kSignature[static_cast<int>(d.kind)];
  // The matrix whose leading dimensions are the batch: a, or b of the tridiagonal solve.
  const int64_t matrix_operand = d.kind == DecompositionKind::kTridiagonalSolve ? 3 : 0;
  if (call.operand_count() <= matrix_operand || !call.operand(matrix_operand)->shape().IsArray() ||
      call.operand(matrix_operand)->shape().rank() < 2) {
    return Malformed(call, signature);
  }
  const Shape& a = call.operand(matrix_operand)->shape();
  d.type = a.element_type;
  const bool lapack_only = d.kind == DecompositionKind::kEig || d.kind == DecompositionKind::kSchur;
  if (DecompositionKernelSuffix(d.type) == nullptr || (lapack_only && !IsLapackType(d.type))) {
    return absl::InvalidArgumentError(fmt::format("custom-call %{}: {} has no {} kernel ({} have)", call.name(),
                                                  PrimitiveTypeName(d.type),
                                                  lapack_only ? "eigenvalue" : "decomposition",
                                                  lapack_only ? "f32, f64, c64 and c128"
                                                              : "f32, f64, c64, c128, "
                                                                "bf16 and f16"));
  }
  d.real = !IsComplexType(d.type);
  const int64_t rank = a.rank();
  const std::vector<int64_t> batch(a.dimensions.begin(), a.dimensions.end() - 2);
  d.m = a.dimensions[rank - 2];
  d.n = a.dimensions[rank - 1];
  d.k = std::min(d.m, d.n);
  d.batches = 1;
  for (int64_t b : batch) d.batches *= b;
  const PrimitiveType real = ComplexComponentType(d.type);
  const std::vector<const Shape*> out = Leaves(call.shape());
  auto is_info = [&](const Shape* s) { return Is(*s, PrimitiveType::kS32, batch, {}); };
  bool ok = false;
  switch (d.kind) {
    case DecompositionKind::kLu:
      ok = call.operand_count() == 1 && call.shape().IsTuple() && (out.size() == 3 || out.size() == 4) &&
           Is(*out[0], d.type, batch, {d.m, d.n}) && Is(*out[1], PrimitiveType::kS32, batch, {d.k}) &&
           Is(*out[2], PrimitiveType::kS32, batch, {d.m}) && (out.size() == 3 || is_info(out[3]));
      d.has_info = out.size() == 4;
      break;
    case DecompositionKind::kQr:
      ok = call.operand_count() == 1 && call.shape().IsTuple() && out.size() == 2 &&
           Is(*out[0], d.type, batch, {d.m, d.n}) && Is(*out[1], d.type, batch, {d.k});
      break;
    case DecompositionKind::kHouseholderProduct: {
      const Shape* taus = call.operand_count() == 2 ? &call.operand(1)->shape() : nullptr;
      ok = taus != nullptr && taus->IsArray() && taus->rank() == rank - 1 && call.shape().IsArray() &&
           Is(call.shape(), d.type, batch, {d.m, d.n}) && d.n <= d.m;
      if (ok) {
        d.k = taus->dimensions.back();
        ok = Is(*taus, d.type, batch, {d.k}) && d.k <= d.n;
      }
      break;
    }
    case DecompositionKind::kEigh:
      ok = call.operand_count() == 1 && d.m == d.n && call.shape().IsTuple() && (out.size() == 2 || out.size() == 3) &&
           Is(*out[0], d.type, batch, {d.n, d.n}) && Is(*out[1], real, batch, {d.n}) &&
           (out.size() == 2 || is_info(out[2]));
      d.has_info = out.size() == 3;
      if (ok && !ParseFlags(call.backend_config(), {&d.lower, &d.sort})) {
        return Malformed(call, "backend_config \"lower,sort_eigenvalues,...\" with 0 or 1 for the two flags");
      }
      break;
    case DecompositionKind::kSvd:
      d.has_info = true;
      if (call.operand_count() != 1 || !call.shape().IsTuple() || out.empty() || !Is(*out[0], real, batch, {d.k}) ||
          !is_info(out.back())) {
        break;
      }
      if (out.size() == 2) {
        d.compute_uv = false;
        ok = true;
      } else if (out.size() == 4) {
        d.full_matrices = Is(*out[1], d.type, batch, {d.m, d.m}) && Is(*out[2], d.type, batch, {d.n, d.n});
        ok = d.full_matrices || (Is(*out[1], d.type, batch, {d.m, d.k}) && Is(*out[2], d.type, batch, {d.k, d.n}));
      }
      break;
    case DecompositionKind::kTridiagonalSolve: {
      d.has_info = true;
      ok = call.operand_count() == 4 && out.size() == 5 && Is(*out[3], d.type, batch, {d.m, d.n}) && is_info(out[4]);
      for (int64_t i = 0; ok && i < 3; ++i) {
        ok = Is(call.operand(i)->shape(), d.type, batch, {d.m}) && Is(*out[i], d.type, batch, {d.m});
      }
      break;
    }
    case DecompositionKind::kTridiagonal: {
      const int64_t e = std::max<int64_t>(d.n - 1, 0);
      ok = call.operand_count() == 1 && d.m == d.n && out.size() == 4 && Is(*out[0], d.type, batch, {d.n, d.n}) &&
           Is(*out[1], real, batch, {d.n}) && Is(*out[2], real, batch, {e}) && Is(*out[3], d.type, batch, {e});
      if (ok && !ParseFlags(call.backend_config(), {&d.lower})) {
        return Malformed(call, "backend_config \"lower\" with 0 or 1");
      }
      break;
    }
    case DecompositionKind::kHessenberg: {
      const int64_t e = std::max<int64_t>(d.n - 1, 0);
      ok = call.operand_count() == 1 && d.m == d.n && out.size() == 2 && Is(*out[0], d.type, batch, {d.n, d.n}) &&
           Is(*out[1], d.type, batch, {e});
      d.low = 1;
      d.high = d.n;
      if (ok && (!ParseLowHigh(call.backend_config(), &d.low, &d.high) || d.low < 1 || d.high > d.n ||
                 (d.n > 0 && d.low > d.high))) {
        return Malformed(call, fmt::format("backend_config \"low,high\" with 1 <= low <= high <= {}", d.n));
      }
      break;
    }
    case DecompositionKind::kEig: {
      const PrimitiveType complex = ComplexOf(d.type);
      const size_t values = d.real ? 2 : 1;
      ok = call.operand_count() == 1 && d.m == d.n && out.size() == values + 3 &&
           Is(*out[0], d.real ? real : d.type, batch, {d.n}) && (!d.real || Is(*out[1], real, batch, {d.n})) &&
           Is(*out[values], complex, batch, {d.n, d.n}) && Is(*out[values + 1], complex, batch, {d.n, d.n}) &&
           is_info(out[values + 2]);
      d.has_info = true;
      if (ok && !ParseFlags(call.backend_config(), {&d.compute_left, &d.compute_right})) {
        return Malformed(call, "backend_config \"compute_left,compute_right\" with 0 or 1 for each");
      }
      break;
    }
    case DecompositionKind::kSchur: {
      const size_t values = d.real ? 2 : 1;
      ok = call.operand_count() == 1 && d.m == d.n && out.size() == values + 3 &&
           Is(*out[0], d.type, batch, {d.n, d.n}) && Is(*out[1], d.type, batch, {d.n, d.n}) &&
           Is(*out[2], d.real ? real : d.type, batch, {d.n}) && (!d.real || Is(*out[3], real, batch, {d.n})) &&
           is_info(out[values + 2]);
      d.has_info = true;
      break;
    }
  }
  if (!ok) return Malformed(call, signature);
  return d;
}

}  // namespace xlac
