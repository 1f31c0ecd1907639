// Module-level verification: entry computation layout, input/output aliasing, buffer donors and all-reduce layout
// constraints (XLA's VerifyEntryComputationLayout, HloInputOutputAliasConfig::Verify, HloBufferDonorConfig::Verify
// and VerifyLayoutConstrainedAllReduce).
#include <set>
#include <utility>
#include <vector>

#include "ir/shape_inference_internal.h"
#include "passes/verifier_internal.h"

namespace xlac::verifier_internal {
namespace {

using shape_inference_internal::ShapeProblem;
using shape_inference_internal::ShapesCompatible;

void VerifyEntryLayout(const Module& module, const VerifierOptions& options, Reporter& r) {
  const std::optional<ComputationLayout>& layout = module.config().entry_computation_layout;
  if (!layout) return;
  const Computation& entry = *module.entry_computation();
  const SourceLoc loc = entry.loc();
  if (static_cast<int64_t>(layout->parameters.size()) != entry.parameter_count()) {
    r.Error(loc, fmt::format("entry_computation_layout has {} parameters but entry computation '{}' has {}",
                             layout->parameters.size(), entry.name(), entry.parameter_count()));
    return;
  }
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    const Shape& declared = layout->parameters[i];
    const Shape& actual = entry.parameter(i)->shape();
    if (std::optional<std::string> problem = ShapeProblem(declared)) {
      r.Error(loc, fmt::format("entry_computation_layout parameter {} is malformed: {}", i, *problem));
    } else if (!ShapesCompatible(declared, actual)) {
      r.Error(entry.parameter(i)->loc(),
              fmt::format("entry parameter {} '{}' has shape {} but entry_computation_layout declares {}", i,
                          entry.parameter(i)->name(), Str(actual), Str(declared)));
    } else if (options.check_layouts && !LayoutsMatch(declared, actual, /*ignore_tiles_and_memory_space=*/true)) {
      r.Error(entry.parameter(i)->loc(),
              fmt::format("entry parameter {} '{}' has layout {} but entry_computation_layout declares {}", i,
                          entry.parameter(i)->name(), StrWithLayout(actual), StrWithLayout(declared)));
    }
  }
  const Shape& root = entry.root()->shape();
  if (std::optional<std::string> problem = ShapeProblem(layout->result)) {
    r.Error(loc, fmt::format("entry_computation_layout result is malformed: {}", *problem));
  } else if (!ShapesCompatible(layout->result, root)) {
    r.Error(entry.root()->loc(), fmt::format("entry root '{}' has shape {} but entry_computation_layout declares {}",
                                             entry.root()->name(), Str(root), Str(layout->result)));
  } else if (options.check_layouts && !LayoutsMatch(layout->result, root, /*ignore_tiles_and_memory_space=*/true)) {
    r.Error(entry.root()->loc(), fmt::format("entry root '{}' has layout {} but entry_computation_layout declares {}",
                                             entry.root()->name(), StrWithLayout(root), StrWithLayout(layout->result)));
  }
}

// XLA's HloInputOutputAliasConfig::Verify and HloBufferDonorConfig::Verify.
void VerifyAliasing(const Module& module, const VerifierOptions& options, Reporter& r) {
  const ModuleConfig& config = module.config();
  const Computation& entry = *module.entry_computation();
  const SourceLoc loc = entry.loc();
  const bool have_layout =
      config.entry_computation_layout.has_value() &&
      static_cast<int64_t>(config.entry_computation_layout->parameters.size()) == entry.parameter_count();
  auto param_shape = [&](int64_t number) -> const Shape& {
    return have_layout ? config.entry_computation_layout->parameters[number] : entry.parameter(number)->shape();
  };
  const Shape& result_shape = have_layout ? config.entry_computation_layout->result : entry.root()->shape();

  // Validates (parameter, index) and returns the aliased subshape, or nullptr after reporting.
  auto param_subshape = [&](std::string_view what, int64_t number, const std::vector<int64_t>& index) -> const Shape* {
    if (number < 0 || number >= entry.parameter_count()) {
      r.Error(loc, fmt::format("{} names parameter {}, but the entry computation has {} parameters", what, number,
                               entry.parameter_count()));
      return nullptr;
    }
    const Shape* sub = param_shape(number).Subshape(index);
    if (sub == nullptr) {
      r.Error(loc, fmt::format("{} index {} is not valid for parameter {} of shape {}", what, ShapeIndexToString(index),
                               number, Str(param_shape(number))));
      return nullptr;
    }
    if (!sub->IsArray()) {
      r.Error(loc, fmt::format("{} parameter {} at {} is {}, not an array", what, number, ShapeIndexToString(index),
                               Str(*sub)));
      return nullptr;
    }
    return sub;
  };

  std::set<std::pair<int64_t, std::vector<int64_t>>> aliased_params;
  std::set<std::vector<int64_t>> aliased_outputs;
  for (const InputOutputAlias& alias : config.input_output_alias) {
    const Shape* out = result_shape.Subshape(alias.output_index);
    if (out == nullptr) {
      r.Error(loc, fmt::format("input_output_alias output index {} is not valid for the entry result {}",
                               ShapeIndexToString(alias.output_index), Str(result_shape)));
      continue;
    }
    if (!out->IsArray()) {
      r.Error(loc, fmt::format("input_output_alias output {} is {}, not an array",
                               ShapeIndexToString(alias.output_index), Str(*out)));
      continue;
    }
    if (!aliased_outputs.insert(alias.output_index).second) {
      r.Error(loc, fmt::format("input_output_alias aliases output {} more than once",
                               ShapeIndexToString(alias.output_index)));
    }
    const Shape* in = param_subshape("input_output_alias", alias.parameter_number, alias.parameter_index);
    if (in == nullptr) continue;
    if (!aliased_params.insert({alias.parameter_number, alias.parameter_index}).second) {
      r.Error(loc, fmt::format("input_output_alias aliases parameter {} at {} more than once", alias.parameter_number,
                               ShapeIndexToString(alias.parameter_index)));
    }
    // Sizes only exist once layouts are fixed, so (like XLA) sizes and must-alias layouts are checked only then.
    if (options.check_layouts) {
      if (in->ByteSizeOf() != out->ByteSizeOf()) {
        r.Error(loc, fmt::format("input_output_alias pairs output {} ({}) with parameter {} at {} ({}) of another size",
                                 ShapeIndexToString(alias.output_index), StrWithLayout(*out), alias.parameter_number,
                                 ShapeIndexToString(alias.parameter_index), StrWithLayout(*in)));
      } else if (alias.must_alias && (!ShapesCompatible(*in, *out) || !LayoutsMatch(*in, *out, false))) {
        r.Error(loc, fmt::format("must-alias output {} ({}) and parameter {} at {} ({}) differ",
                                 ShapeIndexToString(alias.output_index), StrWithLayout(*out), alias.parameter_number,
                                 ShapeIndexToString(alias.parameter_index), StrWithLayout(*in)));
      }
    }
  }
  std::set<std::pair<int64_t, std::vector<int64_t>>> donors;
  for (const BufferDonor& donor : config.buffer_donor) {
    if (param_subshape("buffer_donor", donor.parameter_number, donor.parameter_index) == nullptr) continue;
    if (!donors.insert({donor.parameter_number, donor.parameter_index}).second) {
      r.Error(loc, fmt::format("buffer_donor lists parameter {} at {} more than once", donor.parameter_number,
                               ShapeIndexToString(donor.parameter_index)));
    } else if (aliased_params.count({donor.parameter_number, donor.parameter_index})) {
      r.Error(loc, fmt::format("parameter {} at {} is both a buffer donor and in input_output_alias",
                               donor.parameter_number, ShapeIndexToString(donor.parameter_index)));
    }
  }
}

// XLA rejects modules that mix layout-constrained and unconstrained all-reduces.
void VerifyAllReduceLayoutConstraints(const Module& module, Reporter& r) {
  const Instruction* reference = nullptr;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kAllReduce && inst->opcode() != Opcode::kAllReduceStart) continue;
      if (reference == nullptr) {
        reference = inst.get();
      } else if (inst->BoolAttr("constrain_layout", false) != reference->BoolAttr("constrain_layout", false)) {
        r.InstError(*inst, fmt::format("constrain_layout differs from all-reduce '{}'; a module may not mix "
                                       "layout-constrained and unconstrained all-reduces",
                                       reference->name()));
        return;
      }
    }
  }
}

}  // namespace

void VerifyModuleConfig(const Module& module, const VerifierOptions& options, Reporter& reporter) {
  VerifyEntryLayout(module, options, reporter);
  VerifyAliasing(module, options, reporter);
  VerifyAllReduceLayoutConstraints(module, reporter);
}

}  // namespace xlac::verifier_internal
