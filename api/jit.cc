// The public JIT API (include/xlac/jit.h) over codegen::JitExecutable: translates between users' row-major
// buffers and literals, so nothing of the IR leaks into the header. Sharded modules are SPMD-partitioned here (as
// xla-run does, tools/lib/spmd_driver.cc): Run shards the global parameters and assembles the global results.
#include "xlac/jit.h"

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <mutex>
#include <optional>

#include "codegen/clang/kernel_cache.h"
#include "codegen/jit.h"
#include "codegen/pipeline.h"
#include "codegen/profile.h"
#include "compiler/compiler.h"
#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "frontend/module_input.h"
#include "ir/device_counts.h"
#include "ir/diagnostics.h"
#include "ir/status_macros.h"
#include "ir/tpu_target.h"
#include "passes/annotation_custom_calls.h"
#include "passes/custom_kernels.h"
#include "passes/spmd/literal_sharding.h"
#include "passes/spmd/sharding_propagation.h"
#include "passes/spmd/spmd_partitioner.h"
#include "passes/tpu_memory.h"
#include "passes/verifier.h"
#include "runtime/ffi/ffi_library.h"
#ifdef XLAC_HAVE_MPI
#include "runtime/mpi/xlac_runtime_mpi.h"
#endif

namespace xlac {
namespace {

void Flatten(const Shape& shape, std::vector<Shape>& leaves) {
  if (shape.IsTuple()) {
    for (const Shape& s : shape.tuple_shapes) Flatten(s, leaves);
  } else if (shape.IsArray()) {
    leaves.push_back(shape);
  }
}

void FlattenLiteral(const Literal& lit, std::vector<const Literal*>& leaves) {
  if (lit.is_tuple()) {
    for (const Literal& e : lit.tuple_elements()) FlattenLiteral(e, leaves);
  } else if (lit.shape().IsArray()) {
    leaves.push_back(&lit);
  }
}

ArrayInfo InfoOf(const Shape& shape) {
  ArrayInfo info;
  info.element_type = std::string(PrimitiveTypeName(shape.element_type));
  info.dims = shape.dimensions;
  info.element_bytes = ByteWidth(shape.element_type);
  return info;
}

void FlattenMutable(Literal& lit, std::vector<Literal*>& leaves) {
  if (lit.is_tuple()) {
    for (Literal& e : lit.mutable_tuple_elements()) FlattenMutable(e, leaves);
  } else if (lit.shape().IsArray()) {
    leaves.push_back(&lit);
  }
}

// A zero-filled row-major literal of `shape` and its array leaves as the API describes them.
Literal ResultLiteral(const Shape& shape, std::vector<ArrayInfo>& infos, std::vector<void*>& buffers) {
  Shape logical = shape;
  logical.ClearLayout();
  Literal lit(logical);
  std::vector<Literal*> leaves;
  FlattenMutable(lit, leaves);
  for (Literal* leaf : leaves) {
    infos.push_back(InfoOf(leaf->shape()));
    buffers.push_back(leaf->mutable_raw_data());
  }
  return lit;
}

codegen::CustomCallHandler WrapCustomCallHandler(CustomCallHandler handler) {
  return [handler](const Instruction& inst, const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
    CustomCall call;
    call.target = inst.StringAttr("custom_call_target");
    call.backend_config = inst.backend_config();
    for (const Literal* operand : operands) {
      std::vector<const Literal*> leaves;
      FlattenLiteral(*operand, leaves);
      for (const Literal* leaf : leaves) {
        call.operand_infos.push_back(InfoOf(leaf->shape()));
        call.operands.push_back(leaf->raw_data());
      }
    }
    Literal result = ResultLiteral(inst.shape(), call.result_infos, call.results);
    absl::Status status = handler(call);
    if (!status.ok()) return status;
    return result;
  };
}

codegen::InfeedHandler WrapInfeedHandler(InfeedHandler handler) {
  return [handler](const Instruction& inst, int64_t device_id, uint64_t occurrence) -> absl::StatusOr<Literal> {
    Infeed infeed;
    infeed.name = inst.name();
    infeed.device_id = device_id;
    infeed.occurrence = occurrence;
    const Shape& shape = inst.shape();
    const Shape& data = shape.IsTuple() && !shape.tuple_shapes.empty() ? shape.tuple_shapes[0] : shape;
    Literal result = ResultLiteral(data, infeed.infos, infeed.buffers);
    absl::Status status = handler(infeed);
    if (!status.ok()) return status;
    return result;
  };
}

}  // namespace

int64_t ArrayInfo::byte_size() const {
  int64_t n = element_bytes;
  for (int64_t d : dims) n *= d;
  return n;
}

struct Metrics::Impl {
  codegen::Metrics metrics;
};
Metrics::Metrics() : impl_(std::make_unique<Impl>()) {}
Metrics::~Metrics() = default;
std::string Metrics::Report() const { return impl_->metrics.Report(); }
void Metrics::Clear() { impl_->metrics.Clear(); }

struct Tracer::Impl {
  mutable std::mutex mu;
  bool active = false;
  std::vector<PhaseTiming> phases;
  std::vector<codegen::ExecutionProfile> runs;
};
Tracer::Tracer() : impl_(std::make_unique<Impl>()) {}
Tracer::~Tracer() = default;
void Tracer::Start() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->active = true;
  impl_->phases.clear();
  impl_->runs.clear();
}
std::string Tracer::Stop() {
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->active = false;
  std::string json = codegen::ChromeTraceJson(impl_->phases, impl_->runs);
  impl_->phases.clear();
  impl_->runs.clear();
  return json;
}
bool Tracer::active() const {
  std::lock_guard<std::mutex> lock(impl_->mu);
  return impl_->active;
}

