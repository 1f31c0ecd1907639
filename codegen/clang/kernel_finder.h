// Reads the kernels of one translation unit from Clang's AST (include/xlac/custom_call.h): functions annotated by
// XLAC_ELEMENTWISE, and the entry points XLAC_BUFFER_KERNEL defines, followed to the user's function whose parameters
// (xlac::Buffer template arguments, the attribute struct's fields and layout) make the signature. A signature xlac
// cannot call is a Clang error at the declaration, so it reads like any other compile error.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "passes/custom_kernels.h"

namespace clang {
class ASTConsumer;
class CompilerInstance;
}  // namespace clang

namespace xlac::codegen {

struct FoundKernel {
  KernelSignature signature;  // without `symbol`, which the library assigns
  std::string mangled;        // the symbol of the function xlac calls, in its own translation unit
};

// A consumer that appends the kernels of the translation unit it sees to `found`.
std::unique_ptr<clang::ASTConsumer> MakeKernelFinder(clang::CompilerInstance& ci, std::vector<FoundKernel>& found);

}  // namespace xlac::codegen
