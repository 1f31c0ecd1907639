// The reference interpreter: evaluates an HLO module directly, following XLA's operation semantics. It is the
// oracle every compiled result is checked against, so it favours obvious correctness over speed.
//
// Precondition: the module verifies (passes/verifier.h). Depends only on ir/ (never on LLVM).
//
// Numerics follow XLA's HloEvaluator: bf16/f16/f8 ops compute in f32 and round to the element type after every op;
// integer arithmetic wraps; x/0 is -1 (signed) or all ones (unsigned), x%0 is x, INT_MIN/-1 is INT_MIN and
// INT_MIN%-1 is 0; float->int converts saturate with NaN->0; reductions accumulate sequentially in row-major order
// with the accumulator as the reducer's first argument; dot and convolution convert operands to the result type and
// accumulate in its compute type (f32 for narrow floats, 64-bit for integers). Where XLA's evaluator deviates from
// what compiled XLA does (it saturates integer convolutions), the interpreter wraps like compiled code.
//
// Custom-calls: "Sharding", "ShardBarrierFrom" and "ShardBarrierTo" are identities; "interpreter.run_parallel" and
// "interpreter.probe" (the StableHLO reference interpreter's ops, kept by the StableHLO frontend) run a grid of
// programs / pass their operand through;
// the matrix decompositions of ir/decomposition_calls.h ("LuDecomposition", "Qr", "Eigh", ...) run the runtime kernels;
// any other target goes to InterpreterOptions::custom_call_handler or fails with "unsupported custom call target X".
// Dynamic dimensions are evaluated at their bounds (runtime sizes are not tracked). Infeed has no host behind it: it
// yields seeded pseudo-random data (per seed, instruction name, device and occurrence); outfeed discards its data.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace xlac::interp {

// A compiled elementwise kernel applied to `count` elements: operand k's element i is at operands[k] + i (or its
// element 0 when broadcast[k] is nonzero), stored as the element type stores (pred one byte, bf16/f16 their bits);
// result element i goes to result + i.
using ElementwiseKernelFn = void (*)(const void* const* operands, const uint8_t* broadcast, void* result,
                                     int64_t count);
// A compiled buffer kernel's entry point (XLAC_BUFFER_KERNEL): `frame` is an XlacKernelFrame
// (include/xlac/custom_call.h); nonzero means failure, with the kernel's message in frame->error.
using BufferKernelFn = int32_t (*)(const void* frame);
// Compiled C++ kernels, by kernel symbol (ir/kernel_calls.h).
struct CompiledKernels {
  absl::flat_hash_map<std::string, ElementwiseKernelFn> elementwise;
  absl::flat_hash_map<std::string, BufferKernelFn> buffer;
};
// The name InterpreterOptions::elementwise_kernels had before buffer kernels; its users still spell it so.
using ElementwiseKernels = CompiledKernels;

struct InterpreterOptions {
  // Devices = replicas x partitions; each runs the entry computation on its own thread, with real rendezvous for
  // collectives. 0 means "take the module's replica_count / num_partitions".
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  // Seed for rng ops and for values of elided `{...}` constants.
  uint64_t seed = 42;
  // How long a device waits at a collective before reporting which devices never arrived.
  int64_t collective_timeout_ms = 30000;
  // Largest result (bytes) a single instruction may produce; larger ones fail instead of exhausting memory.
  int64_t max_result_bytes = int64_t{4} << 30;
  // TPU dot numerics (ir/tpu_numerics.h): f32 dots and convolutions at DEFAULT precision round their operands to
  // bf16 and accumulate in f32, as a TPU's matrix unit does; HIGH is the 3-pass bf16 split; HIGHEST stays f32.
  bool tpu_numerics = false;
  // Threads for the large kernels (dot, convolution) of all devices together; 0 means the CPUs of the process's
  // affinity mask. Each device gets max(1, threads / devices). Results never depend on it: threads split only
  // independent output blocks, never one element's sum.
  int64_t threads = 0;
  // Evaluates custom-calls the interpreter does not implement itself (test-harness `check.*` targets, tool hooks).
  // Called from every device thread, possibly concurrently. Returning an Unimplemented status falls back to the
  // interpreter's "unsupported custom call target X" error.
  std::function<absl::StatusOr<Literal>(const Instruction& custom_call, const std::vector<const Literal*>& operands)>
      custom_call_handler;
  // Custom calls bound to C++ kernels (ir/kernel_calls.h), elementwise and buffer kernels alike, run the kernel's
  // compiled function, found here by the call's kernel symbol (codegen/clang/kernel_runner.h compiles them): the
  // interpreter computes what the program computes. Not owned; null when the program has no kernels.
  const ElementwiseKernels* elementwise_kernels = nullptr;
  // Called after each instruction of the entry computation ran (instructions of called computations count in their
  // caller's time; parameters and get-tuple-elements, which compute nothing, are not reported), with the
  // steady-clock nanoseconds it began and ended. Called from device threads, possibly concurrently. xla-run's
  // --trace and --metrics report these with --backend=interpreter.
  std::function<void(int64_t device_id, const Instruction& inst, int64_t begin_ns, int64_t end_ns)> on_instruction;
};

// Runs the entry computation on every device. `arguments[d]` are device d's parameters (d = replica *
// num_partitions + partition); a single argument list is broadcast to all devices (and no list at all means no
// arguments). Returns one result literal per device. Errors (unsupported op, mismatched collective, bad arguments)
// are statuses with readable messages; with several devices they name the device that failed first.
// The instructions of `comp` the interpreter evaluates: those reachable from the root or from a side-effecting
// instruction through operands and control edges (shared with xla-run's memory estimate, which replays it).
absl::flat_hash_set<const Instruction*> LiveInstructions(const Computation& comp);

absl::StatusOr<std::vector<Literal>> Evaluate(const Module& module, const std::vector<std::vector<Literal>>& arguments,
                                              const InterpreterOptions& options = {});

// Deterministic pseudo-random values of `shape` (tuples recursively), the same for the same (shape, seed) on every
// platform: floats uniform in [-1, 1) rounded to the element type (f8e8m0fnu, which has no sign or zero, takes
// magnitudes in [0.125, 1.125)), complex parts likewise, signed and unsigned integers uniform in [0, 8), pred
// uniform. Elided `{...}` constants get these values with a seed derived from
// options.seed and the constant's name; tools use it to make reproducible inputs.
Literal MakeRandomLiteral(const Shape& shape, uint64_t seed);

// The value the interpreter gives an elided `{...}` constant named `name` of `shape` under `seed`. Tools that
// compile a module fill its elided constants with this first, so compiled code sees the interpreter's values.
Literal ElidedConstantValue(const Shape& shape, std::string_view name, uint64_t seed);

// The data (element 0 of the result) the interpreter gives the `occurrence`-th execution (from 0) of the infeed
// named `name` on device `device_id` under `seed`. Compiled code asks a host for infeed data; hosts that want the
// interpreter's values (xla-run) answer with this.
Literal InfeedValue(const Shape& data_shape, std::string_view name, uint64_t seed, int64_t device_id,
                    uint64_t occurrence);

}  // namespace xlac::interp
