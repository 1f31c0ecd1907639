// HLO text parser: entry points, module header, computations and instruction lists. Per-opcode instruction rules
// are in parse_instruction.cc; attribute values, shapes, literals and shardings in the other parse_*.cc files.
#include "frontend/hlo/parser.h"

#include <algorithm>
#include <charconv>
#include <utility>

#include "fmt/format.h"
#include "frontend/hlo/parse_impl.h"

namespace xlac {
namespace hlo {

std::string NameUniquer::GetUniqueName(std::string_view prefix) {
  std::string root(prefix.empty() ? std::string_view("name") : prefix);
  bool has_numeric_suffix = false;
  int64_t suffix = 0;
  size_t separator = root.rfind('.');
  if (separator != std::string::npos && separator > 0 && separator + 1 < root.size()) {
    std::string_view digits = std::string_view(root).substr(separator + 1);
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc() && ptr == digits.data() + digits.size()) {
      has_numeric_suffix = true;
      suffix = value;
      root.resize(separator);
    }
  }
  IdGenerator& gen = generators_[root];
  if (!gen.used.insert(suffix).second) {
    while (!gen.used.insert(gen.next).second) ++gen.next;
    suffix = gen.next++;
  }
  if (suffix == 0) return has_numeric_suffix ? root + ".0" : root;
  return fmt::format("{}.{}", root, suffix);
}

bool ShapesCompatible(const Shape& a, const Shape& b) {
  if (a.element_type != b.element_type) return false;
  if (a.IsTuple()) {
    if (a.tuple_shapes.size() != b.tuple_shapes.size()) return false;
    for (size_t i = 0; i < a.tuple_shapes.size(); ++i) {
      if (!ShapesCompatible(a.tuple_shapes[i], b.tuple_shapes[i])) return false;
    }
    return true;
  }
  return a.dimensions == b.dimensions;
}

int64_t LeafCount(const Shape& shape) {
  if (!shape.IsTuple()) return 1;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes) count += LeafCount(element);
  return count;
}

Parser::Parser(const SourceFile& file, DiagnosticEngine& diags, const HloParseOptions& options)
    : file_(file), diags_(diags), options_(options), lines_(file.text(), file.line_offset()), lexer_(file.text()) {}

void Parser::Next() {
  prev_end_ = lexer_.tok().end;
  lexer_.Lex();
}

bool Parser::EatIfPresent(TokKind k) {
  if (kind() != k) return false;
  Next();
  return true;
}

bool Parser::Error(size_t offset, std::string message) {
  diags_.Error(Loc(offset), std::move(message));
  return false;
}

bool Parser::TokenError(std::string message) {
  if (kind() == TokKind::kError) return Error(tok().error_pos, tok().error);
  return Error(pos(), std::move(message));
}

void Parser::Note(size_t offset, std::string message) { diags_.Note(Loc(offset), std::move(message)); }

namespace {

// "'foo'" for tokens with text, the kind's description otherwise; used in "expects X, but sees Y".
std::string Describe(const Token& tok, std::string_view text) {
  switch (tok.kind) {
    case TokKind::kEof:
    case TokKind::kError:
      return std::string(TokKindDescription(tok.kind));
    default: {
      std::string_view spelling = text.substr(tok.begin, std::min<size_t>(tok.end - tok.begin, 40));
      return fmt::format("'{}'", spelling);
    }
  }
}

}  // namespace

bool Parser::Expect(TokKind k, std::string_view context) {
  if (kind() == k) {
    Next();
    return true;
  }
  return TokenError(
      fmt::format("expects {} {}, but sees {}", TokKindDescription(k), context, Describe(tok(), lexer_.text())));
}

bool Parser::DepthExceeded() {
  return Error(pos(), fmt::format("maximum nesting depth ({}) exceeded", options_.max_nesting_depth));
}

Instruction* Parser::FindInstruction(const std::string& name) {
  auto it = scope().names.find(name);
  return it == scope().names.end() ? nullptr : it->second.first;
}

// ---------------------------------------------------------------------------------------------------------------
// Module

