// stablehlo.composite "sdy.all_slice" inside a manual sdy.manual_computation, as tt-xla exports Shardy's all_slice:
//
//   %r = stablehlo.composite "sdy.all_slice" %x {composite_attributes = {out_sharding = #sdy.sharding<@mesh,
//        [{}, {"a"}]>}, decomposition = @sdy.all_slice3} : (tensor<Nx2Mxbf16>) -> tensor<NxMxbf16>
//   func.func private @sdy.all_slice3(%x) {  // per sliced dimension:
//     reshape (split the dimension into [k, size/k]), all_to_all along the k dimension over the devices that differ
//     only in the slicing axes, slice [0:1] of the k dimension, reshape back }
//
// Shardy's all_slice (shardy/dialect/sdy/ir/ops.td) needs no communication: its operand is replicated along the
// slicing axes and each device keeps its own chunk, the slicing axes appended (minor) to the operand's axes of that
// dimension. The decomposition reaches the same chunk by an all-to-all that makes each device take group member 0's
// chunk of its own index, which is its own chunk only when the group members hold equal values; calling it
// materializes the reshaped operand and the all-to-all result per device (2x a replicated embedding table).
//
// So the composite becomes a dynamic-slice of the local operand at offsets looked up by partition-id when, and only
// when, that provably gives the decomposition's result on every device:
//  - it is in the body of a fully manual sdy.manual_computation, and its operand is one of that body's arguments, so
//    the local operand on a device is the in-sharding's shard at the device's mesh coordinates: equal on devices
//    that agree on every axis the in-sharding names (sub-axes count as their whole axis);
//  - the decomposition is a chain of reshapes and all_to_all (split = concat dimension) + slice steps, which is
//    interpreted on the device table: every all-to-all group holds devices with equal local operands and equal
//    windows so far, so member q's chunk is the device's own; each step narrows a window of the operand;
//  - the resulting per-device window offsets equal the ones out_sharding gives (the slicing axes: the minor axes of
//    each dimension whose sizes multiply to operand size / result size, device coordinates in Shardy's axis order).
// Anything else (operands computed in the body, other decompositions, partially manual or nested regions) keeps the
// call to the decomposition.
#include <algorithm>
#include <map>

#include "fmt/format.h"
#include "frontend/stablehlo/lower_impl.h"

