// The HLO -> LLVM IR emitter shared by the codegen/ir_emitter_*.cc files; not part of the codegen API.
//
// Values in memory use their storage type (pred and s8/u8 as i8, bf16 as i16 bits, f16 as half, ...). Arithmetic
// happens in a compute type per element type, mirroring the interpreter: pred -> i1, integers at their own width
// (wrapping arithmetic in the element width equals the interpreter's 64-bit arithmetic truncated on store),
// f16/bf16/f32 -> float, f64 -> double. Loading widens exactly; storing rounds (bf16/f16) so every op rounds once.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/emitter.h"
#include "codegen/row_groups.h"
#include "codegen/streaming_stores.h"
#include "fmt/format.h"
#include "ir/instruction.h"
#include "ir/status_macros.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace xlac::codegen::internal {

// A logical multi-index of i64 values (one per dimension of the shape being indexed).
using Index = std::vector<llvm::Value*>;

// An array in memory: base pointer plus the element strides its layout gives each logical dimension.
struct IrArray {
  llvm::Value* base = nullptr;
  BufferSlice slice;  // where it lives (for in-place checks)
  Shape shape;
  std::vector<int64_t> strides;
};

std::vector<int64_t> LayoutStrides(const Shape& shape);
// Dimensions from most major to most minor (the loop order that walks memory sequentially).
std::vector<int64_t> MajorToMinor(const Shape& shape);
bool HasDefaultLayout(const Shape& shape);

// Operand coordinate `x` of window position `w` for output coordinate `o` in one window dimension (stride,
// padding, window and base dilation), and whether it lands in the operand (`valid` is nullptr when it always does for
// every o and w of the iteration space). Shared by convolution, reduce-window and select-and-scatter.
struct WindowTap {
  llvm::Value* valid = nullptr;
  llvm::Value* x = nullptr;
};
WindowTap EmitWindowTap(llvm::IRBuilder<>& b, const WindowDimension& wd, int64_t operand_size, int64_t output_size,
                        llvm::Value* o, llvm::Value* w);

struct GemmSpec;  // codegen/ir_emitter_gemm.h

// Arguments of one call of a GEMM function (EmitGemmFunction): operand and result bases and the packers' batch.
struct GemmOperands {
  llvm::Value* a = nullptr;
  llvm::Value* b = nullptr;
  llvm::Value* c = nullptr;
  llvm::Value* batch = nullptr;
};

template <typename... Args>
absl::Status Unimplemented(const Instruction& inst, fmt::format_string<Args...> format, Args&&... args) {
  return absl::UnimplementedError(fmt::format("codegen does not support {} ({}): {}", OpcodeName(inst.opcode()),
                                              inst.name(), fmt::format(format, std::forward<Args>(args)...)));
}

class IrEmitter {
 public:
  IrEmitter(const Module& module, const BufferAssignment& assignment, llvm::Module& llvm_module,
            const CodegenOptions& options);
  absl::Status EmitEntry();

  // ---- types and memory (ir_emitter.cc) ----
  llvm::IRBuilder<>& b() { return b_; }
  const CodegenOptions& options() const { return options_; }
  const BufferAssignment& assignment() const { return assignment_; }
  llvm::LLVMContext& ctx() { return llvm_module_.getContext(); }
  llvm::Module& llvm_module() { return llvm_module_; }
  // True for element types with a compute type (pred, 8..64-bit integers, f16, bf16, f32, f64).
  static bool HasComputeType(PrimitiveType type);
  llvm::Type* ComputeType(PrimitiveType type);
  // Integer type of ByteWidth(type) bytes: how data movement copies elements of any type.
  llvm::Type* MoveType(PrimitiveType type);
  absl::Status CheckComputeType(const Instruction& inst, PrimitiveType type);

  IrArray ArrayFor(const Instruction* inst, const std::vector<int64_t>& shape_index = {});
  llvm::Value* ElementAddress(const IrArray& array, const Index& index);
  llvm::Value* LinearIndex(const IrArray& array, const Index& index);
  llvm::Value* LoadCompute(const IrArray& array, const Index& index);
  void StoreCompute(const IrArray& array, const Index& index, llvm::Value* value);
  // A storage value (LoadRaw's: narrow types as their byte) as a compute value of `t`, and back.
  llvm::Value* ComputeFromStorage(PrimitiveType t, llvm::Value* raw);
  llvm::Value* StorageFromCompute(PrimitiveType t, llvm::Value* value);
  llvm::Value* LoadRaw(const IrArray& array, const Index& index);
  void StoreRaw(const IrArray& array, const Index& index, llvm::Value* value);
  // Compute value rounded to what `type` can hold (bf16/f16 round to nearest even; other types are exact).
  llvm::Value* RoundToType(llvm::Value* value, PrimitiveType type);
  llvm::Value* BF16BitsFromFloat(llvm::Value* f);
  llvm::Value* FloatFromBF16Bits(llvm::Value* bits);
  llvm::Value* ConstantCompute(PrimitiveType type, const Literal& literal, int64_t linear_index);
  llvm::Value* I64(int64_t v) { return b_.getInt64(v); }

