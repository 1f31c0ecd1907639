// Shardy's round-trip attributes of an HLO module (hlo_sdy_import.h), converted by the StableHLO frontend's own
// Shardy lowering: each attribute text is parsed and lowered by a Lowerer whose source is a lone empty string, so
// the texts are read exactly as they are in a StableHLO file, and errors come back to the instruction carrying them.
#include "frontend/stablehlo/hlo_sdy_import.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac {
namespace {

constexpr std::string_view kMeshes = "xla.sdy.meshes";
constexpr std::string_view kSharding = "xla.sdy.sharding";
constexpr std::string_view kInShardings = "xla.sdy.in_shardings";
constexpr std::string_view kOutShardings = "xla.sdy.out_shardings";
constexpr std::string_view kManualAxes = "xla.sdy.manual_axes";

const std::string* FindAttr(const StringMap& attrs, std::string_view key) {
  for (const auto& [k, v] : attrs) {
    if (k == key) return &v;
  }
  return nullptr;
}

bool IsBodyCall(const Instruction& inst) {
  if (inst.opcode() != Opcode::kCall || inst.called_computations().empty()) return false;
  std::string_view name = inst.called_computation()->name();
  if (name.starts_with("local_")) name.remove_prefix(6);
  return name.starts_with("xla.sdy.manual_computation_body");
}

// A shard_map boundary; `to_local` for xla.sdy.GlobalToLocalShape.
bool IsBoundary(const Instruction& inst, bool* to_local) {
  if (inst.opcode() != Opcode::kCustomCall) return false;
  const std::string_view target = inst.StringAttr("custom_call_target");
  if (!shlo::IsRoundTripShardMapTarget(target)) return false;
  *to_local = target.ends_with("GlobalToLocalShape");
  return true;
}

// The HLO parser keeps a braced attribute value verbatim, and XLA prints the quotes inside it escaped.
std::string UnescapeQuotes(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && (text[i + 1] == '"' || text[i + 1] == '\\')) ++i;
    out += text[i];
  }
  return out;
}

bool HasRoundTripAttributes(const Module& module) {
  if (FindAttr(module.config().frontend_attributes, kMeshes) != nullptr) return true;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      bool to_local;
      if (IsBoundary(*inst, &to_local) || FindAttr(inst->frontend_attributes(), kSharding) != nullptr) return true;
    }
  }
  return false;
}

}  // namespace

namespace shlo {
namespace {

class HloShardyImporter {
 public:
  HloShardyImporter(Module& module, DiagnosticEngine& diags)
      : module_(module),
        diags_(diags),
        file_("<xla.sdy attribute>", kText),
        parser_(file_, sub_diags_, options_),
        lowerer_(parser_, file_, sub_diags_, options_) {}

  bool Run();

 private:
  // The file holds an empty string literal; each attribute text is parsed as its content (ParseEmbeddedAttr reads
  // the text before the string's start from the file and the rest from the string).
  static constexpr std::string_view kText = "\"\"";

  static AttrPtr Text(std::string content) {
    auto attr = std::make_shared<Attr>();
    attr->kind = Attr::Kind::kString;
    attr->str = std::move(content);
    return attr;
  }

  // Reports the Lowerer's error at `inst` (the HLO text's location), quoting attribute `key`'s `text` unless the
  // message already does, and returns false.
  bool Fail(const Instruction& inst, std::string_view fallback, std::string_view key = {}, std::string_view text = {}) {
    std::string message(fallback);
    for (const Diagnostic& d : sub_diags_.diagnostics()) {
      if (d.severity == Severity::kError) {
        message = d.message;
        break;
      }
    }
    sub_diags_.clear();
    // The Lowerer speaks of StableHLO's mesh definitions; here they come from the module's frontend attributes.
    const std::string no_mesh = "the module defines no sdy.mesh";
    if (size_t at = message.find(no_mesh); at != std::string::npos) {
      message.replace(at, no_mesh.size(), fmt::format("the module's frontend attributes define no {}", kMeshes));
    }
    if (!key.empty() && !message.starts_with("in ")) message = fmt::format("in {} \"{}\": {}", key, text, message);
    diags_.Error(inst.loc(), fmt::format("%{}: {}", inst.name(), message));
    return false;
  }
  bool Error(const Instruction& inst, std::string message) {
    diags_.Error(inst.loc(), fmt::format("%{}: {}", inst.name(), message));
    return false;
  }

