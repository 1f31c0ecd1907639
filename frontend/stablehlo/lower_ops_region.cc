// Ops with regions: reduce, reduce_window, select_and_scatter, sort, scatter, map, all_reduce, reduce_scatter,
// while, if, case, chlo.scan. Regions become called computations; while/if/case pass values the regions capture
// from outside as extra tuple elements (XLA's export does the same for implicit captures).
#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Results = Lowerer::Results;

bool RequireRegions(Lowerer& l, const Op& op, size_t n) {
  if (op.regions.size() == n) return true;
  return l.OpError(op,
                   fmt::format("'{}' needs {} region{}, but has {}", op.name, n, n == 1 ? "" : "s", op.regions.size()));
}

// Shape of an op producing `shapes`: one shape, or a tuple of several.
Shape CombinedShape(const std::vector<Shape>& shapes) { return shapes.size() == 1 ? shapes[0] : Shape::Tuple(shapes); }

void SetResults(Lowerer& l, Instruction* inst, size_t n, Results* results) {
  if (n == 1) {
    results->push_back(inst);
  } else {
    *results = l.SplitTuple(inst, static_cast<int64_t>(n));
  }
}

bool LowerReduce(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> dims;
  std::vector<Shape> shapes;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.GetI64List(op, "dimensions", &dims) ||
      !l.ResultShapes(op, &shapes)) {
    return false;
  }
  if (operands.empty() || operands.size() % 2 != 0) {
    return l.OpError(op, fmt::format("'{}' needs as many init values as inputs", op.name));
  }
  if (shapes.size() != operands.size() / 2) return l.OpError(op, "reduce needs one result per input");
  Computation* body = l.LowerRegion(op.regions[0], op, "region");
  if (body == nullptr) return false;
  Instruction* reduce = l.Emit(Opcode::kReduce, CombinedShape(shapes), std::move(operands));
  reduce->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
  reduce->set_called_computations({body});
  SetResults(l, reduce, shapes.size(), results);
  return true;
}

bool MakeWindow(Lowerer& l, const Op& op, int64_t rank, bool with_dilations, Window* out) {
  std::vector<int64_t> sizes, strides, base_dilations, window_dilations;
  std::vector<std::pair<int64_t, int64_t>> padding;
  if (!l.GetI64List(op, "window_dimensions", &sizes) || !l.GetI64List(op, "window_strides", &strides, false) ||
      !l.GetI64Pairs(op, "padding", &padding)) {
    return false;
  }
  if (with_dilations && (!l.GetI64List(op, "base_dilations", &base_dilations, false) ||
                         !l.GetI64List(op, "window_dilations", &window_dilations, false))) {
    return false;
  }
  const size_t n = sizes.size();
  if (static_cast<int64_t>(n) != rank) {
    return l.OpError(op, fmt::format("window_dimensions has {} entries, but the operand has rank {}", n, rank));
  }
  for (auto [list, name] : {std::pair{strides.size(), "window_strides"},
                            {base_dilations.size(), "base_dilations"},
                            {window_dilations.size(), "window_dilations"},
                            {padding.size(), "padding"}}) {
    if (list != 0 && list != n) {
      return l.OpError(op, fmt::format("{} has {} entries, but the window has {}", name, list, n));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    WindowDimension wd;
    wd.size = sizes[i];
    if (!strides.empty()) wd.stride = strides[i];
    if (!padding.empty()) {
      wd.padding_low = padding[i].first;
      wd.padding_high = padding[i].second;
    }
    if (!base_dilations.empty()) wd.base_dilation = base_dilations[i];
    if (!window_dilations.empty()) wd.window_dilation = window_dilations[i];
    out->dimensions.push_back(wd);
  }
  return true;
}

bool LowerReduceWindow(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes)) return false;
  if (operands.empty() || operands.size() % 2 != 0) {
    return l.OpError(op, fmt::format("'{}' needs as many init values as inputs", op.name));
  }
  Window window;
  if (!MakeWindow(l, op, operands[0]->shape().rank(), /*with_dilations=*/true, &window)) return false;
  Computation* body = l.LowerRegion(op.regions[0], op, "region");
  if (body == nullptr) return false;
  Instruction* rw = l.Emit(Opcode::kReduceWindow, CombinedShape(shapes), std::move(operands));
  rw->SetAttr("window", AttrValue::Of(std::move(window)));
  rw->set_called_computations({body});
  SetResults(l, rw, shapes.size(), results);
  return true;
}

