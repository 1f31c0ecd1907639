#include "codegen/jit.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <optional>

#include "absl/strings/str_cat.h"
#include "codegen/custom_call_abi.h"
#include "codegen/jit_symbols.h"
#include "codegen/parallel_programs.h"
#include "codegen/prebuilt_gemms.h"
#include "codegen/result_placement.h"
#include "codegen/streaming_stores.h"
#include "fmt/format.h"
#include "frontend/hlo/printer.h"
#include "ir/diagnostics.h"
#include "ir/status_macros.h"
#include "llvm/ExecutionEngine/Orc/CompileUtils.h"
#include "llvm/ExecutionEngine/Orc/Core.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectTransformLayer.h"
#include "llvm/ExecutionEngine/Orc/ThreadSafeModule.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "passes/verifier.h"
#include "runtime/cpu/sanitizers.h"
#include "runtime/cpu/xlac_runtime.h"
#include "runtime/cpu/xlac_runtime_trace.h"

namespace xlac::codegen {
namespace {

std::string ToString(llvm::Error error) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << error;
  return s;
}

// Element strides of `shape`'s layout per logical dimension.
std::vector<int64_t> PhysicalStrides(const Shape& shape) {
  std::vector<int64_t> order;
  if (shape.layout && shape.layout->minor_to_major.size() == shape.dimensions.size()) {
    order.assign(shape.layout->minor_to_major.begin(), shape.layout->minor_to_major.end());
  } else {
    for (int64_t d = shape.rank(); d-- > 0;) order.push_back(d);
  }
  std::vector<int64_t> strides(shape.dimensions.size(), 1);
  int64_t stride = 1;
  for (int64_t d : order) {
    strides[d] = stride;
    stride *= shape.dimensions[d];
  }
  return strides;
}

// Whether `shape`'s layout is row-major, i.e. its buffer is laid out as the literal payload is.
bool IsRowMajor(const Shape& shape) {
  std::vector<int64_t> strides = PhysicalStrides(shape);
  int64_t stride = 1;
  for (size_t d = strides.size(); d-- > 0;) {
    if (shape.dimensions[d] > 1 && strides[d] != stride) return false;
    stride *= shape.dimensions[d];
  }
  return true;
}

// Copies between a row-major literal payload and a buffer in `shape`'s layout.
void CopyArray(const Shape& shape, const uint8_t* src, uint8_t* dst, bool to_physical) {
  int64_t width = ByteWidth(shape.element_type);
  int64_t n = shape.ElementCount().value_or(0);
  if (IsRowMajor(shape)) {
    if (n > 0) std::memcpy(dst, src, static_cast<size_t>(n * width));
    return;
  }
  std::vector<int64_t> strides = PhysicalStrides(shape);
  std::vector<int64_t> idx(shape.dimensions.size(), 0);
  for (int64_t i = 0; i < n; ++i) {
    int64_t p = 0;
    for (size_t d = 0; d < idx.size(); ++d) p += idx[d] * strides[d];
    if (to_physical) {
      std::memcpy(dst + p * width, src + i * width, static_cast<size_t>(width));
    } else {
      std::memcpy(dst + i * width, src + p * width, static_cast<size_t>(width));
    }
    for (size_t d = idx.size(); d-- > 0;) {
      if (++idx[d] < shape.dimensions[d]) break;
      idx[d] = 0;
    }
  }
}

// Compiled code only reads a parameter that is not donated, and assumes element alignment only: a row-major array
// at `data` can be its buffer, with no copy.
bool ReadInPlace(const Shape& shape, const void* data, int64_t parameter_number,
                 const std::vector<InputOutputAlias>& donations) {
  for (const InputOutputAlias& alias : donations) {
    if (alias.parameter_number == parameter_number) return false;
  }
  return shape.IsArray() && IsRowMajor(shape) && data != nullptr &&
         reinterpret_cast<uintptr_t>(data) % static_cast<uintptr_t>(ByteWidth(shape.element_type)) == 0;
}

const Literal& LeafOf(const Literal& lit, const std::vector<int64_t>& index) {
  const Literal* cur = &lit;
  for (int64_t i : index) cur = &cur->tuple_elements()[static_cast<size_t>(i)];
  return *cur;
}

// A Literal of the array leaf `shape` read from a buffer in its layout.
Literal ReadLeaf(const Shape& shape, const void* buffer) {
  Shape logical = shape;
  logical.ClearLayout();
  Literal lit(logical);
  CopyArray(shape, static_cast<const uint8_t*>(buffer), lit.mutable_raw_data(), /*to_physical=*/false);
  return lit;
}

// A literal of `shape` whose array leaves come from `leaves` (depth first), advancing `next`.
Literal ReadValue(const Shape& shape, void* const* leaves, size_t& next) {
  if (shape.IsTuple()) {
    std::vector<Literal> parts;
    for (const Shape& s : shape.tuple_shapes) parts.push_back(ReadValue(s, leaves, next));
    return Literal::CreateTuple(std::move(parts));
  }
  if (!shape.IsArray()) return Literal(shape);
  return ReadLeaf(shape, leaves[next++]);
}

// Writes the array leaves of `value` into `leaves` (depth first), checking them against `shape`.
absl::Status WriteValue(const Shape& shape, const Literal& value, void* const* leaves, size_t& next,
                        const char* handler = "custom-call") {
  if (shape.IsTuple()) {
    if (!value.is_tuple() || value.tuple_elements().size() != shape.tuple_shapes.size()) {
      return absl::InvalidArgumentError(fmt::format("{} handler returned {}, expected {}", handler,
                                                    ShapeToString(value.shape()), ShapeToString(shape)));
    }
    for (size_t i = 0; i < shape.tuple_shapes.size(); ++i) {
      XLAC_RETURN_IF_ERROR(WriteValue(shape.tuple_shapes[i], value.tuple_elements()[i], leaves, next, handler));
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::OkStatus();
  if (value.is_tuple() || value.shape().element_type != shape.element_type ||
      value.shape().dimensions != shape.dimensions || value.is_unknown()) {
    return absl::InvalidArgumentError(fmt::format("{} handler returned {}, expected {}", handler,
                                                  ShapeToString(value.shape()), ShapeToString(shape)));
  }
  CopyArray(shape, value.raw_data(), static_cast<uint8_t*>(leaves[next++]), /*to_physical=*/true);
  return absl::OkStatus();
}

// What the runtime's custom-call hook needs: the handler and the call sites by the address of the target string
// compiled code passes (codegen/custom_call_abi.h).
struct CustomCalls {
  CustomCallHandler handler;
  std::map<const void*, const Instruction*> sites;
};

// What the runtime's infeed hook needs. Sites (by the address of the site string, codegen/custom_call_abi.h) map to
// the prepared infeed (whose data layout the buffers have) and its original; executions are counted per original
// and device, like the interpreter counts them.
struct Infeeds {
  struct Site {
    const Instruction* prepared;
    size_t origin;  // index into `origins`
  };
  InfeedHandler handler;
  std::unique_ptr<Module> module;  // the module given to Compile, its infeeds tagged with kInfeedOriginAttr
  std::vector<const Instruction*> origins;
  std::map<const void*, Site> sites;
  std::vector<std::vector<uint64_t>> counts;  // [device][origin]; each device thread touches only its own row
};

// Names an infeed's original in the prepared module: inlining copies instructions under new names.
constexpr char kInfeedOriginAttr[] = "_xlac_infeed_origin";

struct AlignedFree {
  void operator()(void* p) const { xlac_rt_free(p); }
};
using Buffer = std::unique_ptr<uint8_t, AlignedFree>;
struct GroupDestroy {
  void operator()(XlacRtGroup* group) const { xlac_rt_group_destroy(group); }
};

}  // namespace

struct JitExecutable::Impl {
  PreparedModule prepared;
  std::unique_ptr<llvm::orc::LLJIT> jit;
  XlacRtEntryFn entry = nullptr;
  std::vector<Shape> parameter_shapes;
  Shape result_shape;
  int64_t replicas = 1, partitions = 1;
  int64_t timeout_ms = 30000;
  int threads = 0;  // JitOptions::threads
  const XlacRtTransport* transport = nullptr;
  int64_t local_begin = 0, local_end = 0;  // the devices this process runs
  std::string llvm_ir;
  std::string cache_log;
  bool cache_hit = false;
  // By allocation: the compiled code writes a result there with streaming stores and assumes a 64-byte aligned
  // base (codegen/streaming_stores.h).
  std::vector<bool> aligned_allocations;
  // Observability: the last run's profile; with trace hooks, each kernel id's (name, opcode) for its slices.
  ExecutionProfile profile;
  bool traced = false;
  std::map<int64_t, std::pair<std::string, std::string>> kernel_names;
  CustomCalls custom_calls;
  Infeeds infeeds;
  // Buffers reused by every Run ([device][allocation]; null for constants and for parameters bound to the caller's
  // memory), allocated when first needed: a fresh buffer per run pays first-touch page faults every time (about
  // 37 ms per 134 MB here). Run is not reentrant, so one set suffices; results are copied out of it.
  std::vector<std::vector<Buffer>> arena;
  // The devices, kept from run to run like the arena: a multiplexed group keeps its devices' stacks, whose pages
  // compiled code (GEMM panels) would otherwise fault in again on every device in every run.
  std::unique_ptr<XlacRtGroup, GroupDestroy> group;

  uint8_t* ArenaBuffer(int64_t device, const Allocation& alloc);
  absl::Status Execute(const std::vector<void* const*>& tables);
  // Reads the group's counters and trace events into `profile` (after a run, before the group is destroyed).
  void CollectProfile(XlacRtGroup* group);
};

namespace {

// Records a handler's error for `inst` on the device (keeping Unimplemented and InvalidArgument apart); returns 1.
int Fail(XlacRtDevice* dev, const Instruction& inst, const absl::Status& status) {
  int code = status.code() == absl::StatusCode::kUnimplemented     ? XLAC_RT_ERROR_UNIMPLEMENTED
             : status.code() == absl::StatusCode::kInvalidArgument ? XLAC_RT_ERROR_INVALID_ARGUMENT
                                                                   : XLAC_RT_ERROR_EXECUTION;
  xlac_rt_set_error_code(dev, code, fmt::format("{}: {}", inst.name(), std::string(status.message())).c_str());
  return 1;
}

// XlacRtCustomCallFn: converts the raw buffers to literals, calls the handler and writes its result back.
int RunCustomCall(void* user, const char* target, const char* /*backend_config*/, void* const* operands, void* result,
                  XlacRtDevice* dev) {
  const auto* calls = static_cast<const CustomCalls*>(user);
  auto site = calls->sites.find(target);
  if (site == calls->sites.end()) {
    xlac_rt_set_error(dev, fmt::format("unsupported custom call target '{}'", target).c_str());
    return 1;
  }
  const Instruction& inst = *site->second;
  std::vector<Literal> values;
  size_t next = 0;
  for (const Instruction* operand : inst.operands()) values.push_back(ReadValue(operand->shape(), operands, next));
  std::vector<const Literal*> pointers;
  for (const Literal& v : values) pointers.push_back(&v);
  absl::StatusOr<Literal> value = calls->handler(inst, pointers);
  absl::Status status = value.status();
  if (status.ok()) {
    void* single = result;
    void* const* leaves = inst.shape().IsArray() ? &single : static_cast<void* const*>(result);
    next = 0;
    status = WriteValue(inst.shape(), *value, leaves, next);
  }
  if (status.ok()) return 0;
  return Fail(dev, inst, status);
}

// XlacRtInfeedFn: asks the handler for the data of this execution and writes it to the infeed's buffers.
int RunInfeed(void* user, const char* site, void* const* leaves, XlacRtDevice* dev) {
  auto* infeeds = static_cast<Infeeds*>(user);
  auto it = infeeds->sites.find(site);
  if (it == infeeds->sites.end()) {
    xlac_rt_set_error(dev, fmt::format("unknown infeed '{}'", site).c_str());
    return 1;
  }
  const Infeeds::Site& s = it->second;
  int64_t device = xlac_rt_device_id(dev);
  uint64_t occurrence = infeeds->counts[static_cast<size_t>(device)][s.origin]++;
  absl::StatusOr<Literal> value = infeeds->handler(*infeeds->origins[s.origin], device, occurrence);
  absl::Status status = value.status();
  if (status.ok()) {
    size_t next = 0;
    status = WriteValue(s.prepared->shape().tuple_shapes.at(0), *value, leaves, next, "infeed");
  }
  if (status.ok()) return 0;
  return Fail(dev, *infeeds->origins[s.origin], status);
}

// Source locations of the original module's custom-calls by name: the prepared clone went through the printer, so
// its own locations point into printed text. Copies made by inlining ("name.3") map to their original.
void RestoreCustomCallLocations(const Module& original, Module& prepared) {
  std::map<std::string, SourceLoc> locs;
  for (const auto& comp : original.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall) locs[inst->name()] = inst->loc();
    }
  }
  for (const auto& comp : prepared.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      std::string name = inst->name();
      auto it = locs.find(name);
      size_t dot = name.rfind('.');
      if (it == locs.end() && dot != std::string::npos) it = locs.find(name.substr(0, dot));
      if (it != locs.end()) inst->set_loc(it->second);
    }
  }
}

