// Compiled kernel libraries in the persistent compilation cache (codegen/compilation_cache.h, docs/cache.md), so a
// cached compilation of a program with C++ kernels runs no Clang at all.
//
// An entry is found by the kernel sources' paths and contents, the include dirs and defines, the target, the Clang
// version and the xlac build; it lists every other file the compilation read (headers, by name and content hash) and
// is used only when each of them still has that content, as ccache's direct mode does. A header that would now be
// found earlier on the include path, shadowing the one that was read, is not noticed.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/clang/kernel_compiler.h"
#include "codegen/compilation_cache.h"

namespace xlac::codegen {

// CompileKernelSources through the cache: a hit reads the library from `cache.dir`, a miss compiles and stores it.
// Without a cache directory it only compiles. `log` gets the cache's notes ("kernel cache: hit ...").
absl::StatusOr<KernelLibrary> CompileKernelSourcesCached(const std::vector<std::string>& paths,
                                                         const TargetInfo& target, const KernelCompileOptions& options,
                                                         const CacheOptions& cache, std::string& log);

// The library as bytes and back (what an entry holds). Deserialize fails on malformed input (a corrupt entry).
std::string SerializeKernelLibrary(const KernelLibrary& library);
absl::StatusOr<KernelLibrary> DeserializeKernelLibrary(std::string_view bytes);

}  // namespace xlac::codegen
