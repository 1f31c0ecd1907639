// Module structure of the lowering: module attributes, functions (-> computations), calls, entry selection,
// blocks, SSA value scoping, implicit captures and regions (-> called computations).
#include <algorithm>
#include <set>

#include "fmt/format.h"
#include "frontend/hlo/sharding_text.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {

std::string_view BaseOpName(std::string_view name) {
  if (name.rfind("stablehlo.", 0) == 0) return name.substr(10);
  if (name.rfind("mhlo.", 0) == 0) return name.substr(5);
  return name;
}

namespace {

bool IsTerminator(std::string_view name) {
  return name == "func.return" || name == "stablehlo.return" || name == "mhlo.return" || name == "sdy.return";
}

// HLO names are [a-zA-Z_][a-zA-Z0-9_.-]*.
std::string SanitizeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
    out += ok ? c : '_';
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9') || out[0] == '.' || out[0] == '-') out = "_" + out;
  return out;
}

// Free SSA uses of `region` (not defined inside it), in first-use order.
void CollectFreeUses(const Region& region, std::vector<std::set<std::string>>* scopes,
                     std::set<std::pair<std::string, int64_t>>* seen, std::vector<ValueRef>* out) {
  scopes->emplace_back();
  for (const Block& block : region.blocks) {
    for (const BlockArg& arg : block.args) scopes->back().insert(arg.name);
    for (const Op& op : block.ops) {
      for (const ValueRef& ref : op.operands) {
        bool defined = false;
        for (const auto& s : *scopes) defined = defined || s.count(ref.name) > 0;
        if (!defined && seen->insert({ref.name, ref.index}).second) out->push_back(ref);
      }
      for (const Region& nested : op.regions) CollectFreeUses(nested, scopes, seen, out);
      for (const ResultGroup& g : op.results) scopes->back().insert(g.name);
    }
  }
  scopes->pop_back();
}

}  // namespace

Lowerer::Lowerer(Parser& parser, const SourceFile& file, DiagnosticEngine& diags, const StableHloParseOptions& options)
    : parser_(parser), file_(file), diags_(diags), options_(options) {}

bool Lowerer::Error(size_t pos, std::string message) {
  diags_.Error(Loc(pos), std::move(message));
  return false;
}

std::string Lowerer::NewName(std::string_view prefix) { return fmt::format("{}.{}", prefix, ++name_counter_); }

std::string Lowerer::NewComputationName(std::string_view prefix, bool is_function) {
  const std::string base = SanitizeName(prefix);
  // A function keeps its own (reserved) name; generated names avoid every function's name.
  if (is_function && !used_comp_names_.count(base)) {
    used_comp_names_.insert(base);
    return base;
  }
  int64_t& n = comp_name_counts_[base];
  std::string name = base;
  while (used_comp_names_.count(name) || (reserved_comp_names_.count(name) && !is_function)) {
    name = fmt::format("{}.{}", base, ++n);
  }
  used_comp_names_.insert(name);
  return name;
}

void Lowerer::AddComputation(std::unique_ptr<Computation> comp) { done_.push_back(std::move(comp)); }

bool Lowerer::ParseShardingAttr(const Attr& attr, std::optional<Sharding>* out) {
  out->reset();
  if (attr.kind != Attr::Kind::kString) return Error(attr.pos, "mhlo.sharding must be a string");
  if (attr.str.empty()) return true;  // JAX writes "" for "unspecified"
  DiagnosticEngine local;
  std::optional<Sharding> sharding = ParseShardingText(attr.str, local);
  if (!sharding.has_value()) {
    std::string message = local.diagnostics().empty() ? "invalid sharding" : local.diagnostics()[0].message;
    // The string sits on one line: point into it (past the opening quote) when the column is known.
    size_t at = attr.pos;
    if (!local.diagnostics().empty() && local.diagnostics()[0].loc.line == 1) {
      at += 1 + static_cast<size_t>(std::max(0, local.diagnostics()[0].loc.col - 1));
    }
    return Error(at, fmt::format("invalid mhlo.sharding: {}", message));
  }
  *out = std::move(*sharding);
  return true;
}

std::optional<OpMetadata> Lowerer::MetadataFor(const Location& loc) {
  if (!loc.known()) return std::nullopt;
  Location resolved = loc;
  // Follow #loc aliases (they may be defined after their uses), bounded against cycles.
  std::string alias = loc.alias;
  for (int hops = 0; !alias.empty() && hops < 64; ++hops) {
    auto it = parser_.loc_aliases().find(alias);
    if (it == parser_.loc_aliases().end()) break;
    const Location& target = it->second;
    if (resolved.name.empty()) resolved.name = target.name;
    if (resolved.file.empty()) {
      resolved.file = target.file;
      resolved.line = target.line;
      resolved.col = target.col;
    }
    alias = target.alias;
  }
  if (resolved.name.empty() && resolved.file.empty()) return std::nullopt;
  OpMetadata metadata;
  metadata.op_name = resolved.name;
  metadata.source_file = resolved.file;
  metadata.source_line = resolved.line;
  metadata.source_column = resolved.col;
  return metadata;
}

