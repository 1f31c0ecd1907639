// The blocked GEMM (BLIS-style): for each n block (nc columns) and each k block (kc, ascending) the B block is packed
// into nr-column panels; for each m block (mc rows) the A block is packed into mr-row panels; the micro-kernel then
// computes every mr x nr tile of C with its accumulators in vector registers (mr x nr/vector_width of them), one
// broadcast A element times one B vector per register: multiply then add in exact mode (the interpreter rounds the
// product), one FMA otherwise. Tiles on the m/n edges run the same kernel on a scratch tile and copy the valid part.
// Packing pads with zeros so the kernel never touches memory past the operands and never computes on stale (possibly
// denormal) data.
#include "codegen/ir_emitter_gemm.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <optional>
#include <vector>

#include "fmt/format.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/Module.h"

namespace xlac::codegen::internal {
namespace {

int64_t RoundUp(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// The largest packed A (all of a GEMM call's rows and k) kept for reuse across n blocks.
constexpr int64_t kMaxReusedAPackBytes = int64_t{16} << 20;
// Calls with at most this many register tiles of rows read B in place (EmitGemmBody). Zen 5, one core, B
// 4096 x 4096 f32: 8 rows 47 -> 69 GFLOP/s, 16 rows 76 -> 97; 32 rows 111 -> 101, so not beyond 2.
constexpr int64_t kMaxDirectBTiles = 2;

llvm::Value* Min(llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* y) {
  return b.CreateSelect(b.CreateICmpSLT(x, y), x, y);
}

}  // namespace

GemmLoad NativeGemmLoad(llvm::Type* element) {
  return [=](llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* offset) -> llvm::Value* {
    return b.CreateAlignedLoad(element, b.CreateInBoundsGEP(element, base, offset),
                               llvm::Align(element->getPrimitiveSizeInBits() / 8));
  };
}

GemmLoad WidenedGemmLoad(bool f16) {
  return [=](llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* offset) -> llvm::Value* {
    llvm::Value* bits =
        b.CreateAlignedLoad(b.getInt16Ty(), b.CreateInBoundsGEP(b.getInt16Ty(), base, offset), llvm::Align(2));
    if (f16) return b.CreateFPExt(b.CreateBitCast(bits, b.getHalfTy()), b.getFloatTy());
    return b.CreateBitCast(b.CreateShl(b.CreateZExt(bits, b.getInt32Ty()), 16), b.getFloatTy());
  };
}

llvm::Value* EmitRoundToBf16(llvm::IRBuilder<>& b, llvm::Value* f) {
  llvm::Type* it = b.getInt32Ty();
  if (auto* v = llvm::dyn_cast<llvm::VectorType>(f->getType())) it = llvm::VectorType::get(it, v->getElementCount());
  auto c = [&](uint32_t x) { return llvm::ConstantInt::get(it, x); };
  llvm::Value* bits = b.CreateBitCast(f, it);
  llvm::Value* odd = b.CreateAnd(b.CreateLShr(bits, c(16)), c(1));
  llvm::Value* rounded = b.CreateAnd(b.CreateAdd(b.CreateAdd(bits, c(0x7fff)), odd), c(0xffff0000u));
  llvm::Value* special = b.CreateICmpEQ(b.CreateAnd(bits, c(0x7f800000u)), c(0x7f800000u));
  return b.CreateBitCast(b.CreateSelect(special, bits, rounded), f->getType());
}

GemmLoad Bf16RoundedGemmLoad() {
  return [](llvm::IRBuilder<>& b, llvm::Value* base, llvm::Value* offset) -> llvm::Value* {
    llvm::Value* v =
        b.CreateAlignedLoad(b.getFloatTy(), b.CreateInBoundsGEP(b.getFloatTy(), base, offset), llvm::Align(4));
    return EmitRoundToBf16(b, v);
  };
}

bool IsConstantOne(llvm::Value* v) {
  auto* c = llvm::dyn_cast<llvm::ConstantInt>(v);
  return c != nullptr && c->isOne();
}

void GemmLoop(llvm::IRBuilder<>& b, llvm::Value* start, llvm::Value* end, int64_t step,
              const std::function<void(llvm::Value*)>& body, const char* name, bool vectorize) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = fn->getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  llvm::BasicBlock* loop = llvm::BasicBlock::Create(ctx, name, fn);
  llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, std::string(name) + ".exit", fn);
  b.CreateCondBr(b.CreateICmpSLT(start, end), loop, exit);
  b.SetInsertPoint(loop);
  llvm::PHINode* iv = b.CreatePHI(b.getInt64Ty(), 2, name);
  iv->addIncoming(start, pre);
  body(iv);
  llvm::Value* next = b.CreateNSWAdd(iv, b.getInt64(step));
  iv->addIncoming(next, b.GetInsertBlock());
  llvm::BranchInst* latch = b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);
  if (!vectorize) KeepLoopScalar(*latch, /*unroll=*/false);
  b.SetInsertPoint(exit);
}

void KeepLoopScalar(llvm::BranchInst& latch, bool unroll) {
  llvm::LLVMContext& ctx = latch.getContext();
  llvm::SmallVector<llvm::Metadata*, 3> operands = {nullptr};
  llvm::Metadata* off[] = {llvm::MDString::get(ctx, "llvm.loop.vectorize.enable"),
                           llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(ctx))};
  operands.push_back(llvm::MDNode::get(ctx, off));
  if (!unroll) operands.push_back(llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")}));
  llvm::MDNode* self = llvm::MDNode::getDistinct(ctx, operands);
  self->replaceOperandWith(0, self);
  latch.setMetadata(llvm::LLVMContext::MD_loop, self);
}

void GemmIf(llvm::IRBuilder<>& b, llvm::Value* cond, const std::function<void()>& then_body,
            const std::function<void()>& else_body) {
  llvm::Function* fn = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = fn->getContext();
  llvm::BasicBlock* then_bb = llvm::BasicBlock::Create(ctx, "if.then", fn);
  llvm::BasicBlock* else_bb = llvm::BasicBlock::Create(ctx, "if.else", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "if.done", fn);
  b.CreateCondBr(cond, then_bb, else_bb);
  b.SetInsertPoint(then_bb);
  then_body();
  b.CreateBr(done);
  b.SetInsertPoint(else_bb);
  else_body();
  b.CreateBr(done);
  b.SetInsertPoint(done);
}

