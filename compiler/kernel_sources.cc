#include "compiler/kernel_sources.h"

#include "codegen/target.h"
#include "fmt/format.h"
#include "ir/kernel_calls.h"
#include "passes/custom_kernels.h"

namespace xlac {

std::unique_ptr<CustomCallKernels> CompileCustomCallKernels(const CustomCallKernelOptions& options, std::ostream& err) {
  auto kernels = std::make_unique<CustomCallKernels>();
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

bool BindCustomCallKernels(const CustomCallKernels& kernels, Module& module, const SourceFile& file,
                           std::ostream& err) {
  DiagnosticEngine diags;
  absl::StatusOr<bool> bound = BindCustomKernels(module, kernels.library.kernels, diags, nullptr, &file);
  if (bound.ok()) return true;
  if (!diags.has_errors()) diags.Error(SourceLoc{}, std::string(bound.status().message()));
  err << diags.Render(file);
  return false;
}

bool ReportMissingKernels(const CustomCallKernels& kernels, const Module& module, const SourceFile& file,
                          const std::function<bool(std::string_view target)>& handled, std::ostream& err) {
  // Each target once (elementwise overloads share one; the library lists kernels by target).
  std::string implemented, last;
  for (const KernelSignature& kernel : kernels.library.kernels) {
    if (!implemented.empty() && kernel.target == last) continue;
    implemented += fmt::format("{}\"{}\"", implemented.empty() ? "" : ", ", kernel.target);
    last = kernel.target;
  }
  DiagnosticEngine diags;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall || !KernelSymbol(*inst).empty()) continue;
      const std::string_view target = inst->StringAttr("custom_call_target");
      if (handled(target)) continue;
      diags.Error(inst->loc(),
                  fmt::format("custom call {} targets \"{}\", which no kernel of --custom-call-src "
                              "implements (the kernels implement {})",
                              inst->name(), std::string(target), implemented.empty() ? "no target" : implemented));
    }
  }
  if (!diags.has_errors()) return true;
  err << diags.Render(file);
  return false;
}

}  // namespace xlac
