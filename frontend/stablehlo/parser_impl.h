// Internal state of the StableHLO text parser (syntax only: text -> ast.h). The structure lives in
// parse_module.cc, types in parse_types.cc, attributes in parse_attributes.cc, dense<> literals in parse_dense.cc
// and the pretty (custom assembly) op forms in parse_pretty_ops.cc.
//
// Convention: every Parse* returns false after reporting exactly one error at the offending token.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/stablehlo/ast.h"
#include "frontend/stablehlo/lexer.h"
#include "frontend/stablehlo/parser.h"
#include "ir/diagnostics.h"

namespace xlac::shlo {

// A top-level `module` located lexically (parse_toplevel.cc).
struct ModuleSpan {
  size_t begin = 0;  // the `module` keyword
  size_t end = 0;    // after its closing '}'
  std::string name;
  std::vector<std::string> foreign_dialects;  // dialects of its ops that xlac does not lower, sorted
  std::vector<std::string> functions;         // names of its pretty-form func.func
};

class Parser {
 public:
  Parser(const SourceFile& file, DiagnosticEngine& diags, const StableHloParseOptions& options);

  // The whole file: `module ... { ... }` (several are merged, or skipped with a warning when they are not StableHLO
  // or repeat an earlier module's functions) or bare top-level functions, plus #alias definitions.
  bool ParseFile(ModuleAst* out);
  // The file's top-level modules, when it has more than one (else empty).
  void ScanModules(std::vector<ModuleSpan>* out) const;

  SourceLoc Loc(size_t offset) const { return lines_.Loc(offset); }
  const std::map<std::string, Location>& loc_aliases() const { return loc_aliases_; }
  DiagnosticEngine& diags() { return diags_; }
  const StableHloParseOptions& options() const { return options_; }

  // ---- Tokens ----
  const Token& tok() const { return lexer_.tok(); }
  Tok kind() const { return lexer_.kind(); }
  Tok LookAhead() const { return lexer_.LookAhead(); }
  void Next();
  bool Eat(Tok k);
  size_t pos() const { return lexer_.tok().begin; }
  size_t prev_end() const { return prev_end_; }
  bool IsKeyword(std::string_view kw) const { return kind() == Tok::kBareId && tok().str == kw; }
  bool LookAheadIsKeyword(std::string_view kw) const;  // the token after the current one is `kw`
  bool EatKeyword(std::string_view kw);
  bool ExpectKeyword(std::string_view kw, std::string_view context);
  bool Expect(Tok k, std::string_view context);
  std::string DescribeToken() const;
  std::string_view Source(size_t begin, size_t end) const { return lexer_.Slice(begin, end); }
  // Re-positions the lexer at `offset` (used after scanning raw text, e.g. tensor dimension lists).
  void ResetTo(size_t offset);
  std::string_view text() const { return lexer_.text(); }

  // ---- Diagnostics ----
  bool Error(size_t offset, std::string message);
  bool TokenError(std::string message);  // at the current token; a lexer error takes precedence

  class DepthGuard {
   public:
    explicit DepthGuard(Parser* p) : p_(p) { ++p_->depth_; }
    ~DepthGuard() { --p_->depth_; }
    bool ok() const { return p_->depth_ <= p_->options_.max_nesting_depth; }

   private:
    Parser* p_;
  };
  bool DepthExceeded();

  // ---- Structure (parse_module.cc) ----
  bool ParseFunc(Func* out);
  bool ParseRegion(Region* out);
  bool ParseOperation(Op* out);
  bool ParseValueRef(ValueRef* out);
  bool ParseOptionalLocation(Location* out);  // `loc(...)` if present
  bool ParseLocationBody(Location* out);      // after `loc` `(` ... up to and including `)`

  // ---- Types (parse_types.cc) ----
  bool IsTypeStart() const;
  bool ParseType(Type* out);
  // `a, b, c` (stops before a token that cannot start a type after a comma).
  bool ParseTypeList(std::vector<Type>* out);
  // `(a, b) -> c`, `(a) -> (b, c)`, `a, b -> c`, `a -> b`, or a plain list `a, b`. Fills the op's operand and result
  // types; `num_results` is how many results the op defines (used to split a plain list).
  bool ParseOpTypeSpec(Op* op);

  // ---- Attributes (parse_attributes.cc) ----
  // `allow_type_suffix`: a number may be followed by `: type` (attribute dictionaries); custom assembly forms
  // give numbers without one, and there a `:` starts the op type.
  bool ParseAttribute(AttrPtr* out, bool allow_type_suffix = true);
  // `{a = 1, b}`
  bool ParseAttrDict(std::vector<NamedAttr>* out);
  // A sequence of integers `[1, 2]` as a kDenseArray attribute (the pretty forms' custom<DenseI64Array>).
  bool ParseI64ArrayAttr(AttrPtr* out);
  bool ParseInt64(int64_t* out);
  bool ParseConvDimsBody(Attr* out);  // `[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]`
  // At a `<` that opens a dialect attribute or type body we do not interpret (`#ttcore<local_shape ...>`,
  // `!ttcore.tile<32x32, bf16>`): skips it as MLIR's lexer does (balanced <>, [], (), {}, strings, `->`) and leaves the
  // parser after the closing `>`. `what` names the construct for the error message.
  bool SkipDialectBody(std::string_view what);
  // An opaque attribute holding the source text from `start` to the end of the last token.
  AttrPtr OpaqueAttr(size_t start);

