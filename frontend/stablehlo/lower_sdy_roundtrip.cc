// Shardy's round-trip form and the choice between a value's GSPMD and Shardy shardings.
//
// When StableHLO must survive a trip through HLO (PyTorch/XLA's and JAX's exports, XLA's
// xla/service/spmd/shardy/round_trip_common), Shardy attributes travel as strings in mhlo.frontend_attributes:
// the module's `xla.sdy.meshes = "{mesh = #sdy.mesh<[\"x\"=8]>}"`, an argument's or result's
// `xla.sdy.sharding = "#sdy.sharding<@mesh, [...]>"` and an op's `xla.sdy.sharding =
// "#sdy.sharding_per_value<[...]>"`. Those strings are MLIR attribute text: they are parsed in place (at the
// string's offset in the file, so their errors point into it) and lowered like the sdy dialect's own attributes.
//
// Shardy's export before mid-2024 quoted each mesh once more, in the older bracketless mesh syntax:
// `xla.sdy.meshes = "{mesh = \22#sdy.mesh<\\22a\\22=8>\22}"`; those strings are parsed in turn, their errors located
// exactly in the file.
//
// Exporters often write both forms (tt-xla: `mhlo.sharding` beside `xla.sdy.sharding`). Shardy's is what XLA
// partitions with when Shardy is on (its round-trip import drops the GSPMD strings), so it wins; when the two mean
// different shardings the user hears about it.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <string>

#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

constexpr std::string_view kRoundTripMeshes = "xla.sdy.meshes";
constexpr std::string_view kRoundTripSharding = "xla.sdy.sharding";

const Attr* FrontendAttr(const std::vector<NamedAttr>& attrs, std::string_view key) {
  for (const NamedAttr& a : attrs) {
    if (a.name != "mhlo.frontend_attributes" || a.value->kind != Attr::Kind::kDict) continue;
    for (const auto& [k, v] : a.value->dict) {
      if (k == key) return v.get();
    }
  }
  return nullptr;
}

// The offset in `raw` of character `decoded` of the string literal whose opening quote is raw[quote], under the
// lexer's escapes (\" \\ \n \t and \XX).
size_t RawStringOffset(std::string_view raw, size_t quote, size_t decoded) {
  auto is_hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  size_t i = quote + 1;
  for (size_t k = 0; k < decoded && i < raw.size() && raw[i] != '"'; ++k) {
    if (raw[i] != '\\') {
      ++i;
    } else if (i + 2 < raw.size() && is_hex(raw[i + 1]) && is_hex(raw[i + 2])) {
      i += 3;
    } else {
      i += 2;
    }
  }
  return i;
}

Sharding WithoutMetadata(Sharding s) {
  s.metadata.clear();
  for (Sharding& e : s.tuple_elements) e = WithoutMetadata(std::move(e));
  return s;
}

}  // namespace

bool Lowerer::ParseEmbeddedAttr(const Attr& string_attr, std::string_view what, AttrPtr* out) {
  if (string_attr.kind != Attr::Kind::kString) return Error(string_attr.pos, fmt::format("{} must be a string", what));
  // JAX's exports of early 2025 escaped the quotes inside these strings twice (`\\\22a\\\22` in the file, `\"a\"` once
  // read): an attribute's text has no backslash outside its own string literals, so one level comes off.
  std::string content = string_attr.str;
  if (content.find("\\\"") != std::string::npos && content.find('"') == content.find("\\\"") + 1) {
    std::string unescaped;
    for (size_t i = 0; i < content.size(); ++i) {
      if (content[i] == '\\' && i + 1 < content.size() && content[i + 1] == '"') continue;
      unescaped += content[i];
    }
    content = std::move(unescaped);
  }
  // The string's content stands where the string starts, after the text before it, so positions stay file offsets
  // (columns past an escape drift by its length).
  const size_t start = string_attr.pos + 1;
  std::string text(file_.text().substr(0, start));
  text += content;
  SourceFile sub_file(file_.name(), text, file_.line_offset());
  DiagnosticEngine sub_diags;
  Parser sub(sub_file, sub_diags, parser_.options());
  sub.ResetTo(start);  // lexes the first token
  AttrPtr attr;
  if (!sub.ParseAttribute(&attr)) {
    std::string message = sub_diags.diagnostics().empty() ? "invalid" : sub_diags.diagnostics()[0].message;
    return Error(string_attr.pos, fmt::format("in {} \"{}\": {}", what, string_attr.str, message));
  }
  if (sub.kind() != Tok::kEof) {
    return Error(string_attr.pos, fmt::format("{} \"{}\" has text after its attribute", what, string_attr.str));
  }
  *out = std::move(attr);
  return true;
}