  // ---- sub-byte integers, f8/f6/f4 floats, reduce-precision (ir_emitter_narrow.cc) ----
  // Sub-byte integers compute at their width (stored sign-extended / masked in a byte); narrow floats compute in f32.
  static bool IsNarrowType(PrimitiveType type);   // s2, s4, u2, u4 and the <= 8-bit float types
  static bool IsNarrowFloat(PrimitiveType type);  // the <= 8-bit float types
  // Types computed in f32 and rounded when stored (f16, bf16, narrow floats): dot/conv accumulate, then round once.
  static bool RoundsOnStore(PrimitiveType type);
  llvm::Value* NarrowLoad(PrimitiveType type, llvm::Value* raw);     // storage byte -> compute value
  llvm::Value* NarrowStore(PrimitiveType type, llvm::Value* value);  // compute value -> storage byte
  llvm::Value* NarrowDecode(PrimitiveType type, llvm::Value* raw);   // i8 bits -> float
  // f32 or f64 -> i8 bits, rounded to nearest even once (the interpreter's DoubleToFloatBits).
  llvm::Value* NarrowEncode(PrimitiveType type, llvm::Value* value);
  llvm::Value* NarrowRound(PrimitiveType type, llvm::Value* value);  // f32/f64 -> float holding a `type` value
  llvm::Value* NarrowConstant(PrimitiveType type, const Literal& literal, int64_t linear_index);
  absl::StatusOr<llvm::Value*> EmitReducePrecision(const Instruction& inst, llvm::Value* value);
  absl::Status EmitSubByteBitcastConvert(const Instruction& inst);

  // ---- loops (ir_emitter.cc) ----
  // for (iv = start; iv < end; ++iv) body(iv); nothing when the range is empty.
  void ForLoop(int64_t start, int64_t end, const std::function<void(llvm::Value*)>& body);
  // Every index of `dims`, with loops nested in `order` (outermost first); index positions follow `dims`.
  void LoopNest(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                const std::function<void(const Index&)>& body);
  // Every index of `shape`, walking its memory sequentially.
  void ShapeLoop(const Shape& shape, const std::function<void(const Index&)>& body);
  void MemCopy(llvm::Value* dst, llvm::Value* src, int64_t bytes);

  // ---- parallel loops inside a device (ir_emitter_parallel.cc) ----
  // for (iv = start; iv < end; ++iv) body(iv) with bounds known at run time. `vectorize` false keeps LLVM's loop
  // vectorizer off the loop (a transpose's inner loop, where one side would become gathers or scatters).
  void ForRange(llvm::Value* start, llvm::Value* end, const std::function<void(llvm::Value*)>& body,
                bool vectorize = true);
  // Whether a loop doing `work` elements (or multiply-adds) should run on the device's threads: parallel codegen
  // is on, the loop is large enough, and it is not already inside a parallel loop or helper function.
  bool CanParallelize(int64_t work) const;
  // body(begin, end) for disjoint ranges covering [0, n), emitted once into an outlined function that the device's
  // threads run through xlac_rt_device_parallel_for; values of the enclosing function it uses are passed by value.
  // Inline (body(0, n) in place) inside another parallel loop or helper function. The body must create its own
  // stack slots (allocas in the current function's entry block are fine) and must not call the runtime with the
  // device (function_->getArg(1) is not the device there).
  // `one_range_per_thread`: through xlac_rt_device_parallel_split (for bodies with a fixed cost per range).
  absl::Status ParallelFor(int64_t n, std::string_view name,
                           const std::function<absl::Status(llvm::Value* begin, llvm::Value* end)>& body,
                           bool one_range_per_thread = false);
  // LoopNest(dims, order, body) whose outermost `splittable` dimensions run in parallel when `work` is large enough
  // (CanParallelize). Only splittable dimensions move outward; the others keep their order inside each thread's
  // part, so a reduction over them sees its elements in the same order.
  absl::Status ParallelLoopNest(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                                const std::vector<bool>& splittable, int64_t work, std::string_view name,
                                const std::function<void(const Index&)>& body);
  // Inside a row group: LoopNest over the dimensions after the rows, the row dimensions bound to the current row.
  absl::Status RowLoopNest(const std::vector<int64_t>& dims, const std::vector<int64_t>& order,
                           const std::function<void(const Index&)>& body);
  // ParallelLoopNest over every index of `shape` in memory order, any dimension splittable, one unit of work per
  // element.
  absl::Status ParallelShapeLoop(const Shape& shape, std::string_view name,
                                 const std::function<void(const Index&)>& body);
  // Calls `gemm` (EmitGemmFunction of `spec`) for `problems` independent GEMMs, operands(p) giving problem p's
  // arguments: problems in parallel when there are enough, otherwise each problem's C split into row or column
  // ranges of whole register tiles. Every C element is computed by one thread exactly as in one call. `name` names
  // the parallel loops (the GEMM function may be shared by several dots).
  absl::Status EmitGemmCalls(llvm::Function* gemm, const GemmSpec& spec, std::string_view name, int64_t problems,
                             const std::function<GemmOperands(llvm::Value* problem)>& operands);

