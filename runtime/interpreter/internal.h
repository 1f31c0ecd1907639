// Shared machinery of the reference interpreter; not part of its API.
//
// Values are Literals (row-major logical storage, see ir/literal.h). Arithmetic happens in a small set of
// "compute types", one per NumKind:
//   pred -> bool, signed ints -> int64_t, unsigned ints -> uint64_t, f32 and every narrower float -> float,
//   f64 -> double, c64 -> complex<float>, c128 -> complex<double>.
// Loading widens exactly; storing narrows the way XLA's evaluator does (integers wrap to their width, floats round
// to nearest even in the element type). Every op result is stored, so bf16/f16/f8 values are rounded after every
// op, as XLA's evaluator does by computing in float and converting back.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "fmt/format.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/status_macros.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::interp {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

enum class NumKind : uint8_t { kPred, kSigned, kUnsigned, kFloat, kDouble, kC64, kC128 };
// Only valid for array element types.
NumKind KindOf(PrimitiveType type);

// Calls f(C{}) with the compute type of `kind`.
template <typename F>
decltype(auto) DispatchKind(NumKind kind, F&& f) {
  switch (kind) {
    case NumKind::kPred:
      return f(bool{});
    case NumKind::kSigned:
      return f(int64_t{});
    case NumKind::kUnsigned:
      return f(uint64_t{});
    case NumKind::kFloat:
      return f(float{});
    case NumKind::kDouble:
      return f(double{});
    case NumKind::kC64:
      return f(c64{});
    case NumKind::kC128:
      break;
  }
  return f(c128{});
}

template <typename C>
inline constexpr bool kIsComplex = std::is_same_v<C, c64> || std::is_same_v<C, c128>;
template <typename C>
inline constexpr bool kIsFloat = std::is_same_v<C, float> || std::is_same_v<C, double>;
template <typename C>
inline constexpr bool kIsInt = std::is_same_v<C, int64_t> || std::is_same_v<C, uint64_t>;

// Element access in compute type C (C must be the compute type of the literal's element type).
template <typename C>
C LoadOne(const Literal& lit, int64_t i);
template <typename C>
void StoreOne(Literal& lit, int64_t i, C v);
template <typename C>
std::vector<C> LoadAll(const Literal& lit);
template <typename C>
void StoreAll(Literal& lit, const std::vector<C>& values);
// `v` rounded/wrapped to what element type `type` can hold, in compute type C.
template <typename C>
C Normalize(C v, PrimitiveType type);

// float <-> narrow float bits (fast paths for bf16/f16).
float NarrowToFloat(PrimitiveType type, uint64_t bits);
uint64_t FloatToNarrow(PrimitiveType type, float v);

// Integer-type limits as int64/uint64 (sub-byte types included).
int64_t SignedMin(PrimitiveType type);
int64_t SignedMax(PrimitiveType type);
uint64_t UnsignedMax(PrimitiveType type);

// ---- shapes and indices ----

int64_t ElementCount(const Shape& shape);
std::vector<int64_t> RowMajorStrides(const std::vector<int64_t>& dims);
// Advances `index` in row-major order within `dims`; false after the last index.
bool NextIndex(std::vector<int64_t>& index, const std::vector<int64_t>& dims);
// memcpy that accepts empty ranges (whose pointers may be null, as for zero-element literals).
inline void CopyBytes(void* dst, const void* src, int64_t n) {
  if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n));
}
// Copies one element's storage bytes (types must match).
inline void CopyElement(const Literal& src, int64_t si, Literal& dst, int64_t di, int64_t width) {
  std::memcpy(dst.mutable_raw_data() + di * width, src.raw_data() + si * width, static_cast<size_t>(width));
}
// An array literal of `type` and `dims` (no layout).
Literal MakeArray(PrimitiveType type, std::vector<int64_t> dims);
// Scalar literals.
Literal ScalarS64(PrimitiveType type, int64_t v);
// The i-th element of an integral index literal (unsigned values above int64 max saturate).
int64_t IndexValue(const Literal& lit, int64_t i);
// Physical (layout) order: element at physical position p is logical linear index PhysicalToLogical(shape)[p].
std::vector<int64_t> PhysicalToLogical(const Shape& shape);
bool HasNonDefaultLayout(const Shape& shape);

// For one spatial dimension: taps[o] = the (operand coordinate, window position) pairs of output coordinate o that
// land inside the operand (not in padding or base-dilation holes), in window order.
using WindowTaps = std::vector<std::vector<std::pair<int64_t, int64_t>>>;
WindowTaps MakeWindowTaps(const WindowDimension& wd, int64_t operand_size, int64_t output_size);