bool Lowerer::CollectRoundTripMeshes(const ModuleAst& ast) {
  const Attr* meshes = FrontendAttr(ast.attrs, kRoundTripMeshes);
  if (meshes == nullptr) return true;
  AttrPtr parsed;
  if (!ParseEmbeddedAttr(*meshes, kRoundTripMeshes, &parsed)) return false;
  if (parsed->kind != Attr::Kind::kDict) {
    return Error(meshes->pos, fmt::format("{} must hold a dictionary of meshes", kRoundTripMeshes));
  }
  // Positions inside the string are its start plus an offset in its decoded text; this finds them in the file.
  auto file_pos = [&](size_t pos) {
    const size_t start = meshes->pos + 1;
    if (pos < start || pos - start > meshes->str.size()) return meshes->pos;
    return RawStringOffset(file_.text(), meshes->pos, pos - start);
  };
  // A quoted mesh, its positions made file offsets through both strings.
  auto parse_quoted = [&](const Attr& quoted, const std::string& name, SdyMesh* out) {
    const size_t quote = quoted.pos - (meshes->pos + 1);  // in the decoded text of the outer string
    auto to_file = [&](size_t offset) {
      return RawStringOffset(file_.text(), meshes->pos, RawStringOffset(meshes->str, quote, offset));
    };
    const std::string what = fmt::format("mesh @{} of {}", name, kRoundTripMeshes);
    SourceFile sub_file(file_.name(), quoted.str);
    DiagnosticEngine sub_diags;
    Parser sub(sub_file, sub_diags, parser_.options());
    sub.ResetTo(0);
    AttrPtr attr;
    if (!sub.ParseAttribute(&attr)) {
      size_t at = to_file(0);
      std::string message = "invalid";
      if (!sub_diags.diagnostics().empty()) {
        const Diagnostic& d = sub_diags.diagnostics()[0];
        message = d.message;
        if (d.loc.line == 1 && d.loc.col >= 1) at = to_file(static_cast<size_t>(d.loc.col - 1));
      }
      return Error(at, fmt::format("in {} \"{}\": {}", what, quoted.str, message));
    }
    if (attr->kind != Attr::Kind::kSdyMesh) {
      return Error(to_file(0), fmt::format("{} \"{}\" is not a #sdy.mesh<...>", what, quoted.str));
    }
    if (sub.kind() != Tok::kEof) {
      return Error(to_file(sub.pos()), fmt::format("{} \"{}\" has text after its mesh", what, quoted.str));
    }
    *out = attr->sdy->mesh;
    out->pos = to_file(out->pos);
    out->device_ids_pos = to_file(out->device_ids_pos);
    for (size_t& p : out->axis_pos) p = to_file(p);
    return true;
  };
  for (const auto& [name, value] : parsed->dict) {
    SdyMesh mesh;
    if (value->kind == Attr::Kind::kString) {
      if (!parse_quoted(*value, name, &mesh)) return false;
    } else if (value->kind == Attr::Kind::kSdyMesh) {
      mesh = value->sdy->mesh;
      mesh.pos = file_pos(mesh.pos);
      mesh.device_ids_pos = file_pos(mesh.device_ids_pos);
      for (size_t& p : mesh.axis_pos) p = file_pos(p);
    } else {
      return Error(file_pos(value->pos),
                   fmt::format("{}: @{} is not a #sdy.mesh<...> (nor a string holding one)", kRoundTripMeshes, name));
    }
    SdyMeshInfo info;
    if (!ValidateSdyMesh(mesh, "mesh @" + name, &info)) return false;
    auto [it, inserted] = sdy_meshes_.emplace(name, info);
    if (!inserted && !(it->second == info)) {
      return Error(meshes->pos,
                   fmt::format("{} defines mesh @{} differently from the module's sdy.mesh", kRoundTripMeshes, name));
    }
  }
  return true;
}

