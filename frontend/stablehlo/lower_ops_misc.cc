// Calls, custom calls, composites, collectives without regions, host communication, and the test-harness check ops.
#include <algorithm>
#include <numeric>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

Shape CombinedShape(const std::vector<Shape>& shapes) { return shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes); }

void SetResults(Lowerer& l, Instruction* inst, size_t n, Results* results) {
  if (n == 1) {
    results->push_back(inst);
  } else if (n > 1) {
    *results = l.SplitTuple(inst, static_cast<int64_t>(n));
  }
}

bool LowerCall(Lowerer& l, const Op& op, Results* results) {
  std::string callee_name;
  std::vector<Instruction*> operands;
  if (!l.GetString(op, "callee", &callee_name) || !l.LookupOperands(op, &operands)) return false;
  Computation* callee = l.CalleeFor(callee_name, op, operands);
  if (callee == nullptr) return false;
  if (static_cast<int64_t>(operands.size()) != callee->parameter_count()) {
    return l.OpError(op, fmt::format("@{} takes {} arguments, but the call passes {}", callee_name,
                                     callee->parameter_count(), operands.size()));
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]->shape().Compatible(callee->parameter(static_cast<int64_t>(i))->shape())) {
      return l.Error(op.operands[i].pos,
                     fmt::format("argument {} of the call to @{} has shape {}, but @{} expects {}", i, callee_name,
                                 ShapeToString(operands[i]->shape(), false), callee_name,
                                 ShapeToString(callee->parameter(static_cast<int64_t>(i))->shape(), false)));
    }
  }
  Instruction* call = l.Emit(Opcode::kCall, callee->root()->shape(), std::move(operands));
  call->set_called_computations({callee});
  // A function with one result returns it as is; with several (or none) a tuple.
  const size_t num_results = op.result_types.size();
  if (num_results == 1) {
    results->push_back(call);
  } else {
    if (!callee->root()->shape().IsTuple() || callee->root()->shape().tuple_shapes.size() != num_results) {
      return l.OpError(op, fmt::format("the call to @{} expects {} results", callee_name, num_results));
    }
    SetResults(l, call, num_results, results);
  }
  return true;
}

bool LowerComposite(Lowerer& l, const Op& op, Results* results) {
  std::string name, decomposition;
  std::vector<Instruction*> operands;
  int64_t version;
  if (!l.GetString(op, "name", &name) || !l.GetString(op, "decomposition", &decomposition) ||
      !l.GetInt(op, "version", &version, 0) || !l.LookupOperands(op, &operands)) {
    return false;
  }
  if (name == "sdy.all_slice") {
    bool handled = false;
    if (!l.LowerSdyAllSliceComposite(op, operands, &handled, results)) return false;
    if (handled) return true;
  }
  Computation* callee = l.GetFunctionComputation(decomposition, &op);
  if (callee == nullptr) return false;
  Instruction* call = l.Emit(Opcode::kCall, callee->root()->shape(), std::move(operands));
  call->set_called_computations({callee});
  call->SetAttr("is_composite", AttrValue::Bool(true));
  const Attr* attrs = l.FindAttr(op, "composite_attributes");
  *call->mutable_frontend_attributes() = {{"composite.attributes", attrs != nullptr ? attrs->str : "{}"},
                                          {"composite.name", name},
                                          {"composite.version", std::to_string(version)}};
  SetResults(l, call, op.result_types.size(), results);
  return true;
}

// dense<[1, 0]> : tensor<2xindex> per operand/result -> a layout.
bool LayoutFrom(Lowerer& l, const Attr& attr, const Shape& shape, Shape* out) {
  std::vector<int64_t> minor_to_major;
  if (!l.AttrToI64List(attr, &minor_to_major)) return false;
  if (static_cast<int64_t>(minor_to_major.size()) != shape.rank()) {
    return l.Error(attr.pos,
                   fmt::format("layout has {} entries for a rank-{} shape", minor_to_major.size(), shape.rank()));
  }
  *out = shape;
  out->layout = Layout::Default(shape.rank());
  out->layout->minor_to_major = std::move(minor_to_major);
  return true;
}

