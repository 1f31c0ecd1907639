#include "tools/lib/kernel_sources.h"

#include "codegen/target.h"
#include "passes/custom_kernels.h"

namespace xlac {

std::unique_ptr<ToolKernels> CompileToolKernels(const ToolKernelOptions& options, std::ostream& err) {
  auto kernels = std::make_unique<ToolKernels>();
  if (options.sources.empty()) return kernels;
  absl::StatusOr<codegen::TargetInfo> target = codegen::ResolveTarget(codegen::TargetOptions{options.target_cpu});
  if (!target.ok()) {
    err << "error: " << target.status().message() << "\n";
    return nullptr;
  }
  std::string log;
  absl::StatusOr<codegen::KernelLibrary> library =
      codegen::CompileKernelSourcesCached(options.sources, *target, {}, options.cache, log);
  if (options.cache_log != nullptr) *options.cache_log += log;
  if (!library.ok()) {
    // Clang's diagnostics already read `file:line:col: error: ...`.
    std::string message(library.status().message());
    err << message << (message.empty() || message.back() != '\n' ? "\n" : "");
    return nullptr;
  }
  kernels->bitcode = std::make_shared<const std::string>(library->bitcode);
  if (options.with_runner) {
    absl::StatusOr<std::unique_ptr<codegen::KernelRunner>> runner = codegen::KernelRunner::Create(*library, *target);
    if (!runner.ok()) {
      err << "error: " << runner.status().message() << "\n";
      return nullptr;
    }
    kernels->runner = *std::move(runner);
  }
  kernels->library = *std::move(library);
  return kernels;
}

bool BindToolKernels(const ToolKernels& kernels, Module& module, const SourceFile& file, std::ostream& err) {
  DiagnosticEngine diags;
  absl::StatusOr<bool> bound = BindCustomKernels(module, kernels.library.kernels, diags, nullptr, &file);
  if (bound.ok()) return true;
  if (!diags.has_errors()) diags.Error(SourceLoc{}, std::string(bound.status().message()));
  err << diags.Render(file);
  return false;
}

}  // namespace xlac
