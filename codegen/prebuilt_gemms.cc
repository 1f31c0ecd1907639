#include "codegen/prebuilt_gemms.h"

#include <memory>
#include <vector>

#include "codegen/ir_emitter_gemm.h"
#include "codegen/optimize.h"
#include "fmt/format.h"
#include "ir/status_macros.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace xlac::codegen {
namespace {

int64_t FlagsOf(const TargetInfo& target) {
  return (target.has_avx512 ? kPrebuiltAvx512 : 0) | (target.has_avx512_bf16 ? kPrebuiltAvx512Bf16 : 0) |
         (target.has_fma ? kPrebuiltFma : 0);
}

// One vector ISA the build compiles the functions for: the TargetInfo they are emitted with and what a host needs.
struct Variant {
  TargetInfo target;
  std::string required_features;
  std::string tune_cpu;
};

// x86-64-v3 is AVX2 + FMA (Zen 2/3, Haswell on); x86-64-v4 adds AVX-512 F/BW/CD/DQ/VL (Zen 4/5, Skylake-SP on). The
// BF16 set is a separate one because the emitter's tiles for bf16 dots differ with AVX512_BF16. Tuned for the Zen
// cores of the ISA, as the JIT tunes for the host: generic tuning has no loop buffer size, so LLVM does not unroll
// the micro-kernels' k loops, and the 8 x 4096 x 4096 GEMM (B read in place) ran 20-30 % slower.
std::vector<Variant> Variants(const std::string& triple) {
  std::vector<Variant> variants;
  if (llvm::Triple(triple).getArch() != llvm::Triple::x86_64) return variants;
  const std::string v3 = "+avx,+avx2,+fma,+f16c,+bmi,+bmi2";
  const std::string v4 = v3 + ",+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl";
  TargetInfo base;
  base.triple = triple;
  base.has_fma = true;
  TargetInfo avx2 = base;
  avx2.cpu = "x86-64-v3";
  variants.push_back({avx2, v3, "znver3"});
  TargetInfo avx512 = base;
  avx512.cpu = "x86-64-v4";
  avx512.has_avx512 = true;
  variants.push_back({avx512, v4, "znver4"});
  TargetInfo bf16 = avx512;
  bf16.features = "+avx512bf16";
  bf16.has_avx512_bf16 = true;
  variants.push_back({bf16, v4 + ",+avx512bf16", "znver4"});
  return variants;
}

// Emits every shared GEMM function of `target` into `module` (their names as a program's module would have them):
// each element type, numerics, load and stride pattern, with the micro-kernels, packers and loop nests they call,
// the kernels reading B in place, and the bf16 pair kernel of convolutions.
void EmitSharedGemms(llvm::Module& module, const TargetInfo& target) {
  using internal::GemmOperandLoad;
  llvm::LLVMContext& ctx = module.getContext();
  // GemmShapeArguments adds the kernel reading B in place to the module its builder is in.
  llvm::Function* host = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false),
                                                llvm::GlobalValue::InternalLinkage, "xlac.prebuilt.host", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", host));
  struct Mode {
    bool fma, b_times_a, bf16_pairs;
  };
  for (llvm::Type* element : {llvm::Type::getFloatTy(ctx), llvm::Type::getDoubleTy(ctx)}) {
    std::vector<GemmOperandLoad> loads = {GemmOperandLoad::kNative};
    if (element->isFloatTy()) {
      loads.insert(loads.end(), {GemmOperandLoad::kWidenBf16, GemmOperandLoad::kWidenF16, GemmOperandLoad::kRoundBf16});
    }
    for (GemmOperandLoad load : loads) {
      std::vector<Mode> modes = {{false, false, false}, {false, true, false}, {true, false, false}};
      const bool bf16_load = load == GemmOperandLoad::kWidenBf16 || load == GemmOperandLoad::kRoundBf16;
      if (target.has_avx512_bf16 && element->isFloatTy() && bf16_load) modes.push_back({true, false, true});
      for (const Mode& mode : modes) {
        // Each of A's and B's two strides is a constant 1 in the body or an argument: 16 stride patterns.
        for (int pattern = 0; pattern < 16; ++pattern) {
          internal::GemmSpec spec;
          spec.element = element;
          spec.m = 1;
          spec.n = 64;
          spec.k = 64;
          spec.a_m = (pattern & 1) ? 1 : 64;
          spec.a_k = (pattern & 2) ? 1 : 64;
          spec.b_k = (pattern & 4) ? 1 : 64;
          spec.b_n = (pattern & 8) ? 1 : 64;
          spec.c_m = 64;
          spec.fma = mode.fma;
          spec.b_times_a = mode.b_times_a;
          spec.bf16_pairs = mode.bf16_pairs;
          spec.load = load;
          llvm::Function* gemm = internal::EmitGemmFunction(module, "", spec, target);
          internal::GemmShapeArguments(b, spec, *gemm, target);
        }
      }
    }
  }
  if (target.has_avx512_bf16) internal::GetBf16PairKernel(module, internal::ChooseGemmTiling(32, target), target);
  b.CreateRetVoid();
  host->eraseFromParent();
}

