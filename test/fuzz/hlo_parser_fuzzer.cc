// libFuzzer target for the HLO text front end: parse, verify, print, re-parse.
//
// Parse failures and verifier errors are normal outcomes for fuzzed text. What must never happen: a crash or
// sanitizer report anywhere, a failed parse that reports no error, a failed verification that reports no error, or
// printed output of a parsed module that does not parse again (the printer and parser disagree on the grammar).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "ir/diagnostics.h"
#include "passes/verifier.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, std::string_view printed = {},
                       const std::string& diagnostics = {}) {
  std::fprintf(stderr, "hlo_parser_fuzzer: %s\n--- input ---\n%.*s\n", what, static_cast<int>(input.size()),
               input.data());
  if (!printed.empty()) {
    std::fprintf(stderr, "--- printed ---\n%.*s\n--- re-parse ---\n%s", static_cast<int>(printed.size()),
                 printed.data(), diagnostics.c_str());
  }
  std::fprintf(stderr, "--- end ---\n");
  std::abort();
}

xlac::HloParseOptions FuzzParseOptions() {
  xlac::HloParseOptions options;
  // Literal sizes come from the input; keep them well below libFuzzer's malloc limit so a large constant is a
  // parse error rather than an out-of-memory report.
  options.max_literal_bytes = int64_t{1} << 24;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const xlac::HloParseOptions options = FuzzParseOptions();
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  xlac::SourceFile file("fuzz.hlo", text);
  xlac::DiagnosticEngine diags;
  std::unique_ptr<xlac::Module> module = xlac::ParseHloModule(file, diags, options);
  if (module == nullptr) {
    if (!diags.has_errors()) Fail("parse failed without reporting an error", text);
    return 0;
  }

  xlac::DiagnosticEngine verify_diags;
  if (!xlac::VerifyModule(*module, verify_diags) && !verify_diags.has_errors()) {
    Fail("verification failed without reporting an error", text);
  }

  // Printing must work on any parsed module, verified or not.
  const std::string printed = xlac::PrintModule(*module);
  xlac::SourceFile printed_file("printed.hlo", printed);
  xlac::DiagnosticEngine reparse_diags;
  if (xlac::ParseHloModule(printed_file, reparse_diags, options) == nullptr) {
    Fail("printed module does not parse again", text, printed, reparse_diags.Render(printed_file));
  }
  return 0;
}
