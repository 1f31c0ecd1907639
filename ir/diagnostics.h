// Source locations and user-facing diagnostics: "file:line:col: error: message", then the source line and a caret.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace xlac {

// 1-based line and column into the text an object was parsed from; line 0 means "unknown".
struct SourceLoc {
  int32_t line = 0;
  int32_t col = 0;
  bool known() const { return line > 0; }
};

enum class Severity : uint8_t { kError, kWarning, kNote };

struct Diagnostic {
  Severity severity = Severity::kError;
  SourceLoc loc;
  std::string message;
  // Appended verbatim after the rendered diagnostic: notes about other files (a C++ kernel's declaration, see
  // passes/custom_kernels.h) that their owner rendered, since this file's SourceFile cannot.
  std::string foreign_notes;
};

// A named source text (a file, "<stdin>", or one chunk of a --split-input-file run). Line numbers of a chunk are
// reported relative to the whole file via `line_offset`.
class SourceFile {
 public:
  SourceFile(std::string name, std::string_view text, int32_t line_offset = 0)
      : name_(std::move(name)), text_(text), line_offset_(line_offset) {}
  const std::string& name() const { return name_; }
  std::string_view text() const { return text_; }
  int32_t line_offset() const { return line_offset_; }
  // The text of 1-based `line` (without its newline); empty if out of range.
  std::string_view Line(int32_t line) const;

 private:
  std::string name_;
  std::string_view text_;
  int32_t line_offset_;
};

// Collects diagnostics; renders them against a SourceFile.
class DiagnosticEngine {
 public:
  void Report(Severity severity, SourceLoc loc, std::string message);
  void Error(SourceLoc loc, std::string message) { Report(Severity::kError, loc, std::move(message)); }
  void Note(SourceLoc loc, std::string message) { Report(Severity::kNote, loc, std::move(message)); }
  // Appends rendered text to the last diagnostic (Diagnostic::foreign_notes). Precondition: one was reported.
  void AttachForeignNote(std::string rendered);
  bool has_errors() const { return num_errors_ > 0; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  void clear() { diagnostics_.clear(); num_errors_ = 0; }

  // "file:line:col: error: message\n<source line>\n<spaces>^\n" for each diagnostic (no source line if unknown).
  std::string Render(const SourceFile& file) const;

 private:
  std::vector<Diagnostic> diagnostics_;
  int num_errors_ = 0;
};

std::string RenderDiagnostic(const Diagnostic& diag, const SourceFile& file);

// Statuses about one instruction carry its location as a leading "line:col: " (library code has no
// DiagnosticEngine); drivers split it off to report the rest at that location. nullopt without such a prefix.
struct LocatedMessage {
  SourceLoc loc;
  std::string message;
};
std::optional<LocatedMessage> SplitLeadingLocation(std::string_view message);

}  // namespace xlac
