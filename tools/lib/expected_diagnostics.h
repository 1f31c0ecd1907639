// MLIR-style diagnostic verification (--verify-diagnostics).
//
// A source text announces the diagnostics it must produce with comments:
//   // expected-error {{substring}}        on the line of the error
//   // expected-error@+1 {{substring}}     on the next line (@-N: N lines above; @N: absolute line N)
//   // expected-error@unknown {{...}}      a diagnostic without a location
// and likewise expected-warning / expected-note. Checking succeeds iff every expectation matched a diagnostic of
// that severity on that line whose message contains the substring, and every diagnostic matched an expectation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/diagnostics.h"

namespace xlac {

struct ExpectedDiagnostic {
  Severity severity = Severity::kError;
  int32_t line = 0;  // whole-file line (as in SourceLoc) the diagnostic must be on; 0 for @unknown
  std::string substring;
  SourceLoc directive_loc;  // where the expected-* comment is, for reporting
};

// Extracts the expectations from `file`'s text. Malformed directives (missing {{...}}, a bad @ offset, a target
// line outside the text) are reported to `problems` at the directive.
std::vector<ExpectedDiagnostic> ParseExpectedDiagnostics(const SourceFile& file, DiagnosticEngine& problems);

// Matches `produced` against `expected`. Each unmatched expectation and each unexpected diagnostic is reported to
// `problems` (as errors at the relevant location). Returns true iff everything matched and `problems` got nothing.
bool CheckExpectedDiagnostics(const std::vector<ExpectedDiagnostic>& expected, const std::vector<Diagnostic>& produced,
                              DiagnosticEngine& problems);

}  // namespace xlac