bool LowerCustomCall(Lowerer& l, const Op& op, Results* results) {
  std::string target;
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  bool side_effect;
  if (!l.GetString(op, "call_target_name", &target)) return false;
  // Shape assertions and the dynamic custom calls of shape-polymorphic exports (lower_refine.cc).
  if (Lowerer::IsRefinementCallTarget(target)) return l.LowerRefinementCall(op, target, results);
  if (!l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.GetBool(op, "has_side_effect", &side_effect)) {
    return false;
  }
  if (const Attr* layouts = l.FindAttr(op, "result_layouts")) {
    if (layouts->kind != Attr::Kind::kArray || layouts->elements.size() != shapes.size()) {
      return l.Error(layouts->pos, "result_layouts needs one layout per result");
    }
    for (size_t i = 0; i < shapes.size(); ++i) {
      if (shapes[i].IsArray() && !LayoutFrom(l, *layouts->elements[i], shapes[i], &shapes[i])) return false;
    }
  }
  if (IsRoundTripShardMapTarget(target)) return l.LowerRoundTripShardMapBoundary(op, target, operands, shapes, results);
  Shape shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  std::vector<Shape> operand_layouts;
  if (const Attr* layouts = l.FindAttr(op, "operand_layouts")) {
    if (layouts->kind != Attr::Kind::kArray || layouts->elements.size() != operands.size()) {
      return l.Error(layouts->pos, "operand_layouts needs one layout per operand");
    }
    for (size_t i = 0; i < operands.size(); ++i) {
      operand_layouts.emplace_back();
      if (!LayoutFrom(l, *layouts->elements[i], operands[i]->shape(), &operand_layouts.back())) return false;
    }
  }
  std::vector<Computation*> called;
  if (const Attr* comps = l.FindAttr(op, "called_computations")) {
    if (comps->kind != Attr::Kind::kArray) return l.Error(comps->pos, "called_computations must be a list of symbols");
    for (const AttrPtr& c : comps->elements) {
      if (c->kind != Attr::Kind::kSymbol) return l.Error(c->pos, "expected a function symbol");
      Computation* comp = l.GetFunctionComputation(c->str, &op);
      if (comp == nullptr) return false;
      called.push_back(comp);
    }
  }
  std::vector<OutputOperandAlias> aliasing;
  if (const Attr* aliases = l.FindAttr(op, "output_operand_aliases")) {
    if (aliases->kind != Attr::Kind::kArray) return l.Error(aliases->pos, "output_operand_aliases must be a list");
    for (const AttrPtr& a : aliases->elements) {
      if (a->kind != Attr::Kind::kDict) return l.Error(a->pos, "expected #stablehlo.output_operand_alias<...>");
      OutputOperandAlias alias;
      if (!l.DictI64List(*a, "output_tuple_indices", &alias.output_index) ||
          !l.DictInt(*a, "operand_index", &alias.operand, 0) ||
          !l.DictI64List(*a, "operand_tuple_indices", &alias.operand_index)) {
        return false;
      }
      aliasing.push_back(std::move(alias));
    }
  }
  Instruction* cc = l.Emit(Opcode::kCustomCall, std::move(shape), std::move(operands));
  cc->SetAttr("custom_call_target", AttrValue::String(target));
  // The quantized testdata check with `check.eq` calls whose i1 result nothing uses: kept, so they run.
  if (target == "check.eq") side_effect = true;
  if (side_effect) cc->SetAttr("custom_call_has_side_effect", AttrValue::Bool(true));
  const Attr* config = l.FindAttr(op, "backend_config");
  if (config == nullptr) config = l.FindAttr(op, "mhlo.backend_config");  // typed-FFI calls from JAX
  if (config != nullptr) {
    if (config->kind == Attr::Kind::kString) {
      cc->set_backend_config(config->str);
    } else if (config->kind == Attr::Kind::kDict) {
      cc->set_backend_config(config->str, /*raw=*/true);
    } else {
      return l.Error(config->pos, "backend_config must be a string or a dictionary");
    }
  }
  std::string api = "API_VERSION_ORIGINAL";
  if (const Attr* version = l.FindAttr(op, "api_version")) {
    static const char* kVersions[] = {"API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
                                      "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
    if (version->kind == Attr::Kind::kInt && version->int_value >= 0 && version->int_value <= 4) {
      api = kVersions[version->int_value];
    } else if (version->kind == Attr::Kind::kEnum &&
               std::find(std::begin(kVersions), std::end(kVersions), version->str) != std::end(kVersions)) {
      api = version->str;
    } else {
      return l.Error(version->pos, "invalid custom call api_version");
    }
  }
  // XLA's StableHLO->HLO export keeps 0 as API_VERSION_UNSPECIFIED, which its HLO parser then rejects and its CPU
  // backend refuses to call ("Unknown custom-call API version"). The StableHLO default is ORIGINAL, and producers
  // that write 0 (PyTorch/XLA) mean it, so 0 lowers to ORIGINAL and the printed module parses.
  if (api == "API_VERSION_UNSPECIFIED") api = "API_VERSION_ORIGINAL";
  if (api != "API_VERSION_ORIGINAL") cc->SetAttr("api_version", AttrValue::Enum(api));
  if (!operand_layouts.empty()) cc->SetAttr("operand_layout_constraints", AttrValue::Of(std::move(operand_layouts)));
  if (!aliasing.empty()) cc->SetAttr("output_to_operand_aliasing", AttrValue::Of(std::move(aliasing)));
  if (!called.empty()) cc->set_called_computations(std::move(called));
  SetResults(l, cc, shapes.size(), results);
  return true;
}

// The attributes of custom_call itself, and the values that say nothing (their defaults).
bool IsDefaultCustomCallAttr(const NamedAttr& a, bool* is_custom_call_attr) {
  const Attr& v = *a.value;
  *is_custom_call_attr = true;
  if (a.name == "backend_config" || a.name == "mhlo.backend_config") {
    return (v.kind == Attr::Kind::kString && v.str.empty()) || (v.kind == Attr::Kind::kDict && v.dict.empty());
  }
  if (a.name == "called_computations" || a.name == "operand_layouts" || a.name == "result_layouts" ||
      a.name == "output_operand_aliases") {
    return v.kind == Attr::Kind::kArray && v.elements.empty();
  }
  if (a.name == "has_side_effect") return v.kind == Attr::Kind::kBool && !v.bool_value;
  if (a.name == "api_version") {
    return (v.kind == Attr::Kind::kInt && (v.int_value == 0 || v.int_value == 1)) ||
           (v.kind == Attr::Kind::kEnum && (v.str == "API_VERSION_UNSPECIFIED" || v.str == "API_VERSION_ORIGINAL"));
  }
  *is_custom_call_attr = false;
  return false;
}

bool LowerAllGather(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  ReplicaGroups groups;
  int64_t dim;
  bool global_ids;
  if (!l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) || !l.GetReplicaGroups(op, &groups) ||
      !l.GetInt(op, "all_gather_dim", &dim) || !l.GetBool(op, "use_global_device_ids", &global_ids)) {
    return false;
  }
  Instruction* ag = l.Emit(Opcode::kAllGather, CombinedShape(shapes), std::move(operands));
  ag->SetAttr("dimensions", AttrValue::IntList({dim}));
  ag->SetAttr("replica_groups", AttrValue::Of(std::move(groups)));
  if (global_ids) ag->SetAttr("use_global_device_ids", AttrValue::Bool(true));
  if (!l.SetChannelId(op, ag)) return false;
  SetResults(l, ag, shapes.size(), results);
  return true;
}

