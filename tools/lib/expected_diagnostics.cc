#include "tools/lib/expected_diagnostics.h"

#include <charconv>
#include <string_view>

namespace xlac {
namespace {

constexpr std::string_view kPrefix = "expected-";

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

bool ConsumeSeverity(std::string_view& rest, Severity& severity) {
  for (Severity s : {Severity::kError, Severity::kWarning, Severity::kNote}) {
    if (rest.starts_with(SeverityName(s))) {
      severity = s;
      rest.remove_prefix(SeverityName(s).size());
      return true;
    }
  }
  return false;
}

int32_t LineCount(std::string_view text) {
  int32_t lines = 0;
  for (char c : text) lines += c == '\n';
  if (!text.empty() && text.back() != '\n') ++lines;
  return lines;
}

// Parses the "@..." target after a severity (already consumed) into the expected line; returns false on bad syntax.
bool ConsumeTarget(std::string_view& rest, int32_t directive_line, int32_t& line) {
  line = directive_line;
  // MLIR allows blanks before the target (`expected-error @+1 {{...}}`).
  const size_t blanks = rest.find_first_not_of(" \t");
  if (blanks != std::string_view::npos && blanks > 0 && rest[blanks] == '@') rest.remove_prefix(blanks);
  if (!rest.starts_with("@")) return true;
  rest.remove_prefix(1);
  if (rest.starts_with("unknown")) {
    rest.remove_prefix(7);
    line = 0;
    return true;
  }
  if (rest.starts_with("above")) {
    rest.remove_prefix(5);
    line = directive_line - 1;
    return true;
  }
  if (rest.starts_with("below")) {
    rest.remove_prefix(5);
    line = directive_line + 1;
    return true;
  }
  int sign = 0;
  if (rest.starts_with("+")) sign = 1;
  if (rest.starts_with("-")) sign = -1;
  if (sign != 0) rest.remove_prefix(1);
  int32_t n = 0;
  auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + rest.size(), n);
  if (ec != std::errc() || ptr == rest.data()) return false;
  rest.remove_prefix(ptr - rest.data());
  line = sign == 0 ? n : directive_line + sign * n;
  return true;
}

}  // namespace

std::vector<ExpectedDiagnostic> ParseExpectedDiagnostics(const SourceFile& file, DiagnosticEngine& problems) {
  std::vector<ExpectedDiagnostic> result;
  std::string_view text = file.text();
  int32_t num_lines = LineCount(text);
  int32_t line_number = 0;
  size_t line_start = 0;
  while (line_start < text.size()) {
    size_t line_end = text.find('\n', line_start);
    if (line_end == std::string_view::npos) line_end = text.size();
    std::string_view line = text.substr(line_start, line_end - line_start);
    ++line_number;
    size_t pos = 0;
    while ((pos = line.find(kPrefix, pos)) != std::string_view::npos) {
      // Locations are in whole-file lines (SourceFile::line_offset), like the diagnostics they are compared with.
      int32_t file_line = line_number + file.line_offset();
      SourceLoc directive_loc{file_line, static_cast<int32_t>(pos) + 1};
      std::string_view rest = line.substr(pos + kPrefix.size());
      pos += kPrefix.size();
      ExpectedDiagnostic expected;
      expected.directive_loc = directive_loc;
      // Only a whole word counts, so prose such as "expected-errors" is not a directive.
      if (!ConsumeSeverity(rest, expected.severity)) continue;
      if (!rest.empty() && rest[0] != '@' && rest[0] != ' ' && rest[0] != '\t' && rest[0] != '{') continue;
      std::string directive = "expected-" + std::string(SeverityName(expected.severity));
      if (!ConsumeTarget(rest, file_line, expected.line)) {
        problems.Error(directive_loc, "bad line offset after '" + directive + "@' (use @+N, @-N, @N or @unknown)");
        continue;
      }
      if (expected.line != 0 &&
          (expected.line <= file.line_offset() || expected.line > file.line_offset() + num_lines)) {
        problems.Error(directive_loc,
                       "'" + directive + "' refers to line " + std::to_string(expected.line) + ", outside this input");
        continue;
      }
      while (rest.starts_with(" ") || rest.starts_with("\t")) rest.remove_prefix(1);
      size_t close = rest.find("}}");
      if (!rest.starts_with("{{") || close == std::string_view::npos) {
        problems.Error(directive_loc, "expected '{{message}}' after '" + directive + "'");
        continue;
      }
      expected.substring = std::string(rest.substr(2, close - 2));
      result.push_back(std::move(expected));
    }
    line_start = line_end + 1;
  }
  return result;
}

bool CheckExpectedDiagnostics(const std::vector<ExpectedDiagnostic>& expected, const std::vector<Diagnostic>& produced,
                              DiagnosticEngine& problems) {
  std::vector<bool> matched(expected.size(), false);
  bool ok = true;
  for (const Diagnostic& diag : produced) {
    int32_t line = diag.loc.known() ? diag.loc.line : 0;
    bool found = false;
    for (size_t i = 0; i < expected.size() && !found; ++i) {
      const ExpectedDiagnostic& e = expected[i];
      if (matched[i] || e.severity != diag.severity || e.line != line) continue;
      if (diag.message.find(e.substring) == std::string::npos) continue;
      matched[i] = true;
      found = true;
    }
    if (!found) {
      problems.Error(diag.loc, "unexpected " + std::string(SeverityName(diag.severity)) + ": " + diag.message);
      ok = false;
    }
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (matched[i]) continue;
    const ExpectedDiagnostic& e = expected[i];
    problems.Error(e.directive_loc,
                   "expected " + std::string(SeverityName(e.severity)) + " \"" + e.substring + "\" was not produced");
    ok = false;
  }
  return ok;
}

}  // namespace xlac
