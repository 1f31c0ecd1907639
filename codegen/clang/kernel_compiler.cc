#include "codegen/clang/kernel_compiler.h"

#include <algorithm>
#include <map>
#include <memory>

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/Basic/DiagnosticOptions.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Basic/Version.h"
#include "clang/CodeGen/CodeGenAction.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/CompilerInvocation.h"
#include "clang/Frontend/MultiplexConsumer.h"
#include "clang/Frontend/TextDiagnosticPrinter.h"
#include "clang/Frontend/Utils.h"
#include "fmt/format.h"
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
// with it (the dot).
std::string KernelSymbolFor(const KernelSignature& kernel) { return "xlac.kernel." + kernel.target; }

struct Found {
  KernelSignature signature;
  std::string mangled;  // the function's symbol in its own translation unit
};

std::string StringArg(const clang::Expr* e) {
  while (e != nullptr) {
    if (const auto* c = llvm::dyn_cast<clang::ConstantExpr>(e)) {
      e = c->getSubExpr();
      continue;
    }
    e = e->IgnoreParenImpCasts();
    if (const auto* s = llvm::dyn_cast<clang::StringLiteral>(e)) return s->getString().str();
    break;
  }
  return {};
}

// Reads the marked functions of one translation unit; signature problems are Clang errors at the declaration.
class KernelFinder : public clang::ASTConsumer, public clang::RecursiveASTVisitor<KernelFinder> {
 public:
  KernelFinder(clang::CompilerInstance& ci, std::vector<Found>& found) : ci_(ci), found_(found) {}

  void HandleTranslationUnit(clang::ASTContext& context) override {
    context_ = &context;
    names_ = std::make_unique<clang::ASTNameGenerator>(context);
    TraverseDecl(context.getTranslationUnitDecl());
  }

  bool VisitFunctionDecl(clang::FunctionDecl* fn) {
    if (!fn->isThisDeclarationADefinition()) return true;
    for (const auto* attr : fn->specific_attrs<clang::AnnotateAttr>()) {
      if (attr->getAnnotation() != "xlac.elementwise") continue;
      std::string target = attr->args_size() == 1 ? StringArg(*attr->args_begin()) : "";
      if (target.empty()) {
        Error(attr->getLocation(), "XLAC_ELEMENTWISE needs the custom-call target as a string literal");
        continue;
      }
      ReadElementwise(fn, target);
    }
    return true;
  }

 private:
  void Error(clang::SourceLocation loc, const std::string& message) {
    clang::DiagnosticsEngine& diags = ci_.getDiagnostics();
    diags.Report(loc, diags.getCustomDiagID(clang::DiagnosticsEngine::Error, "%0")) << message;
  }

  // The element type a scalar parameter or result of type `type` carries, or kInvalid.
  PrimitiveType ElementType(clang::QualType type) const {
    type = type.getCanonicalType().getUnqualifiedType();
    const auto* builtin = type->getAs<clang::BuiltinType>();
    if (builtin == nullptr) return PrimitiveType::kInvalid;
    switch (builtin->getKind()) {
      case clang::BuiltinType::Bool:
        return PrimitiveType::kPred;
      case clang::BuiltinType::Float16:
        return PrimitiveType::kF16;
      case clang::BuiltinType::BFloat16:
        return PrimitiveType::kBF16;
      case clang::BuiltinType::Float:
        return PrimitiveType::kF32;
      case clang::BuiltinType::Double:
        return PrimitiveType::kF64;
      default:
        break;
    }
    if (!builtin->isInteger()) return PrimitiveType::kInvalid;
    const uint64_t bits = context_->getTypeSize(type);
    const bool is_signed = builtin->isSignedInteger();
    switch (bits) {
      case 8:
        return is_signed ? PrimitiveType::kS8 : PrimitiveType::kU8;
      case 16:
        return is_signed ? PrimitiveType::kS16 : PrimitiveType::kU16;
      case 32:
        return is_signed ? PrimitiveType::kS32 : PrimitiveType::kU32;
      case 64:
        return is_signed ? PrimitiveType::kS64 : PrimitiveType::kU64;
      default:
        return PrimitiveType::kInvalid;
    }
  }