namespace xlac::shlo {
namespace {

using Table = std::vector<std::vector<int64_t>>;  // [device][dimension]

// The integers of an attribute, without diagnostics (a malformed decomposition is reported when it is called).
bool IntList(const Attr* a, std::vector<int64_t>* out) {
  out->clear();
  if (a == nullptr) return false;
  if (a->kind == Attr::Kind::kArray || a->kind == Attr::Kind::kDenseArray) {
    for (const AttrPtr& e : a->elements) {
      if (e->kind != Attr::Kind::kInt) return false;
      out->push_back(e->int_value);
    }
    return true;
  }
  if (a->kind == Attr::Kind::kDense && a->dense != nullptr && !a->dense->is_unknown() &&
      a->dense->shape().rank() <= 1) {
    for (int64_t i = 0; i < a->dense->shape().ElementCount().value_or(0); ++i) out->push_back(a->dense->GetAsInt64(i));
    return true;
  }
  return false;
}

const Attr* OpAttr(const Op& op, std::string_view name) {
  for (const NamedAttr& a : op.attrs) {
    if (a.name == name) return a.value.get();
  }
  return nullptr;
}

bool OpInt(const Op& op, std::string_view name, int64_t* out) {
  const Attr* a = OpAttr(op, name);
  if (a == nullptr || a->kind != Attr::Kind::kInt) return false;
  *out = a->int_value;
  return true;
}

bool StaticDims(const Type& t, std::vector<int64_t>* dims) {
  if (t.kind != Type::Kind::kTensor || t.unranked || t.IsDynamic()) return false;
  *dims = t.dims;
  return true;
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The mesh seen from partition ids: each device's mesh position and coordinate along every axis.
struct DeviceGrid {
  const SdyMeshInfo* mesh = nullptr;
  std::vector<std::vector<int64_t>> coords;  // [device][axis]

  bool Init(const SdyMeshInfo& m) {
    mesh = &m;
    const int64_t n = m.num_devices;
    std::vector<int64_t> position(static_cast<size_t>(n), -1);
    for (int64_t p = 0; p < n; ++p) {
      const int64_t device = m.device_ids.empty() ? p : m.device_ids[static_cast<size_t>(p)];
      if (device < 0 || device >= n || position[static_cast<size_t>(device)] >= 0) return false;
      position[static_cast<size_t>(device)] = p;
    }
    coords.assign(static_cast<size_t>(n), std::vector<int64_t>(m.sizes.size()));
    for (int64_t d = 0; d < n; ++d) {
      int64_t p = position[static_cast<size_t>(d)];
      for (size_t a = m.sizes.size(); a-- > 0;) {
        coords[static_cast<size_t>(d)][a] = p % m.sizes[a];
        p /= m.sizes[a];
      }
    }
    return true;
  }
  int64_t num_devices() const { return static_cast<int64_t>(coords.size()); }
  int64_t AxisIndex(const std::string& name) const {
    auto it = std::find(mesh->names.begin(), mesh->names.end(), name);
    return it == mesh->names.end() ? -1 : static_cast<int64_t>(it - mesh->names.begin());
  }
  // The size of `ref` and a device's coordinate along it; false for references the mesh does not have.
  bool Ref(const SdyAxisRef& ref, int64_t* size, std::vector<int64_t>* coord) const {
    const int64_t a = AxisIndex(ref.name);
    if (a < 0) return false;
    const int64_t n = mesh->sizes[static_cast<size_t>(a)];
    int64_t minor = 1;
    *size = n;
    if (ref.IsSubAxis()) {
      if (ref.pre_size < 1 || ref.size < 1 || n % (ref.pre_size * ref.size) != 0) return false;
      *size = ref.size;
      minor = n / (ref.pre_size * ref.size);
    }
    coord->clear();
    for (const std::vector<int64_t>& c : coords) coord->push_back(c[static_cast<size_t>(a)] / minor % *size);
    return true;
  }
};

// Which local operand a device holds: devices with equal keys hold equal values.
bool OperandKeys(const DeviceGrid& grid, const SdySharding& in, std::vector<std::vector<int64_t>>* keys) {
  std::vector<int64_t> axes;
  auto add = [&](const SdyAxisRef& r) {
    const int64_t a = grid.AxisIndex(r.name);
    if (a >= 0) axes.push_back(a);
    return a >= 0;
  };
  for (const SdyDimSharding& dim : in.dims) {
    for (const SdyAxisRef& r : dim.axes) {
      if (!add(r)) return false;
    }
  }
  for (const SdyAxisRef& r : in.unreduced) {
    if (!add(r)) return false;
  }
  keys->assign(grid.coords.size(), {});
  for (size_t d = 0; d < grid.coords.size(); ++d) {
    for (int64_t a : axes) (*keys)[d].push_back(grid.coords[d][static_cast<size_t>(a)]);
  }
  return true;
}

// Shardy's meaning: the offsets of each device's chunk of the local operand `in` in the result `out`.
bool OffsetsFromOutSharding(const DeviceGrid& grid, const SdySharding& s, const std::vector<int64_t>& in,
                            const std::vector<int64_t>& out, Table* table) {
  if (s.dims.size() != in.size() || in.size() != out.size()) return false;
  table->assign(static_cast<size_t>(grid.num_devices()), std::vector<int64_t>(in.size(), 0));
  for (size_t dim = 0; dim < in.size(); ++dim) {
    if (out[dim] < 1 || in[dim] % out[dim] != 0) return false;
    const int64_t ratio = in[dim] / out[dim];
    // The slicing axes: the minor suffix of the dimension's axes whose sizes multiply to the ratio.
    const std::vector<SdyAxisRef>& refs = s.dims[dim].axes;
    int64_t product = 1;
    size_t first = refs.size();
    while (product < ratio && first > 0) {
      int64_t size;
      std::vector<int64_t> ignored;
      if (!grid.Ref(refs[first - 1], &size, &ignored)) return false;
      product *= size;
      --first;
    }
    if (product != ratio) return false;
    for (size_t r = first; r < refs.size(); ++r) {
      int64_t size;
      std::vector<int64_t> coord;
      if (!grid.Ref(refs[r], &size, &coord)) return false;
      for (size_t d = 0; d < table->size(); ++d) (*table)[d][dim] = (*table)[d][dim] * size + coord[d];
    }
    for (std::vector<int64_t>& row : *table) row[dim] *= out[dim];
  }
  return true;
}

// A value of the decomposition on every device: the window [offsets(d), offsets(d) + sizes) of the local operand,
// reshaped to `shape`; or an all-to-all result (only a slice may read it).
struct WindowValue {
  std::vector<int64_t> shape;
  Table offsets;
  std::vector<int64_t> sizes;
  bool all_to_all = false;
  int64_t a2a_dim = 0, a2a_count = 0;
  std::vector<std::vector<int64_t>> groups;
};

// Narrows dimension `j` of `v`'s shape to [start(d), start(d) + len). In row-major order dimension j steps by
// `inner` (the product of the later dimensions) up to `inner * shape[j]`; it is a window of operand dimension i
// again when it is i's most major non-unit piece: stride(i) divides `inner` and stride(i) * sizes[i] equals the top.
bool Narrow(WindowValue* v, size_t j, const std::vector<int64_t>& start, int64_t len) {
  int64_t inner = 1;
  for (size_t k = j + 1; k < v->shape.size(); ++k) inner *= v->shape[k];
  const int64_t top = inner * v->shape[j];
  int64_t stride = 1;
  for (size_t i = v->sizes.size(); i-- > 0;) {
    const int64_t next = stride * v->sizes[i];
    if (v->sizes[i] > 1 && stride <= inner && inner < next) {
      if (next != top || inner % stride != 0) return false;
      const int64_t t = inner / stride;
      for (size_t d = 0; d < v->offsets.size(); ++d) v->offsets[d][i] += start[d] * t;
      v->sizes[i] = len * t;
      v->shape[j] = len;
      return true;
    }
    stride = next;
  }
  return false;
}

// Interprets the decomposition on the device table; false when it is not of the understood form.
bool InterpretDecomposition(const Func& f, const DeviceGrid& grid, const std::vector<std::vector<int64_t>>& keys,
                            const std::vector<int64_t>& operand, WindowValue* result) {
  if (!f.has_body || f.body.blocks.size() != 1 || f.args.size() != 1 || f.results.size() != 1) return false;
  const Block& block = f.body.blocks[0];
  const std::string arg = !block.args.empty() ? block.args[0].name : f.args[0].name;
  const size_t n = static_cast<size_t>(grid.num_devices());
  std::map<std::string, WindowValue> values;
  WindowValue& start = values[arg];
  start.shape = operand;
  start.sizes = operand;
  start.offsets.assign(n, std::vector<int64_t>(operand.size(), 0));
  for (const Op& op : block.ops) {
    const std::string_view base = BaseOpName(op.name);
    if (op.operands.size() != 1) return false;
    auto it = values.find(op.operands[0].name);
    if (it == values.end() || op.operands[0].index != 0) return false;
    const WindowValue& in = it->second;
    if (op.name == "func.return" || op.name == "stablehlo.return") {
      if (in.all_to_all) return false;
      *result = in;
      return true;
    }
    if (op.results.size() != 1 || op.results[0].count != 1 || op.result_types.size() != 1) return false;
    WindowValue out = in;
    std::vector<int64_t> dims;
    if (!StaticDims(op.result_types[0], &dims)) return false;
    if (base == "reshape") {
      if (in.all_to_all || Product(dims) != Product(in.shape)) return false;
      out.shape = dims;
    } else if (base == "all_to_all") {
      int64_t split, concat, count;
      if (in.all_to_all || dims != in.shape || !OpInt(op, "split_dimension", &split) ||
          !OpInt(op, "concat_dimension", &concat) || !OpInt(op, "split_count", &count) || split != concat ||
          split < 0 || split >= static_cast<int64_t>(in.shape.size()) || count < 1 ||
          in.shape[static_cast<size_t>(split)] % count != 0) {
        return false;
      }
      // Cross-partition (a channel) groups of partition ids that cover every device once, `count` each.
      const Attr* channel = OpAttr(op, "channel_handle");
      if (channel == nullptr || channel->kind != Attr::Kind::kDict) return false;
      const Attr* handle = channel->Find("handle");
      if (handle == nullptr || handle->kind != Attr::Kind::kInt || handle->int_value <= 0) return false;
      const Attr* g = OpAttr(op, "replica_groups");
      if (g == nullptr || g->kind != Attr::Kind::kDense || g->dense == nullptr || g->dense->is_unknown() ||
          g->dense->shape().rank() != 2 || g->dense->shape().dimensions[1] != count) {
        return false;
      }
      const int64_t rows = g->dense->shape().dimensions[0];
      std::vector<bool> seen(n, false);
      out.groups.assign(static_cast<size_t>(rows), {});
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < count; ++c) {
          const int64_t d = g->dense->GetAsInt64(r * count + c);
          if (d < 0 || d >= static_cast<int64_t>(n) || seen[static_cast<size_t>(d)]) return false;
          seen[static_cast<size_t>(d)] = true;
          out.groups[static_cast<size_t>(r)].push_back(d);
        }
      }
      if (std::find(seen.begin(), seen.end(), false) != seen.end()) return false;
      // Member q's chunk is a device's own only if the group's members hold the same window of equal operands.
      for (const std::vector<int64_t>& group : out.groups) {
        for (int64_t d : group) {
          const size_t d0 = static_cast<size_t>(group[0]);
          if (keys[static_cast<size_t>(d)] != keys[d0] || in.offsets[static_cast<size_t>(d)] != in.offsets[d0]) {
            return false;
          }
        }
      }
      out.all_to_all = true;
      out.a2a_dim = split;
      out.a2a_count = count;
    } else if (base == "slice") {
      std::vector<int64_t> starts, limits, strides;
      if (!IntList(OpAttr(op, "start_indices"), &starts) || !IntList(OpAttr(op, "limit_indices"), &limits)) {
        return false;
      }
      if (OpAttr(op, "strides") != nullptr && !IntList(OpAttr(op, "strides"), &strides)) return false;
      if (strides.empty()) strides.assign(starts.size(), 1);
      const size_t rank = in.shape.size();
      if (starts.size() != rank || limits.size() != rank || strides.size() != rank) return false;
      out.all_to_all = false;
      out.groups.clear();
      for (size_t j = 0; j < rank; ++j) {
        const int64_t lo = starts[j], hi = limits[j];
        if (strides[j] != 1 || lo < 0 || hi > in.shape[j] || lo >= hi) return false;
        if (dims[j] != hi - lo) return false;
        std::vector<int64_t> at(n, lo);
        if (in.all_to_all && static_cast<int64_t>(j) == in.a2a_dim) {
          // The all-to-all put member q's chunk p at block q on the device in group position p.
          const int64_t m = in.shape[j] / in.a2a_count;
          const int64_t q = lo / m;
          if (hi > (q + 1) * m) return false;
          for (const std::vector<int64_t>& group : in.groups) {
            for (size_t p = 0; p < group.size(); ++p) {
              at[static_cast<size_t>(group[p])] = static_cast<int64_t>(p) * m + (lo - q * m);
            }
          }
        } else if (lo == 0 && hi == in.shape[j]) {
          continue;
        }
        if (!Narrow(&out, j, at, hi - lo)) return false;
      }
      if (out.shape != dims) return false;
    } else {
      return false;
    }
    values[op.results[0].name] = std::move(out);
  }
  return false;  // no return
}

}  // namespace