// log2(v) stages, each swapping the off-diagonal h x h blocks of every 2h x 2h block (two-source shuffles, one
// instruction each on AVX-512).
std::vector<llvm::Value*> TransposeSquare(llvm::IRBuilder<>& b, std::vector<llvm::Value*> rows) {
  const int v = static_cast<int>(rows.size());
  for (int h = v / 2; h >= 1; h /= 2) {
    llvm::SmallVector<int, 16> lo_mask(v), hi_mask(v);
    for (int e = 0; e < v; ++e) {
      lo_mask[e] = (e & h) ? v + e - h : e;
      hi_mask[e] = (e & h) ? v + e : e + h;
    }
    for (int i = 0; i < v; ++i) {
      if (i & h) continue;
      llvm::Value* lo = b.CreateShuffleVector(rows[i], rows[i + h], lo_mask);
      llvm::Value* hi = b.CreateShuffleVector(rows[i], rows[i + h], hi_mask);
      rows[i] = lo;
      rows[i + h] = hi;
    }
  }
  return rows;
}

namespace {

// The packer of a strided matrix X (rows x k, element strides row_stride and k_stride, values of the GEMM function).
// Whole panels copy straight (a vector copy when the row stride is the constant 1 and loads are native); a partial
// one clamps its loads and pads with zeros. When X is contiguous along k instead (the constant k_stride 1: B of a
// dot contracting B's minor dimension, as dx = dy w^T), element-by-element packing would read `width` rows a
// power-of-two stride apart, which share one L1 set and evict each other (such a dot ran 25 % slower than with B in
// row-major order); whole panels then move as v x v blocks, v contiguous elements per row, transposed in registers,
// where `vector_width` (the kernel's) divides `width` and loads are native.
GemmPacker StridedGemmPacker(llvm::Type* element, llvm::Value* row_stride, llvm::Value* k_stride, GemmLoad load,
                             bool native_load, int64_t vector_width, int64_t source_bytes) {
  const bool transpose_blocks =
      native_load && IsConstantOne(k_stride) && !IsConstantOne(row_stride) && vector_width > 1;
  return [=](llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value*, llvm::Value* i0, llvm::Value* count, llvm::Value* k0,
             llvm::Value* kc, llvm::Value* dst, int64_t width) {
    llvm::Align align(element->getPrimitiveSizeInBits() / 8);
    llvm::Constant* zero = llvm::Constant::getNullValue(element);
    auto k_offset = [&](llvm::Value* kk) { return b.CreateNSWMul(b.CreateNSWAdd(k0, kk), k_stride); };
    const int64_t v = vector_width;
    GemmIf(
        b, b.CreateICmpEQ(count, b.getInt64(width)),
        [&] {
          llvm::Value* k_begin = b.getInt64(0);
          if (transpose_blocks && width % v == 0) {
            llvm::Type* vec = llvm::FixedVectorType::get(element, static_cast<unsigned>(v));
            llvm::Value* blocks_end = b.CreateNSWSub(kc, b.CreateSRem(kc, b.getInt64(v)));
            GemmLoop(
                b, b.getInt64(0), blocks_end, v,
                [&](llvm::Value* kk) {
                  llvm::Value* k_index = b.CreateNSWAdd(k0, kk);
                  for (int64_t r0 = 0; r0 < width; r0 += v) {
                    std::vector<llvm::Value*> rows;
                    for (int64_t j = 0; j < v; ++j) {
                      llvm::Value* row = b.CreateNSWAdd(i0, b.getInt64(r0 + j));
                      llvm::Value* src = b.CreateNSWAdd(k_index, b.CreateNSWMul(row, row_stride));
                      rows.push_back(b.CreateAlignedLoad(vec, b.CreateInBoundsGEP(element, x, src), align));
                    }
                    std::vector<llvm::Value*> columns = TransposeSquare(b, std::move(rows));
                    for (int64_t t = 0; t < v; ++t) {
                      llvm::Value* at = b.CreateNSWAdd(
                          b.CreateNSWMul(b.CreateNSWAdd(kk, b.getInt64(t)), b.getInt64(width)), b.getInt64(r0));
                      b.CreateAlignedStore(columns[static_cast<size_t>(t)], b.CreateInBoundsGEP(element, dst, at),
                                           align);
                    }
                  }
                },
                "pack.blocks", /*vectorize=*/false);
            k_begin = blocks_end;
          }
          GemmLoop(
              b, k_begin, kc, 1,
              [&](llvm::Value* kk) {
                llvm::Value* src = b.CreateNSWAdd(k_offset(kk), b.CreateNSWMul(i0, row_stride));
                if (IsConstantOne(row_stride)) {
                  // The row kGemmPackPrefetchRows ahead (past the panel: the next k block's, or nothing).
                  EmitGemmPrefetch(b, x, source_bytes,
                                   b.CreateAdd(src, b.CreateMul(b.getInt64(kGemmPackPrefetchRows), k_stride)),
                                   width * source_bytes);
                }
                llvm::Value* dst_row = b.CreateInBoundsGEP(element, dst, b.CreateNSWMul(kk, b.getInt64(width)));
                GemmLoop(
                    b, b.getInt64(0), b.getInt64(width), 1,
                    [&](llvm::Value* r) {
                      llvm::Value* v = load(b, x, b.CreateNSWAdd(src, b.CreateNSWMul(r, row_stride)));
                      b.CreateAlignedStore(v, b.CreateInBoundsGEP(element, dst_row, r), align);
                    },
                    "pack.row");
              },
              "pack.k");
        },
        [&] {
          GemmLoop(
              b, b.getInt64(0), kc, 1,
              [&](llvm::Value* kk) {
                llvm::Value* src = k_offset(kk);
                llvm::Value* dst_row = b.CreateInBoundsGEP(element, dst, b.CreateNSWMul(kk, b.getInt64(width)));
                GemmLoop(
                    b, b.getInt64(0), b.getInt64(width), 1,
                    [&](llvm::Value* r) {
                      llvm::Value* inside = b.CreateICmpSLT(r, count);
                      llvm::Value* clamped = b.CreateSelect(inside, r, b.CreateNSWSub(count, b.getInt64(1)));
                      llvm::Value* row = b.CreateNSWAdd(i0, clamped);
                      llvm::Value* v = load(b, x, b.CreateNSWAdd(src, b.CreateNSWMul(row, row_stride)));
                      b.CreateAlignedStore(b.CreateSelect(inside, v, zero), b.CreateInBoundsGEP(element, dst_row, r),
                                           align);
                    },
                    "pack.edge", /*vectorize=*/false);
              },
              "pack.edge.k", /*vectorize=*/false);
        });
  };
}

}  // namespace