struct Executable::Impl {
  std::unique_ptr<codegen::JitExecutable> jit;
  // Observability: the compilation's observer (kept: the JIT's object dump reports to it), the metrics to record
  // each run into.
  std::unique_ptr<CompileObserver> observer;
  Metrics* metrics = nullptr;
  Tracer* tracer = nullptr;
  std::vector<Shape> parameter_shapes;  // logical (row-major) global shapes
  std::vector<ArrayInfo> parameters, results;
  std::vector<int64_t> result_donors;
  // Partitioned programs: the partitioner's report (parameter and result shardings), the number of partitions and
  // the global (logical) result shape the partitions' shards assemble into.
  bool partitioned = false;
  SpmdReport spmd;
  int64_t num_partitions = 1;
  Shape result_shape;
  int64_t process_index = 0, process_count = 1;  // CompileOptions::mpi
};

namespace {

// CompileOptions::mpi: MPI's transport, initializing MPI on first use (and finalizing it at exit: mpirun reports a
// process that exits without MPI_Finalize as failed). Null with one process.
absl::StatusOr<const XlacRtTransport*> MpiTransport() {
#ifdef XLAC_HAVE_MPI
  static std::once_flag once;
  static XlacRtStatus init{};
  std::call_once(once, [] {
    if (xlac_rt_mpi_init(&init) == XLAC_RT_OK) std::atexit(xlac_rt_mpi_finalize);
  });
  if (init.code != XLAC_RT_OK) return absl::InternalError(std::string("MPI: ") + init.message);
  return xlac_rt_mpi_process_count() > 1 ? xlac_rt_mpi_transport() : nullptr;
#else
  return absl::UnimplementedError("this xlac was built without MPI (XLAC_WITH_MPI, libopenmpi-dev)");
#endif
}

// Partitioned runs over several processes: process 0 gets every device's results (each process sends its own
// devices'; all devices return the same shapes).
absl::Status GatherDeviceResults(int64_t process_index, int64_t process_count, std::vector<Literal>& per_device) {
#ifdef XLAC_HAVE_MPI
  const int64_t per = static_cast<int64_t>(per_device.size()) / process_count;
  auto leaves_of = [&](int64_t d) {
    std::vector<Literal*> leaves;
    std::vector<const Literal*> flat;
    FlattenLiteral(per_device[static_cast<size_t>(d)], flat);
    for (const Literal* leaf : flat) leaves.push_back(const_cast<Literal*>(leaf));
    return leaves;
  };
  std::string local;
  for (int64_t d = process_index * per; d < (process_index + 1) * per; ++d) {
    for (Literal* leaf : leaves_of(d)) {
      local.append(reinterpret_cast<const char*>(leaf->raw_data()), static_cast<size_t>(leaf->byte_size()));
    }
  }
  std::string all(process_index == 0 ? local.size() * static_cast<size_t>(process_count) : 0, '\0');
  XlacRtStatus status{};
  if (xlac_rt_mpi_gather(local.data(), static_cast<int64_t>(local.size()), all.data(), &status) != XLAC_RT_OK) {
    return absl::InternalError(status.message);
  }
  if (process_index != 0) return absl::OkStatus();
  size_t offset = 0;
  for (int64_t d = 0; d < static_cast<int64_t>(per_device.size()); ++d) {
    for (Literal* leaf : leaves_of(d)) {
      const size_t bytes = static_cast<size_t>(leaf->byte_size());
      if (d >= per && bytes > 0) std::memcpy(leaf->mutable_raw_data(), all.data() + offset, bytes);
      offset += bytes;
    }
  }
  return absl::OkStatus();
#else
  return absl::OkStatus();
#endif
}

}  // namespace

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

