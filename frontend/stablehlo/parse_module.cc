// Structure of a StableHLO file: module, #alias definitions, func.func, regions and blocks, the generic op form
// and loc(...) locations.
#include <charconv>
#include <functional>

#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac::shlo {

bool Type::IsDynamic() const {
  for (int64_t d : dims) {
    if (d == kDynamic) return true;
  }
  for (const Type& t : elements) {
    if (t.IsDynamic()) return true;
  }
  for (const Type& t : results) {
    if (t.IsDynamic()) return true;
  }
  return unranked;
}

const Attr* Attr::Find(std::string_view key) const {
  for (const auto& [name, value] : dict) {
    if (name == key) return value.get();
  }
  return nullptr;
}

const NamedAttr* Op::FindAttr(std::string_view attr_name) const {
  for (const NamedAttr& a : attrs) {
    if (a.name == attr_name) return &a;
  }
  return nullptr;
}

bool IsHloOp(const Op& op, std::string_view base) {
  std::string_view n = op.name;
  if (n.rfind("stablehlo.", 0) == 0) {
    n.remove_prefix(10);
  } else if (n.rfind("mhlo.", 0) == 0) {
    n.remove_prefix(5);
  } else {
    return false;
  }
  return n == base;
}

int64_t Op::NumResults() const {
  int64_t n = 0;
  for (const ResultGroup& g : results) n += g.count;
  return n;
}

Parser::Parser(const SourceFile& file, DiagnosticEngine& diags, const StableHloParseOptions& options)
    : file_(file), diags_(diags), options_(options), lines_(file.text(), file.line_offset()), lexer_(file.text()) {}

void Parser::Next() {
  prev_end_ = lexer_.tok().end;
  lexer_.Lex();
}

void Parser::ResetTo(size_t offset) { lexer_.ResetTo(offset); }

bool Parser::Eat(Tok k) {
  if (kind() != k) return false;
  Next();
  return true;
}

bool Parser::EatKeyword(std::string_view kw) {
  if (!IsKeyword(kw)) return false;
  Next();
  return true;
}

std::string Parser::DescribeToken() const {
  switch (kind()) {
    case Tok::kEof:
    case Tok::kError:
      return std::string(TokDescription(kind()));
    default: {
      std::string_view spelling = lexer_.Slice(tok().begin, tok().end);
      if (spelling.size() > 40) spelling = spelling.substr(0, 40);
      return fmt::format("'{}'", spelling);
    }
  }
}

bool Parser::Expect(Tok k, std::string_view context) {
  if (kind() == k) {
    Next();
    return true;
  }
  return TokenError(fmt::format("expected {} {}, but found {}", TokDescription(k), context, DescribeToken()));
}

bool Parser::ExpectKeyword(std::string_view kw, std::string_view context) {
  if (EatKeyword(kw)) return true;
  return TokenError(fmt::format("expected '{}' {}, but found {}", kw, context, DescribeToken()));
}

bool Parser::Error(size_t offset, std::string message) {
  diags_.Error(Loc(offset), std::move(message));
  return false;
}

bool Parser::TokenError(std::string message) {
  if (kind() == Tok::kError) return Error(tok().error_pos, tok().error);
  return Error(pos(), std::move(message));
}

bool Parser::DepthExceeded() {
  if (depth_error_reported_) return false;
  depth_error_reported_ = true;
  return Error(pos(), fmt::format("maximum nesting depth ({}) exceeded", options_.max_nesting_depth));
}

// ---------------------------------------------------------------------------------------------------------------
// File and module