// A copy of `module` whose infeeds carry their own name in kInfeedOriginAttr (which inlined copies keep), or null
// when it has none. Fails when there are infeeds but no handler: they could only fail when they run.
absl::StatusOr<std::unique_ptr<Module>> TagInfeeds(const Module& module, bool have_handler) {
  std::unique_ptr<Module> tagged;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kInfeed) continue;
      if (!have_handler) {
        return absl::UnimplementedError(fmt::format(
            "codegen does not support infeed ({}): compiled code needs an infeed handler to supply its data",
            inst->name()));
      }
      if (tagged == nullptr) tagged = module.Clone();
    }
  }
  if (tagged == nullptr) return tagged;
  for (const auto& comp : tagged->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kInfeed)
        inst->mutable_frontend_attributes()->emplace_back(kInfeedOriginAttr, inst->name());
    }
  }
  return tagged;
}

// Maps the infeed call sites of the compiled module to their originals.
absl::Status BindInfeedSites(llvm::orc::LLJIT& jit, const Module& prepared, const std::string& entry_name,
                             Infeeds& infeeds) {
  std::map<std::string, size_t> origin_index;
  for (const auto& comp : infeeds.module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kInfeed) continue;
      origin_index[inst->name()] = infeeds.origins.size();
      infeeds.origins.push_back(inst.get());
    }
  }
  for (const auto& comp : prepared.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kInfeed) continue;
      auto origin = origin_index.end();
      for (const auto& [key, value] : inst->frontend_attributes()) {
        if (key == kInfeedOriginAttr) origin = origin_index.find(value);
      }
      if (origin == origin_index.end())
        return absl::InternalError(fmt::format("infeed {} lost its origin", inst->name()));
      llvm::Expected<llvm::orc::ExecutorAddr> site = jit.lookup(InfeedSiteSymbol(entry_name, inst->unique_id()));
      if (!site) {
        llvm::consumeError(site.takeError());  // not emitted (dead code)
        continue;
      }
      infeeds.sites[site->toPtr<const void*>()] = {inst.get(), origin->second};
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