GemmTiling ChooseGemmTiling(int element_bits, const TargetInfo& target) {
  GemmTiling t;
  // 512-bit: 8 x 2 zmm accumulators of 32 leave room for the B vectors and products; 16 independent chains cover
  // the latency of both vector ports (an FMA, or a multiply then an add, per accumulator per k). 256-bit parts have
  // 16 registers: 6 x 2 accumulators, two B vectors, one broadcast A element and one product (no spills in exact
  // mode either; on Zen 3 multiplies and adds issue on separate pipes, so exact mode keeps up with FMA).
  int vector_bits = target.has_avx512 ? 512 : 256;
  t.vector_width = vector_bits / element_bits;
  t.nr = 2 * t.vector_width;
  t.mr = target.has_avx512 ? 8 : 6;
  // A kc x nr B panel (32 KiB for f32 on AVX-512, 16 KiB on AVX2) stays in L1 while the mc x kc A block (96 / 72
  // KiB) streams from L2 and is reused for the nc columns of the B block (L2 or L3): a larger nc packs A fewer
  // times (the 256-bit parts measured here have a 512 KiB L2 and take the B block from L3).
  t.kc = 256;
  t.mc = 12 * t.mr;
  t.nc = target.has_avx512 ? 16 * t.nr : 64 * t.nr;
  return t;
}

GemmTiling ChooseGemmTiling(const GemmSpec& spec, const TargetInfo& target) {
  const int element_bits = static_cast<int>(spec.element->getPrimitiveSizeInBits());
  if (!spec.bf16_pairs) return ChooseGemmTiling(element_bits, target);
  assert(target.has_avx512_bf16 && element_bits == 32);
  GemmTiling t = ChooseGemmTiling(element_bits, target);
  if (spec.pack_a || spec.pack_b) {
    // Convolutions' im2col packers fill f32 panels of the f32 tiling's widths (repacked into pairs): the same tile,
    // and twice the k, so that the pair panel is the f32 panel's size in L1.
    t.kc *= 2;
    return t;
  }
  // 6 x 4 zmm accumulators: per pair step 4 B vectors and 6 broadcast words for 24 vdpbf16ps. On Zen 5 this ran the
  // B-bound small-M shape (8x4096x4096) at 99-104 GFLOP/s against 70-77 with the f32 kernel's 8 x 2, the large shapes
  // equal or up to 4 % faster (1 and 2 threads, beside each other). kc 256 (128 pairs, even as the packers need):
  // the 128 x 64-word B panel is 32 KiB, in L1 like the f32 kernel's.
  t.mr = 6;
  t.nr = 4 * t.vector_width;
  t.kc = 256;
  t.mc = 12 * t.mr;
  t.nc = 16 * t.nr;
  return t;
}

namespace {

// The cache blocks of one GEMM function (its packing buffers' sizes) and the values its loops read.
struct GemmBody {
  llvm::Type* element = nullptr;
  int64_t packed_bytes = 0;  // bytes per element of a packed panel (2 for bf16 pairs)
  // Custom packers write f32 panels that EmitBf16PairsFromF32Panel repacks into pairs (GemmSpec::bf16_pairs).
  bool repack_pairs = false;
  GemmTiling t;
  int64_t kc_max = 0, nc_max = 0, mc_max = 0;
  llvm::Value* k_total = nullptr;  // the contraction's length
  llvm::Value* c_m = nullptr;      // C's row stride
  GemmPacker pack_a, pack_b;
  llvm::Function* kernel = nullptr;
  // Optional: a pointer (null at run time when B cannot be read in place) to the kernel reading B in place
  // (GetKernel's strided_b), used when the call has at most kMaxDirectBTiles register tiles of rows; b_k is B's
  // row stride.
  llvm::Value* direct_kernel = nullptr;
  // Optional: a pointer (null at run time when B's panels need the packer) to the kernel that reads B in place and
  // packs the panel as it goes (GetKernel's copy_b): the first call on each full-width panel of a block.
  llvm::Value* packing_kernel = nullptr;
  // B's element strides and bytes per element when B is a strided matrix (the shared GEMMs): its next block is then
  // prefetched by the kernels (NextBlockPrefetch).
  llvm::Value* b_k = nullptr;
  llvm::Value* b_n = nullptr;
  llvm::Value* b_bytes = nullptr;
};

llvm::Function* CreateGemmFunction(llvm::Module& module, const std::string& name, int shape_arguments,
                                   const TargetInfo& target, int pointer_arguments = 0) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  std::vector<llvm::Type*> params = {ptr, ptr, ptr, i64, i64, i64, i64, i64};
  params.insert(params.end(), static_cast<size_t>(shape_arguments), i64);
  params.insert(params.end(), static_cast<size_t>(pointer_arguments), ptr);
  auto* type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), params, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::GlobalValue::InternalLinkage, name, module);
  const char* names[] = {"a", "b", "c", "batch", "m_begin", "m_end", "n_begin", "n_end"};
  for (unsigned i = 0; i < 8; ++i) fn->getArg(i)->setName(names[i]);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  // Kept out of line: one function per shape class, called from every dot that uses it (and its tile buffer is a
  // static alloca that would otherwise sit in the caller's frame once per dot).
  fn->addFnAttr(llvm::Attribute::NoInline);
  SetFunctionTargetAttributes(*fn, target);
  return fn;
}

// Where the kernel calls of one B block prefetch the source of the next one (EmitGemmKernel's pf). With B row-major
// (b_n 1) a block is kc rows of nc contiguous elements, with B column-major (b_k 1) nc columns of kc; the rows (or
// columns) are cut into chunks of the lines one call prefetches, and call c takes chunk c. Other strides, and calls
// past the last chunk, prefetch their own packed panel, which is in cache: a few idle prefetches, no branch.
struct NextBlockPrefetch {
  llvm::Value* base = nullptr;    // the next block's first element (i8*)
  llvm::Value* stride = nullptr;  // bytes between its rows (columns)
  llvm::Value* chunks_per_row = nullptr;
  llvm::Value* chunks = nullptr;  // 0 when there is nothing to prefetch
  llvm::Value* chunk_bytes = nullptr;