bool Parser::ParseModuleBody(ModuleAst* out, bool braced) {
  while (true) {
    if (braced && Eat(Tok::kRBrace)) return true;
    if (!braced && kind() == Tok::kEof) return true;
    if (!braced && SkipResourceSection()) continue;
    if (kind() == Tok::kHashId || kind() == Tok::kBangId) {
      if (!ParseAliasDefinition()) return false;
      continue;
    }
    if (IsKeyword("func.func") || IsKeyword("func")) {
      out->funcs.emplace_back();
      if (!ParseFunc(&out->funcs.back())) return false;
      continue;
    }
    if (kind() == Tok::kString && tok().str == "func.func") {
      out->funcs.emplace_back();
      if (!ParseGenericFunc(&out->funcs.back())) return false;
      continue;
    }
    if (IsKeyword("sdy.mesh") || (kind() == Tok::kString && tok().str == "sdy.mesh")) {
      if (!ParseSdyMeshDef(out)) return false;
      continue;
    }
    if (kind() == Tok::kEof) return TokenError("expected '}' to close the module, but found end of input");
    if (IsKeyword("module")) return TokenError("nested modules are not supported");
    // Module-level ops of other dialects (IREE's util.global, ml_program.global) are unknown ops like any other.
    if ((kind() == Tok::kBareId || (kind() == Tok::kString && LookAhead() == Tok::kLParen)) &&
        tok().str.find('.') != std::string::npos) {
      return TokenError(fmt::format("unsupported op '{}'", tok().str));
    }
    return TokenError(fmt::format("expected 'func.func' in the module body, but found {}", DescribeToken()));
  }
}