std::unique_ptr<Module> Parser::ParseModule() {
  const size_t errors_before = diags_.diagnostics().size();
  auto fail = [&]() -> std::unique_ptr<Module> {
    // Every failure path reports; this only guards against a silent one.
    bool reported = false;
    for (size_t i = errors_before; i < diags_.diagnostics().size(); ++i) {
      if (diags_.diagnostics()[i].severity == Severity::kError) reported = true;
    }
    if (!reported) Error(pos(), "failed to parse HLO module");
    return nullptr;
  };

  Next();
  std::string name = options_.default_module_name;
  ModuleConfig config;
  if (kind() == TokKind::kw_HloModule) {
    if (!ParseHloModuleHeader(&config, &name)) return fail();
  } else if (!(kind() == TokKind::kw_ENTRY || ((kind() == TokKind::kIdent || kind() == TokKind::kName) &&
                                               (LookAhead() == TokKind::kLbrace || LookAhead() == TokKind::kLparen)))) {
    TokenError(fmt::format("expects 'HloModule' or a computation, but sees {}", Describe(tok(), lexer_.text())));
    return fail();
  }
  if (!ParseStackFrameIndex(&config)) return fail();

  Computation* entry = nullptr;
  size_t entry_pos = 0;
  do {
    if (!ParseComputation(&entry, &entry_pos)) return fail();
  } while (kind() != TokKind::kEof);

  auto module = std::make_unique<Module>(name);
  module->set_source_name(file_.name());
  module->mutable_config() = std::move(config);
  Computation* last = computations_.back().get();
  for (auto& comp : computations_) module->AddComputation(std::move(comp));
  computations_.clear();
  module->set_entry_computation(entry != nullptr ? entry : last);
  if (!CheckModule(module.get())) return fail();
  if (!options_.strict) RelaxMixedAllReduceLayoutConstraints(module.get());
  return module;
}

// XLA's verifier rejects a module that mixes layout-constrained and unconstrained all-reduces, but PyTorch/XLA's
// dumps on Neuron write both (the gradient all-reduce constrained, a clipping norm's not). The constraint only pins
// the operands' layouts, which a program's values do not depend on: drop it from every all-reduce, with one warning
// at the first constrained one (--strict leaves the module to the verifier's rejection).
void Parser::RelaxMixedAllReduceLayoutConstraints(Module* module) {
  const Instruction* constrained = nullptr;
  bool unconstrained = false;
  for (const auto& comp : module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kAllReduce && inst->opcode() != Opcode::kAllReduceStart) continue;
      if (!inst->BoolAttr("constrain_layout", false)) {
        unconstrained = true;
      } else if (constrained == nullptr) {
        constrained = inst.get();
      }
    }
  }
  if (constrained == nullptr || !unconstrained) return;
  diags_.Report(Severity::kWarning, constrained->loc(),
                "constrain_layout=true is dropped from every all-reduce: the module mixes layout-constrained and "
                "unconstrained all-reduces, which XLA's verifier rejects (so does --strict); the constraint only pins "
                "layouts");
  for (const auto& comp : module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kAllReduce || inst->opcode() == Opcode::kAllReduceStart) {
        inst->mutable_attrs().Erase("constrain_layout");
      }
    }
  }
}

bool Parser::ParseHloModuleHeader(ModuleConfig* config, std::string* name) {
  Next();  // HloModule
  if (!ParseName(name)) return false;
  absl::flat_hash_set<std::string> seen;
  while (EatIfPresent(TokKind::kComma)) {
    size_t attr_pos = pos();
    std::string attr;
    if (!ParseAttributeName(&attr)) return false;
    if (!seen.insert(attr).second) return Error(attr_pos, fmt::format("attribute {} already exists", attr));
    if (!ParseModuleAttribute(attr, attr_pos, config)) return false;
  }
  return true;
}

bool Parser::ParseModuleAttribute(const std::string& name, size_t name_pos, ModuleConfig* config) {
  if (name == "is_scheduled") return ParseBool(&config->is_scheduled);
  if (name == "replica_count") return (config->replica_count_given = true) && ParseInt64(&config->replica_count);
  if (name == "num_partitions") return (config->num_partitions_given = true) && ParseInt64(&config->num_partitions);
  if (name == "input_output_alias") return ParseInputOutputAlias(&config->input_output_alias);
  if (name == "buffer_donor") return ParseBufferDonor(&config->buffer_donor);
  if (name == "entry_computation_layout") {
    ComputationLayout layout;
    if (!ParseEntryComputationLayout(&layout)) return false;
    config->entry_computation_layout = std::move(layout);
    return true;
  }
  if (name == "frontend_attributes") return ParseFrontendAttributes(&config->frontend_attributes);
  if (name == "allow_spmd_sharding_propagation_to_parameters") {
    return ParseBoolListOrBool(&config->allow_spmd_sharding_propagation_to_parameters);
  }
  if (name == "allow_spmd_sharding_propagation_to_output") {
    return ParseBoolListOrBool(&config->allow_spmd_sharding_propagation_to_output);
  }
  // Accepted by XLA but without a dedicated field here: kept verbatim.
  if (name == "alias_passthrough_params") {
    size_t begin = pos();
    bool value;
    if (!ParseBool(&value)) return false;
    config->extra_attributes.emplace_back(name, std::string(SourceText(begin, prev_end())));
    return true;
  }
  if (name == "origin_recovery_table") {
    std::string raw;
    if (!ParseBracedBlob(&raw)) return false;
    config->extra_attributes.emplace_back(name, std::move(raw));
    return true;
  }
  return Error(name_pos, fmt::format("unexpected attribute \"{}\" in the HloModule header", name));
}