std::string FormatBytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 40)) return fmt::format("{:.1f} TiB", static_cast<double>(bytes) / (int64_t{1} << 40));
  if (bytes >= (int64_t{1} << 30)) return fmt::format("{:.1f} GiB", static_cast<double>(bytes) / (1 << 30));
  if (bytes >= (int64_t{1} << 20)) return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  return fmt::format("{} bytes", bytes);
}

// Every device gets its own copy of every non-constant allocation on the first run, except the parameters it reads
// in place (ReadInPlace: row-major and not donated). A program that cannot fit is an error now, naming the bytes
// wanted, rather than an allocation failure (or the OOM killer) later.
absl::Status CheckBufferMemory(const Module& module, const BufferAssignment& assignment, int64_t devices,
                               int64_t limit) {
  int64_t per_device = 0;
  const Allocation* largest = nullptr;
  const Computation& entry = *module.entry_computation();
  for (const Allocation& alloc : assignment.allocations()) {
    if (alloc.kind == AllocationKind::kConstant) continue;
    if (alloc.kind == AllocationKind::kParameter && alloc.parameter_number >= 0 &&
        alloc.parameter_number < entry.parameter_count()) {
      const Shape* leaf = entry.parameter(alloc.parameter_number)->shape().Subshape(alloc.parameter_shape_index);
      bool donated = false;
      for (const InputOutputAlias& alias : module.config().input_output_alias) {
        donated |= alias.parameter_number == alloc.parameter_number;
      }
      if (leaf != nullptr && leaf->IsArray() && IsRowMajor(*leaf) && !donated) continue;
    }
    per_device += alloc.size;
    if (largest == nullptr || alloc.size > largest->size) largest = &alloc;
  }
  if (limit < 0) return absl::OkStatus();
  const int64_t available = limit > 0 ? limit : xlac_rt_available_memory();
  if (available < 0 || per_device <= available / std::max<int64_t>(devices, 1)) return absl::OkStatus();
  return absl::ResourceExhaustedError(fmt::format(
      "the program needs {} of buffers ({} device{} x {}; the largest allocation is {}), but only {} of memory is "
      "available",
      FormatBytes(per_device * devices), devices, devices == 1 ? "" : "s", FormatBytes(per_device),
      FormatBytes(largest->size), FormatBytes(available)));
}

}  // namespace