  bool Parse(const Instruction& inst, std::string_view key, const std::string& text, AttrPtr* out) {
    if (!lowerer_.ParseEmbeddedAttr(*Text(text), key, out)) return Fail(inst, "invalid");
    return true;
  }
  bool Axes(const Instruction& inst, const std::string& text, std::vector<std::string>* out) {
    if (!lowerer_.ParseManualAxes(*Text(text), out)) return Fail(inst, "invalid xla.sdy.manual_axes");
    return true;
  }
  bool ShardingList(const Instruction& inst, std::string_view key, const std::string& text,
                    const std::vector<SdySharding>** out, AttrPtr* holder) {
    if (!Parse(inst, key, text, holder)) return false;
    if ((*holder)->kind != Attr::Kind::kSdySharding && (*holder)->kind != Attr::Kind::kSdyShardingPerValue) {
      return Error(inst,
                   fmt::format("{} \"{}\" is not a #sdy.sharding<...> or #sdy.sharding_per_value<[...]>", key, text));
    }
    *out = &(*holder)->sdy->shardings;
    return true;
  }

  bool CollectMeshes();
  // The manual axes of the shard_map whose body `call` calls: its own attribute (JAX of early 2025), or that of
  // the xla.sdy.GlobalToLocalShape feeding it.
  bool BodyAxes(const Instruction& call, std::vector<std::string>* out);
  bool ApplySharding(Instruction& inst, const std::string& text);
  bool RewriteBoundary(Computation& comp, Instruction* boundary, bool to_local);
  Instruction* ShardingCall(const Instruction& at, std::string_view target, const Shape& shape, Instruction* x,
                            Sharding sharding);

  Module& module_;
  DiagnosticEngine& diags_;
  StableHloParseOptions options_;
  DiagnosticEngine sub_diags_;
  SourceFile file_;
  Parser parser_;
  Lowerer lowerer_;
};

bool HloShardyImporter::CollectMeshes() {
  const std::string* meshes = FindAttr(module_.config().frontend_attributes, kMeshes);
  if (meshes == nullptr) return true;
  auto dict = std::make_shared<Attr>();
  dict->kind = Attr::Kind::kDict;
  dict->dict.emplace_back(std::string(kMeshes), Text(UnescapeQuotes(*meshes)));
  ModuleAst ast;
  ast.attrs.push_back(NamedAttr{"mhlo.frontend_attributes", dict, 0});
  if (lowerer_.CollectRoundTripMeshes(ast)) {
    // Printed back as XLA prints it, whichever quoting the file used.
    for (auto& [key, value] : module_.mutable_config().frontend_attributes) {
      if (key == kMeshes) value = UnescapeQuotes(value);
    }
    return true;
  }
  std::string message = "invalid";
  if (!sub_diags_.diagnostics().empty()) message = sub_diags_.diagnostics()[0].message;
  const Computation* entry = module_.entry_computation();
  diags_.Error(entry != nullptr ? entry->loc() : SourceLoc{}, fmt::format("the module's {}: {}", kMeshes, message));
  return false;
}

bool HloShardyImporter::BodyAxes(const Instruction& call, std::vector<std::string>* out) {
  const std::string* text = FindAttr(call.frontend_attributes(), kManualAxes);
  const Instruction* at = &call;
  for (int64_t i = 0; text == nullptr && i < call.operand_count(); ++i) {
    const Instruction* producer = call.operand(i);
    if (producer->opcode() == Opcode::kGetTupleElement) producer = producer->operand(0);
    bool to_local = false;
    if (IsBoundary(*producer, &to_local) && to_local) {
      text = FindAttr(producer->frontend_attributes(), kManualAxes);
      at = producer;
    }
  }
  out->clear();
  return text == nullptr || Axes(*at, *text, out);
}

bool HloShardyImporter::ApplySharding(Instruction& inst, const std::string& text) {
  AttrPtr holder;
  const std::vector<SdySharding>* list = nullptr;
  if (!ShardingList(inst, kSharding, text, &list, &holder)) return false;
  const Shape& shape = inst.shape();
  const std::vector<Shape> values = shape.IsTuple() ? shape.tuple_shapes : std::vector<Shape>{shape};
  if (list->size() != values.size()) {
    return Error(inst,
                 fmt::format("{} \"{}\" has {} sharding{}, but the instruction has {} value{}", kSharding, text,
                             list->size(), list->size() == 1 ? "" : "s", values.size(), values.size() == 1 ? "" : "s"));
  }
  std::vector<Sharding> converted(values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].IsArray()) continue;  // tokens and nested tuples: whole on every device
    if (!lowerer_.SdyToSharding((*list)[i], values[i], &converted[i])) {
      return Fail(inst, "invalid sharding", kSharding, text);
    }
  }
  inst.set_sharding(shape.IsTuple() ? Sharding::Tuple(std::move(converted)) : std::move(converted[0]));
  return true;
}