  // The next block after B[pc:pc+kc, jc:jc+nc] of a call covering columns up to n_end: further down k, else the next
  // columns. `steps` is how many steps each kernel call of this block takes.
  static NextBlockPrefetch Plan(llvm::IRBuilder<>& b, const GemmBody& g, llvm::Value* bm, llvm::Value* pc,
                                llvm::Value* kc, llvm::Value* jc, llvm::Value* nc, llvm::Value* n_end,
                                llvm::Value* steps) {
    auto i64 = [&](int64_t v) { return b.getInt64(v); };
    auto min = [&](llvm::Value* x, llvm::Value* y) { return b.CreateSelect(b.CreateICmpSLT(x, y), x, y); };
    auto ceil_div = [&](llvm::Value* x, int64_t d) { return b.CreateSDiv(b.CreateNSWAdd(x, i64(d - 1)), i64(d)); };
    NextBlockPrefetch p;
    llvm::Value* pc_after = b.CreateNSWAdd(pc, kc);
    llvm::Value* more_k = b.CreateICmpSLT(pc_after, g.k_total);
    llvm::Value* pc_next = b.CreateSelect(more_k, pc_after, i64(0));
    llvm::Value* jc_next = b.CreateSelect(more_k, jc, b.CreateNSWAdd(jc, nc));
    llvm::Value* kc_next = min(i64(g.kc_max), b.CreateNSWSub(g.k_total, pc_next));
    llvm::Value* nc_next = min(i64(g.nc_max), b.CreateNSWSub(n_end, jc_next));
    llvm::Value* row_major = b.CreateICmpEQ(g.b_n, i64(1));
    llvm::Value* col_major = b.CreateICmpEQ(g.b_k, i64(1));
    llvm::Value* rows = b.CreateSelect(row_major, kc_next, nc_next);
    llvm::Value* row_bytes = b.CreateNSWMul(b.CreateSelect(row_major, nc_next, kc_next), g.b_bytes);
    p.stride = b.CreateNSWMul(b.CreateSelect(row_major, g.b_k, g.b_n), g.b_bytes);
    llvm::Value* first = b.CreateSelect(row_major, b.CreateNSWAdd(b.CreateNSWMul(pc_next, g.b_k), jc_next),
                                        b.CreateNSWAdd(b.CreateNSWMul(jc_next, g.b_n), pc_next));
    p.base = b.CreateGEP(b.getInt8Ty(), bm, b.CreateNSWMul(first, g.b_bytes));
    p.chunk_bytes = b.CreateNSWMul(ceil_div(steps, kGemmPrefetchSteps), i64(64));
    llvm::Value* per_row =
        b.CreateSDiv(b.CreateNSWSub(b.CreateNSWAdd(row_bytes, p.chunk_bytes), i64(1)), p.chunk_bytes);
    p.chunks_per_row = b.CreateSelect(b.CreateICmpSLT(per_row, i64(1)), i64(1), per_row);
    llvm::Value* any =
        b.CreateAnd(b.CreateOr(more_k, b.CreateICmpSLT(jc_next, n_end)), b.CreateOr(row_major, col_major));
    p.chunks = b.CreateSelect(any, b.CreateNSWMul(rows, p.chunks_per_row), i64(0));
    return p;
  }

  // What kernel call `call` of the block prefetches.
  llvm::Value* Address(llvm::IRBuilder<>& b, llvm::Value* call, llvm::Value* own_panel) const {
    llvm::Value* row = b.CreateSDiv(call, chunks_per_row);
    llvm::Value* part = b.CreateSRem(call, chunks_per_row);
    llvm::Value* at = b.CreateGEP(b.getInt8Ty(), base,
                                  b.CreateNSWAdd(b.CreateNSWMul(row, stride), b.CreateNSWMul(part, chunk_bytes)));
    return b.CreateSelect(b.CreateICmpSLT(call, chunks), at, own_panel);
  }
};