bool Lowerer::LowerSdyAllSliceComposite(const Op& op, const std::vector<Instruction*>& operands, bool* handled,
                                        Results* results) {
  *handled = false;
  if (operands.size() != 1 || op.result_types.size() != 1) return true;
  Instruction* x = operands[0];
  auto arg = sdy_manual_args_.find(x);
  if (arg == sdy_manual_args_.end() || x->opcode() != Opcode::kCustomCall || !x->shape().IsArray() ||
      !x->shape().IsStatic()) {
    return true;
  }
  const SdyManualArg& manual = arg->second;
  // Directly in the body of the manual computation that made the operand, and every mesh axis manual there.
  if (manual.manual_axes != sdy_manual_axes_ || manual.mesh.names.empty()) return true;
  for (const std::string& axis : manual.mesh.names) {
    if (std::find(sdy_manual_axes_.begin(), sdy_manual_axes_.end(), axis) == sdy_manual_axes_.end()) return true;
  }
  std::vector<int64_t> out_dims;
  if (!StaticDims(op.result_types[0], &out_dims)) return true;
  const std::vector<int64_t>& in_dims = x->shape().dimensions;

  const Attr* attrs = FindAttr(op, "composite_attributes");
  const Attr* out_sharding =
      attrs != nullptr && attrs->kind == Attr::Kind::kDict ? attrs->Find("out_sharding") : nullptr;
  if (out_sharding == nullptr || out_sharding->kind != Attr::Kind::kSdySharding) return true;
  const SdySharding& s = out_sharding->sdy->shardings[0];
  auto mesh = sdy_meshes_.find(s.mesh_name);
  if (s.mesh != nullptr || mesh == sdy_meshes_.end() || !(mesh->second == manual.mesh)) return true;

  DeviceGrid grid;
  std::vector<std::vector<int64_t>> keys;
  Table expected;
  if (!grid.Init(manual.mesh) || !OperandKeys(grid, *manual.in_sharding, &keys) ||
      !OffsetsFromOutSharding(grid, s, in_dims, out_dims, &expected)) {
    return true;
  }
  const Attr* decomposition = FindAttr(op, "decomposition");
  if (decomposition == nullptr || decomposition->kind != Attr::Kind::kSymbol) return true;
  auto func = funcs_.find(decomposition->str);
  WindowValue window;
  if (func == funcs_.end() || !InterpretDecomposition(*func->second, grid, keys, in_dims, &window) ||
      window.shape != out_dims || window.sizes != out_dims || window.offsets != expected) {
    return true;
  }

  // offsets[dimension] = table[partition-id], or a constant where every device agrees.
  std::vector<Instruction*> ds_operands = {x};
  Instruction* pid = nullptr;
  for (size_t dim = 0; dim < in_dims.size(); ++dim) {
    bool uniform = true;
    for (const std::vector<int64_t>& row : expected) uniform = uniform && row[dim] == expected[0][dim];
    if (uniform) {
      ds_operands.push_back(ConstScalar(PrimitiveType::kS32, static_cast<double>(expected[0][dim])));
      continue;
    }
    if (pid == nullptr)
      pid = Convert(Emit(Opcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32), {}), PrimitiveType::kS32);
    Literal table(Shape(PrimitiveType::kS32, {grid.num_devices()}));
    for (int64_t d = 0; d < grid.num_devices(); ++d) table.SetFromInt64(d, expected[static_cast<size_t>(d)][dim]);
    Instruction* entry =
        Emit(Opcode::kDynamicSlice, Shape(PrimitiveType::kS32, {1}), {EmitConstant(std::move(table)), pid});
    entry->SetAttr("dynamic_slice_sizes", AttrValue::IntList({1}));
    ds_operands.push_back(Emit(Opcode::kReshape, Shape::Scalar(PrimitiveType::kS32), {entry}));
  }
  Instruction* slice = Emit(Opcode::kDynamicSlice, Shape(x->shape().element_type, out_dims), std::move(ds_operands));
  slice->SetAttr("dynamic_slice_sizes", AttrValue::IntList(out_dims));
  results->push_back(slice);
  *handled = true;
  return true;
}

}  // namespace xlac::shlo