// ---------------------------------------------------------------------------------------------------------------
// Module

bool Lowerer::ConfigureModule(const ModuleAst& ast) {
  ModuleConfig& config = module_->mutable_config();
  for (const NamedAttr& a : ast.attrs) {
    if (a.name == "mhlo.num_partitions" || a.name == "mhlo.num_replicas") {
      if (a.value->kind != Attr::Kind::kInt || a.value->int_value < 1) {
        return Error(a.pos, fmt::format("{} must be a positive integer", a.name));
      }
      const bool partitions = a.name == "mhlo.num_partitions";
      (partitions ? config.num_partitions : config.replica_count) = a.value->int_value;
      (partitions ? config.num_partitions_given : config.replica_count_given) = true;
    } else if (a.name == "mhlo.frontend_attributes" && a.value->kind == Attr::Kind::kDict) {
      for (const auto& [key, value] : a.value->dict) {
        if (value->kind == Attr::Kind::kString) config.frontend_attributes.emplace_back(key, value->str);
      }
      std::sort(config.frontend_attributes.begin(), config.frontend_attributes.end());
    }
  }
  return true;
}

std::unique_ptr<Module> Lowerer::Lower(const ModuleAst& ast) {
  module_ = std::make_unique<Module>(ast.name.empty() ? std::string("module") : SanitizeName(ast.name));
  module_->set_source_name(file_.name());
  if (!ConfigureModule(ast) || !CollectSdyMeshes(ast) || !CollectRoundTripMeshes(ast) ||
      !CollectRoundTripBodyAxes(ast)) {
    return nullptr;
  }
  for (const Func& f : ast.funcs) {
    if (funcs_.count(f.name)) {
      Error(f.name_pos, fmt::format("redefinition of function @{}", f.name));
      return nullptr;
    }
    funcs_[f.name] = &f;
    reserved_comp_names_.insert(SanitizeName(f.name));
  }
  // A shape-polymorphic module: the entry is lowered for the given argument shapes, and functions with `?` in their
  // signature only for the calls that reach them (CalleeFor).
  const Func* refined_entry = nullptr;
  FunctionSpecialization entry_spec;
  if (!StartRefinement(ast, &refined_entry, &entry_spec)) return nullptr;
  for (const Func& f : ast.funcs) {
    if (!f.has_body) continue;
    if (&f == refined_entry) {
      if (func_comps_.count(f.name)) continue;
      Computation* comp = LowerFunctionChecked(f, f.name_pos, &entry_spec);
      if (comp == nullptr) return nullptr;
      func_comps_[f.name] = comp;
      continue;
    }
    if (refining_ && SignatureHasUnboundedDims(f)) continue;
    if (GetFunctionComputation(f.name, nullptr) == nullptr) return nullptr;
  }
  Computation* entry = nullptr;
  if (!ChooseEntry(ast, &entry)) return nullptr;
  if (!ApplyModuleSpmdShardings(ast, entry)) return nullptr;
  // Buffer donation on the entry function: tf.aliasing_output (-> input_output_alias) and jax.buffer_donor.
  for (const auto& [name, comp] : func_comps_) {
    if (comp != entry) continue;
    const Func& f = *funcs_.at(name);
    ModuleConfig& config = module_->mutable_config();
    // JAX writes an output sharding on every result whose sharding the user gave (replicated included) and none on a
    // result left unspecified, which XLA then lets propagation choose (allow_spmd_sharding_propagation_to_output,
    // set in JAX's compile options, not in the text). So a jitted function whose results all carry jax.result_info
    // and no sharding gets the flag: its sharded results stay sharded instead of being all-gathered at the end.
    bool jax_unspecified = !f.results.empty();
    for (const auto& result : f.results) {
      bool info = false, sharded = false;
      for (const NamedAttr& a : result.attrs) {
        info = info || a.name == "jax.result_info";
        sharded = sharded || a.name == "mhlo.sharding" || a.name == "sdy.sharding";
      }
      jax_unspecified = jax_unspecified && info && !sharded;
    }
    if (jax_unspecified && entry->root() != nullptr && !entry->root()->sharding().has_value()) {
      config.allow_spmd_sharding_propagation_to_output = {true};
    }
    for (size_t i = 0; i < f.args.size(); ++i) {
      for (const NamedAttr& a : f.args[i].attrs) {
        if (a.name == "tf.aliasing_output" && a.value->kind == Attr::Kind::kInt) {
          const int64_t output = a.value->int_value;
          if (output < 0 || output >= static_cast<int64_t>(f.results.size())) {
            Error(a.pos, fmt::format("tf.aliasing_output {} is not a result of @{}", output, f.name));
            return nullptr;
          }
          InputOutputAlias alias;
          if (f.results.size() != 1) alias.output_index = {output};
          alias.parameter_number = static_cast<int64_t>(i);
          config.input_output_alias.push_back(std::move(alias));
        } else if (a.name == "jax.buffer_donor" && IsUnitOrTrue(*a.value)) {
          config.buffer_donor.push_back({static_cast<int64_t>(i), {}});
        }
      }
    }
  }
  for (auto& comp : done_) module_->AddComputation(std::move(comp));
  done_.clear();
  module_->set_entry_computation(entry);
  return std::move(module_);
}

