#include "frontend/module_input.h"

#include "frontend/hlo/parser.h"
#include "frontend/stablehlo/hlo_sdy_import.h"
#include "frontend/stablehlo/parser.h"

namespace xlac {
namespace {

std::string_view SkipBlanksAndComments(std::string_view text) {
  while (true) {
    size_t start = text.find_first_not_of(" \t\r\n");
    if (start == std::string_view::npos) return {};
    text.remove_prefix(start);
    if (!text.starts_with("//")) return text;
    size_t end = text.find('\n');
    if (end == std::string_view::npos) return {};
    text.remove_prefix(end + 1);
  }
}

}  // namespace

ModuleFormat DetectModuleFormat(std::string_view filename, std::string_view text) {
  if (filename.ends_with(".mlir")) return ModuleFormat::kStableHlo;
  std::string_view start = SkipBlanksAndComments(text);
  auto word = [&](std::string_view w) {
    return start.starts_with(w) &&
           (start.size() == w.size() || std::string_view(" \t\r\n@{(").find(start[w.size()]) != std::string_view::npos);
  };
  if (word("module") || word("func.func") || start.starts_with("\"builtin.module\"") ||
      start.starts_with("\"func.func\"") || start.starts_with("#")) {
    return ModuleFormat::kStableHlo;
  }
  return ModuleFormat::kHlo;
}

std::unique_ptr<Module> ParseModuleAnyFormat(const SourceFile& file, DiagnosticEngine& diags,
                                             const HloParseOptions& hlo_options,
                                             const std::vector<Shape>& entry_argument_shapes) {
  std::unique_ptr<Module> module;
  if (DetectModuleFormat(file.name(), file.text()) == ModuleFormat::kStableHlo) {
    StableHloParseOptions options;
    options.entry_argument_shapes = entry_argument_shapes;
    module = ParseStableHloModule(file, diags, options);
  } else {
    module = ParseHloModule(file, diags, hlo_options);
    // HLO printed with Shardy on keeps Shardy's shardings and shard_maps in frontend attributes.
    if (module != nullptr && !ImportHloShardyRoundTrip(*module, diags)) module = nullptr;
  }
  if (module == nullptr && !diags.has_errors()) diags.Error(SourceLoc{}, "failed to parse the module");
  return module;
}

}  // namespace xlac
