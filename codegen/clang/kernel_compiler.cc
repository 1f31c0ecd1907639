#include "codegen/clang/kernel_compiler.h"

#include <algorithm>
#include <map>
#include <memory>

#include "clang/AST/ASTConsumer.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Version.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "codegen/clang/kernel_finder.h"
#include "fmt/format.h"
#include "ir/kernel_calls.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Linker/Linker.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/VirtualFileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

namespace xlac::codegen {

// The text of include/xlac/custom_call.h, built in (codegen/clang/CMakeLists.txt generates its definition).
extern const char* const kCustomCallHeaderText;

namespace {

// Where the built-in header lives in the compiler's virtual file system.
constexpr char kBuiltinIncludeDir[] = "/xlac-builtin/include";

// The LLVM symbol a kernel gets in the linked library: stable across files and runs, and no C++ or C name can clash
// with it (the dot). Buffer kernels' entry points have a prefix of their own: codegen inlines elementwise kernels
// always and leaves buffer kernels to the inliner (pipeline.cc, LinkKernels).
std::string KernelSymbolFor(const KernelSignature& kernel) {
  return std::string(kernel.kind == KernelKind::kBuffer ? kBufferKernelPrefix : kElementwiseKernelPrefix) +
         kernel.target;
}

// Clang's LLVM IR generation with the kernel finder beside it, over the same AST.
class KernelAction : public clang::EmitLLVMOnlyAction {
 public:
  KernelAction(llvm::LLVMContext* context, std::vector<FoundKernel>& found)
      : clang::EmitLLVMOnlyAction(context), found_(found) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci, llvm::StringRef file) override {
    std::unique_ptr<clang::ASTConsumer> codegen = clang::EmitLLVMOnlyAction::CreateASTConsumer(ci, file);
    if (codegen == nullptr) return nullptr;
    std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
    consumers.push_back(MakeKernelFinder(ci, found_));
    consumers.push_back(std::move(codegen));
    return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
  }

 private:
  std::vector<FoundKernel>& found_;
};

std::vector<std::string> SplitFeatures(const std::string& features) {
  std::vector<std::string> out;
  llvm::SmallVector<llvm::StringRef, 64> parts;
  llvm::StringRef(features).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef part : parts) out.push_back(part.str());
  return out;
}

struct CompiledFile {
  std::unique_ptr<llvm::Module> module;
  std::vector<FoundKernel> found;
};

