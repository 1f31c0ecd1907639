// The extension module xlac._xlac behind the Python package (api/python/xlac/__init__.py, docs/python.md).
//
// It stays thin: the public JIT API (include/xlac/jit.h) compiles and runs, the reference interpreter goes through the
// same library functions xla-run uses (LoadModule, PartitionModule of compiler/compiler.h, interp::Evaluate). Both
// present one interface to the Python layer, which owns argument checking and numpy dtypes: `parameters` /
// `results` as (element type, dims) pairs and `run(inputs, outputs)` on C-contiguous arrays whose byte sizes this
// file checks again, so a mistake in the Python layer raises instead of reading or writing out of bounds.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "compiler/compiler.h"
#include "compiler/custom_call_libs.h"
#include "compiler/kernel_sources.h"
#include "frontend/module_input.h"
#include "ir/diagnostics.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "passes/spmd/literal_sharding.h"
#include "passes/spmd/spmd_partitioner.h"
#include "runtime/interpreter/interpreter.h"
#include "xlac/jit.h"

namespace py = pybind11;

namespace xlac {
namespace {

// A failed status on its way to Python. `compiling` tells parse/verify/partition/compile failures (user errors in the
// module: xlac.CompileError) from failures of a run (xlac.RuntimeError).
struct StatusError {
  absl::Status status;
  bool compiling = false;
};

// The exception classes of xlac/_errors.py, looked up once at import. Leaked on purpose: they must outlive every
// translation, including during interpreter shutdown.
struct ErrorClasses {
  py::handle compile_error, unimplemented_error, runtime_error;
};
ErrorClasses* g_errors = nullptr;

void Raise(const StatusError& e) {
  const absl::Status& s = e.status;
  std::string message(s.message());
  py::handle type = g_errors->runtime_error;
  if (absl::IsUnimplemented(s)) {
    type = g_errors->unimplemented_error;
  } else if (e.compiling && (absl::IsInvalidArgument(s) || absl::IsFailedPrecondition(s))) {
    type = g_errors->compile_error;
  } else if (absl::IsInternal(s)) {
    message = "internal error in xlac (please report it): " + message;
  }
  // Diagnostics end with a newline after the caret line; Python prints its own.
  while (!message.empty() && message.back() == '\n') message.pop_back();
  PyErr_SetString(type.ptr(), message.c_str());
}

void ThrowIfError(absl::Status status, bool compiling) {
  if (!status.ok()) throw StatusError{std::move(status), compiling};
}

py::list InfoList(const std::vector<ArrayInfo>& infos) {
  py::list out;
  for (const ArrayInfo& info : infos) {
    py::tuple dims(info.dims.size());
    for (size_t i = 0; i < info.dims.size(); ++i) dims[i] = py::int_(info.dims[i]);
    out.append(py::make_tuple(info.element_type, dims));
  }
  return out;
}

ArrayInfo InfoOf(const Shape& shape) {
  ArrayInfo info;
  info.element_type = std::string(PrimitiveTypeName(shape.element_type));
  info.dims = shape.dimensions;
  info.element_bytes = ByteWidth(shape.element_type);
  return info;
}

void FlattenShape(const Shape& shape, std::vector<ArrayInfo>& leaves) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes) FlattenShape(s, leaves);
  } else if (shape.IsArray()) {
    leaves.push_back(InfoOf(shape));
  }
}

void FlattenLiteral(const Literal& lit, std::vector<const Literal*>& leaves) {
  if (lit.is_tuple()) {
    for (const Literal& e : lit.tuple_elements()) FlattenLiteral(e, leaves);
  } else if (lit.shape().IsArray()) {
    leaves.push_back(&lit);
  }
}

// Raw pointers of the caller's arrays, checked against the program's signature. Taken with the GIL held; the arrays
// stay alive in the caller's frame while the GIL is released.
struct Buffers {
  std::vector<const void*> inputs;
  std::vector<void*> outputs;
};