// XLA's AllToAll: an array all-to-all along split_dimension, then (when the concat dimension differs) a reshape
// that exposes the source-device axis, a transpose moving it in front of concat_dimension, and a reshape merging it.
bool LowerAllToAll(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  Shape shape;
  ReplicaGroups groups;
  int64_t split, concat, count;
  if (!l.LookupOperands(op, &operands) || !l.GetReplicaGroups(op, &groups) ||
      !l.GetInt(op, "split_dimension", &split) || !l.GetInt(op, "concat_dimension", &concat) ||
      !l.GetInt(op, "split_count", &count)) {
    return false;
  }
  if (operands.size() != op.result_types.size()) return l.OpError(op, "all_to_all needs one result per operand");
  // Several operands exchange independently with the same grouping.
  for (size_t k = 0; k < operands.size(); ++k) {
    if (!l.ResultShape(op, k, &shape)) return false;
    const Shape& in = operands[k]->shape();
    const int64_t rank = in.rank();
    if (split < 0 || split >= rank || concat < 0 || concat >= rank || count <= 0 ||
        in.dimensions[static_cast<size_t>(split)] % count != 0) {
      return l.OpError(op, "invalid split_dimension, concat_dimension or split_count");
    }
    Instruction* a2a = l.Emit(Opcode::kAllToAll, in, {operands[k]});
    a2a->SetAttr("dimensions", AttrValue::IntList({split}));
    a2a->SetAttr("replica_groups", AttrValue::Of(groups));
    if (!l.SetChannelId(op, a2a)) return false;
    if (split == concat) {
      results->push_back(a2a);
      continue;
    }
    std::vector<int64_t> split_dims;
    for (int64_t i = 0; i < rank; ++i) {
      if (i == split) {
        split_dims.push_back(count);
        split_dims.push_back(in.dimensions[static_cast<size_t>(i)] / count);
      } else {
        split_dims.push_back(in.dimensions[static_cast<size_t>(i)]);
      }
    }
    Instruction* reshaped = l.Emit(Opcode::kReshape, Shape(in.element_type, split_dims), {a2a});
    std::vector<int64_t> perm, transposed_dims;
    for (int64_t i = 0; i < rank; ++i) {
      const int64_t after_reshape = i >= split ? i + 1 : i;
      if (i == concat) perm.push_back(split);
      perm.push_back(after_reshape);
    }
    for (int64_t p : perm) transposed_dims.push_back(split_dims[static_cast<size_t>(p)]);
    Instruction* transposed = l.Emit(Opcode::kTranspose, Shape(in.element_type, transposed_dims), {reshaped});
    transposed->SetAttr("dimensions", AttrValue::IntList(std::move(perm)));
    results->push_back(l.Emit(Opcode::kReshape, std::move(shape), {transposed}));
  }
  return true;
}