absl::StatusOr<CompiledFile> CompileOne(const std::string& path, const TargetInfo& target,
                                        const KernelCompileOptions& options, llvm::LLVMContext& context,
                                        std::vector<std::pair<std::string, std::string>>& inputs) {
  // Diagnostics render as clang prints them, without colours, into one string.
  std::string diagnostics;
  llvm::raw_string_ostream diag_stream(diagnostics);
  llvm::IntrusiveRefCntPtr<clang::DiagnosticOptions> diag_options = new clang::DiagnosticOptions();
  diag_options->ShowColors = false;
  auto* printer = new clang::TextDiagnosticPrinter(diag_stream, diag_options.get());
  llvm::IntrusiveRefCntPtr<clang::DiagnosticsEngine> diags =
      clang::CompilerInstance::createDiagnostics(diag_options.get(), printer, /*ShouldOwnClient=*/true);

  auto memory = llvm::makeIntrusiveRefCnt<llvm::vfs::InMemoryFileSystem>();
  memory->addFile(std::string(kBuiltinIncludeDir) + "/xlac/custom_call.h", 0,
                  llvm::MemoryBuffer::getMemBuffer(kCustomCallHeaderText));
  auto files = llvm::makeIntrusiveRefCnt<llvm::vfs::OverlayFileSystem>(llvm::vfs::getRealFileSystem());
  files->pushOverlay(memory);

  std::vector<std::string> args = {XLAC_CLANG_EXECUTABLE,
                                   "-x",
                                   "c++",
                                   "-std=c++20",
                                   "-O2",
                                   "-fno-exceptions",
                                   "-fno-rtti",
                                   "-fno-math-errno",
                                   "-ffp-contract=off",
                                   "-target",
                                   target.triple,
                                   "-resource-dir",
                                   XLAC_CLANG_RESOURCE_DIR,
                                   "-isystem",
                                   kBuiltinIncludeDir};
  for (const std::string& dir : options.include_dirs) args.push_back("-I" + dir);
  for (const std::string& define : options.defines) args.push_back("-D" + define);
  args.insert(args.end(), {"-c", path});
  std::vector<const char*> argv;
  for (const std::string& arg : args) argv.push_back(arg.c_str());

  clang::CreateInvocationOptions invocation_options;
  invocation_options.Diags = diags;
  invocation_options.VFS = files;
  std::shared_ptr<clang::CompilerInvocation> invocation = clang::createInvocation(argv, invocation_options);
  if (invocation == nullptr) {
    return absl::InvalidArgumentError(diagnostics.empty() ? "cannot set up Clang for " + path : diagnostics);
  }
  // The program's optimizer runs over the kernels once they are linked in; Clang only generates the IR.
  invocation->getCodeGenOpts().DisableLLVMPasses = true;
  // The driver asks cc1 not to free its AST and module at exit (-disable-free); a library compiles many times.
  invocation->getFrontendOpts().DisableFree = false;
  invocation->getTargetOpts().CPU = target.cpu;
  invocation->getTargetOpts().FeaturesAsWritten = SplitFeatures(target.features);

  clang::CompilerInstance compiler;
  compiler.setInvocation(std::move(invocation));
  // "1 error generated." goes with the diagnostics, as clang prints it.
  compiler.setVerboseOutputStream(diag_stream);
  compiler.setDiagnostics(diags.get());
  compiler.createFileManager(files);
  if (!compiler.hasFileManager()) return absl::InternalError("Clang has no file manager");

  CompiledFile out;
  KernelAction action(&context, out.found);
  const bool ok = compiler.ExecuteAction(action);
  diag_stream.flush();
  if (!ok || diags->hasErrorOccurred()) {
    return absl::InvalidArgumentError(diagnostics.empty() ? "Clang failed on " + path : diagnostics);
  }
  out.module = action.takeModule();
  if (out.module == nullptr) return absl::InternalError("Clang produced no module for " + path);

  // What the module depends on: every file the compilation read, by name and contents.
  clang::SourceManager& sm = compiler.getSourceManager();
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
    std::optional<llvm::MemoryBufferRef> buffer = it->second->getBufferIfLoaded();
    inputs.emplace_back(it->first.getName().str(), KernelInputHash(buffer ? buffer->getBuffer() : ""));
  }
  return out;
}

}  // namespace

std::string KernelInputHash(std::string_view contents) {
  return fmt::format("{:016x}", llvm::xxh3_64bits(llvm::StringRef(contents.data(), contents.size())));
}

