// The top level of a file: alias definitions and one or more `module`s. Logs of compilers built on MLIR (tt-xla
// prints the StableHLO module, then the TTIR and TTNN modules it lowered to) hold several modules of which only
// the StableHLO ones mean anything to us, so modules are first located lexically (balanced braces) and classified
// by the dialects of their ops; the others are skipped with a warning.
#include <set>

#include "fmt/format.h"
#include "fmt/ranges.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac::shlo {
namespace {

// Dialects whose ops xlac lowers. A module with ops of any other dialect is not a StableHLO program.
bool IsKnownOpDialect(std::string_view dialect) {
  for (std::string_view known :
       {"stablehlo", "mhlo", "chlo", "func", "sdy", "arith", "tensor", "math", "check", "interpreter"}) {
    if (dialect == known) return true;
  }
  return false;
}

bool FirstOnLine(std::string_view text, size_t begin) {
  while (begin > 0 && (text[begin - 1] == ' ' || text[begin - 1] == '\t')) --begin;
  return begin == 0 || text[begin - 1] == '\n' || text[begin - 1] == '\r';
}

// At least two lines start with the word `module`: only then is the lexical scan worth its time.
bool MayHoldSeveralModules(std::string_view text) {
  int count = 0;
  for (size_t p = 0; p < text.size() && count < 2;) {
    size_t start = p;
    while (start < text.size() && (text[start] == ' ' || text[start] == '\t')) ++start;
    if (text.substr(start, 6) == "module" && (start + 6 >= text.size() || !IsIdentChar(text[start + 6]))) ++count;
    size_t nl = text.find('\n', p);
    p = nl == std::string_view::npos ? text.size() : nl + 1;
  }
  return count >= 2;
}

std::string Ordinal(size_t n) {
  switch (n) {
    case 1:
      return "first";
    case 2:
      return "second";
    case 3:
      return "third";
    default:
      return fmt::format("{}th", n);
  }
}

}  // namespace

void Parser::ScanModules(std::vector<ModuleSpan>* out) const {
  out->clear();
  const std::string_view t = text();
  if (!MayHoldSeveralModules(t)) return;
  Lexer lx(t);
  lx.Lex();
  int depth = 0;
  while (lx.kind() != Tok::kEof) {
    if (depth > 0 || lx.kind() != Tok::kBareId || lx.tok().str != "module") {
      if (lx.kind() == Tok::kLBrace) ++depth;
      if (lx.kind() == Tok::kRBrace && depth > 0) --depth;
      lx.Lex();
      continue;
    }
    ModuleSpan span;
    span.begin = lx.tok().begin;
    lx.Lex();
    if (lx.kind() == Tok::kAtId) {
      span.name = lx.tok().str;
      lx.Lex();
    }
    if (lx.kind() == Tok::kBareId && lx.tok().str == "attributes") {
      lx.Lex();
      int attr_depth = 0;
      do {
        if (lx.kind() == Tok::kLBrace) ++attr_depth;
        if (lx.kind() == Tok::kRBrace) --attr_depth;
        lx.Lex();
      } while (attr_depth > 0 && lx.kind() != Tok::kEof);
    }
    if (lx.kind() != Tok::kLBrace) continue;  // malformed: the parser reports it
    std::set<std::string> foreign;
    int body_depth = 0;
    Tok prev = Tok::kEof;
    do {
      const Token& tok = lx.tok();
      if (tok.kind == Tok::kLBrace) ++body_depth;
      if (tok.kind == Tok::kRBrace) --body_depth;
      const bool named =
          (tok.kind == Tok::kBareId || tok.kind == Tok::kString) && tok.str.find('.') != std::string::npos;
      if (tok.kind == Tok::kBareId && (tok.str == "func.func" || tok.str == "func") && body_depth == 1) {
        Lexer ahead = lx;
        ahead.Lex();
        if (ahead.kind() == Tok::kBareId &&
            (ahead.tok().str == "public" || ahead.tok().str == "private" || ahead.tok().str == "nested")) {
          ahead.Lex();
        }
        if (ahead.kind() == Tok::kAtId) span.functions.push_back(ahead.tok().str);
      }
      if (named) {
        // An op name: a generic "dialect.op"( or a pretty dialect.op after `%x =` or at the start of a statement
        // (not an attribute key, which `=` or `:` follows, nor an attribute value, which a separator follows).
        const Tok after = lx.LookAhead();
        bool is_op;
        if (tok.kind == Tok::kString) {
          is_op = after == Tok::kLParen && (prev == Tok::kEqual || FirstOnLine(t, tok.begin));
        } else if (prev == Tok::kEqual) {
          is_op = after != Tok::kComma && after != Tok::kRBrace && after != Tok::kRSquare && after != Tok::kGreater &&
                  after != Tok::kRParen;
        } else {
          is_op = FirstOnLine(t, tok.begin) && after != Tok::kEqual && after != Tok::kColon;
        }
        if (is_op) {
          std::string dialect = tok.str.substr(0, tok.str.find('.'));
          if (!IsKnownOpDialect(dialect)) foreign.insert(std::move(dialect));
        }
      }
      prev = tok.kind;
      span.end = tok.end;
      lx.Lex();
    } while (body_depth > 0 && lx.kind() != Tok::kEof);
    if (body_depth > 0) return out->clear();  // unbalanced: parse normally and let the parser report where
    span.foreign_dialects.assign(foreign.begin(), foreign.end());
    out->push_back(std::move(span));
  }
}