// Temps start zero-filled only on the first run: compiled code defines every value it reads (AOT hosts do not
// clear buffers either).
uint8_t* JitExecutable::Impl::ArenaBuffer(int64_t device, const Allocation& alloc) {
  if (arena.empty()) arena.resize(static_cast<size_t>(replicas * partitions));
  std::vector<Buffer>& buffers = arena[static_cast<size_t>(device)];
  if (buffers.empty()) buffers.resize(prepared.assignment.allocations().size());
  Buffer& buffer = buffers[static_cast<size_t>(alloc.index)];
  if (buffer == nullptr) {
    buffer.reset(
        static_cast<uint8_t*>(xlac_rt_aligned_alloc(static_cast<size_t>(std::max<int64_t>(alloc.size, 1)), 64)));
    if (buffer != nullptr) std::memset(buffer.get(), 0, static_cast<size_t>(alloc.size));
  }
  return buffer.get();
}

void JitExecutable::Impl::CollectProfile(XlacRtGroup* group) {
  profile.traced = traced;
  profile.devices.clear();
  int64_t arena_bytes = 0;
  for (const Allocation& alloc : prepared.assignment.allocations()) {
    if (alloc.constant == nullptr) arena_bytes += alloc.size;
  }
  for (int64_t d = local_begin; d < local_end; ++d) {
    DeviceProfile device;
    device.device = d;
    device.arena_bytes = arena_bytes;
    device.peak_live_bytes = prepared.assignment.peak_live_bytes();
    XlacRtDeviceStats stats;
    if (xlac_rt_group_device_stats(group, d, &stats) == 0) {
      device.kernels = stats.kernels;
      device.kernel_ns = stats.kernel_ns;
      for (int k = 0; k < kNumCollectiveKinds; ++k) {
        const XlacRtCollectiveStats& c = stats.collectives[k];
        device.collectives[static_cast<size_t>(k)] = {c.count, c.bytes_sent, c.bytes_received, c.wait_ns};
      }
    }
    const XlacRtTraceEvent* events = nullptr;
    int64_t count = xlac_rt_group_trace_events(group, d, &events);
    for (int64_t i = 0; i < count; ++i) {
      const XlacRtTraceEvent& e = events[i];
      TraceSlice slice{"", "", e.begin_ns, e.end_ns, e.bytes_sent, e.bytes_received, e.wait_ns};
      if (e.kernel_id >= 0) {
        auto found = kernel_names.find(e.kernel_id);
        slice.name = found != kernel_names.end() ? found->second.first : fmt::format("kernel {}", e.kernel_id);
        slice.category = found != kernel_names.end() ? found->second.second : "kernel";
      } else {
        slice.name = e.name != nullptr ? e.name : CollectiveKindName(e.collective_kind);
        slice.category = "collective";
      }
      device.slices.push_back(std::move(slice));
    }
    profile.devices.push_back(std::move(device));
  }
}

absl::Status JitExecutable::Impl::Execute(const std::vector<void* const*>& tables) {
  const int64_t devices = replicas * partitions;
  XlacRtStatus status;
  if (this->group == nullptr) {
    std::unique_ptr<XlacRtGroup, GroupDestroy> created(xlac_rt_group_create(replicas, partitions, timeout_ms, &status));
    if (created == nullptr) return absl::InternalError(fmt::format("cannot create devices: {}", status.message));
    if (transport != nullptr && xlac_rt_group_set_transport(created.get(), transport, &status) != XLAC_RT_OK) {
      return absl::InvalidArgumentError(status.message);
    }
    this->group = std::move(created);
  }
  XlacRtGroup* group = this->group.get();
  int total = threads > 0 ? threads : xlac_rt_available_cpus();
  int64_t per_device = std::max<int64_t>(1, total / (local_end - local_begin));
  if (per_device > 1) {
    xlac_rt_group_set_thread_pool(group, xlac_rt_shared_thread_pool(static_cast<int>(per_device * devices)));
    xlac_rt_group_set_threads_per_device(group, per_device);
  }
  // More devices than threads (256 emulated cores on 2 CPUs): devices take turns on `total` threads. Not in
  // AddressSanitizer builds: ASan supports swapcontext only partly (possible false positives, and a warning on
  // every process's stderr that tools' outputs would carry); cpu_runtime_multiplexed_test covers the scheduler.
#ifndef XLAC_ASAN
  xlac_rt_group_set_os_threads(group, total);
#endif
  if (custom_calls.handler) xlac_rt_group_set_custom_call_handler(group, &RunCustomCall, &custom_calls);
  if (infeeds.handler) {
    infeeds.counts.assign(static_cast<size_t>(devices), std::vector<uint64_t>(infeeds.origins.size()));
    xlac_rt_group_set_infeed_handler(group, &RunInfeed, &infeeds);
  }
  if (traced) xlac_rt_group_set_tracing(group, 1);
  profile.begin_ns = xlac_rt_now_ns();
  int code = xlac_rt_group_run(group, entry, tables.data(), &status);
  profile.end_ns = xlac_rt_now_ns();
  CollectProfile(group);
  if (code == XLAC_RT_OK) return absl::OkStatus();
  std::string message = status.message;
  switch (code) {
    case XLAC_RT_ERROR_UNIMPLEMENTED:
      return absl::UnimplementedError(message);
    case XLAC_RT_ERROR_DEADLINE_EXCEEDED:
      return absl::DeadlineExceededError(message);
    case XLAC_RT_ERROR_INVALID_ARGUMENT:
      return absl::InvalidArgumentError(message);
    default:
      return absl::InternalError(message);
  }
}

