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

// "lower,sort_eigenvalues,..." (XLA's TPU Eigh): the first two fields, each 0 or 1, default 1.
bool ParseEighConfig(const std::string& config, bool* lower, bool* sort) {
  *lower = true;
  *sort = true;
  if (config.empty()) return true;
  std::vector<std::string> fields;
  size_t start = 0;
  for (size_t comma; (comma = config.find(',', start)) != std::string::npos; start = comma + 1) {
    fields.push_back(config.substr(start, comma - start));
  }
  fields.push_back(config.substr(start));
  bool* flags[2] = {lower, sort};
  for (size_t i = 0; i < 2 && i < fields.size(); ++i) {
    if (fields[i] != "0" && fields[i] != "1") return false;
    *flags[i] = fields[i] == "1";
  }
  return true;
}

}  // namespace

std::optional<DecompositionKind> DecompositionKindOf(std::string_view target) {
  if (target == "LuDecomposition") return DecompositionKind::kLu;
  if (target == "Qr") return DecompositionKind::kQr;
  if (target == "ProductOfElementaryHouseholderReflectors") return DecompositionKind::kHouseholderProduct;
  if (target == "Eigh") return DecompositionKind::kEigh;
  if (target == kSvdTarget) return DecompositionKind::kSvd;
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
      "(s, info), k = min(m, n)"};
  const std::string_view signature = kSignature[static_cast<int>(d.kind)];
  if (call.operand_count() < 1 || !call.operand(0)->shape().IsArray() || call.operand(0)->shape().rank() < 2) {
    return Malformed(call, signature);
  }
  const Shape& a = call.operand(0)->shape();
  d.type = a.element_type;
  if (DecompositionKernelSuffix(d.type) == nullptr) {
    return absl::InvalidArgumentError(
        fmt::format("custom-call %{}: {} has no decomposition kernel (f32, f64, c64, "
                    "c128, bf16 and f16 have)",
                    call.name(), PrimitiveTypeName(d.type)));
  }
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
      if (ok && !ParseEighConfig(call.backend_config(), &d.lower, &d.sort)) {
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
  }
  if (!ok) return Malformed(call, signature);
  return d;
}

}  // namespace xlac