llvm::Constant* CString(llvm::Module& module, const std::string& text, const std::string& name) {
  llvm::Constant* init = llvm::ConstantDataArray::getString(module.getContext(), text);
  auto* global = new llvm::GlobalVariable(module, init->getType(), /*isConstant=*/true,
                                          llvm::GlobalValue::PrivateLinkage, init, name);
  global->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  global->setAlignment(llvm::Align(1));
  return global;
}

}  // namespace

const XlacPrebuiltGemmSet* FindPrebuiltGemms(const TargetInfo& target, const llvm::TargetMachine& machine) {
  int64_t count = 0;
  const XlacPrebuiltGemmSet* sets = xlac_prebuilt_gemm_sets(&count);
  const llvm::MCSubtargetInfo* subtarget = machine.getMCSubtargetInfo();
  for (int64_t i = 0; i < count; ++i) {
    if (sets[i].flags == FlagsOf(target) && subtarget != nullptr &&
        subtarget->checkFeatures(sets[i].required_features)) {
      return &sets[i];
    }
  }
  return nullptr;
}

int UsePrebuiltGemms(llvm::Module& module, const XlacPrebuiltGemmSet& set) {
  llvm::StringMap<bool> names;
  for (int64_t i = 0; i < set.count; ++i) names[set.functions[i].name] = true;
  int replaced = 0;
  for (llvm::Function& fn : module.functions()) {
    if (fn.isDeclaration() || !names.contains(fn.getName())) continue;
    fn.deleteBody();
    fn.setLinkage(llvm::GlobalValue::ExternalLinkage);
    fn.setVisibility(llvm::GlobalValue::DefaultVisibility);
    ++replaced;
  }
  return replaced;
}