JitExecutable::JitExecutable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
JitExecutable::~JitExecutable() = default;
const std::vector<Shape>& JitExecutable::parameter_shapes() const { return impl_->parameter_shapes; }
const Shape& JitExecutable::result_shape() const { return impl_->result_shape; }
int64_t JitExecutable::num_devices() const { return impl_->replicas * impl_->partitions; }
std::vector<int64_t> JitExecutable::result_donors() const {
  return ResultDonors(impl_->result_shape, impl_->prepared.module->config().input_output_alias);
}
const std::string& JitExecutable::llvm_ir() const { return impl_->llvm_ir; }
const std::string& JitExecutable::cache_log() const { return impl_->cache_log; }
bool JitExecutable::cache_hit() const { return impl_->cache_hit; }
const ExecutionProfile& JitExecutable::last_profile() const { return impl_->profile; }

namespace {

// Everything the object code depends on besides the prepared module's digest (CacheEntry::check).
CacheKeyComponents CacheKey(const Module& module, const JitOptions& options, const TargetInfo& target, int64_t replicas,
                            int64_t partitions) {
  CacheKeyComponents key = CompileCacheKey(module, options.compile, target);
  key.emplace_back("devices", fmt::format("{} replicas x {} partitions", replicas, partitions));
  key.emplace_back("handlers", fmt::format("custom_call={} infeed={}", options.custom_call_handler != nullptr,
                                           options.infeed_handler != nullptr));
  return key;
}

// What a hit rebuilds instead of loading: the prepared module, its buffer assignment and the ids that name the
// custom-call and infeed sites' symbols. The cached object is used only when this matches what it was built from.
std::string PreparedCheck(const PreparedModule& prepared) {
  std::string text = PrintModule(*prepared.module);
  text += prepared.assignment.ToString();
  for (const auto& comp : prepared.module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() == Opcode::kCustomCall || inst->opcode() == Opcode::kInfeed) {
        text += fmt::format("site {} {}\n", inst->name(), inst->unique_id());
      }
    }
  }
  return Sha256Hex(text);
}

}  // namespace