bool LowerSelectAndScatter(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  Shape shape;
  if (!RequireRegions(l, op, 2) || !l.LookupOperands(op, &operands) || !l.ResultShape(op, 0, &shape)) return false;
  if (operands.size() != 3) return l.OpError(op, "select_and_scatter takes (operand, source, init_value)");
  Window window;
  if (!MakeWindow(l, op, operands[0]->shape().rank(), /*with_dilations=*/false, &window)) return false;
  Computation* select = l.LowerRegion(op.regions[0], op, "region");
  if (select == nullptr) return false;
  Computation* scatter = l.LowerRegion(op.regions[1], op, "region");
  if (scatter == nullptr) return false;
  Instruction* sas = l.Emit(Opcode::kSelectAndScatter, std::move(shape), std::move(operands));
  sas->SetAttr("window", AttrValue::Of(std::move(window)));
  sas->set_called_computations({select, scatter});
  results->push_back(sas);
  return true;
}

bool LowerSort(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  int64_t dimension;
  bool stable;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.GetInt(op, "dimension", &dimension, -1) || !l.GetBool(op, "is_stable", &stable)) {
    return false;
  }
  if (operands.empty()) return l.OpError(op, "sort needs at least one operand");
  if (dimension < 0) dimension += operands[0]->shape().rank();
  Computation* comparator = l.LowerRegion(op.regions[0], op, "region");
  if (comparator == nullptr) return false;
  Instruction* sort = l.Emit(Opcode::kSort, CombinedShape(shapes), std::move(operands));
  sort->SetAttr("dimensions", AttrValue::IntList({dimension}));
  if (stable) sort->SetAttr("is_stable", AttrValue::Bool(true));
  sort->set_called_computations({comparator});
  SetResults(l, sort, shapes.size(), results);
  return true;
}

bool LowerScatter(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  const Attr* dnums;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.RequireAttr(op, "scatter_dimension_numbers", &dnums)) {
    return false;
  }
  if (operands.size() % 2 != 1) return l.OpError(op, "scatter takes inputs, scatter_indices and as many updates");
  if (dnums->kind != Attr::Kind::kDict) return l.Error(dnums->pos, "expected #stablehlo.scatter<...>");
  std::vector<int64_t> update_window_dims, inserted_window_dims, input_batching, indices_batching, dims_to_operand;
  int64_t index_vector_dim;
  bool sorted, unique;
  if (!l.DictI64List(*dnums, "update_window_dims", &update_window_dims) ||
      !l.DictI64List(*dnums, "inserted_window_dims", &inserted_window_dims) ||
      !l.DictI64List(*dnums, "input_batching_dims", &input_batching) ||
      !l.DictI64List(*dnums, "scatter_indices_batching_dims", &indices_batching) ||
      !l.DictI64List(*dnums, "scatter_dims_to_operand_dims", &dims_to_operand) ||
      !l.DictInt(*dnums, "index_vector_dim", &index_vector_dim, 0) || !l.GetBool(op, "indices_are_sorted", &sorted) ||
      !l.GetBool(op, "unique_indices", &unique)) {
    return false;
  }
  Computation* update = l.LowerRegion(op.regions[0], op, "region");
  if (update == nullptr) return false;
  Instruction* scatter = l.Emit(Opcode::kScatter, CombinedShape(shapes), std::move(operands));
  scatter->SetAttr("update_window_dims", AttrValue::IntList(std::move(update_window_dims)));
  scatter->SetAttr("inserted_window_dims", AttrValue::IntList(std::move(inserted_window_dims)));
  scatter->SetAttr("scatter_dims_to_operand_dims", AttrValue::IntList(std::move(dims_to_operand)));
  scatter->SetAttr("index_vector_dim", AttrValue::Int(index_vector_dim));
  scatter->SetAttr("indices_are_sorted", AttrValue::Bool(sorted));
  scatter->SetAttr("unique_indices", AttrValue::Bool(unique));
  if (!input_batching.empty() || !indices_batching.empty()) {
    scatter->SetAttr("input_batching_dims", AttrValue::IntList(std::move(input_batching)));
    scatter->SetAttr("scatter_indices_batching_dims", AttrValue::IntList(std::move(indices_batching)));
  }
  scatter->set_called_computations({update});
  SetResults(l, scatter, shapes.size(), results);
  return true;
}