// The blocked loops of `fn` (CreateGemmFunction), from its entry block on.
void EmitGemmBody(llvm::IRBuilder<>& b, llvm::Function* fn, const GemmBody& g) {
  llvm::Type* element = g.element;
  const GemmTiling& t = g.t;
  const int64_t kc_max = g.kc_max, nc_max = g.nc_max, mc_max = g.mc_max;
  llvm::Value* k_total = g.k_total;
  llvm::Value* c_m = g.c_m;
  GemmPacker pack_a = g.pack_a;
  GemmPacker pack_b = g.pack_b;
  llvm::Function* kernel = g.kernel;
  llvm::Value* a = fn->getArg(0);
  llvm::Value* bm = fn->getArg(1);
  llvm::Value* c = fn->getArg(2);
  llvm::Value* batch = fn->getArg(3);
  llvm::Value* m_begin = fn->getArg(4);
  llvm::Value* m_end = fn->getArg(5);
  llvm::Value* n_begin = fn->getArg(6);
  llvm::Value* n_end = fn->getArg(7);
  // The packing buffers (up to ~1 MiB) live in the calling thread's scratch (xlac_rt_thread_scratch), not on the
  // stack: devices multiplexed as fibers on one thread would each keep a resident copy on their own stack.
  llvm::Module& module = *fn->getParent();
  llvm::LLVMContext& ctx = module.getContext();
  const int64_t element_bytes = g.packed_bytes;
  const int64_t b_pack_bytes = (kc_max * nc_max * element_bytes + 63) / 64 * 64;
  llvm::FunctionCallee scratch = module.getOrInsertFunction(
      "xlac_rt_thread_scratch", llvm::FunctionType::get(b.getPtrTy(), {b.getInt64Ty()}, false));
  const int64_t a_pack_bytes = (mc_max * kc_max * element_bytes + 63) / 64 * 64;
  // One f32 panel (kc x the wider of mr and nr) that custom packers fill before its repacking into pairs.
  const int64_t f32_panel_bytes = (g.repack_pairs ? kc_max * std::max(t.mr, t.nr) * 4 + 63 : 0) / 64 * 64;
  auto i64 = [&](int64_t v) { return b.getInt64(v); };
  auto add = [&](llvm::Value* x, llvm::Value* y) { return b.CreateNSWAdd(x, y); };
  // With several n blocks, A's rows of this call are packed once, every k block of them, and reused for the other
  // n blocks (BLIS packs them again per n block): in the MLP's 256 x 4096 x 4096 dot that packing was 3.8 % of the
  // time. Up to kMaxReusedAPackBytes; larger A panels are packed per n block as before.
  const int64_t a_panel_bytes = kc_max * t.mr * element_bytes;
  llvm::Value* m_panels = b.CreateSDiv(add(b.CreateNSWSub(m_end, m_begin), i64(t.mr - 1)), i64(t.mr));
  llvm::Value* k_blocks = b.CreateSDiv(add(k_total, i64(kc_max - 1)), i64(kc_max));
  llvm::Value* a_all_bytes = b.CreateNSWMul(b.CreateNSWMul(m_panels, k_blocks), i64(a_panel_bytes));
  llvm::Value* reuse_a = b.CreateAnd(b.CreateICmpSGT(b.CreateNSWSub(n_end, n_begin), i64(nc_max)),
                                     b.CreateICmpSLE(a_all_bytes, i64(kMaxReusedAPackBytes)), "reuse.a");
  llvm::Value* a_region = b.CreateSelect(reuse_a, a_all_bytes, i64(a_pack_bytes));
  llvm::CallInst* b_pack = b.CreateCall(scratch, {add(i64(b_pack_bytes + f32_panel_bytes), a_region)}, "b.pack");
  b_pack->addRetAttr(llvm::Attribute::NoAlias);
  b_pack->addRetAttr(llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
  llvm::Value* a_pack = b.CreateInBoundsGEP(b.getInt8Ty(), b_pack, i64(b_pack_bytes + f32_panel_bytes), "a.pack");
  if (g.repack_pairs) {
    llvm::Value* f32_panel = b.CreateInBoundsGEP(b.getInt8Ty(), b_pack, i64(b_pack_bytes), "f32.panel");
    auto via_f32_panel = [f32_panel](GemmPacker f32_packer) -> GemmPacker {
      return [f32_panel, f32_packer](llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* batch, llvm::Value* i0,
                                     llvm::Value* count, llvm::Value* k0, llvm::Value* kc, llvm::Value* dst,
                                     int64_t width) {
        f32_packer(b, x, batch, i0, count, k0, kc, f32_panel, width);
        EmitBf16PairsFromF32Panel(b, f32_panel, kc, dst, width);
      };
    };
    pack_a = via_f32_panel(pack_a);
    pack_b = via_f32_panel(pack_b);
  }
  llvm::AllocaInst* tile = b.CreateAlloca(element, b.getInt64(t.mr * t.nr), "tile");
  tile->setAlignment(llvm::Align(64));
  auto at = [&](llvm::Value* base, llvm::Value* offset) { return b.CreateInBoundsGEP(element, base, offset); };
  // B's element `offset` as stored (b_bytes each: bf16 B read in place is not in the GEMM's element type).
  auto in_b = [&](llvm::Value* offset) {
    return b.CreateInBoundsGEP(b.getInt8Ty(), bm, b.CreateNSWMul(offset, g.b_bytes));
  };
  // With a single register tile of rows every B element is used once: packing B would copy all of it (from memory)
  // for one read. Calls with up to kMaxDirectBTiles tiles of rows (decode-like shapes, 8 x 4096 x 4096) read B in
  // place instead (the second tile from cache), except for panels narrower than nr at the n edge, which the kernel
  // would read past.
  llvm::Value* direct = b.getFalse();
  if (g.direct_kernel != nullptr) {
    direct = b.CreateAnd(b.CreateIsNotNull(g.direct_kernel),
                         b.CreateICmpSLE(b.CreateNSWSub(m_end, m_begin), i64(kMaxDirectBTiles * t.mr)), "direct.b");
  }
  auto direct_panel = [&](llvm::Value* cols) { return b.CreateAnd(direct, b.CreateICmpEQ(cols, i64(t.nr))); };
  // The other full-width panels of a B with contiguous columns are packed by the first kernel call that reads them
  // (the first row tile of the call's rows), not by a pass of their own: that call's B loads overlap its FMAs,
  // where the packer waited on each row (a page or more apart) with nothing to do beside.
  llvm::Value* packing = b.getFalse();
  if (g.packing_kernel != nullptr) packing = b.CreateAnd(b.CreateIsNotNull(g.packing_kernel), b.CreateNot(direct));
  auto packing_panel = [&](llvm::Value* cols) { return b.CreateAnd(packing, b.CreateICmpEQ(cols, i64(t.nr))); };
  // Panels are kc_max packed elements per row or column apart.
  auto panel = [&](llvm::Value* base, llvm::Value* first) {
    return b.CreateInBoundsGEP(b.getInt8Ty(), base, b.CreateNSWMul(first, i64(kc_max * element_bytes)));
  };
  llvm::Align align(element->getPrimitiveSizeInBits() / 8);

  GemmLoop(
      b, n_begin, n_end, nc_max,
      [&](llvm::Value* jc) {
        llvm::Value* nc = Min(b, i64(nc_max), b.CreateNSWSub(n_end, jc));
        GemmLoop(
            b, i64(0), k_total, kc_max,
            [&](llvm::Value* pc) {
              llvm::Value* kc = Min(b, i64(kc_max), b.CreateNSWSub(k_total, pc));
              llvm::Value* first = b.CreateICmpEQ(pc, i64(0));
              std::optional<NextBlockPrefetch> prefetch;
              if (g.b_bytes != nullptr) {
                llvm::Value* steps = g.packed_bytes == 2 ? b.CreateSDiv(add(kc, i64(1)), i64(2)) : kc;
                prefetch = NextBlockPrefetch::Plan(b, g, bm, pc, kc, jc, nc, n_end, steps);
              }
              // B[pc:pc+kc, jc:jc+nc] -> panels of nr columns, k-major within a panel, zero past column nc.
              GemmLoop(
                  b, i64(0), nc, t.nr,
                  [&](llvm::Value* jp) {
                    llvm::Value* cols = Min(b, i64(t.nr), b.CreateNSWSub(nc, jp));
                    GemmIf(
                        b, b.CreateNot(b.CreateOr(direct_panel(cols), packing_panel(cols))),
                        [&] { pack_b(b, bm, batch, add(jc, jp), cols, pc, kc, panel(b_pack, jp), t.nr); }, [] {});
                  },
                  "pack.b");
              GemmLoop(
                  b, m_begin, m_end, mc_max,
                  [&](llvm::Value* ic) {
                    llvm::Value* mc = Min(b, i64(mc_max), b.CreateNSWSub(m_end, ic));
                    // The A block's panels: panel (pc / kc_max) * m_panels + (ic - m_begin) / mr of the reused ones.
                    llvm::Value* reused_panel = add(b.CreateNSWMul(b.CreateSDiv(pc, i64(kc_max)), m_panels),
                                                    b.CreateSDiv(b.CreateNSWSub(ic, m_begin), i64(t.mr)));
                    llvm::Value* a_block = b.CreateSelect(
                        reuse_a,
                        b.CreateInBoundsGEP(b.getInt8Ty(), a_pack, b.CreateNSWMul(reused_panel, i64(a_panel_bytes))),
                        a_pack);
                    // A[ic:ic+mc, pc:pc+kc] -> panels of mr rows, k-major within a panel, zero past row mc.
                    GemmIf(
                        b, b.CreateOr(b.CreateNot(reuse_a), b.CreateICmpEQ(jc, n_begin)),
                        [&] {
                          GemmLoop(
                              b, i64(0), mc, t.mr,
                              [&](llvm::Value* ip) {
                                llvm::Value* rows = Min(b, i64(t.mr), b.CreateNSWSub(mc, ip));
                                pack_a(b, a, batch, add(ic, ip), rows, pc, kc, panel(a_block, ip), t.mr);
                              },
                              "pack.a");
                        },
                        [] {});
                    GemmLoop(
                        b, i64(0), nc, t.nr,
                        [&](llvm::Value* jr) {
                          llvm::Value* nr = Min(b, i64(t.nr), b.CreateNSWSub(nc, jr));
                          llvm::Value* bp = panel(b_pack, jr);
                          llvm::Value* pf = bp;
                          // The panel the next in-place call reads: the next one of this block, else the first of
                          // the next block (down k, else the next columns), else this one again.
                          llvm::Value* next_in_place = nullptr;
                          if (g.direct_kernel != nullptr) {
                            llvm::Value* jr_next = add(jr, i64(t.nr));
                            llvm::Value* pc_next = add(pc, kc);
                            llvm::Value* in_block = b.CreateICmpSLT(jr_next, nc);
                            llvm::Value* more_k = b.CreateICmpSLT(pc_next, k_total);
                            llvm::Value* more_n = b.CreateICmpSLT(add(jc, nc), n_end);
                            llvm::Value* row = b.CreateSelect(in_block, pc, b.CreateSelect(more_k, pc_next, i64(0)));
                            llvm::Value* col = b.CreateSelect(
                                in_block, add(jc, jr_next),
                                b.CreateSelect(more_k, jc, b.CreateSelect(more_n, add(jc, nc), add(jc, jr))));
                            row = b.CreateSelect(b.CreateOr(in_block, b.CreateOr(more_k, more_n)), row, pc);
                            next_in_place = in_b(add(b.CreateNSWMul(row, g.b_k), col));
                          }
                          auto call_kernel = [&](llvm::Value* ap, llvm::Value* tile_c, llvm::Value* ldc,
                                                 llvm::Value* ir) {
                            auto plain_call = [&] { b.CreateCall(kernel, {ap, bp, tile_c, ldc, kc, first, pf}); };
                            auto packed_call = [&] {
                              if (g.packing_kernel == nullptr) {
                                plain_call();
                                return;
                              }
                              llvm::Value* packs =
                                  b.CreateAnd(packing_panel(nr),
                                              b.CreateAnd(b.CreateICmpEQ(ic, m_begin), b.CreateICmpEQ(ir, i64(0))));
                              GemmIf(
                                  b, packs,
                                  [&] {
                                    llvm::Value* source = in_b(add(b.CreateNSWMul(pc, g.b_k), add(jc, jr)));
                                    b.CreateCall(GemmKernelType(b.getContext(), /*strided_b=*/true, /*copy_b=*/true),
                                                 g.packing_kernel, {ap, source, tile_c, ldc, kc, first, pf, g.b_k, bp});
                                  },
                                  plain_call);
                            };
                            if (g.direct_kernel == nullptr) {
                              packed_call();
                              return;
                            }
                            GemmIf(
                                b, direct_panel(nr),
                                [&] {
                                  llvm::Value* in_place = in_b(add(b.CreateNSWMul(pc, g.b_k), add(jc, jr)));
                                  b.CreateCall(GemmKernelType(b.getContext(), /*strided_b=*/true), g.direct_kernel,
                                               {ap, in_place, tile_c, ldc, kc, first, next_in_place, g.b_k});
                                },
                                packed_call);
                          };
                          GemmLoop(
                              b, i64(0), mc, t.mr,
                              [&](llvm::Value* ir) {
                                llvm::Value* mr = Min(b, i64(t.mr), b.CreateNSWSub(mc, ir));
                                llvm::Value* ap = panel(a_block, ir);
                                if (prefetch) {
                                  // Calls in the order of this block's tiles: row tile, then panel.
                                  llvm::Value* row_tile = b.CreateSDiv(b.CreateNSWSub(add(ic, ir), m_begin), i64(t.mr));
                                  llvm::Value* panels = b.CreateSDiv(add(nc, i64(t.nr - 1)), i64(t.nr));
                                  llvm::Value* call =
                                      add(b.CreateNSWMul(row_tile, panels), b.CreateSDiv(jr, i64(t.nr)));
                                  pf = prefetch->Address(b, call, bp);
                                }
                                llvm::Value* cp = at(c, add(b.CreateNSWMul(add(ic, ir), c_m), add(jc, jr)));
                                llvm::Value* full =
                                    b.CreateAnd(b.CreateICmpEQ(mr, i64(t.mr)), b.CreateICmpEQ(nr, i64(t.nr)));
                                GemmIf(
                                    b, full, [&] { call_kernel(ap, cp, c_m, ir); },
                                    [&] {
                                      // Edge tile: the kernel works on the scratch tile; only the valid mr x nr part
                                      // touches C.
                                      auto copy = [&](bool to_tile) {
                                        GemmLoop(
                                            b, i64(0), mr, 1,
                                            [&](llvm::Value* r) {
                                              GemmLoop(
                                                  b, i64(0), nr, 1,
                                                  [&](llvm::Value* col) {
                                                    llvm::Value* in_c = at(cp, add(b.CreateNSWMul(r, c_m), col));
                                                    llvm::Value* in_tile =
                                                        at(tile, add(b.CreateNSWMul(r, i64(t.nr)), col));
                                                    llvm::Value* from = to_tile ? in_c : in_tile;
                                                    llvm::Value* to = to_tile ? in_tile : in_c;
                                                    b.CreateAlignedStore(b.CreateAlignedLoad(element, from, align), to,
                                                                         align);
                                                  },
                                                  "tile.col", /*vectorize=*/false);
                                            },
                                            "tile.row", /*vectorize=*/false);
                                      };
                                      GemmIf(
                                          b, first, [] {}, [&] { copy(true); });
                                      call_kernel(ap, tile, i64(t.nr), ir);
                                      copy(false);
                                    });
                              },
                              "micro.m");
                        },
                        "micro.n");
                  },
                  "block.m");
            },
            "block.k");
      },
      "block.n");
  b.CreateRetVoid();
}

const char* LoadName(GemmOperandLoad load) {
  switch (load) {
    case GemmOperandLoad::kNative:
      return "native";
    case GemmOperandLoad::kWidenBf16:
      return "bf16";
    case GemmOperandLoad::kWidenF16:
      return "f16";
    case GemmOperandLoad::kRoundBf16:
      return "rbf16";
  }
  return "";
}

GemmLoad LoadOf(GemmOperandLoad load, llvm::Type* element) {
  switch (load) {
    case GemmOperandLoad::kNative:
      return NativeGemmLoad(element);
    case GemmOperandLoad::kWidenBf16:
    case GemmOperandLoad::kWidenF16:
      return WidenedGemmLoad(load == GemmOperandLoad::kWidenF16);
    case GemmOperandLoad::kRoundBf16:
      return Bf16RoundedGemmLoad();
  }
  return NativeGemmLoad(element);
}

constexpr int kShapeArguments = 6;  // k, a_m, a_k, b_k, b_n, c_m

// Bytes per element of the operands as stored (what the strided packers read).
int64_t SourceBytes(const GemmSpec& spec) {
  return spec.load == GemmOperandLoad::kWidenBf16 || spec.load == GemmOperandLoad::kWidenF16
             ? 2
             : static_cast<int64_t>(spec.element->getPrimitiveSizeInBits() / 8);
}

// Whether the kernels can read B's elements where they lie (GetKernel's strided_b): as stored, or bf16 / f16 widened
// to f32; not bf16 pairs (their packing interleaves k) nor custom packers.
bool ReadableInPlace(const GemmSpec& spec) {
  const bool loadable = spec.load == GemmOperandLoad::kNative ||
                        (spec.element->isFloatTy() &&
                         (spec.load == GemmOperandLoad::kWidenBf16 || spec.load == GemmOperandLoad::kWidenF16));
  return !spec.bf16_pairs && !spec.pack_a && !spec.pack_b && loadable;
}

// A stride's letter in the shared functions' names: the unit stride is a constant in their bodies.
char UnitName(int64_t stride) { return stride == 1 ? '1' : 's'; }

// Signature of the outlined packers: void(ptr x, i64 batch, i64 i0, i64 count, i64 k0, i64 kc, ptr dst,
// i64 outer_stride, i64 k_stride) fills the panel GemmPacker describes (its width fixed per function).
llvm::FunctionType* PackerType(llvm::LLVMContext& ctx) {
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  return llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr, i64, i64, i64, i64, i64, ptr, i64, i64}, false);
}

