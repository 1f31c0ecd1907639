// libFuzzer target for the StableHLO front end: parse MLIR text, verify, print the HLO it became, re-parse that.
//
// Parse failures and verifier errors are normal outcomes for fuzzed text. What must never happen: a crash or
// sanitizer report anywhere, a failed parse that reports no error, a failed verification that reports no error, or
// HLO printed from a StableHLO module that the HLO parser rejects (the lowering produced something HLO text cannot
// express).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "frontend/stablehlo/parser.h"
#include "ir/diagnostics.h"
#include "passes/verifier.h"

namespace {

[[noreturn]] void Fail(const char* what, std::string_view input, std::string_view printed = {},
                       const std::string& diagnostics = {}) {
  std::fprintf(stderr, "stablehlo_parser_fuzzer: %s\n--- input ---\n%.*s\n", what, static_cast<int>(input.size()),
               input.data());
  if (!printed.empty()) {
    std::fprintf(stderr, "--- printed HLO ---\n%.*s\n--- re-parse ---\n%s", static_cast<int>(printed.size()),
                 printed.data(), diagnostics.c_str());
  }
  std::fprintf(stderr, "--- end ---\n");
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const xlac::StableHloParseOptions options = [] {
    xlac::StableHloParseOptions o;
    // Sizes come from the input; keep them far below libFuzzer's malloc limit so a huge dense<> splat is a parse
    // error rather than an out-of-memory report.
    o.max_literal_bytes = int64_t{1} << 24;
    return o;
  }();
  const std::string_view text(reinterpret_cast<const char*>(data), size);

  xlac::SourceFile file("fuzz.mlir", text);
  xlac::DiagnosticEngine diags;
  std::unique_ptr<xlac::Module> module = xlac::ParseStableHloModule(file, diags, options);
  if (module == nullptr) {
    if (!diags.has_errors()) Fail("parse failed without reporting an error", text);
    return 0;
  }
  xlac::DiagnosticEngine verify_diags;
  if (!xlac::VerifyModule(*module, verify_diags)) {
    if (!verify_diags.has_errors()) Fail("verification failed without reporting an error", text);
    return 0;
  }
  const std::string printed = xlac::PrintModule(*module);
  xlac::SourceFile printed_file("printed.hlo", printed);
  xlac::DiagnosticEngine reparse_diags;
  if (xlac::ParseHloModule(printed_file, reparse_diags) == nullptr) {
    Fail("HLO printed from the module does not parse", text, printed, reparse_diags.Render(printed_file));
  }
  return 0;
}