bool Parser::ParseEntryComputationLayout(ComputationLayout* out) {
  if (!Expect(TokKind::kLbrace, "at the start of the entry computation layout") ||
      !Expect(TokKind::kLparen, "before the parameter shape list")) {
    return false;
  }
  if (kind() != TokKind::kRparen) {
    do {
      Shape shape;
      if (!ParseShape(&shape)) return false;
      out->parameters.push_back(std::move(shape));
    } while (EatIfPresent(TokKind::kComma));
  }
  return Expect(TokKind::kRparen, "at the end of the parameter shape list") &&
         Expect(TokKind::kArrow, "before the result shape") && ParseShape(&out->result) &&
         Expect(TokKind::kRbrace, "at the end of the entry computation layout");
}

// input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {}) }
bool Parser::ParseInputOutputAlias(std::vector<InputOutputAlias>* out) {
  if (!Expect(TokKind::kLbrace, "at the start of the aliasing description")) return false;
  constexpr std::string_view kFormat = "(expected <output_shape_index>: (<param>, <param_shape_index>[, kind]))";
  while (kind() != TokKind::kRbrace) {
    InputOutputAlias alias;
    const size_t entry_pos = pos();
    if (!ParseShapeIndex(&alias.output_index) || !Expect(TokKind::kColon, kFormat) ||
        !Expect(TokKind::kLparen, kFormat) || !ParseInt64(&alias.parameter_number) ||
        !Expect(TokKind::kComma, kFormat) || !ParseShapeIndex(&alias.parameter_index)) {
      return false;
    }
    if (EatIfPresent(TokKind::kComma)) {
      if (kind() == TokKind::kIdent && tok().str == "must-alias") {
        alias.must_alias = true;
      } else if (!(kind() == TokKind::kIdent && tok().str == "may-alias")) {
        return TokenError("expects aliasing kind 'must-alias' or 'may-alias'");
      }
      Next();
    }
    if (!Expect(TokKind::kRparen, kFormat)) return false;
    out->push_back(std::move(alias));
    alias_positions_.push_back(entry_pos);
    if (!EatIfPresent(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "at the end of the aliasing description");
}

// buffer_donor={ (0, {}), (1, {0}) }
bool Parser::ParseBufferDonor(std::vector<BufferDonor>* out) {
  if (!Expect(TokKind::kLbrace, "at the start of the buffer donor description")) return false;
  constexpr std::string_view kFormat = "(expected (<param>, <param_shape_index>))";
  while (kind() != TokKind::kRbrace) {
    BufferDonor donor;
    size_t donor_pos = pos();
    if (!Expect(TokKind::kLparen, kFormat) || !ParseInt64(&donor.parameter_number) ||
        !Expect(TokKind::kComma, kFormat) || !ParseShapeIndex(&donor.parameter_index) ||
        !Expect(TokKind::kRparen, kFormat)) {
      return false;
    }
    if (donor.parameter_number < 0) return Error(donor_pos, "buffer donor parameter number must be >= 0");
    out->push_back(std::move(donor));
    if (!EatIfPresent(TokKind::kComma)) break;
  }
  return Expect(TokKind::kRbrace, "at the end of the buffer donor description");
}

// true | false | {true, false, ...}
bool Parser::ParseBoolListOrBool(std::vector<bool>* out) {
  bool value;
  if (kind() == TokKind::kw_true || kind() == TokKind::kw_false) {
    if (!ParseBool(&value)) return false;
    out->push_back(value);
    return true;
  }
  if (kind() != TokKind::kLbrace) return TokenError("expects a list of booleans or true/false");
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, [&] {
    if (!ParseBool(&value)) return false;
    out->push_back(value);
    return true;
  });
}

// FileNames / FunctionNames / FileLocations / StackFrames: XLA's stack frame index, printed after the header.
// Entries are numbered by position; the numbers written before them are not checked (as in XLA). Ids inside the
// entries are kept as written: metadata's stack_frame_id and the entries themselves refer to each other by them.
bool Parser::ParseStackFrameIndex(ModuleConfig* config) {
  if (!EatIfPresent(TokKind::kw_FileNames)) return true;
  StackFrameIndex index;
  auto parse_strings = [&](std::vector<std::string>* out) {
    while (EatIfPresent(TokKind::kInt)) {
      if (!ParseString(&out->emplace_back())) return false;
    }
    return true;
  };
  // One `N {name=int ...}` list; every field is required and each is stored through the matching pointer.
  auto parse_entries = [&](std::string_view what, const std::vector<std::string_view>& fields,
                           const std::function<std::vector<int64_t*>()>& add_entry) {
    while (EatIfPresent(TokKind::kInt)) {
      std::vector<int64_t*> slots = add_entry();
      absl::flat_hash_set<std::string> seen;
      size_t open = pos();
      if (!ParseSubAttributes(what, [&](const std::string& field, size_t field_pos) {
            auto it = std::find(fields.begin(), fields.end(), field);
            if (it == fields.end()) {
              return Error(field_pos, fmt::format("unexpected attribute \"{}\" in {}", field, what));
            }
            seen.insert(field);
            return ParseInt32(slots[it - fields.begin()]);
          })) {
        return false;
      }
      for (std::string_view field : fields) {
        if (!seen.contains(std::string(field))) {
          return Error(open, fmt::format("sub-attribute {} is expected but not seen", field));
        }
      }
    }
    return true;
  };
  if (!parse_strings(&index.file_names)) return false;
  if (!Expect(TokKind::kw_FunctionNames, "after the file names") || !parse_strings(&index.function_names)) {
    return false;
  }
  if (!Expect(TokKind::kw_FileLocations, "after the function names")) return false;
  if (!parse_entries("file location", {"file_name_id", "function_name_id", "line", "end_line", "column", "end_column"},
                     [&] {
                       StackFrameIndex::FileLocation& l = index.file_locations.emplace_back();
                       return std::vector<int64_t*>{&l.file_name_id, &l.function_name_id, &l.line,
                                                    &l.end_line,     &l.column,           &l.end_column};
                     })) {
    return false;
  }
  if (!Expect(TokKind::kw_StackFrames, "after the file locations")) return false;
  if (!parse_entries("stack frame", {"file_location_id", "parent_frame_id"}, [&] {
        StackFrameIndex::StackFrame& f = index.stack_frames.emplace_back();
        return std::vector<int64_t*>{&f.file_location_id, &f.parent_frame_id};
      })) {
    return false;
  }
  config->stack_frame_index = std::move(index);
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Computations

bool Parser::ParseComputation(Computation** entry, size_t* entry_pos) {
  const size_t entry_kw_pos = pos();
  const bool is_entry = EatIfPresent(TokKind::kw_ENTRY);
  const size_t name_pos = pos();
  std::string name;
  if (kind() != TokKind::kIdent && kind() != TokKind::kName) {
    return TokenError(fmt::format("expects a computation name, but sees {}", Describe(tok(), lexer_.text())));
  }
  name = tok().str;
  Next();
  if (auto it = computation_pool_.find(name); it != computation_pool_.end()) {
    Error(name_pos, fmt::format("computation already exists: {}", name));
    Note(it->second.second, "computation previously defined here");
    return false;
  }
  if (is_entry && *entry != nullptr) {
    Error(entry_kw_pos, "expects only one ENTRY");
    Note(*entry_pos, "previous ENTRY computation is here");
    return false;
  }

  std::optional<Shape> signature_result;
  size_t signature_pos = 0;
  if (kind() == TokKind::kLparen) {
    Next();
    if (kind() != TokKind::kRparen) {
      do {
        std::string param_name;
        Shape param_shape;
        if (!ParseName(&param_name) || !ParseShape(&param_shape)) return false;
      } while (EatIfPresent(TokKind::kComma));
    }
    if (!Expect(TokKind::kRparen, "at the end of the parameter list") ||
        !Expect(TokKind::kArrow, "after the parameter list")) {
      return false;
    }
    signature_pos = pos();
    signature_result.emplace();
    if (!ParseShape(&*signature_result)) return false;
  }

  computation_names_.GetUniqueName(name);
  Computation* comp = ParseInstructionList(name, name_pos);
  if (comp == nullptr) return false;
  if (signature_result.has_value() && !ShapesCompatible(comp->root()->shape(), *signature_result)) {
    return Error(signature_pos,
                 fmt::format("shape of computation {}, {}, is not compatible with that of its root instruction {}, {}",
                             name, ShapeToString(*signature_result, false), comp->root()->name(),
                             ShapeToString(comp->root()->shape(), false)));
  }

  absl::flat_hash_set<std::string> seen;
  while (EatIfPresent(TokKind::kComma)) {
    size_t attr_pos = pos();
    std::string attr;
    if (!ParseAttributeName(&attr)) return false;
    if (!seen.insert(attr).second) return Error(attr_pos, fmt::format("attribute {} already exists", attr));
    if (attr != "execution_thread") {
      return Error(attr_pos,
                   fmt::format("unexpected attribute \"{}\" on a computation; allowed: execution_thread", attr));
    }
    std::string thread;
    if (!ParseString(&thread)) return false;
    comp->set_execution_thread(std::move(thread));
  }

  if (is_entry) {
    *entry = comp;
    *entry_pos = entry_kw_pos;
  }
  computation_pool_[name] = {comp, name_pos};
  return true;
}

Computation* Parser::ParseInstructionList(const std::string& name, size_t name_pos) {
  DepthGuard guard(this);
  if (!guard.ok()) return DepthExceeded(), nullptr;
  auto comp = std::make_unique<Computation>(name);
  comp->set_loc(Loc(name_pos));
  scopes_.push_back(Scope{comp.get(), {}, nullptr});
  struct PopScope {
    std::vector<Scope>* scopes;
    ~PopScope() { scopes->pop_back(); }
  } pop{&scopes_};

  if (!Expect(TokKind::kLbrace, "at the beginning of the instruction list")) return nullptr;
  Instruction* root = nullptr;
  size_t root_pos = 0;
  do {
    if (!ParseInstruction(&root, &root_pos)) return nullptr;
  } while (kind() != TokKind::kRbrace);
  Next();  // '}'

  // Without ROOT, the last instruction is the root (XLA's HloComputation::Builder).
  comp->set_root(root != nullptr ? root : scope().last_added);
  const auto& params = comp->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == nullptr) {
      Error(name_pos, fmt::format("computation {} has parameter number {} but no parameter number {}", name,
                                  params.size() - 1, i));
      return nullptr;
    }
  }
  Computation* raw = comp.get();
  computations_.push_back(std::move(comp));
  return raw;
}

