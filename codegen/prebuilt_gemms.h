// The shared GEMM functions compiled when xlac is built, so that a JIT compile does not optimize and compile them
// again.
//
// A program's dots call a few shape-generic GEMM functions (codegen/ir_emitter_gemm.h): a micro-kernel, the blocked
// loop nest, a packer per operand layout and a small function per stride pattern. They depend only on their name
// (element type, numerics, load, unit strides, tile) and on the target's vector ISA, and they took 30-40 % of the LLVM
// time of a transformer layer. The build runs tools/xlac-gemm-gen, which emits every such function with the same
// emitter for each vector ISA below, optimizes and compiles them into one object linked into xlac_codegen, with a
// table of their names and addresses. A JIT compile whose target has one of those ISAs then drops the bodies of the
// functions the table has from its LLVM module before optimizing it and binds the names to the prebuilt code: the
// same IR, so the same results bit for bit; only what the table lacks is compiled. AOT objects keep their own copies
// (they must link without xlac's libraries).
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/target.h"

namespace llvm {
class Module;
class TargetMachine;
}  // namespace llvm

extern "C" {
// The layout the generated object defines (PrebuiltGemmLibrary writes it).
struct XlacPrebuiltGemmFunction {
  const char* name;  // the function's name in an emitted module ("xlac.gemm.kernel.f32.8x32.fma")
  const void* address;
};
struct XlacPrebuiltGemmSet {
  const char* cpu;                // the LLVM CPU the functions were compiled for ("x86-64-v4")
  const char* required_features;  // subtarget features a host needs to run them ("+avx512f,+avx512bw,...")
  int64_t flags;  // kPrebuiltAvx512 | kPrebuiltAvx512Bf16 | kPrebuiltFma: the TargetInfo they were emitted for
  int64_t count;
  const XlacPrebuiltGemmFunction* functions;
};
// Every set the build compiled (none from the generator's own stub).
const XlacPrebuiltGemmSet* xlac_prebuilt_gemm_sets(int64_t* count);
}

namespace xlac::codegen {

inline constexpr int64_t kPrebuiltAvx512 = 1, kPrebuiltAvx512Bf16 = 2, kPrebuiltFma = 4;

// The set whose functions are what the emitter writes for `target` (the same has_avx512 / has_avx512_bf16 /
// has_fma) and which `machine`'s CPU can run; null when there is none (another ISA, or a CPU without FMA).
const XlacPrebuiltGemmSet* FindPrebuiltGemms(const TargetInfo& target, const llvm::TargetMachine& machine);

// Turns every function of `module` that `set` has into an external declaration of that name (the JIT binds the
// names to the set's addresses). Returns how many. Run on a freshly emitted module, before it is optimized.
int UsePrebuiltGemms(llvm::Module& module, const XlacPrebuiltGemmSet& set);

// The generator's work (tools/xlac-gemm-gen): an object file, for the process's target triple, holding every shared
// GEMM function for each x86 vector ISA (AVX2 + FMA, AVX-512, AVX-512 with BF16) and `xlac_prebuilt_gemm_sets`.
// Its bytes depend on the emitter and LLVM alone (deterministic). On other architectures: the table alone, empty.
absl::StatusOr<std::string> BuildPrebuiltGemmObject();

}  // namespace xlac::codegen