Buffers CheckedBuffers(const std::vector<ArrayInfo>& parameters, const std::vector<ArrayInfo>& results,
                       const std::vector<py::array>& inputs, std::vector<py::array>& outputs) {
  if (inputs.size() != parameters.size() || outputs.size() != results.size()) {
    throw py::value_error("expected " + std::to_string(parameters.size()) + " inputs and " +
                          std::to_string(results.size()) + " outputs, got " + std::to_string(inputs.size()) + " and " +
                          std::to_string(outputs.size()));
  }
  auto check = [](const py::array& a, const ArrayInfo& info, const std::string& what) {
    if (a.nbytes() != info.byte_size() || a.itemsize() != info.element_bytes) {
      throw py::value_error(what + " has " + std::to_string(a.nbytes()) + " bytes of " + std::to_string(a.itemsize()) +
                            "-byte items; " + info.element_type + " needs " + std::to_string(info.byte_size()) +
                            " bytes of " + std::to_string(info.element_bytes) + "-byte items");
    }
    if (!(a.flags() & py::array::c_style) || !(a.flags() & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) {
      throw py::value_error(what + " is not an aligned C-contiguous array");
    }
  };
  Buffers b;
  for (size_t i = 0; i < inputs.size(); ++i) {
    check(inputs[i], parameters[i], "input " + std::to_string(i));
    b.inputs.push_back(inputs[i].data());
  }
  for (size_t j = 0; j < outputs.size(); ++j) {
    check(outputs[j], results[j], "output " + std::to_string(j));
    if (!outputs[j].writeable()) throw py::value_error("output " + std::to_string(j) + " is not writeable");
    b.outputs.push_back(outputs[j].mutable_data());
  }
  return b;
}

// Whether the entry computation returns a tuple (the JIT API only reports the flattened leaves). A second parse of
// text that Executable::Compile has just accepted; only the shape of the root is read.
bool RootIsTuple(const std::string& text, const std::string& source_name) {
  SourceFile file(source_name, text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> module = ParseModuleAnyFormat(file, diags);
  return module != nullptr && module->entry_computation() != nullptr &&
         module->entry_computation()->root()->shape().IsTuple();
}

class PyExecutable {
 public:
  PyExecutable(std::unique_ptr<Executable> exe, bool root_is_tuple)
      : exe_(std::move(exe)), root_is_tuple_(root_is_tuple) {}

  py::list parameters() const { return InfoList(exe_->parameters()); }
  py::list results() const { return InfoList(exe_->results()); }
  bool root_is_tuple() const { return root_is_tuple_; }
  int64_t num_devices() const { return exe_->num_devices(); }
  bool partitioned() const { return exe_->partitioned(); }
  int64_t process_index() const { return exe_->process_index(); }
  int64_t process_count() const { return exe_->process_count(); }
  int64_t local_device_count() const { return exe_->local_device_count(); }
  std::string spmd_report() const { return exe_->spmd_report(); }
  bool cache_hit() const { return exe_->cache_hit(); }
  std::string cache_report() const { return exe_->cache_report(); }

  void Run(const std::vector<py::array>& inputs, std::vector<py::array> outputs) {
    Buffers b = CheckedBuffers(exe_->parameters(), exe_->results(), inputs, outputs);
    absl::Status status;
    {
      py::gil_scoped_release release;
      // Executable::Run is not reentrant; Python threads calling one executable take turns (the lock is taken
      // without the GIL, so a waiting thread never blocks the running one).
      std::lock_guard<std::mutex> lock(mu_);
      status = exe_->Run(b.inputs, b.outputs);
    }
    ThrowIfError(status, /*compiling=*/false);
  }

 private:
  std::unique_ptr<Executable> exe_;
  bool root_is_tuple_;
  std::mutex mu_;
};

// xlac.metrics_report(): every compilation and run of this process, as torch_xla's metrics are process-wide.
Metrics& ProcessMetrics() {
  static Metrics* metrics = new Metrics();  // never destroyed: executables may outlive module teardown
  return *metrics;
}

// xlac.start_trace()/stop_trace(): one process-wide trace, as jax.profiler's.
Tracer& ProcessTracer() {
  static Tracer* tracer = new Tracer();  // never destroyed, as ProcessMetrics
  return *tracer;
}

std::unique_ptr<PyExecutable> Compile(const std::string& text, int opt_level, const std::string& target_cpu,
                                      int64_t num_replicas, int64_t num_partitions, bool partition, bool exact,
                                      int threads, bool tpu_numerics, const std::string& source_name,
                                      const std::string& cache_dir, bool cache_readonly, int64_t cache_max_bytes,
                                      const std::string& dump_to, const std::string& dump_pass_regex, bool mpi,
                                      const std::vector<std::string>& custom_call_identity,
                                      const std::vector<std::string>& custom_call_libs,
                                      const std::vector<std::string>& custom_call_sources) {
  CompileOptions options;
  options.custom_call_identity = custom_call_identity;
  options.custom_call_libs = custom_call_libs;
  options.custom_call_sources = custom_call_sources;
  options.mpi = mpi;
  options.metrics = &ProcessMetrics();
  options.tracer = &ProcessTracer();
  options.dump_to = dump_to;
  options.dump_pass_regex = dump_pass_regex;
  if (!dump_to.empty()) {
    // Each compilation of the process dumps as its own module_NNNN, as XLA numbers them.
    static std::atomic<int64_t> next_module_id{1};
    options.dump_module_id = next_module_id++;
  }
  options.opt_level = opt_level;
  options.target_cpu = target_cpu;
  options.num_replicas = num_replicas;
  options.num_partitions = num_partitions;
  options.partition = partition;
  options.exact = exact;
  options.threads = threads;
  options.tpu_numerics = tpu_numerics;
  options.source_name = source_name;
  options.cache_dir = cache_dir;
  options.cache_readonly = cache_readonly;
  options.cache_max_bytes = cache_max_bytes;
  absl::StatusOr<std::unique_ptr<Executable>> exe;
  bool root_is_tuple = false;
  {
    py::gil_scoped_release release;
    exe = Executable::Compile(text, options);
    if (exe.ok()) root_is_tuple = RootIsTuple(text, source_name);
  }
  if (!exe.ok()) throw StatusError{exe.status(), /*compiling=*/true};
  return std::make_unique<PyExecutable>(*std::move(exe), root_is_tuple);
}

struct InterpretOptions {
  int64_t num_replicas = 0;
  int64_t num_partitions = 0;
  bool partition = true;
  bool tpu_numerics = false;
  uint64_t seed = 42;
  std::vector<std::string> custom_call_identity;  // as CompileOptions::custom_call_identity
  std::vector<std::string> custom_call_libs;      // as CompileOptions::custom_call_libs
  std::vector<std::string> custom_call_sources;   // as CompileOptions::custom_call_sources
};

// A module prepared for the reference interpreter, with the JIT API's conventions: global arrays in and out, a
// sharded module on several partitions partitioned as xla-run does (each device evaluates its shard program), the
// results those of device 0 (partitioned: assembled from replica 0's partitions).
class InterpreterProgram {
 public:
  InterpreterProgram(std::string text, const std::string& source_name, const InterpretOptions& options)
      : text_(std::move(text)), options_(options) {
    absl::Status status;
    {
      py::gil_scoped_release release;
      status = Prepare(source_name);
    }
    ThrowIfError(status, /*compiling=*/true);
  }

  py::list parameters() const { return InfoList(parameters_); }
  py::list results() const { return InfoList(results_); }
  bool root_is_tuple() const { return result_shape_.IsTuple(); }
  bool partitioned() const { return partitioned_; }
  int64_t num_devices() const { return num_devices_; }

  void Run(const std::vector<py::array>& inputs, std::vector<py::array> outputs) {
    Buffers b = CheckedBuffers(parameters_, results_, inputs, outputs);
    absl::Status status;
    {
      py::gil_scoped_release release;
      std::lock_guard<std::mutex> lock(mu_);
      status = Evaluate(b);
    }
    ThrowIfError(status, /*compiling=*/false);
  }

 private:
  // Parse, verification and partitioning errors are InvalidArgument with the rendered diagnostics (PartitionModule
  // reports only text, so unsupported shardings are InvalidArgument here too).
  absl::Status Prepare(const std::string& source_name) {
    SourceFile file(source_name, text_);
    CompilerOptions compiler;
    compiler.num_partitions = options_.num_partitions;
    compiler.num_replicas = options_.num_replicas;
    compiler.custom_call_identity = options_.custom_call_identity;
    DiagnosticEngine diags;
    module_ = LoadModule(file, compiler, diags);
    if (module_ == nullptr) return absl::InvalidArgumentError(diags.Render(file));
    const Computation* entry = module_->entry_computation();
    if (entry == nullptr)
      return absl::InvalidArgumentError(source_name + ": error: the module has no entry computation");
    // C++ kernels: compiled as compile() compiles them, and JIT-compiled for the interpreter, which runs them.
    if (!options_.custom_call_sources.empty()) {
      std::ostringstream err;
      kernels_ = CompileCustomCallKernels(CustomCallKernelOptions{options_.custom_call_sources, "host", /*with_runner=*/true}, err);
      if (kernels_ == nullptr || !BindCustomCallKernels(*kernels_, *module_, file, err)) {
        return absl::InvalidArgumentError(err.str());
      }
    }
    // XLA FFI handler libraries: the same handlers compile() calls, instantiated once for this program.
    if (!options_.custom_call_libs.empty()) {
      absl::StatusOr<std::shared_ptr<const ffi::HandlerLibraries>> libs = LoadCustomCallLibs(options_.custom_call_libs);
      if (!libs.ok()) return libs.status();
      if (!CheckCustomCallLibs(*module_, libs->get(), diags)) return absl::InvalidArgumentError(diags.Render(file));
      custom_call_handler_ = (*libs)->MakeCustomCallHandler(nullptr, source_name);
    }
    for (const Instruction* p : entry->parameters()) {
      if (!p->shape().IsArray()) {
        return absl::UnimplementedError(source_name + ": error: parameter " + std::to_string(parameter_shapes_.size()) +
                                        " is " + ShapeToString(p->shape(), false) +
                                        ", not an array; only array parameters can be passed from Python");
      }
      parameter_shapes_.push_back(p->shape());
      parameters_.push_back(InfoOf(p->shape()));
    }
    result_shape_ = entry->root()->shape();
    result_shape_.ClearLayout();
    FlattenShape(result_shape_, results_);
    if (options_.partition) {
      DiagnosticEngine spmd_diags;
      absl::StatusOr<bool> partitioned = PartitionModule(*module_, compiler, spmd_, spmd_diags);
      if (!partitioned.ok()) return absl::InvalidArgumentError(spmd_diags.Render(file));
      partitioned_ = *partitioned;
    }
    const ModuleConfig& config = module_->config();
    num_partitions_ = options_.num_partitions > 0 ? options_.num_partitions : config.num_partitions;
    num_partitions_ = std::max<int64_t>(num_partitions_, 1);
    const int64_t replicas = options_.num_replicas > 0 ? options_.num_replicas : config.replica_count;
    num_devices_ = std::max<int64_t>(replicas, 1) * num_partitions_;
    return absl::OkStatus();
  }

  absl::Status Evaluate(const Buffers& b) {
    std::vector<Literal> args;
    for (size_t i = 0; i < parameter_shapes_.size(); ++i) {
      Literal lit(parameter_shapes_[i]);
      if (lit.byte_size() > 0) std::memcpy(lit.mutable_raw_data(), b.inputs[i], static_cast<size_t>(lit.byte_size()));
      args.push_back(std::move(lit));
    }
    std::vector<std::vector<Literal>> device_args;
    if (partitioned_) {
      for (int64_t d = 0; d < num_devices_; ++d) {
        std::vector<Literal> shards;
        for (size_t i = 0; i < args.size(); ++i) {
          absl::StatusOr<Literal> shard =
              spmd::ShardLiteral(args[i], spmd_.parameter_shardings[i], d % num_partitions_, num_partitions_);
          if (!shard.ok()) return shard.status();
          shards.push_back(*std::move(shard));
        }
        device_args.push_back(std::move(shards));
      }
    } else {
      device_args.push_back(std::move(args));
    }
    interp::InterpreterOptions options;
    options.num_replicas = options_.num_replicas;
    options.num_partitions = options_.num_partitions;
    options.seed = options_.seed;
    options.tpu_numerics = options_.tpu_numerics;
    options.custom_call_handler = custom_call_handler_;
    if (kernels_ != nullptr) options.elementwise_kernels = kernels_->elementwise();
    absl::StatusOr<std::vector<Literal>> out = interp::Evaluate(*module_, device_args, options);
    if (!out.ok()) return out.status();
    Literal assembled;
    const Literal* result = &(*out)[0];
    if (partitioned_) {
      std::vector<const Literal*> parts;
      for (int64_t p = 0; p < num_partitions_; ++p) parts.push_back(&(*out)[static_cast<size_t>(p)]);
      absl::StatusOr<Literal> global = spmd::AssembleLiteral(parts, spmd_.result_sharding, result_shape_);
      if (!global.ok()) return global.status();
      assembled = *std::move(global);
      result = &assembled;
    }
    std::vector<const Literal*> leaves;
    FlattenLiteral(*result, leaves);
    if (leaves.size() != b.outputs.size()) return absl::InternalError("the interpreter's result leaf count changed");
    for (size_t j = 0; j < leaves.size(); ++j) {
      if (leaves[j]->byte_size() != results_[j].byte_size()) {
        return absl::InternalError("the interpreter's result " + std::to_string(j) + " has an unexpected size");
      }
      if (leaves[j]->byte_size() > 0) {
        std::memcpy(b.outputs[j], leaves[j]->raw_data(), static_cast<size_t>(leaves[j]->byte_size()));
      }
    }
    return absl::OkStatus();
  }

  std::string text_;  // the module's SourceFile views it
  InterpretOptions options_;
  std::unique_ptr<Module> module_;
  std::vector<Shape> parameter_shapes_;
  std::vector<ArrayInfo> parameters_, results_;
  Shape result_shape_;
  bool partitioned_ = false;
  SpmdReport spmd_;
  int64_t num_partitions_ = 1;
  int64_t num_devices_ = 1;
  ffi::CustomCallFn custom_call_handler_;  // custom_call_libs' handlers; empty without libraries
  std::unique_ptr<CustomCallKernels> kernels_;   // custom_call_sources' kernels; null without sources
  std::mutex mu_;
};

}  // namespace
void RegisterSpmd(py::module_& m);  // xlac_spmd_python.cc: xlac.spmd's bindings
}  // namespace xlac

