// The file metadata section MLIR prints after the module, `{-# dialect_resources: { builtin: { key: "0x..." } } #-}`,
// whose blobs hold the values of `dense_resource<key>` literals (torch-mlir's weights). It is read before the
// module so the literals can be built where they are used; the top level then skips it.
#include "fmt/format.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac::shlo {
namespace {

bool AtLineStart(std::string_view text, size_t p) {
  while (p > 0 && (text[p - 1] == ' ' || text[p - 1] == '\t')) --p;
  return p == 0 || text[p - 1] == '\n' || text[p - 1] == '\r';
}

}  // namespace

bool Parser::ParseResourceSections() {
  const std::string_view t = text();
  for (size_t p = t.find("{-#"); p != std::string_view::npos; p = t.find("{-#", p + 3)) {
    if (!AtLineStart(t, p)) continue;
    const size_t close = t.find("#-}", p + 3);
    if (close == std::string_view::npos) return Error(p, "unterminated file metadata: '{-#' without '#-}'");
    resource_sections_.emplace_back(p, close + 3);
    ResetTo(p + 3);
    // `name: value` entries; only dialect_resources holds anything we read.
    while (pos() < close) {
      if (kind() != Tok::kBareId) {
        return TokenError(fmt::format("expected a file metadata key, but found {}", DescribeToken()));
      }
      const std::string section = tok().str;
      Next();
      if (!Expect(Tok::kColon, "after the file metadata key") ||
          !Expect(Tok::kLBrace, "to start the file metadata entry")) {
        return false;
      }
      while (!Eat(Tok::kRBrace)) {
        if (pos() >= close) return TokenError("expected '}' to end the file metadata entry");
        // dialect: { key: value, ... }
        if (kind() != Tok::kBareId && kind() != Tok::kString) {
          return TokenError(fmt::format("expected a dialect name, but found {}", DescribeToken()));
        }
        Next();
        if (!Expect(Tok::kColon, "after the dialect name") || !Expect(Tok::kLBrace, "to start the resources")) {
          return false;
        }
        while (!Eat(Tok::kRBrace)) {
          if (pos() >= close) return TokenError("expected '}' to end the resources");
          if (kind() != Tok::kBareId && kind() != Tok::kString) {
            return TokenError(fmt::format("expected a resource name, but found {}", DescribeToken()));
          }
          const std::string key = tok().str;
          Next();
          if (!Expect(Tok::kColon, "after the resource name")) return false;
          if (kind() == Tok::kString) {
            const std::string& value = tok().str;
            if (section == "dialect_resources" && value.size() >= 2 && value[0] == '0' &&
                (value[1] == 'x' || value[1] == 'X') && !resource_blobs_.count(key)) {
              // The blob stays in the file text: `"0x` starts two bytes after the token, escapes never occur in it.
              resource_blobs_[key] = {t.substr(tok().begin + 3, value.size() - 2), tok().begin};
            }
            Next();
          } else if (IsKeyword("true") || IsKeyword("false") || kind() == Tok::kInt) {
            Next();
          } else {
            return TokenError(fmt::format("expected a resource value, but found {}", DescribeToken()));
          }
          if (!Eat(Tok::kComma) && kind() != Tok::kRBrace) {
            return TokenError(fmt::format("expected ',' or '}}' after the resource, but found {}", DescribeToken()));
          }
        }
        if (!Eat(Tok::kComma) && kind() != Tok::kRBrace) {
          return TokenError(
              fmt::format("expected ',' or '}}' after the dialect's resources, but found {}", DescribeToken()));
        }
      }
      Eat(Tok::kComma);
    }
    if (pos() != close) return Error(pos(), "expected '#-}' to end the file metadata");
  }
  return true;
}

bool Parser::SkipResourceSection() {
  for (const auto& [begin, end] : resource_sections_) {
    if (pos() != begin) continue;
    ResetTo(end);
    prev_end_ = end;
    return true;
  }
  return false;
}

}  // namespace xlac::shlo
