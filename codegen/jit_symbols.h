// The symbols a JIT-compiled program calls by name that the JIT binds to addresses of this process: the runtime's C
// entry points (a statically linked runtime's symbols are not in the dynamic symbol table) and the prebuilt shared
// GEMM functions (codegen/prebuilt_gemms.h).
#pragma once

#include "llvm/ExecutionEngine/Orc/Core.h"

struct XlacPrebuiltGemmSet;
namespace llvm::orc {
class LLJIT;
}  // namespace llvm::orc

namespace xlac::codegen {

// Every runtime entry point, and `prebuilt`'s functions when it is not null, mangled for `jit`.
llvm::orc::SymbolMap JitRuntimeSymbols(llvm::orc::LLJIT& jit, const XlacPrebuiltGemmSet* prebuilt);

}  // namespace xlac::codegen