  // ---- scalar semantics (ir_emitter_elementwise.cc) ----
  // Result of elementwise `inst` on compute values of operand type `type`, in the compute type of the result type.
  absl::StatusOr<llvm::Value*> EmitScalarOp(const Instruction& inst, PrimitiveType type,
                                            absl::Span<llvm::Value* const> operands);
  absl::StatusOr<llvm::Value*> EmitConvert(const Instruction& inst, llvm::Value* v, PrimitiveType from,
                                           PrimitiveType to);
  // Same-width bit reinterpretation of a compute value (bitcast-convert in a fusion or an embedded computation),
  // through the storage bits LoadCompute/StoreCompute use (narrow types: their low BitWidth bits, as
  // EmitSubByteBitcastConvert moves them).
  absl::StatusOr<llvm::Value*> EmitBitcastConvert(const Instruction& inst, llvm::Value* v);
  // A custom call bound to a C++ elementwise kernel (ir/kernel_calls.h) on compute values: a call of the kernel's
  // function (ir_emitter_kernel.cc).
  absl::StatusOr<llvm::Value*> EmitElementwiseKernelCall(const Instruction& inst,
                                                         absl::Span<llvm::Value* const> operands);
  llvm::Type* KernelScalarType(PrimitiveType type);
  // A custom call bound to a C++ buffer kernel: builds the kernel's frame and calls its entry point; a nonzero return
  // fails the device with the kernel's message (ir_emitter_kernel.cc).
  absl::Status EmitBufferKernelCall(const Instruction& inst);
  absl::StatusOr<llvm::Value*> EmitCompare(const Instruction& inst, PrimitiveType type, llvm::Value* a, llvm::Value* c);
  // The same computation applied to compute values (reducers, comparators); results per root leaf, rounded.
  absl::StatusOr<std::vector<llvm::Value*>> EmitScalarComputation(const Computation& comp,
                                                                  absl::Span<llvm::Value* const> args);
  llvm::Value* CallLibm(const char* name, llvm::Type* type, absl::Span<llvm::Value* const> args);

  // ---- complex element types (ir_emitter_complex.cc): compute values are <2 x float|double> {real, imag} ----
  llvm::Type* ComplexComputeType(PrimitiveType type);
  llvm::Value* ComplexConstant(PrimitiveType type, const Literal& literal, int64_t linear_index);
  llvm::Value* MakeComplex(llvm::Value* re, llvm::Value* im);
  // xlac_rt_<c64|c128>_<kernel> (runtime/cpu/xlac_runtime_complex.h) on compute values.
  llvm::Value* CallComplexKernel(const char* kernel, PrimitiveType type, absl::Span<llvm::Value* const> args);
  // acc + a * c, as the interpreter's dot and convolution accumulate complex products.
  llvm::Value* EmitComplexMultiplyAdd(PrimitiveType type, llvm::Value* acc, llvm::Value* a, llvm::Value* c);
  // EmitScalarOp / EmitConvert when the operand or result type is complex.
  absl::StatusOr<llvm::Value*> EmitComplexScalarOp(const Instruction& inst, PrimitiveType type,
                                                   absl::Span<llvm::Value* const> operands);
  absl::StatusOr<llvm::Value*> EmitComplexConvert(const Instruction& inst, llvm::Value* v, PrimitiveType from,
                                                  PrimitiveType to);

