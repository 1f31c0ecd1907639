// C++ custom-call kernels compiled in process with Clang (include/xlac/custom_call.h, docs/custom_calls.md).
//
// CompileKernelSources parses each file with Clang's C++ frontend for the program's target (triple, CPU, features),
// finds the kernels by their XLAC_* annotations in the AST, reads their signatures, and generates LLVM IR that the
// program's codegen links into its own module before optimizing (codegen/pipeline.h), so a kernel is inlined and
// vectorized like the ops around it. No subprocess runs: Clang is a library here. Clang's diagnostics come back as
// the status's message, `file:line:col: error: ...` with the source line and a caret, as clang prints them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/target.h"
#include "passes/custom_kernels.h"

namespace xlac::codegen {

struct KernelLibrary {
  std::vector<KernelSignature> kernels;  // sorted by target
  // LLVM bitcode of every source's module linked into one, for the target it was compiled for. Kernel functions
  // carry the symbols their signatures name; everything else keeps the linkage Clang gave it.
  std::string bitcode;
  // Covers what decides the bitcode: the sources and every file they included (contents), the Clang version and
  // the target. Compilation caches add it to their key.
  std::string fingerprint;
  // Every file the compilation read (the sources and all they included), by name, with the xxh3 hash of its contents
  // in hex: what a cached library is valid for (codegen/clang/kernel_cache.h).
  std::vector<std::pair<std::string, std::string>> inputs;
  bool empty() const { return kernels.empty() && bitcode.empty(); }
};

struct KernelCompileOptions {
  std::vector<std::string> include_dirs;  // -I for the kernels, after xlac's built-in <xlac/custom_call.h>
  std::vector<std::string> defines;       // -D NAME or NAME=VALUE
};

// Compiles `paths` (C++ files) for `target`. Errors: a file that cannot be read, Clang's errors (InvalidArgument,
// rendered diagnostics), a marked function whose signature xlac cannot call, two kernels for one target.
// The hash CompileKernelSources records for a file's contents (KernelLibrary::inputs).
std::string KernelInputHash(std::string_view contents);

absl::StatusOr<KernelLibrary> CompileKernelSources(const std::vector<std::string>& paths, const TargetInfo& target,
                                                   const KernelCompileOptions& options = {});

}  // namespace xlac::codegen
