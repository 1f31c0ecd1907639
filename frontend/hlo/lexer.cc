#include "frontend/hlo/lexer.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"

namespace xlac::hlo {
namespace {

constexpr int kEofChar = -1;

bool IsDigit(int c) { return c >= '0' && c <= '9'; }
bool IsAlpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsIdentifierChar(int c) { return IsAlpha(c) || IsDigit(c) || c == '-' || c == '.' || c == '_'; }
bool IsHexDigit(int c) { return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// The matchers below emulate XLA's anchored RE2 patterns; each returns the end offset of the match or npos.
constexpr size_t kNoMatch = std::string_view::npos;

size_t MatchDigits(std::string_view s, size_t p) {
  size_t q = p;
  while (q < s.size() && IsDigit(s[q])) ++q;
  return q == p ? kNoMatch : q;
}

// [-]?((\d+|\d+[.]\d*|\d*[.]\d+)([eE][+-]?\d+))|[-]?(\d+[.]\d*|\d*[.]\d+)
size_t MatchFloat(std::string_view s, size_t p) {
  if (p < s.size() && s[p] == '-') ++p;
  size_t q = p;
  while (q < s.size() && IsDigit(s[q])) ++q;
  bool int_digits = q > p;
  bool has_point = false;
  bool frac_digits = false;
  if (q < s.size() && s[q] == '.') {
    size_t r = q + 1;
    while (r < s.size() && IsDigit(s[r])) ++r;
    frac_digits = r > q + 1;
    if (int_digits || frac_digits) {
      has_point = true;
      q = r;
    }
  }
  if (!int_digits && !frac_digits) return kNoMatch;
  if (q < s.size() && (s[q] == 'e' || s[q] == 'E')) {
    size_t r = q + 1;
    if (r < s.size() && (s[r] == '+' || s[r] == '-')) ++r;
    size_t e = MatchDigits(s, r);
    if (e != kNoMatch) return e;
  }
  return has_point ? q : kNoMatch;
}

// [0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}
size_t MatchDimLabels(std::string_view s, size_t p) {
  auto run = [&](size_t q, std::string_view letters) {
    size_t r = q;
    while (r < s.size() && (IsDigit(s[r]) || s[r] == '?' || letters.find(s[r]) != std::string_view::npos)) ++r;
    return r - q >= 2 ? r : kNoMatch;
  };
  size_t q = run(p, "bf");
  if (q == kNoMatch || q >= s.size() || s[q] != '_') return kNoMatch;
  q = run(q + 1, "io");
  if (q == kNoMatch || s.substr(q, 2) != "->") return kNoMatch;
  return run(q + 2, "bf");
}

// [0-9]+(x[0-9]+)+
size_t MatchDxD(std::string_view s, size_t p) {
  size_t q = MatchDigits(s, p);
  if (q == kNoMatch) return kNoMatch;
  int groups = 0;
  while (q < s.size() && s[q] == 'x') {
    size_t r = MatchDigits(s, q + 1);
    if (r == kNoMatch) break;
    q = r;
    ++groups;
  }
  return groups > 0 ? q : kNoMatch;
}

// [-]?[0-9]+_[-]?[0-9]+(_[0-9]+)?
size_t MatchPadDim(std::string_view s, size_t p) {
  if (p < s.size() && s[p] == '-') ++p;
  size_t q = MatchDigits(s, p);
  if (q == kNoMatch || q >= s.size() || s[q] != '_') return kNoMatch;
  ++q;
  if (q < s.size() && s[q] == '-') ++q;
  q = MatchDigits(s, q);
  if (q == kNoMatch) return kNoMatch;
  if (q < s.size() && s[q] == '_') {
    size_t r = MatchDigits(s, q + 1);
    if (r != kNoMatch) q = r;
  }
  return q;
}

// pad_dim (x pad_dim)*
size_t MatchPad(std::string_view s, size_t p) {
  size_t q = MatchPadDim(s, p);
  if (q == kNoMatch) return kNoMatch;
  while (q < s.size() && s[q] == 'x') {
    size_t r = MatchPadDim(s, q + 1);
    if (r == kNoMatch) break;
    q = r;
  }
  return q;
}

double ParseDoubleText(std::string_view text) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) {
    // Overflow becomes +-inf (reported by the parser), underflow a denormal or zero, as strtod does.
    std::string copy(text);
    return std::strtod(copy.c_str(), nullptr);
  }
  return value;
}

constexpr uint64_t kDoubleMantissaMask = (uint64_t{1} << 52) - 1;
constexpr uint64_t kDoubleQuietNanBit = uint64_t{1} << 51;

double NanWithSignAndPayload(bool negative, uint64_t payload) {
  uint64_t bits = (uint64_t{0x7ff} << 52) | (payload & kDoubleMantissaMask);
  if (negative) bits |= uint64_t{1} << 63;
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

struct Keyword {
  std::string_view text;
  TokKind kind;
};
constexpr Keyword kKeywords[] = {
    {"true", TokKind::kw_true},
    {"false", TokKind::kw_false},
    {"inf", TokKind::kw_inf},
    {"HloModule", TokKind::kw_HloModule},
    {"ENTRY", TokKind::kw_ENTRY},
    {"ROOT", TokKind::kw_ROOT},
    {"FileNames", TokKind::kw_FileNames},
    {"FunctionNames", TokKind::kw_FunctionNames},
    {"FileLocations", TokKind::kw_FileLocations},
    {"StackFrames", TokKind::kw_StackFrames},
    {"maximal", TokKind::kw_maximal},
    {"replicated", TokKind::kw_replicated},
    {"manual", TokKind::kw_manual},
    {"last_tile_dim_replicate", TokKind::kw_last_tile_dim_replicate},
    {"shard_as", TokKind::kw_shard_as},
    {"shard_like", TokKind::kw_shard_like},
    {"unknown", TokKind::kw_unknown},
    {"unreduced", TokKind::kw_unreduced},
};

}  // namespace

std::string_view TokKindDescription(TokKind kind) {
  switch (kind) {
    case TokKind::kEof:
      return "end of input";
    case TokKind::kError:
      return "invalid token";
    case TokKind::kEqual:
      return "'='";
    case TokKind::kComma:
      return "','";
    case TokKind::kColon:
      return "':'";
    case TokKind::kAsterisk:
      return "'*'";
    case TokKind::kQuestionMark:
      return "'?'";
    case TokKind::kOctothorp:
      return "'#'";
    case TokKind::kPlus:
      return "'+'";
    case TokKind::kTilde:
      return "'~'";
    case TokKind::kLsquare:
      return "'['";
    case TokKind::kRsquare:
      return "']'";
    case TokKind::kLbrace:
      return "'{'";
    case TokKind::kRbrace:
      return "'}'";
    case TokKind::kLparen:
      return "'('";
    case TokKind::kRparen:
      return "')'";
    case TokKind::kArrow:
      return "'->'";
    case TokKind::kLeq:
      return "'<='";
    case TokKind::kDots:
      return "'...'";
    case TokKind::kw_true:
      return "'true'";
    case TokKind::kw_false:
      return "'false'";
    case TokKind::kw_inf:
      return "'inf'";
    case TokKind::kw_HloModule:
      return "'HloModule'";
    case TokKind::kw_ENTRY:
      return "'ENTRY'";
    case TokKind::kw_ROOT:
      return "'ROOT'";
    case TokKind::kw_FileNames:
      return "'FileNames'";
    case TokKind::kw_FunctionNames:
      return "'FunctionNames'";
    case TokKind::kw_FileLocations:
      return "'FileLocations'";
    case TokKind::kw_StackFrames:
      return "'StackFrames'";
    case TokKind::kw_maximal:
      return "'maximal'";
    case TokKind::kw_replicated:
      return "'replicated'";
    case TokKind::kw_manual:
      return "'manual'";
    case TokKind::kw_last_tile_dim_replicate:
      return "'last_tile_dim_replicate'";
    case TokKind::kw_shard_as:
      return "'shard_as'";
    case TokKind::kw_shard_like:
      return "'shard_like'";
    case TokKind::kw_unknown:
      return "'unknown'";
    case TokKind::kw_unreduced:
      return "'unreduced'";
    case TokKind::kNegInf:
      return "'-inf'";
    case TokKind::kPrimitiveType:
      return "primitive type";
    case TokKind::kName:
      return "name";
    case TokKind::kAttributeName:
      return "attribute name";
    case TokKind::kDimLabels:
      return "dim labels";
    case TokKind::kDxD:
      return "NxM pattern";
    case TokKind::kPad:
      return "padding pattern";
    case TokKind::kIdent:
      return "identifier";
    case TokKind::kString:
      return "string";
    case TokKind::kInt:
      return "integer";
    case TokKind::kDecimal:
      return "decimal";
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
  auto clamp = [](size_t v) { return static_cast<int32_t>(std::min<size_t>(v, std::numeric_limits<int32_t>::max())); };
  return SourceLoc{clamp(line + static_cast<size_t>(std::max(line_offset_, 0))), clamp(col)};
}

int Lexer::Peek() const {
  if (pos_ >= text_.size()) return kEofChar;
  return static_cast<unsigned char>(text_[pos_]);
}

TokKind Lexer::Error(std::string message, size_t pos) {
  tok_.error = std::move(message);
  tok_.error_pos = pos;
  return TokKind::kError;
}

TokKind Lexer::Lex() {
  tok_.str.clear();
  tok_.error.clear();
  tok_.int_val = 0;
  tok_.int_exceeds_int64 = false;
  tok_.decimal_val = 0;
  tok_.primitive_type = PrimitiveType::kInvalid;
  tok_.kind = LexToken();
  tok_.end = pos_;
  return tok_.kind;
}

TokKind Lexer::LookAhead() const {
  if (tok_.kind == TokKind::kEof || tok_.kind == TokKind::kError) return tok_.kind;
  Lexer copy = *this;
  return copy.Lex();
}

TokKind Lexer::LexToken() {
  while (true) {
    tok_.begin = pos_;
    if (pos_ >= text_.size()) return TokKind::kEof;
    int c = static_cast<unsigned char>(text_[pos_++]);
    switch (c) {
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        continue;
      case '0':
      case '1':
      case '2':
      case '3':
      case '4':
      case '5':
      case '6':
      case '7':
      case '8':
      case '9':
      case '-':
      case '?': {
        if (c == '-' && Peek() == '>') {
          ++pos_;
          return TokKind::kArrow;
        }
        TokKind kind = LexNumberOrPattern();
        if (kind == TokKind::kError && c == '?') {
          pos_ = tok_.begin + 1;
          tok_.error.clear();
          return TokKind::kQuestionMark;
        }
        return kind;
      }
      case '=':
        return TokKind::kEqual;
      case '<':
        if (Peek() == '=') {
          ++pos_;
          return TokKind::kLeq;
        }
        return Error("unexpected character '<' (expected '<=')", tok_.begin);
      case ',':
        return TokKind::kComma;
      case '%':
        return LexPercent();
      case ':':
        return TokKind::kColon;
      case '*':
        return TokKind::kAsterisk;
      case '#':
        return TokKind::kOctothorp;
      case '+':
        return TokKind::kPlus;
      case '~':
        return TokKind::kTilde;
      case '[':
        return TokKind::kLsquare;
      case ']':
        return TokKind::kRsquare;
      case '{':
        return TokKind::kLbrace;
      case '}':
        return TokKind::kRbrace;
      case '(':
        return TokKind::kLparen;
      case ')':
        return TokKind::kRparen;
      case '/': {
        if (Peek() == '*') {
          size_t comment_start = tok_.begin;
          ++pos_;
          while (true) {
            if (pos_ >= text_.size()) return Error("unterminated comment", comment_start);
            if (text_[pos_] == '\0') return Error("unexpected NUL character", pos_);
            if (text_[pos_] == '*' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/') {
              pos_ += 2;
              break;
            }
            ++pos_;
          }
          continue;
        }
        if (Peek() == '/') {
          while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') {
            if (text_[pos_] == '\0') return Error("unexpected NUL character", pos_);
            ++pos_;
          }
          continue;
        }
        return Error("unexpected character '/'", tok_.begin);
      }
      case '.':
        if (text_.substr(pos_, 2) == "..") {
          pos_ += 2;
          return TokKind::kDots;
        }
        return Error("unexpected character '.'", tok_.begin);
      case '"':
      case '\'':
        return LexString();
      default:
        if (IsAlpha(c) || c == '_') return LexIdentifier();
        if (c == 0) return Error("unexpected NUL character", tok_.begin);
        if (c >= 0x20 && c < 0x7f) return Error(std::string("unexpected character '") + char(c) + "'", tok_.begin);
        return Error("unexpected byte in input (HLO text is ASCII outside of strings)", tok_.begin);
    }
  }
}

TokKind Lexer::LexIdentifier() {
  while (IsIdentifierChar(Peek())) ++pos_;
  if (Peek() == ':') {
    tok_.str.assign(text_.substr(tok_.begin, pos_ - tok_.begin));
    ++pos_;
    return TokKind::kName;
  }
  if (Peek() == '=') {
    tok_.str.assign(text_.substr(tok_.begin, pos_ - tok_.begin));
    ++pos_;
    return TokKind::kAttributeName;
  }
  std::string_view identifier = text_.substr(tok_.begin, pos_ - tok_.begin);
  if (std::optional<PrimitiveType> type = ParsePrimitiveType(identifier);
      type.has_value() && *type != PrimitiveType::kTuple && *type != PrimitiveType::kInvalid) {
    tok_.primitive_type = *type;
    tok_.str.assign(identifier);
    return TokKind::kPrimitiveType;
  }
  if (identifier == "nan") {
    uint64_t payload = kDoubleQuietNanBit;
    if (Peek() == '(') {
      size_t p = pos_;
      if (!ConsumeNanPayload(&p, &payload)) return TokKind::kError;
      pos_ = p;
    }
    tok_.decimal_val = NanWithSignAndPayload(false, payload);
    return TokKind::kDecimal;
  }
  for (const Keyword& kw : kKeywords) {
    if (identifier == kw.text) return kw.kind;
  }
  if (size_t end = MatchDimLabels(text_, tok_.begin); end != kNoMatch) {
    pos_ = end;
    tok_.str.assign(text_.substr(tok_.begin, pos_ - tok_.begin));
    return TokKind::kDimLabels;
  }
  tok_.str.assign(identifier);
  return TokKind::kIdent;
}

TokKind Lexer::LexPercent() {
  int c = Peek();
  if (!IsAlpha(c) && c != '_') return Error("expected a name after '%'", tok_.begin);
  size_t name_start = pos_;
  ++pos_;
  while (IsIdentifierChar(Peek())) ++pos_;
  tok_.str.assign(text_.substr(name_start, pos_ - name_start));
  return TokKind::kName;
}

bool Lexer::ConsumeNanPayload(size_t* pos, uint64_t* payload) {
  // \(0x[0-9a-fA-F]+\)
  size_t p = *pos;
  if (text_.substr(p, 3) != "(0x") return Error("malformed NaN payload, expected nan(0x...)", p), false;
  size_t digits_begin = p + 3;
  size_t q = digits_begin;
  while (q < text_.size() && IsHexDigit(text_[q])) ++q;
  if (q == digits_begin || q >= text_.size() || text_[q] != ')') {
    return Error("malformed NaN payload, expected nan(0x...)", p), false;
  }
  std::string_view hex = text_.substr(digits_begin, q - digits_begin);
  while (hex.size() > 1 && hex.front() == '0') hex.remove_prefix(1);
  uint64_t value = 0;
  if (hex.size() > 16) return Error("NaN payload out of range", p), false;
  std::from_chars(hex.data(), hex.data() + hex.size(), value, 16);
  if (value == 0 || value > kDoubleMantissaMask) return Error("NaN payload out of range", p), false;
  *payload = value;
  *pos = q + 1;
  return true;
}

TokKind Lexer::LexNumberOrPattern() {
  const size_t start = tok_.begin;
  if (size_t end = MatchFloat(text_, start); end != kNoMatch) {
    pos_ = end;
    tok_.decimal_val = ParseDoubleText(text_.substr(start, end - start));
    return TokKind::kDecimal;
  }
  if (size_t end = MatchDimLabels(text_, start); end != kNoMatch) {
    pos_ = end;
    tok_.str.assign(text_.substr(start, end - start));
    return TokKind::kDimLabels;
  }
  if (size_t end = MatchDxD(text_, start); end != kNoMatch) {
    pos_ = end;
    tok_.str.assign(text_.substr(start, end - start));
    return TokKind::kDxD;
  }
  if (size_t end = MatchPad(text_, start); end != kNoMatch) {
    pos_ = end;
    tok_.str.assign(text_.substr(start, end - start));
    return TokKind::kPad;
  }
  // [-]?[0-9]+ with overflow detection: negatives must fit int64, non-negatives uint64 (as XLA's lexer does).
  {
    size_t p = start;
    bool negative = p < text_.size() && text_[p] == '-';
    if (negative) ++p;
    size_t digits_end = MatchDigits(text_, p);
    if (digits_end != kNoMatch) {
      uint64_t magnitude = 0;
      bool overflow = false;
      for (size_t i = p; i < digits_end; ++i) {
        uint64_t d = static_cast<uint64_t>(text_[i] - '0');
        if (magnitude > (std::numeric_limits<uint64_t>::max() - d) / 10) {
          overflow = true;
          break;
        }
        magnitude = magnitude * 10 + d;
      }
      if (negative && magnitude > uint64_t{1} << 63) overflow = true;
      if (overflow) {
        pos_ = digits_end;
        return Error("integer literal out of range", start);
      }
      pos_ = digits_end;
      if (negative) {
        tok_.int_val =
            magnitude == uint64_t{1} << 63 ? std::numeric_limits<int64_t>::min() : -static_cast<int64_t>(magnitude);
      } else {
        tok_.int_val = static_cast<int64_t>(magnitude);
        tok_.int_exceeds_int64 = magnitude > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      }
      return TokKind::kInt;
    }
  }
  if (text_.substr(start, 4) == "-inf") {
    pos_ = start + 4;
    return TokKind::kNegInf;
  }
  if (text_.substr(start, 4) == "-nan") {
    size_t p = start + 4;
    uint64_t payload = kDoubleQuietNanBit;
    if (p < text_.size() && text_[p] == '(') {
      if (!ConsumeNanPayload(&p, &payload)) return TokKind::kError;
    }
    pos_ = p;
    tok_.decimal_val = NanWithSignAndPayload(true, payload);
    return TokKind::kDecimal;
  }
  return Error(std::string("unexpected character '") + text_[start] + "'", start);
}

TokKind Lexer::LexString() {
  const size_t start = tok_.begin;
  const char quote = text_[start];
  size_t p = start + 1;
  while (true) {
    if (p >= text_.size()) return Error("unterminated string", start);
    char c = text_[p];
    if (c == quote) break;
    if (c == '\\') {
      if (p + 1 >= text_.size() || text_[p + 1] == '\n') return Error("unterminated string", start);
      p += 2;
      continue;
    }
    ++p;
  }
  pos_ = p + 1;
  std::string_view raw = text_.substr(start + 1, p - start - 1);
  std::string error;
  if (!absl::CUnescape(absl::string_view(raw.data(), raw.size()), &tok_.str, &error)) {
    return Error("invalid escape sequence in string: " + error, start);
  }
  return TokKind::kString;
}

bool Lexer::LexBracedBlob() {
  if (tok_.kind != TokKind::kLbrace) return false;
  size_t p = tok_.begin;
  int64_t depth = 0;
  while (p < text_.size()) {
    char c = text_[p];
    if (c == '\\' && p + 1 < text_.size()) {
      // An escaped character outside a string: XLA prints Shardy's mesh text in frontend attributes with its
      // quotes escaped ({mesh = #sdy.mesh<[\"x\"=2]>}).
      p += 2;
      continue;
    }
    if (c == '"') {
      size_t q = p + 1;
      while (q < text_.size() && text_[q] != '"') {
        if (text_[q] == '\\') {
          if (q + 1 >= text_.size() || text_[q + 1] == '\n') return false;
          ++q;
        }
        ++q;
      }
      if (q >= text_.size()) return false;
      p = q + 1;
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}') --depth;
    ++p;
    if (depth == 0) break;
  }
  if (depth != 0) return false;
  tok_.kind = TokKind::kString;
  tok_.str.assign(text_.substr(tok_.begin, p - tok_.begin));
  tok_.end = p;
  pos_ = p;
  return true;
}

void Lexer::LexRawRun(std::string_view charset) {
  size_t p = tok_.begin;
  while (p < text_.size() && charset.find(text_[p]) != std::string_view::npos) ++p;
  tok_.kind = TokKind::kIdent;
  tok_.str.assign(text_.substr(tok_.begin, p - tok_.begin));
  tok_.end = p;
  pos_ = p;
}

}  // namespace xlac::hlo