bool LowerCollectivePermute(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  Shape shape;
  std::vector<std::pair<int64_t, int64_t>> pairs;
  if (!l.LookupOperands(op, &operands) || !l.ResultShape(op, 0, &shape) ||
      !l.GetI64Pairs(op, "source_target_pairs", &pairs)) {
    return false;
  }
  std::vector<std::vector<int64_t>> list;
  for (auto [s, t] : pairs) list.push_back({s, t});
  Instruction* cp = l.Emit(Opcode::kCollectivePermute, std::move(shape), std::move(operands));
  cp->SetAttr("source_target_pairs", AttrValue::IntListList(std::move(list)));
  if (!l.SetChannelId(op, cp)) return false;
  results->push_back(cp);
  return true;
}

bool LowerCollectiveBroadcast(Lowerer& l, const Op& op, Results* results) {
  if (l.FindAttr(op, "has_dynamic_root") != nullptr) {
    return l.OpError(op,
                     "collective_broadcast with has_dynamic_root is not supported: HLO's collective-broadcast "
                     "has no root operand");
  }
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  ReplicaGroups groups;
  if (!l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) || !l.GetReplicaGroups(op, &groups)) {
    return false;
  }
  Instruction* cb = l.Emit(Opcode::kCollectiveBroadcast, CombinedShape(shapes), std::move(operands));
  cb->SetAttr("replica_groups", AttrValue::Of(std::move(groups)));
  if (!l.SetChannelId(op, cb)) return false;
  SetResults(l, cb, shapes.size(), results);
  return true;
}