Instruction* HloShardyImporter::ShardingCall(const Instruction& at, std::string_view target, const Shape& shape,
                                             Instruction* x, Sharding sharding) {
  auto cc = Instruction::Create(Opcode::kCustomCall, module_.UniqueInstructionName("custom-call"), shape, {x});
  cc->SetAttr("custom_call_target", AttrValue::String(std::string(target)));
  cc->set_sharding(std::move(sharding));
  cc->set_loc(at.loc());
  *cc->mutable_metadata() = at.metadata();
  return at.parent()->AddInstruction(std::move(cc));
}

bool HloShardyImporter::RewriteBoundary(Computation& comp, Instruction* boundary, bool to_local) {
  const std::string_view target = boundary->StringAttr("custom_call_target");
  const std::string_view key = to_local ? kInShardings : kOutShardings;
  const int64_t n = boundary->operand_count();
  std::vector<Shape> shapes =
      boundary->shape().IsTuple() ? boundary->shape().tuple_shapes : std::vector<Shape>{boundary->shape()};
  if (static_cast<int64_t>(shapes.size()) != n) {
    return Error(*boundary, fmt::format("{} has {} operand{} but {} result{}", target, n, n == 1 ? "" : "s",
                                        shapes.size(), shapes.size() == 1 ? "" : "s"));
  }
  // The shardings are on the boundary, or (JAX of early 2025) on the call of the body between the boundaries, one
  // per operand (result) of that call: `positions[i]` is the call's index of boundary value i.
  const Instruction* holder = boundary;
  std::vector<size_t> positions(static_cast<size_t>(n));
  for (size_t i = 0; i < positions.size(); ++i) positions[i] = i;
  const std::string* text = FindAttr(boundary->frontend_attributes(), key);
  if (text == nullptr) {
    for (int64_t i = 0; i < n && holder == boundary; ++i) {
      if (to_local) {
        // Boundary value i is the boundary itself or its get-tuple-element i; some body call reads it.
        std::vector<const Instruction*> values = {boundary};
        for (const Instruction* user : boundary->users()) {
          if (user->opcode() == Opcode::kGetTupleElement) values.push_back(user);
        }
        for (const Instruction* v : values) {
          for (const Instruction* user : v->users()) {
            if (IsBodyCall(*user)) holder = user;
          }
        }
      } else {
        const Instruction* producer = boundary->operand(i);
        if (producer->opcode() == Opcode::kGetTupleElement) producer = producer->operand(0);
        if (IsBodyCall(*producer)) holder = producer;
      }
    }
    if (holder != boundary) {
      text = FindAttr(holder->frontend_attributes(), key);
      for (int64_t i = 0; i < n; ++i) {
        if (to_local) {
          const Instruction* value = boundary;
          for (const Instruction* user : boundary->users()) {
            if (user->opcode() == Opcode::kGetTupleElement && user->IntAttr("index") == i) value = user;
          }
          const std::vector<Instruction*>& ops = holder->operands();
          auto it = std::find(ops.begin(), ops.end(), value);
          if (it == ops.end())
            return Error(*boundary, fmt::format("{} value {} does not reach the call of its body", target, i));
          positions[static_cast<size_t>(i)] = static_cast<size_t>(it - ops.begin());
        } else {
          const Instruction* y = boundary->operand(i);
          positions[static_cast<size_t>(i)] =
              y->opcode() == Opcode::kGetTupleElement ? static_cast<size_t>(y->IntAttr("index")) : 0;
        }
      }
    }
  }
  if (text == nullptr && n == 1 && boundary->operand(0)->shape().Compatible(boundary->shape())) {
    return true;  // no shardings and no change of shape: an identity (annotation-custom-calls makes it a copy)
  }
  if (text == nullptr) {
    return Error(*boundary, fmt::format("{} needs {} in its frontend attributes (or on the call of the "
                                        "xla.sdy.manual_computation_body it {})",
                                        target, key, to_local ? "feeds" : "reads"));
  }
  AttrPtr parsed;
  const std::vector<SdySharding>* list = nullptr;
  if (!ShardingList(*boundary, key, *text, &list, &parsed)) return false;
  for (size_t p : positions) {
    if (p >= list->size()) {
      return Error(*boundary, fmt::format("{} \"{}\" has {} sharding{}, too few for the shard_map's values", key, *text,
                                          list->size(), list->size() == 1 ? "" : "s"));
    }
  }
  std::vector<std::string> axes;
  const std::string* axes_text = FindAttr(boundary->frontend_attributes(), kManualAxes);
  if (axes_text == nullptr && holder != boundary) axes_text = FindAttr(holder->frontend_attributes(), kManualAxes);
  if (axes_text != nullptr && !Axes(*boundary, *axes_text, &axes)) return false;

  std::vector<Instruction*> values;
  for (int64_t i = 0; i < n; ++i) {
    Instruction* x = boundary->operand(i);
    const Shape& global = to_local ? x->shape() : shapes[i];
    const Shape& local = to_local ? shapes[i] : x->shape();
    if (!x->shape().IsArray()) {  // a token crosses unchanged
      values.push_back(x);
      continue;
    }
    Lowerer::ShardMapValue v;
    if (!lowerer_.ShardMapShardings((*list)[positions[i]], global, axes, 0, &v)) {
      return Fail(*boundary, "invalid sharding", key, *text);
    }
    if (!axes.empty() && !v.local_shape.Compatible(local)) {
      return Error(*boundary, fmt::format("{} value {} is {} locally, but its manual shard ({} under {}) is {}", target,
                                          i, ShapeToString(local, false), to_local ? "operand" : "result",
                                          ShardingToString(v.global), ShapeToString(v.local_shape, false)));
    }
    if (to_local) {
      Instruction* constrained = ShardingCall(*boundary, "Sharding", x->shape(), x, v.global);
      values.push_back(axes.empty() ? constrained
                                    : ShardingCall(*boundary, "SPMDFullToShardShape", shapes[i], constrained, v.local));
    } else if (axes.empty()) {
      values.push_back(ShardingCall(*boundary, "Sharding", x->shape(), x, v.global));
    } else {
      Instruction* manual_value = ShardingCall(*boundary, "Sharding", x->shape(), x, v.local);
      values.push_back(ShardingCall(*boundary, "SPMDShardToFullShape", shapes[i], manual_value, v.global));
    }
  }
  Instruction* replacement = values[0];
  if (boundary->shape().IsTuple()) {
    // Its get-tuple-elements read the values directly; anything else reads a tuple of them, annotated so that
    // propagation keeps every leaf as the boundary made it.
    for (Instruction* user : std::vector<Instruction*>(boundary->users())) {
      if (user->opcode() != Opcode::kGetTupleElement) continue;
      const int64_t index = user->IntAttr("index");
      if (index < 0 || index >= n) continue;
      user->ReplaceAllUsesWith(values[static_cast<size_t>(index)]);
      user->DetachFromOperandsAndEdges();
      if (absl::Status s = comp.RemoveInstruction(user); !s.ok()) return Error(*boundary, std::string(s.message()));
    }
    auto tuple = Instruction::Create(Opcode::kTuple, module_.UniqueInstructionName("tuple"), boundary->shape(), values);
    tuple->set_loc(boundary->loc());
    std::vector<Sharding> leaves;
    for (Instruction* v : values) leaves.push_back(v->sharding().value_or(Sharding::Replicated()));
    tuple->set_sharding(Sharding::Tuple(std::move(leaves)));
    replacement = comp.AddInstruction(std::move(tuple));
  }
  boundary->ReplaceAllUsesWith(replacement);
  boundary->DetachFromOperandsAndEdges();
  if (absl::Status s = comp.RemoveInstruction(boundary); !s.ok()) return Error(*replacement, std::string(s.message()));
  if (replacement->opcode() == Opcode::kTuple && replacement->user_count() == 0 && comp.root() != replacement) {
    if (absl::Status s = comp.RemoveInstruction(replacement); !s.ok())
      return Error(*boundary, std::string(s.message()));
  }
  return true;
}