// #name = loc(...) | #name = <attribute> | !name = <type>
bool Parser::ParseAliasDefinition() {
  const bool is_type = kind() == Tok::kBangId;
  const std::string name = tok().str;
  const size_t name_pos = pos();
  Next();
  if (!Expect(Tok::kEqual, fmt::format("after the alias name '{}{}'", is_type ? "!" : "#", name))) return false;
  if (is_type) {
    Type type;
    if (!ParseType(&type)) return false;
    type_aliases_[name] = std::move(type);
    return true;
  }
  if (IsKeyword("loc") && LookAhead() == Tok::kLParen) {
    Next();
    Next();
    Location loc;
    if (!ParseLocationBody(&loc)) return false;
    // After the module we read, a #loc of the same name belongs to a later (skipped) module.
    if (!(multi_module_ && after_used_module_ && loc_aliases_.count(name))) loc_aliases_[name] = std::move(loc);
    return true;
  }
  AttrPtr attr;
  if (!ParseAttribute(&attr)) return false;
  if (attr_aliases_.count(name) && !multi_module_) {
    return Error(name_pos, fmt::format("redefinition of attribute alias '#{}'", name));
  }
  attr_aliases_[name] = std::move(attr);
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Functions

bool Parser::ParseFunc(Func* out) {
  out->pos = pos();
  Next();  // func.func
  if (IsKeyword("public") || IsKeyword("private") || IsKeyword("nested")) {
    out->visibility = tok().str;
    Next();
  }
  out->name_pos = pos();
  if (kind() != Tok::kAtId) return TokenError(fmt::format("expected a function name, but found {}", DescribeToken()));
  out->name = tok().str;
  Next();
  if (!ParseFuncSignature(out)) return false;
  if (EatKeyword("attributes") && !ParseAttrDict(&out->attrs)) return false;
  if (kind() == Tok::kLBrace) {
    out->has_body = true;
    if (!ParseRegion(&out->body)) return false;
    if (!out->body.blocks.empty() && !out->body.blocks[0].args.empty()) {
      return Error(out->body.blocks[0].pos, "the entry block of a function takes its arguments from the signature");
    }
  }
  return ParseOptionalLocation(&out->loc);
}

bool Parser::ParseFuncSignature(Func* out) {
  if (!Expect(Tok::kLParen, "to start the function arguments")) return false;
  if (kind() != Tok::kRParen) {
    do {
      FuncArg arg;
      arg.pos = pos();
      if (kind() == Tok::kPercentId) {
        arg.name = tok().str;
        Next();
        if (!Expect(Tok::kColon, "after the argument name")) return false;
      }
      if (!ParseType(&arg.type)) return false;
      if (kind() == Tok::kLBrace && !ParseAttrDict(&arg.attrs)) return false;
      if (!ParseOptionalLocation(&arg.loc)) return false;
      out->args.push_back(std::move(arg));
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRParen, "to end the function arguments")) return false;
  if (!Eat(Tok::kArrow)) return true;
  if (Eat(Tok::kLParen)) {
    if (kind() != Tok::kRParen) {
      do {
        FuncResult result;
        Location ignored;
        if (!ParseType(&result.type)) return false;
        if (kind() == Tok::kLBrace && !ParseAttrDict(&result.attrs)) return false;
        if (!ParseOptionalLocation(&ignored)) return false;
        out->results.push_back(std::move(result));
      } while (Eat(Tok::kComma));
    }
    return Expect(Tok::kRParen, "to end the function results");
  }
  FuncResult result;
  if (!ParseType(&result.type)) return false;
  out->results.push_back(std::move(result));
  return true;
}

// "func.func"() ({ ^bb0(%a: T): ... }) {sym_name = "f", function_type = (T) -> U, arg_attrs = [...], ...} : () -> ()
bool Parser::ParseGenericFunc(Func* out) {
  Op op;
  out->pos = pos();
  if (!ParseOperation(&op)) return false;
  out->name_pos = op.name_pos;
  out->loc = op.loc;
  const NamedAttr* name = op.FindAttr("sym_name");
  const NamedAttr* type = op.FindAttr("function_type");
  if (name == nullptr || name->value->kind != Attr::Kind::kString) {
    return Error(op.name_pos, "generic func.func needs a sym_name string");
  }
  if (type == nullptr || type->value->kind != Attr::Kind::kType || type->value->type->kind != Type::Kind::kFunction) {
    return Error(op.name_pos, "generic func.func needs a function_type");
  }
  out->name = name->value->str;
  if (const NamedAttr* vis = op.FindAttr("sym_visibility"); vis != nullptr) out->visibility = vis->value->str;
  const Type& fn = *type->value->type;
  const NamedAttr* arg_attrs = op.FindAttr("arg_attrs");
  const NamedAttr* res_attrs = op.FindAttr("res_attrs");
  auto attrs_at = [](const NamedAttr* list, size_t i, std::vector<NamedAttr>* into) {
    if (list == nullptr || list->value->kind != Attr::Kind::kArray || i >= list->value->elements.size()) return;
    for (const auto& [key, value] : list->value->elements[i]->dict) into->push_back({key, value, value->pos});
  };
  for (size_t i = 0; i < fn.elements.size(); ++i) {
    FuncArg arg;
    arg.type = fn.elements[i];
    arg.pos = op.name_pos;
    attrs_at(arg_attrs, i, &arg.attrs);
    out->args.push_back(std::move(arg));
  }
  for (size_t i = 0; i < fn.results.size(); ++i) {
    FuncResult result;
    result.type = fn.results[i];
    attrs_at(res_attrs, i, &result.attrs);
    out->results.push_back(std::move(result));
  }
  if (op.regions.size() > 1) return Error(op.name_pos, "func.func has one region");
  if (op.regions.empty() || op.regions[0].blocks.empty()) return true;
  out->has_body = true;
  out->body = std::move(op.regions[0]);
  Block& entry = out->body.blocks[0];
  if (entry.args.size() != out->args.size()) {
    return Error(entry.pos, fmt::format("the entry block has {} arguments, but the function type has {}",
                                        entry.args.size(), out->args.size()));
  }
  for (size_t i = 0; i < entry.args.size(); ++i) {
    out->args[i].name = entry.args[i].name;
    out->args[i].pos = entry.args[i].pos;
    out->args[i].loc = entry.args[i].loc;
  }
  entry.args.clear();
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Regions, blocks, operations

bool Parser::ParseRegion(Region* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  out->pos = pos();
  if (!Expect(Tok::kLBrace, "to start a region")) return false;
  bool first = true;
  while (!Eat(Tok::kRBrace)) {
    if (kind() == Tok::kEof) return TokenError("expected '}' to close the region, but found end of input");
    out->blocks.emplace_back();
    bool has_label = false;
    if (!ParseBlock(&out->blocks.back(), first, &has_label)) return false;
    first = false;
  }
  if (out->blocks.size() > 1) {
    return Error(out->blocks[1].pos, "regions with more than one block are not supported by HLO");
  }
  return true;
}

bool Parser::ParseBlock(Block* out, bool first, bool* has_label) {
  out->pos = pos();
  if (kind() == Tok::kCaretId) {
    *has_label = true;
    Next();
    if (Eat(Tok::kLParen)) {
      if (kind() != Tok::kRParen) {
        do {
          BlockArg arg;
          arg.pos = pos();
          if (kind() != Tok::kPercentId) {
            return TokenError(fmt::format("expected a block argument, but found {}", DescribeToken()));
          }
          arg.name = tok().str;
          Next();
          if (!Expect(Tok::kColon, "after the block argument name") || !ParseType(&arg.type)) return false;
          if (!ParseOptionalLocation(&arg.loc)) return false;
          out->args.push_back(std::move(arg));
        } while (Eat(Tok::kComma));
      }
      if (!Expect(Tok::kRParen, "to end the block arguments")) return false;
    }
    if (!Expect(Tok::kColon, "after the block label")) return false;
  } else if (!first) {
    return TokenError("expected a block label");
  }
  while (kind() != Tok::kRBrace && kind() != Tok::kCaretId) {
    if (kind() == Tok::kEof) return TokenError("expected '}' to close the region, but found end of input");
    out->ops.emplace_back();
    if (!ParseOperation(&out->ops.back())) return false;
  }
  return true;
}

bool Parser::ParseValueRef(ValueRef* out) {
  out->pos = pos();
  if (kind() != Tok::kPercentId) return TokenError(fmt::format("expected an SSA value, but found {}", DescribeToken()));
  out->name = tok().str;
  Next();
  if (kind() == Tok::kHashId) {
    const std::string& digits = tok().str;
    int64_t index = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      return TokenError(fmt::format("invalid SSA value result number '#{}'", digits));
    }
    out->index = index;
    Next();
  }
  return true;
}

bool Parser::ParseOperation(Op* out) {
  out->pos = pos();
  if (kind() == Tok::kPercentId) {
    do {
      ResultGroup group;
      group.pos = pos();
      if (kind() != Tok::kPercentId) {
        return TokenError(fmt::format("expected an SSA result name, but found {}", DescribeToken()));
      }
      group.name = tok().str;
      Next();
      if (Eat(Tok::kColon)) {
        const size_t count_pos = pos();
        if (!ParseInt64(&group.count)) return false;
        if (group.count < 1 || group.count > (int64_t{1} << 20)) {
          return Error(count_pos, "expected a positive result count");
        }
      }
      out->results.push_back(std::move(group));
    } while (Eat(Tok::kComma));
    if (!Expect(Tok::kEqual, "after the operation results")) return false;
  }
  out->name_pos = pos();
  if (kind() == Tok::kString) {
    out->name = tok().str;
    out->generic_form = true;
    Next();
    if (!ParseGenericOpRest(out)) return false;
  } else if (kind() == Tok::kBareId) {
    out->name = tok().str;
    // Inside func.func, ops without a dialect prefix belong to the func dialect.
    if (out->name == "return" || out->name == "call") out->name = "func." + out->name;
    Next();
    if (!ParsePrettyOp(out)) return false;
  } else {
    return TokenError(fmt::format("expected an operation, but found {}", DescribeToken()));
  }
  return ParseOptionalLocation(&out->loc);
}

bool Parser::SuccessorError(const Op& op) {
  // Branches (cf.br, cf.cond_br: XLA's old HLO importer wrote while loops and conditionals this way) need a
  // function of several blocks; HLO computations and regions have one.
  return Error(op.name_pos, fmt::format("unsupported op '{}': it branches to another block, and functions with "
                                        "several blocks are not supported",
                                        op.name));
}

// "name"(operands) <{properties}> (regions) {attributes} : (types) -> types
bool Parser::ParseGenericOpRest(Op* op) {
  if (!Expect(Tok::kLParen, "to start the operand list")) return false;
  if (kind() != Tok::kRParen) {
    do {
      op->operands.emplace_back();
      if (!ParseValueRef(&op->operands.back())) return false;
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRParen, "to end the operand list")) return false;
  if (kind() == Tok::kLSquare) return SuccessorError(*op);
  if (Eat(Tok::kLess)) {
    if (!ParseAttrDict(&op->attrs) || !Expect(Tok::kGreater, "to end the properties")) return false;
  }
  if (Eat(Tok::kLParen)) {
    do {
      op->regions.emplace_back();
      if (!ParseRegion(&op->regions.back())) return false;
    } while (Eat(Tok::kComma));
    if (!Expect(Tok::kRParen, "to end the region list")) return false;
  }
  if (kind() == Tok::kLBrace && !ParseAttrDict(&op->attrs)) return false;
  if (!Expect(Tok::kColon, "before the operation type")) return false;
  const size_t type_pos = pos();
  Type type;
  if (!ParseType(&type)) return false;
  if (type.kind != Type::Kind::kFunction) return Error(type_pos, "expected a function type (operands) -> results");
  op->operand_types = std::move(type.elements);
  op->result_types = std::move(type.results);
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Locations: loc(unknown), loc("file":1:2), loc("name"(child)), loc(#alias), loc(callsite(a at b)),
// loc(fused[a, b]), loc(fused<#attr>[a, b]).

bool Parser::ParseOptionalLocation(Location* out) {
  if (!IsKeyword("loc") || LookAhead() != Tok::kLParen) return true;
  Next();
  Next();
  return ParseLocationBody(out);
}

namespace {

void MergeLocation(Location* into, const Location& from) {
  if (into->name.empty()) into->name = from.name;
  if (into->file.empty()) {
    into->file = from.file;
    into->line = from.line;
    into->col = from.col;
  }
  if (into->alias.empty()) into->alias = from.alias;
}

}  // namespace

bool Parser::ParseLocationBody(Location* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  // Parses one location without the `loc(` wrapper.
  std::function<bool(Location*)> parse_inner = [&](Location* loc) -> bool {
    DepthGuard inner_guard(this);
    if (!inner_guard.ok()) return DepthExceeded();
    if (EatKeyword("unknown")) return true;
    if (kind() == Tok::kHashId) {
      loc->alias = tok().str;
      Next();
      return true;
    }
    if (IsKeyword("callsite")) {
      Next();
      if (!Expect(Tok::kLParen, "after 'callsite'")) return false;
      Location callee, caller;
      if (!parse_inner(&callee) || !ExpectKeyword("at", "in a callsite location") || !parse_inner(&caller) ||
          !Expect(Tok::kRParen, "to end the callsite location")) {
        return false;
      }
      MergeLocation(loc, callee);
      MergeLocation(loc, caller);
      return true;
    }
    if (IsKeyword("fused")) {
      Next();
      if (Eat(Tok::kLess)) {
        AttrPtr metadata;
        if (!ParseAttribute(&metadata) || !Expect(Tok::kGreater, "after the fused location metadata")) return false;
      }
      if (!Expect(Tok::kLSquare, "to start the fused locations")) return false;
      if (kind() != Tok::kRSquare) {
        do {
          Location part;
          if (!parse_inner(&part)) return false;
          MergeLocation(loc, part);
        } while (Eat(Tok::kComma));
      }
      return Expect(Tok::kRSquare, "to end the fused locations");
    }
    if (kind() != Tok::kString) return TokenError(fmt::format("expected a location, but found {}", DescribeToken()));
    std::string text = tok().str;
    Next();
    if (Eat(Tok::kColon)) {
      loc->file = std::move(text);
      if (!ParseInt64(&loc->line)) return false;
      if (Eat(Tok::kColon) && !ParseInt64(&loc->col)) return false;
      // Ranges: "file":1:2 to 3:4 or to :4.
      if (EatKeyword("to")) {
        int64_t ignored;
        if (kind() == Tok::kInt && !ParseInt64(&ignored)) return false;
        if (Eat(Tok::kColon) && !ParseInt64(&ignored)) return false;
      }
      return true;
    }
    loc->name = std::move(text);
    if (Eat(Tok::kLParen)) {
      Location child;
      if (!parse_inner(&child) || !Expect(Tok::kRParen, "to end the name location")) return false;
      MergeLocation(loc, child);
    }
    return true;
  };
  if (!parse_inner(out)) return false;
  return Expect(Tok::kRParen, "to end the location");
}

}  // namespace xlac::shlo