  // ---- op families ----
  absl::Status EmitElementwise(const Instruction& inst);   // ir_emitter_elementwise.cc
  absl::Status EmitDataMovement(const Instruction& inst);  // ir_emitter_data_movement.cc
  // out[index] = in[index permuted by in_dim_of] (out dimension i is in dimension in_dim_of[i]) in tiles over the
  // two arrays' most minor dimensions: a call of the runtime's xlac_rt_relayout in a kernel of the entry; elsewhere
  // (nested computations, row groups) emitted loops when the dimensions differ and are long enough to be worth it.
  // false (nothing emitted) otherwise. ir_emitter_data_movement.cc.
  absl::StatusOr<bool> EmitTiledRelayout(const Instruction& inst, const IrArray& in, const IrArray& out,
                                         const std::vector<int64_t>& in_dim_of);
  absl::Status EmitReduce(const Instruction& inst);       // ir_emitter_reduce.cc
  absl::Status EmitDot(const Instruction& inst);          // ir_emitter_dot.cc
  absl::Status EmitConvolution(const Instruction& inst);  // ir_emitter_convolution_tiled.cc
  // The packed GEMM path for f32/f64; false (nothing emitted) when it does not apply.
  absl::StatusOr<bool> EmitTiledConvolution(const Instruction& inst);  // ir_emitter_convolution_tiled.cc
  absl::Status EmitConvolutionLoops(const Instruction& inst);          // ir_emitter_convolution.cc
  // Under CodegenOptions::tpu_numerics: whether `inst` (dot or convolution) rounds its f32 operands to bf16, or an
  // Unimplemented error for precisions not modeled (ir_emitter_dot.cc).
  absl::StatusOr<bool> TpuRoundsOperands(const Instruction& inst);
  absl::Status EmitReduceWindow(const Instruction& inst);      // ir_emitter_window.cc
  absl::Status EmitSelectAndScatter(const Instruction& inst);  // ir_emitter_window.cc
  absl::Status EmitGather(const Instruction& inst);            // ir_emitter_gather_scatter.cc
  absl::Status EmitScatter(const Instruction& inst);           // ir_emitter_gather_scatter.cc
  absl::Status EmitMap(const Instruction& inst);               // ir_emitter_gather_scatter.cc
  // A fusion instruction the fusion pass made (passes/fusion/fusible.h says which): one loop nest, one reduction
  // with an elemental input, or a dot/convolution with its epilogue (ir_emitter_fusion*.cc).
  absl::Status EmitFusion(const Instruction& inst);
  absl::Status EmitSort(const Instruction& inst);             // ir_emitter_sort.cc
  absl::Status EmitRngBitGenerator(const Instruction& inst);  // ir_emitter_rng.cc
  absl::Status EmitTopK(const Instruction& inst);             // ir_emitter_rng.cc
  absl::Status EmitRng(const Instruction& inst);              // ir_emitter_rng.cc (also rng-get-and-update-state)
  llvm::Value* RngCounterSlot();                              // ir_emitter_rng.cc
  absl::Status EmitMiscOp(const Instruction& inst);           // ir_emitter_misc.cc
  static bool IsMiscOp(Opcode op);                            // ir_emitter_misc.cc
  absl::Status EmitBatchNorm(const Instruction& inst);        // ir_emitter_misc.cc
  llvm::Value* FloatRoundedToOdd(llvm::Value* d);             // ir_emitter_misc.cc: f64 -> f32 rounded to odd
  absl::Status EmitRaggedDot(const Instruction& inst);        // ir_emitter_misc.cc
  static bool IsDataMovement(Opcode op);
  // ---- collectives and custom-calls through the runtime (ir_emitter_collectives.cc, ir_emitter_custom_call.cc) ----
  absl::Status EmitCollective(const Instruction& inst);
  absl::Status EmitCustomCall(const Instruction& inst);
  absl::Status EmitWinogradConv(const Instruction& inst);
  // A private constant global holding a Winograd matrix (ir/winograd.h's f32 coefficients), 64-byte aligned.
  llvm::Constant* WinogradMatrix(const std::vector<float>& matrix, const std::string& name);
  absl::Status EmitInfeed(const Instruction& inst);  // ir_emitter_infeed.cc
  static bool IsCollective(Opcode op);
  absl::Status EmitP2P(const Instruction& inst);  // ir_emitter_p2p.cc: send/recv (+ -done), outfeed
  static bool IsP2P(Opcode op);
  // fft, cholesky and triangular-solve through the runtime library kernels shared with the interpreter
  // (ir_emitter_library.cc).
  absl::Status EmitLibraryCall(const Instruction& inst);
  static bool IsLibraryCall(Opcode op);
  // The decomposition custom calls of ir/decomposition_calls.h, through the same kernels (ir_emitter_library.cc).
  absl::Status EmitDecompositionCall(const Instruction& inst);
  // XlacRtCombineFn applying `inst`'s reducer elementwise to `type` values (one per reducer and type).
  absl::StatusOr<llvm::Function*> CombineFunction(const Instruction& inst, PrimitiveType type);
  llvm::Value* ConstantI64Array(const std::vector<int64_t>& values, const std::string& name);
  // Returns from the entry (freeing `temps_to_free`) when a runtime call returned nonzero.
  void ReturnIfFailed(llvm::Value* code, absl::Span<llvm::Value* const> temps_to_free);
  llvm::Value* AllocTemp(int64_t bytes);  // xlac_rt_aligned_alloc, 64-byte aligned
  void FreeTemp(llvm::Value* ptr);

