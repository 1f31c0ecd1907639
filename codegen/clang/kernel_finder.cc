#include "codegen/clang/kernel_finder.h"

#include <algorithm>
#include <optional>

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/Mangle.h"
#include "clang/AST/RecordLayout.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Frontend/CompilerInstance.h"
#include "fmt/format.h"

namespace xlac::codegen {
namespace {

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

constexpr char kTypes[] = "bool, int8_t..int64_t, uint8_t..uint64_t, _Float16, __bf16, float or double";

class KernelFinder : public clang::ASTConsumer, public clang::RecursiveASTVisitor<KernelFinder> {
 public:
  KernelFinder(clang::CompilerInstance& ci, std::vector<FoundKernel>& found) : ci_(ci), found_(found) {}

  void HandleTranslationUnit(clang::ASTContext& context) override {
    context_ = &context;
    names_ = std::make_unique<clang::ASTNameGenerator>(context);
    TraverseDecl(context.getTranslationUnitDecl());
  }

  bool VisitFunctionDecl(clang::FunctionDecl* fn) {
    if (!fn->isThisDeclarationADefinition()) return true;
    for (const auto* attr : fn->specific_attrs<clang::AnnotateAttr>()) {
      const bool elementwise = attr->getAnnotation() == "xlac.elementwise";
      if (!elementwise && attr->getAnnotation() != "xlac.buffer_kernel") continue;
      std::string target = attr->args_size() >= 1 ? StringArg(*attr->args_begin()) : "";
      if (target.empty()) {
        Error(attr->getLocation(), fmt::format("{} needs the custom-call target as a string literal",
                                               elementwise ? "XLAC_ELEMENTWISE" : "XLAC_BUFFER_KERNEL"));
        continue;
      }
      if (elementwise) {
        ReadElementwise(fn, target);
      } else {
        ReadBufferKernel(fn, *attr, target);
      }
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

  void ReadElementwise(clang::FunctionDecl* fn, const std::string& target) {
    if (llvm::isa<clang::CXXMethodDecl>(fn)) {
      Error(fn->getLocation(), fmt::format("the elementwise kernel for \"{}\" must be a free function", target));
      return;
    }
    if (fn->isVariadic() || fn->isTemplated()) {
      Error(fn->getLocation(),
            fmt::format("the elementwise kernel for \"{}\" must not be variadic or a template", target));
      return;
    }
    FoundKernel found;
    KernelSignature& sig = found.signature;
    sig.target = target;
    sig.kind = KernelKind::kElementwise;
    sig.sharding = KernelShardingRule::kElementwise;
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

  // The user's function an XLAC_BUFFER_KERNEL entry point calls: `return InvokeBufferKernel(&function, frame);`.
  static const clang::FunctionDecl* CalledKernel(const clang::FunctionDecl* thunk) {
    const auto* body = llvm::dyn_cast_or_null<clang::CompoundStmt>(thunk->getBody());
    if (body == nullptr) return nullptr;
    for (const clang::Stmt* stmt : body->body()) {
      const auto* ret = llvm::dyn_cast<clang::ReturnStmt>(stmt);
      if (ret == nullptr || ret->getRetValue() == nullptr) continue;
      const auto* call = llvm::dyn_cast<clang::CallExpr>(ret->getRetValue()->IgnoreImplicit());
      if (call == nullptr || call->getNumArgs() < 1) continue;
      const clang::Expr* arg = call->getArg(0)->IgnoreParenImpCasts();
      if (const auto* address = llvm::dyn_cast<clang::UnaryOperator>(arg);
          address != nullptr && address->getOpcode() == clang::UO_AddrOf) {
        arg = address->getSubExpr()->IgnoreParenImpCasts();
      }
      if (const auto* ref = llvm::dyn_cast<clang::DeclRefExpr>(arg)) {
        return llvm::dyn_cast<clang::FunctionDecl>(ref->getDecl());
      }
    }
    return nullptr;
  }

  // xlac::Buffer<T, Rank>'s element type, constness and rank, when `type` is one.
  std::optional<std::pair<KernelBufferParam, bool>> BufferOf(clang::QualType type) const {
    type = type.getNonReferenceType().getCanonicalType();
    const auto* spec = llvm::dyn_cast_or_null<clang::ClassTemplateSpecializationDecl>(type->getAsCXXRecordDecl());
    if (spec == nullptr || spec->getSpecializedTemplate()->getQualifiedNameAsString() != "xlac::Buffer") {
      return std::nullopt;
    }
    const clang::TemplateArgumentList& args = spec->getTemplateArgs();
    if (args.size() != 2 || args[0].getKind() != clang::TemplateArgument::Type ||
        args[1].getKind() != clang::TemplateArgument::Integral) {
      return std::nullopt;
    }
    KernelBufferParam param;
    clang::QualType element = args[0].getAsType();
    param.type = ElementType(element);
    param.rank = args[1].getAsIntegral().getExtValue();
    return std::make_pair(param, element.isConstQualified());
  }

  bool ReadAttrs(const clang::ParmVarDecl* param, const std::string& target, KernelSignature& sig) {
    clang::QualType type = param->getType();
    const clang::RecordDecl* record = type.getNonReferenceType()->getAsRecordDecl();
    const auto* cxx = llvm::dyn_cast_or_null<clang::CXXRecordDecl>(record);
    if (record == nullptr || !type->isReferenceType() || !type.getNonReferenceType().isConstQualified() ||
        record->isUnion() || (cxx != nullptr && (cxx->getNumBases() > 0 || cxx->isPolymorphic()))) {
      Error(param->getLocation(),
            fmt::format("parameter '{}' of the buffer kernel for \"{}\" has type '{}'; a buffer kernel takes "
                        "xlac::Buffer<const T, Rank> operands, xlac::Buffer<T, Rank> results and last, optionally, "
                        "a const reference to a struct of scalar attributes",
                        param->getNameAsString(), target, type.getAsString()));
      return false;
    }
    const clang::ASTRecordLayout& layout = context_->getASTRecordLayout(record);
    sig.attrs_struct = record->getQualifiedNameAsString();
    sig.attrs_size = layout.getSize().getQuantity();
    sig.attrs_align = layout.getAlignment().getQuantity();
    sig.attrs_loc = Location(record->getLocation());
    bool ok = true;
    for (const clang::FieldDecl* field : record->fields()) {
      KernelAttrField attr;
      attr.name = field->getNameAsString();
      attr.type = ElementType(field->getType());
      attr.offset = static_cast<int64_t>(layout.getFieldOffset(field->getFieldIndex()) / 8);
      attr.loc = Location(field->getLocation());
      if (attr.type == PrimitiveType::kInvalid || field->isBitField()) {
        Error(field->getLocation(),
              fmt::format("attribute '{}' of the buffer kernel for \"{}\" has type '{}'; attributes are scalars: {}",
                          attr.name, target, field->getType().getAsString(), kTypes));
        ok = false;
      }
      sig.attrs.push_back(std::move(attr));
    }
    return ok;
  }

  bool ReadShardingRule(const clang::AnnotateAttr& attr, const std::string& target, KernelSignature& sig) {
    sig.sharding = KernelShardingRule::kReplicated;
    if (attr.args_size() < 2) return true;
    const clang::Expr* const* args = attr.args_begin();
    const std::string rule = StringArg(args[1]);
    if (rule == "replicated" || rule == "elementwise") {
      sig.sharding = rule == "replicated" ? KernelShardingRule::kReplicated : KernelShardingRule::kElementwise;
      if (attr.args_size() == 2) return true;
    } else if (rule == "batch_dims" && attr.args_size() > 2) {
      sig.sharding = KernelShardingRule::kBatchDims;
      for (unsigned i = 2; i < attr.args_size(); ++i) {
        clang::Expr::EvalResult value;
        if (!args[i]->EvaluateAsInt(value, *context_) || value.Val.getInt().isNegative()) {
          Error(args[i]->getExprLoc(),
                fmt::format("XLAC_SHARDING_BATCH_DIMS of \"{}\" takes dimension numbers", target));
          return false;
        }
        sig.batch_dims.push_back(value.Val.getInt().getExtValue());
      }
      std::sort(sig.batch_dims.begin(), sig.batch_dims.end());
      if (std::adjacent_find(sig.batch_dims.begin(), sig.batch_dims.end()) != sig.batch_dims.end()) {
        Error(attr.getLocation(), fmt::format("XLAC_SHARDING_BATCH_DIMS of \"{}\" names a dimension twice", target));
        return false;
      }
      return true;
    }
    Error(attr.getLocation(),
          fmt::format("the sharding rule of \"{}\" is XLAC_SHARDING_REPLICATED, XLAC_SHARDING_ELEMENTWISE or "
                      "XLAC_SHARDING_BATCH_DIMS(d, ...)",
                      target));
    return false;
  }

  void ReadBufferKernel(clang::FunctionDecl* thunk, const clang::AnnotateAttr& attr, const std::string& target) {
    const clang::FunctionDecl* fn = CalledKernel(thunk);
    if (fn == nullptr) {
      Error(attr.getLocation(), fmt::format("the entry point of \"{}\" does not call a kernel function (define it "
                                            "with XLAC_BUFFER_KERNEL)",
                                            target));
      return;
    }
    FoundKernel found;
    KernelSignature& sig = found.signature;
    sig.target = target;
    sig.kind = KernelKind::kBuffer;
    sig.function = fn->getQualifiedNameAsString();
    sig.loc = Location(fn->getLocation());
    bool ok = ReadShardingRule(attr, target, sig);
    const unsigned count = fn->getNumParams();
    for (unsigned i = 0; i < count; ++i) {
      const clang::ParmVarDecl* param = fn->getParamDecl(i);
      if (std::optional<std::pair<KernelBufferParam, bool>> buffer = BufferOf(param->getType())) {
        KernelBufferParam& p = buffer->first;
        p.name = param->getNameAsString();
        p.loc = Location(param->getLocation());
        if (p.type == PrimitiveType::kInvalid) {
          Error(param->getLocation(),
                fmt::format("parameter '{}' of the buffer kernel for \"{}\" has type '{}'; buffer elements are {}",
                            p.name, target, param->getType().getAsString(), kTypes));
          ok = false;
        }
        (buffer->second ? sig.operands : sig.results).push_back(std::move(p));
      } else if (i + 1 == count) {
        ok &= ReadAttrs(param, target, sig);
      } else {
        // The header's static_assert has already said so; this names the parameter.
        Error(param->getLocation(), fmt::format("parameter '{}' of the buffer kernel for \"{}\" is not an "
                                                "xlac::Buffer",
                                                param->getNameAsString(), target));
        ok = false;
      }
    }
    if (sig.results.empty()) {
      Error(fn->getLocation(), fmt::format("the buffer kernel for \"{}\" has no result (an xlac::Buffer<T, Rank> "
                                           "parameter with a non-const T)",
                                           target));
      ok = false;
    }
    if (sig.sharding == KernelShardingRule::kBatchDims) {
      for (const std::vector<KernelBufferParam>* params : {&sig.operands, &sig.results}) {
        for (const KernelBufferParam& p : *params) {
          if (p.rank >= 0 && sig.batch_dims.back() >= p.rank) {
            Error(attr.getLocation(), fmt::format("batch dimension {} of \"{}\" is out of range for '{}', of rank {}",
                                                  sig.batch_dims.back(), target, p.name, p.rank));
            ok = false;
          }
        }
      }
    }
    if (!ok) return;
    found.mangled = names_->getName(thunk);
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
  std::vector<FoundKernel>& found_;
  clang::ASTContext* context_ = nullptr;
  std::unique_ptr<clang::ASTNameGenerator> names_;
};

}  // namespace

std::unique_ptr<clang::ASTConsumer> MakeKernelFinder(clang::CompilerInstance& ci, std::vector<FoundKernel>& found) {
  return std::make_unique<KernelFinder>(ci, found);
}

}  // namespace xlac::codegen