absl::StatusOr<std::string> BuildPrebuiltGemmObject() {
  const std::string triple = llvm::sys::getProcessTriple();
  llvm::LLVMContext ctx;
  llvm::Module module("xlac.prebuilt_gemms", ctx);
  module.setTargetTriple(triple);
  std::vector<Variant> variants = Variants(triple);
  // The emitter names a function once per module: each variant's functions are renamed (".v<i>") before the next
  // variant is emitted, and the table keeps the names a program's module uses.
  std::vector<std::vector<std::pair<std::string, llvm::Function*>>> emitted(variants.size());
  for (size_t v = 0; v < variants.size(); ++v) {
    EmitSharedGemms(module, variants[v].target);
    for (llvm::Function& fn : module.functions()) {
      if (fn.isDeclaration() || fn.getName().starts_with("xlac.prebuilt.")) continue;
      if (fn.getName().contains(".prebuilt.v")) continue;  // an earlier variant's
      emitted[v].emplace_back(fn.getName().str(), &fn);
      fn.addFnAttr("tune-cpu", variants[v].tune_cpu);
    }
    for (auto& [name, fn] : emitted[v]) fn->setName(fmt::format("{}.prebuilt.v{}", name, v));
  }
  TargetInfo baseline;
  baseline.triple = triple;
  baseline.cpu = variants.empty() ? "generic" : variants.front().target.cpu;
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> machine, CreateTargetMachine(baseline, 2));
  module.setDataLayout(machine->createDataLayout());
  // The table: the functions' addresses are what keeps them (internal) alive through optimization.
  llvm::Type* ptr = llvm::PointerType::get(ctx, 0);
  llvm::Type* i64 = llvm::Type::getInt64Ty(ctx);
  auto* function_type = llvm::StructType::get(ctx, {ptr, ptr});
  auto* set_type = llvm::StructType::get(ctx, {ptr, ptr, i64, i64, ptr});
  std::vector<llvm::Constant*> sets;
  for (size_t v = 0; v < variants.size(); ++v) {
    std::vector<llvm::Constant*> entries;
    for (size_t i = 0; i < emitted[v].size(); ++i) {
      entries.push_back(llvm::ConstantStruct::get(
          function_type,
          {CString(module, emitted[v][i].first, fmt::format("xlac.prebuilt.name.{}.{}", v, i)), emitted[v][i].second}));
    }
    auto* array_type = llvm::ArrayType::get(function_type, entries.size());
    auto* functions =
        new llvm::GlobalVariable(module, array_type, true, llvm::GlobalValue::PrivateLinkage,
                                 llvm::ConstantArray::get(array_type, entries), fmt::format("xlac.prebuilt.v{}", v));
    const Variant& variant = variants[v];
    sets.push_back(llvm::ConstantStruct::get(
        set_type, {CString(module, variant.target.cpu, fmt::format("xlac.prebuilt.cpu.{}", v)),
                   CString(module, variant.required_features, fmt::format("xlac.prebuilt.requires.{}", v)),
                   llvm::ConstantInt::get(i64, FlagsOf(variant.target)),
                   llvm::ConstantInt::get(i64, static_cast<int64_t>(entries.size())), functions}));
  }
  auto* sets_type = llvm::ArrayType::get(set_type, sets.size());
  auto* table = new llvm::GlobalVariable(module, sets_type, true, llvm::GlobalValue::PrivateLinkage,
                                         llvm::ConstantArray::get(sets_type, sets), "xlac.prebuilt.sets");
  // const XlacPrebuiltGemmSet* xlac_prebuilt_gemm_sets(int64_t* count)
  llvm::Function* getter =
      llvm::Function::Create(llvm::FunctionType::get(ptr, {ptr}, false), llvm::GlobalValue::ExternalLinkage,
                             "xlac_prebuilt_gemm_sets", module);
  getter->setVisibility(llvm::GlobalValue::HiddenVisibility);
  getter->addFnAttr(llvm::Attribute::NoUnwind);
  SetFunctionTargetAttributes(*getter, baseline);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", getter));
  b.CreateStore(b.getInt64(static_cast<int64_t>(sets.size())), getter->getArg(0));
  b.CreateRet(table);

  // Optimized and compiled as the JIT does a program's module: each function's subtarget comes from its attributes.
  OptimizeModule(module, *machine, 2, /*merge=*/false);

  std::string errors;
  llvm::raw_string_ostream error_stream(errors);
  if (llvm::verifyModule(module, &error_stream)) {
    return absl::InternalError("the prebuilt GEMM module does not verify: " + errors);
  }
  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if (machine->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile)) {
    return absl::InternalError("the target cannot emit object files");
  }
  codegen.run(module);
  return std::string(object.begin(), object.end());
}

}  // namespace xlac::codegen