bool LowerMap(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<int64_t> dims;
  Shape shape;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.GetI64List(op, "dimensions", &dims, false) ||
      !l.ResultShape(op, 0, &shape)) {
    return false;
  }
  Computation* body = l.LowerRegion(op.regions[0], op, "region");
  if (body == nullptr) return false;
  Instruction* map = l.Emit(Opcode::kMap, std::move(shape), std::move(operands));
  map->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
  map->set_called_computations({body});
  results->push_back(map);
  return true;
}

bool LowerAllReduce(Lowerer& l, const Op& op, Results* results) {
  const bool scatter = BaseOpName(op.name) == "reduce_scatter";
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  ReplicaGroups groups;
  bool global_ids;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.GetReplicaGroups(op, &groups) || !l.GetBool(op, "use_global_device_ids", &global_ids)) {
    return false;
  }
  int64_t dimension = 0;
  if (scatter && !l.GetInt(op, "scatter_dimension", &dimension)) return false;
  Computation* body = l.LowerRegion(op.regions[0], op, "region");
  if (body == nullptr) return false;
  Instruction* ar =
      l.Emit(scatter ? Opcode::kReduceScatter : Opcode::kAllReduce, CombinedShape(shapes), std::move(operands));
  ar->SetAttr("replica_groups", AttrValue::Of(std::move(groups)));
  if (global_ids) ar->SetAttr("use_global_device_ids", AttrValue::Bool(true));
  if (scatter) ar->SetAttr("dimensions", AttrValue::IntList({dimension}));
  if (!l.SetChannelId(op, ar)) return false;
  ar->set_called_computations({body});
  SetResults(l, ar, shapes.size(), results);
  return true;
}

bool CheckReturned(Lowerer& l, const Op& op, const std::vector<Instruction*>& returned,
                   const std::vector<Shape>& expected, size_t return_pos, std::string_view what) {
  if (returned.size() != expected.size()) {
    return l.Error(return_pos, fmt::format("the {} of '{}' returns {} values, but {} are expected", what, op.name,
                                           returned.size(), expected.size()));
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!expected[i].Compatible(returned[i]->shape())) {
      return l.Error(return_pos,
                     fmt::format("the {} of '{}' returns {} as value {}, but {} is expected", what, op.name,
                                 ShapeToString(returned[i]->shape(), false), i, ShapeToString(expected[i], false)));
    }
  }
  return true;
}

bool LowerWhile(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  if (!RequireRegions(l, op, 2) || !l.LookupOperands(op, &operands)) return false;
  Lowerer::CaptureInfo captures;
  if (!l.CollectCaptures({&op.regions[0], &op.regions[1]}, &captures)) return false;
  const size_t n = operands.size();
  std::vector<Instruction*> carried = operands;
  carried.insert(carried.end(), captures.values.begin(), captures.values.end());
  // A single carried value is passed as is, several as a tuple.
  const bool untupled = carried.size() == 1;
  Instruction* init = untupled ? carried[0] : l.EmitTuple(carried);
  const Shape state = init->shape();
  std::vector<Shape> explicit_shapes;
  for (Instruction* o : operands) explicit_shapes.push_back(o->shape());
  Computation* cond = l.LowerTupledRegion(
      op.regions[0], op, "region", state, untupled, captures,
      [&](const std::vector<Instruction*>& returned, Instruction*, size_t return_pos, Instruction** root) {
        Shape pred = Shape::Scalar(PrimitiveType::kPred);
        if (!CheckReturned(l, op, returned, {pred}, return_pos, "condition")) return false;
        *root = returned[0];
        return true;
      });
  if (cond == nullptr) return false;
  Computation* body = l.LowerTupledRegion(
      op.regions[1], op, "region", state, untupled, captures,
      [&](const std::vector<Instruction*>& returned, Instruction* param, size_t return_pos, Instruction** root) {
        if (!CheckReturned(l, op, returned, explicit_shapes, return_pos, "body")) return false;
        if (untupled) {
          *root = returned[0];
          return true;
        }
        std::vector<Instruction*> next = returned;
        for (size_t k = 0; k < captures.values.size(); ++k)
          next.push_back(l.EmitGte(param, static_cast<int64_t>(n + k)));
        *root = l.EmitTuple(next);
        return true;
      });
  if (body == nullptr) return false;
  Instruction* loop = l.Emit(Opcode::kWhile, state, {init});
  loop->set_called_computations({cond, body});
  if (untupled) {
    results->push_back(loop);
  } else {
    *results = l.SplitTuple(loop, static_cast<int64_t>(n));
  }
  return true;
}