absl::StatusOr<std::unique_ptr<Executable>> Executable::Compile(std::string_view module_text,
                                                                const CompileOptions& options) {
  // C++ kernels first: Clang's errors come before the module's.
  std::optional<codegen::KernelLibrary> kernels;
  if (!options.custom_call_sources.empty()) {
    XLAC_ASSIGN_OR_RETURN(codegen::TargetInfo target,
                          codegen::ResolveTarget(codegen::TargetOptions{options.target_cpu}));
    std::string log;
    XLAC_ASSIGN_OR_RETURN(
        kernels, codegen::CompileKernelSourcesCached(
                     options.custom_call_sources, target, {},
                     codegen::CacheOptions{options.cache_dir, options.cache_readonly, options.cache_max_bytes}, log));
  }
  SourceFile file(options.source_name, module_text);
  CompilerOptions compiler;
  compiler.num_partitions = options.num_partitions;
  compiler.num_replicas = options.num_replicas;
  compiler.custom_call_identity = options.custom_call_identity;
  auto impl = std::make_unique<Impl>();
  impl->metrics = options.metrics;
  impl->tracer = options.tracer;
  const bool tracing = options.tracer != nullptr && options.tracer->active();
  const bool observing = options.metrics != nullptr || tracing || !options.dump_to.empty();
  absl::Status observer_status;
  DiagnosticEngine diags;
  const int64_t parse_begin = CompileObserver::NowNs();
  std::unique_ptr<Module> module = LoadModule(file, compiler, diags, [&](const Module& parsed) {
    if (!observing) return;
    absl::StatusOr<std::unique_ptr<CompileObserver>> created =
        CompileObserver::Create(DumpOptions{options.dump_to, options.dump_pass_regex, options.dump_module_id},
                                parsed.name(), [](const Module& m) { return PrintModule(m); });
    if (!created.ok()) {
      observer_status = created.status();
      return;
    }
    impl->observer = *std::move(created);
    impl->observer->DumpModule(parsed, "as_parsed.txt");
  });
  if (!observer_status.ok()) return observer_status;
  if (module == nullptr ||
      (kernels.has_value() && !BindCustomKernels(*module, kernels->kernels, diags, nullptr, &file).ok())) {
    if (!diags.has_errors()) diags.Error(SourceLoc{}, "the module does not parse or verify");
    return absl::InvalidArgumentError(diags.Render(file));
  }
  if (impl->observer != nullptr) {
    impl->observer->RecordPhase("parse and verify", "frontend", parse_begin, CompileObserver::NowNs());
  }

  // A TPU target's slice sets the device count unless the options do.
  const TpuChipSpec* tpu = nullptr;
  int64_t tpu_partitions = 0;
  if (!options.tpu.empty()) {
    absl::StatusOr<const TpuChipSpec*> chip = FindTpuChipSpec(options.tpu);
    if (!chip.ok()) return chip.status();
    tpu = *chip;
    const int64_t replicas =
        std::max<int64_t>(1, options.num_replicas > 0 ? options.num_replicas : module->config().replica_count);
    absl::StatusOr<TpuTopology> topology =
        options.tpu_topology.empty()
            ? DefaultTpuTopology(
                  *tpu, replicas * std::max<int64_t>(1, options.num_partitions > 0 ? options.num_partitions
                                                                                   : module->config().num_partitions))
            : ParseTpuTopology(*tpu, options.tpu_topology);
    if (!topology.ok()) return topology.status();
    if (options.num_partitions == 0 && topology->num_devices() % replicas == 0) {
      tpu_partitions = topology->num_devices() / replicas;
    }
    const int64_t partitions = options.num_partitions > 0 ? options.num_partitions : tpu_partitions;
    if (partitions * replicas != topology->num_devices()) {
      return absl::InvalidArgumentError(
          "TPU slice " + topology->ToString() + " has " + std::to_string(topology->num_devices()) + " devices, not " +
          std::to_string(replicas) + " replicas x " + std::to_string(partitions) + " partitions");
    }
  }
  // A sharded module on several partitions is partitioned in place (the parsed module is ours); the API keeps its
  // global parameter and result shapes.
  const int64_t num_partitions = options.num_partitions > 0 ? options.num_partitions
                                 : tpu_partitions > 0       ? tpu_partitions
                                                            : module->config().num_partitions;
  std::vector<Shape> global_parameters;
  if (options.partition && num_partitions > 1 && module->entry_computation() != nullptr && NeedsPartitioning(*module)) {
    const Computation* entry = module->entry_computation();
    for (const Instruction* p : entry->parameters()) global_parameters.push_back(p->shape());
    impl->result_shape = entry->root()->shape();
    impl->result_shape.ClearLayout();
    std::optional<ScopedPhase> phase(std::in_place, impl->observer.get(), "spmd partition", "frontend");
    compiler.num_partitions = num_partitions;
    compiler.optimization.opt_level = options.opt_level;
    compiler.optimization.exact = options.exact;
    compiler.optimization.tpu_numerics = options.tpu_numerics || tpu != nullptr;
    compiler.optimization.observer = impl->observer.get();
    DiagnosticEngine spmd_diags;
    absl::StatusOr<bool> partitioned = PartitionModule(*module, compiler, impl->spmd, spmd_diags);
    phase.reset();
    if (!partitioned.ok()) return absl::Status(partitioned.status().code(), spmd_diags.Render(file));
    impl->partitioned = true;
    impl->num_partitions = num_partitions;
  }
  codegen::JitOptions jit_options;
  jit_options.compile.opt_level = options.opt_level;
  jit_options.compile.target_cpu = options.target_cpu;
  jit_options.compile.exact = options.exact;
  jit_options.threads = options.threads;
  jit_options.compile.tpu_numerics = options.tpu_numerics || tpu != nullptr;
  jit_options.compile.partitioned = impl->partitioned;
  jit_options.num_replicas = options.num_replicas;
  jit_options.num_partitions = options.num_partitions > 0 ? options.num_partitions : tpu_partitions;
  jit_options.cache.dir = options.cache_dir;
  jit_options.cache.readonly = options.cache_readonly;
  jit_options.cache.max_bytes = options.cache_max_bytes;
  jit_options.compile.observer = impl->observer.get();
  jit_options.compile.trace_kernels = tracing;
  if (kernels.has_value()) {
    jit_options.compile.kernel_bitcode = std::make_shared<const std::string>(std::move(kernels->bitcode));
    jit_options.compile.kernel_fingerprint = kernels->fingerprint;
  }
  if (tpu != nullptr) {
    // One core's program must fit its HBM once padded to TPU tiles; checked before compiling.
    absl::StatusOr<codegen::PreparedModule> prepared = codegen::PrepareModule(*module, jit_options.compile);
    if (!prepared.ok()) return prepared.status();
    absl::StatusOr<TpuMemoryReport> report = AnalyzeTpuMemory(*prepared->module, prepared->assignment, *tpu);
    if (!report.ok()) return report.status();
    if (absl::Status fits = CheckTpuMemory(*report); !fits.ok()) return fits;
  }
  if (options.custom_call_handler) {
    jit_options.custom_call_handler = WrapCustomCallHandler(options.custom_call_handler);
  }
  // XLA FFI handler libraries go first; the targets they do not provide stay with the user's handler.
  if (!options.custom_call_libs.empty()) {
    XLAC_ASSIGN_OR_RETURN(std::shared_ptr<const ffi::HandlerLibraries> libs,
                          ffi::HandlerLibraries::Load(options.custom_call_libs));
    const bool user_handler = static_cast<bool>(options.custom_call_handler);
    DiagnosticEngine lib_diags;
    for (const ffi::HandlerLibraries::Missing& m :
         libs->MissingHandlers(*module, [user_handler](std::string_view) { return user_handler; })) {
      lib_diags.Error(m.loc, m.message);
    }
    if (lib_diags.has_errors()) return absl::InvalidArgumentError(lib_diags.Render(file));
    jit_options.custom_call_handler =
        libs->MakeCustomCallHandler(std::move(jit_options.custom_call_handler), options.source_name);
  }
  if (options.infeed_handler) jit_options.infeed_handler = WrapInfeedHandler(options.infeed_handler);
  if (options.mpi) {
    XLAC_ASSIGN_OR_RETURN(jit_options.transport, MpiTransport());
    if (jit_options.transport != nullptr) {
      impl->process_index = jit_options.transport->process_index;
      impl->process_count = jit_options.transport->process_count;
    }
  }
  absl::StatusOr<std::unique_ptr<codegen::JitExecutable>> jit = codegen::JitExecutable::Compile(*module, jit_options);
  if (!jit.ok()) return jit.status();
  impl->jit = *std::move(jit);
  if (impl->observer != nullptr && !impl->observer->status().ok()) return impl->observer->status();
  if (options.metrics != nullptr) {
    // What counts as compiling "the same module" again: the same text with the same code-changing options.
    const std::string options_text =
        fmt::format("{} {} {} {} {} {} {}", options.opt_level, options.target_cpu, options.num_replicas,
                    options.num_partitions, options.partition, options.exact, options.tpu_numerics);
    const size_t hash = std::hash<std::string_view>{}(module_text) ^ std::hash<std::string>{}(options_text)*31;
    options.metrics->impl_->metrics.AddCompile(impl->observer->phases(), impl->jit->cache_hit(),
                                               fmt::format("module '{}' ({:08x})", module->name(), hash & 0xffffffff));
  }
  if (tracing) {
    std::lock_guard<std::mutex> lock(options.tracer->impl_->mu);
    if (options.tracer->impl_->active) {
      const std::vector<PhaseTiming>& phases = impl->observer->phases();
      options.tracer->impl_->phases.insert(options.tracer->impl_->phases.end(), phases.begin(), phases.end());
    }
  }
  for (const Shape& p : impl->partitioned ? global_parameters : impl->jit->parameter_shapes()) {
    if (!p.IsArray()) {
      return absl::UnimplementedError("the JIT API takes array parameters only; parameter shape " +
                                      ShapeToString(p, false) + " is not an array");
    }
    Shape logical = p;
    logical.ClearLayout();
    impl->parameter_shapes.push_back(logical);
    impl->parameters.push_back(InfoOf(logical));
  }
  if (impl->partitioned && impl->spmd.parameter_shardings.size() != impl->parameter_shapes.size()) {
    return absl::InternalError("the partitioner reported " + std::to_string(impl->spmd.parameter_shardings.size()) +
                               " parameter shardings for " + std::to_string(impl->parameter_shapes.size()) +
                               " parameters");
  }
  std::vector<Shape> leaves;
  Flatten(impl->partitioned ? impl->result_shape : impl->jit->result_shape(), leaves);
  for (const Shape& r : leaves) impl->results.push_back(InfoOf(r));
  impl->result_donors = impl->jit->result_donors();
  impl->result_donors.resize(impl->results.size(), -1);
  return std::unique_ptr<Executable>(new Executable(std::move(impl)));
}

