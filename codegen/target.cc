#include "codegen/target.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "fmt/format.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Function.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace xlac::codegen {
namespace {

void InitializeLlvmTargets() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

}  // namespace

absl::StatusOr<TargetInfo> ResolveTarget(const TargetOptions& options) {
  InitializeLlvmTargets();
  TargetInfo info;
  info.triple = llvm::sys::getProcessTriple();
  if (options.cpu.empty() || options.cpu == "host") {
    info.cpu = llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    // Sorted so the emitted attribute string is deterministic.
    std::vector<std::string> names;
    for (const auto& f : features) names.push_back(std::string(f.first()));
    std::sort(names.begin(), names.end());
    std::string joined;
    for (const std::string& n : names) {
      if (!joined.empty()) joined += ',';
      joined += (features.lookup(n) ? "+" : "-") + n;
    }
    info.features = joined;
    info.has_avx512 = features.lookup("avx512f");
    info.has_avx512_bf16 = features.lookup("avx512bf16");
    info.has_fma = features.lookup("fma");
  } else {
    info.cpu = options.cpu;
    std::string error;
    const llvm::Target* target = llvm::TargetRegistry::lookupTarget(info.triple, error);
    if (target == nullptr) return absl::InvalidArgumentError(error);
    std::unique_ptr<llvm::MCSubtargetInfo> sti(target->createMCSubtargetInfo(info.triple, info.cpu, ""));
    if (sti == nullptr || !sti->isCPUStringValid(info.cpu)) {
      return absl::InvalidArgumentError(fmt::format("unknown target CPU '{}'", info.cpu));
    }
    info.has_avx512 = sti->checkFeatures("+avx512f");
    info.has_avx512_bf16 = sti->checkFeatures("+avx512bf16");
    info.has_fma = sti->checkFeatures("+fma");
  }
  return info;
}

absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine(const TargetInfo& info, int opt_level) {
  InitializeLlvmTargets();
  std::string error;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(info.triple, error);
  if (target == nullptr) return absl::InternalError(fmt::format("no LLVM target for {}: {}", info.triple, error));
  llvm::TargetOptions to;
  to.AllowFPOpFusion = llvm::FPOpFusion::Strict;
  llvm::CodeGenOptLevel level = opt_level <= 0   ? llvm::CodeGenOptLevel::None
                                : opt_level == 1 ? llvm::CodeGenOptLevel::Less
                                : opt_level == 2 ? llvm::CodeGenOptLevel::Default
                                                 : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(info.triple, info.cpu, info.features, to, llvm::Reloc::PIC_, std::nullopt, level));
  if (tm == nullptr) return absl::InternalError("could not create the LLVM target machine");
  return tm;
}

void SetFunctionTargetAttributes(llvm::Function& fn, const TargetInfo& info) {
  fn.addFnAttr("target-cpu", info.cpu);
  if (!info.features.empty()) {
    fn.addFnAttr("target-features", info.features);
  } else if (info.has_fma) {
    fn.addFnAttr("target-features", "+fma");
  }
  if (info.has_avx512) fn.addFnAttr("prefer-vector-width", "512");
}

}  // namespace xlac::codegen