// torch_xla's exports give the entry's shardings as module attributes, in HLO sharding text:
// mhlo.spmd_output_sharding (one sharding for the whole result, a tuple sharding for several results) and
// mhlo.spmd_parameters_shardings (one string per parameter). They apply where the function itself gives none.
bool Lowerer::ApplyModuleSpmdShardings(const ModuleAst& ast, Computation* entry) {
  for (const NamedAttr& a : ast.attrs) {
    if (a.name == "mhlo.spmd_output_sharding") {
      std::optional<Sharding> sharding;
      if (!ParseShardingAttr(*a.value, &sharding)) return false;
      Instruction* root = entry->root();
      if (!sharding.has_value() || root == nullptr || root->sharding().has_value()) continue;
      const bool tuple = sharding->kind == Sharding::Kind::kTuple;
      const size_t leaves = root->shape().IsTuple() ? root->shape().tuple_shapes.size() : 1;
      if (tuple != root->shape().IsTuple() || (tuple && sharding->tuple_elements.size() != leaves)) {
        return Error(a.pos, fmt::format("mhlo.spmd_output_sharding has {} sharding{}, but the entry returns {} value{}",
                                        tuple ? sharding->tuple_elements.size() : 1,
                                        tuple && sharding->tuple_elements.size() == 1 ? "" : "s", leaves,
                                        leaves == 1 ? "" : "s"));
      }
      root->set_sharding(std::move(sharding));
    } else if (a.name == "mhlo.spmd_parameters_shardings" && a.value->kind == Attr::Kind::kArray) {
      if (a.value->elements.size() != static_cast<size_t>(entry->parameter_count())) {
        return Error(a.pos, fmt::format("mhlo.spmd_parameters_shardings has {} shardings, but the entry has {} "
                                        "parameters",
                                        a.value->elements.size(), entry->parameter_count()));
      }
      for (int64_t i = 0; i < entry->parameter_count(); ++i) {
        std::optional<Sharding> sharding;
        if (!ParseShardingAttr(*a.value->elements[static_cast<size_t>(i)], &sharding)) return false;
        Instruction* param = entry->parameter(i);
        if (sharding.has_value() && !param->sharding().has_value()) param->set_sharding(std::move(sharding));
      }
    }
  }
  return true;
}

// The function named main, the only function, or (for files of several test functions) a synthesized entry that
// calls every function nothing else calls.
std::vector<const Func*> Lowerer::UncalledFunctions(const ModuleAst& ast) {
  std::set<std::string> called;
  // Symbols anywhere in op attributes (callee, called_computations, programs = [[@f]], ...).
  std::function<void(const Attr&, int)> symbols = [&](const Attr& a, int depth) {
    if (a.kind == Attr::Kind::kSymbol) called.insert(a.str);
    if (depth > 8) return;
    for (const AttrPtr& e : a.elements) symbols(*e, depth + 1);
    for (const auto& [key, value] : a.dict) symbols(*value, depth + 1);
  };
  std::function<void(const Region&)> walk = [&](const Region& r) {
    for (const Block& b : r.blocks) {
      for (const Op& op : b.ops) {
        for (const NamedAttr& a : op.attrs) symbols(*a.value, 0);
        for (const Region& nested : op.regions) walk(nested);
      }
    }
  };
  std::vector<const Func*> roots;
  for (const Func& f : ast.funcs) {
    if (f.has_body) walk(f.body);
  }
  for (const Func& f : ast.funcs) {
    if (f.has_body && !called.count(f.name)) roots.push_back(&f);
  }
  // Uncalled private functions are dead code, not entries.
  if (roots.size() > 1 &&
      std::any_of(roots.begin(), roots.end(), [](const Func* f) { return f->visibility != "private"; })) {
    roots.erase(std::remove_if(roots.begin(), roots.end(), [](const Func* f) { return f->visibility == "private"; }),
                roots.end());
  }
  return roots;
}