bool HloShardyImporter::Run() {
  sub_diags_.clear();
  if (!CollectMeshes()) return false;
  // The manual axes in force in each computation: a shard_map body's add its boundary's to its caller's; every
  // other callee inherits its caller's. Callers come first in reverse post order.
  std::vector<Computation*> order = module_.MakeComputationPostOrder();
  std::reverse(order.begin(), order.end());
  std::map<const Computation*, std::vector<std::string>> axes_of;
  for (Computation* comp : order) {
    const std::vector<std::string> outer = axes_of[comp];
    for (const auto& inst : comp->instructions()) {
      for (Computation* callee : inst->called_computations()) {
        std::vector<std::string> axes = outer;
        if (IsBodyCall(*inst)) {
          std::vector<std::string> own;
          if (!BodyAxes(*inst, &own)) return false;
          axes.insert(axes.end(), own.begin(), own.end());
        }
        axes_of.emplace(callee, std::move(axes));
      }
    }
  }
  // Without the module's meshes the values' Shardy shardings name nothing: their GSPMD ones (if any) stand.
  const bool has_meshes = FindAttr(module_.config().frontend_attributes, kMeshes) != nullptr;
  for (Computation* comp : order) {
    lowerer_.set_sdy_manual_axes(axes_of[comp]);
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (const std::string* text = FindAttr(inst->frontend_attributes(), kSharding); text != nullptr && has_meshes) {
        if (!ApplySharding(*inst, *text)) return false;
      }
    }
    // The boundaries first: rewriting one removes its get-tuple-element users, which a walk of the instruction
    // list would reach afterwards.
    std::vector<std::pair<Instruction*, bool>> boundaries;
    for (Instruction* inst : comp->MakeInstructionList()) {
      bool to_local = false;
      if (IsBoundary(*inst, &to_local)) boundaries.emplace_back(inst, to_local);
    }
    for (auto [boundary, to_local] : boundaries) {
      if (!RewriteBoundary(*comp, boundary, to_local)) return false;
    }
  }
  return true;
}

}  // namespace
}  // namespace shlo

bool ImportHloShardyRoundTrip(Module& module, DiagnosticEngine& diags) {
  if (!HasRoundTripAttributes(module)) return true;
  shlo::HloShardyImporter importer(module, diags);
  return importer.Run();
}

}  // namespace xlac