// --mlir-print-op-generic: "builtin.module"() <{sym_name = "m"}> ({ ...ops... }) {attributes} : () -> ()
bool Parser::ParseGenericModule(ModuleAst* out) {
  out->pos = pos();
  Next();
  if (!Expect(Tok::kLParen, "after \"builtin.module\"") || !Expect(Tok::kRParen, "(a module has no operands)")) {
    return false;
  }
  std::vector<NamedAttr> attrs;
  if (Eat(Tok::kLess) && (!ParseAttrDict(&attrs) || !Expect(Tok::kGreater, "to end the properties"))) return false;
  if (!Expect(Tok::kLParen, "to start the module region") || !Expect(Tok::kLBrace, "to start the module region")) {
    return false;
  }
  if (kind() == Tok::kCaretId) {
    Next();
    if (!Expect(Tok::kColon, "after the block label")) return false;
  }
  if (!ParseModuleBody(out, /*braced=*/true) || !Expect(Tok::kRParen, "to end the module region")) return false;
  if (kind() == Tok::kLBrace && !ParseAttrDict(&attrs)) return false;
  Type type;
  if (!Expect(Tok::kColon, "before the module type") || !ParseType(&type)) return false;
  for (NamedAttr& a : attrs) {
    if (a.name == "sym_name" && a.value->kind == Attr::Kind::kString) {
      out->name = a.value->str;
    } else if (a.name != "sym_visibility") {
      out->attrs.push_back(std::move(a));
    }
  }
  Location ignored;
  return ParseOptionalLocation(&ignored);
}

bool Parser::ParseFile(ModuleAst* out) {
  std::vector<ModuleSpan> spans;
  ScanModules(&spans);
  multi_module_ = spans.size() > 1;
  // Modules of other dialects are skipped; if no module is StableHLO, the first is read and its ops reported.
  std::vector<bool> use(spans.size(), false);
  bool any = false;
  for (size_t i = 0; i < spans.size(); ++i) {
    use[i] = spans[i].foreign_dialects.empty();
    any = any || use[i];
  }
  if (!any && !use.empty()) use[0] = true;
  std::vector<std::pair<size_t, std::string>> skipped;  // (module index, why)
  std::vector<size_t> used;
  std::set<std::string> used_functions;
  bool have_module = false;

  if (!ParseResourceSections()) return false;
  ResetTo(0);
  prev_end_ = 0;
  // Alias definitions and file metadata between modules.
  auto top_level_definitions = [&]() -> bool {
    while (true) {
      if (SkipResourceSection()) continue;
      if (kind() != Tok::kHashId && kind() != Tok::kBangId) return true;
      if (!ParseAliasDefinition()) return false;
    }
  };
  if (!top_level_definitions()) return false;
  out->pos = pos();
  if (kind() == Tok::kString && tok().str == "builtin.module") {
    if (!ParseGenericModule(out) || !top_level_definitions()) return false;
  } else if (!IsKeyword("module")) {
    if (!ParseModuleBody(out, /*braced=*/false)) return false;
  }
  while (IsKeyword("module")) {
    size_t index = spans.size();
    for (size_t i = 0; i < spans.size(); ++i) {
      if (spans[i].begin == pos()) index = i;
    }
    Location ignored;
    std::string repeated;
    if (index < spans.size() && use[index]) {
      // Another print of a program already read (tt-xla logs print one per compiler stage): its functions repeat.
      for (const std::string& f : spans[index].functions) {
        if (repeated.empty() && used_functions.count(f)) repeated = f;
      }
    }
    if (index < spans.size() && (!use[index] || !repeated.empty())) {
      skipped.emplace_back(index, repeated.empty()
                                      ? fmt::format("it holds {} ops", fmt::join(spans[index].foreign_dialects, ", "))
                                      : fmt::format("its function @{} repeats one of an earlier module", repeated));
      ResetTo(spans[index].end);
      prev_end_ = spans[index].end;
    } else {
      // Several StableHLO modules (the chunks of a split-input-file test) are merged: their functions share one
      // namespace.
      const size_t module_pos = pos();
      const bool first = !have_module;
      Next();
      std::string name;
      if (kind() == Tok::kAtId) {
        name = tok().str;
        Next();
      }
      std::vector<NamedAttr> attrs;
      if (EatKeyword("attributes") && !ParseAttrDict(&attrs)) return false;
      if (!Expect(Tok::kLBrace, "to start the module body")) return false;
      if (!ParseModuleBody(out, /*braced=*/true)) return false;
      have_module = true;
      if (first) {
        out->pos = module_pos;
        out->name = name;
        out->attrs = std::move(attrs);
      }
      if (index < spans.size()) {
        used.push_back(index);
        used_functions.insert(spans[index].functions.begin(), spans[index].functions.end());
      }
      after_used_module_ = true;
    }
    if (!ParseOptionalLocation(&ignored)) return false;
    if (!top_level_definitions()) return false;
  }
  if (kind() != Tok::kEof) {
    return TokenError(fmt::format("expected end of input after the module, but found {}", DescribeToken()));
  }
  if (out->funcs.empty()) return Error(out->pos, "the input contains no functions");
  if (!skipped.empty()) {
    auto describe = [&](size_t i) {
      const std::string name = spans[i].name.empty() ? "" : fmt::format("@{}, ", spans[i].name);
      return fmt::format("the {} ({}line {})", Ordinal(i + 1), name, Loc(spans[i].begin).line);
    };
    std::vector<std::string> using_list, skipped_list;
    for (size_t i : used) using_list.push_back(describe(i));
    for (const auto& [i, why] : skipped) skipped_list.push_back(fmt::format("{}: {}", describe(i), why));
    diags_.Report(Severity::kWarning, Loc(spans[skipped[0].first].begin),
                  fmt::format("file holds {} modules; using {}; skipping {}", spans.size(), fmt::join(using_list, ", "),
                              fmt::join(skipped_list, "; ")));
  }
  return true;
}

}  // namespace xlac::shlo