  // ---- dense<> literals (parse_dense.cc) ----
  // After the `dense` keyword: `<...>` then `:` type. Produces a kDense attribute.
  bool ParseDenseAttr(size_t start, AttrPtr* out);
  // After `array`: `<i64: 1, 2>`.
  bool ParseDenseArrayAttr(size_t start, AttrPtr* out);
  // After `dense_resource`: `<key> : type`, the value from the file's dialect_resources; unknown values (a
  // Literal::CreateUnknown, as HLO's `{...}`) when the print elided them.
  bool ParseDenseResourceAttr(size_t start, AttrPtr* out);

  // ---- File metadata (parse_resources.cc) ----
  // Reads every `{-# dialect_resources: {...} #-}` section of the file (the lexer position is left anywhere).
  bool ParseResourceSections();
  // At the start of such a section: jumps past it.
  bool SkipResourceSection();

  // ---- Pretty op forms (parse_pretty_ops.cc) ----
  bool ParsePrettyOp(Op* op);

  // ---- Shardy (parse_sdy.cc) ----
  // After `#sdy.mesh`, `#sdy.sharding` or `#sdy.sharding_per_value`, at the `<`.
  bool ParseSdyDialectAttr(const std::string& mnemonic, size_t start, AttrPtr* out);
  // After `#sdy<`, at `manual_axes`.
  bool ParseSdyManualAxesAttr(size_t start, AttrPtr* out);
  // Module level `sdy.mesh @name = <...>` (pretty or generic form).
  bool ParseSdyMeshDef(ModuleAst* out);

 private:
  bool ParseModuleBody(ModuleAst* out, bool braced);
  bool ParseGenericModule(ModuleAst* out);
  bool ParseAliasDefinition();
  bool ParseBlock(Block* out, bool first, bool* has_label);
  bool ParseGenericOpRest(Op* op);
  // `op` names a successor block (`^bb1`): reports it as an unsupported op.
  bool SuccessorError(const Op& op);
  bool ParseFuncSignature(Func* out);
  bool ParseGenericFunc(Func* out);
  bool ParseFuncAttrListEntry(std::vector<NamedAttr>* attrs);

  // parse_pretty_ops.cc
  bool ParsePrettyGeneric(Op* op);
  bool ParsePrettyItems(Op* op, bool in_parens);
  bool ParsePrettyKeywordValue(Op* op, const std::string& key, size_t key_pos);
  bool ParseReduceOp(Op* op);
  bool ParseWhileOp(Op* op);
  bool ParseCustomCallOp(Op* op);
  bool ParseCallOp(Op* op);
  bool ParseScanOp(Op* op);
  bool ParseWindowAttrs(Op* op);
  bool ParseSliceRanges(Op* op);
  void NormalizePrettyAttrs(Op* op);

  // parse_dialect_ops.cc: arith, math and tensor ops.
  bool ParseDialectOp(Op* op);
  bool ParseOperandList(Op* op);
  bool ParseDynamicIndexList(Op* op, std::vector<int64_t>* statics, int32_t* num_values);

  // parse_sdy.cc
  bool ParseSdyOp(Op* op);
  bool ParseSdyAxisRef(SdyAxisRef* out);
  bool ParseSdyAxisList(std::vector<SdyAxisRef>* out);
  bool ParseSdyMeshBody(SdyMesh* out);
  bool ParseSdyShardingBody(SdySharding* out);
  bool ParseSdyShardingList(size_t start, AttrPtr* out);
  bool ParseSdyBlockArgs(std::vector<BlockArg>* out);

  const SourceFile& file_;
  DiagnosticEngine& diags_;
  StableHloParseOptions options_;
  LineIndex lines_;
  Lexer lexer_;
  size_t prev_end_ = 0;
  int depth_ = 0;
  bool depth_error_reported_ = false;
  // Several modules: aliases of different modules may share names (each print numbers its own #loc1, ...).
  bool multi_module_ = false;
  bool after_used_module_ = false;
  std::map<std::string, Location> loc_aliases_;
  std::map<std::string, AttrPtr> attr_aliases_;
  std::map<std::string, Type> type_aliases_;
  struct ResourceBlob {
    std::string_view hex;  // the digits after "0x" (4 bytes of alignment, then the data)
    size_t pos = 0;
  };
  std::map<std::string, ResourceBlob> resource_blobs_;
  std::vector<std::pair<size_t, size_t>> resource_sections_;  // [begin, end) of each {-# ... #-}
  bool elided_resource_warned_ = false;
  // Positional keywords of the pretty form being parsed (compare's `EQ`, `FLOAT`), in order.
  std::vector<std::pair<std::string, size_t>> pretty_keywords_;
  std::vector<std::pair<std::string, size_t>> pretty_strings_;

  friend class DepthGuard;
};

// Helpers shared by the parser and the lowering.
// MLIR element type spelling -> HLO primitive type ("f32" -> kF32, "ui8" -> kU8, "i1" -> kPred, "f8E4M3FN" ->
// kF8E4M3FN, "complex<f32>" is handled by the caller). nullopt for unknown spellings.
std::optional<PrimitiveType> ElementTypeFromMlir(std::string_view spelling);
// The MLIR spelling of a type, for messages.
std::string TypeToString(const Type& type);
// `op` is stablehlo.<base> or mhlo.<base>: the same op for our purposes (MHLO's custom assembly is StableHLO's).
bool IsHloOp(const Op& op, std::string_view base);

}  // namespace xlac::shlo
