#include "ir/diagnostics.h"

#include <cassert>

#include "absl/strings/str_cat.h"

namespace xlac {

std::string_view SourceFile::Line(int32_t line) const {
  int32_t local = line - line_offset_;
  if (local < 1) return {};
  size_t pos = 0;
  for (int32_t i = 1; i < local; ++i) {
    size_t nl = text_.find('\n', pos);
    if (nl == std::string_view::npos) return {};
    pos = nl + 1;
  }
  size_t end = text_.find('\n', pos);
  std::string_view out = text_.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
  if (!out.empty() && out.back() == '\r') out.remove_suffix(1);
  return out;
}

void DiagnosticEngine::Report(Severity severity, SourceLoc loc, std::string message) {
  if (severity == Severity::kError) ++num_errors_;
  diagnostics_.push_back({severity, loc, std::move(message)});
}

std::string RenderDiagnostic(const Diagnostic& diag, const SourceFile& file) {
  const char* kind = diag.severity == Severity::kError     ? "error"
                          : diag.severity == Severity::kWarning ? "warning"
                                                                : "note";
  std::string out;
  if (diag.loc.known()) {
    absl::StrAppend(&out, file.name(), ":", diag.loc.line, ":", diag.loc.col, ": ", kind, ": ", diag.message, "\n");
    std::string_view line = file.Line(diag.loc.line);
    std::string line_text(line.data(), line.size());
    absl::StrAppend(&out, line_text, "\n");
    // Tabs in the prefix are kept so the caret lines up in a terminal.
    std::string caret;
    for (int32_t i = 1; i < diag.loc.col && static_cast<size_t>(i - 1) < line.size(); ++i) {
      caret += line[i - 1] == '\t' ? '\t' : ' ';
    }
    absl::StrAppend(&out, caret, "^\n");
  } else {
    absl::StrAppend(&out, file.name(), ": ", kind, ": ", diag.message, "\n");
  }
  out += diag.foreign_notes;
  return out;
}

void DiagnosticEngine::AttachForeignNote(std::string rendered) {
  assert(!diagnostics_.empty());
  diagnostics_.back().foreign_notes += rendered;
}

std::string DiagnosticEngine::Render(const SourceFile& file) const {
  std::string out;
  for (const Diagnostic& d : diagnostics_) out += RenderDiagnostic(d, file);
  return out;
}

std::optional<LocatedMessage> SplitLeadingLocation(std::string_view message) {
  size_t pos = 0;
  auto number = [&](int32_t& value) {
    const size_t begin = pos;
    int64_t n = 0;
    while (pos < message.size() && message[pos] >= '0' && message[pos] <= '9' && n < (int64_t{1} << 30)) {
      n = n * 10 + (message[pos++] - '0');
    }
    value = static_cast<int32_t>(n);
    return pos > begin;
  };
  int32_t line = 0, col = 0;
  if (!number(line) || pos >= message.size() || message[pos++] != ':' || !number(col) ||
      message.compare(pos, 2, ": ") != 0 || line <= 0) {
    return std::nullopt;
  }
  return LocatedMessage{SourceLoc{line, col}, std::string(message.substr(pos + 2))};
}

}  // namespace xlac
