// InterleaveLongChains (codegen/loop_interleave.h): which innermost loops get an interleave count, and that the
// interleaved loops compute what the interpreter does, remainders included.
#include <map>
#include <memory>
#include <regex>
#include <string>

#include "codegen/loop_interleave.h"
#include "codegen_test_util.h"
#include "gtest/gtest.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"

namespace xlac::codegen::testing {
namespace {

// A loop `for (i = 0; i < n; ++i) out[i] = f(in[i])` where f is `chain` dependent float multiplies (plus one
// multiply per element for `independent` extra terms that do not lengthen the chain), or, with `reduction`, a sum
// carried around the loop.
struct LoopFixture {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module = std::make_unique<llvm::Module>("m", ctx);
  llvm::BasicBlock* body = nullptr;
  llvm::BranchInst* latch = nullptr;

  LoopFixture(int chain, bool reduction = false, bool divide = false) {
    llvm::IRBuilder<> b(ctx);
    llvm::Type* f32 = b.getFloatTy();
    auto* type = llvm::FunctionType::get(b.getVoidTy(), {b.getPtrTy(), b.getPtrTy()}, false);
    auto* fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, "f", *module);
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
    body = llvm::BasicBlock::Create(ctx, "loop", fn);
    auto* exit = llvm::BasicBlock::Create(ctx, "exit", fn);
    b.SetInsertPoint(entry);
    b.CreateBr(body);
    b.SetInsertPoint(body);
    llvm::PHINode* iv = b.CreatePHI(b.getInt64Ty(), 2);
    iv->addIncoming(b.getInt64(0), entry);
    llvm::PHINode* sum = nullptr;
    if (reduction) {
      sum = b.CreatePHI(f32, 2);
      sum->addIncoming(llvm::ConstantFP::get(f32, 0.0), entry);
    }
    llvm::Value* x = b.CreateLoad(f32, b.CreateGEP(f32, fn->getArg(0), iv));
    llvm::Value* v = x;
    for (int i = 0; i < chain; ++i) v = b.CreateFMul(v, llvm::ConstantFP::get(f32, 1.5));
    if (divide) v = b.CreateFDiv(v, x);
    if (sum != nullptr) {
      llvm::Value* next_sum = b.CreateFAdd(sum, v);
      sum->addIncoming(next_sum, body);
    }
    b.CreateStore(v, b.CreateGEP(f32, fn->getArg(1), iv));
    llvm::Value* next = b.CreateNSWAdd(iv, b.getInt64(1));
    iv->addIncoming(next, body);
    latch = b.CreateCondBr(b.CreateICmpSLT(next, b.getInt64(1024)), body, exit);
    b.SetInsertPoint(exit);
    b.CreateRetVoid();
  }

  // The interleave count in the latch's loop metadata, 0 without.
  int MetadataCount() const {
    llvm::MDNode* loop = latch->getMetadata(llvm::LLVMContext::MD_loop);
    if (loop == nullptr) return 0;
    for (const llvm::MDOperand& op : loop->operands()) {
      auto* node = llvm::dyn_cast_or_null<llvm::MDNode>(op.get());
      if (node == nullptr || node == loop || node->getNumOperands() != 2) continue;
      auto* name = llvm::dyn_cast<llvm::MDString>(node->getOperand(0));
      if (name == nullptr || name->getString() != "llvm.loop.interleave.count") continue;
      auto* value = llvm::mdconst::extract<llvm::ConstantInt>(node->getOperand(1));
      return static_cast<int>(value->getZExtValue());
    }
    return 0;
  }
};

TEST(LoopInterleave, LongChainsGetFourShortChainsNone) {
  {
    LoopFixture loop(/*chain=*/20);  // 80 cycles
    EXPECT_EQ(InterleaveLongChains(*loop.body, *loop.latch, 1024), 4);
    EXPECT_EQ(loop.MetadataCount(), 4);
  }
  {
    LoopFixture loop(/*chain=*/11);  // 44 cycles
    EXPECT_EQ(InterleaveLongChains(*loop.body, *loop.latch, 1024), 2);
    EXPECT_EQ(loop.MetadataCount(), 2);
  }
  {
    LoopFixture loop(/*chain=*/4);
    EXPECT_EQ(InterleaveLongChains(*loop.body, *loop.latch, 1024), 1);
    EXPECT_EQ(loop.MetadataCount(), 0);
  }
}

TEST(LoopInterleave, DivisionsCountTheirLatency) {
  // 9 multiplies (36 cycles) alone stay; a division on the chain makes it 48.
  LoopFixture plain(/*chain=*/9);
  EXPECT_EQ(InterleaveLongChains(*plain.body, *plain.latch, 1024), 1);
  LoopFixture divided(/*chain=*/9, /*reduction=*/false, /*divide=*/true);
  EXPECT_EQ(InterleaveLongChains(*divided.body, *divided.latch, 1024), 2);
}

TEST(LoopInterleave, ReductionsAndShortLoopsAreLeftToTheVectorizer) {
  LoopFixture reduction(/*chain=*/20, /*reduction=*/true);
  EXPECT_EQ(InterleaveLongChains(*reduction.body, *reduction.latch, 1024), 1);
  EXPECT_EQ(reduction.MetadataCount(), 0);
  LoopFixture short_loop(/*chain=*/20);
  EXPECT_EQ(InterleaveLongChains(*short_loop.body, *short_loop.latch, 64), 1);
  EXPECT_EQ(short_loop.MetadataCount(), 0);
}

// A rational function per element, ~64 cycles of chain (six multiply-adds, a division, seven more steps): interleaved
// by 4 in both numerics modes (no libm call on the chain), 1000 columns leave a remainder after the vector loop
// (64 elements per iteration with AVX-512, 32 with AVX2). Exact mode bit for bit, the default within its bound.
constexpr char kRationalChain[] = R"(
HloModule m
ENTRY e {
  x = f32[6,1000] parameter(0)
  r = f32[6,1000] parameter(1)
  one = f32[] constant(1)
  ob = f32[6,1000] broadcast(one), dimensions={}
  h = f32[] constant(0.75)
  hb = f32[6,1000] broadcast(h), dimensions={}
  a1 = f32[6,1000] multiply(x, hb)
  a2 = f32[6,1000] add(a1, ob)
  a3 = f32[6,1000] multiply(a2, x)
  a4 = f32[6,1000] add(a3, hb)
  a5 = f32[6,1000] multiply(a4, x)
  a6 = f32[6,1000] add(a5, ob)
  q = f32[6,1000] multiply(x, x)
  q1 = f32[6,1000] add(q, ob)
  d = f32[6,1000] divide(a6, q1)
  b1 = f32[6,1000] multiply(d, d)
  b2 = f32[6,1000] add(b1, d)
  b3 = f32[6,1000] multiply(b2, hb)
  b4 = f32[6,1000] subtract(b3, a6)
  b5 = f32[6,1000] multiply(b4, b4)
  b6 = f32[6,1000] add(b5, b4)
  ROOT out = f32[6,1000] add(b6, r)
}
)";

