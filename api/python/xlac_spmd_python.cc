// The sharding API (include/xlac/spmd.h) for the Python package's xlac.spmd (api/python/xlac/spmd.py,
// docs/python.md "From PyTorch/XLA"). Meshes cross as (device_ids, mesh_shape, axis_names) and partition specs as
// lists of lists of axis indices / names, already normalized by spmd.py; every rule and error text is the C++ API's.
// Errors: invalid meshes, specs and shardings raise ValueError, out-of-range indices IndexError, what the API does
// not support NotImplementedError, modules that do not parse or verify xlac.CompileError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "xlac/spmd.h"

namespace py = pybind11;

namespace xlac {
namespace {

[[noreturn]] void Throw(const absl::Status& status, bool compiling = false) {
  std::string message(status.message());
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (compiling) {
    py::object cls =
        py::module_::import("xlac._errors").attr(absl::IsUnimplemented(status) ? "UnimplementedError" : "CompileError");
    PyErr_SetString(cls.ptr(), message.c_str());
    throw py::error_already_set();
  }
  if (absl::IsOutOfRange(status)) throw py::index_error(message);
  if (absl::IsUnimplemented(status)) {
    PyErr_SetString(PyExc_NotImplementedError, message.c_str());
    throw py::error_already_set();
  }
  throw py::value_error(message);
}

template <typename T>
T Take(absl::StatusOr<T> value, bool compiling = false) {
  if (!value.ok()) Throw(value.status(), compiling);
  return *std::move(value);
}

void Check(const absl::Status& status) {
  if (!status.ok()) Throw(status);
}

// (device_ids, mesh_shape, axis_names, dcn_shape)
py::tuple MeshTuple(const spmd::Mesh& mesh) {
  return py::make_tuple(mesh.device_ids(), mesh.shape(), mesh.axis_names(), mesh.dcn_shape());
}

spmd::Mesh MeshOf(std::vector<int64_t> device_ids, std::vector<int64_t> shape, std::vector<std::string> names) {
  return Take(spmd::Mesh::Create(std::move(device_ids), std::move(shape), std::move(names)));
}

// Mesh axes from Python: ints (indices) and strs (names).
std::vector<spmd::MeshAxis> AxesOf(const py::list& axes) {
  std::vector<spmd::MeshAxis> out;
  for (py::handle a : axes) {
    if (py::isinstance<py::str>(a)) {
      out.emplace_back(a.cast<std::string>());
    } else {
      out.emplace_back(a.cast<int64_t>());
    }
  }
  return out;
}

// A spec entry list from Python: each entry a list of ints (axis indices) and strs (axis names).
spmd::PartitionSpec SpecOf(const py::list& spec) {
  spmd::PartitionSpec out;
  for (py::handle entry : spec) {
    out.push_back(AxesOf(py::reinterpret_borrow<py::list>(entry)));
  }
  return out;
}

py::list Values(const std::vector<spmd::ValueInfo>& values) {
  py::list out;
  for (const spmd::ValueInfo& v : values) {
    py::tuple dims(v.array.dims.size());
    for (size_t i = 0; i < v.array.dims.size(); ++i) dims[i] = py::int_(v.array.dims[i]);
    out.append(py::make_tuple(v.index, v.name, v.array.element_type, dims, v.sharding));
  }
  return out;
}

}  // namespace

void RegisterSpmd(py::module_& m) {
  m.def("_spmd_mesh", [](std::vector<int64_t> device_ids, std::vector<int64_t> shape, std::vector<std::string> names) {
    return MeshTuple(MeshOf(std::move(device_ids), std::move(shape), std::move(names)));
  });
  m.def("_spmd_hybrid_mesh", [](std::vector<int64_t> ici, std::vector<int64_t> dcn, std::vector<std::string> names) {
    return MeshTuple(Take(spmd::Mesh::Hybrid(std::move(ici), std::move(dcn), std::move(names))));
  });
  m.def("_spmd_sharding_for",
        [](std::vector<int64_t> device_ids, std::vector<int64_t> shape, std::vector<std::string> names,
           const py::list& spec, int64_t rank, const std::string& what) {
          spmd::Mesh mesh = MeshOf(std::move(device_ids), std::move(shape), std::move(names));
          return Take(spmd::ShardingFor(mesh, SpecOf(spec), rank, what));
        });
  m.def("_spmd_visualize", [](const std::vector<int64_t>& dims, const std::string& sharding) {
    return Take(spmd::VisualizeSharding(dims, sharding));
  });
  m.def(
      "_spmd_propagate",
      [](const std::string& text, int64_t num_partitions, int64_t num_replicas, bool partition,
         std::vector<std::string> custom_call_identity, const std::string& source_name) {
        CompileOptions options;
        options.num_partitions = num_partitions;
        options.num_replicas = num_replicas;
        options.partition = partition;
        options.custom_call_identity = std::move(custom_call_identity);
        options.source_name = source_name;
        absl::StatusOr<spmd::PropagatedShardings> out;
        {
          py::gil_scoped_release release;
          out = spmd::PropagateShardings(text, options);
        }
        spmd::PropagatedShardings s = Take(std::move(out), /*compiling=*/true);
        return py::make_tuple(s.parameters, s.results);
      },
      py::arg("text"), py::arg("num_partitions"), py::arg("num_replicas"), py::arg("partition"),
      py::arg("custom_call_identity"), py::arg("source_name"));

  py::class_<spmd::Program>(m, "_SpmdProgram")
      .def(py::init([](const std::string& text, const std::string& source_name) {
             absl::StatusOr<spmd::Program> program;
             {
               py::gil_scoped_release release;
               program = spmd::Program::Load(text, source_name);
             }
             return std::make_unique<spmd::Program>(Take(std::move(program), /*compiling=*/true));
           }),
           py::arg("text"), py::arg("source_name"))
      .def_property_readonly("parameters", [](const spmd::Program& p) { return Values(p.parameters()); })
      .def_property_readonly("results", [](const spmd::Program& p) { return Values(p.results()); })
      .def_property_readonly("num_partitions", &spmd::Program::num_partitions)
      .def("parameter_index",
           [](const spmd::Program& p, const std::string& name) { return Take(p.ParameterIndex(name)); })
      .def("result_index", [](const spmd::Program& p, const std::string& name) { return Take(p.ResultIndex(name)); })
      .def("set_sharding",
           [](spmd::Program& p, bool result, int64_t index, const std::string& sharding) {
             Check(result ? p.SetResultSharding(index, sharding) : p.SetParameterSharding(index, sharding));
           })
      .def("mark",
           [](spmd::Program& p, bool result, int64_t index, std::vector<int64_t> device_ids, std::vector<int64_t> shape,
              std::vector<std::string> names, const py::list& spec) {
             spmd::Mesh mesh = MeshOf(std::move(device_ids), std::move(shape), std::move(names));
             spmd::PartitionSpec s = SpecOf(spec);
             Check(result ? p.MarkResult(index, mesh, s) : p.MarkParameter(index, mesh, s));
           })
      .def("text", &spmd::Program::Text)
      // The plans: `axis` a list of axis indices / names, parameters and results as indices.
      .def("data_parallel",
           [](spmd::Program& p, std::vector<int64_t> device_ids, std::vector<int64_t> shape,
              std::vector<std::string> names, const py::list& axis, const std::vector<int64_t>& batch_parameters,
              const std::vector<int64_t>& batch_results) {
             spmd::Mesh mesh = MeshOf(std::move(device_ids), std::move(shape), std::move(names));
             Check(spmd::DataParallel(p, mesh, AxesOf(axis), batch_parameters, batch_results));
           })
      .def("fsdp",
           [](spmd::Program& p, std::vector<int64_t> device_ids, std::vector<int64_t> shape,
              std::vector<std::string> names, const py::list& axis, const std::vector<int64_t>& batch_parameters,
              const std::vector<int64_t>& batch_results) {
             spmd::Mesh mesh = MeshOf(std::move(device_ids), std::move(shape), std::move(names));
             Check(spmd::Fsdp(p, mesh, AxesOf(axis), batch_parameters, batch_results));
           })
      .def("megatron_mlp", [](spmd::Program& p, std::vector<int64_t> device_ids, std::vector<int64_t> shape,
                              std::vector<std::string> names, const py::list& axis,
                              const std::vector<std::pair<int64_t, int64_t>>& pairs) {
        spmd::Mesh mesh = MeshOf(std::move(device_ids), std::move(shape), std::move(names));
        Check(spmd::MegatronMlp(p, mesh, pairs, AxesOf(axis)));
      })
      // Automatic sharding: `seeds` a list of (name, _SpmdProgram); returns the report as a dict.
      .def("auto_shard",
           [](spmd::Program& p, std::vector<int64_t> device_ids, std::vector<int64_t> shape,
              std::vector<std::string> names, const std::string& tpu, const py::list& seeds, int max_sweeps,
              bool full_memory_check, bool require_sharded) {
             spmd::Mesh mesh = MeshOf(std::move(device_ids), std::move(shape), std::move(names));
             spmd::AutoShardOptions options;
             options.tpu = tpu;
             options.max_sweeps = max_sweeps;
             options.full_memory_check = full_memory_check;
             options.require_sharded = require_sharded;
             for (py::handle seed : seeds) {
               py::tuple t = py::reinterpret_borrow<py::tuple>(seed);
               options.seeds.emplace_back(t[0].cast<std::string>(), t[1].cast<const spmd::Program*>());
             }
             absl::StatusOr<spmd::AutoShardReport> out;
             {
               py::gil_scoped_release release;
               out = spmd::AutoShard(p, mesh, options);
             }
             spmd::AutoShardReport r = Take(std::move(out));
             py::dict d;
             d["modeled_seconds"] = r.modeled_seconds;
             d["per_core_bytes"] = r.per_core_bytes;
             d["start_plans"] = r.start_plans;
             d["start"] = r.start;
             d["evaluations"] = r.evaluations;
             d["search_seconds"] = r.search_seconds;
             d["explanation"] = r.explanation;
             return d;
           })
      .def("modeled_step_seconds", [](const spmd::Program& p, const std::string& tpu) {
        absl::StatusOr<double> out;
        {
          py::gil_scoped_release release;
          out = spmd::ModeledStepSeconds(p, tpu);
        }
        return Take(std::move(out));
      });
}

}  // namespace xlac