bool Lowerer::ChooseEntry(const ModuleAst& ast, Computation** entry) {
  if (auto it = func_comps_.find("main"); it != func_comps_.end()) {
    *entry = it->second;
    return true;
  }
  std::vector<const Func*> roots = UncalledFunctions(ast);
  if (roots.size() == 1) {
    *entry = func_comps_[roots[0]->name];
    return true;
  }
  if (roots.empty()) return Error(ast.pos, "no entry function: every function is called by another one");
  // Several uncalled functions and no @main (test files of several functions): an entry that calls each of them in
  // order, taking their parameters one after another and returning their results as a tuple. Argument-less ones
  // (interpreter test files) are the common case and need no warning.
  const bool any_args = std::any_of(roots.begin(), roots.end(), [](const Func* f) { return !f->args.empty(); });
  if (any_args) {
    std::string names;
    for (const Func* f : roots) names += fmt::format("{}@{}", names.empty() ? "" : ", ", f->name);
    diags_.Report(Severity::kWarning, Loc(roots[0]->name_pos),
                  fmt::format("there is no @main: the entry calls the {} uncalled functions in order ({}), with their "
                              "parameters one after another, and returns their results as a tuple",
                              roots.size(), names));
  }
  auto comp = std::make_unique<Computation>(NewComputationName("main"));
  comp->set_loc(Loc(roots[0]->pos));
  Scope scope;
  scope.comp = comp.get();
  ScopeGuard guard(this, &scope);
  cur_loc_ = Loc(roots[0]->pos);
  cur_metadata_.reset();
  std::vector<Instruction*> calls;
  int64_t next_parameter = 0;
  for (const Func* f : roots) {
    Computation* callee = func_comps_[f->name];
    std::vector<Instruction*> arguments;
    for (int64_t i = 0; i < callee->parameter_count(); ++i) {
      const Instruction* declared = callee->parameter(i);
      auto param = Instruction::CreateParameter(next_parameter, NewName(fmt::format("Arg_{}", next_parameter)),
                                                declared->shape());
      ++next_parameter;
      param->set_loc(declared->loc());
      if (declared->sharding().has_value()) param->set_sharding(*declared->sharding());
      arguments.push_back(comp->AddInstruction(std::move(param)));
    }
    Instruction* call = Emit(Opcode::kCall, callee->root()->shape(), std::move(arguments));
    call->set_called_computations({callee});
    calls.push_back(call);
  }
  comp->set_root(EmitTuple(calls));
  *entry = comp.get();
  AddComputation(std::move(comp));
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Functions

Computation* Lowerer::GetFunctionComputation(const std::string& name, const Op* call_site) {
  if (auto it = func_comps_.find(name); it != func_comps_.end()) return it->second;
  const size_t at = call_site != nullptr ? call_site->name_pos : 0;
  auto f = funcs_.find(name);
  if (f == funcs_.end()) return Error(at, fmt::format("call to undefined function @{}", name)), nullptr;
  if (!f->second->has_body) {
    return Error(at, fmt::format("function @{} is only declared; HLO needs its body", name)), nullptr;
  }
  if (refining_) {
    for (const FuncArg& arg : f->second->args) {
      if (TypeHasUnboundedDims(arg.type)) {
        return Error(at, fmt::format("@{} has an argument of dynamic type {}; shape refinement specializes such "
                                     "functions only where func.call calls them",
                                     name, TypeToString(arg.type))),
               nullptr;
      }
    }
  }
  Computation* comp = LowerFunctionChecked(*f->second, at, nullptr);
  if (comp != nullptr) func_comps_[name] = comp;
  return comp;
}

Computation* Lowerer::LowerFunctionChecked(const Func& func, size_t at, const FunctionSpecialization* spec) {
  const std::string& name = func.name;
  if (in_progress_[name]) {
    return Error(at, fmt::format("recursive call to @{}: HLO computations cannot recurse", name)), nullptr;
  }
  if (function_depth_ >= options_.max_nesting_depth) {
    return Error(at, fmt::format("call chain deeper than {} functions", options_.max_nesting_depth)), nullptr;
  }
  ++function_depth_;
  in_progress_[name] = true;
  Computation* comp = nullptr;
  // A round-trip shard_map body is lowered inside its shard_map (its manual axes), whoever asks for it first.
  std::vector<std::string> saved_axes = sdy_manual_axes_;
  if (auto axes = round_trip_body_axes_.find(name); axes != round_trip_body_axes_.end()) {
    for (const std::string& axis : axes->second) {
      if (std::find(sdy_manual_axes_.begin(), sdy_manual_axes_.end(), axis) == sdy_manual_axes_.end()) {
        sdy_manual_axes_.push_back(axis);
      }
    }
  }
  const bool ok = LowerFunction(func, &comp, spec);
  sdy_manual_axes_ = std::move(saved_axes);
  in_progress_[name] = false;
  --function_depth_;
  return ok ? comp : nullptr;
}

bool Lowerer::LowerFunction(const Func& func, Computation** out, const FunctionSpecialization* spec) {
  auto comp = std::make_unique<Computation>(NewComputationName(func.name, /*is_function=*/true));
  comp->set_loc(Loc(func.name_pos));
  Scope scope;
  scope.comp = comp.get();
  ScopeGuard guard(this, &scope);
  cur_op_ = nullptr;
  cur_loc_ = Loc(func.pos);
  cur_metadata_.reset();
  for (size_t i = 0; i < func.args.size(); ++i) {
    const FuncArg& arg = func.args[i];
    Shape shape;
    if (spec != nullptr) {
      shape = spec->arg_shapes[i];
    } else if (!ToShape(arg.type, arg.pos, &shape)) {
      return false;
    }
    auto param = Instruction::CreateParameter(static_cast<int64_t>(i), NewName(fmt::format("Arg_{}", i)), shape);
    param->set_loc(Loc(arg.pos));
    std::optional<Sharding> sharding;
    if (!ValueSharding(arg.attrs, shape, fmt::format("argument %{} of @{}", arg.name, func.name), &sharding)) {
      return false;
    }
    if (sharding.has_value()) param->set_sharding(std::move(sharding));
    if (std::optional<OpMetadata> md = MetadataFor(arg.loc)) *param->mutable_metadata() = *md;
    Instruction* p = comp->AddInstruction(std::move(param));
    if (arg.name.empty()) return Error(arg.pos, "function arguments need names when the function has a body");
    if (scope.values.count(arg.name)) return Error(arg.pos, fmt::format("redefinition of argument '%{}'", arg.name));
    // A dimension variable known at the call site: the body sees its value (the parameter stays, unused).
    if (spec != nullptr && spec->arg_values[i].has_value()) p = EmitConstant(*spec->arg_values[i]);
    scope.values[arg.name] = {p};
    NoteQuant(p, arg.type);
  }
  if (func.body.blocks.empty()) return Error(func.name_pos, fmt::format("function @{} has an empty body", func.name));
  std::vector<Instruction*> returned;
  std::vector<const Type*> returned_types;
  size_t return_pos = func.body.pos;
  if (!LowerBlockBody(func.body.blocks[0], nullptr, &returned, &returned_types, &return_pos)) return false;
  cur_op_ = nullptr;
  cur_loc_ = Loc(return_pos);
  cur_metadata_.reset();
  if (returned.size() != func.results.size()) {
    return Error(return_pos, fmt::format("@{} returns {} values, but its signature declares {}", func.name,
                                         returned.size(), func.results.size()));
  }
  std::vector<std::optional<Sharding>> result_shardings(func.results.size());
  bool any_sharding = false;
  for (size_t i = 0; i < func.results.size(); ++i) {
    Shape declared;
    if (!ToShape(func.results[i].type, func.results[i].type.pos, &declared)) return false;
    if (!ShapeRefines(declared, returned[i]->shape())) {
      return Error(return_pos,
                   fmt::format("return value {} of @{} has shape {}, but the signature declares {}", i, func.name,
                               ShapeToString(returned[i]->shape(), false), TypeToString(func.results[i].type)));
    }
    if (!ValueSharding(func.results[i].attrs, returned[i]->shape(), fmt::format("result {} of @{}", i, func.name),
                       &result_shardings[i])) {
      return false;
    }
    any_sharding = any_sharding || result_shardings[i].has_value();
  }
  Instruction* root = returned.size() == 1 ? returned[0] : EmitTuple(returned);
  if (any_sharding) {
    if (returned.size() == 1) {
      if (root->sharding().has_value() && !(*root->sharding() == *result_shardings[0])) {
        root = Emit(Opcode::kCopy, root->shape(), {root});
      }
      root->set_sharding(result_shardings[0]);
    } else {
      std::vector<Sharding> elements;
      for (auto& s : result_shardings) elements.push_back(s.has_value() ? *s : Sharding::Replicated());
      root->set_sharding(Sharding::Tuple(std::move(elements)));
    }
  }
  comp->set_root(root);
  *out = comp.get();
  AddComputation(std::move(comp));
  return true;
}

// ---------------------------------------------------------------------------------------------------------------
// Blocks and values

bool Lowerer::LowerBlockBody(const Block& block, const Op* owner, std::vector<Instruction*>* returned,
                             std::vector<const Type*>* returned_types, size_t* return_pos) {
  struct BlockGuard {
    const Block*& slot;
    const Block* saved;
    ~BlockGuard() { slot = saved; }
  } guard{cur_block_, cur_block_};
  cur_block_ = &block;
  for (size_t i = 0; i < block.ops.size(); ++i) {
    const Op& op = block.ops[i];
    if (IsTerminator(op.name)) {
      if (i + 1 != block.ops.size()) {
        return Error(block.ops[i + 1].pos, "an operation follows the terminator of its block");
      }
      cur_op_ = &op;
      if (!LookupOperands(op, returned)) return false;
      *return_pos = op.pos;
      for (const Type& t : op.operand_types) returned_types->push_back(&t);
      return true;
    }
    Results results;
    if (!LowerOp(op, &results) || !BindResults(op, results)) return false;
  }
  const size_t at = owner != nullptr ? owner->name_pos : block.pos;
  return Error(at, "the block does not end with a return operation");
}

bool Lowerer::BindResults(const Op& op, const Results& results) {
  const int64_t declared = op.NumResults();
  if (declared == 0) return true;
  if (declared != static_cast<int64_t>(results.size())) {
    return OpError(op,
                   fmt::format("'{}' produces {} results, but the text names {}", op.name, results.size(), declared));
  }
  if (op.result_types.size() == results.size()) {
    for (size_t i = 0; i < results.size(); ++i) {
      Shape declared_shape;
      if (!ToShape(op.result_types[i], op.result_types[i].pos, &declared_shape)) return false;
      if (!ShapeRefines(declared_shape, results[i]->shape())) {
        return OpError(op, fmt::format("result {} of '{}' is declared as {}, but the operation produces {}", i, op.name,
                                       TypeToString(op.result_types[i]), ShapeToString(results[i]->shape(), false)));
      }
    }
  }
  size_t k = 0;
  for (const ResultGroup& g : op.results) {
    if (scope_->values.count(g.name)) return Error(g.pos, fmt::format("redefinition of SSA value '%{}'", g.name));
    scope_->values[g.name].assign(results.begin() + static_cast<int64_t>(k),
                                  results.begin() + static_cast<int64_t>(k + g.count));
    k += static_cast<size_t>(g.count);
  }
  return true;
}

Instruction* Lowerer::Lookup(const ValueRef& ref) { return LookupIn(scope_, ref.name, ref.index, ref.pos); }

Instruction* Lowerer::LookupIn(Scope* scope, const std::string& name, int64_t index, size_t pos) {
  if (auto it = scope->values.find(name); it != scope->values.end()) {
    if (index < 0 || index >= static_cast<int64_t>(it->second.size())) {
      return Error(pos, fmt::format("'%{}' has {} result{}; there is no #{}", name, it->second.size(),
                                    it->second.size() == 1 ? "" : "s", index)),
             nullptr;
    }
    return it->second[static_cast<size_t>(index)];
  }
  if (auto it = scope->imported.find({name, index}); it != scope->imported.end()) return it->second;
  if (scope->parent == nullptr) return Error(pos, fmt::format("use of undefined value '%{}'", name)), nullptr;
  Instruction* outer = LookupIn(scope->parent, name, index, pos);
  if (outer == nullptr) return nullptr;
  Instruction* local = CloneConstantExpr(scope, outer);
  if (local == nullptr) {
    return Error(pos, fmt::format("'%{}' is defined outside the region of '{}' and is not a constant; an HLO "
                                  "computation cannot capture it",
                                  name, scope->owner)),
           nullptr;
  }
  scope->imported[{name, index}] = local;
  return local;
}

bool Lowerer::LookupOperands(const Op& op, std::vector<Instruction*>* out) {
  out->clear();
  const bool typed = op.operand_types.size() == op.operands.size();
  for (size_t i = 0; i < op.operands.size(); ++i) {
    Instruction* v = Lookup(op.operands[i]);
    if (v == nullptr) return false;
    if (typed) {
      Shape expected;
      if (!ToShape(op.operand_types[i], op.operand_types[i].pos, &expected)) return false;
      if (!ShapeRefines(expected, v->shape())) {
        return Error(op.operands[i].pos,
                     fmt::format("use of value '%{}' expects type {}, but the value has shape {}", op.operands[i].name,
                                 TypeToString(op.operand_types[i]), ShapeToString(v->shape(), false)));
      }
    }
    out->push_back(v);
  }
  return true;
}

// An instruction whose value is known without running anything: constants, iota and pure ops over them. XLA's
// export expects these to be sunk into regions (mhlo-sink-constants-to-control-flow); we clone them.
bool Lowerer::IsConstantExpr(const Instruction* inst) {
  if (auto it = constant_expr_cache_.find(inst); it != constant_expr_cache_.end()) return it->second;
  std::vector<const Instruction*> stack = {inst};
  std::set<const Instruction*> seen = {inst};
  bool result = true;
  while (!stack.empty() && result) {
    const Instruction* cur = stack.back();
    stack.pop_back();
    if (auto it = constant_expr_cache_.find(cur); it != constant_expr_cache_.end()) {
      result = it->second;
      continue;
    }
    switch (cur->opcode()) {
      case Opcode::kConstant:
      case Opcode::kIota:
        continue;
      case Opcode::kParameter:
      case Opcode::kRng:
      case Opcode::kRngBitGenerator:
      case Opcode::kRngGetAndUpdateState:
      case Opcode::kPartitionId:
      case Opcode::kReplicaId:
      case Opcode::kCustomCall:
        result = false;
        continue;
      default:
        break;
    }
    if (cur->HasSideEffect() || !cur->called_computations().empty() || cur->operand_count() == 0) {
      result = false;
      continue;
    }
    for (Instruction* operand : cur->operands()) {
      if (seen.insert(operand).second) stack.push_back(operand);
    }
    if (seen.size() > 256) result = false;
  }
  constant_expr_cache_[inst] = result;
  return result;
}

Instruction* Lowerer::CloneConstantExpr(Scope* scope, Instruction* inst) {
  if (!IsConstantExpr(inst)) return nullptr;
  if (auto it = scope->clones.find(inst); it != scope->clones.end()) return it->second;
  // Post-order over the operands, cloning what this scope does not have yet.
  std::vector<std::pair<Instruction*, size_t>> stack = {{inst, 0}};
  while (!stack.empty()) {
    auto& [cur, next] = stack.back();
    if (next < static_cast<size_t>(cur->operand_count())) {
      Instruction* operand = cur->operand(static_cast<int64_t>(next++));
      if (!scope->clones.count(operand)) stack.push_back({operand, 0});
      continue;
    }
    if (!scope->clones.count(cur)) {
      std::unique_ptr<Instruction> copy;
      if (cur->opcode() == Opcode::kConstant) {
        copy = Instruction::CreateConstant(NewName("constant"), cur->literal());
        copy->set_shape(cur->shape());
      } else {
        std::vector<Instruction*> operands;
        for (Instruction* o : cur->operands()) operands.push_back(scope->clones.at(o));
        copy = Instruction::Create(cur->opcode(), NewName(OpcodeName(cur->opcode())), cur->shape(), operands);
        copy->mutable_attrs() = cur->attrs();
      }
      copy->set_loc(cur->loc());
      *copy->mutable_metadata() = cur->metadata();
      scope->clones[cur] = scope->comp->AddInstruction(std::move(copy));
      if (auto q = quant_of_.find(cur); q != quant_of_.end()) quant_of_[scope->clones[cur]] = q->second;
    }
    stack.pop_back();
  }
  return scope->clones.at(inst);
}

// ---------------------------------------------------------------------------------------------------------------
// Regions

Computation* Lowerer::LowerRegion(const Region& region, const Op& owner, std::string_view role) {
  if (region.blocks.empty()) return Error(region.pos, "empty region"), nullptr;
  const Block& block = region.blocks[0];
  auto comp = std::make_unique<Computation>(NewComputationName(role));
  comp->set_loc(Loc(region.pos));
  Scope scope;
  scope.comp = comp.get();
  scope.parent = scope_;
  scope.owner = owner.name;
  {
    ScopeGuard guard(this, &scope);
    for (size_t i = 0; i < block.args.size(); ++i) {
      Shape shape;
      if (!ToShape(block.args[i].type, block.args[i].pos, &shape)) return nullptr;
      auto param = Instruction::CreateParameter(static_cast<int64_t>(i), NewName(fmt::format("Arg_{}", i)), shape);
      param->set_loc(Loc(block.args[i].pos));
      if (scope.values.count(block.args[i].name)) {
        return Error(block.args[i].pos, fmt::format("redefinition of '%{}'", block.args[i].name)), nullptr;
      }
      scope.values[block.args[i].name] = {comp->AddInstruction(std::move(param))};
      NoteQuant(scope.values[block.args[i].name][0], block.args[i].type);
    }
    std::vector<Instruction*> returned;
    std::vector<const Type*> types;
    size_t return_pos = region.pos;
    if (!LowerBlockBody(block, &owner, &returned, &types, &return_pos)) return nullptr;
    cur_loc_ = Loc(return_pos);
    if (returned.empty()) return Error(return_pos, "the region returns no value"), nullptr;
    comp->set_root(returned.size() == 1 ? returned[0] : EmitTuple(returned));
  }
  Computation* raw = comp.get();
  AddComputation(std::move(comp));
  return raw;
}

Computation* Lowerer::ScalarBinaryComputation(Opcode op, PrimitiveType type) {
  auto comp =
      std::make_unique<Computation>(NewComputationName(fmt::format("{}_{}", OpcodeName(op), PrimitiveTypeName(type))));
  Scope scope;
  scope.comp = comp.get();
  scope.parent = scope_;
  ScopeGuard guard(this, &scope);
  Instruction* lhs = comp->AddInstruction(Instruction::CreateParameter(0, NewName("lhs"), Shape::Scalar(type)));
  Instruction* rhs = comp->AddInstruction(Instruction::CreateParameter(1, NewName("rhs"), Shape::Scalar(type)));
  lhs->set_loc(cur_loc_);
  rhs->set_loc(cur_loc_);
  comp->set_root(Binary(op, lhs, rhs));
  Computation* raw = comp.get();
  AddComputation(std::move(comp));
  return raw;
}

bool Lowerer::CollectCaptures(const std::vector<const Region*>& regions, CaptureInfo* out) {
  std::vector<std::set<std::string>> scopes;
  std::set<std::pair<std::string, int64_t>> seen;
  std::vector<ValueRef> free;
  for (const Region* r : regions) CollectFreeUses(*r, &scopes, &seen, &free);
  for (const ValueRef& ref : free) {
    Instruction* v = LookupIn(scope_, ref.name, ref.index, ref.pos);
    if (v == nullptr) return false;
    if (IsConstantExpr(v)) continue;  // cloned into the region on use
    out->names.emplace_back(ref.name, ref.index);
    out->values.push_back(v);
  }
  return true;
}

Computation* Lowerer::LowerTupledRegion(const Region& region, const Op& owner, std::string_view role,
                                        const Shape& param_shape, bool untupled, const CaptureInfo& captures,
                                        const MakeRoot& make_root) {
  if (region.blocks.empty()) return Error(region.pos, "empty region"), nullptr;
  const Block& block = region.blocks[0];
  auto comp = std::make_unique<Computation>(NewComputationName(role));
  comp->set_loc(Loc(region.pos));
  Scope scope;
  scope.comp = comp.get();
  scope.parent = scope_;
  scope.owner = owner.name;
  ScopeGuard guard(this, &scope);
  cur_loc_ = Loc(region.pos);
  auto param_inst = Instruction::CreateParameter(0, NewName("Arg_0"), param_shape);
  param_inst->set_loc(Loc(region.pos));
  Instruction* param = comp->AddInstruction(std::move(param_inst));
  const size_t n = block.args.size();
  auto element_shape = [&](size_t i) -> const Shape& { return untupled ? param_shape : param_shape.tuple_shapes[i]; };
  if (!untupled && param_shape.tuple_shapes.size() != n + captures.values.size()) {
    return Error(region.pos, fmt::format("the region of '{}' takes {} arguments, but {} are passed", owner.name, n,
                                         param_shape.tuple_shapes.size() - captures.values.size())),
           nullptr;
  }
  if (untupled && n != 1) {
    return Error(region.pos, fmt::format("the region of '{}' takes {} arguments, but 1 is passed", owner.name, n)),
           nullptr;
  }
  for (size_t i = 0; i < n; ++i) {
    Shape declared;
    if (!ToShape(block.args[i].type, block.args[i].pos, &declared)) return nullptr;
    if (!ShapeRefines(declared, element_shape(i))) {
      return Error(block.args[i].pos,
                   fmt::format("region argument '%{}' has type {}, but the value passed is {}", block.args[i].name,
                               TypeToString(block.args[i].type), ShapeToString(element_shape(i), false))),
             nullptr;
    }
    scope.values[block.args[i].name] = {untupled ? param : EmitGte(param, static_cast<int64_t>(i))};
    NoteQuant(scope.values[block.args[i].name][0], block.args[i].type);
  }
  for (size_t k = 0; k < captures.values.size(); ++k) {
    scope.imported[captures.names[k]] = EmitGte(param, static_cast<int64_t>(n + k));
  }
  std::vector<Instruction*> returned;
  std::vector<const Type*> types;
  size_t return_pos = region.pos;
  if (!LowerBlockBody(block, &owner, &returned, &types, &return_pos)) return nullptr;
  cur_loc_ = Loc(return_pos);
  cur_op_ = &owner;
  Instruction* root = nullptr;
  if (!make_root(returned, param, return_pos, &root)) return nullptr;
  comp->set_root(root);
  Computation* raw = comp.get();
  AddComputation(std::move(comp));
  return raw;
}

}  // namespace xlac::shlo