// send(inputs..., token) -> send + send-done; recv(token) -> recv + recv-done.
bool LowerSendRecv(Lowerer& l, const Op& op, Results* results) {
  const bool is_send = BaseOpName(op.name) == "send";
  std::vector<Instruction*> operands;
  bool host;
  if (!l.LookupOperands(op, &operands) || !l.GetBool(op, "is_host_transfer", &host)) return false;
  if (operands.empty() || !operands.back()->shape().IsToken()) {
    return l.OpError(op, fmt::format("the last operand of '{}' must be a token", op.name));
  }
  Instruction* token = operands.back();
  operands.pop_back();
  auto configure = [&](Instruction* inst) {
    if (host) inst->SetAttr("is_host_transfer", AttrValue::Bool(true));
    return l.SetChannelId(op, inst);
  };
  const Shape context = Shape::Scalar(PrimitiveType::kU32);
  if (is_send) {
    Instruction* data = operands.size() == 1 ? operands[0] : l.EmitTuple(operands);
    Instruction* send = l.Emit(Opcode::kSend, Shape::Tuple({data->shape(), context, Shape::Token()}), {data, token});
    Instruction* done = l.Emit(Opcode::kSendDone, Shape::Token(), {send});
    if (!configure(send) || !configure(done)) return false;
    results->push_back(done);
    return true;
  }
  std::vector<Shape> shapes;
  if (!l.ResultShapes(op, &shapes)) return false;
  if (shapes.empty() || !shapes.back().IsToken()) return l.OpError(op, "the last result of recv must be a token");
  shapes.pop_back();
  const Shape data_shape = shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes);
  Instruction* recv = l.Emit(Opcode::kRecv, Shape::Tuple({data_shape, context, Shape::Token()}), {token});
  Instruction* done = l.Emit(Opcode::kRecvDone, Shape::Tuple({data_shape, Shape::Token()}), {recv});
  if (!configure(recv) || !configure(done)) return false;
  Instruction* data = l.EmitGte(done, 0);
  if (shapes.size() == 1) {
    results->push_back(data);
  } else {
    for (size_t i = 0; i < shapes.size(); ++i) results->push_back(l.EmitGte(data, static_cast<int64_t>(i)));
  }
  results->push_back(l.EmitGte(done, 1));
  return true;
}

bool LowerInfeed(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  std::string config;
  if (!l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.GetString(op, "infeed_config", &config, "")) {
    return false;
  }
  if (operands.size() != 1 || shapes.empty() || !shapes.back().IsToken()) {
    return l.OpError(op, "infeed takes a token and returns values and a token");
  }
  shapes.pop_back();
  Instruction* infeed = l.Emit(Opcode::kInfeed, Shape::Tuple({Shape::Tuple(shapes), Shape::Token()}), operands);
  if (!config.empty()) infeed->SetAttr("infeed_config", AttrValue::String(config));
  Instruction* data = l.EmitGte(infeed, 0);
  for (size_t i = 0; i < shapes.size(); ++i) results->push_back(l.EmitGte(data, static_cast<int64_t>(i)));
  results->push_back(l.EmitGte(infeed, 1));
  return true;
}