  static constexpr char kTypes[] =
      "bool, int8_t..int64_t, uint8_t..uint64_t, _Float16, __bf16, float or double";

  void ReadElementwise(clang::FunctionDecl* fn, const std::string& target) {
    if (llvm::isa<clang::CXXMethodDecl>(fn)) {
      Error(fn->getLocation(), fmt::format("the elementwise kernel for \"{}\" must be a free function", target));
      return;
    }
    if (fn->isVariadic() || fn->isTemplated()) {
      Error(fn->getLocation(), fmt::format("the elementwise kernel for \"{}\" must not be variadic or a template",
                                           target));
      return;
    }
    Found found;
    KernelSignature& sig = found.signature;
    sig.target = target;
    sig.kind = KernelKind::kElementwise;
    sig.function = fn->getQualifiedNameAsString();
    bool ok = true;
    for (const clang::ParmVarDecl* param : fn->parameters()) {
      PrimitiveType type = ElementType(param->getType());
      if (type == PrimitiveType::kInvalid) {
        Error(param->getLocation(),
              fmt::format("parameter '{}' of the elementwise kernel for \"{}\" has type '{}'; an elementwise kernel "
                          "takes scalars: {}",
                          param->getNameAsString(), target, param->getType().getAsString(), kTypes));
        ok = false;
      }
      sig.operand_types.push_back(type);
    }
    sig.result_type = ElementType(fn->getReturnType());
    if (sig.result_type == PrimitiveType::kInvalid) {
      Error(fn->getLocation(),
            fmt::format("the elementwise kernel for \"{}\" returns '{}'; it must return a scalar: {}", target,
                        fn->getReturnType().getAsString(), kTypes));
      ok = false;
    }
    if (!ok) return;
    found.mangled = names_->getName(fn);
    sig.loc = Location(fn->getLocation());
    found_.push_back(std::move(found));
  }

  KernelSourceLoc Location(clang::SourceLocation loc) const {
    const clang::SourceManager& sm = context_->getSourceManager();
    KernelSourceLoc out;
    clang::PresumedLoc presumed = sm.getPresumedLoc(sm.getExpansionLoc(loc));
    if (presumed.isInvalid()) return out;
    out.file = presumed.getFilename();
    out.line = static_cast<int32_t>(presumed.getLine());
    out.col = static_cast<int32_t>(presumed.getColumn());
    bool invalid = false;
    llvm::StringRef buffer = sm.getBufferData(sm.getFileID(sm.getExpansionLoc(loc)), &invalid);
    if (!invalid) {
      size_t start = 0;
      for (int32_t line = 1; line < out.line && start != llvm::StringRef::npos; ++line) {
        start = buffer.find('\n', start);
        if (start != llvm::StringRef::npos) ++start;
      }
      if (start != llvm::StringRef::npos) out.line_text = buffer.substr(start).split('\n').first.rtrim('\r').str();
    }
    return out;
  }

  clang::CompilerInstance& ci_;
  std::vector<Found>& found_;
  clang::ASTContext* context_ = nullptr;
  std::unique_ptr<clang::ASTNameGenerator> names_;
};

// Clang's LLVM IR generation with the kernel finder beside it, over the same AST.
class KernelAction : public clang::EmitLLVMOnlyAction {
 public:
  KernelAction(llvm::LLVMContext* context, std::vector<Found>& found)
      : clang::EmitLLVMOnlyAction(context), found_(found) {}

  std::unique_ptr<clang::ASTConsumer> CreateASTConsumer(clang::CompilerInstance& ci, llvm::StringRef file) override {
    std::unique_ptr<clang::ASTConsumer> codegen = clang::EmitLLVMOnlyAction::CreateASTConsumer(ci, file);
    if (codegen == nullptr) return nullptr;
    std::vector<std::unique_ptr<clang::ASTConsumer>> consumers;
    consumers.push_back(std::make_unique<KernelFinder>(ci, found_));
    consumers.push_back(std::move(codegen));
    return std::make_unique<clang::MultiplexConsumer>(std::move(consumers));
  }

 private:
  std::vector<Found>& found_;
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
  std::vector<Found> found;
};