// The packer of one operand of the shared GEMMs, per element type, load, pair packing, unit strides and panel width:
// the same packer serves every GEMM whose operand has that stride pattern (A of one and B of another included).
llvm::Function* GetGemmPacker(llvm::Module& module, const GemmSpec& spec, const GemmTiling& t, int64_t outer, int64_t k,
                              int64_t width, const TargetInfo& target) {
  std::string name =
      fmt::format("xlac.gemm.pack.{}.{}{}.{}{}.w{}", spec.element->isFloatTy() ? "f32" : "f64",
                  spec.bf16_pairs ? "pairs." : "", LoadName(spec.load), UnitName(outer), UnitName(k), width);
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  llvm::LLVMContext& ctx = module.getContext();
  llvm::Function* fn = llvm::Function::Create(PackerType(ctx), llvm::GlobalValue::InternalLinkage, name, module);
  const char* names[] = {"x", "batch", "i0", "count", "k0", "kc", "dst", "outer_stride", "k_stride"};
  for (unsigned i = 0; i < 9; ++i) fn->getArg(i)->setName(names[i]);
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  fn->addFnAttr(llvm::Attribute::NoInline);
  fn->addFnAttr(kSharedFunctionAttribute);
  SetFunctionTargetAttributes(*fn, target);
  // What the inlined packers knew from the scratch buffer (xlac_rt_thread_scratch: noalias, 64-byte aligned, panels
  // 64-byte multiples apart): without it the vectorizer must guard the copies against overlap.
  fn->addParamAttr(0, llvm::Attribute::NoCapture);
  fn->addParamAttr(0, llvm::Attribute::ReadOnly);
  fn->addParamAttr(6, llvm::Attribute::NoAlias);
  fn->addParamAttr(6, llvm::Attribute::NoCapture);
  fn->addParamAttr(6, llvm::Attribute::getWithAlignment(ctx, llvm::Align(64)));
  llvm::IRBuilder<> b(ctx);
  b.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::Value* outer_stride = outer == 1 ? static_cast<llvm::Value*>(b.getInt64(1)) : fn->getArg(7);
  llvm::Value* k_stride = k == 1 ? static_cast<llvm::Value*>(b.getInt64(1)) : fn->getArg(8);
  GemmPacker packer;
  if (spec.bf16_pairs) {
    packer = Bf16PairPacker(spec.load == GemmOperandLoad::kRoundBf16, outer_stride, k_stride);
  } else {
    packer = StridedGemmPacker(spec.element, outer_stride, k_stride, LoadOf(spec.load, spec.element),
                               spec.load == GemmOperandLoad::kNative, t.vector_width, SourceBytes(spec));
  }
  packer(b, fn->getArg(0), fn->getArg(1), fn->getArg(2), fn->getArg(3), fn->getArg(4), fn->getArg(5), fn->getArg(6),
         width);
  b.CreateRetVoid();
  return fn;
}