// The vector divisions of the widest vector type in `ir`: one per interleaved part of the vector loop.
int WidestVectorDivisions(const std::string& ir) {
  std::regex fdiv("fdiv[a-z ]* <([0-9]+) x float>");
  std::map<int, int> by_width;
  for (auto it = std::sregex_iterator(ir.begin(), ir.end(), fdiv); it != std::sregex_iterator(); ++it) {
    ++by_width[std::stoi((*it)[1].str())];
  }
  return by_width.empty() ? 0 : by_width.rbegin()->second;
}

TEST(LoopInterleave, InterleavedLoopsMatchTheInterpreter) {
  ExpectMatchesInterpreter(kRationalChain);
  std::unique_ptr<Module> module = ParseAndVerify(kRationalChain);
  ASSERT_NE(module, nullptr);
  for (bool exact : {false, true}) {
    // Four parts of the division per vector iteration (the vectorizer alone makes one and the unroller two).
    EXPECT_GE(WidestVectorDivisions(CompiledLlvmIr(*module, exact)), 4) << (exact ? "exact mode" : "default mode");
  }
}

// Layer norm's last loop with GELU (erf) and a residual, the loop the interleaving is for (about 90 cycles per
// element in the default mode, where erf is inlined).
TEST(LoopInterleave, LayerNormGeluMatchesTheInterpreter) {
  const std::string text = R"(
HloModule m
ENTRY e {
  x = f32[6,1000] parameter(0)
  mean = f32[6] parameter(1)
  scale = f32[6] parameter(2)
  gamma = f32[1000] parameter(3)
  r = f32[6,1000] parameter(4)
  mb = f32[6,1000] broadcast(mean), dimensions={0}
  sb = f32[6,1000] broadcast(scale), dimensions={0}
  gb = f32[6,1000] broadcast(gamma), dimensions={1}
  centered = f32[6,1000] subtract(x, mb)
  normed = f32[6,1000] multiply(centered, sb)
  y = f32[6,1000] multiply(normed, gb)
  c = f32[] constant(0.70710678)
  cb = f32[6,1000] broadcast(c), dimensions={}
  h = f32[] constant(0.5)
  hb = f32[6,1000] broadcast(h), dimensions={}
  one = f32[] constant(1)
  ob = f32[6,1000] broadcast(one), dimensions={}
  scaled = f32[6,1000] multiply(y, cb)
  e = f32[6,1000] erf(scaled)
  e1 = f32[6,1000] add(e, ob)
  half = f32[6,1000] multiply(y, hb)
  g = f32[6,1000] multiply(half, e1)
  ROOT out = f32[6,1000] add(g, r)
}
)";
  ExpectMatchesInterpreter(text);
}

}  // namespace
}  // namespace xlac::codegen::testing
