#include "codegen/jit_symbols.h"

#include "codegen/prebuilt_gemms.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "runtime/cpu/xlac_runtime.h"
#include "runtime/cpu/xlac_runtime_complex.h"
#include "runtime/cpu/xlac_runtime_kernels.h"
#include "runtime/cpu/xlac_runtime_p2p.h"
#include "runtime/cpu/xlac_runtime_rng.h"
#include "runtime/cpu/xlac_runtime_trace.h"

namespace xlac::codegen {

llvm::orc::SymbolMap JitRuntimeSymbols(llvm::orc::LLJIT& jit, const XlacPrebuiltGemmSet* prebuilt) {
  llvm::orc::SymbolMap runtime_symbols;
  auto bind = [&](const char* name, void* address) {
    runtime_symbols[jit.mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                                  llvm::JITSymbolFlags::Exported};
  };
  bind("xlac_rt_replica_id", reinterpret_cast<void*>(&xlac_rt_replica_id));
  bind("xlac_rt_partition_id", reinterpret_cast<void*>(&xlac_rt_partition_id));
  bind("xlac_rt_set_error", reinterpret_cast<void*>(&xlac_rt_set_error));
  bind("xlac_rt_failed", reinterpret_cast<void*>(&xlac_rt_failed));
  bind("xlac_rt_aligned_alloc", reinterpret_cast<void*>(&xlac_rt_aligned_alloc));
  bind("xlac_rt_free", reinterpret_cast<void*>(&xlac_rt_free));
  bind("xlac_rt_thread_scratch", reinterpret_cast<void*>(&xlac_rt_thread_scratch));
  bind("xlac_rt_device_parallel_for", reinterpret_cast<void*>(&xlac_rt_device_parallel_for));
  bind("xlac_rt_device_parallel_split", reinterpret_cast<void*>(&xlac_rt_device_parallel_split));
  bind("xlac_rt_all_reduce", reinterpret_cast<void*>(&xlac_rt_all_reduce));
  bind("xlac_rt_all_gather", reinterpret_cast<void*>(&xlac_rt_all_gather));
  bind("xlac_rt_reduce_scatter", reinterpret_cast<void*>(&xlac_rt_reduce_scatter));
  bind("xlac_rt_all_to_all", reinterpret_cast<void*>(&xlac_rt_all_to_all));
  bind("xlac_rt_collective_permute", reinterpret_cast<void*>(&xlac_rt_collective_permute));
  bind("xlac_rt_collective_broadcast", reinterpret_cast<void*>(&xlac_rt_collective_broadcast));
  bind("xlac_rt_barrier", reinterpret_cast<void*>(&xlac_rt_barrier));
  bind("xlac_rt_custom_call", reinterpret_cast<void*>(&xlac_rt_custom_call));
  bind("xlac_rt_infeed", reinterpret_cast<void*>(&xlac_rt_infeed));
  bind("xlac_rt_p2p_send", reinterpret_cast<void*>(&xlac_rt_p2p_send));
  bind("xlac_rt_p2p_recv", reinterpret_cast<void*>(&xlac_rt_p2p_recv));
  bind("xlac_rt_relayout", reinterpret_cast<void*>(&xlac_rt_relayout));
  bind("xlac_rt_winograd_input_f32", reinterpret_cast<void*>(&xlac_rt_winograd_input_f32));
  bind("xlac_rt_winograd_output_f32", reinterpret_cast<void*>(&xlac_rt_winograd_output_f32));
  bind("xlac_rt_winograd_conv_f32", reinterpret_cast<void*>(&xlac_rt_winograd_conv_f32));
  bind("xlac_rt_fft_c64", reinterpret_cast<void*>(&xlac_rt_fft_c64));
  bind("xlac_rt_fft_c128", reinterpret_cast<void*>(&xlac_rt_fft_c128));
  bind("xlac_rt_cholesky_f32", reinterpret_cast<void*>(&xlac_rt_cholesky_f32));
  bind("xlac_rt_cholesky_f64", reinterpret_cast<void*>(&xlac_rt_cholesky_f64));
  bind("xlac_rt_cholesky_c64", reinterpret_cast<void*>(&xlac_rt_cholesky_c64));
  bind("xlac_rt_cholesky_c128", reinterpret_cast<void*>(&xlac_rt_cholesky_c128));
  bind("xlac_rt_cholesky_bf16", reinterpret_cast<void*>(&xlac_rt_cholesky_bf16));
  bind("xlac_rt_cholesky_f16", reinterpret_cast<void*>(&xlac_rt_cholesky_f16));
  bind("xlac_rt_triangular_solve_f32", reinterpret_cast<void*>(&xlac_rt_triangular_solve_f32));
  bind("xlac_rt_triangular_solve_f64", reinterpret_cast<void*>(&xlac_rt_triangular_solve_f64));
  bind("xlac_rt_triangular_solve_c64", reinterpret_cast<void*>(&xlac_rt_triangular_solve_c64));
  bind("xlac_rt_triangular_solve_c128", reinterpret_cast<void*>(&xlac_rt_triangular_solve_c128));
  bind("xlac_rt_triangular_solve_bf16", reinterpret_cast<void*>(&xlac_rt_triangular_solve_bf16));
  bind("xlac_rt_triangular_solve_f16", reinterpret_cast<void*>(&xlac_rt_triangular_solve_f16));
  bind("xlac_rt_lu_f32", reinterpret_cast<void*>(&xlac_rt_lu_f32));
  bind("xlac_rt_lu_f64", reinterpret_cast<void*>(&xlac_rt_lu_f64));
  bind("xlac_rt_lu_c64", reinterpret_cast<void*>(&xlac_rt_lu_c64));
  bind("xlac_rt_lu_c128", reinterpret_cast<void*>(&xlac_rt_lu_c128));
  bind("xlac_rt_lu_bf16", reinterpret_cast<void*>(&xlac_rt_lu_bf16));
  bind("xlac_rt_lu_f16", reinterpret_cast<void*>(&xlac_rt_lu_f16));
  bind("xlac_rt_qr_f32", reinterpret_cast<void*>(&xlac_rt_qr_f32));
  bind("xlac_rt_qr_f64", reinterpret_cast<void*>(&xlac_rt_qr_f64));
  bind("xlac_rt_qr_c64", reinterpret_cast<void*>(&xlac_rt_qr_c64));
  bind("xlac_rt_qr_c128", reinterpret_cast<void*>(&xlac_rt_qr_c128));
  bind("xlac_rt_qr_bf16", reinterpret_cast<void*>(&xlac_rt_qr_bf16));
  bind("xlac_rt_qr_f16", reinterpret_cast<void*>(&xlac_rt_qr_f16));
  bind("xlac_rt_householder_product_f32", reinterpret_cast<void*>(&xlac_rt_householder_product_f32));
  bind("xlac_rt_householder_product_f64", reinterpret_cast<void*>(&xlac_rt_householder_product_f64));
  bind("xlac_rt_householder_product_c64", reinterpret_cast<void*>(&xlac_rt_householder_product_c64));
  bind("xlac_rt_householder_product_c128", reinterpret_cast<void*>(&xlac_rt_householder_product_c128));
  bind("xlac_rt_householder_product_bf16", reinterpret_cast<void*>(&xlac_rt_householder_product_bf16));
  bind("xlac_rt_householder_product_f16", reinterpret_cast<void*>(&xlac_rt_householder_product_f16));
  bind("xlac_rt_eigh_f32", reinterpret_cast<void*>(&xlac_rt_eigh_f32));
  bind("xlac_rt_eigh_f64", reinterpret_cast<void*>(&xlac_rt_eigh_f64));
  bind("xlac_rt_eigh_c64", reinterpret_cast<void*>(&xlac_rt_eigh_c64));
  bind("xlac_rt_eigh_c128", reinterpret_cast<void*>(&xlac_rt_eigh_c128));
  bind("xlac_rt_eigh_bf16", reinterpret_cast<void*>(&xlac_rt_eigh_bf16));
  bind("xlac_rt_eigh_f16", reinterpret_cast<void*>(&xlac_rt_eigh_f16));
  bind("xlac_rt_svd_f32", reinterpret_cast<void*>(&xlac_rt_svd_f32));
  bind("xlac_rt_svd_f64", reinterpret_cast<void*>(&xlac_rt_svd_f64));
  bind("xlac_rt_svd_c64", reinterpret_cast<void*>(&xlac_rt_svd_c64));
  bind("xlac_rt_svd_c128", reinterpret_cast<void*>(&xlac_rt_svd_c128));
  bind("xlac_rt_svd_bf16", reinterpret_cast<void*>(&xlac_rt_svd_bf16));
  bind("xlac_rt_svd_f16", reinterpret_cast<void*>(&xlac_rt_svd_f16));
#define XLAC_BIND_DECOMPOSITION(kernel)                                              \
  bind("xlac_rt_" #kernel "_f32", reinterpret_cast<void*>(&xlac_rt_##kernel##_f32)); \
  bind("xlac_rt_" #kernel "_f64", reinterpret_cast<void*>(&xlac_rt_##kernel##_f64)); \
  bind("xlac_rt_" #kernel "_c64", reinterpret_cast<void*>(&xlac_rt_##kernel##_c64)); \
  bind("xlac_rt_" #kernel "_c128", reinterpret_cast<void*>(&xlac_rt_##kernel##_c128));
  XLAC_BIND_DECOMPOSITION(tridiagonal_solve)
  XLAC_BIND_DECOMPOSITION(tridiagonal_reduction)
  XLAC_BIND_DECOMPOSITION(hessenberg)
  XLAC_BIND_DECOMPOSITION(eig)
  XLAC_BIND_DECOMPOSITION(schur)
  bind("xlac_rt_tridiagonal_solve_bf16", reinterpret_cast<void*>(&xlac_rt_tridiagonal_solve_bf16));
  bind("xlac_rt_tridiagonal_solve_f16", reinterpret_cast<void*>(&xlac_rt_tridiagonal_solve_f16));
  bind("xlac_rt_tridiagonal_reduction_bf16", reinterpret_cast<void*>(&xlac_rt_tridiagonal_reduction_bf16));
  bind("xlac_rt_tridiagonal_reduction_f16", reinterpret_cast<void*>(&xlac_rt_tridiagonal_reduction_f16));
  bind("xlac_rt_hessenberg_bf16", reinterpret_cast<void*>(&xlac_rt_hessenberg_bf16));
  bind("xlac_rt_hessenberg_f16", reinterpret_cast<void*>(&xlac_rt_hessenberg_f16));
#undef XLAC_BIND_DECOMPOSITION
  bind("xlac_rt_rng_bit_generator", reinterpret_cast<void*>(&xlac_rt_rng_bit_generator));
  bind("xlac_rt_topk_keys", reinterpret_cast<void*>(&xlac_rt_topk_keys));
  bind("xlac_rt_trace_begin", reinterpret_cast<void*>(&xlac_rt_trace_begin));
  bind("xlac_rt_trace_end", reinterpret_cast<void*>(&xlac_rt_trace_end));
  int64_t complex_count = 0;
  const XlacRtComplexSymbol* complex_symbols = xlac_rt_complex_symbols(&complex_count);
  for (int64_t i = 0; i < complex_count; ++i) bind(complex_symbols[i].name, complex_symbols[i].address);
  // The shared GEMM functions LowerToObjects / LowerToLlvm left as declarations (codegen/prebuilt_gemms.h).
  if (prebuilt != nullptr) {
    for (int64_t i = 0; i < prebuilt->count; ++i) {
      bind(prebuilt->functions[i].name, const_cast<void*>(prebuilt->functions[i].address));
    }
  }
  return runtime_symbols;
}

}  // namespace xlac::codegen