namespace {

// One device holds everything: {replicated}, or a tiling over a single device ({devices=[1]<=[1]} on a mesh of size 1).
bool WholeOnEveryDevice(const Sharding& s) {
  if (s.kind == Sharding::Kind::kReplicated) return true;
  if (s.kind != Sharding::Kind::kTiled || !s.last_tile_dims.empty()) return false;
  int64_t devices = 1;
  for (int64_t d : s.tile_dims) devices *= d;
  return devices == 1;
}

// The GSPMD and Shardy forms of one value's sharding say the same thing.
bool SameMeaning(const Sharding& a, const Sharding& b) {
  return WithoutMetadata(a) == WithoutMetadata(b) || (WholeOnEveryDevice(a) && WholeOnEveryDevice(b));
}

}  // namespace

bool Lowerer::ValueSharding(const std::vector<NamedAttr>& attrs, const Shape& shape, std::string_view value_name,
                            std::optional<Sharding>* out) {
  std::optional<Sharding> gspmd, shardy;
  size_t gspmd_pos = 0, shardy_pos = 0;
  for (const NamedAttr& a : attrs) {
    if (!IsShardingAttrName(a.name)) continue;
    std::optional<Sharding>& slot = a.name == "mhlo.sharding" ? gspmd : shardy;
    (a.name == "mhlo.sharding" ? gspmd_pos : shardy_pos) = a.pos;
    if (!ValueShardingAttr(a, shape, &slot)) return false;
  }
  if (const Attr* round_trip = FrontendAttr(attrs, kRoundTripSharding); round_trip != nullptr && !shardy) {
    AttrPtr parsed;
    if (!ParseEmbeddedAttr(*round_trip, kRoundTripSharding, &parsed)) return false;
    // Arguments carry #sdy.sharding<...>; results may carry a one-element #sdy.sharding_per_value<[...]>.
    if (!ValueShardingAttr(NamedAttr{"sdy.sharding", parsed, round_trip->pos}, shape, &shardy)) return false;
    shardy_pos = round_trip->pos;
  }
  if (gspmd.has_value() && shardy.has_value() && !SameMeaning(*gspmd, *shardy)) {
    diags_.Report(Severity::kWarning, Loc(shardy_pos),
                  fmt::format("{} has two shardings that disagree: GSPMD's mhlo.sharding {} (line {}) and Shardy's {}; "
                              "using Shardy's, as XLA does when Shardy is on",
                              value_name, ShardingToString(*gspmd, false), Loc(gspmd_pos).line,
                              ShardingToString(*shardy, false)));
  }
  *out = shardy.has_value() ? std::move(shardy) : std::move(gspmd);
  return true;
}

bool Lowerer::ApplyRoundTripOpSharding(const Op& op, const Results& results, Instruction* primary) {
  const Attr* round_trip = FrontendAttr(op.attrs, kRoundTripSharding);
  if (round_trip == nullptr) return true;
  for (const NamedAttr& a : op.attrs) {
    if (a.name == "sdy.sharding") return true;  // the dialect's own attribute says the same, first hand
  }
  AttrPtr parsed;
  if (!ParseEmbeddedAttr(*round_trip, kRoundTripSharding, &parsed)) return false;
  std::optional<Sharding> gspmd = primary->sharding();
  if (!ApplySdyOpSharding(*parsed, results, primary)) return false;
  if (gspmd.has_value() && primary->sharding().has_value() && !SameMeaning(*gspmd, *primary->sharding())) {
    diags_.Report(Severity::kWarning, Loc(round_trip->pos),
                  fmt::format("{} has two shardings that disagree: GSPMD's mhlo.sharding {} and Shardy's {}; using "
                              "Shardy's, as XLA does when Shardy is on",
                              op.name, ShardingToString(*gspmd, false), ShardingToString(*primary->sharding(), false)));
  }
  return true;
}

}  // namespace xlac::shlo

