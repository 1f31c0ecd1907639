// The decomposition custom calls (ir/decomposition_calls.h) on literals, with the runtime's kernels
// (runtime/cpu/decompositions.cc) that compiled code calls too, so both backends agree bit for bit.
#include <optional>
#include <string>
#include <vector>

#include "ir/decomposition_calls.h"
#include "runtime/cpu/xlac_runtime_kernels.h"
#include "runtime/interpreter/internal.h"

namespace xlac::interp {
namespace {

struct Kernels {
  decltype(&xlac_rt_lu_f32) lu;
  decltype(&xlac_rt_qr_f32) qr;
  decltype(&xlac_rt_householder_product_f32) householder_product;
  decltype(&xlac_rt_eigh_f32) eigh;
  decltype(&xlac_rt_svd_f32) svd;
  decltype(&xlac_rt_tridiagonal_solve_f32) tridiagonal_solve;
  decltype(&xlac_rt_tridiagonal_reduction_f32) tridiagonal;
  decltype(&xlac_rt_hessenberg_f32) hessenberg;
  decltype(&xlac_rt_eig_f32) eig = nullptr;  // LAPACK's types only
  decltype(&xlac_rt_schur_f32) schur = nullptr;
};

#define XLAC_KERNELS(suffix)                                                                                 \
  &xlac_rt_lu_##suffix, &xlac_rt_qr_##suffix, &xlac_rt_householder_product_##suffix, &xlac_rt_eigh_##suffix, \
      &xlac_rt_svd_##suffix, &xlac_rt_tridiagonal_solve_##suffix, &xlac_rt_tridiagonal_reduction_##suffix,   \
      &xlac_rt_hessenberg_##suffix
#define XLAC_EIGEN_KERNELS(suffix) &xlac_rt_eig_##suffix, &xlac_rt_schur_##suffix

std::optional<Kernels> KernelsFor(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kF32:
      return Kernels{XLAC_KERNELS(f32), XLAC_EIGEN_KERNELS(f32)};
    case PrimitiveType::kF64:
      return Kernels{XLAC_KERNELS(f64), XLAC_EIGEN_KERNELS(f64)};
    case PrimitiveType::kC64:
      return Kernels{XLAC_KERNELS(c64), XLAC_EIGEN_KERNELS(c64)};
    case PrimitiveType::kC128:
      return Kernels{XLAC_KERNELS(c128), XLAC_EIGEN_KERNELS(c128)};
    case PrimitiveType::kBF16:
      return Kernels{XLAC_KERNELS(bf16)};
    case PrimitiveType::kF16:
      return Kernels{XLAC_KERNELS(f16)};
    default:
      return std::nullopt;
  }
}
#undef XLAC_KERNELS
#undef XLAC_EIGEN_KERNELS

void* Raw(Literal& lit) { return lit.mutable_raw_data(); }

int32_t* Int32s(Literal& lit) { return reinterpret_cast<int32_t*>(lit.mutable_raw_data()); }

}  // namespace

std::optional<absl::StatusOr<Literal>> EvalDecompositionCall(const Instruction& inst, Operands operands) {
  if (!DecompositionKindOf(inst.StringAttr("custom_call_target")).has_value()) return std::nullopt;
  absl::StatusOr<DecompositionCall> call = DecompositionCallOf(inst);
  if (!call.ok()) return call.status();
  const DecompositionCall& d = *call;
  const std::optional<Kernels> kernels = KernelsFor(d.type);
  if (!kernels.has_value()) return Error(inst, "no decomposition kernel for {}", PrimitiveTypeName(d.type));
  if ((d.kind == DecompositionKind::kEig && kernels->eig == nullptr) ||
      (d.kind == DecompositionKind::kSchur && kernels->schur == nullptr)) {
    return Error(inst, "no eigenvalue kernel for {}", PrimitiveTypeName(d.type));
  }
  const void* a = operands[0]->raw_data();
  if (d.kind == DecompositionKind::kHouseholderProduct) {
    Literal q(inst.shape());
    if (d.batches > 0) {
      kernels->householder_product(a, operands[1]->raw_data(), q.mutable_raw_data(), d.batches, d.m, d.n, d.k);
    }
    return q;
  }
  std::vector<Literal> parts;
  for (const Shape& s : inst.shape().tuple_shapes) parts.emplace_back(s);
  if (d.batches > 0) {
    switch (d.kind) {
      case DecompositionKind::kLu:
        kernels->lu(a, parts[0].mutable_raw_data(), Int32s(parts[1]), Int32s(parts[2]),
                    d.has_info ? Int32s(parts[3]) : nullptr, d.batches, d.m, d.n);
        break;
      case DecompositionKind::kQr:
        kernels->qr(a, parts[0].mutable_raw_data(), parts[1].mutable_raw_data(), d.batches, d.m, d.n);
        break;
      case DecompositionKind::kEigh:
        kernels->eigh(a, parts[0].mutable_raw_data(), parts[1].mutable_raw_data(),
                      d.has_info ? Int32s(parts[2]) : nullptr, d.batches, d.n, d.lower, d.sort);
        break;
      case DecompositionKind::kSvd:
        kernels->svd(a, parts[0].mutable_raw_data(), d.compute_uv ? parts[1].mutable_raw_data() : nullptr,
                     d.compute_uv ? parts[2].mutable_raw_data() : nullptr, Int32s(parts.back()), d.batches, d.m, d.n,
                     d.full_matrices);
        break;
      case DecompositionKind::kTridiagonalSolve:
        kernels->tridiagonal_solve(a, operands[1]->raw_data(), operands[2]->raw_data(), operands[3]->raw_data(),
                                   Raw(parts[0]), Raw(parts[1]), Raw(parts[2]), Raw(parts[3]), Int32s(parts[4]),
                                   d.batches, d.m, d.n);
        break;
      case DecompositionKind::kTridiagonal:
        kernels->tridiagonal(a, Raw(parts[0]), Raw(parts[1]), Raw(parts[2]), Raw(parts[3]), d.batches, d.n, d.lower);
        break;
      case DecompositionKind::kHessenberg:
        kernels->hessenberg(a, Raw(parts[0]), Raw(parts[1]), d.batches, d.n, static_cast<int32_t>(d.low),
                            static_cast<int32_t>(d.high));
        break;
      case DecompositionKind::kEig: {
        const size_t v = d.real ? 2 : 1;
        kernels->eig(a, Raw(parts[0]), d.real ? Raw(parts[1]) : nullptr, Raw(parts[v]), Raw(parts[v + 1]),
                     Int32s(parts[v + 2]), d.batches, d.n, d.compute_left, d.compute_right);
        break;
      }
      case DecompositionKind::kSchur:
        kernels->schur(a, Raw(parts[0]), Raw(parts[1]), Raw(parts[2]), d.real ? Raw(parts[3]) : nullptr,
                       Int32s(parts.back()), d.batches, d.n);
        break;
      case DecompositionKind::kHouseholderProduct:
        break;
    }
  }
  return Literal::CreateTuple(std::move(parts));
}

}  // namespace xlac::interp
