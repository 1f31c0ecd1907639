// HLO -> LLVM IR. One LLVM module per HLO module: the entry computation (with its while/conditional computations
// inlined as basic-block regions) becomes one function
//   void <entry_name>(void* const* buffers, XlacRtDevice* dev)
// where buffers[i] is the base of allocation i of the BufferAssignment (parameter allocations and the temp arena
// are supplied by the caller; constant allocations are globals of the module and their buffers[i] is ignored). The
// entry calls one internal function per compute kernel (CodegenOptions::outline_kernels).
// Embedded computations (reducers, comparators) are emitted inline as scalar code.
//
// Numerics (docs/numerics.md): with CodegenOptions::exact they follow the reference interpreter bit for bit
// (runtime/interpreter/interpreter.h): narrow floats compute in f32 and round after every op, transcendental
// functions call the same libm entry points, reductions and dot products accumulate sequentially in row-major order,
// and no floating-point reassociation or contraction happens. The default mode keeps the per-op rounding but inlines
// vectorizable approximations (codegen/fast_math.h), reassociates reductions and uses FMA in the GEMM, within the
// documented bounds.
//
// Ops that are not lowered yet fail with absl::UnimplementedError naming the opcode (never a crash).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "codegen/target.h"
#include "ir/module.h"
#include "passes/buffer_assignment.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace xlac::codegen {

struct CodegenOptions {
  std::string entry_name = "xlac_entry";
  TargetInfo target;
  // f32/f64 matmul-shaped dots use the packed, register-tiled GEMM (codegen/ir_emitter_gemm.cc); false keeps the
  // plain loop nest for every dot (benchmarks compare the two).
  bool tiled_dot = true;
  // f32/f64 convolutions whose output layout fits use the same GEMM on an implicit im2col
  // (codegen/ir_emitter_convolution_tiled.cc); false keeps the loop nest.
  bool tiled_convolution = true;
  // Exact mode (--exact): bit-for-bit agreement with the reference interpreter: sequential reductions, libm calls,
  // no FMA contraction or reassociation. The default may reassociate and approximate within the bounds written in
  // docs/numerics.md.
  bool exact = false;
  // Large loop nests, GEMMs and convolutions run on the device's threads (xlac_rt_device_parallel_for); how many
  // is the runtime's choice and never changes a result. false emits every loop inline.
  bool parallel = true;
  // Chains of row reductions and loops over the same rows (softmax, layer norm) run row by row, so a row is read
  // from memory once (codegen/row_groups.h). Never changes a result.
  bool row_groups = true;
  // TPU dot numerics (ir/tpu_numerics.h): f32 dots and convolutions at DEFAULT precision round their operands to
  // bf16 and accumulate in f32, bit for bit the interpreter with InterpreterOptions::tpu_numerics (HIGH arrives
  // already split into DEFAULT dots by the tpu-dot-precision pass).
  bool tpu_numerics = false;
  // Calls xlac_rt_trace_begin/end(dev, instruction unique_id) around every kernel of the entry computation and of
  // the control flow it runs (runtime/cpu/xlac_runtime_trace.h), for --trace and per-core kernel time. Off: no
  // call is emitted, so untraced code pays nothing.
  bool trace_kernels = false;
  // The seed of the stateful `rng` op's streams (interp::InterpreterOptions::seed, whose streams the compiled code
  // reproduces: xla-run passes its --seed to both). A constant of the code.
  uint64_t rng_seed = 42;
  // Entry results of at least this many bytes that one loop writes element by element, once (loop fusions and
  // elementwise ops at the root), are written with non-temporal stores on x86: lines nothing reads again before the
  // program ends skip the read-for-ownership and do not evict the cache. The compiled code then assumes their
  // buffers are 64-byte aligned, as every buffer of an AOT entry is and the JIT's arena is (JitExecutable binds a
  // caller's result buffer in place only when it is). 0 turns it off. Never changes a result.
  int64_t streaming_store_bytes = int64_t{16} << 20;
  // Every compute kernel of the entry (and of the control flow it runs) becomes an internal function of its own
  // that the entry calls, its buffers passed as arguments: no function grows with the program, and kernels that
  // differ only in where their buffers live are identical functions, merged before LLVM optimizes them
  // (codegen/optimize.cc). Never changes a result; false keeps every kernel inline in the entry.
  bool outline_kernels = true;
};

absl::StatusOr<std::unique_ptr<llvm::Module>> EmitModule(const Module& module, const BufferAssignment& assignment,
                                                         llvm::LLVMContext& context, const CodegenOptions& options);

}  // namespace xlac::codegen
