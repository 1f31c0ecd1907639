// Interleaving innermost loops whose element computation is one long dependence chain.
//
// An elementwise loop that evaluates, say, layer norm + GELU(erf) + a residual per element is a chain of ~35
// vector operations with ~80 cycles of latency per vector. LLVM's loop vectorizer does not interleave a body that
// large (its cost exceeds the small-loop threshold), and the unroller then lays the copies out one after the other,
// so the out-of-order window (~160-200 vector operations on Zen 4/5) holds only four or five chains: the loop runs
// at latency / chains per window instead of at the FMA pipes' throughput (measured on Zen 5: a 20-FMA chain per
// vector takes 13 cycles per vector instead of 10, a 40-FMA chain 39 instead of 20; interleaving 8 vectors brings
// both to the throughput bound). With an interleave count, the vectorizer emits the parts of every operation next
// to each other, so each level of the chain has independent work for every pipe.
//
// Results are unchanged: interleaving only reorders independent elements' operations.
#pragma once

#include "llvm/IR/BasicBlock.h"
#include "llvm/IR/Instructions.h"

namespace xlac::codegen {

// Preconditions: `body` is the whole body of an innermost loop (a single block, the latch branch `latch` at its
// end) and `trip_count` is the loop's number of iterations. Sets llvm.loop.interleave.count on `latch` (4 or 2) when
// the latency of the body's longest floating-point dependence chain is long enough for the out-of-order window to be
// the limit; leaves the loop alone otherwise: short chains, loops that already have loop metadata, reductions
// (which the vectorizer interleaves itself) and loops of fewer than 128 iterations. Returns the count set, 1 when
// none.
int InterleaveLongChains(llvm::BasicBlock& body, llvm::BranchInst& latch, int64_t trip_count);

}  // namespace xlac::codegen
