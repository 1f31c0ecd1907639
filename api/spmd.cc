// The sharding API of include/xlac/spmd.h: meshes, partition specs -> HLO shardings, and programs whose entry
// parameters and results are annotated and printed back. The Python package's xlac.spmd uses these functions
// through api/python/xlac_spmd_python.cc, so both front doors share the rules and the error texts.
#include "xlac/spmd.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/pipeline.h"
#include "compiler/auto_shard.h"
#include "compiler/compiler.h"
#include "frontend/hlo/printer.h"
#include "frontend/hlo/sharding_text.h"
#include "frontend/module_input.h"
#include "ir/device_counts.h"
#include "ir/diagnostics.h"
#include "ir/module.h"
#include "ir/sharding.h"
#include "ir/tpu_target.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/tpu_cost_model.h"
#include "passes/tpu_memory.h"
#include "passes/verifier.h"

namespace xlac::spmd {
namespace {

int64_t Product(const std::vector<int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<int64_t>());
}

// A Python tuple's repr: (4, 2), (8,), ().
std::string PyTuple(const std::vector<int64_t>& v) {
  if (v.size() == 1) return absl::StrCat("(", v[0], ",)");
  return absl::StrCat("(", absl::StrJoin(v, ", "), ")");
}

std::string Quoted(const std::string& name) { return "'" + name + "'"; }

std::string AxisRepr(const MeshAxis& axis) {
  return axis.name.empty() ? std::to_string(axis.index) : Quoted(axis.name);
}

// The spec as Python writes it: (0, None), (('data', 'model'), None).
std::string SpecRepr(const PartitionSpec& spec) {
  std::vector<std::string> entries;
  for (const std::vector<MeshAxis>& entry : spec) {
    if (entry.empty()) {
      entries.push_back("None");
    } else if (entry.size() == 1) {
      entries.push_back(AxisRepr(entry[0]));
    } else {
      std::vector<std::string> axes;
      for (const MeshAxis& a : entry) axes.push_back(AxisRepr(a));
      entries.push_back("(" + absl::StrJoin(axes, ", ") + ")");
    }
  }
  if (entries.size() == 1) return "(" + entries[0] + ",)";
  return "(" + absl::StrJoin(entries, ", ") + ")";
}

// "mesh axis 1 ('model')", or "mesh axis 1" on an unnamed mesh.
std::string AxisLabel(const Mesh& mesh, int64_t axis) {
  std::string out = absl::StrCat("mesh axis ", axis);
  if (!mesh.axis_names().empty()) absl::StrAppend(&out, " (", Quoted(mesh.axis_names()[axis]), ")");
  return out;
}

absl::Status Invalid(std::string message) { return absl::InvalidArgumentError(std::move(message)); }

std::string ShapeText(const ArrayInfo& info) {
  if (info.element_type == "tuple") return "tuple";
  return absl::StrCat(info.element_type, "[", absl::StrJoin(info.dims, ","), "]");
}

ArrayInfo InfoOf(const Shape& shape) {
  ArrayInfo info;
  if (!shape.IsArray()) {
    info.element_type = shape.IsTuple() ? "tuple" : std::string(PrimitiveTypeName(shape.element_type));
    return info;
  }
  info.element_type = std::string(PrimitiveTypeName(shape.element_type));
  info.dims = shape.dimensions;
  info.element_bytes = ByteWidth(shape.element_type);
  return info;
}

// Devices a sharding's tile assignment spans (0 for shardings without one); tuples: the first tiled leaf.
int64_t TiledDevices(const Sharding& s) {
  if (s.IsTiled()) return Product(s.tile_dims);
  if (s.IsTuple()) {
    for (const Sharding& e : s.tuple_elements) {
      if (int64_t n = TiledDevices(e)) return n;
    }
  }
  return 0;
}

absl::StatusOr<Sharding> ParseSharding(std::string_view text) {
  DiagnosticEngine diags;
  std::optional<Sharding> s = ParseShardingText(text, diags);
  if (!s) {
    SourceFile file("<sharding>", text);
    std::string message = diags.Render(file);
    while (!message.empty() && message.back() == '\n') message.pop_back();
    return Invalid("invalid HLO sharding '" + std::string(text) + "': " + message);
  }
  return *std::move(s);
}

}  // namespace

// ---------------------------------------------------------------------------------------------------- Mesh

int64_t Mesh::size() const { return static_cast<int64_t>(device_ids_.size()); }
int64_t Mesh::dcn_slices() const { return Product(dcn_shape_); }

