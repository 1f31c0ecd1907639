// Tokenizer for XLA's HLO text format. Token boundaries follow XLA's HloLexer (xla/hlo/parser/hlo_lexer.cc) so
// that exactly the same spellings are accepted: `name:` is one name token, `attr=` one attribute-name token,
// `3x3` / `0_1x2_2` / `b01f_01io->b01f` are single pattern tokens, and comments are skipped.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "ir/diagnostics.h"
#include "ir/primitive_type.h"

namespace xlac::hlo {

enum class TokKind : uint8_t {
  kEof,
  kError,
  // Punctuation.
  kEqual,         // =
  kComma,         // ,
  kColon,         // :
  kAsterisk,      // *
  kQuestionMark,  // ?
  kOctothorp,     // #
  kPlus,          // +
  kTilde,         // ~
  kLsquare,       // [
  kRsquare,       // ]
  kLbrace,        // {
  kRbrace,        // }
  kLparen,        // (
  kRparen,        // )
  kArrow,         // ->
  kLeq,           // <=
  kDots,          // ...
  // Keywords.
  kw_true,
  kw_false,
  kw_inf,
  kw_HloModule,
  kw_ENTRY,
  kw_ROOT,
  kw_FileNames,
  kw_FunctionNames,
  kw_FileLocations,
  kw_StackFrames,
  kw_maximal,
  kw_replicated,
  kw_manual,
  kw_last_tile_dim_replicate,
  kw_shard_as,
  kw_shard_like,
  kw_unknown,
  kw_unreduced,
  // Tokens with values.
  kNegInf,         // -inf
  kPrimitiveType,  // f32, pred, token, ...
  kName,           // %name or name:   (str = the name)
  kAttributeName,  // name=            (str = the name)
  kDimLabels,      // b01f_01io->b01f
  kDxD,            // 1x2x3
  kPad,            // 0_0x1_2_3
  kIdent,          // other identifiers
  kString,         // "..." or '...' (str = unescaped contents)
  kInt,            // [-]?[0-9]+
  kDecimal,        // floats, nan, nan(0x..), -nan
};

// Human-readable description of a token kind for messages ("'{'", "integer", ...).
std::string_view TokKindDescription(TokKind kind);

struct Token {
  TokKind kind = TokKind::kEof;
  size_t begin = 0;  // byte offsets into the text
  size_t end = 0;
  std::string str;
  int64_t int_val = 0;
  // A non-negative integer above INT64_MAX (up to UINT64_MAX) lexes, as in XLA, with int_val holding its bits.
  bool int_exceeds_int64 = false;
  double decimal_val = 0;
  PrimitiveType primitive_type = PrimitiveType::kInvalid;
  // For kError: what is wrong, and where (e.g. the start of an unterminated comment).
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

// A cheap-to-copy cursor over the text: copying it saves the position for backtracking.
class Lexer {
 public:
  explicit Lexer(std::string_view text) : text_(text) {}

  // Lexes the next token and returns its kind.
  TokKind Lex();
  const Token& tok() const { return tok_; }
  TokKind kind() const { return tok_.kind; }
  // Kind of the token after the current one, without consuming anything.
  TokKind LookAhead() const;
  // Re-lexes from the current '{' as a brace-balanced blob (strings may contain braces), turning the current token
  // into a kString whose str is the raw text including the braces. False (current token unchanged) if unbalanced.
  bool LexBracedBlob();
  // Re-lexes from the current token's start up to (not including) the first character outside `charset`,
  // producing a kIdent with the raw text. Used for attribute values with their own micro-syntax (sparsity=).
  void LexRawRun(std::string_view charset);
  std::string_view text() const { return text_; }
  std::string_view Slice(size_t begin, size_t end) const { return text_.substr(begin, end - begin); }

 private:
  int Peek() const;
  TokKind LexToken();
  TokKind LexIdentifier();
  TokKind LexPercent();
  TokKind LexNumberOrPattern();
  TokKind LexString();
  TokKind Error(std::string message, size_t pos);
  bool ConsumeNanPayload(size_t* pos, uint64_t* payload);

  std::string_view text_;
  size_t pos_ = 0;
  Token tok_;
};

}  // namespace xlac::hlo