bool LowerOutfeed(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::string config;
  if (!l.LookupOperands(op, &operands) || !l.GetString(op, "outfeed_config", &config, "")) return false;
  if (operands.empty() || !operands.back()->shape().IsToken())
    return l.OpError(op, "outfeed's last operand is a token");
  Instruction* token = operands.back();
  operands.pop_back();
  Instruction* data = l.EmitTuple(operands);
  Instruction* outfeed = l.Emit(Opcode::kOutfeed, Shape::Token(), {data, token});
  if (!config.empty()) outfeed->SetAttr("outfeed_config", AttrValue::String(config));
  results->push_back(outfeed);
  return true;
}

std::string JsonString(std::string_view s);

// interpreter.run_parallel(inputs) {programs = [[@f, ...], ...]}: runs one program per process of a
// replicas x partitions grid. Kept as a side-effecting custom-call "interpreter.run_parallel" whose called
// computations are the distinct programs; backend_config {"programs":[[0, ...], ...]} indexes them by grid position
// (rows are replicas, columns partitions). Inputs and results are the processes' arguments and results in grid order.
bool LowerRunParallel(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  const Attr* programs;
  if (!l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) || !l.RequireAttr(op, "programs", &programs)) {
    return false;
  }
  if (l.FindAttr(op, "infeed") != nullptr)
    return l.OpError(op, "interpreter.run_parallel with infeed is not supported");
  if (programs->kind != Attr::Kind::kArray || programs->elements.empty()) {
    return l.Error(programs->pos, "programs must be a non-empty list of lists of functions");
  }
  std::vector<Computation*> called;
  std::string grid = "[";
  int64_t num_params = 0;
  size_t columns = 0;
  for (size_t r = 0; r < programs->elements.size(); ++r) {
    const Attr& row = *programs->elements[r];
    if (row.kind != Attr::Kind::kArray || row.elements.empty() || (r > 0 && row.elements.size() != columns)) {
      return l.Error(row.pos, "every row of programs must list the same number of functions");
    }
    columns = row.elements.size();
    grid += r > 0 ? ",[" : "[";
    for (size_t c = 0; c < row.elements.size(); ++c) {
      const Attr& symbol = *row.elements[c];
      if (symbol.kind != Attr::Kind::kSymbol) return l.Error(symbol.pos, "expected a function symbol");
      Computation* comp = l.GetFunctionComputation(symbol.str, &op);
      if (comp == nullptr) return false;
      auto it = std::find(called.begin(), called.end(), comp);
      if (it == called.end()) it = called.insert(called.end(), comp);
      grid += fmt::format("{}{}", c > 0 ? "," : "", it - called.begin());
      num_params += comp->parameter_count();
    }
    grid += "]";
  }
  grid += "]";
  if (num_params != static_cast<int64_t>(operands.size())) {
    return l.OpError(
        op, fmt::format("the programs take {} arguments in total, but {} are passed", num_params, operands.size()));
  }
  Instruction* run =
      l.Emit(Opcode::kCustomCall, shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes), std::move(operands));
  run->SetAttr("custom_call_target", AttrValue::String("interpreter.run_parallel"));
  run->SetAttr("custom_call_has_side_effect", AttrValue::Bool(true));
  run->set_backend_config(fmt::format("{{\"programs\":{}}}", grid));
  run->set_called_computations(std::move(called));
  SetResults(l, run, shapes.size(), results);
  return true;
}

// interpreter.probe %x, probe_id = "id": an identity that records its operand; a side-effecting custom-call
// "interpreter.probe" with backend_config {"probe_id":"id"}.
bool LowerProbe(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::string probe_id;
  if (!l.LookupOperands(op, &operands) || !l.GetString(op, "probe_id", &probe_id)) return false;
  if (operands.size() != 1) return l.OpError(op, "interpreter.probe takes one operand");
  Instruction* probe = l.Emit(Opcode::kCustomCall, operands[0]->shape(), operands);
  probe->SetAttr("custom_call_target", AttrValue::String("interpreter.probe"));
  probe->SetAttr("custom_call_has_side_effect", AttrValue::Bool(true));
  probe->set_backend_config(fmt::format("{{\"probe_id\":{}}}", JsonString(probe_id)));
  results->push_back(probe);
  return true;
}

