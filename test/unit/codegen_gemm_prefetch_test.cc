// The GEMM micro-kernels prefetch the next B block's source while they compute (codegen/ir_emitter_gemm.h,
// EmitGemmKernel's pf): the shared GEMM function of a dot runs here with every prefetch recorded instead of issued,
// and every line of every B block after the first must have been prefetched before that block is packed, for B
// row-major, B transposed and bf16 B, and every panel after the first before a kernel reads it in place (few rows),
// with prefetches never outside B's bytes except on the thread's own panels. B's packers (of the panels that the
// first kernel call on them does not pack: bf16 pairs, narrow edge panels) prefetch the rows they copy a few rows
// ahead. The packed kernels prefetch into L1 the C tile the next call updates (EmitGemmKernel): every row
// tile after the first is prefetched, and nothing past the tile below C's last one.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "codegen/ir_emitter_gemm.h"
#include "codegen/jit_symbols.h"
#include "codegen/target.h"
#include "gtest/gtest.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/TargetSelect.h"
#include "runtime/cpu/xlac_runtime.h"

namespace xlac::codegen::internal {
namespace {

// Lines prefetched so far by the micro-kernels (of B into L2, of C into L1) and by the packers, in order.
std::vector<uintptr_t>* kernel_lines = nullptr;
std::vector<uintptr_t>* c_lines = nullptr;
std::vector<uintptr_t>* packer_lines = nullptr;
extern "C" void XlacTestRecordKernelPrefetch(const void* p) {
  kernel_lines->push_back(reinterpret_cast<uintptr_t>(p) / 64);
}
extern "C" void XlacTestRecordCPrefetch(const void* p) { c_lines->push_back(reinterpret_cast<uintptr_t>(p) / 64); }
extern "C" void XlacTestRecordPackerPrefetch(const void* p) {
  packer_lines->push_back(reinterpret_cast<uintptr_t>(p) / 64);
}

struct Gemm {
  int64_t m, n, k;
  bool b_transposed = false;
  bool bf16 = false;
};

struct Recorded {
  std::vector<uintptr_t> lines;         // every prefetch of B by the micro-kernels, as a 64-byte line number
  std::vector<uintptr_t> c_lines;       // of C by the micro-kernels
  std::vector<uintptr_t> packer_lines;  // and of the packers
  GemmTiling tiling;
  bool pairs = false;  // bf16 pairs (packed by the packers)
  uintptr_t c = 0;     // where C was (m x n f32, row-major)
};

// Runs the shared GEMM function of `g` (f32 result, default numerics, A all ones) on `b` (all ones) and records the
// lines its kernels prefetch.
Recorded RecordPrefetches(const Gemm& g, const void* b_data) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  absl::StatusOr<TargetInfo> target = ResolveTarget({});
  EXPECT_TRUE(target.ok()) << target.status();
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = std::make_unique<llvm::Module>("prefetch", *context);
  GemmSpec spec;
  spec.element = llvm::Type::getFloatTy(*context);
  spec.m = g.m;
  spec.n = g.n;
  spec.k = g.k;
  spec.a_m = g.k;
  spec.a_k = 1;
  spec.b_k = g.b_transposed ? 1 : g.n;
  spec.b_n = g.b_transposed ? g.k : 1;
  spec.c_m = g.n;
  spec.fma = true;
  spec.load = g.bf16 ? GemmOperandLoad::kWidenBf16 : GemmOperandLoad::kNative;
  spec.bf16_pairs = g.bf16 && target->has_avx512_bf16;
  Recorded out;
  out.tiling = ChooseGemmTiling(spec, *target);
  out.pairs = spec.bf16_pairs;
  llvm::Function* gemm = EmitGemmFunction(*module, "gemm", spec, *target);
  // void entry(ptr a, ptr b, ptr c): the whole of C on this thread.
  llvm::IRBuilder<> b(*context);
  auto* entry_type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy(), b.getPtrTy()}, false);
  llvm::Function* entry = llvm::Function::Create(entry_type, llvm::GlobalValue::ExternalLinkage, "entry", *module);
  b.SetInsertPoint(llvm::BasicBlock::Create(*context, "entry", entry));
  std::vector<llvm::Value*> args = {entry->getArg(0), entry->getArg(1), entry->getArg(2), b.getInt64(0),
                                    b.getInt64(0),    b.getInt64(g.m),  b.getInt64(0),    b.getInt64(g.n)};
  for (llvm::Value* v : GemmShapeArguments(b, spec, *gemm, *target)) args.push_back(v);
  b.CreateCall(gemm, args);
  b.CreateRetVoid();
  // Every prefetch becomes a call of the recorder of its function's kind.
  auto recorder = [&](const char* name) {
    return module->getOrInsertFunction(name, llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy()}, false));
  };
  llvm::FunctionCallee record_kernel = recorder("XlacTestRecordKernelPrefetch");
  llvm::FunctionCallee record_packer = recorder("XlacTestRecordPackerPrefetch");
  llvm::FunctionCallee record_c = recorder("XlacTestRecordCPrefetch");
  std::vector<std::pair<llvm::IntrinsicInst*, bool>> prefetches;  // (the prefetch, in a micro-kernel)
  for (llvm::Function& fn : *module) {
    const bool in_kernel = fn.getName().starts_with("xlac.gemm.kernel");
    for (llvm::BasicBlock& block : fn) {
      for (llvm::Instruction& inst : block) {
        if (auto* intrinsic = llvm::dyn_cast<llvm::IntrinsicInst>(&inst);
            intrinsic != nullptr && intrinsic->getIntrinsicID() == llvm::Intrinsic::prefetch) {
          EXPECT_TRUE(in_kernel || fn.getName().starts_with("xlac.gemm.pack")) << fn.getName().str();
          prefetches.push_back({intrinsic, in_kernel});
        }
      }
    }
  }
  EXPECT_FALSE(prefetches.empty());
  for (auto [p, in_kernel] : prefetches) {
    llvm::IRBuilder<> at(p);
    // Locality 3 (into L1): a kernel's prefetch of C; B's go into L2.
    const bool of_c = in_kernel && llvm::cast<llvm::ConstantInt>(p->getArgOperand(2))->getZExtValue() == 3;
    at.CreateCall(of_c ? record_c : in_kernel ? record_kernel : record_packer, {p->getArgOperand(0)});
    p->eraseFromParent();
  }
  EXPECT_FALSE(llvm::verifyModule(*module, &llvm::errs()));

  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    ADD_FAILURE() << llvm::toString(jit.takeError());
    return out;
  }
  llvm::orc::SymbolMap symbols = JitRuntimeSymbols(**jit, nullptr);
  symbols[(*jit)->mangleAndIntern("XlacTestRecordKernelPrefetch")] = {
      llvm::orc::ExecutorAddr::fromPtr(&XlacTestRecordKernelPrefetch), llvm::JITSymbolFlags::Exported};
  symbols[(*jit)->mangleAndIntern("XlacTestRecordPackerPrefetch")] = {
      llvm::orc::ExecutorAddr::fromPtr(&XlacTestRecordPackerPrefetch), llvm::JITSymbolFlags::Exported};
  symbols[(*jit)->mangleAndIntern("XlacTestRecordCPrefetch")] = {
      llvm::orc::ExecutorAddr::fromPtr(&XlacTestRecordCPrefetch), llvm::JITSymbolFlags::Exported};
  if (llvm::Error e = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(std::move(symbols)))) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    return out;
  }
  if (llvm::Error e = (*jit)->addIRModule(llvm::orc::ThreadSafeModule(std::move(module), std::move(context)))) {
    ADD_FAILURE() << llvm::toString(std::move(e));
    return out;
  }
  llvm::Expected<llvm::orc::ExecutorAddr> address = (*jit)->lookup("entry");
  if (!address) {
    ADD_FAILURE() << llvm::toString(address.takeError());
    return out;
  }
  // A: ones, as f32 or as bf16 (the load reads both operands).
  std::vector<float> a(static_cast<size_t>(g.m * g.k), 1.0f), c(static_cast<size_t>(g.m * g.n));
  std::vector<uint16_t> a_bf16(static_cast<size_t>(g.m * g.k), 0x3f80);
  kernel_lines = &out.lines;
  c_lines = &out.c_lines;
  packer_lines = &out.packer_lines;
  out.c = reinterpret_cast<uintptr_t>(c.data());
  address->toPtr<void (*)(const void*, const void*, void*)>()(
      g.bf16 ? static_cast<const void*>(a_bf16.data()) : static_cast<const void*>(a.data()), b_data, c.data());
  kernel_lines = c_lines = packer_lines = nullptr;
  for (float v : c) {
    if (v != static_cast<float>(g.k)) {
      ADD_FAILURE() << "C holds " << v << ", not " << g.k;
      break;
    }
  }
  return out;
}

