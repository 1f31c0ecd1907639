// Tokenizer for MLIR textual IR as used by StableHLO files. Token boundaries follow MLIR's lexer
// (mlir/lib/AsmParser/Lexer.cpp): `%name`, `@sym`, `^bb`, `#attr.alias`, `!dialect.type` are single prefixed
// identifiers, `-` and `->` are punctuation, and numbers are integers (decimal or 0x hex) or floats with a '.'.
// Tensor dimension lists (`2x?x3xf32`) are not tokens: the type parser scans them from the raw text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostics.h"

namespace xlac::shlo {

enum class Tok : uint8_t {
  kEof,
  kError,
  kPercentId,  // %name     (str = name without '%')
  kAtId,       // @name or @"name"
  kCaretId,    // ^bb0
  kHashId,     // #name, #stablehlo.gather, #1 (as in %0#1)
  kBangId,     // !stablehlo.token
  kBareId,     // identifiers and keywords
  kInt,        // 123, 0x7F80
  kFloat,      // 1.5, 1.0e+00, 2.5E-3
  kString,     // "..." (str = unescaped contents)
  kLParen,
  kRParen,
  kLSquare,
  kRSquare,
  kLBrace,
  kRBrace,
  kLess,
  kGreater,
  kComma,
  kColon,
  kEqual,
  kArrow,     // ->
  kMinus,     // -
  kPlus,      // +
  kStar,      // *
  kQuestion,  // ?
  kEllipsis,  // ...
  kVBar,      // |
};

std::string_view TokDescription(Tok kind);

struct Token {
  Tok kind = Tok::kEof;
  size_t begin = 0;  // byte offsets into the text
  size_t end = 0;
  std::string str;  // identifier without its sigil, or unescaped string contents
  // kError: message and position.
  std::string error;
  size_t error_pos = 0;
};

// Maps byte offsets to 1-based line/column (columns count bytes).
class LineIndex {
 public:
  LineIndex(std::string_view text, int32_t line_offset);
  SourceLoc Loc(size_t offset) const;

 private:
  std::vector<size_t> line_starts_;
  int32_t line_offset_;
};

// A cursor over the text. Copying it is cheap enough to look ahead.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  Tok Lex();
  const Token& tok() const { return tok_; }
  Tok kind() const { return tok_.kind; }
  // Kind of the token after the current one.
  Tok LookAhead() const;
  // Restarts lexing at `pos` (a byte offset previously obtained from a token) and lexes one token.
  Tok ResetTo(size_t pos);
  std::string_view text() const { return text_; }
  std::string_view Slice(size_t begin, size_t end) const { return text_.substr(begin, end - begin); }

 private:
  Tok Make(Tok kind, size_t begin);
  Tok Error(std::string message, size_t pos);
  Tok LexPrefixed(Tok kind, size_t begin);
  Tok LexNumber(size_t begin);
  Tok LexString(size_t begin, Tok kind);
  void SkipWhitespaceAndComments();

  std::string_view text_;
  size_t pos_ = 0;
  Token tok_;
};

// Characters allowed after the first in MLIR bare identifiers.
inline bool IsIdentChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$' || c == '.';
}

}  // namespace xlac::shlo
