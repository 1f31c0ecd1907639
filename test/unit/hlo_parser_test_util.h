// Helpers shared by the HLO parser's unit tests: parse text named test.hlo, keep the diagnostics, and check where
// an error is reported.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/module.h"

namespace xlac::hlo_parser_testing {

struct Parsed {
  std::unique_ptr<Module> module;
  std::vector<Diagnostic> diags;
  std::string rendered;
};

inline Parsed Parse(std::string_view text, const HloParseOptions& options = {}, int32_t line_offset = 0) {
  Parsed p;
  SourceFile file("test.hlo", text, line_offset);
  DiagnosticEngine diags;
  p.module = ParseHloModule(file, diags, options);
  p.diags = diags.diagnostics();
  p.rendered = diags.Render(file);
  return p;
}

// Parses `text` and returns the module, failing the test with the rendered diagnostics if it does not parse.
inline std::unique_ptr<Module> MustParse(std::string_view text) {
  Parsed p = Parse(text);
  EXPECT_NE(p.module, nullptr) << p.rendered;
  return std::move(p.module);
}

// The parse must fail with its first error at line:col and a message containing `part`.
inline ::testing::AssertionResult FailsAt(std::string_view text, int line, int col, std::string_view part,
                                          const HloParseOptions& options = {}) {
  Parsed p = Parse(text, options);
  if (p.module != nullptr) return ::testing::AssertionFailure() << "parsed successfully";
  for (const Diagnostic& d : p.diags) {
    if (d.severity != Severity::kError) continue;
    if (d.loc.line != line || d.loc.col != col || d.message.find(part) == std::string::npos) {
      return ::testing::AssertionFailure()
             << "expected error at " << line << ":" << col << " containing '" << part << "', got:\n"
             << p.rendered;
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "no error reported";
}

inline const Instruction* Find(const Module& m, std::string_view name) {
  for (const auto& c : m.computations()) {
    if (Instruction* i = c->FindInstruction(name)) return i;
  }
  return nullptr;
}

inline Shape S(std::string_view text) {
  absl::StatusOr<Shape> s = ParseShape(text);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? *s : Shape();
}

}  // namespace xlac::hlo_parser_testing