// if (pred) / case (index): every branch gets the tuple of captured values as its operand.
bool LowerConditional(Lowerer& l, const Op& op, Results* results) {
  const bool is_if = BaseOpName(op.name) == "if";
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  if (!l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes)) return false;
  if (operands.size() != 1) return l.OpError(op, fmt::format("'{}' takes one operand", op.name));
  if (is_if && !RequireRegions(l, op, 2)) return false;
  if (op.regions.empty()) return l.OpError(op, "'stablehlo.case' needs at least one branch");
  std::vector<const Region*> regions;
  for (const Region& r : op.regions) regions.push_back(&r);
  Lowerer::CaptureInfo captures;
  if (!l.CollectCaptures(regions, &captures)) return false;
  Instruction* arg = l.EmitTuple(captures.values);
  std::vector<Computation*> branches;
  for (const Region& r : op.regions) {
    if (!r.blocks.empty() && !r.blocks[0].args.empty()) {
      return l.Error(r.blocks[0].pos, fmt::format("the branches of '{}' take no arguments", op.name));
    }
    Computation* branch = l.LowerTupledRegion(
        r, op, "region", arg->shape(), /*untupled=*/false, captures,
        [&](const std::vector<Instruction*>& returned, Instruction*, size_t return_pos, Instruction** root) {
          if (!CheckReturned(l, op, returned, shapes, return_pos, "branch")) return false;
          *root = returned.size() == 1 ? returned[0] : l.EmitTuple(returned);
          return true;
        });
    if (branch == nullptr) return false;
    branches.push_back(branch);
  }
  std::vector<Instruction*> cond_operands = {operands[0]};
  cond_operands.insert(cond_operands.end(), branches.size(), arg);
  Instruction* cond = l.Emit(Opcode::kConditional, CombinedShape(shapes), std::move(cond_operands));
  cond->set_called_computations(std::move(branches));
  if (shapes.size() == 1) {
    results->push_back(cond);
  } else {
    *results = l.SplitTuple(cond, static_cast<int64_t>(shapes.size()));
  }
  return true;
}

bool LowerScan(Lowerer& l, const Op& op, Results* results) {
  std::vector<Instruction*> operands;
  std::vector<Shape> shapes;
  int64_t num_inputs, dimension;
  bool reverse, associative;
  if (!RequireRegions(l, op, 1) || !l.LookupOperands(op, &operands) || !l.ResultShapes(op, &shapes) ||
      !l.GetInt(op, "__num_inputs", &num_inputs) || !l.GetInt(op, "dimension", &dimension) ||
      !l.GetBool(op, "is_reverse", &reverse) || !l.GetBool(op, "is_associative", &associative)) {
    return false;
  }
  Computation* body = l.LowerRegion(op.regions[0], op, "region");
  if (body == nullptr) return false;
  Instruction* scan = l.Emit(Opcode::kScan, CombinedShape(shapes), std::move(operands));
  scan->SetAttr("dimensions", AttrValue::IntList({dimension}));
  scan->SetAttr("num_carries", AttrValue::Int(static_cast<int64_t>(op.operands.size()) - num_inputs));
  if (reverse) scan->SetAttr("is_reverse", AttrValue::Bool(true));
  if (associative) scan->SetAttr("is_associative", AttrValue::Bool(true));
  scan->set_called_computations({body});
  SetResults(l, scan, shapes.size(), results);
  return true;
}

}  // namespace

void RegisterRegionOps(OpTable* table) {
  OpTable& t = *table;
  t["stablehlo.reduce"] = &LowerReduce;
  t["stablehlo.reduce_window"] = &LowerReduceWindow;
  t["stablehlo.select_and_scatter"] = &LowerSelectAndScatter;
  t["stablehlo.sort"] = &LowerSort;
  t["stablehlo.scatter"] = &LowerScatter;
  t["stablehlo.map"] = &LowerMap;
  t["stablehlo.all_reduce"] = &LowerAllReduce;
  t["stablehlo.reduce_scatter"] = &LowerAllReduce;
  t["stablehlo.while"] = &LowerWhile;
  t["stablehlo.if"] = &LowerConditional;
  t["stablehlo.case"] = &LowerConditional;
  t["chlo.scan"] = &LowerScan;
}

}  // namespace xlac::shlo
