#include "frontend/hlo/sharding_text.h"

#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"

namespace xlac {

std::optional<Sharding> ParseShardingText(std::string_view text, DiagnosticEngine& diags) {
  SourceFile file("<sharding>", text);
  hlo::Parser parser(file, diags, HloParseOptions{});
  parser.Next();
  Sharding sharding;
  if (!parser.ParseSharding(&sharding)) return std::nullopt;
  if (parser.kind() != hlo::TokKind::kEof) {
    parser.TokenError(fmt::format("unexpected text after the sharding: '{}'",
                                  parser.SourceText(parser.tok().begin, parser.tok().end)));
    return std::nullopt;
  }
  return sharding;
}

}  // namespace xlac
