#include "frontend/stablehlo/lexer.h"

#include <algorithm>

namespace xlac::shlo {

std::string_view TokDescription(Tok kind) {
  switch (kind) {
    case Tok::kEof:
      return "end of input";
    case Tok::kError:
      return "invalid token";
    case Tok::kPercentId:
      return "SSA value";
    case Tok::kAtId:
      return "symbol reference";
    case Tok::kCaretId:
      return "block label";
    case Tok::kHashId:
      return "attribute alias";
    case Tok::kBangId:
      return "dialect type";
    case Tok::kBareId:
      return "identifier";
    case Tok::kInt:
      return "integer";
    case Tok::kFloat:
      return "float";
    case Tok::kString:
      return "string";
    case Tok::kLParen:
      return "'('";
    case Tok::kRParen:
      return "')'";
    case Tok::kLSquare:
      return "'['";
    case Tok::kRSquare:
      return "']'";
    case Tok::kLBrace:
      return "'{'";
    case Tok::kRBrace:
      return "'}'";
    case Tok::kLess:
      return "'<'";
    case Tok::kGreater:
      return "'>'";
    case Tok::kComma:
      return "','";
    case Tok::kColon:
      return "':'";
    case Tok::kEqual:
      return "'='";
    case Tok::kArrow:
      return "'->'";
    case Tok::kMinus:
      return "'-'";
    case Tok::kPlus:
      return "'+'";
    case Tok::kStar:
      return "'*'";
    case Tok::kQuestion:
      return "'?'";
    case Tok::kEllipsis:
      return "'...'";
    case Tok::kVBar:
      return "'|'";
  }
  return "token";
}

LineIndex::LineIndex(std::string_view text, int32_t line_offset) : line_offset_(line_offset) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
}

SourceLoc LineIndex::Loc(size_t offset) const {
  auto it = std::upper_bound(line_starts_.begin(), line_starts_.end(), offset);
  size_t line = static_cast<size_t>(it - line_starts_.begin());  // 1-based
  size_t col = offset - line_starts_[line - 1] + 1;
  SourceLoc loc;
  loc.line = static_cast<int32_t>(std::min<size_t>(line, INT32_MAX - 1)) + line_offset_;
  loc.col = static_cast<int32_t>(std::min<size_t>(col, INT32_MAX));
  return loc;
}

Tok Lexer::LookAhead() const {
  Lexer copy = *this;
  return copy.Lex();
}

Tok Lexer::ResetTo(size_t pos) {
  pos_ = std::min(pos, text_.size());
  return Lex();
}

Tok Lexer::Make(Tok kind, size_t begin) {
  tok_.kind = kind;
  tok_.begin = begin;
  tok_.end = pos_;
  return kind;
}

Tok Lexer::Error(std::string message, size_t pos) {
  tok_.kind = Tok::kError;
  tok_.error = std::move(message);
  tok_.error_pos = pos;
  tok_.end = std::max(pos_, tok_.begin);
  return Tok::kError;
}

void Lexer::SkipWhitespaceAndComments() {
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++pos_;
    } else if (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
      size_t nl = text_.find('\n', pos_);
      pos_ = nl == std::string_view::npos ? text_.size() : nl + 1;
    } else {
      return;
    }
  }
}

Tok Lexer::Lex() {
  SkipWhitespaceAndComments();
  tok_.str.clear();
  tok_.error.clear();
  const size_t begin = pos_;
  tok_.begin = begin;
  if (pos_ >= text_.size()) return Make(Tok::kEof, begin);
  const char c = text_[pos_];
  auto next = [&](size_t k) -> char { return pos_ + k < text_.size() ? text_[pos_ + k] : '\0'; };
  switch (c) {
    case '(':
      ++pos_;
      return Make(Tok::kLParen, begin);
    case ')':
      ++pos_;
      return Make(Tok::kRParen, begin);
    case '[':
      ++pos_;
      return Make(Tok::kLSquare, begin);
    case ']':
      ++pos_;
      return Make(Tok::kRSquare, begin);
    case '{':
      ++pos_;
      return Make(Tok::kLBrace, begin);
    case '}':
      ++pos_;
      return Make(Tok::kRBrace, begin);
    case '<':
      ++pos_;
      return Make(Tok::kLess, begin);
    case '>':
      ++pos_;
      return Make(Tok::kGreater, begin);
    case ',':
      ++pos_;
      return Make(Tok::kComma, begin);
    case ':':
      ++pos_;
      return Make(Tok::kColon, begin);
    case '=':
      ++pos_;
      return Make(Tok::kEqual, begin);
    case '+':
      ++pos_;
      return Make(Tok::kPlus, begin);
    case '*':
      ++pos_;
      return Make(Tok::kStar, begin);
    case '?':
      ++pos_;
      return Make(Tok::kQuestion, begin);
    case '|':
      ++pos_;
      return Make(Tok::kVBar, begin);
    case '-':
      ++pos_;
      if (next(0) == '>') {
        ++pos_;
        return Make(Tok::kArrow, begin);
      }
      return Make(Tok::kMinus, begin);
    case '.':
      if (next(1) == '.' && next(2) == '.') {
        pos_ += 3;
        return Make(Tok::kEllipsis, begin);
      }
      ++pos_;
      return Error("unexpected character '.'", begin);
    case '"':
      return LexString(begin, Tok::kString);
    case '%':
      return LexPrefixed(Tok::kPercentId, begin);
    case '@':
      if (next(1) == '"') {
        ++pos_;
        return LexString(begin, Tok::kAtId);
      }
      return LexPrefixed(Tok::kAtId, begin);
    case '^':
      return LexPrefixed(Tok::kCaretId, begin);
    case '#':
      return LexPrefixed(Tok::kHashId, begin);
    case '!':
      return LexPrefixed(Tok::kBangId, begin);
    default:
      break;
  }
  if (c >= '0' && c <= '9') return LexNumber(begin);
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_') {
    while (pos_ < text_.size() && IsIdentChar(text_[pos_])) ++pos_;
    tok_.str = std::string(text_.substr(begin, pos_ - begin));
    return Make(Tok::kBareId, begin);
  }
  ++pos_;
  if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
    return Error("unexpected character in input", begin);
  }
  return Error(std::string("unexpected character '") + c + "'", begin);
}

