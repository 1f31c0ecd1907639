// Non-temporal stores for large results nothing reads again (CodegenOptions::streaming_store_bytes).
//
// The emitter gives each streamed result a buffer base of its own, tagged with TagStreamedBase; after LLVM's
// optimization pipeline (which vectorizes the loops and infers store alignment from the bases' !align 64),
// MarkStreamingStores makes every vector store through such a base that is aligned to its own size non-temporal,
// and fences the functions that got one before they return. It runs after optimization because the loop vectorizer
// refuses to widen a non-temporal scalar store (it cannot know the vector store will be aligned), and because a
// non-temporal store x86 cannot do aligned is split into scalar ones that cost more than the bandwidth they save.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "ir/module.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "passes/buffer_assignment.h"

namespace xlac::codegen {

// The entry results written with streaming stores for `triple` (x86-64 only) and a threshold of `min_bytes` (0: none):
// root values of at least that size that one loop writes element by element, once (loop fusions, elementwise ops),
// that nothing but the root reads, in a 64-byte aligned slice of a temp allocation. `allocations[i]`: allocation i
// holds one, so the compiled code assumes its base is 64-byte aligned.
struct StreamedResults {
  absl::flat_hash_set<const Instruction*> values;
  std::vector<bool> allocations;
};
StreamedResults ChooseStreamedResults(const Module& module, const BufferAssignment& assignment,
                                      const std::string& triple, int64_t min_bytes);

// Marks `base` (a load of a buffer base) as a streamed result's base, known to be 64-byte aligned.
void TagStreamedBase(llvm::LoadInst& base);
// Whether `value` is a load tagged by TagStreamedBase.
bool IsStreamedBase(const llvm::Value* value);
// Returns the number of stores made non-temporal. x86 only (the emitter tags nothing elsewhere).
int MarkStreamingStores(llvm::Module& module);

}  // namespace xlac::codegen
