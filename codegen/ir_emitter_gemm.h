// The packed, cache-blocked, register-tiled GEMM behind f32/f64 dots (ir_emitter_dot.cc); not part of the codegen
// API.
//
// C[m, n] = sum over k of A[m, k] * B[k, n], for one batch element, with C's n stride 1. Every C element sees its
// products in k order (0, 1, 2, ...), starting from +0. In exact mode each step is a multiply rounded to the element
// type followed by an add rounded to it: bit for bit the interpreter's loop. In the default mode (GemmSpec::fma)
// each step is one fused multiply-add. Blocking over m and n is free; the k blocks run in ascending order and carry
// each partial sum through C itself, which holds the exact accumulator (the element type is the accumulation type
// here).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/target.h"
#include "llvm/IR/IRBuilder.h"

namespace xlac::codegen::internal {

// Packs one panel of an operand seen as a (rows x k) matrix X (A itself, or B transposed): writes
// dst[kk * width + r] = X(i0 + r, k0 + kk) for kk < kc and r < count, and +0 for count <= r < width. `operand` and
// `batch` are the GEMM function's operand pointer and batch arguments. Emitted inside the GEMM function.
using GemmPacker =
    std::function<void(llvm::IRBuilder<>& b, llvm::Value* operand, llvm::Value* batch, llvm::Value* i0,
                       llvm::Value* count, llvm::Value* k0, llvm::Value* kc, llvm::Value* dst, int64_t width)>;

// An operand element at `offset` (in elements) from `base`, as the GEMM's element type.
using GemmLoad = std::function<llvm::Value*(llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* offset)>;
GemmLoad NativeGemmLoad(llvm::Type* element);
// A bf16 (or f16) element widened exactly to f32, as the interpreter converts narrow floats before multiplying.
GemmLoad WidenedGemmLoad(bool f16);
// f32 (scalar or vector) rounded to the nearest bf16 (ties to even), as f32; inf and NaN unchanged. Bit for bit
// xlac::RoundToBf16 (ir/tpu_numerics.h).
llvm::Value* EmitRoundToBf16(llvm::IRBuilder<>& b, llvm::Value* f);
// An f32 element rounded to bf16 as it is loaded: the operands of a dot under TPU numerics at DEFAULT precision.
GemmLoad Bf16RoundedGemmLoad();
// How the elements of a strided operand are read (GemmSpec::load): as stored, bf16/f16 widened to f32, or f32
// rounded to bf16.
enum class GemmOperandLoad { kNative, kWidenBf16, kWidenF16, kRoundBf16 };

struct GemmSpec {
  llvm::Type* element = nullptr;  // float or double
  int64_t m = 0, n = 0, k = 0;    // all > 0
  // Element strides of A (m, k), B (k, n) and C (m; n is 1).
  int64_t a_m = 0, a_k = 0, b_k = 0, b_n = 0, c_m = 0;
  // Multiply as b * a instead of a * b: A and B were swapped to make C's n stride 1, and the interpreter's product
  // is lhs * rhs (the operand order only matters for which NaN payload survives).
  bool b_times_a = false;
  // Default numerics (not CodegenOptions::exact): each step of the k sum is one fused multiply-add, so an element
  // still sums in k order but its products are not rounded. Both modes round k times per element, so both satisfy
  // |C - exact| <= gamma_k sum |a||b|, gamma_k = k u / (1 - k u), u the element type's unit roundoff.
  bool fma = false;
  // How strided operands are read.
  GemmOperandLoad load = GemmOperandLoad::kNative;
  // bf16 operands (load kWidenBf16 or kRoundBf16, element f32) in the default numerics on a CPU with AVX512_BF16:
  // packed as bf16 pairs (k, k + 1) and multiplied by vdpbf16ps, which per pair adds the k + 1 product and then the
  // k product, each as one fused multiply-add, with f32 denormals (operands, sums) flushed to zero
  // (docs/numerics.md, "bf16 dots on AVX512_BF16"). Custom packers then still write f32 panels, of values that are
  // bf16 values (widened or rounded): the GEMM repacks each panel into pairs while it is in L1.
  bool bf16_pairs = false;
  // Operands that are not strided matrices (convolution's implicit im2col) bring their own packing; the strides
  // above and `load` are then unused.
  GemmPacker pack_a, pack_b;
};

// Packs one panel like a GemmPacker, as bf16 pairs for the vdpbf16ps kernel: dst (16-bit elements)
// [kk / 2][r][kk % 2] = the bf16 bits of X(i0 + r, k0 + kk) for kk < kc and r < count, zero past count and in the
// last pair's second half when kc is odd. X holds bf16 values, or f32 values rounded to bf16 as they are loaded
// (`f32_source`: a dot under TPU numerics at DEFAULT precision). k0 must be even.
GemmPacker Bf16PairPacker(bool f32_source, llvm::Value* row_stride, llvm::Value* k_stride);

// Repacks an f32 panel (a GemmPacker's layout: panel[kk * width + kk'] for kk < kc, every value a bf16 value) into
// Bf16PairPacker's layout at dst.
void EmitBf16PairsFromF32Panel(llvm::IRBuilder<>& b, llvm::Value* panel, llvm::Value* kc, llvm::Value* dst,
                               int64_t width);

// Register tile and cache blocks for an element of `element_bits` on `target`.
struct GemmTiling {
  int64_t vector_width = 0;  // elements per vector register
  int64_t mr = 0, nr = 0;    // register tile: mr rows x nr columns (nr a multiple of vector_width)
  int64_t mc = 0, nc = 0, kc = 0;
};
// The tiling of `element_bits` GEMMs on `target`.
GemmTiling ChooseGemmTiling(int element_bits, const TargetInfo& target);
// The tiling of the GEMM `spec` describes: ChooseGemmTiling's for its element type, except for the vdpbf16ps kernel
// (GemmSpec::bf16_pairs), whose kc counts k (two per packed pair) and, with the built-in packers, whose register tile
// is wider.
GemmTiling ChooseGemmTiling(const GemmSpec& spec, const TargetInfo& target);

// One step of a micro-kernel's loop: reads step `k` of the packed panels ap and bp and updates the mr x cols
// accumulator vectors acc[r * cols + col] (cols = nr / vector_width) in place. `ldb` is null for a packed B panel;
// otherwise bp is B itself, row k at bp + k * ldb elements (unaligned), and when `b_copy` is not null the step also
// stores the row it read as row k of the packed panel at b_copy. `steps` gives the loop's trip count for kc (kc
// itself for one product per step).
using GemmKernelStep = std::function<void(llvm::IRBuilder<>& b, llvm::Value* ap, llvm::Value* bp, llvm::Value* ldb,
                                          llvm::Value* b_copy, llvm::Value* k, std::vector<llvm::Value*>& acc)>;
using GemmKernelSteps = std::function<llvm::Value*(llvm::IRBuilder<>& b, llvm::Value* kc)>;
// Steps of a micro-kernel's loop per line it prefetches.
inline constexpr int64_t kGemmPrefetchSteps = 16;
// How many k rows ahead a packer of a row-major strided source (B, k rows a page or more apart, which the hardware
// prefetchers do not follow) prefetches the row it will copy.
inline constexpr int64_t kGemmPackPrefetchRows = 16;
// How many k rows ahead a kernel that packs the B panel it reads in place (GetKernel's copy_b) prefetches B's rows:
// about a DRAM latency of its steps.
inline constexpr int64_t kGemmCopyPrefetchRows = 32;
// Prefetches into L2 (prefetcht1) the `bytes` bytes from `base` + `element_offset` elements of `element_bytes`
// bytes: the lines are read a while later, and prefetches from DRAM into L1 would hold its few miss buffers.
void EmitGemmPrefetch(llvm::IRBuilder<>& b, llvm::Value* base, int64_t element_bytes, llvm::Value* element_offset,
                      int64_t bytes);

// The micro-kernel `void (ptr ap, ptr bp, ptr c, i64 ldc, i64 kc, i1 first, ptr pf)` named `name` (reused when the
// module has it): accumulators of vector_width `element`s start at +0 (`first`) or C's tile (row stride ldc), take
// steps(kc) steps, and are stored back. At every kGemmPrefetchSteps-th step it prefetches the next 64-byte line from
// pf on (ceil(steps / kGemmPrefetchSteps) lines in all: the blocked loops pass part of the next B block's source, or
// a panel already in cache). noinline and shared (one copy per module, its callers not tied together). With
// `in_place_b_bytes` > 0 it takes B's row stride `i64 ldb` after pf and reads B in place (GemmKernelStep's `ldb`),
// B's elements that many bytes each; pf is then the panel the next call reads, prefetched a row per step. With
// `copy_b` as well it takes `ptr b_copy` last and writes the packed panel of what it reads there (the first call
// on a B panel packs it as it computes; its later calls read the panel as the packed kernels do); it prefetches as
// a packed kernel does.
llvm::Function* EmitGemmKernel(llvm::Module& module, const std::string& name, const GemmTiling& t, llvm::Type* element,
                               const TargetInfo& target, const GemmKernelSteps& steps, const GemmKernelStep& step,
                               int64_t in_place_b_bytes = 0, bool copy_b = false);

// void(ptr ap, ptr bp, ptr c, i64 ldc, i64 kc, i1 first, ptr pf[, i64 ldb[, ptr b_copy]]): the micro-kernels' type
// (EmitGemmKernel; ldb with `strided_b`, b_copy with `copy_b`).
llvm::FunctionType* GemmKernelType(llvm::LLVMContext& ctx, bool strided_b, bool copy_b = false);

// void kernel(ptr ap, ptr bp, ptr c, i64 ldc, i64 kc, i1 first, ptr pf): C[0:mr, 0:nr] (row stride ldc) =
// (first ? +0 : C) + the kc products of the packed panels ap (kc x mr) and bp (kc x nr), in k order: multiply then
// add (b * a with `b_times_a`), or one FMA with `fma`. With `strided_b` it reads B in place, as stored: `b_load`
// kNative, or bf16 / f16 widened to f32 (the f32 kernel's products of the widened values, as the widening packers
// give them). With `copy_b` (and strided_b) it also writes B's panel, packed, to its last argument.
llvm::Function* GetKernel(llvm::Module& module, llvm::Type* element, const GemmTiling& t, bool b_times_a, bool fma,
                          const TargetInfo& target, bool strided_b = false,
                          GemmOperandLoad b_load = GemmOperandLoad::kNative, bool copy_b = false);

// void kernel(ptr ap, ptr bp, ptr c, i64 ldc, i64 kc, i1 first, ptr pf) of the f32 GEMM on bf16 pairs (Bf16PairPacker
// panels): C[0:mr, 0:nr] = (first ? +0 : C) + the kc products, one vdpbf16ps per pair and accumulator vector.
// `t` is the f32 tiling on an AVX-512 target.
llvm::Function* GetBf16PairKernel(llvm::Module& module, const GemmTiling& t, const TargetInfo& target);

// The GEMM function of `spec`: `void (ptr a, ptr b, ptr c, i64 batch, i64 m_begin, i64 m_end, i64 n_begin,
// i64 n_end, ...)` computing the rows [m_begin, m_end) and columns [n_begin, n_end) of `spec`'s C
// (IrEmitter::EmitGemmCalls splits C across threads by these ranges); `batch` only reaches the packers. Ranges start
// at multiples of the register tile (or cover the whole extent), so every C element sees the same k blocks in the
// same order whatever the split.
//
// Strided operands (no pack_a/pack_b) get a shape-generic function shared by every dot of the module with the same
// element type, numerics, load and unit strides: it takes `i64 k, i64 a_m, i64 a_k, i64 b_k, i64 b_n, i64 c_m,
// ptr direct_kernel` after n_end (GemmShapeArguments), so a program with a hundred dots compiles a few GEMMs, not a
// hundred. Strides of 1 are constants in its body (the packers' copies vectorize); the others are arguments. Its
// blocking is the same as a specialized function's (the k blocks and their order depend on k alone), so results are bit
// for bit the same. Custom packers (convolutions) get a function of their own named `name`, shapes and strides constant
// in its body.
llvm::Function* EmitGemmFunction(llvm::Module& module, const std::string& name, const GemmSpec& spec,
                                 const TargetInfo& target);
// Whether the shared GEMM of `spec` reads B in place (no packing) when a call has few rows: one or two register tiles
// of rows in all, B's columns contiguous, its elements the kernel's or bf16 / f16 widened as they are loaded, and no
// bf16 pairs (their packing interleaves k).
bool GemmReadsBInPlace(const GemmSpec& spec, const TargetInfo& target);
// The trailing arguments of a call of the GEMM function of `spec` (empty for a specialized function): the shape, then
// the kernel that reads B in place when `spec` has few rows (one or two register tiles) and B allows it (else null).
std::vector<llvm::Value*> GemmShapeArguments(llvm::IRBuilder<>& b, const GemmSpec& spec, const llvm::Function& gemm,
                                             const TargetInfo& target);
// The string function attribute that marks a function called from many kernels of a module (shared GEMMs): the
// module splitter (codegen/split_compile.h) does not tie its callers together through it.
inline constexpr const char* kSharedFunctionAttribute = "xlac-shared";

// A stride that is the constant 1 in the GEMM function's body (its packers then move contiguous vectors).
bool IsConstantOne(llvm::Value* v);
// for (iv = start; iv < end; iv += step) body(iv), in the builder's current function; `vectorize` false keeps LLVM
// from vectorizing, versioning or unrolling a loop that is rare or short (edge tiles and panels).
void GemmLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, int64_t step,
              const std::function<void(llvm::Value*)>& body, const char* name, bool vectorize = true);
// The v x v transpose of `rows` (v vectors of v elements) in registers.
std::vector<llvm::Value*> TransposeSquare(llvm::IRBuilder<>& b, std::vector<llvm::Value*> rows);
// Loop metadata on `latch` (a loop's back edge) that keeps LLVM from vectorizing the loop, and from unrolling it
// unless `unroll`.
void KeepLoopScalar(llvm::BranchInst& latch, bool unroll);
// if (cond) then_body() else else_body().
void GemmIf(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& then_body,
            const std::function<void()>& else_body);

}  // namespace xlac::codegen::internal