PYBIND11_MODULE(_xlac, m) {
  using namespace xlac;
  m.doc() = "xlac's extension module; use the package `xlac` (docs/python.md).";
  py::module_ errors = py::module_::import("xlac._errors");
  auto cls = [&](const char* name) { return py::object(errors.attr(name)).release(); };
  g_errors = new ErrorClasses{cls("CompileError"), cls("UnimplementedError"), cls("RuntimeError")};
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const StatusError& e) {
      Raise(e);
    }
  });

  py::class_<PyExecutable>(m, "_Executable")
      .def_property_readonly("parameters", &PyExecutable::parameters)
      .def_property_readonly("results", &PyExecutable::results)
      .def_property_readonly("root_is_tuple", &PyExecutable::root_is_tuple)
      .def_property_readonly("num_devices", &PyExecutable::num_devices)
      .def_property_readonly("partitioned", &PyExecutable::partitioned)
      .def_property_readonly("process_index", &PyExecutable::process_index)
      .def_property_readonly("process_count", &PyExecutable::process_count)
      .def_property_readonly("local_device_count", &PyExecutable::local_device_count)
      .def_property_readonly("spmd_report", &PyExecutable::spmd_report)
      .def_property_readonly("cache_hit", &PyExecutable::cache_hit)
      .def_property_readonly("cache_report", &PyExecutable::cache_report)
      .def("run", &PyExecutable::Run, py::arg("inputs"), py::arg("outputs"));

  m.def("compile", &Compile, py::arg("text"), py::arg("opt_level"), py::arg("target_cpu"), py::arg("num_replicas"),
        py::arg("num_partitions"), py::arg("partition"), py::arg("exact"), py::arg("threads"), py::arg("tpu_numerics"),
        py::arg("source_name"), py::arg("cache_dir"), py::arg("cache_readonly"), py::arg("cache_max_bytes"),
        py::arg("dump_to"), py::arg("dump_pass_regex"), py::arg("mpi") = false,
        py::arg("custom_call_identity") = std::vector<std::string>{},
        py::arg("custom_call_libs") = std::vector<std::string>{},
        py::arg("custom_call_sources") = std::vector<std::string>{});
  m.def("mpi_process_index", [] {
    absl::StatusOr<int64_t> index = MpiProcessIndex();
    if (!index.ok()) throw StatusError{index.status(), /*compiling=*/false};
    return *index;
  });
  m.def("mpi_process_count", [] {
    absl::StatusOr<int64_t> count = MpiProcessCount();
    if (!count.ok()) throw StatusError{count.status(), /*compiling=*/false};
    return *count;
  });
  m.def("metrics_report", [] { return ProcessMetrics().Report(); });
  m.def("clear_metrics", [] { ProcessMetrics().Clear(); });
  m.def("start_trace", [] { ProcessTracer().Start(); });
  m.def("stop_trace", [] { return ProcessTracer().Stop(); });
  m.def("trace_active", [] { return ProcessTracer().active(); });

  py::class_<InterpreterProgram>(m, "_InterpreterProgram")
      .def(py::init([](std::string text, const std::string& source_name, int64_t num_replicas, int64_t num_partitions,
                       bool partition, bool tpu_numerics, uint64_t seed, std::vector<std::string> custom_call_identity,
                       std::vector<std::string> custom_call_libs, std::vector<std::string> custom_call_sources) {
             InterpretOptions options{num_replicas,        num_partitions,
                                      partition,           tpu_numerics,
                                      seed,                std::move(custom_call_identity),
                                      std::move(custom_call_libs), std::move(custom_call_sources)};
             return std::make_unique<InterpreterProgram>(std::move(text), source_name, options);
           }),
           py::arg("text"), py::arg("source_name"), py::arg("num_replicas"), py::arg("num_partitions"),
           py::arg("partition"), py::arg("tpu_numerics"), py::arg("seed"),
           py::arg("custom_call_identity") = std::vector<std::string>{},
           py::arg("custom_call_libs") = std::vector<std::string>{},
           py::arg("custom_call_sources") = std::vector<std::string>{})
      .def_property_readonly("parameters", &InterpreterProgram::parameters)
      .def_property_readonly("results", &InterpreterProgram::results)
      .def_property_readonly("root_is_tuple", &InterpreterProgram::root_is_tuple)
      .def_property_readonly("num_devices", &InterpreterProgram::num_devices)
      .def_property_readonly("partitioned", &InterpreterProgram::partitioned)
      .def("run", &InterpreterProgram::Run, py::arg("inputs"), py::arg("outputs"));
  RegisterSpmd(m);
}