absl::StatusOr<KernelLibrary> CompileKernelSources(const std::vector<std::string>& paths, const TargetInfo& target,
                                                   const KernelCompileOptions& options) {
  KernelLibrary library;
  if (paths.empty()) return library;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> linked;
  std::string fingerprint_input =
      fmt::format("{}\n{}\n{}\n{}\n", clang::getClangFullVersion(), target.triple, target.cpu, target.features);
  for (const std::string& dir : options.include_dirs) fingerprint_input += "-I" + dir + "\n";
  for (const std::string& define : options.defines) fingerprint_input += "-D" + define + "\n";
  std::vector<CompiledFile> compiled;
  for (const std::string& path : paths) {
    if (!llvm::sys::fs::exists(path)) return absl::NotFoundError(fmt::format("{}: error: no such file", path));
    absl::StatusOr<CompiledFile> file = CompileOne(path, target, options, context, library.inputs);
    if (!file.ok()) return file.status();
    compiled.push_back(*std::move(file));
  }
  // One kernel per target, or elementwise kernels of one target with different element types (overloads: a call's
  // types pick one, as bf16 and f32 dumps of one exporter need), whose symbols then carry their types.
  std::map<std::string, std::vector<KernelSignature*>> by_target;
  for (CompiledFile& file : compiled) {
    for (FoundKernel& found : file.found) {
      KernelSignature& sig = found.signature;
      std::vector<KernelSignature*>& same_target = by_target[sig.target];
      for (const KernelSignature* other : same_target) {
        if (sig.kind == KernelKind::kBuffer || other->kind == KernelKind::kBuffer ||
            (sig.operand_types == other->operand_types && sig.result_type == other->result_type)) {
          return absl::InvalidArgumentError(fmt::format(
              "{}:{}:{}: error: a second kernel for custom-call target \"{}\": {}\n{}", sig.loc.file, sig.loc.line,
              sig.loc.col, sig.target, sig.function,
              RenderKernelNote(other->loc, fmt::format("the first, {}, is declared here", other->function))));
        }
      }
      same_target.push_back(&sig);
    }
  }
  for (auto& [name, kernels] : by_target) {
    for (KernelSignature* sig : kernels) {
      sig->symbol = KernelSymbolFor(*sig);
      if (kernels.size() == 1) continue;
      sig->symbol += ".";
      for (PrimitiveType t : sig->operand_types) sig->symbol += std::string(PrimitiveTypeName(t)) + "_";
      sig->symbol += "to_" + std::string(PrimitiveTypeName(sig->result_type));
    }
  }
  for (CompiledFile& compiled_file : compiled) {
    CompiledFile* file = &compiled_file;
    for (FoundKernel& found : file->found) {
      KernelSignature& sig = found.signature;
      llvm::Function* fn = file->module->getFunction(found.mangled);
      if (fn == nullptr || fn->isDeclaration()) {
        return absl::InternalError(fmt::format("{}:{}:{}: Clang emitted no definition of {} ({})", sig.loc.file,
                                               sig.loc.line, sig.loc.col, sig.function, found.mangled));
      }
      fn->setName(sig.symbol);
      library.kernels.push_back(sig);
    }
    // Everything but the kernels becomes internal, so helpers of different files, and of a file and the program,
    // never clash when linked; the linker renames internal symbols that collide.
    for (llvm::GlobalValue& value : file->module->global_values()) {
      if (value.isDeclaration() || value.getName().starts_with(kElementwiseKernelPrefix) ||
          value.getName().starts_with(kBufferKernelPrefix)) {
        continue;
      }
      if (value.hasAppendingLinkage()) continue;
      value.setLinkage(llvm::GlobalValue::InternalLinkage);
    }
    // gnu::used put the kernels in llvm.used; the program decides what stays.
    if (llvm::GlobalVariable* used = file->module->getGlobalVariable("llvm.used")) used->eraseFromParent();
    if (llvm::GlobalVariable* used = file->module->getGlobalVariable("llvm.compiler.used")) used->eraseFromParent();
    if (llvm::GlobalVariable* notes = file->module->getGlobalVariable("llvm.global.annotations")) {
      notes->eraseFromParent();
    }
    if (linked == nullptr) {
      linked = std::move(file->module);
    } else if (llvm::Linker::linkModules(*linked, std::move(file->module))) {
      return absl::InvalidArgumentError("error: the kernel files define the same symbol");
    }
  }
  std::sort(library.kernels.begin(), library.kernels.end(), [](const KernelSignature& a, const KernelSignature& b) {
    return a.target != b.target ? a.target < b.target : a.symbol < b.symbol;
  });
  llvm::raw_string_ostream bitcode(library.bitcode);
  llvm::WriteBitcodeToFile(*linked, bitcode);
  bitcode.flush();
  std::sort(library.inputs.begin(), library.inputs.end());
  library.inputs.erase(std::unique(library.inputs.begin(), library.inputs.end()), library.inputs.end());
  // The built-in header is not a file: it is part of the xlac build, which compilation caches key on.
  std::erase_if(library.inputs, [](const auto& input) { return input.first.starts_with(kBuiltinIncludeDir); });
  for (const auto& [name, hash] : library.inputs) fingerprint_input += name + "\n" + hash + "\n";
  fingerprint_input += KernelInputHash(kCustomCallHeaderText);
  library.fingerprint = KernelInputHash(fingerprint_input);
  return library;
}

}  // namespace xlac::codegen
