// MLIR attributes: numbers, strings, symbols, arrays, dictionaries, array<i64: ...>, dense<...> (parse_dense.cc),
// #stablehlo<enum VALUE>, structured #stablehlo.xxx<key = value, ...> and #stablehlo.conv<...>; Shardy's
// #sdy.* sharding attributes are parsed in parse_sdy.cc.
#include <charconv>
#include <limits>

#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"
#include "ir/float_types.h"

namespace xlac::shlo {
namespace {

// Decimal or 0x-hex digits to uint64; false on overflow or junk.
bool ParseUnsignedText(std::string_view text, uint64_t* out) {
  int base = 10;
  if (text.size() > 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    base = 16;
    text.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), *out, base);
  return ec == std::errc() && ptr == text.data() + text.size();
}

std::shared_ptr<Attr> NewAttr(Attr::Kind kind, size_t pos) {
  auto a = std::make_shared<Attr>();
  a->kind = kind;
  a->pos = pos;
  return a;
}

}  // namespace

AttrPtr Parser::OpaqueAttr(size_t start) {
  auto attr = NewAttr(Attr::Kind::kOpaque, start);
  attr->str = std::string(Source(start, prev_end()));
  return attr;
}

bool Parser::LookAheadIsKeyword(std::string_view kw) const {
  Lexer copy = lexer_;
  return copy.Lex() == Tok::kBareId && copy.tok().str == kw;
}

// MLIR's parseDialectSymbolBody: nested punctuation must balance, `->` is not a closing '>', strings are skipped
// whole; anything else is the dialect's business.
bool Parser::SkipDialectBody(std::string_view what) {
  if (kind() != Tok::kLess) return TokenError(fmt::format("expected '<' to start {}", what));
  const size_t open = pos();
  const std::string_view t = text();
  std::vector<std::pair<char, size_t>> stack;
  size_t p = open;
  while (true) {
    if (p >= t.size()) {
      return Error(stack.back().second, fmt::format("unterminated {}: '{}' is not closed before the end of input", what,
                                                    stack.back().first));
    }
    const size_t at = p;
    const char c = t[p++];
    switch (c) {
      case '<':
      case '[':
      case '(':
      case '{':
        if (static_cast<int>(stack.size()) >= options_.max_nesting_depth) {
          return Error(at, fmt::format("maximum nesting depth ({}) exceeded", options_.max_nesting_depth));
        }
        stack.emplace_back(c, at);
        continue;
      case '-':
        if (p < t.size() && t[p] == '>') ++p;
        continue;
      case '>':
      case ']':
      case ')':
      case '}': {
        const char want = c == '>' ? '<' : c == ']' ? '[' : c == ')' ? '(' : '{';
        if (stack.back().first != want) {
          return Error(at, fmt::format("unbalanced '{}' in {}: '{}' is still open", c, what, stack.back().first));
        }
        stack.pop_back();
        if (stack.empty()) break;
        continue;
      }
      case '"':
        while (p < t.size() && t[p] != '"') {
          if (t[p] == '\n') break;
          p += t[p] == '\\' ? 2 : 1;
        }
        if (p >= t.size() || t[p] != '"') return Error(at, "unterminated string literal");
        ++p;
        continue;
      default:
        continue;
    }
    break;
  }
  ResetTo(p);
  prev_end_ = p;
  return true;
}

bool Parser::ParseInt64(int64_t* out) {
  const size_t start = pos();
  const bool negative = Eat(Tok::kMinus);
  if (kind() != Tok::kInt) return TokenError(fmt::format("expected an integer, but found {}", DescribeToken()));
  uint64_t magnitude = 0;
  if (!ParseUnsignedText(tok().str, &magnitude) ||
      magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) + (negative ? 1 : 0)) {
    return Error(start, fmt::format("integer {}{} does not fit in 64 bits", negative ? "-" : "", tok().str));
  }
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  Next();
  return true;
}

bool Parser::ParseI64ArrayAttr(AttrPtr* out) {
  auto attr = NewAttr(Attr::Kind::kDenseArray, pos());
  Type i64;
  i64.kind = Type::Kind::kTensor;
  i64.is_scalar_type = true;
  i64.element = PrimitiveType::kS64;
  i64.text = "i64";
  attr->type = i64;
  if (!Expect(Tok::kLSquare, "to start an integer list")) return false;
  if (kind() != Tok::kRSquare) {
    do {
      auto element = NewAttr(Attr::Kind::kInt, pos());
      if (!ParseInt64(&element->int_value)) return false;
      attr->elements.push_back(std::move(element));
    } while (Eat(Tok::kComma));
  }
  if (!Expect(Tok::kRSquare, "to end an integer list")) return false;
  *out = std::move(attr);
  return true;
}