// The blocked loops of the shared GEMMs, per element type and kernel: CreateGemmFunction's arguments, the shape
// arguments, then the A and B packers (GetGemmPacker functions) it calls through pointers. One copy serves every
// stride pattern, so a program with dots of several layouts compiles the loop nest once.
llvm::Function* GetGemmDriver(llvm::Module& module, const GemmSpec& spec, const GemmTiling& t, llvm::Function* kernel,
                              const TargetInfo& target) {
  std::string name = fmt::format("xlac.gemm.blocked.{}", kernel->getName().substr(strlen("xlac.gemm.kernel.")).str());
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  // The shape arguments, then B's bytes per element (its source type: the driver serves every load).
  llvm::Function* fn = CreateGemmFunction(module, name, kShapeArguments + 1, target, /*pointer_arguments=*/4);
  fn->addFnAttr(kSharedFunctionAttribute);
  llvm::IRBuilder<> b(module.getContext());
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  const char* names[] = {"k",       "a_m",    "a_k",    "b_k",           "b_n",           "c_m",
                         "b_bytes", "pack_a", "pack_b", "direct_kernel", "packing_kernel"};
  for (unsigned i = 0; i < 11; ++i) fn->getArg(8 + i)->setName(names[i]);
  llvm::FunctionType* packer_type = PackerType(module.getContext());
  auto call_packer = [packer_type](llvm::Value* packer, llvm::Value* outer_stride,
                                   llvm::Value* k_stride) -> GemmPacker {
    return [=](llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value* batch, llvm::Value* i0, llvm::Value* count,
               llvm::Value* k0, llvm::Value* kc, llvm::Value* dst, int64_t) {
      b.CreateCall(packer_type, packer, {x, batch, i0, count, k0, kc, dst, outer_stride, k_stride});
    };
  };
  GemmBody g;
  g.element = spec.element;
  g.packed_bytes = spec.bf16_pairs ? 2 : static_cast<int64_t>(spec.element->getPrimitiveSizeInBits() / 8);
  g.t = t;
  g.kc_max = g.t.kc;
  g.nc_max = g.t.nc;
  g.mc_max = g.t.mc;
  g.k_total = fn->getArg(8);
  g.c_m = fn->getArg(13);
  g.pack_a = call_packer(fn->getArg(15), fn->getArg(9), fn->getArg(10));
  g.pack_b = call_packer(fn->getArg(16), fn->getArg(12), fn->getArg(11));
  g.kernel = kernel;
  g.b_k = fn->getArg(11);
  g.b_n = fn->getArg(12);
  g.b_bytes = fn->getArg(14);
  // bf16 pair kernels read pairs, which only packing makes.
  if (!spec.bf16_pairs) {
    g.direct_kernel = fn->getArg(17);
    g.packing_kernel = fn->getArg(18);
  }
  EmitGemmBody(b, fn, g);
  return fn;
}