// %name, @name, ^name, #name, !name: MLIR allows [a-zA-Z0-9$._-] after the sigil (and digits-only ids).
Tok Lexer::LexPrefixed(Tok kind, size_t begin) {
  ++pos_;  // sigil
  const size_t start = pos_;
  while (pos_ < text_.size() && (IsIdentChar(text_[pos_]) || text_[pos_] == '-')) {
    // `->` after an identifier is an arrow, not part of the name.
    if (text_[pos_] == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') break;
    ++pos_;
  }
  if (pos_ == start) return Error("expected an identifier after the sigil", begin);
  tok_.str = std::string(text_.substr(start, pos_ - start));
  return Make(kind, begin);
}

Tok Lexer::LexNumber(size_t begin) {
  auto at = [&](size_t i) -> char { return i < text_.size() ? text_[i] : '\0'; };
  auto is_digit = [](char ch) { return ch >= '0' && ch <= '9'; };
  auto is_hex = [](char ch) {
    return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
  };
  if (at(pos_) == '0' && at(pos_ + 1) == 'x' && is_hex(at(pos_ + 2))) {
    pos_ += 2;
    while (is_hex(at(pos_))) ++pos_;
    tok_.str = std::string(text_.substr(begin, pos_ - begin));
    return Make(Tok::kInt, begin);
  }
  while (is_digit(at(pos_))) ++pos_;
  bool is_float = false;
  if (at(pos_) == '.' && at(pos_ + 1) != '.') {
    is_float = true;
    ++pos_;
    while (is_digit(at(pos_))) ++pos_;
  }
  if ((at(pos_) == 'e' || at(pos_) == 'E') &&
      (is_digit(at(pos_ + 1)) || ((at(pos_ + 1) == '+' || at(pos_ + 1) == '-') && is_digit(at(pos_ + 2))))) {
    is_float = true;
    pos_ += 2;
    while (is_digit(at(pos_))) ++pos_;
  }
  tok_.str = std::string(text_.substr(begin, pos_ - begin));
  return Make(is_float ? Tok::kFloat : Tok::kInt, begin);
}

Tok Lexer::LexString(size_t begin, Tok kind) {
  ++pos_;  // opening quote
  std::string out;
  while (true) {
    if (pos_ >= text_.size()) return Error("unterminated string literal", begin);
    char c = text_[pos_];
    if (c == '"') {
      ++pos_;
      break;
    }
    if (c == '\n') return Error("string literal may not span lines", begin);
    if (c != '\\') {
      out += c;
      ++pos_;
      continue;
    }
    // Escapes: \" \\ \n \t and two hex digits.
    char e = pos_ + 1 < text_.size() ? text_[pos_ + 1] : '\0';
    auto hex = [](char h) -> int {
      if (h >= '0' && h <= '9') return h - '0';
      if (h >= 'a' && h <= 'f') return h - 'a' + 10;
      if (h >= 'A' && h <= 'F') return h - 'A' + 10;
      return -1;
    };
    if (e == '"' || e == '\\') {
      out += e;
      pos_ += 2;
    } else if (e == 'n') {
      out += '\n';
      pos_ += 2;
    } else if (e == 't') {
      out += '\t';
      pos_ += 2;
    } else if (hex(e) >= 0 && pos_ + 2 < text_.size() && hex(text_[pos_ + 2]) >= 0) {
      out += static_cast<char>(hex(e) * 16 + hex(text_[pos_ + 2]));
      pos_ += 3;
    } else {
      size_t at = pos_;
      pos_ += 1;
      return Error("unknown escape in string literal", at);
    }
  }
  tok_.str = std::move(out);
  return Make(kind, begin);
}

}  // namespace xlac::shlo