std::string JsonString(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// check.expect_eq[_const], check.expect_almost_eq[_const], check.expect_close[_const],
// check.expect_serialized_eq: see the convention in parser.h.
bool LowerCheck(Lowerer& l, const Op& op, Results* results) {
  std::string kind(op.name.substr(6));  // after "check."
  const bool is_const = kind.size() > 6 && kind.substr(kind.size() - 6) == "_const";
  if (is_const) kind.resize(kind.size() - 6);
  if (kind != "expect_eq" && kind != "expect_almost_eq" && kind != "expect_close" && kind != "expect_serialized_eq") {
    return l.OpError(op, fmt::format("unsupported op '{}'", op.name));
  }
  std::vector<Instruction*> operands;
  if (!l.LookupOperands(op, &operands)) return false;
  const size_t expected = kind == "expect_serialized_eq" || is_const ? 1 : 2;
  if (operands.size() != expected) {
    return l.OpError(op, fmt::format("'{}' takes {} operand{}", op.name, expected, expected == 1 ? "" : "s"));
  }
  if (is_const) {
    const Attr* value;
    if (!l.RequireAttr(op, "value", &value)) return false;
    if (value->kind != Attr::Kind::kDense) return l.Error(value->pos, "expected a dense<...> literal");
    if (!value->dense->shape().Compatible(operands[0]->shape())) {
      return l.Error(value->pos, fmt::format("the expected value has shape {}, but the checked value has {}",
                                             ShapeToString(value->dense->shape(), false),
                                             ShapeToString(operands[0]->shape(), false)));
    }
    operands.push_back(l.EmitConstant(*value->dense));
  }
  auto number = [&](std::string_view name, std::string* out, std::string_view def) -> bool {
    const Attr* a = l.FindAttr(op, name);
    if (a == nullptr) {
      *out = std::string(def);
    } else if (a->kind == Attr::Kind::kInt) {
      *out =
          a->int_is_unsigned_big ? std::to_string(static_cast<uint64_t>(a->int_value)) : std::to_string(a->int_value);
    } else if (a->kind == Attr::Kind::kFloat) {
      *out = fmt::format("{:.17g}", a->float_value);
    } else {
      return l.Error(a->pos, fmt::format("'{}' must be a number", name));
    }
    return true;
  };
  std::string config;
  if (kind == "expect_almost_eq") {
    std::string tolerance;
    if (!number("tolerance", &tolerance, "0.0001")) return false;
    config = fmt::format("{{\"tolerance\":{}}}", tolerance);
  } else if (kind == "expect_close") {
    std::string max_ulp, min_ulp;
    if (!number("max_ulp_difference", &max_ulp, "1") || !number("min_ulp_difference", &min_ulp, "0")) return false;
    config = fmt::format("{{\"max_ulp_difference\":{},\"min_ulp_difference\":{}}}", max_ulp, min_ulp);
  } else if (kind == "expect_serialized_eq") {
    std::string probe_id, iter;
    if (!l.GetString(op, "probe_id", &probe_id) || !number("iter", &iter, "0")) return false;
    config = fmt::format("{{\"probe_id\":{},\"iter\":{}}}", JsonString(probe_id), iter);
  }
  Instruction* check = l.Emit(Opcode::kCustomCall, Shape::Tuple({}), std::move(operands));
  check->SetAttr("custom_call_target", AttrValue::String("check." + kind));
  check->SetAttr("custom_call_has_side_effect", AttrValue::Bool(true));
  if (!config.empty()) check->set_backend_config(config);
  (void)results;
  return true;
}

}  // namespace