bool Parser::ParseAttrDict(std::vector<NamedAttr>* out) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  if (!Expect(Tok::kLBrace, "to start an attribute dictionary")) return false;
  if (Eat(Tok::kRBrace)) return true;
  do {
    NamedAttr entry;
    entry.pos = pos();
    if (kind() != Tok::kBareId && kind() != Tok::kString) {
      return TokenError(fmt::format("expected an attribute name, but found {}", DescribeToken()));
    }
    entry.name = tok().str;
    Next();
    for (const NamedAttr& seen : *out) {
      if (seen.name == entry.name) {
        return Error(entry.pos, fmt::format("duplicate attribute '{}' in the dictionary", entry.name));
      }
    }
    if (Eat(Tok::kEqual)) {
      if (!ParseAttribute(&entry.value)) return false;
    } else {
      entry.value = NewAttr(Attr::Kind::kUnit, entry.pos);
    }
    out->push_back(std::move(entry));
  } while (Eat(Tok::kComma));
  return Expect(Tok::kRBrace, "to end the attribute dictionary");
}

// [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
bool Parser::ParseConvDimsBody(Attr* out) {
  out->kind = Attr::Kind::kConvDims;
  out->conv_labels.assign(3, {});
  for (int part = 0; part < 3; ++part) {
    if (part == 1 && !ExpectKeyword("x", "between the input and kernel dimension labels")) return false;
    if (part == 2 && !Expect(Tok::kArrow, "before the output dimension labels")) return false;
    if (!Expect(Tok::kLSquare, "to start convolution dimension labels")) return false;
    if (kind() != Tok::kRSquare) {
      do {
        if (kind() == Tok::kInt) {
          int64_t index;
          const size_t at = pos();
          if (!ParseInt64(&index)) return false;
          if (index < 0 || index > 4096) return Error(at, "invalid spatial dimension label");
          out->conv_labels[part].push_back(-1 - index);
        } else if (kind() == Tok::kBareId && tok().str.size() == 1 &&
                   std::string_view("bfio").find(tok().str[0]) != std::string_view::npos) {
          out->conv_labels[part].push_back(tok().str[0]);
          Next();
        } else {
          return TokenError(
              fmt::format("expected a convolution dimension label (b, f, i, o or a spatial index), "
                          "but found {}",
                          DescribeToken()));
        }
      } while (Eat(Tok::kComma));
    }
    if (!Expect(Tok::kRSquare, "to end convolution dimension labels")) return false;
  }
  return true;
}