absl::StatusOr<CompiledFile> CompileOne(const std::string& path, const TargetInfo& target,
                                        const KernelCompileOptions& options, llvm::LLVMContext& context,
                                        std::string& fingerprint_input) {
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

  std::vector<std::string> args = {XLAC_CLANG_EXECUTABLE, "-x", "c++", "-std=c++20", "-O2", "-fno-exceptions",
                                   "-fno-rtti", "-fno-math-errno", "-ffp-contract=off", "-target", target.triple,
                                   "-resource-dir", XLAC_CLANG_RESOURCE_DIR, "-isystem", kBuiltinIncludeDir};
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
  std::vector<std::pair<std::string, std::string>> read;
  clang::SourceManager& sm = compiler.getSourceManager();
  for (auto it = sm.fileinfo_begin(); it != sm.fileinfo_end(); ++it) {
    std::optional<llvm::MemoryBufferRef> buffer = it->second->getBufferIfLoaded();
    read.emplace_back(it->first.getName().str(), buffer ? buffer->getBuffer().str() : std::string());
  }
  std::sort(read.begin(), read.end());
  for (const auto& [name, text] : read) {
    fingerprint_input += fmt::format("{}\n{}\n{}\n", name, text.size(), llvm::xxh3_64bits(llvm::StringRef(text)));
  }
  return out;
}

}  // namespace

absl::StatusOr<KernelLibrary> CompileKernelSources(const std::vector<std::string>& paths, const TargetInfo& target,
                                                   const KernelCompileOptions& options) {
  KernelLibrary library;
  if (paths.empty()) return library;
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> linked;
  std::string fingerprint_input = fmt::format("{}\n{}\n{}\n{}\n", clang::getClangFullVersion(), target.triple,
                                              target.cpu, target.features);
  for (const std::string& dir : options.include_dirs) fingerprint_input += "-I" + dir + "\n";
  for (const std::string& define : options.defines) fingerprint_input += "-D" + define + "\n";
  std::map<std::string, const KernelSignature*> by_target;
  for (const std::string& path : paths) {
    if (!llvm::sys::fs::exists(path)) return absl::NotFoundError(fmt::format("{}: error: no such file", path));
    absl::StatusOr<CompiledFile> file = CompileOne(path, target, options, context, fingerprint_input);
    if (!file.ok()) return file.status();
    for (Found& found : file->found) {
      KernelSignature& sig = found.signature;
      sig.symbol = KernelSymbolFor(sig);
      llvm::Function* fn = file->module->getFunction(found.mangled);
      if (fn == nullptr || fn->isDeclaration()) {
        return absl::InternalError(fmt::format("{}:{}:{}: Clang emitted no definition of {} ({})", sig.loc.file,
                                               sig.loc.line, sig.loc.col, sig.function, found.mangled));
      }
      for (const KernelSignature& other : library.kernels) {
        if (other.target == sig.target) {
          return absl::InvalidArgumentError(fmt::format(
              "{}:{}:{}: error: a second kernel for custom-call target \"{}\": {}\n{}", sig.loc.file, sig.loc.line,
              sig.loc.col, sig.target, sig.function,
              RenderKernelNote(other.loc, fmt::format("the first, {}, is declared here", other.function))));
        }
      }
      fn->setName(sig.symbol);
      library.kernels.push_back(sig);
    }
    // Everything but the kernels becomes internal, so helpers of different files, and of a file and the program,
    // never clash when linked; the linker renames internal symbols that collide.
    for (llvm::GlobalValue& value : file->module->global_values()) {
      if (value.isDeclaration() || value.getName().starts_with("xlac.kernel.")) continue;
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
      return absl::InvalidArgumentError(fmt::format("{}: error: the kernel files define the same symbol", path));
    }
  }
  std::sort(library.kernels.begin(), library.kernels.end(),
            [](const KernelSignature& a, const KernelSignature& b) { return a.target < b.target; });
  llvm::raw_string_ostream bitcode(library.bitcode);
  llvm::WriteBitcodeToFile(*linked, bitcode);
  bitcode.flush();
  library.fingerprint = fmt::format("{:016x}", llvm::xxh3_64bits(llvm::StringRef(fingerprint_input)));
  return library;
}

}  // namespace xlac::codegen
