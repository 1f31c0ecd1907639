// Entry points: text -> syntax tree (Parser) -> HLO module (Lowerer).
#include "frontend/stablehlo/parser.h"

#include "frontend/stablehlo/lower_impl.h"
#include "frontend/stablehlo/parser_impl.h"

namespace xlac {

std::unique_ptr<Module> ParseStableHloModule(const SourceFile& file, DiagnosticEngine& diags,
                                             const StableHloParseOptions& options) {
  const size_t errors_before = diags.diagnostics().size();
  shlo::Parser parser(file, diags, options);
  shlo::ModuleAst ast;
  std::unique_ptr<Module> module;
  if (parser.ParseFile(&ast)) {
    shlo::Lowerer lowerer(parser, file, diags, options);
    module = lowerer.Lower(ast);
  }
  bool reported = false;
  for (size_t i = errors_before; i < diags.diagnostics().size(); ++i) {
    if (diags.diagnostics()[i].severity == Severity::kError) reported = true;
  }
  if (module == nullptr) {
    // Every failure path reports; this only guards against a silent one.
    if (!reported) diags.Error({}, "failed to parse the StableHLO module");
    return nullptr;
  }
  return module;
}

absl::StatusOr<std::unique_ptr<Module>> ParseStableHloModule(std::string_view text, std::string_view source_name,
                                                             const StableHloParseOptions& options) {
  SourceFile file{std::string(source_name), text};
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = ParseStableHloModule(file, diags, options);
  if (module == nullptr) return absl::InvalidArgumentError(diags.Render(file));
  return module;
}

}  // namespace xlac