bool Parser::ParseAttribute(AttrPtr* out, bool allow_type_suffix) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded();
  const size_t start = pos();
  auto parse_type_suffix = [&](Attr* attr) -> bool {
    if (!allow_type_suffix || kind() != Tok::kColon) return true;
    Next();
    attr->type.emplace();
    return ParseType(&*attr->type);
  };

  switch (kind()) {
    case Tok::kMinus:
    case Tok::kInt:
    case Tok::kFloat: {
      const bool negative = Eat(Tok::kMinus);
      if (kind() == Tok::kInt) {
        auto attr = NewAttr(Attr::Kind::kInt, start);
        uint64_t magnitude = 0;
        if (!ParseUnsignedText(tok().str, &magnitude)) {
          return TokenError(fmt::format("integer {} does not fit in 64 bits", tok().str));
        }
        if (negative) {
          if (magnitude > uint64_t{1} << 63) return Error(start, "integer does not fit in 64 bits");
          attr->int_value = static_cast<int64_t>(0 - magnitude);
        } else {
          attr->int_value = static_cast<int64_t>(magnitude);
          attr->int_is_unsigned_big = magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
        }
        attr->float_value = negative ? -static_cast<double>(magnitude) : static_cast<double>(magnitude);
        const bool hex = tok().str.size() > 2 && (tok().str[1] == 'x' || tok().str[1] == 'X');
        Next();
        if (!parse_type_suffix(attr.get())) return false;
        if (attr->type.has_value() && IsFloatingPointType(attr->type->element)) {
          attr->kind = Attr::Kind::kFloat;
          // `0xFF800000 : f32` is a bit pattern (MLIR prints non-finite float attributes this way).
          if (hex && !negative && attr->type->is_scalar_type && !IsComplexType(attr->type->element)) {
            attr->float_value = FloatBitsToDouble(attr->type->element, magnitude);
          }
        }
        *out = std::move(attr);
        return true;
      }
      if (kind() != Tok::kFloat) return TokenError(fmt::format("expected a number, but found {}", DescribeToken()));
      auto attr = NewAttr(Attr::Kind::kFloat, start);
      const std::string& text = tok().str;
      double value = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
      if (ec == std::errc::result_out_of_range) {
        value = std::strtod(text.c_str(), nullptr);
      } else if (ec != std::errc()) {
        return TokenError(fmt::format("invalid floating-point literal {}", text));
      }
      attr->float_value = negative ? -value : value;
      Next();
      if (!parse_type_suffix(attr.get())) return false;
      *out = std::move(attr);
      return true;
    }
    case Tok::kString: {
      auto attr = NewAttr(Attr::Kind::kString, start);
      attr->str = tok().str;
      Next();
      if (!parse_type_suffix(attr.get())) return false;
      *out = std::move(attr);
      return true;
    }
    case Tok::kAtId: {
      auto attr = NewAttr(Attr::Kind::kSymbol, start);
      attr->str = tok().str;
      Next();
      *out = std::move(attr);
      return true;
    }
    case Tok::kLSquare: {
      auto attr = NewAttr(Attr::Kind::kArray, start);
      Next();
      if (kind() != Tok::kRSquare) {
        do {
          AttrPtr element;
          if (!ParseAttribute(&element, allow_type_suffix)) return false;
          attr->elements.push_back(std::move(element));
        } while (Eat(Tok::kComma));
      }
      if (!Expect(Tok::kRSquare, "to end the array attribute")) return false;
      *out = std::move(attr);
      return true;
    }
    case Tok::kLBrace: {
      auto attr = NewAttr(Attr::Kind::kDict, start);
      std::vector<NamedAttr> entries;
      if (!ParseAttrDict(&entries)) return false;
      for (NamedAttr& e : entries) attr->dict.emplace_back(std::move(e.name), std::move(e.value));
      attr->str = std::string(Source(start, prev_end()));  // verbatim, for backend_config dictionaries
      *out = std::move(attr);
      return true;
    }
    case Tok::kQuestion: {
      auto attr = NewAttr(Attr::Kind::kKeyword, start);
      attr->str = "?";
      Next();
      *out = std::move(attr);
      return true;
    }
    case Tok::kLess: {
      // A struct body without a dialect name (the pretty `algorithm = <...>`).
      auto attr = NewAttr(Attr::Kind::kDict, start);
      Next();
      if (kind() != Tok::kGreater) {
        do {
          std::string key;
          if (kind() == Tok::kBareId && LookAhead() == Tok::kEqual) {
            key = tok().str;
            Next();
            Next();
          }
          AttrPtr value;
          if (!ParseAttribute(&value)) return false;
          attr->dict.emplace_back(std::move(key), std::move(value));
        } while (Eat(Tok::kComma));
      }
      if (!Expect(Tok::kGreater, "to end the attribute")) return false;
      *out = std::move(attr);
      return true;
    }
    case Tok::kHashId: {
      const std::string name = tok().str;
      const size_t dot = name.find('.');
      Next();
      if (kind() != Tok::kLess) {
        auto it = attr_aliases_.find(name);
        if (it != attr_aliases_.end()) {
          *out = it->second;
          return true;
        }
        // MLIR reserves dotted names for dialect attributes, so `#ttcore.foo` without a body is one, not an alias.
        if (dot != std::string::npos) {
          *out = OpaqueAttr(start);
          return true;
        }
        return Error(start, fmt::format("undefined attribute alias '#{}'", name));
      }
      const std::string dialect = name.substr(0, dot);
      const std::string mnemonic = dot == std::string::npos ? "" : name.substr(dot + 1);
      const bool interpreted =
          dialect == "stablehlo" || dialect == "mhlo" || dialect == "chlo" ||
          (dialect == "sdy" && (dot == std::string::npos ? LookAheadIsKeyword("manual_axes")
                                                         : mnemonic == "mesh" || mnemonic == "sharding" ||
                                                               mnemonic == "sharding_per_value"));
      if (!interpreted) {
        // Attributes of dialects xlac does not interpret (#ttcore<local_shape ...>, #sdy.op_sharding_rule<...>)
        // have their own grammar: kept as raw text. Whoever needs their meaning reports them by name.
        if (!SkipDialectBody(fmt::format("#{}<...>", name))) return false;
        *out = OpaqueAttr(start);
        return true;
      }
      if (dot == std::string::npos) {
        // #stablehlo<comparison_direction EQ>
        Next();
        if (name == "sdy" && IsKeyword("manual_axes")) return ParseSdyManualAxesAttr(start, out);
        if (kind() == Tok::kBareId && LookAhead() == Tok::kBareId) {
          auto attr = NewAttr(Attr::Kind::kEnum, start);
          attr->dialect = tok().str;
          Next();
          attr->str = tok().str;
          Next();
          if (!Expect(Tok::kGreater, "to end the enum attribute")) return false;
          *out = std::move(attr);
          return true;
        }
        // MLIR of 2022 (XLA's MHLO exports then, IREE's test inputs) quoted the body: #mhlo<"comparison_direction GT">.
        if (kind() == Tok::kString) {
          const std::string body = tok().str;
          const size_t space = body.find(' ');
          if (space != std::string::npos && space > 0 && space + 1 < body.size() &&
              body.find(' ', space + 1) == std::string::npos) {
            auto attr = NewAttr(Attr::Kind::kEnum, start);
            attr->dialect = body.substr(0, space);
            attr->str = body.substr(space + 1);
            Next();
            if (!Expect(Tok::kGreater, "to end the enum attribute")) return false;
            *out = std::move(attr);
            return true;
          }
        }
        return TokenError(fmt::format("expected '<category VALUE>' in #{}<...>, but found {}", name, DescribeToken()));
      }
      if (dialect == "sdy" && (mnemonic == "mesh" || mnemonic == "sharding" || mnemonic == "sharding_per_value")) {
        return ParseSdyDialectAttr(mnemonic, start, out);
      }
      if (mnemonic == "conv") {
        Next();
        if (IsKeyword("raw")) {
          Next();
          auto attr = NewAttr(Attr::Kind::kDict, start);
          attr->dialect = "conv_raw";
          do {
            if (kind() != Tok::kBareId) return TokenError("expected a convolution dimension number name");
            std::string key = tok().str;
            Next();
            if (!Expect(Tok::kEqual, "after the dimension number name")) return false;
            AttrPtr value;
            if (!ParseAttribute(&value)) return false;
            attr->dict.emplace_back(std::move(key), std::move(value));
          } while (Eat(Tok::kComma));
          if (!Expect(Tok::kGreater, "to end the convolution dimension numbers")) return false;
          *out = std::move(attr);
          return true;
        }
        auto attr = NewAttr(Attr::Kind::kConvDims, start);
        if (!ParseConvDimsBody(attr.get()) || !Expect(Tok::kGreater, "to end the convolution dimension numbers")) {
          return false;
        }
        *out = std::move(attr);
        return true;
      }
      // #stablehlo.gather<offset_dims = [1], ...>, #stablehlo.channel_handle<handle = 1, type = 0>, ...
      auto attr = NewAttr(Attr::Kind::kDict, start);
      attr->dialect = mnemonic;
      Next();
      if (kind() != Tok::kGreater) {
        do {
          std::string key;
          if (kind() == Tok::kBareId && LookAhead() == Tok::kEqual) {
            key = tok().str;
            Next();
            Next();
          }
          AttrPtr value;
          if (!ParseAttribute(&value)) return false;
          attr->dict.emplace_back(std::move(key), std::move(value));
        } while (Eat(Tok::kComma));
      }
      if (!Expect(Tok::kGreater, fmt::format("to end #{}<...>", name))) return false;
      *out = std::move(attr);
      return true;
    }
    case Tok::kBareId: {
      const std::string& word = tok().str;
      if (word == "true" || word == "false") {
        auto attr = NewAttr(Attr::Kind::kBool, start);
        attr->bool_value = word == "true";
        attr->int_value = attr->bool_value ? 1 : 0;
        Next();
        *out = std::move(attr);
        return true;
      }
      if (word == "unit") {
        Next();
        *out = NewAttr(Attr::Kind::kUnit, start);
        return true;
      }
      if (word == "dense" && LookAhead() == Tok::kLess) {
        Next();
        return ParseDenseAttr(start, out);
      }
      if (word == "array" && LookAhead() == Tok::kLess) {
        Next();
        return ParseDenseArrayAttr(start, out);
      }
      if (word == "dense_resource" && LookAhead() == Tok::kLess) {
        Next();
        return ParseDenseResourceAttr(start, out);
      }
      if (word == "sparse") {
        return TokenError(fmt::format("{}<...> attributes are not supported", word));
      }
      if (!IsTypeStart() && LookAhead() == Tok::kLess) {
        // Builtin attributes we do not interpret (affine_map<...>, strided<...>): kept as raw text.
        const std::string name = word;
        Next();
        if (!SkipDialectBody(fmt::format("{}<...>", name))) return false;
        *out = OpaqueAttr(start);
        return true;
      }
      if (IsTypeStart()) {
        auto attr = NewAttr(Attr::Kind::kType, start);
        attr->type.emplace();
        if (!ParseType(&*attr->type)) return false;
        *out = std::move(attr);
        return true;
      }
      auto attr = NewAttr(Attr::Kind::kKeyword, start);
      attr->str = word;
      Next();
      *out = std::move(attr);
      return true;
    }
    case Tok::kBangId:
    case Tok::kLParen: {
      auto attr = NewAttr(Attr::Kind::kType, start);
      attr->type.emplace();
      if (!ParseType(&*attr->type)) return false;
      *out = std::move(attr);
      return true;
    }
    default:
      return TokenError(fmt::format("expected an attribute value, but found {}", DescribeToken()));
  }
}

}  // namespace xlac::shlo