bool Parser::ParseInstruction(Instruction** root, size_t* root_pos) {
  const size_t root_kw_pos = pos();
  const bool is_root = EatIfPresent(TokKind::kw_ROOT);
  if (is_root && *root != nullptr) {
    Error(root_kw_pos, "one computation should have only one ROOT");
    Note(*root_pos, "previous ROOT is here");
    return false;
  }
  const size_t name_pos = pos();
  std::string name;
  if (kind() == TokKind::kAttributeName) {
    // "name=" without a space lexes as one token.
    name = tok().str;
    Next();
  } else {
    if (kind() != TokKind::kIdent && kind() != TokKind::kName) {
      return TokenError(fmt::format("expects an instruction name, but sees {}", Describe(tok(), lexer_.text())));
    }
    name = tok().str;
    Next();
    if (!Expect(TokKind::kEqual, "after the instruction name")) return false;
  }
  Instruction* inst = ParseInstructionRhs(name, name_pos, /*allow_attributes=*/true, std::nullopt, 0);
  if (inst == nullptr) return false;
  if (is_root) {
    *root = inst;
    *root_pos = root_kw_pos;
  }
  return true;
}

bool Parser::ParseComputationRef(std::vector<Computation*>* out, bool list) {
  auto parse_one = [&]() -> bool {
    DepthGuard guard(this);
    if (!guard.ok()) return DepthExceeded();
    if (kind() == TokKind::kLbrace) {
      // An inline computation: to_apply={ ... }.
      Computation* comp = ParseInstructionList(computation_names_.GetUniqueName("_"), pos());
      if (comp == nullptr) return false;
      out->push_back(comp);
      return true;
    }
    size_t name_pos = pos();
    if (kind() != TokKind::kIdent && kind() != TokKind::kName) {
      return TokenError(fmt::format("expects a computation name, but sees {}", Describe(tok(), lexer_.text())));
    }
    std::string name = tok().str;
    Next();
    auto it = computation_pool_.find(name);
    if (it == computation_pool_.end()) return Error(name_pos, fmt::format("computation does not exist: {}", name));
    out->push_back(it->second.first);
    return true;
  };
  if (!list) return parse_one();
  return ParseList(TokKind::kLbrace, TokKind::kRbrace, TokKind::kComma, parse_one);
}