const std::vector<ArrayInfo>& Executable::parameters() const { return impl_->parameters; }
const std::vector<ArrayInfo>& Executable::results() const { return impl_->results; }
const std::vector<int64_t>& Executable::result_donors() const { return impl_->result_donors; }
int64_t Executable::num_devices() const { return impl_->jit->num_devices(); }
absl::StatusOr<int64_t> MpiProcessIndex() {
  XLAC_ASSIGN_OR_RETURN(const XlacRtTransport* transport, MpiTransport());
  return transport != nullptr ? transport->process_index : 0;
}
absl::StatusOr<int64_t> MpiProcessCount() {
  XLAC_ASSIGN_OR_RETURN(const XlacRtTransport* transport, MpiTransport());
  return transport != nullptr ? transport->process_count : 1;
}

bool Executable::partitioned() const { return impl_->partitioned; }
int64_t Executable::local_device_count() const { return impl_->jit->num_devices() / impl_->process_count; }
int64_t Executable::process_index() const { return impl_->process_index; }
int64_t Executable::process_count() const { return impl_->process_count; }
std::string Executable::spmd_report() const { return impl_->partitioned ? FormatSpmdReport(impl_->spmd) : ""; }
bool Executable::cache_hit() const { return impl_->jit->cache_hit(); }
std::string Executable::cache_report() const { return impl_->jit->cache_log(); }