absl::StatusOr<std::unique_ptr<JitExecutable>> JitExecutable::Compile(const Module& module, const JitOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  auto impl = std::make_unique<Impl>();
  XLAC_ASSIGN_OR_RETURN(impl->infeeds.module, TagInfeeds(module, options.infeed_handler != nullptr));
  impl->infeeds.handler = options.infeed_handler;
  CompileOptions compile = options.compile;
  compile.buffers.result_allocations = true;  // RunBuffers binds them to the caller's result buffers
  // With a cache, verification waits for the lookup (CompileOptions::verify_each_pass): about a third of a hit's
  // compile time.
  const bool cached = !options.cache.dir.empty() && !options.keep_llvm_ir;
  if (cached) compile.verify_each_pass = false;
  XLAC_ASSIGN_OR_RETURN(impl->prepared, PrepareModule(impl->infeeds.module ? *impl->infeeds.module : module, compile));
  const Computation* entry = impl->prepared.module->entry_computation();
  for (const Instruction* p : entry->parameters()) impl->parameter_shapes.push_back(p->shape());
  impl->result_shape = entry->root()->shape();
  impl->replicas =
      options.num_replicas > 0 ? options.num_replicas : std::max<int64_t>(1, module.config().replica_count);
  impl->partitions =
      options.num_partitions > 0 ? options.num_partitions : std::max<int64_t>(1, module.config().num_partitions);
  impl->timeout_ms = options.collective_timeout_ms;
  impl->threads = options.threads;
  impl->local_end = impl->replicas * impl->partitions;
  if (options.transport != nullptr) {
    XlacRtTransport t = *options.transport;
    if (t.process_count < 1 || t.process_index < 0 || t.process_index >= t.process_count ||
        impl->local_end % t.process_count != 0) {
      return absl::InvalidArgumentError(
          fmt::format("cannot split {} devices evenly over {} processes", impl->local_end, t.process_count));
    }
    impl->transport = options.transport;
    int64_t per_process = impl->local_end / t.process_count;
    impl->local_begin = t.process_index * per_process;
    impl->local_end = impl->local_begin + per_process;
  }
  impl->custom_calls.handler = options.custom_call_handler;
  // Without a handler a custom-call could only fail when it runs: report it now, as codegen reports other ops.
  if (!options.custom_call_handler) XLAC_RETURN_IF_ERROR(CheckCustomCallsNeedNoHandler(*impl->prepared.module));
  XLAC_RETURN_IF_ERROR(CheckBufferMemory(*impl->prepared.module, impl->prepared.assignment,
                                         impl->local_end - impl->local_begin, options.memory_limit));
  // Codegen resolves collective groups for the device counts the executable runs with.
  impl->prepared.module->mutable_config().replica_count = impl->replicas;
  impl->prepared.module->mutable_config().num_partitions = impl->partitions;
  RestoreCustomCallLocations(module, *impl->prepared.module);
  XLAC_ASSIGN_OR_RETURN(impl->custom_calls.handler, WithBuiltinCustomCalls(*impl->prepared.module, options));

  TargetOptions target_options;
  target_options.cpu = options.compile.target_cpu;
  target_options.opt_level = options.compile.opt_level;
  XLAC_ASSIGN_OR_RETURN(TargetInfo target, ResolveTarget(target_options));
  XLAC_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm,
                        CreateTargetMachine(target, options.compile.opt_level));
  impl->aligned_allocations = ChooseStreamedResults(*impl->prepared.module, impl->prepared.assignment, target.triple,
                                                    CodegenOptionsFor(options.compile, target).streaming_store_bytes)
                                  .allocations;

  llvm::orc::JITTargetMachineBuilder jtmb{llvm::Triple(target.triple)};
  jtmb.setCPU(target.cpu);
  llvm::SubtargetFeatures features(target.features);
  jtmb.addFeatures(features.getFeatures());
  jtmb.setRelocationModel(llvm::Reloc::PIC_);
  jtmb.getOptions().AllowFPOpFusion = llvm::FPOpFusion::Strict;
  jtmb.setCodeGenOptLevel(tm->getOptLevel());

  // With a cache the module is compiled to an object file here, as the JIT's own compile layer would with the same
  // target machine, so the object can be stored; a hit loads the stored object instead.
  std::optional<CompilationCache> cache;
  CacheKeyComponents key;
  std::string check;
  std::unique_ptr<llvm::MemoryBuffer> object;
  if (cached) {
    cache.emplace(options.cache);
    key = CacheKey(module, options, target, impl->replicas, impl->partitions);
    check = PreparedCheck(impl->prepared);
    std::optional<CacheEntry> entry = cache->Lookup(key, impl->cache_log);
    if (entry.has_value() && entry->check == check) {
      impl->cache_log += fmt::format("cache: hit {}\n", cache->EntryPath(key));
      object = llvm::MemoryBuffer::getMemBufferCopy(entry->object, "xlac-cache-entry");
      impl->cache_hit = true;
    } else {
      impl->cache_log += fmt::format("cache: miss {}\n", cache->EntryPath(key));
      if (entry.has_value()) {
        impl->cache_log += "cache: the entry was built from a different prepared module or buffer assignment\n";
      } else {
        impl->cache_log += cache->ExplainMiss(key);
      }
    }
  }
  auto context = std::make_unique<llvm::LLVMContext>();
  std::unique_ptr<llvm::Module> llvm_module;
  if (object == nullptr && cached && options.compile.verify_each_pass) {
    DiagnosticEngine diags;
    if (!VerifyModule(*impl->prepared.module, diags)) {
      return absl::InternalError(
          absl::StrCat("the prepared module failed verification",
                       diags.diagnostics().empty() ? std::string() : ": " + diags.diagnostics().front().message));
    }
  }
  // Without a cache the module's parts are optimized and compiled to objects on several threads
  // (codegen/split_compile.h); a cache stores one object, compiled from the joined module.
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  if (object == nullptr && !cache.has_value()) {
    std::mutex factory_mutex;
    TargetMachineFactory codegen_machine = [&]() -> absl::StatusOr<std::unique_ptr<llvm::TargetMachine>> {
      std::lock_guard<std::mutex> lock(factory_mutex);
      llvm::Expected<std::unique_ptr<llvm::TargetMachine>> machine = jtmb.createTargetMachine();
      if (!machine) return absl::InternalError("cannot create the target machine: " + ToString(machine.takeError()));
      return std::move(*machine);
    };
    XLAC_ASSIGN_OR_RETURN(objects, LowerToObjects(impl->prepared, target, *tm, *context, options.compile,
                                                  codegen_machine, options.keep_llvm_ir ? &impl->llvm_ir : nullptr));
  } else if (object == nullptr) {
    XLAC_ASSIGN_OR_RETURN(llvm_module, LowerToLlvm(impl->prepared, target, *tm, *context, options.compile));
    if (options.keep_llvm_ir) {
      llvm::raw_string_ostream os(impl->llvm_ir);
      llvm_module->print(os, nullptr);
    }
    {
      llvm::Expected<std::unique_ptr<llvm::TargetMachine>> jit_tm = jtmb.createTargetMachine();
      if (!jit_tm) return absl::InternalError("cannot create the target machine: " + ToString(jit_tm.takeError()));
      llvm::orc::SimpleCompiler compiler(**jit_tm);
      std::optional<ScopedPhase> codegen_phase(std::in_place, options.compile.observer, "jit codegen", "jit");
      llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> compiled = compiler(*llvm_module);
      codegen_phase.reset();
      if (!compiled) return absl::InternalError("code generation failed: " + ToString(compiled.takeError()));
      object = std::move(*compiled);
      cache->Store(key, CacheEntry{check, std::string(object->getBuffer())}, impl->cache_log);
    }
  }
  llvm::Expected<std::unique_ptr<llvm::orc::LLJIT>> jit =
      llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(jtmb)).create();
  if (!jit) return absl::InternalError("cannot create the JIT: " + ToString(jit.takeError()));
  impl->jit = std::move(*jit);
  if (CompileObserver* observer = options.compile.observer; observer != nullptr && observer->dumping()) {
    // The object file the JIT links, as the AOT path would write it.
    impl->jit->getObjTransformLayer().setTransform(
        [observer](std::unique_ptr<llvm::MemoryBuffer> buffer) -> llvm::Expected<std::unique_ptr<llvm::MemoryBuffer>> {
          observer->DumpText("o", buffer->getBuffer());
          return std::move(buffer);
        });
  }
  llvm::orc::JITDylib& dylib = impl->jit->getMainJITDylib();
  // libm and the C library come from the process; the runtime's entry points are bound explicitly because a
  // statically linked runtime's symbols are not in the dynamic symbol table.
  auto generator =
      llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(impl->jit->getDataLayout().getGlobalPrefix());
  if (!generator)
    return absl::InternalError("cannot search the process for symbols: " + ToString(generator.takeError()));
  dylib.addGenerator(std::move(*generator));
  llvm::orc::SymbolMap runtime_symbols =
      JitRuntimeSymbols(*impl->jit, options.compile.prebuilt_gemms ? FindPrebuiltGemms(target, *tm) : nullptr);
  if (llvm::Error e = dylib.define(llvm::orc::absoluteSymbols(std::move(runtime_symbols)))) {
    return absl::InternalError("cannot bind runtime symbols: " + ToString(std::move(e)));
  }
  if (object != nullptr) objects.push_back(std::move(object));
  for (std::unique_ptr<llvm::MemoryBuffer>& part : objects) {
    if (llvm::Error e = impl->jit->addObjectFile(std::move(part))) {
      return absl::InternalError("cannot add the object file to the JIT: " + ToString(std::move(e)));
    }
  }
  std::optional<ScopedPhase> link_phase;
  link_phase.emplace(options.compile.observer, "jit link", "jit");
  llvm::Expected<llvm::orc::ExecutorAddr> address = impl->jit->lookup(options.compile.entry_name);
  link_phase.reset();
  if (!address) return absl::InternalError("JIT compilation failed: " + ToString(address.takeError()));
  if (options.compile.trace_kernels) {
    impl->traced = true;
    for (const auto& comp : impl->prepared.module->computations()) {
      for (const auto& inst : comp->instructions()) {
        impl->kernel_names[inst->unique_id()] = {inst->name(), std::string(OpcodeName(inst->opcode()))};
      }
    }
  }
  impl->entry = address->toPtr<XlacRtEntryFn>();
  for (const auto& comp : impl->prepared.module->computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      llvm::Expected<llvm::orc::ExecutorAddr> site =
          impl->jit->lookup(CustomCallSiteSymbol(options.compile.entry_name, inst->unique_id()));
      if (!site) {
        llvm::consumeError(site.takeError());  // not emitted (e.g. "Sharding")
        continue;
      }
      impl->custom_calls.sites[site->toPtr<const void*>()] = inst.get();
    }
  }
  if (impl->infeeds.module) {
    XLAC_RETURN_IF_ERROR(
        BindInfeedSites(*impl->jit, *impl->prepared.module, options.compile.entry_name, impl->infeeds));
  }
  if (cache.has_value()) {
    impl->cache_log +=
        fmt::format("cache: executable ready in {:.1f} ms\n",
                    std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return std::unique_ptr<JitExecutable>(new JitExecutable(std::move(impl)));
}

absl::StatusOr<std::vector<Literal>> JitExecutable::Run(const std::vector<Literal>& args) {
  return RunPerDevice({args});
}

absl::StatusOr<std::vector<Literal>> JitExecutable::RunPerDevice(const std::vector<std::vector<Literal>>& all_args) {
  const BufferAssignment& assignment = impl_->prepared.assignment;
  const std::vector<Shape>& params = impl_->parameter_shapes;
  int64_t devices = impl_->replicas * impl_->partitions;
  if (all_args.size() != 1 && static_cast<int64_t>(all_args.size()) != devices) {
    return absl::InvalidArgumentError(
        fmt::format("expected one argument list or one per device ({}), got {}", devices, all_args.size()));
  }
  for (const std::vector<Literal>& args : all_args) {
    if (args.size() != params.size()) {
      return absl::InvalidArgumentError(fmt::format("expected {} arguments, got {}", params.size(), args.size()));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (!args[i].shape().Compatible(params[i])) {
        return absl::InvalidArgumentError(fmt::format("argument {} has shape {}, expected {}", i,
                                                      ShapeToString(args[i].shape()), ShapeToString(params[i])));
      }
    }
  }
  const std::vector<Allocation>& allocations = assignment.allocations();
  const std::vector<InputOutputAlias>& donations = impl_->prepared.module->config().input_output_alias;
  std::vector<std::vector<void*>> tables(static_cast<size_t>(devices));
  std::vector<void* const*> table_ptrs;
  for (int64_t d = 0; d < devices; ++d) {
    const std::vector<Literal>& args = all_args.size() == 1 ? all_args[0] : all_args[static_cast<size_t>(d)];
    std::vector<void*>& table = tables[d];
    if (d < impl_->local_begin || d >= impl_->local_end) {  // another process runs it
      table_ptrs.push_back(nullptr);
      continue;
    }
    table.assign(allocations.size(), nullptr);
    for (const Allocation& alloc : allocations) {
      if (alloc.kind == AllocationKind::kConstant) continue;
      const Literal* leaf = nullptr;
      const Shape* shape = nullptr;
      if (alloc.kind == AllocationKind::kParameter) {
        shape = params[alloc.parameter_number].Subshape(alloc.parameter_shape_index);
        leaf = &LeafOf(args[alloc.parameter_number], alloc.parameter_shape_index);
        if (leaf->is_unknown()) return absl::InvalidArgumentError("argument literal has no values");
        // Literals are row-major: as in RunBuffers, an argument compiled code only reads is used in place (no copy
        // of every shard into every device's buffers).
        if (ReadInPlace(*shape, leaf->raw_data(), alloc.parameter_number, donations)) {
          table[alloc.index] = const_cast<uint8_t*>(leaf->raw_data());
          continue;
        }
      }
      uint8_t* buffer = impl_->ArenaBuffer(d, alloc);
      if (buffer == nullptr) return absl::ResourceExhaustedError("cannot allocate buffers");
      if (leaf != nullptr) CopyArray(*shape, leaf->raw_data(), buffer, /*to_physical=*/true);
      table[alloc.index] = buffer;
    }
    table_ptrs.push_back(table.data());
  }
  XLAC_RETURN_IF_ERROR(impl_->Execute(table_ptrs));
  impl_->profile.results_in_place = 0;
  // Results: the entry root's array leaves in flattened order.
  std::vector<Literal> results;
  const std::vector<BufferSlice>& slices = assignment.entry_result_slices();
  for (int64_t d = 0; d < devices; ++d) {
    Literal result(impl_->result_shape);
    if (d < impl_->local_begin || d >= impl_->local_end) {
      results.push_back(std::move(result));
      continue;
    }
    size_t next = 0;
    std::function<void(Literal&, const Shape&)> fill = [&](Literal& lit, const Shape& shape) {
      if (shape.IsTuple()) {
        for (size_t i = 0; i < shape.tuple_shapes.size(); ++i)
          fill(lit.mutable_tuple_elements()[i], shape.tuple_shapes[i]);
        return;
      }
      if (!shape.IsArray()) return;
      const BufferSlice& slice = slices.at(next++);
      const Allocation& alloc = allocations[static_cast<size_t>(slice.allocation)];
      if (alloc.kind == AllocationKind::kConstant) {
        const Literal& c = alloc.constant->literal();
        std::memcpy(lit.mutable_raw_data(), c.raw_data(), static_cast<size_t>(lit.byte_size()));
        return;
      }
      const uint8_t* base =
          static_cast<const uint8_t*>(tables[d][static_cast<size_t>(slice.allocation)]) + slice.offset;
      CopyArray(shape, base, lit.mutable_raw_data(), /*to_physical=*/false);
    };
    fill(result, impl_->result_shape);
    results.push_back(std::move(result));
  }
  return results;
}

absl::Status JitExecutable::RunBuffers(const std::vector<const void*>& parameters, const std::vector<void*>& results) {
  const BufferAssignment& assignment = impl_->prepared.assignment;
  const std::vector<Shape>& params = impl_->parameter_shapes;
  if (parameters.size() != params.size()) {
    return absl::InvalidArgumentError(fmt::format("expected {} parameters, got {}", params.size(), parameters.size()));
  }
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].IsArray()) {
      return absl::InvalidArgumentError(fmt::format("parameter {} is not an array", i));
    }
    if (parameters[i] == nullptr && params[i].ByteSizeOf().value_or(0) > 0) {
      return absl::InvalidArgumentError(fmt::format("parameter buffer {} is null", i));
    }
  }
  std::vector<Shape> leaves;
  std::function<void(const Shape&)> flatten = [&](const Shape& shape) {
    if (shape.IsTuple()) {
      for (const Shape& s : shape.tuple_shapes) flatten(s);
    } else if (shape.IsArray()) {
      leaves.push_back(shape);
    }
  };
  flatten(impl_->result_shape);
  if (results.size() != leaves.size()) {
    return absl::InvalidArgumentError(fmt::format("expected {} results, got {}", leaves.size(), results.size()));
  }
  for (size_t j = 0; j < leaves.size(); ++j) {
    if (results[j] == nullptr && leaves[j].ByteSizeOf().value_or(0) > 0) {
      return absl::InvalidArgumentError(fmt::format("result buffer {} is null", j));
    }
  }
  const std::vector<InputOutputAlias>& donations = impl_->prepared.module->config().input_output_alias;
  const std::vector<Allocation>& allocations = assignment.allocations();
  const std::vector<BufferSlice>& slices = assignment.entry_result_slices();
  ResultBuffers program{&allocations, &slices, &impl_->aligned_allocations};
  for (const Shape& p : params) {
    program.param_bytes.push_back(p.ByteSizeOf().value_or(0));
    program.param_row_major.push_back(IsRowMajor(p));
  }
  for (const Shape& leaf : leaves) {
    program.leaf_bytes.push_back(leaf.ByteSizeOf().value_or(0));
    program.leaf_element_bytes.push_back(ByteWidth(leaf.element_type));
    program.leaf_row_major.push_back(IsRowMajor(leaf));
  }
  const ResultPlacement placement = PlaceResults(program, parameters, results);
  const std::vector<bool>& in_place = placement.in_place;
  const int64_t devices = impl_->replicas * impl_->partitions;
  std::vector<std::vector<void*>> tables(static_cast<size_t>(devices));
  std::vector<void* const*> table_ptrs;
  for (int64_t d = 0; d < devices; ++d) {
    std::vector<void*>& table = tables[d];
    if (d < impl_->local_begin || d >= impl_->local_end) {  // another process runs it
      table_ptrs.push_back(nullptr);
      continue;
    }
    table.assign(allocations.size(), nullptr);
    if (d == impl_->local_begin) {
      for (size_t j = 0; j < leaves.size(); ++j) {
        if (!in_place[j]) continue;
        table[static_cast<size_t>(slices[j].allocation)] = results[j];
        // A donated parameter the program updates in the caller's result buffer (both row-major).
        if (const int64_t p = placement.stage_parameter[j]; p >= 0) {
          std::memcpy(results[j], parameters[static_cast<size_t>(p)], static_cast<size_t>(program.leaf_bytes[j]));
        }
      }
    }
    for (const Allocation& alloc : allocations) {
      if (alloc.kind == AllocationKind::kConstant || table[alloc.index] != nullptr) continue;
      if (alloc.kind == AllocationKind::kParameter) {
        const Shape& shape = params[alloc.parameter_number];
        const void* user = parameters[alloc.parameter_number];
        if (ReadInPlace(shape, user, alloc.parameter_number, donations)) {
          table[alloc.index] = const_cast<void*>(user);
          continue;
        }
        uint8_t* staging = impl_->ArenaBuffer(d, alloc);
        if (staging == nullptr) return absl::ResourceExhaustedError("cannot allocate buffers");
        CopyArray(shape, static_cast<const uint8_t*>(user), staging, /*to_physical=*/true);
        table[alloc.index] = staging;
        continue;
      }
      uint8_t* buffer = impl_->ArenaBuffer(d, alloc);
      if (buffer == nullptr) return absl::ResourceExhaustedError("cannot allocate buffers");
      table[alloc.index] = buffer;
    }
    table_ptrs.push_back(table.data());
  }
  XLAC_RETURN_IF_ERROR(impl_->Execute(table_ptrs));
  impl_->profile.results_in_place = std::count(in_place.begin(), in_place.end(), true);
  // The first local device's result leaves (device 0's in one process) not written in place, copied out of the
  // arena: the next run overwrites it.
  for (size_t j = 0; j < leaves.size(); ++j) {
    if (in_place[j]) continue;
    const BufferSlice& slice = slices.at(j);
    const Allocation& alloc = allocations[static_cast<size_t>(slice.allocation)];
    auto* dst = static_cast<uint8_t*>(results[j]);
    if (alloc.kind == AllocationKind::kConstant) {
      const Literal& c = alloc.constant->literal();
      std::memcpy(dst, c.raw_data(), static_cast<size_t>(leaves[j].ByteSizeOf().value_or(0)));
      continue;
    }
    const std::vector<void*>& first = tables[static_cast<size_t>(impl_->local_begin)];
    CopyArray(leaves[j], static_cast<const uint8_t*>(first[static_cast<size_t>(slice.allocation)]) + slice.offset, dst,
              /*to_physical=*/false);
  }
  return absl::OkStatus();
}

}  // namespace xlac::codegen