// ---------------------------------------------------------------------------------------------------------------
// Module-level checks that need the whole module.

bool Parser::CheckModule(Module* module) {
  // Each async computation has exactly one async-start caller.
  for (const auto& comp : module->computations()) {
    auto it = async_callers_.find(comp.get());
    if (it != async_callers_.end() && it->second.size() > 1) {
      Error(it->second[1].second, fmt::format("computation {} is called by more than one async op", comp->name()));
      Note(it->second[0].second, "first async caller is here");
      return false;
    }
  }

  const Computation* entry = module->entry_computation();
  const ModuleConfig& config = module->config();
  const Shape& result_shape =
      config.entry_computation_layout.has_value() ? config.entry_computation_layout->result : entry->root()->shape();
  auto param_shape = [&](int64_t number) -> const Shape* {
    if (number < 0) return nullptr;
    if (config.entry_computation_layout.has_value()) {
      const auto& params = config.entry_computation_layout->parameters;
      return number < static_cast<int64_t>(params.size()) ? &params[number] : nullptr;
    }
    return number < entry->parameter_count() ? &entry->parameter(number)->shape() : nullptr;
  };
  std::vector<std::vector<int64_t>> seen_outputs;
  for (size_t i = 0; i < config.input_output_alias.size(); ++i) {
    const InputOutputAlias& alias = config.input_output_alias[i];
    size_t at = i < alias_positions_.size() ? alias_positions_[i] : 0;
    if (result_shape.Subshape(alias.output_index) == nullptr) {
      return Error(at, fmt::format("input_output_alias: output index {} is invalid for the entry result shape {}",
                                   ShapeIndexToString(alias.output_index), ShapeToString(result_shape)));
    }
    if (std::find(seen_outputs.begin(), seen_outputs.end(), alias.output_index) != seen_outputs.end()) {
      return Error(at, fmt::format("input_output_alias: output index {} is aliased more than once",
                                   ShapeIndexToString(alias.output_index)));
    }
    seen_outputs.push_back(alias.output_index);
    const Shape* param = param_shape(alias.parameter_number);
    if (param == nullptr) {
      return Error(
          at, fmt::format("input_output_alias: the entry computation has no parameter {}", alias.parameter_number));
    }
    if (param->Subshape(alias.parameter_index) == nullptr) {
      return Error(
          at, fmt::format("input_output_alias: parameter index {} is invalid for parameter {} of shape {}",
                          ShapeIndexToString(alias.parameter_index), alias.parameter_number, ShapeToString(*param)));
    }
  }
  return true;
}