// ---- attributes (the module is verified, so kinds are trusted; absent attributes take defaults) ----

const std::vector<int64_t>& IntList(const Instruction& inst, std::string_view name);
int64_t IntAttr(const Instruction& inst, std::string_view name, int64_t fallback);
bool BoolAttr(const Instruction& inst, std::string_view name, bool fallback);
std::string_view TextAttr(const Instruction& inst, std::string_view name);
const Window* WindowAttr(const Instruction& inst);

template <typename... Args>
absl::Status Error(const Instruction& inst, fmt::format_string<Args...> format, Args&&... args) {
  return absl::InvalidArgumentError(fmt::format("{} ({}): {}", inst.name(), OpcodeName(inst.opcode()),
                                                fmt::format(format, std::forward<Args>(args)...)));
}
template <typename... Args>
absl::Status Unsupported(const Instruction& inst, fmt::format_string<Args...> format, Args&&... args) {
  return absl::UnimplementedError(fmt::format("{} ({}): {}", inst.name(), OpcodeName(inst.opcode()),
                                              fmt::format(format, std::forward<Args>(args)...)));
}

// ---- devices and collectives ----

class CollectiveHub;

struct DeviceContext {
  int64_t device_id = 0;
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  int64_t num_replicas = 1;
  int64_t num_partitions = 1;
  const InterpreterOptions* options = nullptr;
  CollectiveHub* hub = nullptr;
  uint64_t rng_counter = 0;  // advanced by every `rng` op
  // Point-to-point message counts per (source, target) device pair: sends and receives match in program order.
  std::map<std::pair<int64_t, int64_t>, int64_t> sent, received;
  // Without source/target pairs, messages pair up per channel id in program order.
  std::map<int64_t, int64_t> sent_on_channel, received_on_channel;
};

using Operands = absl::Span<const Literal* const>;

// Evaluates computations for one device. Not thread-safe; each device thread has its own.
class Evaluator {
 public:
  Evaluator(const Module& module, DeviceContext& device);
  ~Evaluator();

  absl::StatusOr<Literal> Call(const Computation& comp, Operands args);
  DeviceContext& device() { return device_; }
  const Module& module() const { return module_; }
  // How many times this device has executed `inst` before (used to match collectives across devices).
  int64_t NextOccurrence(const Instruction& inst);

 private:
  struct Plan;
  const Plan& GetPlan(const Computation& comp);
  absl::StatusOr<Literal> EvalInstruction(const Instruction& inst, Operands operands);
  absl::StatusOr<Literal> EvalControl(const Instruction& inst, Operands operands);
  absl::StatusOr<Literal> EvalAsync(const Instruction& inst, Operands operands);

  const Module& module_;
  DeviceContext& device_;
  absl::flat_hash_map<const Computation*, std::unique_ptr<Plan>> plans_;
  absl::flat_hash_map<const Instruction*, int64_t> occurrences_;
  absl::flat_hash_map<const Instruction*, std::unique_ptr<Instruction>> inline_async_ops_;
  int depth_ = 0;
};

// Applies a computation over scalars to single elements of literals: the engine of reduce, reduce-window, scatter,
// select-and-scatter, sort, map and all-reduce. Computations made only of scalar elementwise ops (the usual
// reducers and comparators) are compiled once into a register program that runs without building literals; others
// go through Evaluator::Call. Both paths compute exactly the same values.
class ScalarComputation {
 public:
  ScalarComputation(Evaluator& ev, const Computation& comp);
  ~ScalarComputation();
  struct In {
    const Literal* lit;
    int64_t index;
  };
  struct Out {
    Literal* lit;
    int64_t index;
  };
  // args.size() == number of parameters; outs.size() == number of result elements (1 for a scalar result).
  absl::Status Apply(absl::Span<const In> args, absl::Span<const Out> outs);
  // For a computation returning pred[] (comparators, select of select-and-scatter).
  absl::StatusOr<bool> ApplyPred(absl::Span<const In> args);
  // True if the computation is a single elementwise binary op on its two parameters (swapped: op(p1, p0));
  // callers may then apply the op's kernel directly to whole arrays.
  bool FastBinary(Opcode* op, bool* swapped) const;

  struct Program;  // defined in scalar_computation.cc

 private:
  absl::StatusOr<const Literal*> CallGeneric(absl::Span<const In> args);