absl::Status Executable::Run(const std::vector<const void*>& parameters, const std::vector<void*>& results) {
  absl::Status status = RunUnrecorded(parameters, results);
  if (status.ok() && impl_->metrics != nullptr) impl_->metrics->impl_->metrics.AddExecution(impl_->jit->last_profile());
  if (status.ok() && impl_->tracer != nullptr) {
    std::lock_guard<std::mutex> lock(impl_->tracer->impl_->mu);
    if (impl_->tracer->impl_->active) impl_->tracer->impl_->runs.push_back(impl_->jit->last_profile());
  }
  return status;
}

absl::Status Executable::RunUnrecorded(const std::vector<const void*>& parameters, const std::vector<void*>& results) {
  if (parameters.size() != impl_->parameters.size()) {
    return absl::InvalidArgumentError("expected " + std::to_string(impl_->parameters.size()) +
                                      " parameter buffers, got " + std::to_string(parameters.size()));
  }
  if (results.size() != impl_->results.size()) {
    return absl::InvalidArgumentError("expected " + std::to_string(impl_->results.size()) + " result buffers, got " +
                                      std::to_string(results.size()));
  }
  if (!impl_->partitioned) {
    // Straight between the caller's buffers and the executable's reused arena: no literals, no fresh pages.
    return impl_->jit->RunBuffers(parameters, results);
  }
  std::vector<Literal> args;
  args.reserve(parameters.size());
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr && impl_->parameters[i].byte_size() > 0) {
      return absl::InvalidArgumentError("parameter buffer " + std::to_string(i) + " is null");
    }
    Literal lit(impl_->parameter_shapes[i]);
    if (impl_->parameters[i].byte_size() > 0) {
      std::memcpy(lit.mutable_raw_data(), parameters[i], static_cast<size_t>(impl_->parameters[i].byte_size()));
    }
    args.push_back(std::move(lit));
  }
  absl::StatusOr<std::vector<Literal>> out;
  Literal assembled;
  {
    // Device d = replica * num_partitions + partition runs on its partition's shards; every replica gets the same.
    const int64_t partitions = impl_->num_partitions;
    std::vector<std::vector<Literal>> device_args(static_cast<size_t>(impl_->jit->num_devices()));
    for (size_t d = 0; d < device_args.size(); ++d) {
      for (size_t i = 0; i < args.size(); ++i) {
        absl::StatusOr<Literal> shard = spmd::ShardLiteral(args[i], impl_->spmd.parameter_shardings[i],
                                                           static_cast<int64_t>(d) % partitions, partitions);
        if (!shard.ok()) return shard.status();
        device_args[d].push_back(*std::move(shard));
      }
    }
    out = impl_->jit->RunPerDevice(device_args);
    if (!out.ok()) return out.status();
    if (impl_->process_count > 1) {
      XLAC_RETURN_IF_ERROR(GatherDeviceResults(impl_->process_index, impl_->process_count, *out));
      if (impl_->process_index != 0) return absl::OkStatus();
    }
    std::vector<const Literal*> parts;
    for (int64_t p = 0; p < partitions; ++p) parts.push_back(&(*out)[static_cast<size_t>(p)]);
    absl::StatusOr<Literal> global = spmd::AssembleLiteral(parts, impl_->spmd.result_sharding, impl_->result_shape);
    if (!global.ok()) return global.status();
    assembled = *std::move(global);
  }
  std::vector<const Literal*> leaves;
  FlattenLiteral(assembled, leaves);
  if (leaves.size() != results.size()) return absl::InternalError("result leaf count changed");
  for (size_t j = 0; j < results.size(); ++j) {
    int64_t bytes = impl_->results[j].byte_size();
    if (bytes == 0) continue;
    if (results[j] == nullptr) return absl::InvalidArgumentError("result buffer " + std::to_string(j) + " is null");
    std::memcpy(results[j], leaves[j]->raw_data(), static_cast<size_t>(bytes));
  }
  return absl::OkStatus();
}

}  // namespace xlac
