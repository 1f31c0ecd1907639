// The bf16 side of the blocked GEMM (codegen/ir_emitter_gemm.h, GemmSpec::bf16_pairs): panels packed as pairs of
// bf16 values adjacent in k, and the micro-kernel that multiplies them with AVX512_BF16's vdpbf16ps. One vdpbf16ps
// does the work of two FMAs on f32 operands (16 lanes x 2 products), and the packed panels are half the bytes.
//
// Packed layout: an A panel of mr rows holds, per pair p, mr 32-bit words {X(r, 2p), X(r, 2p + 1)} (low half first);
// the kernel broadcasts one word per row. A B panel of nr columns holds, per pair p, nr such words, one vector
// register per 16 columns. A pair straddling the end of k (odd kc) has a zero second half; rows past the panel's
// count are zero, so the padded products are 0 * 0 and no NaN or infinity is made up.
#include <functional>
#include <vector>

#include "codegen/ir_emitter_gemm.h"
#include "fmt/format.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/DerivedTypes.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicsX86.h"
#include "llvm/IR/Module.h"

namespace xlac::codegen::internal {
namespace {

llvm::Type* VectorOr(llvm::Type* scalar, unsigned n) {
  return n == 1 ? scalar : static_cast<llvm::Type*>(llvm::FixedVectorType::get(scalar, n));
}

// The upper halves of f32 values (scalar or vector) that hold bf16 values: their bf16 bits. A NaN whose payload
// sits in the lower half only (kept by EmitRoundToBf16) would read as an infinity: NaNs get the quiet bit.
llvm::Value* Bf16BitsOf(llvm::IRBuilder<>& b, llvm::Value* f) {
  llvm::Type* wide = b.getInt32Ty();
  llvm::Type* half = b.getInt16Ty();
  if (auto* v = llvm::dyn_cast<llvm::FixedVectorType>(f->getType())) {
    wide = llvm::FixedVectorType::get(wide, v->getNumElements());
    half = llvm::FixedVectorType::get(half, v->getNumElements());
  }
  llvm::Value* bits = b.CreateBitCast(f, wide);
  llvm::Value* upper = b.CreateLShr(bits, llvm::ConstantInt::get(wide, 16));
  llvm::Value* nan = b.CreateICmpUGT(b.CreateAnd(bits, llvm::ConstantInt::get(wide, 0x7fffffff)),
                                     llvm::ConstantInt::get(wide, 0x7f800000));
  upper = b.CreateSelect(nan, b.CreateOr(upper, llvm::ConstantInt::get(wide, 0x40)), upper);
  return b.CreateTrunc(upper, half);
}

// The bf16 bits of n consecutive elements of x from element `offset`: <n x i16>, or i16 for n == 1.
llvm::Value* LoadBf16Bits(llvm::IRBuilder<>& b, bool f32_source, llvm::Value* x, llvm::Value* offset, unsigned n) {
  if (!f32_source) {
    return b.CreateAlignedLoad(VectorOr(b.getInt16Ty(), n), b.CreateInBoundsGEP(b.getInt16Ty(), x, offset),
                               llvm::Align(2));
  }
  llvm::Value* f =
      b.CreateAlignedLoad(VectorOr(b.getFloatTy(), n), b.CreateInBoundsGEP(b.getFloatTy(), x, offset), llvm::Align(4));
  return Bf16BitsOf(b, EmitRoundToBf16(b, f));
}

// Packs a panel whose k rows come whole: row_bits(kk) gives the `width` bf16 values of row kk (<width x i16>), and
// rows 2p and 2p + 1 interleave into pair p (an odd kc's last pair with zeros).
void PackRowPairs(llvm::IRBuilder<>& b, llvm::Value* kc, llvm::Value* dst, int64_t width,
                  const std::function<llvm::Value*(llvm::Value* kk)>& row_bits) {
  const unsigned n = static_cast<unsigned>(width);
  llvm::SmallVector<int, 64> interleave;
  for (unsigned j = 0; j < n; ++j) {
    interleave.push_back(static_cast<int>(j));
    interleave.push_back(static_cast<int>(n + j));
  }
  auto store_pair = [&](llvm::Value* p, llvm::Value* lo, llvm::Value* hi) {
    b.CreateAlignedStore(b.CreateShuffleVector(lo, hi, interleave),
                         b.CreateInBoundsGEP(b.getInt16Ty(), dst, b.CreateNSWMul(p, b.getInt64(2 * width))),
                         llvm::Align(4));
  };
  llvm::Value* pairs = b.CreateSDiv(kc, b.getInt64(2));
  GemmLoop(
      b, b.getInt64(0), pairs, 1,
      [&](llvm::Value* p) {
        llvm::Value* kk = b.CreateNSWMul(p, b.getInt64(2));
        store_pair(p, row_bits(kk), row_bits(b.CreateNSWAdd(kk, b.getInt64(1))));
      },
      "pack.row.pairs", /*vectorize=*/false);
  GemmIf(
      b, b.CreateICmpEQ(b.CreateSRem(kc, b.getInt64(2)), b.getInt64(1)),
      [&] {
        llvm::Value* lo = row_bits(b.CreateNSWSub(kc, b.getInt64(1)));
        store_pair(pairs, lo, llvm::Constant::getNullValue(lo->getType()));
      },
      [] {});
}

}  // namespace

GemmPacker Bf16PairPacker(bool f32_source, llvm::Value* row_stride, llvm::Value* k_stride) {
  return [=](llvm::IRBuilder<>& b, llvm::Value* x, llvm::Value*, llvm::Value* i0, llvm::Value* count, llvm::Value* k0,
             llvm::Value* kc, llvm::Value* dst, int64_t width) {
    llvm::Type* i16 = b.getInt16Ty();
    llvm::Type* i32 = b.getInt32Ty();
    llvm::Value* w = b.getInt64(width);
    // X(i0 + r, k0 + kk) as an element offset into x.
    auto element = [&](llvm::Value* r, llvm::Value* kk) {
      return b.CreateNSWAdd(b.CreateNSWMul(b.CreateNSWAdd(i0, r), row_stride),
                            b.CreateNSWMul(b.CreateNSWAdd(k0, kk), k_stride));
    };
    auto store16 = [&](llvm::Value* v, llvm::Value* at) {
      b.CreateAlignedStore(v, b.CreateInBoundsGEP(i16, dst, at), llvm::Align(2));
    };
    llvm::Value* pairs = b.CreateSDiv(kc, b.getInt64(2));  // whole pairs; an odd kc leaves one k
    llvm::Value* odd = b.CreateICmpEQ(b.CreateSRem(kc, b.getInt64(2)), b.getInt64(1));
    // Pairs [begin, pairs) and the odd tail, element by element (any strides; the panel is full).
    auto pack_pairs_elementwise = [&](llvm::Value* begin) {
      GemmLoop(
          b, begin, pairs, 1,
          [&](llvm::Value* p) {
            GemmLoop(
                b, b.getInt64(0), w, 1,
                [&](llvm::Value* r) {
                  llvm::Value* kk = b.CreateNSWMul(p, b.getInt64(2));
                  llvm::Value* at = b.CreateNSWMul(b.CreateNSWAdd(b.CreateNSWMul(p, w), r), b.getInt64(2));
                  if (IsConstantOne(k_stride)) {
                    // Both halves adjacent in memory: one 32-bit move.
                    llvm::Value* word = b.CreateBitCast(LoadBf16Bits(b, f32_source, x, element(r, kk), 2), i32);
                    b.CreateAlignedStore(word, b.CreateInBoundsGEP(i16, dst, at), llvm::Align(4));
                    return;
                  }
                  store16(LoadBf16Bits(b, f32_source, x, element(r, kk), 1), at);
                  store16(LoadBf16Bits(b, f32_source, x, element(r, b.CreateNSWAdd(kk, b.getInt64(1))), 1),
                          b.CreateNSWAdd(at, b.getInt64(1)));
                },
                "pack.pair.row");
          },
          "pack.pair");
      GemmIf(
          b, odd,
          [&] {
            llvm::Value* kk = b.CreateNSWSub(kc, b.getInt64(1));
            GemmLoop(
                b, b.getInt64(0), w, 1,
                [&](llvm::Value* r) {
                  llvm::Value* at = b.CreateNSWMul(b.CreateNSWAdd(b.CreateNSWMul(pairs, w), r), b.getInt64(2));
                  store16(LoadBf16Bits(b, f32_source, x, element(r, kk), 1), at);
                  store16(b.getInt16(0), b.CreateNSWAdd(at, b.getInt64(1)));
                },
                "pack.tail", /*vectorize=*/false);
          },
          [] {});
    };
    GemmIf(
        b, b.CreateICmpEQ(count, w),
        [&] {
          const unsigned n = static_cast<unsigned>(width);
          if (IsConstantOne(row_stride)) {
            // Rows contiguous (B row-major): the two k rows of a pair, interleaved in registers.
            PackRowPairs(b, kc, dst, width, [&](llvm::Value* kk) {
              // The row kGemmPackPrefetchRows ahead (StridedGemmPacker's reason).
              const int64_t source_bytes = f32_source ? 4 : 2;
              EmitGemmPrefetch(b, x, source_bytes,
                               element(b.getInt64(0), b.CreateAdd(kk, b.getInt64(kGemmPackPrefetchRows))),
                               width * source_bytes);
              return LoadBf16Bits(b, f32_source, x, element(b.getInt64(0), kk), n);
            });
            return;
          }
          llvm::Value* begin = b.getInt64(0);
          if (IsConstantOne(k_stride) && width % 16 == 0) {
            // k contiguous (B transposed, as dx = dy w^T): 16 rows x 16 pairs move as a 16 x 16 block of words
            // transposed in registers, instead of words gathered from 16 rows a power-of-two stride apart.
            auto* words = llvm::FixedVectorType::get(i32, 16);
            llvm::Value* blocks_end = b.CreateNSWSub(pairs, b.CreateSRem(pairs, b.getInt64(16)));
            GemmLoop(
                b, b.getInt64(0), blocks_end, 16,
                [&](llvm::Value* q) {
                  llvm::Value* kk = b.CreateNSWMul(q, b.getInt64(2));
                  for (int64_t r0 = 0; r0 < width; r0 += 16) {
                    std::vector<llvm::Value*> rows;
                    for (int64_t j = 0; j < 16; ++j) {
                      rows.push_back(
                          b.CreateBitCast(LoadBf16Bits(b, f32_source, x, element(b.getInt64(r0 + j), kk), 32), words));
                    }
                    std::vector<llvm::Value*> columns = TransposeSquare(b, std::move(rows));
                    for (int64_t t = 0; t < 16; ++t) {
                      llvm::Value* word =
                          b.CreateNSWAdd(b.CreateNSWMul(b.CreateNSWAdd(q, b.getInt64(t)), w), b.getInt64(r0));
                      b.CreateAlignedStore(columns[static_cast<size_t>(t)], b.CreateInBoundsGEP(i32, dst, word),
                                           llvm::Align(4));
                    }
                  }
                },
                "pack.blocks", /*vectorize=*/false);
            begin = blocks_end;
          }
          pack_pairs_elementwise(begin);
        },
        [&] {
          // Edge panel: rows past count and the odd tail's second half are zero; loads stay inside the operand.
          llvm::Value* all = b.CreateNSWAdd(pairs, b.CreateZExt(odd, b.getInt64Ty()));
          GemmLoop(
              b, b.getInt64(0), all, 1,
              [&](llvm::Value* p) {
                GemmLoop(
                    b, b.getInt64(0), w, 1,
                    [&](llvm::Value* r) {
                      llvm::Value* inside = b.CreateICmpSLT(r, count);
                      llvm::Value* row = b.CreateSelect(inside, r, b.CreateNSWSub(count, b.getInt64(1)));
                      for (int64_t h = 0; h < 2; ++h) {
                        llvm::Value* kk = b.CreateNSWAdd(b.CreateNSWMul(p, b.getInt64(2)), b.getInt64(h));
                        llvm::Value* valid = b.CreateAnd(inside, b.CreateICmpSLT(kk, kc));
                        llvm::Value* k_clamped = b.CreateSelect(valid, kk, b.getInt64(0));
                        llvm::Value* v = LoadBf16Bits(b, f32_source, x, element(row, k_clamped), 1);
                        llvm::Value* at = b.CreateNSWAdd(
                            b.CreateNSWMul(b.CreateNSWAdd(b.CreateNSWMul(p, w), r), b.getInt64(2)), b.getInt64(h));
                        store16(b.CreateSelect(valid, v, b.getInt16(0)), at);
                      }
                    },
                    "pack.edge", /*vectorize=*/false);
              },
              "pack.edge.pair", /*vectorize=*/false);
        });
  };
}

void EmitBf16PairsFromF32Panel(llvm::IRBuilder<>& b, llvm::Value* panel, llvm::Value* kc, llvm::Value* dst,
                               int64_t width) {
  auto* floats = llvm::FixedVectorType::get(b.getFloatTy(), static_cast<unsigned>(width));
  PackRowPairs(b, kc, dst, width, [&](llvm::Value* kk) {
    return Bf16BitsOf(b, b.CreateAlignedLoad(
                             floats, b.CreateInBoundsGEP(b.getFloatTy(), panel, b.CreateNSWMul(kk, b.getInt64(width))),
                             llvm::Align(4)));
  });
}

llvm::Function* GetBf16PairKernel(llvm::Module& module, const GemmTiling& t, const TargetInfo& target) {
  assert(t.vector_width == 16 && t.nr % 16 == 0 && "the f32 tiling of an AVX-512 target");
  const int64_t cols = t.nr / 16;
  auto steps = [](llvm::IRBuilder<>& b, llvm::Value* kc) {
    return b.CreateSDiv(b.CreateNSWAdd(kc, b.getInt64(1)), b.getInt64(2));  // pairs, the last one maybe half zero
  };
  auto step = [=](llvm::IRBuilder<>& b, llvm::Value* ap, llvm::Value* bp, llvm::Value* /*ldb: packed*/,
                  llvm::Value* /*b_copy: packed*/, llvm::Value* p, std::vector<llvm::Value*>& acc) {
    auto* pairs_type = llvm::FixedVectorType::get(b.getBFloatTy(), 32);
    // Pair p of the B panel: nr words, 16 per vector; of the A panel: mr words.
    llvm::Value* b_row = b.CreateInBoundsGEP(b.getInt32Ty(), bp, b.CreateNSWMul(p, b.getInt64(t.nr)));
    std::vector<llvm::Value*> b_vec;
    for (int64_t col = 0; col < cols; ++col) {
      b_vec.push_back(b.CreateAlignedLoad(pairs_type, b.CreateInBoundsGEP(b.getInt32Ty(), b_row, b.getInt64(col * 16)),
                                          llvm::Align(64)));
    }
    llvm::Value* a_row = b.CreateInBoundsGEP(b.getInt32Ty(), ap, b.CreateNSWMul(p, b.getInt64(t.mr)));
    for (int64_t r = 0; r < t.mr; ++r) {
      llvm::Value* word = b.CreateAlignedLoad(b.getInt32Ty(), b.CreateInBoundsGEP(b.getInt32Ty(), a_row, b.getInt64(r)),
                                              llvm::Align(4));
      llvm::Value* a = b.CreateBitCast(b.CreateVectorSplat(16, word), pairs_type);
      for (int64_t col = 0; col < cols; ++col) {
        size_t i = static_cast<size_t>(r * cols + col);
        acc[i] = b.CreateIntrinsic(llvm::Intrinsic::x86_avx512bf16_dpbf16ps_512, {}, {acc[i], a, b_vec[col]});
      }
    }
  };
  return EmitGemmKernel(module, fmt::format("xlac.gemm.kernel.dpbf16.{}x{}", t.mr, t.nr), t,
                        llvm::Type::getFloatTy(module.getContext()), target, steps, step);
}

}  // namespace xlac::codegen::internal