  Evaluator& ev_;
  const Computation& comp_;
  std::unique_ptr<Program> program_;
  std::vector<Literal> arg_literals_;
  std::vector<const Literal*> arg_ptrs_;
  Literal last_result_;
};

// ---- op families (each returns the result literal of `inst` given its operand values) ----

absl::StatusOr<Literal> EvalElementwise(const Instruction& inst, Operands operands, int64_t threads);
absl::StatusOr<Literal> EvalConvert(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalDataMovement(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalReduce(const Instruction& inst, Operands operands, Evaluator& ev);
absl::StatusOr<Literal> EvalReduceWindow(const Instruction& inst, Operands operands, Evaluator& ev);
absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& inst, Operands operands, Evaluator& ev);
absl::StatusOr<Literal> EvalMap(const Instruction& inst, Operands operands, Evaluator& ev);
absl::StatusOr<Literal> EvalScan(const Instruction& inst, Operands operands, Evaluator& ev);
// `tpu_numerics`: InterpreterOptions::tpu_numerics (ir/tpu_numerics.h).
// `threads`: how many threads the kernel may use (KernelThreads); results never depend on it.
absl::StatusOr<Literal> EvalDot(const Instruction& inst, Operands operands, bool tpu_numerics, int64_t threads);
absl::StatusOr<Literal> EvalConvolution(const Instruction& inst, Operands operands, bool tpu_numerics, int64_t threads);
absl::StatusOr<Literal> EvalRaggedDot(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalGather(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalScatter(const Instruction& inst, Operands operands, Evaluator& ev);
absl::StatusOr<Literal> EvalSort(const Instruction& inst, Operands operands, Evaluator& ev);
absl::StatusOr<Literal> EvalTopK(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalRng(const Instruction& inst, Operands operands, DeviceContext& device);
absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalFft(const Instruction& inst, Operands operands);
absl::StatusOr<Literal> EvalLinalg(const Instruction& inst, Operands operands);  // cholesky, triangular-solve
// The decomposition custom calls (ir/decomposition_calls.h: LuDecomposition, Qr, Eigh, ...) with the runtime's
// kernels; nullopt for other targets.
std::optional<absl::StatusOr<Literal>> EvalDecompositionCall(const Instruction& inst, Operands operands);
// A custom call bound to a C++ elementwise kernel (ir/kernel_calls.h), through InterpreterOptions::elementwise_kernels
// (custom_kernels.cc).
absl::StatusOr<Literal> EvalElementwiseKernel(const Instruction& inst, Operands operands,
                                              const InterpreterOptions& options);
// A custom call bound to a C++ buffer kernel, through the same table (custom_kernels.cc).
absl::StatusOr<Literal> EvalBufferKernel(const Instruction& inst, Operands operands, const InterpreterOptions& options);
// `threads`: KernelThreads; features and rows split over them, never one feature's sums.
absl::StatusOr<Literal> EvalBatchNorm(const Instruction& inst, Operands operands, int64_t threads);
absl::StatusOr<Literal> EvalCollective(const Instruction& inst, Operands operands, Evaluator& ev);

// Runs programs[d] on device d = replica * partitions + partition with args[d], each device on its own thread
// (inline when there is one), with a fresh rendezvous hub. Returns per-device results or the root-cause error.
absl::StatusOr<std::vector<Literal>> RunDevices(const Module& module, const std::vector<const Computation*>& programs,
                                                const std::vector<std::vector<const Literal*>>& args, int64_t replicas,
                                                int64_t partitions, const InterpreterOptions& options);
// The StableHLO reference interpreter's own ops, which the StableHLO frontend keeps as custom-calls:
// interpreter.run_parallel (a grid of programs run as replicas x partitions) and interpreter.probe (identity).
absl::StatusOr<Literal> EvalInterpreterOp(const Instruction& inst, Operands operands, Evaluator& ev);

// Element-wise conversion of a whole array literal to `type` with XLA's convert semantics.
absl::StatusOr<Literal> ConvertLiteral(const Literal& lit, PrimitiveType type);

// Deterministic pseudo-random fill (see MakeRandomLiteral).
void FillRandom(Literal& lit, uint64_t seed);
uint64_t HashString(std::string_view s, uint64_t seed);
// A 64-bit mixing function (SplitMix64's finalizer); rng streams and seeded values derive from it.
uint64_t SplitMix64(uint64_t x);

}  // namespace xlac::interp
