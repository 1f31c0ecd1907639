// Linked only into executables that take LLVM and Clang as static archives (XLAC_STATIC_LLVM_TOOLS).
//
// Debian's LLVM is built with Polly as a static extension: clang's BackendUtil and LLVM's LTO backend register
// every static extension's passes through `get<Ext>PluginInfo()`, but the archives do not include libPolly.a (Polly
// lives in libLLVM.so and LLVMPolly.so). xlac never asks for Polly (it runs only under -polly), so its registration
// hook registers nothing here; a process with the shared libLLVM uses the real one.
#include "llvm/Config/llvm-config.h"
#include "llvm/Passes/PassPlugin.h"

llvm::PassPluginLibraryInfo getPollyPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "Polly", LLVM_VERSION_STRING, [](llvm::PassBuilder&) {}};
}
