// The machine code is generated for: host CPU detection and TargetMachine creation through LLVM.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace llvm {
class Function;
class TargetMachine;
}  // namespace llvm

namespace xlac::codegen {

struct TargetOptions {
  // "host" (detected through llvm::sys) or an LLVM CPU name such as "skylake-avx512" or "x86-64-v3".
  std::string cpu = "host";
  int opt_level = 2;  // 0..3
};

struct TargetInfo {
  std::string triple;
  std::string cpu;       // resolved CPU name
  std::string features;  // "+avx2,+avx512f,..." ("" for a named CPU: its defaults)
  bool has_avx512 = false;
  bool has_avx512_bf16 = false;  // vdpbf16ps: bf16 dots (codegen/ir_emitter_gemm.h, GemmSpec::bf16_pairs)
  bool has_fma = false;
};

absl::StatusOr<TargetInfo> ResolveTarget(const TargetOptions& options);

// A TargetMachine for `info`, PIC (objects go into PIE executables) and with strict FP contraction: the
// interpreter rounds every product and sum separately, so a*b+c must never become an FMA.
absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const TargetInfo& info, int opt_level);

// target-cpu/target-features (a named CPU's features are its defaults, plus an explicit "+fma" when it has FMA, which
// the inlined math reads: codegen/fast_math.cc), and "prefer-vector-width"="512" when AVX-512 is available (LLVM
// otherwise stays at 256-bit vectors on Intel server parts).
void SetFunctionTargetAttributes(llvm::Function& fn, const TargetInfo& info);

}  // namespace xlac::codegen