bool IsMhloExtensionCall(const Op& op) {
  if (!IsHloOp(op, "custom_call")) return false;
  const NamedAttr* target = op.FindAttr("call_target_name");
  return target != nullptr && target->value->kind == Attr::Kind::kString && target->value->str.starts_with("mhlo.");
}

bool DecodeMhloExtensionCall(Lowerer& l, const Op& call, Op* out) {
  const NamedAttr* target = call.FindAttr("call_target_name");
  const std::string& name = target->value->str;
  const std::string base = name.substr(5);
  // MHLO's name where StableHLO has the op too (mhlo.tan, mhlo.copy); else CHLO's, whose lowerings are XLA's for the
  // MHLO ops that came from CHLO (erf, the hyperbolic functions, ...); topk is CHLO's top_k with a `largest`.
  std::string op_name;
  if (base == "topk") {
    op_name = "chlo.top_k";
  } else if (FindOpHandler(name) != nullptr) {
    op_name = name;
  } else if (FindOpHandler("chlo." + base) != nullptr) {
    op_name = "chlo." + base;
  } else {
    return l.Error(target->pos,
                   fmt::format("unsupported op '{}' (sent as custom_call @{}, MHLO's encoding of ops StableHLO lacks)",
                               name, name));
  }
  out->name = std::move(op_name);
  out->pos = call.pos;
  out->name_pos = call.name_pos;
  out->generic_form = call.generic_form;
  out->results = call.results;
  out->operands = call.operands;
  out->operand_types = call.operand_types;
  out->result_types = call.result_types;
  out->loc = call.loc;
  for (const NamedAttr& a : call.attrs) {
    if (a.name == "call_target_name" || a.name == "mhlo.version") continue;
    if (a.name == "mhlo.attributes") {
      if (a.value->kind != Attr::Kind::kDict) return l.Error(a.value->pos, "mhlo.attributes must be a dictionary");
      for (const auto& [key, value] : a.value->dict) out->attrs.push_back({key, value, value->pos});
      continue;
    }
    // Only mhlo.attributes reach the op (XLA refuses the call otherwise): the call's own attributes may only say
    // what their absence says. Others (shardings, frontend attributes) apply to the op as to any.
    bool is_custom_call_attr;
    if (IsDefaultCustomCallAttr(a, &is_custom_call_attr)) continue;
    if (is_custom_call_attr) {
      return l.Error(a.pos, fmt::format("'{}' on custom_call @{}: the op it encodes takes only the attributes in "
                                        "mhlo.attributes",
                                        a.name, name));
    }
    out->attrs.push_back(a);
  }
  return true;
}

void RegisterMiscOps(OpTable* table) {
  OpTable& t = *table;
  t["func.call"] = &LowerCall;
  t["stablehlo.composite"] = &LowerComposite;
  t["stablehlo.custom_call"] = &LowerCustomCall;
  t["stablehlo.all_gather"] = &LowerAllGather;
  t["stablehlo.all_to_all"] = &LowerAllToAll;
  t["stablehlo.collective_permute"] = &LowerCollectivePermute;
  t["stablehlo.collective_broadcast"] = &LowerCollectiveBroadcast;
  t["stablehlo.send"] = &LowerSendRecv;
  t["stablehlo.recv"] = &LowerSendRecv;
  t["stablehlo.infeed"] = &LowerInfeed;
  t["stablehlo.outfeed"] = &LowerOutfeed;
  t["interpreter.run_parallel"] = &LowerRunParallel;
  t["interpreter.probe"] = &LowerProbe;
  for (const char* check :
       {"check.expect_eq", "check.expect_eq_const", "check.expect_almost_eq", "check.expect_almost_eq_const",
        "check.expect_close", "check.expect_close_const", "check.expect_serialized_eq"}) {
    t[check] = &LowerCheck;
  }
}

}  // namespace xlac::shlo