 private:
  absl::Status EmitSequential(const Computation& comp);
  // One loop over the group's rows, every member emitted for one row (ir_emitter_parallel.cc).
  absl::Status EmitRowGroup(const RowGroup& group);
  absl::Status EmitInstruction(const Instruction& inst);
  absl::Status EmitWhile(const Instruction& inst);
  absl::Status EmitConditional(const Instruction& inst);
  // Copies every array leaf of `src` into the slices of `dst` (same shape) where they are not already the same.
  void CopyLeaves(const Instruction* src, const Instruction* dst, const Shape& shape, std::vector<int64_t>& index);
  absl::Status EmitConstantGlobals();
  llvm::Value* SlicePointer(const BufferSlice& slice);

  // ---- kernels outlined from the entry (ir_emitter_outline.cc) ----
  // Whether `inst` (a top-level instruction of the entry or of its control flow) may become a function of its own:
  // a pure compute kernel (no runtime state shared with the rest of the entry, such as the rng counter, and no
  // runtime calls that name their site).
  bool Outlinable(const Instruction& inst) const;
  // Emits `body` into a new internal function xlac.k.<name>(ptr buffers, ptr dev, ptr slice...) that the entry calls,
  // when `outline` and CodegenOptions::outline_kernels allow it and we are in the entry; in place otherwise. Every
  // buffer slice the body addresses becomes a pointer argument, so kernels that differ only in where their operands
  // live are identical functions (merged before optimization, codegen/optimize.cc).
  absl::Status EmitKernel(std::string_view name, bool outline, const std::function<absl::Status()>& body);
  // While EmitKernel emits a function: the slices it addresses, each a placeholder call in its entry block that
  // becomes an argument, and the pointer the entry passes for it.
  struct KernelCaptures {
    llvm::Function* function;
    std::map<std::pair<int64_t, int64_t>, size_t> slot_of;  // (allocation, offset) -> index in `slices`
    std::vector<BufferSlice> slices;                        // in first-use order
    std::vector<llvm::CallInst*> placeholders;              // one per slice
  };
  std::optional<KernelCaptures> kernel_;
  llvm::Value* KernelSlice(const BufferSlice& slice);  // SlicePointer inside an outlined kernel
  void FinishKernels();                                // drops the placeholders' declaration
  // The entry results written with streaming stores (CodegenOptions::streaming_store_bytes): ArrayFor gives them a
  // base of their own (TagStreamedBase), which MarkStreamingStores recognizes after optimization.
  StreamedResults streamed_;
  std::vector<llvm::Value*> streamed_bases_;

  const Module& module_;
  const BufferAssignment& assignment_;
  llvm::Module& llvm_module_;
  const CodegenOptions& options_;
  llvm::IRBuilder<> b_;
  llvm::Function* function_ = nullptr;  // the function being emitted into
  llvm::Function* entry_function_ = nullptr;
  // Trace hooks (CodegenOptions::trace_kernels).
  bool TracesKernel(const Instruction& inst) const;
  void EmitTraceHook(const char* hook, int64_t kernel_id);
  // Inside EmitRowGroup: the row being emitted. Loop nests then bind their leading (row) dimensions to it instead of
  // looping over them.
  struct RowContext {
    std::vector<int64_t> rows;
    llvm::Value* begin = nullptr;  // the block of rows [begin, end), as row-major linear row numbers
    llvm::Value* end = nullptr;
  };
  std::optional<RowContext> row_;
  std::vector<llvm::Value*> allocation_bases_;
};

}  // namespace xlac::codegen::internal