absl::StatusOr<Mesh> Mesh::Create(std::vector<int64_t> device_ids, std::vector<int64_t> mesh_shape,
                                  std::vector<std::string> axis_names) {
  for (size_t i = 0; i < mesh_shape.size(); ++i) {
    if (mesh_shape[i] < 1) return Invalid(absl::StrCat("Mesh: mesh axis ", i, " has size ", mesh_shape[i]));
  }
  const int64_t n = Product(mesh_shape);
  if (static_cast<int64_t>(device_ids.size()) != n) {
    return Invalid(absl::StrCat("Mesh: ", device_ids.size(), " device ids for mesh shape ", PyTuple(mesh_shape),
                                ", which has ", n, " devices"));
  }
  std::vector<bool> seen(static_cast<size_t>(n), false);
  for (int64_t id : device_ids) {
    if (id < 0 || id >= n) {
      return Invalid(absl::StrCat("Mesh: device id ", id, " is out of range: the device ids of a mesh of ", n,
                                  " devices are 0..", n - 1, " (the program's partitions)"));
    }
    if (seen[static_cast<size_t>(id)]) return Invalid(absl::StrCat("Mesh: device id ", id, " appears twice"));
    seen[static_cast<size_t>(id)] = true;
  }
  if (!axis_names.empty()) {
    if (axis_names.size() != mesh_shape.size()) {
      return Invalid(absl::StrCat("Mesh: ", axis_names.size(), " axis names for ", mesh_shape.size(), " mesh axes"));
    }
    for (size_t i = 0; i < axis_names.size(); ++i) {
      if (axis_names[i].empty()) return Invalid(absl::StrCat("Mesh: the name of mesh axis ", i, " is empty"));
      for (size_t j = 0; j < i; ++j) {
        if (axis_names[j] == axis_names[i]) {
          return Invalid(absl::StrCat("Mesh: axis name ", Quoted(axis_names[i]), " names mesh axes ", j, " and ", i));
        }
      }
    }
  }
  Mesh mesh;
  mesh.device_ids_ = std::move(device_ids);
  mesh.dcn_shape_.assign(mesh_shape.size(), 1);
  mesh.shape_ = std::move(mesh_shape);
  mesh.axis_names_ = std::move(axis_names);
  return mesh;
}

absl::StatusOr<Mesh> Mesh::Hybrid(std::vector<int64_t> ici_mesh_shape, std::vector<int64_t> dcn_mesh_shape,
                                  std::vector<std::string> axis_names) {
  if (dcn_mesh_shape.empty()) dcn_mesh_shape.assign(ici_mesh_shape.size(), 1);
  if (dcn_mesh_shape.size() != ici_mesh_shape.size()) {
    return Invalid(absl::StrCat("HybridMesh: ici_mesh_shape ", PyTuple(ici_mesh_shape), " and dcn_mesh_shape ",
                                PyTuple(dcn_mesh_shape), " have different lengths"));
  }
  const size_t rank = ici_mesh_shape.size();
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (ici_mesh_shape[i] < 1 || dcn_mesh_shape[i] < 1) {
      return Invalid(absl::StrCat("HybridMesh: mesh axis ", i, " has ici size ", ici_mesh_shape[i], " and dcn size ",
                                  dcn_mesh_shape[i]));
    }
    shape[i] = ici_mesh_shape[i] * dcn_mesh_shape[i];
  }
  // numpy.block of the slices' ICI meshes laid out over the DCN mesh: along axis i the DCN coordinate is major.
  const int64_t per_slice = Product(ici_mesh_shape);
  std::vector<int64_t> ids(static_cast<size_t>(Product(shape)));
  std::vector<int64_t> coord(rank, 0);
  for (size_t flat = 0; flat < ids.size(); ++flat) {
    int64_t slice = 0, within = 0;
    for (size_t i = 0; i < rank; ++i) {
      slice = slice * dcn_mesh_shape[i] + coord[i] / ici_mesh_shape[i];
      within = within * ici_mesh_shape[i] + coord[i] % ici_mesh_shape[i];
    }
    ids[flat] = slice * per_slice + within;
    for (size_t i = rank; i-- > 0;) {
      if (++coord[i] < shape[i]) break;
      coord[i] = 0;
    }
  }
  absl::StatusOr<Mesh> mesh = Create(std::move(ids), std::move(shape), std::move(axis_names));
  if (!mesh.ok()) {
    std::string message(mesh.status().message());
    if (message.rfind("Mesh: ", 0) == 0) message = "HybridMesh: " + message.substr(6);
    return Invalid(message);
  }
  mesh->dcn_shape_ = std::move(dcn_mesh_shape);
  return mesh;
}

// ---------------------------------------------------------------------------------------------------- ShardingFor