// One function per element type, numerics, load and set of unit strides; see EmitGemmFunction. It calls the
// driver of its element type and kernel with the packers of its stride pattern.
llvm::Function* GetSharedGemmFunction(llvm::Module& module, const GemmSpec& spec, const TargetInfo& target) {
  assert(!spec.bf16_pairs || (spec.fma && spec.element->isFloatTy() && target.has_avx512_bf16 &&
                              (spec.load == GemmOperandLoad::kWidenBf16 || spec.load == GemmOperandLoad::kRoundBf16)));
  std::string name =
      fmt::format("xlac.gemm.{}.{}.{}.a{}{}.b{}{}", spec.element->isFloatTy() ? "f32" : "f64",
                  spec.bf16_pairs  ? "dpbf16"
                  : spec.fma       ? "fma"
                  : spec.b_times_a ? "exact.ba"
                                   : "exact",
                  LoadName(spec.load), UnitName(spec.a_m), UnitName(spec.a_k), UnitName(spec.b_k), UnitName(spec.b_n));
  if (llvm::Function* existing = module.getFunction(name)) return existing;
  GemmTiling t = ChooseGemmTiling(spec, target);
  llvm::Function* kernel = spec.bf16_pairs ? GetBf16PairKernel(module, t, target)
                                           : GetKernel(module, spec.element, t, spec.b_times_a, spec.fma, target);
  llvm::Function* driver = GetGemmDriver(module, spec, t, kernel, target);
  llvm::Function* pack_a = GetGemmPacker(module, spec, t, spec.a_m, spec.a_k, t.mr, target);
  llvm::Function* pack_b = GetGemmPacker(module, spec, t, spec.b_n, spec.b_k, t.nr, target);
  llvm::Function* fn = CreateGemmFunction(module, name, kShapeArguments, target, /*pointer_arguments=*/1);
  fn->addFnAttr(kSharedFunctionAttribute);
  const char* names[] = {"k", "a_m", "a_k", "b_k", "b_n", "c_m", "direct_kernel"};
  for (unsigned i = 0; i < 7; ++i) fn->getArg(8 + i)->setName(names[i]);
  llvm::IRBuilder<> b(module.getContext());
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  std::vector<llvm::Value*> args;
  for (unsigned i = 0; i < 8 + kShapeArguments; ++i) args.push_back(fn->getArg(i));
  args.push_back(b.getInt64(SourceBytes(spec)));
  args.push_back(pack_a);
  args.push_back(pack_b);
  args.push_back(fn->getArg(8 + kShapeArguments));
  // B with contiguous columns, read as the kernels can: the first call on each panel packs it.
  llvm::Value* packing = llvm::ConstantPointerNull::get(b.getPtrTy());
  if (spec.b_n == 1 && ReadableInPlace(spec)) {
    packing = GetKernel(module, spec.element, t, spec.b_times_a, spec.fma, target, /*strided_b=*/true, spec.load,
                        /*copy_b=*/true);
  }
  args.push_back(packing);
  b.CreateCall(driver, args);
  b.CreateRetVoid();
  return fn;
}

}  // namespace

llvm::Function* EmitGemmFunction(llvm::Module& module, const std::string& name, const GemmSpec& spec,
                                 const TargetInfo& target) {
  if (!spec.pack_a && !spec.pack_b) return GetSharedGemmFunction(module, spec, target);
  assert(spec.pack_a && spec.pack_b && "custom packing for both operands or neither");
  assert(!spec.bf16_pairs || (spec.fma && spec.element->isFloatTy() && target.has_avx512_bf16));
  GemmTiling t = ChooseGemmTiling(spec, target);
  llvm::Function* kernel = spec.bf16_pairs ? GetBf16PairKernel(module, t, target)
                                           : GetKernel(module, spec.element, t, spec.b_times_a, spec.fma, target);
  llvm::Function* fn = CreateGemmFunction(module, name, 0, target);
  llvm::IRBuilder<> b(module.getContext());
  b.SetInsertPoint(llvm::BasicBlock::Create(module.getContext(), "entry", fn));
  GemmBody g;
  g.element = spec.element;
  g.packed_bytes = spec.bf16_pairs ? 2 : static_cast<int64_t>(spec.element->getPrimitiveSizeInBits() / 8);
  g.repack_pairs = spec.bf16_pairs;
  g.t = t;
  // A panel of pairs holds ceil(kc / 2) pairs: an even kc_max keeps an odd k's panels from overlapping.
  g.kc_max = spec.bf16_pairs ? RoundUp(std::min(g.t.kc, spec.k), 2) : std::min(g.t.kc, spec.k);
  g.nc_max = std::min(g.t.nc, RoundUp(spec.n, g.t.nr));
  g.mc_max = std::min(g.t.mc, RoundUp(spec.m, g.t.mr));
  g.k_total = b.getInt64(spec.k);
  g.c_m = b.getInt64(spec.c_m);
  g.pack_a = spec.pack_a;
  g.pack_b = spec.pack_b;
  g.kernel = kernel;
  EmitGemmBody(b, fn, g);
  return fn;
}

bool GemmReadsBInPlace(const GemmSpec& spec, const TargetInfo& target) {
  return ReadableInPlace(spec) && spec.b_n == 1 && spec.m <= kMaxDirectBTiles * ChooseGemmTiling(spec, target).mr;
}

std::vector<llvm::Value*> GemmShapeArguments(llvm::IRBuilder<>& b, const GemmSpec& spec, const llvm::Function& gemm,
                                             const TargetInfo& target) {
  if (gemm.arg_size() == 8) return {};
  // The kernel reading B in place (EmitGemmBody), for dots with few enough rows whose B has the kernel's elements
  // with contiguous columns; only such dots add it to the module.
  llvm::Value* direct = llvm::ConstantPointerNull::get(b.getPtrTy());
  if (GemmReadsBInPlace(spec, target)) {
    direct = GetKernel(*b.GetInsertBlock()->getModule(), spec.element, ChooseGemmTiling(spec, target), spec.b_times_a,
                       spec.fma, target, /*strided_b=*/true, spec.load);
  }
  return {b.getInt64(spec.k),
          b.getInt64(spec.a_m),
          b.getInt64(spec.a_k),
          b.getInt64(spec.b_k),
          b.getInt64(spec.b_n),
          b.getInt64(spec.c_m),
          direct};
}

}  // namespace xlac::codegen::internal