namespace xlac::shlo {

bool IsRoundTripShardMapTarget(std::string_view target) {
  if (target.starts_with("local_")) target.remove_prefix(6);  // an older spelling of the same markers
  return target == "xla.sdy.GlobalToLocalShape" || target == "xla.sdy.LocalToGlobalShape";
}

// The `call @xla.sdy.manual_computation_body*` of the current block that reads the results of `boundary` (a
// GlobalToLocalShape, `to_local`) or produces its operands (a LocalToGlobalShape), or nullptr. `positions[i]` becomes
// the call's operand (result) index of the boundary's result (operand) i.
const Op* Lowerer::FindShardMapBodyCall(const Op& boundary, bool to_local, std::vector<size_t>* positions) const {
  if (cur_block_ == nullptr) return nullptr;
  auto is_body_call = [](const Op& op) {
    if (op.name != "func.call") return false;
    const NamedAttr* callee = op.FindAttr("callee");
    return callee != nullptr && callee->value->kind == Attr::Kind::kSymbol &&
           callee->value->str.starts_with("xla.sdy.manual_computation_body");
  };
  for (const Op& call : cur_block_->ops) {
    if (!is_body_call(call)) continue;
    std::vector<size_t> found(positions->size(), SIZE_MAX);
    size_t matched = 0;
    if (to_local) {
      // Boundary result i is the i-th value of its result groups; find the call operand naming it.
      size_t i = 0;
      for (const ResultGroup& g : boundary.results) {
        for (int64_t r = 0; r < g.count && i < found.size(); ++r, ++i) {
          for (size_t k = 0; k < call.operands.size(); ++k) {
            const ValueRef& v = call.operands[k];
            if (v.name == g.name && (v.index == r || (g.count == 1 && v.index == 0))) {
              found[i] = k;
              ++matched;
              break;
            }
          }
        }
      }
    } else {
      for (size_t i = 0; i < boundary.operands.size() && i < found.size(); ++i) {
        const ValueRef& v = boundary.operands[i];
        size_t base = 0;
        for (const ResultGroup& g : call.results) {
          if (g.name == v.name && v.index < g.count) {
            found[i] = base + static_cast<size_t>(v.index);
            ++matched;
            break;
          }
          base += static_cast<size_t>(g.count);
        }
      }
    }
    if (matched == 0) continue;
    if (matched != found.size()) return nullptr;  // split across calls: not the round-trip form
    *positions = std::move(found);
    return &call;
  }
  return nullptr;
}

// Shardy's round-trip form of a shard_map (sdy.manual_computation exported for HLO): the body is a function called
// between `xla.sdy.GlobalToLocalShape(operands)` (frontend attributes xla.sdy.in_shardings, xla.sdy.manual_axes)
// and `xla.sdy.LocalToGlobalShape(results)` (xla.sdy.out_shardings). Each boundary lowers to what
// sdy.manual_computation's own lowering emits per value: Sharding + SPMDFullToShardShape on the way in, Sharding
// {manual} + SPMDShardToFullShape on the way out; the call in between stays a call whose values are manual.
bool Lowerer::LowerRoundTripShardMapBoundary(const Op& op, std::string_view target,
                                             const std::vector<Instruction*>& operands,
                                             const std::vector<Shape>& shapes, Results* results) {
  const bool to_local = target.ends_with("GlobalToLocalShape");
  const std::string_view key = to_local ? "xla.sdy.in_shardings" : "xla.sdy.out_shardings";
  // Where the shardings are: on the boundary itself, or (JAX from early 2025) on the call of the body between the
  // two boundaries, one per operand / result of that call.
  const Op* holder = &op;
  std::vector<size_t> positions(operands.size());
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = i;
  const Attr* shardings_text = FrontendAttr(op.attrs, key);
  if (shardings_text == nullptr) {
    holder = FindShardMapBodyCall(op, to_local, &positions);
    if (holder != nullptr) shardings_text = FrontendAttr(holder->attrs, key);
  }
  if (shardings_text == nullptr) {
    return OpError(op, fmt::format("{} needs {} in its mhlo.frontend_attributes (or on the call of the "
                                   "xla.sdy.manual_computation_body it {})",
                                   target, key, to_local ? "feeds" : "reads"));
  }
  AttrPtr shardings;
  if (!ParseEmbeddedAttr(*shardings_text, key, &shardings)) return false;
  const size_t expected = holder == &op ? operands.size() : holder->operands.size();
  const size_t count = holder == &op || to_local ? expected : static_cast<size_t>(holder->NumResults());
  if (shardings->kind != Attr::Kind::kSdyShardingPerValue || shardings->sdy->shardings.size() != count ||
      shapes.size() != operands.size()) {
    return Error(
        shardings_text->pos,
        fmt::format("{} must be a #sdy.sharding_per_value<[...]> with one sharding per {} of {} ({})", key,
                    to_local || holder == &op ? "operand" : "result", holder == &op ? target : "the call", count));
  }
  // Which mesh axes are manual: all of them (a fully manual shard_map), or some (a manual subgroup).
  std::vector<std::string> axes;
  const Attr* axes_text = FrontendAttr(op.attrs, "xla.sdy.manual_axes");
  if (axes_text == nullptr && holder != &op) axes_text = FrontendAttr(holder->attrs, "xla.sdy.manual_axes");
  if (axes_text != nullptr && !ParseManualAxes(*axes_text, &axes)) return false;
  for (size_t i = 0; i < operands.size(); ++i) {
    Instruction* x = operands[i];
    const SdySharding& sharding = shardings->sdy->shardings[positions[i]];
    ShardMapValue v;
    if (!ShardMapShardings(sharding, to_local ? x->shape() : shapes[i], axes, sharding.pos, &v)) return false;
    const Shape& local = to_local ? shapes[i] : x->shape();
    if (!axes.empty() && !v.local_shape.Compatible(local)) {
      return OpError(op, fmt::format("{} value {} is {} locally, but its manual shard ({} under {}) is {}", target, i,
                                     ShapeToString(local, false), to_local ? "operand" : "result",
                                     ShardingToString(v.global), ShapeToString(v.local_shape, false)));
    }
    if (to_local) {
      Instruction* constrained = EmitShardingCall("Sharding", x->shape(), x, v.global);
      results->push_back(axes.empty() ? constrained
                                      : EmitShardingCall("SPMDFullToShardShape", shapes[i], constrained, v.local));
    } else if (!axes.empty()) {
      Instruction* manual_value = EmitShardingCall("Sharding", x->shape(), x, v.local);
      results->push_back(EmitShardingCall("SPMDShardToFullShape", shapes[i], manual_value, v.global));
    } else {
      results->push_back(EmitShardingCall("Sharding", x->shape(), x, v.global));
    }
  }
  return true;
}

bool Lowerer::ParseManualAxes(const Attr& text, std::vector<std::string>* names) {
  AttrPtr axes;
  if (!ParseEmbeddedAttr(text, "xla.sdy.manual_axes", &axes)) return false;
  if (axes->kind != Attr::Kind::kSdyManualAxes) {
    return Error(text.pos, "xla.sdy.manual_axes must be a #sdy<manual_axes{...}>");
  }
  names->clear();
  for (const SdyAxisRef& a : axes->sdy->axes) names->push_back(a.name);
  return true;
}

// The manual axes of each body function of the round-trip form, from its call (early 2025) or the
// GlobalToLocalShape feeding it, so the body's own shardings are read inside the shard_map wherever the function
// stands in the file.
bool Lowerer::CollectRoundTripBodyAxes(const ModuleAst& ast) {
  std::function<bool(const Block&)> walk = [&](const Block& block) {
    for (const Op& op : block.ops) {
      for (const Region& r : op.regions) {
        for (const Block& b : r.blocks) {
          if (!walk(b)) return false;
        }
      }
      const NamedAttr* callee = op.name == "func.call" ? op.FindAttr("callee") : nullptr;
      if (callee == nullptr || callee->value->kind != Attr::Kind::kSymbol ||
          !callee->value->str.starts_with("xla.sdy.manual_computation_body") ||
          round_trip_body_axes_.count(callee->value->str)) {
        continue;
      }
      const Attr* text = FrontendAttr(op.attrs, "xla.sdy.manual_axes");
      for (size_t k = 0; text == nullptr && k < op.operands.size(); ++k) {
        for (const Op& producer : block.ops) {
          const NamedAttr* target = producer.FindAttr("call_target_name");
          const bool produces = std::any_of(producer.results.begin(), producer.results.end(),
                                            [&](const ResultGroup& g) { return g.name == op.operands[k].name; });
          if (produces && target != nullptr && target->value->kind == Attr::Kind::kString &&
              IsRoundTripShardMapTarget(target->value->str)) {
            text = FrontendAttr(producer.attrs, "xla.sdy.manual_axes");
            break;
          }
        }
      }
      std::vector<std::string> axes;
      if (text != nullptr && !ParseManualAxes(*text, &axes)) return false;
      round_trip_body_axes_[callee->value->str] = std::move(axes);
    }
    return true;
  };
  for (const Func& f : ast.funcs) {
    for (const Block& b : f.body.blocks) {
      if (!walk(b)) return false;
    }
  }
  return true;
}

}  // namespace xlac::shlo
