// C++ custom-call kernels for the front doors (--custom-call-src of xlac, xla-run and Python; docs/custom_calls.md):
// compile the sources with Clang for the program's target, bind the program's custom calls to them, and keep what
// the JIT and the interpreter need.
#pragma once

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "codegen/clang/kernel_cache.h"
#include "codegen/clang/kernel_compiler.h"
#include "codegen/clang/kernel_runner.h"
#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

struct CustomCallKernels {
  codegen::KernelLibrary library;
  std::shared_ptr<const std::string> bitcode;     // codegen::CompileOptions::kernel_bitcode
  std::unique_ptr<codegen::KernelRunner> runner;  // for the interpreter; null unless asked for
  // InterpreterOptions::elementwise_kernels (null without kernels).
  const interp::ElementwiseKernels* elementwise() const { return runner ? &runner->elementwise() : nullptr; }
};

struct CustomCallKernelOptions {
  std::vector<std::string> sources;  // --custom-call-src, in order
  std::string target_cpu = "host";   // the program's CPU: the kernels are compiled for the same one
  bool with_runner = false;          // also JIT the kernels for the interpreter
  // The compilation cache (--cache-dir): a hit runs no Clang (codegen/clang/kernel_cache.h). Empty dir: none.
  codegen::CacheOptions cache;
  std::string* cache_log = nullptr;  // receives the cache's notes when not null
};

// Compiles the sources (and, with_runner, JITs them for the interpreter). On error writes Clang's
// `file:line:col: error: ...` diagnostics to `err` and returns null.
std::unique_ptr<CustomCallKernels> CompileCustomCallKernels(const CustomCallKernelOptions& options, std::ostream& err);

// Binds `module`'s custom calls to the kernels (passes/custom_kernels.h). On a mismatch writes the error at the call
// (against `file`) with a note at the kernel's declaration to `err` and returns false.
bool BindCustomCallKernels(const CustomCallKernels& kernels, Module& module, const SourceFile& file, std::ostream& err);

// After binding: every custom call that no kernel implements and `handled` does not accept either (the tool's
// other handlers: checks, XLA FFI libraries, built-in targets) is an error at the call naming the kernels the files
// do implement, written to `err`; returns false if there was one. Called only with --custom-call-src given, where
// an unimplemented target most likely means a kernel is missing or misnamed.
bool ReportMissingKernels(const CustomCallKernels& kernels, const Module& module, const SourceFile& file,
                          const std::function<bool(std::string_view target)>& handled, std::ostream& err);

}  // namespace xlac