absl::StatusOr<std::string> ShardingFor(const Mesh& mesh, const PartitionSpec& spec, int64_t rank,
                                        std::string_view what) {
  const std::string prefix = absl::StrCat("mark_sharding: ", std::string(what), ": ");
  const int64_t axes = static_cast<int64_t>(mesh.shape().size());
  if (static_cast<int64_t>(spec.size()) > rank) {
    const std::vector<MeshAxis>& extra = spec[static_cast<size_t>(rank)];
    std::string over = extra.empty() ? "" : " to shard over mesh axis " + AxisRepr(extra[0]);
    return Invalid(absl::StrCat(prefix, "the partition spec ", SpecRepr(spec), " has ", spec.size(),
                                " entries but the array has rank ", rank, ": there is no dimension ", rank, over));
  }
  std::vector<int64_t> used_by(static_cast<size_t>(axes), -1);  // mesh axis -> dimension
  std::vector<int64_t> order;                                   // mesh axes in spec order
  std::vector<int64_t> tile_dims(static_cast<size_t>(rank), 1);
  for (size_t d = 0; d < spec.size(); ++d) {
    for (const MeshAxis& a : spec[d]) {
      int64_t axis = a.index;
      if (!a.name.empty()) {
        const std::vector<std::string>& names = mesh.axis_names();
        auto it = std::find(names.begin(), names.end(), a.name);
        if (it == names.end()) {
          std::vector<std::string> quoted;
          for (const std::string& n : names) quoted.push_back(Quoted(n));
          std::string known = names.empty() ? "the mesh's axes have no names; use axis indices"
                                            : "axes: " + absl::StrJoin(quoted, ", ");
          return Invalid(
              absl::StrCat(prefix, "dimension ", d, ": the mesh has no axis named ", Quoted(a.name), " (", known, ")"));
        }
        axis = it - names.begin();
      } else if (axis < 0 || axis >= axes) {
        return Invalid(absl::StrCat(prefix, "dimension ", d, ": mesh axis ", axis, " is out of range (the mesh has ",
                                    axes, axes == 1 ? " axis)" : " axes)"));
      }
      if (used_by[static_cast<size_t>(axis)] >= 0) {
        return Invalid(absl::StrCat(prefix, "dimension ", d, ": ", AxisLabel(mesh, axis),
                                    " is already used by dimension ", used_by[static_cast<size_t>(axis)]));
      }
      used_by[static_cast<size_t>(axis)] = static_cast<int64_t>(d);
      order.push_back(axis);
      tile_dims[d] *= mesh.shape()[static_cast<size_t>(axis)];
    }
  }
  if (order.empty()) return std::string("{replicated}");
  int64_t replicated = 1;
  for (int64_t axis = 0; axis < axes; ++axis) {
    if (used_by[static_cast<size_t>(axis)] >= 0) continue;
    order.push_back(axis);
    replicated *= mesh.shape()[static_cast<size_t>(axis)];
  }
  Sharding s;
  s.kind = Sharding::Kind::kTiled;
  s.tile_dims = tile_dims;
  if (replicated > 1) {
    s.tile_dims.push_back(replicated);
    s.last_tile_dim_replicate = true;
  }
  std::vector<int64_t> iota(mesh.device_ids().size());
  std::iota(iota.begin(), iota.end(), 0);
  if (mesh.device_ids() == iota) {
    // The iota form, as XLA prints it: the mesh transposed to `order` (the printer canonicalizes the dims).
    IotaList list;
    list.dims = s.tile_dims;
    list.reshape_dims = mesh.shape();
    list.transpose_perm = order;
    s.iota = std::move(list);
  } else {
    // The explicit list: the mesh's device ids transposed to `order`, row-major.
    const std::vector<int64_t>& shape = mesh.shape();
    std::vector<int64_t> strides(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
    std::vector<int64_t> coord(order.size(), 0);
    for (size_t flat = 0; flat < mesh.device_ids().size(); ++flat) {
      int64_t source = 0;
      for (size_t k = 0; k < order.size(); ++k) source += coord[k] * strides[static_cast<size_t>(order[k])];
      s.device_ids.push_back(mesh.device_ids()[static_cast<size_t>(source)]);
      for (size_t k = order.size(); k-- > 0;) {
        if (++coord[k] < shape[static_cast<size_t>(order[k])]) break;
        coord[k] = 0;
      }
    }
  }
  return ShardingToString(s, /*include_metadata=*/false);
}

// ---------------------------------------------------------------------------------------------------- Visualize

absl::StatusOr<std::string> VisualizeSharding(const std::vector<int64_t>& dims, std::string_view text) {
  absl::StatusOr<Sharding> parsed = ParseSharding(text);
  if (!parsed.ok()) return parsed.status();
  const Sharding& s = *parsed;
  const int64_t rank = static_cast<int64_t>(dims.size());
  std::string title = absl::StrCat("devices holding each block of ", PyTuple(dims), " sharded ",
                                   ShardingToString(s, /*include_metadata=*/false), "\n");
  if (s.kind == Sharding::Kind::kReplicated) return title + "every device holds the whole array\n";
  if (s.kind == Sharding::Kind::kMaximal) return title + absl::StrCat("device ", s.device, " holds the whole array\n");
  if (!s.IsTiled()) {
    return absl::UnimplementedError("visualize_sharding: a " + ShardingToString(s, false) +
                                    " sharding has no device blocks to show");
  }
  for (Sharding::SubgroupType t : s.last_tile_dims) {
    if (t != Sharding::SubgroupType::kReplicated) {
      return absl::UnimplementedError("visualize_sharding: " + ShardingToString(s, false) +
                                      " has manual or unreduced subgroups");
    }
  }
  const int64_t data_dims = s.NumDataTileDims();
  if (data_dims != rank) {
    return Invalid(absl::StrCat("visualize_sharding: the sharding ", ShardingToString(s, false), " tiles ", data_dims,
                                " dimensions but the shape ", PyTuple(dims), " has ", rank));
  }
  std::vector<int64_t> tiles(s.tile_dims.begin(), s.tile_dims.begin() + data_dims);
  const std::vector<int64_t> devices = s.DeviceList();
  const int64_t num_tiles = Product(tiles);
  const int64_t per_tile = static_cast<int64_t>(devices.size()) / std::max<int64_t>(num_tiles, 1);
  // Block t of a dimension of size D over T tiles: [t * ceil(D/T), (t + 1) * ceil(D/T)) clipped to D.
  auto range = [&](int64_t d, int64_t t) {
    const int64_t size = dims[static_cast<size_t>(d)], n = tiles[static_cast<size_t>(d)];
    const int64_t step = (size + n - 1) / n;
    return absl::StrCat(std::min(t * step, size), ":", std::min((t + 1) * step, size));
  };
  auto cell = [&](int64_t flat_tile) {
    std::vector<int64_t> ids(devices.begin() + flat_tile * per_tile, devices.begin() + (flat_tile + 1) * per_tile);
    return absl::StrJoin(ids, ",");
  };
  std::string out = title;
  if (rank == 1 || rank == 2) {
    const int64_t rows = rank == 2 ? tiles[0] : 1, cols = tiles[static_cast<size_t>(rank - 1)];
    // Header row: the column ranges; first column: the row ranges ("" for rank 1).
    std::vector<std::vector<std::string>> table(static_cast<size_t>(rows + 1));
    table[0].push_back(rank == 2 ? "rows \\ cols" : "");
    for (int64_t c = 0; c < cols; ++c) table[0].push_back(range(rank - 1, c));
    for (int64_t r = 0; r < rows; ++r) {
      table[static_cast<size_t>(r + 1)].push_back(rank == 2 ? range(0, r) : "devices");
      for (int64_t c = 0; c < cols; ++c) table[static_cast<size_t>(r + 1)].push_back(cell(r * cols + c));
    }
    std::vector<size_t> width(static_cast<size_t>(cols + 1), 0);
    for (const auto& row : table) {
      for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
    }
    std::string rule = "+";
    for (size_t w : width) rule += std::string(w + 2, '-') + "+";
    rule += "\n";
    out += rule;
    for (size_t r = 0; r < table.size(); ++r) {
      out += "|";
      for (size_t c = 0; c < table[r].size(); ++c) {
        out += " " + table[r][c] + std::string(width[c] - table[r][c].size(), ' ') + " |";
      }
      out += "\n";
      if (r == 0) out += rule;
    }
    out += rule;
    return out;
  }
  // Other ranks: one line per block.
  std::vector<int64_t> coord(static_cast<size_t>(rank), 0);
  for (int64_t t = 0; t < num_tiles; ++t) {
    std::vector<std::string> parts;
    for (int64_t d = 0; d < rank; ++d) parts.push_back(range(d, coord[static_cast<size_t>(d)]));
    out += absl::StrCat("[", absl::StrJoin(parts, ", "), "]: devices ", cell(t), "\n");
    for (int64_t d = rank; d-- > 0;) {
      if (++coord[static_cast<size_t>(d)] < tiles[static_cast<size_t>(d)]) break;
      coord[static_cast<size_t>(d)] = 0;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------- Program

struct Program::Impl {
  std::string text;  // the SourceFile of diagnostics views it
  std::string source_name;
  std::unique_ptr<Module> module;
  std::vector<ValueInfo> parameters, results;
  int64_t mesh_devices = 0;  // the last mesh Mark* used

  Computation* entry() const { return module->entry_computation(); }

  // The sharding text of leaf `i` of the root (the whole root when it is not a tuple).
  std::string ResultSharding(int64_t i) const {
    const Instruction* root = entry()->root();
    if (!root->sharding()) return "";
    const Sharding& s = *root->sharding();
    if (root->shape().IsTuple() && s.IsTuple()) {
      if (i < static_cast<int64_t>(s.tuple_elements.size())) {
        return ShardingToString(s.tuple_elements[static_cast<size_t>(i)], false);
      }
      return "";
    }
    return ShardingToString(s, false);
  }

  void Refresh() {
    for (ValueInfo& p : parameters) {
      const Instruction* inst = entry()->parameters()[static_cast<size_t>(p.index)];
      p.sharding = inst->sharding() ? ShardingToString(*inst->sharding(), false) : "";
    }
    for (ValueInfo& r : results) r.sharding = ResultSharding(r.index);
  }

  std::string What(bool result, int64_t index) const {
    const ValueInfo& v = (result ? results : parameters)[static_cast<size_t>(index)];
    return absl::StrCat(result ? "result " : "parameter ", index, " (", v.name, ": ", ShapeText(v.array), ")");
  }
};

Program::Program(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Program::Program(Program&&) noexcept = default;
Program& Program::operator=(Program&&) noexcept = default;
Program::~Program() = default;

absl::StatusOr<Program> Program::Load(std::string_view text, std::string_view source_name) {
  auto impl = std::make_unique<Impl>();
  impl->text = std::string(text);
  impl->source_name = std::string(source_name);
  SourceFile file(impl->source_name, impl->text);
  DiagnosticEngine diags;
  impl->module = ParseModuleAnyFormat(file, diags);
  if (impl->module == nullptr || !ResolveDeviceCounts(*impl->module, DeviceCountOptions{}, diags) ||
      !VerifyModule(*impl->module, diags)) {
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "the module does not parse or verify");
    return Invalid(diags.Render(file));
  }
  if (impl->entry() == nullptr) return Invalid(impl->source_name + ": error: the module has no entry computation");
  const std::vector<Instruction*>& params = impl->entry()->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    impl->parameters.push_back(ValueInfo{static_cast<int64_t>(i), params[i]->name(), InfoOf(params[i]->shape()), ""});
  }
  const Instruction* root = impl->entry()->root();
  if (root->shape().IsTuple()) {
    for (size_t i = 0; i < root->shape().tuple_shapes.size(); ++i) {
      std::string name = root->opcode() == Opcode::kTuple ? root->operand(static_cast<int64_t>(i))->name()
                                                          : absl::StrCat(root->name(), ".", i);
      impl->results.push_back(
          ValueInfo{static_cast<int64_t>(i), std::move(name), InfoOf(root->shape().tuple_shapes[i]), ""});
    }
  } else {
    impl->results.push_back(ValueInfo{0, root->name(), InfoOf(root->shape()), ""});
  }
  impl->Refresh();
  return Program(std::move(impl));
}

const std::vector<ValueInfo>& Program::parameters() const { return impl_->parameters; }
const std::vector<ValueInfo>& Program::results() const { return impl_->results; }

namespace {
absl::StatusOr<int64_t> IndexOf(const std::vector<ValueInfo>& values, std::string_view name, const char* what) {
  if (!name.empty() && name[0] == '%') name.remove_prefix(1);
  std::vector<std::string> names;
  for (const ValueInfo& v : values) {
    if (v.name == name) return v.index;
    names.push_back(Quoted(v.name));
  }
  return Invalid(absl::StrCat("the program has no ", what, " named ", Quoted(std::string(name)), " (", what,
                              "s: ", absl::StrJoin(names, ", "), ")"));
}
}  // namespace

absl::StatusOr<int64_t> Program::ParameterIndex(std::string_view name) const {
  return IndexOf(impl_->parameters, name, "parameter");
}
absl::StatusOr<int64_t> Program::ResultIndex(std::string_view name) const {
  return IndexOf(impl_->results, name, "result");
}

absl::Status Program::SetParameterSharding(int64_t index, std::string_view sharding) {
  return Set(false, index, sharding);
}
absl::Status Program::SetResultSharding(int64_t index, std::string_view sharding) { return Set(true, index, sharding); }

absl::Status Program::Set(bool result, int64_t index, std::string_view text) {
  const std::vector<ValueInfo>& values = result ? impl_->results : impl_->parameters;
  if (index < 0 || index >= static_cast<int64_t>(values.size())) {
    return absl::OutOfRangeError(absl::StrCat(result ? "result " : "parameter ", index,
                                              " is out of range (the program has ", values.size(),
                                              result ? " results)" : " parameters)"));
  }
  std::optional<Sharding> sharding;
  const Instruction* root = impl_->entry()->root();
  const Shape& shape =
      result ? (root->shape().IsTuple() ? root->shape().tuple_shapes[static_cast<size_t>(index)] : root->shape())
             : impl_->entry()->parameters()[static_cast<size_t>(index)]->shape();
  if (!text.empty()) {
    absl::StatusOr<Sharding> parsed = ParseSharding(text);
    if (!parsed.ok()) return Invalid(absl::StrCat(impl_->What(result, index), ": ", parsed.status().message()));
    if (parsed->IsTiled() && shape.IsArray() && parsed->NumDataTileDims() != shape.rank()) {
      return Invalid(absl::StrCat(impl_->What(result, index), ": the sharding ", ShardingToString(*parsed, false),
                                  " tiles ", parsed->NumDataTileDims(), " dimensions but the value has rank ",
                                  shape.rank()));
    }
    if (parsed->IsTuple() != shape.IsTuple()) {
      return Invalid(absl::StrCat(impl_->What(result, index), ": ", parsed->IsTuple() ? "a tuple" : "an array",
                                  " sharding for ", shape.IsTuple() ? "a tuple" : "an array", " value"));
    }
    sharding = *std::move(parsed);
  }
  if (!result) {
    impl_->entry()->parameters()[static_cast<size_t>(index)]->set_sharding(std::move(sharding));
  } else if (!root->shape().IsTuple()) {
    impl_->entry()->root()->set_sharding(std::move(sharding));
  } else {
    // A tuple result: the root's tuple sharding, the other leaves kept (replicated where there were none, as an
    // unannotated entry result is).
    Instruction* r = impl_->entry()->root();
    const size_t n = root->shape().tuple_shapes.size();
    std::vector<Sharding> leaves(n, Sharding::Replicated());
    if (r->sharding() && r->sharding()->IsTuple() && r->sharding()->tuple_elements.size() == n) {
      leaves = r->sharding()->tuple_elements;
    } else if (r->sharding() && !r->sharding()->IsTuple()) {
      leaves.assign(n, *r->sharding());  // one sharding for every leaf
    }
    leaves[static_cast<size_t>(index)] = sharding ? *sharding : Sharding::Replicated();
    bool any = false;
    for (const Sharding& s : leaves) any |= !(s.kind == Sharding::Kind::kReplicated && !s.IsTuple());
    if (any) {
      r->set_sharding(Sharding::Tuple(std::move(leaves)));
    } else {
      r->set_sharding(std::nullopt);
    }
  }
  impl_->Refresh();
  return absl::OkStatus();
}

absl::Status Program::MarkParameter(int64_t index, const Mesh& mesh, const PartitionSpec& spec) {
  return Mark(false, index, mesh, spec);
}
absl::Status Program::MarkResult(int64_t index, const Mesh& mesh, const PartitionSpec& spec) {
  return Mark(true, index, mesh, spec);
}

absl::Status Program::Mark(bool result, int64_t index, const Mesh& mesh, const PartitionSpec& spec) {
  const std::vector<ValueInfo>& values = result ? impl_->results : impl_->parameters;
  if (index < 0 || index >= static_cast<int64_t>(values.size())) return Set(result, index, "");  // the range error
  const std::string what = impl_->What(result, index);
  const ValueInfo& value = values[static_cast<size_t>(index)];
  if (value.array.element_type == "tuple") {
    return Invalid(
        absl::StrCat("mark_sharding: ", what, ": a tuple value takes HLO sharding text, not a partition spec"));
  }
  absl::StatusOr<std::string> sharding = ShardingFor(mesh, spec, static_cast<int64_t>(value.array.dims.size()), what);
  if (!sharding.ok()) return sharding.status();
  // Every other tiled sharding of the module must span the mesh's devices.
  const Instruction* target =
      result ? impl_->entry()->root() : impl_->entry()->parameters()[static_cast<size_t>(index)];
  for (const auto& comp : impl_->module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (!inst->sharding()) continue;
      const Sharding& s = *inst->sharding();
      int64_t devices = 0;
      if (inst.get() == target && result && s.IsTuple()) {
        for (size_t i = 0; i < s.tuple_elements.size() && devices == 0; ++i) {
          if (static_cast<int64_t>(i) != index) devices = TiledDevices(s.tuple_elements[i]);
        }
      } else if (inst.get() != target) {
        devices = TiledDevices(s);
      }
      if (devices != 0 && devices != mesh.size()) {
        return Invalid(absl::StrCat("mark_sharding: ", what, ": the mesh has ", mesh.size(), " devices but %",
                                    inst->name(), " is sharded over ", devices, " (", ShardingToString(s, false),
                                    "); clear that sharding or use a mesh of ", devices, " devices"));
      }
    }
  }
  absl::Status status = Set(result, index, *sharding);
  if (!status.ok()) return status;
  impl_->mesh_devices = mesh.size();
  return absl::OkStatus();
}

int64_t Program::num_partitions() const {
  return impl_->mesh_devices > 0 ? impl_->mesh_devices : impl_->module->config().num_partitions;
}

std::string Program::Text() const {
  const int64_t saved = impl_->module->config().num_partitions;
  impl_->module->mutable_config().num_partitions = num_partitions();
  std::string text = PrintModule(*impl_->module);
  impl_->module->mutable_config().num_partitions = saved;
  return text;
}

absl::StatusOr<std::unique_ptr<Executable>> Program::Compile(CompileOptions options) const {
  if (options.num_partitions != 0 && impl_->mesh_devices != 0 && options.num_partitions != impl_->mesh_devices) {
    return Invalid(absl::StrCat("compile: num_partitions=", options.num_partitions,
                                " but the shardings were marked on a mesh of ", impl_->mesh_devices, " devices"));
  }
  if (options.num_partitions == 0) options.num_partitions = num_partitions();
  if (options.source_name == "<text>") options.source_name = impl_->source_name;
  return Executable::Compile(Text(), options);
}

// ---------------------------------------------------------------------------------------------------- Plans

namespace {

// The product of the sizes of `axis`, or InvalidArgument naming the plan.
absl::StatusOr<int64_t> AxisSize(const Mesh& mesh, const std::vector<MeshAxis>& axis, const char* plan) {
  if (axis.empty()) return Invalid(absl::StrCat(plan, ": no mesh axis given"));
  const std::vector<std::string>& names = mesh.axis_names();
  int64_t size = 1;
  for (const MeshAxis& a : axis) {
    int64_t index = a.index;
    if (!a.name.empty()) {
      auto it = std::find(names.begin(), names.end(), a.name);
      if (it == names.end()) {
        std::vector<std::string> quoted;
        for (const std::string& n : names) quoted.push_back(Quoted(n));
        return Invalid(absl::StrCat(
            plan, ": the mesh has no axis named ", Quoted(a.name), " (",
            names.empty() ? "the mesh's axes have no names; use axis indices" : "axes: " + absl::StrJoin(quoted, ", "),
            ")"));
      }
      index = it - names.begin();
    } else if (index < 0 || index >= static_cast<int64_t>(mesh.shape().size())) {
      return Invalid(absl::StrCat(plan, ": mesh axis ", index, " is out of range (the mesh has ", mesh.shape().size(),
                                  mesh.shape().size() == 1 ? " axis)" : " axes)"));
    }
    size *= mesh.shape()[static_cast<size_t>(index)];
  }
  return size;
}

bool Contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// `axis` on dimension `dim` of a rank-`rank` array.
PartitionSpec SpecOn(int64_t rank, int64_t dim, const std::vector<MeshAxis>& axis) {
  PartitionSpec spec(static_cast<size_t>(rank));
  spec[static_cast<size_t>(dim)] = axis;
  return spec;
}

absl::Status CheckIndices(const Program& program, const std::vector<int64_t>& params,
                          const std::vector<int64_t>& results) {
  for (int64_t i : params) {
    if (i < 0 || i >= static_cast<int64_t>(program.parameters().size())) {
      return absl::OutOfRangeError(absl::StrCat("parameter ", i, " is out of range (the program has ",
                                                program.parameters().size(), " parameters)"));
    }
  }
  for (int64_t i : results) {
    if (i < 0 || i >= static_cast<int64_t>(program.results().size())) {
      return absl::OutOfRangeError(
          absl::StrCat("result ", i, " is out of range (the program has ", program.results().size(), " results)"));
    }
  }
  return absl::OkStatus();
}

// Clears every entry sharding, then gives the batch parameters and results `axis` on dimension 0 and every other
// array parameter of rank >= 1 what `weight` returns ("" leaves it unannotated).
template <typename WeightFn>
absl::Status BatchPlan(Program& program, const Mesh& mesh, const std::vector<MeshAxis>& axis,
                       const std::vector<int64_t>& batch_parameters, const std::vector<int64_t>& batch_results,
                       WeightFn weight) {
  absl::Status status = CheckIndices(program, batch_parameters, batch_results);
  if (!status.ok()) return status;
  for (size_t i = 0; i < program.parameters().size(); ++i) {
    if (!(status = program.SetParameterSharding(static_cast<int64_t>(i), "")).ok()) return status;
  }
  for (size_t i = 0; i < program.results().size(); ++i) {
    if (!(status = program.SetResultSharding(static_cast<int64_t>(i), "")).ok()) return status;
  }
  for (const ValueInfo& p : std::vector<ValueInfo>(program.parameters())) {
    if (p.array.element_type == "tuple") continue;
    const int64_t rank = static_cast<int64_t>(p.array.dims.size());
    if (Contains(batch_parameters, p.index) && rank > 0) {
      status = program.MarkParameter(p.index, mesh, SpecOn(rank, 0, axis));
    } else {
      status = weight(p);
    }
    if (!status.ok()) return status;
  }
  for (const ValueInfo& r : std::vector<ValueInfo>(program.results())) {
    if (Contains(batch_results, r.index) && r.array.element_type != "tuple" && !r.array.dims.empty()) {
      status = program.MarkResult(r.index, mesh, SpecOn(static_cast<int64_t>(r.array.dims.size()), 0, axis));
      if (!status.ok()) return status;
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status DataParallel(Program& program, const Mesh& mesh, const std::vector<MeshAxis>& axis,
                          const std::vector<int64_t>& batch_parameters, const std::vector<int64_t>& batch_results) {
  absl::StatusOr<int64_t> size = AxisSize(mesh, axis, "data_parallel");
  if (!size.ok()) return size.status();
  return BatchPlan(program, mesh, axis, batch_parameters, batch_results,
                   [&](const ValueInfo& p) { return program.SetParameterSharding(p.index, "{replicated}"); });
}

absl::Status Fsdp(Program& program, const Mesh& mesh, const std::vector<MeshAxis>& axis,
                  const std::vector<int64_t>& batch_parameters, const std::vector<int64_t>& batch_results) {
  absl::StatusOr<int64_t> size = AxisSize(mesh, axis, "fsdp");
  if (!size.ok()) return size.status();
  return BatchPlan(program, mesh, axis, batch_parameters, batch_results, [&](const ValueInfo& p) {
    const std::vector<int64_t>& dims = p.array.dims;
    if (dims.empty()) return absl::OkStatus();
    int64_t best = -1;
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] >= *size && dims[d] % *size == 0 && (best < 0 || dims[d] > dims[static_cast<size_t>(best)])) {
        best = static_cast<int64_t>(d);
      }
    }
    if (best < 0) return program.SetParameterSharding(p.index, "{replicated}");
    return program.MarkParameter(p.index, mesh, SpecOn(static_cast<int64_t>(dims.size()), best, axis));
  });
}

absl::Status MegatronMlp(Program& program, const Mesh& mesh, const std::vector<std::pair<int64_t, int64_t>>& pairs,
                         const std::vector<MeshAxis>& axis) {
  absl::StatusOr<int64_t> size = AxisSize(mesh, axis, "megatron_mlp");
  if (!size.ok()) return size.status();
  if (pairs.empty()) return Invalid("megatron_mlp: pairs=[(w1, w2), ...] names no weights");
  for (const auto& [w1, w2] : pairs) {
    absl::Status status = CheckIndices(program, {w1, w2}, {});
    if (!status.ok()) return status;
    for (int64_t w : {w1, w2}) {
      const ValueInfo& v = program.parameters()[static_cast<size_t>(w)];
      if (v.array.element_type == "tuple" || v.array.dims.empty()) {
        return Invalid(absl::StrCat("megatron_mlp: parameter ", w, " (", v.name, ": ", ShapeText(v.array),
                                    ") is not a matrix; Megatron shards matrices"));
      }
    }
    const int64_t rank1 = static_cast<int64_t>(program.parameters()[static_cast<size_t>(w1)].array.dims.size());
    const int64_t rank2 = static_cast<int64_t>(program.parameters()[static_cast<size_t>(w2)].array.dims.size());
    if (!(status = program.MarkParameter(w1, mesh, SpecOn(rank1, rank1 - 1, axis))).ok()) return status;
    if (!(status = program.MarkParameter(w2, mesh, SpecOn(rank2, 0, axis))).ok()) return status;
  }
  return absl::OkStatus();
}

// ---------------------------------------------------------------------------------------------------- Propagation

absl::StatusOr<PropagatedShardings> PropagateShardings(std::string_view text, const CompileOptions& options) {
  // The compile pipeline's own load and partition steps (compiler/compiler.h), as Executable::Compile runs them:
  // the shardings are those the partitioned program splits its arguments and assembles its results by.
  SourceFile file(options.source_name, text);
  DiagnosticEngine diags;
  CompilerOptions compiler;
  compiler.num_partitions = options.num_partitions;
  compiler.num_replicas = options.num_replicas;
  compiler.custom_call_identity = options.custom_call_identity;
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags);
  if (module == nullptr) {
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "the module does not parse or verify");
    return Invalid(diags.Render(file));
  }
  const Computation* entry = module->entry_computation();
  if (entry == nullptr) return Invalid(options.source_name + ": error: the module has no entry computation");
  const Shape& root_shape = entry->root()->shape();
  const size_t num_results = root_shape.IsTuple() ? root_shape.tuple_shapes.size() : 1;
  PropagatedShardings out;
  out.parameters.assign(entry->parameters().size(), "{replicated}");
  out.results.assign(num_results, "{replicated}");
  const int64_t partitions = options.num_partitions > 0 ? options.num_partitions : module->config().num_partitions;
  if (!options.partition || partitions <= 1 || !NeedsPartitioning(*module)) return out;
  compiler.num_partitions = partitions;
  SpmdReport report;
  DiagnosticEngine spmd_diags;
  absl::StatusOr<bool> partitioned = PartitionModule(*module, compiler, report, spmd_diags);
  if (!partitioned.ok()) return absl::Status(partitioned.status().code(), spmd_diags.Render(file));
  if (!*partitioned) return out;
  for (size_t i = 0; i < out.parameters.size() && i < report.parameter_shardings.size(); ++i) {
    out.parameters[i] = ShardingToString(report.parameter_shardings[i], false);
  }
  const Sharding& result = report.result_sharding;
  for (size_t i = 0; i < num_results; ++i) {
    const bool leaf = root_shape.IsTuple() && result.IsTuple() && i < result.tuple_elements.size();
    out.results[i] = ShardingToString(leaf ? result.tuple_elements[i] : result, false);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------- AutoShard

namespace {

absl::StatusOr<const TpuChipSpec*> ChipFor(std::string_view tpu, const char* what) {
  absl::StatusOr<const TpuChipSpec*> chip = FindTpuChipSpec(std::string(tpu));
  if (!chip.ok()) return Invalid(absl::StrCat(what, ": ", chip.status().message()));
  return chip;
}

}  // namespace

absl::StatusOr<AutoShardReport> AutoShard(Program& program, const Mesh& mesh, const AutoShardOptions& options) {
  absl::StatusOr<const TpuChipSpec*> chip = ChipFor(options.tpu, "auto_shard");
  if (!chip.ok()) return chip.status();
  // The mesh must fit the user's annotations (MarkParameter's check), and the program is marked over it.
  int64_t probe = -1;
  for (const ValueInfo& p : program.parameters()) {
    if (p.sharding.empty() && p.array.element_type != "tuple") {
      probe = p.index;
      break;
    }
  }
  if (probe >= 0) {
    absl::Status status = program.MarkParameter(probe, mesh, {});
    if (!status.ok()) return Invalid("auto_shard: " + std::string(status.message()));
    if (!(status = program.SetParameterSharding(probe, "")).ok()) return status;
  }
  AutoShardConfig config;
  config.mesh_shape = mesh.shape();
  config.device_ids = mesh.device_ids();
  config.axis_names = mesh.axis_names();
  config.chip = *chip;
  config.max_sweeps = options.max_sweeps;
  config.require_sharded = options.require_sharded;
  for (const auto& [name, seed] : options.seeds) {
    if (seed == nullptr || seed->parameters().size() != program.parameters().size()) {
      return Invalid(absl::StrCat("auto_shard: the start plan '", name, "' is not a program with the same ",
                                  program.parameters().size(), " parameters"));
    }
    AutoShardPlan plan{name, {}};
    for (const ValueInfo& p : seed->parameters()) {
      if (p.sharding.empty()) {
        plan.parameters.emplace_back();
        continue;
      }
      absl::StatusOr<Sharding> s = ParseSharding(p.sharding);
      if (!s.ok()) return s.status();
      plan.parameters.push_back(*std::move(s));
    }
    config.seeds.push_back(std::move(plan));
  }
  if (options.full_memory_check) {
    const TpuChipSpec* spec = *chip;
    config.per_core_bytes = [spec](const Module& partitioned) -> absl::StatusOr<int64_t> {
      codegen::CompileOptions compile;
      compile.tpu_numerics = true;
      absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(partitioned, compile);
      if (!prepared.ok()) return prepared.status();
      absl::StatusOr<TpuMemoryReport> report = AnalyzeTpuMemory(*prepared->module, prepared->assignment, *spec);
      if (!report.ok()) return report.status();
      return report->peak_padded_bytes;
    };
  }
  const std::string text = program.Text();
  SourceFile file("<auto_shard>", text);
  DiagnosticEngine diags;
  CompilerOptions compiler;
  compiler.num_partitions = mesh.size();
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags);
  if (module == nullptr) return Invalid(diags.Render(file));
  absl::StatusOr<AutoShardResult> result = AutoShardModule(*module, config);
  if (!result.ok()) return result.status();
  for (const ValueInfo& p : std::vector<ValueInfo>(program.parameters())) {
    if (!p.sharding.empty()) continue;  // the user's
    const std::optional<Sharding>& s = result->parameters[static_cast<size_t>(p.index)];
    absl::Status status = program.SetParameterSharding(p.index, s ? ShardingToString(*s, false) : "");
    if (!status.ok()) return status;
  }
  AutoShardReport report;
  report.modeled_seconds = result->seconds;
  report.per_core_bytes = result->per_core_bytes;
  report.start_plans = result->seed_seconds;
  report.start = result->start;
  report.evaluations = result->evaluations;
  report.search_seconds = result->search_seconds;
  report.explanation = result->explanation;
  return report;
}

absl::StatusOr<double> ModeledStepSeconds(const Program& program, std::string_view tpu) {
  absl::StatusOr<const TpuChipSpec*> chip = ChipFor(tpu, "modeled_step_seconds");
  if (!chip.ok()) return chip.status();
  const std::string text = program.Text();
  SourceFile file("<program>", text);
  DiagnosticEngine diags;
  CompilerOptions compiler;
  compiler.num_partitions = program.num_partitions();
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags);
  if (module == nullptr) return Invalid(diags.Render(file));
  SpmdReport spmd_report;
  absl::StatusOr<bool> partitioned = PartitionModule(*module, compiler, spmd_report, diags);
  if (!partitioned.ok()) return Invalid(diags.Render(file));
  const int64_t partitions = std::max<int64_t>(1, module->config().num_partitions);
  absl::StatusOr<TpuTopology> topology = DefaultTpuTopology(**chip, partitions);
  if (!topology.ok()) return topology.status();
  absl::StatusOr<TpuStepReport> step =
      ModelOptimizedTpuStep(*module, *topology, /*num_replicas=*/1, partitions, /*tpu_numerics=*/true);
  if (!step.ok()) return step.status();
  return step->total_seconds();
}

}  // namespace xlac::spmd