std::optional<Shape> Parser::ParseStandaloneShape() {
  Next();
  Shape shape;
  if (!ParseShape(&shape)) return std::nullopt;
  if (kind() != TokKind::kEof) {
    TokenError(fmt::format("extra content after the shape: {}", Describe(tok(), lexer_.text())));
    return std::nullopt;
  }
  return shape;
}

}  // namespace hlo

std::unique_ptr<Module> ParseHloModule(const SourceFile& file, DiagnosticEngine& diags,
                                       const HloParseOptions& options) {
  hlo::Parser parser(file, diags, options);
  return parser.ParseModule();
}

absl::StatusOr<std::unique_ptr<Module>> ParseHloModule(std::string_view text, std::string_view source_name,
                                                       const HloParseOptions& options) {
  SourceFile file{std::string(source_name), text};
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = ParseHloModule(file, diags, options);
  if (module == nullptr) return absl::InvalidArgumentError(diags.Render(file));
  return module;
}

absl::StatusOr<Shape> ParseShape(std::string_view text) {
  SourceFile file{"<shape>", text};
  DiagnosticEngine diags;
  hlo::Parser parser(file, diags, HloParseOptions{});
  std::optional<Shape> shape = parser.ParseStandaloneShape();
  if (!shape.has_value()) return absl::InvalidArgumentError(diags.Render(file));
  return *std::move(shape);
}

}  // namespace xlac