struct FreeDeleter {
  void operator()(void* p) const { std::free(p); }
};

// Every line of every B block after the first (in the blocked loops' order: column blocks, then k blocks) is
// prefetched, and every prefetch outside B (or just past its end) is on the thread's scratch (the packed panels).
void ExpectNextBlocksPrefetched(const Gemm& g) {
  const int64_t element = g.bf16 ? 2 : 4;
  const int64_t bytes = g.k * g.n * element;
  std::unique_ptr<uint8_t, FreeDeleter> storage(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  for (int64_t i = 0; i < g.k * g.n; ++i) {
    uint8_t* at = storage.get() + i * element;
    if (g.bf16) {
      at[0] = 0x80, at[1] = 0x3f;  // bf16 1.0
    } else {
      const float one = 1.0f;
      std::memcpy(at, &one, 4);
    }
  }
  Recorded r = RecordPrefetches(g, storage.get());
  const std::set<uintptr_t> lines(r.lines.begin(), r.lines.end());
  const uintptr_t base = reinterpret_cast<uintptr_t>(storage.get());
  auto byte_of = [&](int64_t kk, int64_t j) {
    return base + static_cast<uintptr_t>((g.b_transposed ? j * g.k + kk : kk * g.n + j) * element);
  };
  // What nothing before it prefetches: the first block (packed B), or the first panel (B read in place by the calls
  // of a dot with few rows, each prefetching the panel the next call reads).
  const bool in_place = !g.b_transposed && !g.bf16 && g.m <= 2 * r.tiling.mr;
  const int64_t first_cols = in_place ? r.tiling.nr : r.tiling.nc;
  int64_t expected = 0, missing = 0;
  for (int64_t kk = 0; kk < g.k; ++kk) {
    for (int64_t j = 0; j < g.n; ++j) {
      if (kk < r.tiling.kc && j < first_cols) continue;
      // One probe per element is plenty: lines repeat.
      ++expected;
      if (lines.count(byte_of(kk, j) / 64) == 0) ++missing;
    }
  }
  EXPECT_GT(expected, 0);
  // Ahead, not just in time: the first call prefetches what a later call reads, not its own operands.
  ASSERT_FALSE(r.lines.empty());
  const uintptr_t first_at = r.lines.front() * 64;
  if (first_at >= base && first_at < base + static_cast<uintptr_t>(bytes)) {
    const int64_t e = static_cast<int64_t>(first_at - base) / element;
    const int64_t kk = g.b_transposed ? e % g.k : e / g.n, j = g.b_transposed ? e / g.k : e % g.n;
    EXPECT_FALSE(kk < r.tiling.kc && j < first_cols) << "the first prefetch is of B[" << kk << ", " << j << "]";
  }
  EXPECT_EQ(missing, 0) << "of " << expected << " elements after the first block or panel";
  const uintptr_t scratch = reinterpret_cast<uintptr_t>(xlac_rt_thread_scratch(1));
  int64_t stray = 0;
  for (uintptr_t line : lines) {
    const uintptr_t at = line * 64;
    // A chunk may run past the end of a row shorter than itself: into the next row, or past B's last byte by less
    // than a chunk (16 lines), which a prefetch may touch (it never faults); the kernel packing a row-major B's panel
    // prefetches kGemmCopyPrefetchRows rows ahead, past B's last row in its last k block.
    const int64_t tail = std::max<int64_t>(16 * 64, g.b_transposed ? 0 : kGemmCopyPrefetchRows * g.n * element);
    const bool in_b = at + 64 > base && at < base + static_cast<uintptr_t>(bytes + tail);
    const bool in_scratch = at >= scratch && at < scratch + (uintptr_t{64} << 20);
    if (!in_b && !in_scratch) ++stray;
  }
  EXPECT_EQ(stray, 0) << "prefetched lines outside B and the packed panels";
  // B's packers read row-major B a row at a time and prefetch the row kGemmPackPrefetchRows ahead: every row but
  // the first ones of the matrix, and never more than those rows past B's end. Full-width panels of B in f32 (or
  // widened) are packed by the first kernel call on them, which the packers leave alone.
  const std::set<uintptr_t> packed(r.packer_lines.begin(), r.packer_lines.end());
  if (!g.b_transposed && !in_place && !r.pairs) {
    EXPECT_TRUE(g.n % r.tiling.nr != 0 || packed.empty()) << "a packer copied a panel the kernels pack";
  }
  if (!g.b_transposed && !in_place && r.pairs) {
    int64_t unprefetched = 0;
    for (int64_t kk = kGemmPackPrefetchRows; kk < g.k; ++kk) {
      for (int64_t j = 0; j < g.n; ++j) unprefetched += packed.count(byte_of(kk, j) / 64) == 0;
    }
    EXPECT_EQ(unprefetched, 0) << "elements of B's rows " << kGemmPackPrefetchRows << " on";
  }
  const uintptr_t packer_limit = base + static_cast<uintptr_t>(bytes + kGemmPackPrefetchRows * g.n * element);
  for (uintptr_t line : packed) {
    const uintptr_t at = line * 64;
    EXPECT_TRUE(at + 64 > base && at < packer_limit) << "a packer prefetched " << at - base << " bytes from B";
    if (at + 64 <= base || at >= packer_limit) break;
  }
  // C: the kernels reading B in place update few row tiles and prefetch none; the packed ones prefetch every line
  // of every row tile after the first (the next call's, down the rows of a B panel), and nothing outside C but the
  // tile below its last one.
  if (in_place) {
    EXPECT_TRUE(r.c_lines.empty());
    return;
  }
  const std::set<uintptr_t> c_lines(r.c_lines.begin(), r.c_lines.end());
  int64_t c_missing = 0;
  for (int64_t i = r.tiling.mr; i < g.m; ++i) {
    for (int64_t j = 0; j < g.n; ++j)
      c_missing += c_lines.count((r.c + static_cast<uintptr_t>(i * g.n + j) * 4) / 64) == 0;
  }
  EXPECT_EQ(c_missing, 0) << "elements of C's rows " << r.tiling.mr << " on";
  const uintptr_t c_end = r.c + static_cast<uintptr_t>((g.m + r.tiling.mr) * g.n * 4);
  for (uintptr_t line : c_lines) {
    EXPECT_TRUE(line * 64 >= r.c && line * 64 < c_end) << "a kernel prefetched " << line * 64 - r.c << " bytes from C";
    if (line * 64 < r.c || line * 64 >= c_end) break;
  }
}

// Enough row tiles that a block's kernel calls outnumber the next block's chunks (8 x 32 f32 tiles, kc 256, nc 512:
// 32 row tiles x 16 panels = 512 calls for 512 KiB; bf16 pairs: 6 x 64 tiles, kc 256, nc 1024) and 64-byte aligned
// rows (a chunk starts at its row's first byte). Not covered, by design: the block after a short one (a last k block
// shorter than kc, or a narrow last column block followed by its next k block) has fewer or shorter kernel calls to
// prefetch it with than it has chunks.
TEST(CodegenGemmPrefetch, RowMajorB) { ExpectNextBlocksPrefetched({256, 1024, 512}); }

// The narrow last column block is prefetched by the block before it.
TEST(CodegenGemmPrefetch, RowMajorBNarrowLastBlock) { ExpectNextBlocksPrefetched({256, 1024 + 96, 256}); }

TEST(CodegenGemmPrefetch, TransposedB) { ExpectNextBlocksPrefetched({256, 1024 + 96, 512, /*b_transposed=*/true}); }

// One register tile of rows: the kernel reads B in place, and prefetches the panel of the call after it, down k and
// across column blocks.
TEST(CodegenGemmPrefetch, BReadInPlace) { ExpectNextBlocksPrefetched({8, 1024 + 32, 512}); }

TEST(CodegenGemmPrefetch, Bf16B) { ExpectNextBlocksPrefetched({384, 2048, 512, false, /*bf16=*/true}); }

}  // namespace
}  // namespace xlac::codegen::internal
