#include "runtime/ffi/ffi_library.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "runtime/ffi/ffi_attributes.h"

// The opaque types of the C API, defined by the runtime that implements it.
struct XLA_FFI_Error {
  XLA_FFI_Error_Code code = XLA_FFI_Error_Code_UNKNOWN;
  std::string message;
};

struct XLA_FFI_Future {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  XLA_FFI_Error* error = nullptr;  // owned once set
};

namespace xlac::ffi {
namespace {

// absl 20220623's StrCat takes absl::string_view, which is not std::string_view: concatenate by hand.
template <typename... Ts>
std::string Cat(const Ts&... parts) {
  std::string out;
  (
      [&] {
        if constexpr (std::is_arithmetic_v<Ts>) {
          out += std::to_string(parts);
        } else if constexpr (std::is_same_v<Ts, absl::string_view>) {
          out.append(parts.data(), parts.size());
        } else {
          out += std::string_view(parts);
        }
      }(),
      ...);
  return out;
}

// The instantiate stage's state of one call site (XLA_FFI_State_Set / _Get).
struct CallSiteState {
  int64_t type_id = 0;
  void* state = nullptr;
  void (*deleter)(void*) = nullptr;
  ~CallSiteState() {
    if (state != nullptr && deleter != nullptr) deleter(state);
  }
};

}  // namespace
}  // namespace xlac::ffi

struct XLA_FFI_ExecutionContext {
  xlac::ffi::CallSiteState* site = nullptr;
  XLA_FFI_ExecutionStage stage = XLA_FFI_ExecutionStage_EXECUTE;
};

namespace xlac::ffi {
namespace {

XLA_FFI_Error* MakeError(XLA_FFI_Error_Code code, std::string message) {
  return new XLA_FFI_Error{code, std::move(message)};
}

// ---- The API functions -------------------------------------------------------------------------------------------

XLA_FFI_Error* ErrorCreate(XLA_FFI_Error_Create_Args* args) {
  return MakeError(args->errc, args->message != nullptr ? args->message : "");
}

void ErrorGetMessage(XLA_FFI_Error_GetMessage_Args* args) {
  args->message = args->error != nullptr ? args->error->message.c_str() : "";
}

void ErrorDestroy(XLA_FFI_Error_Destroy_Args* args) { delete args->error; }

XLA_FFI_Error* HandlerRegister(XLA_FFI_Handler_Register_Args* args) {
  return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                   Cat("xlac does not take handler registrations ('", std::string_view(args->name.ptr, args->name.len),
                       "'): it finds handlers as exported symbols of --custom-call-lib libraries "
                       "(docs/custom_calls.md)"));
}

XLA_FFI_Error* StreamGet(XLA_FFI_Stream_Get_Args* args) {
  args->stream = nullptr;
  return MakeError(XLA_FFI_Error_Code_UNIMPLEMENTED,
                   "xlac runs FFI handlers on the host: there is no device stream (XLA_FFI_Stream_Get)");
}

// Type ids are process-wide, as in XLA: a handler library registers its types once and keeps the ids.
struct TypeRegistry {
  std::mutex mu;
  absl::flat_hash_map<std::string, int64_t> ids;
  int64_t next = 1;
};
TypeRegistry& Types() {
  static TypeRegistry* registry = new TypeRegistry();  // never destroyed: handlers may register during exit
  return *registry;
}

XLA_FFI_Error* TypeIdRegister(XLA_FFI_TypeId_Register_Args* args) {
  TypeRegistry& types = Types();
  std::lock_guard<std::mutex> lock(types.mu);
  std::string name(args->name.ptr, args->name.len);
  auto it = types.ids.find(name);
  if (it != types.ids.end()) {
    if (args->type_id->type_id != 0 && args->type_id->type_id != it->second) {
      return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                       Cat("type '", name, "' is registered with id ", it->second, ", not ", args->type_id->type_id));
    }
    args->type_id->type_id = it->second;
    return nullptr;
  }
  if (args->type_id->type_id == 0) {
    args->type_id->type_id = types.next++;
  } else {
    for (const auto& [other, id] : types.ids) {
      if (id == args->type_id->type_id) {
        return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                         Cat("type id ", id, " of '", name, "' is already taken by '", other, "'"));
      }
    }
    types.next = std::max(types.next, args->type_id->type_id + 1);
  }
  types.ids.emplace(std::move(name), args->type_id->type_id);
  return nullptr;
}

XLA_FFI_Error* ExecutionContextGet(XLA_FFI_ExecutionContext_Get_Args* args) {
  args->data = nullptr;
  return MakeError(XLA_FFI_Error_Code_NOT_FOUND, Cat("xlac passes no user data in the execution context (type id ",
                                                     args->type_id != nullptr ? args->type_id->type_id : 0, ")"));
}

// The state of a call site is set while it instantiates (the instantiating thread holds the site) and only read
// afterwards, so neither function locks.
XLA_FFI_Error* StateSet(XLA_FFI_State_Set_Args* args) {
  if (args->ctx == nullptr || args->ctx->site == nullptr) {
    return MakeError(XLA_FFI_Error_Code_FAILED_PRECONDITION, "XLA_FFI_State_Set outside a call");
  }
  if (args->ctx->stage != XLA_FFI_ExecutionStage_INSTANTIATE) {
    return MakeError(XLA_FFI_Error_Code_FAILED_PRECONDITION, "state can only be set in the instantiate stage");
  }
  CallSiteState& site = *args->ctx->site;
  if (site.state != nullptr) return MakeError(XLA_FFI_Error_Code_ALREADY_EXISTS, "state is already set");
  site.type_id = args->type_id != nullptr ? args->type_id->type_id : 0;
  site.state = args->state;
  site.deleter = args->deleter;
  return nullptr;
}

XLA_FFI_Error* StateGet(XLA_FFI_State_Get_Args* args) {
  args->state = nullptr;
  if (args->ctx == nullptr || args->ctx->site == nullptr || args->ctx->site->state == nullptr) {
    return MakeError(XLA_FFI_Error_Code_NOT_FOUND, "no state was set for this call site");
  }
  const CallSiteState& site = *args->ctx->site;
  if (args->type_id != nullptr && args->type_id->type_id != site.type_id) {
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT,
                     Cat("the state has type id ", site.type_id, ", not ", args->type_id->type_id));
  }
  args->state = site.state;
  return nullptr;
}

// Device memory is host memory.
XLA_FFI_Error* DeviceMemoryAllocate(XLA_FFI_DeviceMemory_Allocate_Args* args) {
  size_t alignment = std::max<size_t>(args->alignment, alignof(std::max_align_t));
  if ((alignment & (alignment - 1)) != 0) {
    args->data = nullptr;
    return MakeError(XLA_FFI_Error_Code_INVALID_ARGUMENT, Cat("alignment ", args->alignment, " is not a power of two"));
  }
  const size_t size = (std::max<size_t>(args->size, 1) + alignment - 1) / alignment * alignment;
  args->data = std::aligned_alloc(alignment, size);
  if (args->data == nullptr) {
    return MakeError(XLA_FFI_Error_Code_RESOURCE_EXHAUSTED, Cat("cannot allocate ", args->size, " bytes"));
  }
  return nullptr;
}

XLA_FFI_Error* DeviceMemoryFree(XLA_FFI_DeviceMemory_Free_Args* args) {
  std::free(args->data);
  return nullptr;
}

// XLA's contract lets a task run on the caller's thread; the caller is a device thread that the runtime's loops
// already share the pool with, so running inline never oversubscribes the machine.
XLA_FFI_Error* ThreadPoolSchedule(XLA_FFI_ThreadPool_Schedule_Args* args) {
  if (args->task != nullptr) args->task(args->data);
  return nullptr;
}

XLA_FFI_Error* ThreadPoolNumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args) {
  if (args->num_threads != nullptr) *args->num_threads = 1;
  return nullptr;
}

XLA_FFI_Error* FutureCreate(XLA_FFI_Future_Create_Args* args) {
  args->future = new XLA_FFI_Future();
  return nullptr;
}

// The waiter destroys the future as soon as it sees it done, so the setter notifies while it still holds the lock:
// once the waiter can take the lock, the setter no longer touches the condition variable.
XLA_FFI_Error* FutureSetAvailable(XLA_FFI_Future_SetAvailable_Args* args) {
  std::lock_guard<std::mutex> lock(args->future->mu);
  args->future->done = true;
  args->future->cv.notify_all();
  return nullptr;
}

XLA_FFI_Error* FutureSetError(XLA_FFI_Future_SetError_Args* args) {
  std::lock_guard<std::mutex> lock(args->future->mu);
  args->future->error = args->error;
  args->future->done = true;
  args->future->cv.notify_all();
  return nullptr;
}

// One logical execution as XLA defines it spans devices and modules; xlac has no such notion to report.
XLA_FFI_Error* RunIdGet(XLA_FFI_RunId_Get_Args* args) {
  args->run_id = 0;
  return nullptr;
}

XLA_FFI_Api MakeApi() {
  XLA_FFI_Api api{};
  api.struct_size = XLA_FFI_Api_STRUCT_SIZE;
  api.api_version = XLA_FFI_Api_Version{XLA_FFI_Api_Version_STRUCT_SIZE, nullptr, XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR};
  api.XLA_FFI_Error_Create = ErrorCreate;
  api.XLA_FFI_Error_GetMessage = ErrorGetMessage;
  api.XLA_FFI_Error_Destroy = ErrorDestroy;
  api.XLA_FFI_Handler_Register = HandlerRegister;
  api.XLA_FFI_Stream_Get = StreamGet;
  api.XLA_FFI_TypeId_Register = TypeIdRegister;
  api.XLA_FFI_ExecutionContext_Get = ExecutionContextGet;
  api.XLA_FFI_State_Set = StateSet;
  api.XLA_FFI_State_Get = StateGet;
  api.XLA_FFI_DeviceMemory_Allocate = DeviceMemoryAllocate;
  api.XLA_FFI_DeviceMemory_Free = DeviceMemoryFree;
  api.XLA_FFI_ThreadPool_Schedule = ThreadPoolSchedule;
  api.XLA_FFI_ThreadPool_NumThreads = ThreadPoolNumThreads;
  api.XLA_FFI_Future_Create = FutureCreate;
  api.XLA_FFI_Future_SetAvailable = FutureSetAvailable;
  api.XLA_FFI_Future_SetError = FutureSetError;
  api.XLA_FFI_RunId_Get = RunIdGet;
  return api;
}

// ---- Call frames -------------------------------------------------------------------------------------------------

std::optional<XLA_FFI_DataType> FfiDataType(PrimitiveType type) {
  switch (type) {
    case PrimitiveType::kPred:
      return XLA_FFI_DataType_PRED;
    case PrimitiveType::kS8:
      return XLA_FFI_DataType_S8;
    case PrimitiveType::kS16:
      return XLA_FFI_DataType_S16;
    case PrimitiveType::kS32:
      return XLA_FFI_DataType_S32;
    case PrimitiveType::kS64:
      return XLA_FFI_DataType_S64;
    case PrimitiveType::kU8:
      return XLA_FFI_DataType_U8;
    case PrimitiveType::kU16:
      return XLA_FFI_DataType_U16;
    case PrimitiveType::kU32:
      return XLA_FFI_DataType_U32;
    case PrimitiveType::kU64:
      return XLA_FFI_DataType_U64;
    case PrimitiveType::kF16:
      return XLA_FFI_DataType_F16;
    case PrimitiveType::kBF16:
      return XLA_FFI_DataType_BF16;
    case PrimitiveType::kF32:
      return XLA_FFI_DataType_F32;
    case PrimitiveType::kF64:
      return XLA_FFI_DataType_F64;
    case PrimitiveType::kC64:
      return XLA_FFI_DataType_C64;
    case PrimitiveType::kC128:
      return XLA_FFI_DataType_C128;
    case PrimitiveType::kToken:
      return XLA_FFI_DataType_TOKEN;
    case PrimitiveType::kF8E5M2:
      return XLA_FFI_DataType_F8E5M2;
    case PrimitiveType::kF8E3M4:
      return XLA_FFI_DataType_F8E3M4;
    case PrimitiveType::kF8E4M3:
      return XLA_FFI_DataType_F8E4M3;
    case PrimitiveType::kF8E4M3FN:
      return XLA_FFI_DataType_F8E4M3FN;
    case PrimitiveType::kF8E4M3B11FNUZ:
      return XLA_FFI_DataType_F8E4M3B11FNUZ;
    case PrimitiveType::kF8E5M2FNUZ:
      return XLA_FFI_DataType_F8E5M2FNUZ;
    case PrimitiveType::kF8E4M3FNUZ:
      return XLA_FFI_DataType_F8E4M3FNUZ;
    case PrimitiveType::kF8E8M0FNU:
      return XLA_FFI_DataType_F8E8M0FNU;
    // Sub-byte types: xlac's literals keep one element per byte where XLA packs them, so a handler would misread
    // them; refused rather than passed in the wrong layout.
    default:
      return std::nullopt;
  }
}

// The buffers of one side (arguments or results) of a call frame. Sized before pointers into it are taken.
struct FrameSide {
  std::vector<XLA_FFI_Buffer> buffers;
  std::vector<std::vector<int64_t>> dims;
  std::vector<int32_t> types;  // XLA_FFI_ArgType / XLA_FFI_RetType (both BUFFER = 1)
  std::vector<void*> pointers;

  absl::Status Add(const Shape& shape, void* data) {
    if (shape.IsTuple()) return absl::InternalError("tuple leaf expected");
    std::optional<XLA_FFI_DataType> dtype = FfiDataType(shape.element_type);
    if (!dtype) {
      return absl::UnimplementedError(
          Cat("element type ", PrimitiveTypeName(shape.element_type), " cannot be passed to an XLA FFI handler"));
    }
    XLA_FFI_Buffer b{};
    b.struct_size = XLA_FFI_Buffer_STRUCT_SIZE;
    b.dtype = *dtype;
    b.data = shape.IsToken() ? nullptr : data;
    buffers.push_back(b);
    dims.push_back(shape.IsToken() ? std::vector<int64_t>{} : shape.dimensions);
    return absl::OkStatus();
  }
  // Fixes the pointers once every buffer is in.
  void Finish() {
    types.assign(buffers.size(), 1);
    pointers.resize(buffers.size());
    for (size_t i = 0; i < buffers.size(); ++i) {
      buffers[i].rank = static_cast<int64_t>(dims[i].size());
      buffers[i].dims = dims[i].data();
      pointers[i] = &buffers[i];
    }
  }
};

absl::Status AddOperand(FrameSide& side, const Literal& literal) {
  if (literal.is_tuple()) {
    for (const Literal& e : literal.tuple_elements()) {
      if (absl::Status s = AddOperand(side, e); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (literal.is_unknown()) return absl::InvalidArgumentError("an operand has no value");
  // Handlers take non-const buffers in the C ABI; operands are only read.
  return side.Add(literal.shape(), const_cast<uint8_t*>(literal.raw_data()));
}

absl::Status AddResult(FrameSide& side, Literal& literal) {
  if (literal.is_tuple()) {
    for (Literal& e : literal.mutable_tuple_elements()) {
      if (absl::Status s = AddResult(side, e); !s.ok()) return s;
    }
    return absl::OkStatus();
  }
  return side.Add(literal.shape(), literal.mutable_raw_data());
}

// "custom call 'NAME' (target 'T') at FILE:LINE:COL": how every message about one call names it.
std::string DescribeCall(const Instruction& inst, std::string_view source_name) {
  std::string where;
  if (inst.loc().known()) {
    where = Cat(" at ", source_name.empty() ? "<module>" : source_name, ":", inst.loc().line, ":", inst.loc().col);
  }
  return Cat("custom call '", inst.name(), "' (target '", inst.StringAttr("custom_call_target"), "')", where);
}

// One call site's instantiation and state, owned by the handler function of one executable.
struct CallSite {
  std::mutex mu;
  bool instantiated = false;
  absl::Status status;  // of parsing the attributes and instantiating
  std::unique_ptr<EncodedFfiAttrs> attrs;
  CallSiteState state;
};

XLA_FFI_CallFrame MakeFrame(XLA_FFI_ExecutionContext* ctx, const XLA_FFI_Attrs& attrs) {
  XLA_FFI_CallFrame frame{};
  frame.struct_size = XLA_FFI_CallFrame_STRUCT_SIZE;
  frame.api = HostFfiApi();
  frame.ctx = ctx;
  frame.args.struct_size = XLA_FFI_Args_STRUCT_SIZE;
  frame.rets.struct_size = XLA_FFI_Rets_STRUCT_SIZE;
  frame.attrs = attrs;
  return frame;
}

// Calls one stage's handler; waits for the future of an asynchronous one.
absl::Status CallStage(XLA_FFI_Handler* handler, XLA_FFI_CallFrame& frame) {
  frame.future = nullptr;
  XLA_FFI_Error* error = handler(&frame);
  if (error == nullptr && frame.future != nullptr) {
    XLA_FFI_Future* future = frame.future;
    {
      std::unique_lock<std::mutex> lock(future->mu);
      future->cv.wait(lock, [future] { return future->done; });
      error = future->error;
    }
    delete future;
  }
  return ConsumeFfiError(error);
}

const char* StageName(XLA_FFI_ExecutionStage stage) {
  switch (stage) {
    case XLA_FFI_ExecutionStage_INSTANTIATE:
      return "instantiate";
    case XLA_FFI_ExecutionStage_PREPARE:
      return "prepare";
    case XLA_FFI_ExecutionStage_INITIALIZE:
      return "initialize";
    default:
      return "execute";
  }
}

absl::Status Annotate(const absl::Status& status, const Instruction& inst, std::string_view source_name,
                      XLA_FFI_ExecutionStage stage) {
  std::string stage_note = stage == XLA_FFI_ExecutionStage_EXECUTE ? "" : Cat(" in the ", StageName(stage), " stage");
  return absl::Status(status.code(),
                      Cat(DescribeCall(inst, source_name), " failed", stage_note, ": ", status.message()));
}

absl::Status Instantiate(const FfiHandler& handler, CallSite& site, const Instruction& inst,
                         std::string_view source_name) {
  absl::StatusOr<FfiAttrMap> map = ParseFfiAttributes(inst.backend_config());
  if (!map.ok()) {
    return absl::InvalidArgumentError(
        Cat(DescribeCall(inst, source_name), " has an invalid backend_config: ", map.status().message()));
  }
  site.attrs = std::make_unique<EncodedFfiAttrs>(*std::move(map));
  if (handler.bundle.instantiate == nullptr) return absl::OkStatus();
  XLA_FFI_ExecutionContext ctx{&site.state, XLA_FFI_ExecutionStage_INSTANTIATE};
  XLA_FFI_CallFrame frame = MakeFrame(&ctx, site.attrs->attrs());
  frame.stage = XLA_FFI_ExecutionStage_INSTANTIATE;
  absl::Status status = CallStage(handler.bundle.instantiate, frame);
  if (!status.ok()) return Annotate(status, inst, source_name, XLA_FFI_ExecutionStage_INSTANTIATE);
  return absl::OkStatus();
}

absl::StatusOr<Literal> Execute(const FfiHandler& handler, CallSite& site, const Instruction& inst,
                                const std::vector<const Literal*>& operands, std::string_view source_name) {
  {
    std::lock_guard<std::mutex> lock(site.mu);
    if (!site.instantiated) {
      site.status = Instantiate(handler, site, inst, source_name);
      site.instantiated = true;
    }
    if (!site.status.ok()) return site.status;
  }
  FrameSide args, rets;
  for (const Literal* operand : operands) {
    if (absl::Status s = AddOperand(args, *operand); !s.ok()) {
      return absl::Status(s.code(), Cat(DescribeCall(inst, source_name), ": ", s.message()));
    }
  }
  Shape result_shape = inst.shape();
  result_shape.ClearLayout();  // results are dense row-major, as the executors read them
  Literal result(result_shape);
  if (absl::Status s = AddResult(rets, result); !s.ok()) {
    return absl::Status(s.code(), Cat(DescribeCall(inst, source_name), ": ", s.message()));
  }
  args.Finish();
  rets.Finish();
  XLA_FFI_ExecutionContext ctx{&site.state, XLA_FFI_ExecutionStage_EXECUTE};
  XLA_FFI_CallFrame frame = MakeFrame(&ctx, site.attrs->attrs());
  frame.args.size = static_cast<int64_t>(args.buffers.size());
  frame.args.types = reinterpret_cast<XLA_FFI_ArgType*>(args.types.data());
  frame.args.args = args.pointers.data();
  frame.rets.size = static_cast<int64_t>(rets.buffers.size());
  frame.rets.types = reinterpret_cast<XLA_FFI_RetType*>(rets.types.data());
  frame.rets.rets = rets.pointers.data();
  const std::array<std::pair<XLA_FFI_ExecutionStage, XLA_FFI_Handler*>, 3> stages = {{
      {XLA_FFI_ExecutionStage_PREPARE, handler.bundle.prepare},
      {XLA_FFI_ExecutionStage_INITIALIZE, handler.bundle.initialize},
      {XLA_FFI_ExecutionStage_EXECUTE, handler.bundle.execute},
  }};
  for (const auto& [stage, fn] : stages) {
    if (fn == nullptr) continue;
    ctx.stage = stage;
    frame.stage = stage;
    if (absl::Status s = CallStage(fn, frame); !s.ok()) return Annotate(s, inst, source_name, stage);
  }
  return result;
}

// dlsym on a library handle also searches the libraries it depends on: a target named `tanh` would find libm's.
// Only a symbol the library itself defines is a handler.
void* OwnSymbol(void* handle, const std::string& name) {
  void* symbol = ::dlsym(handle, name.c_str());
  if (symbol == nullptr) return nullptr;
  struct link_map* map = nullptr;
  Dl_info info;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || ::dladdr(symbol, &info) == 0 ||
      info.dli_fname == nullptr || map->l_name == nullptr || std::strcmp(info.dli_fname, map->l_name) != 0) {
    return nullptr;
  }
  return symbol;
}

bool IsCIdentifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::string Sanitized(std::string_view target) {
  std::string out(target);
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
  }
  return out;
}

// Asks a handler for its metadata, as XLA does when it registers one. The metadata struct sits in a larger zeroed
// block: handlers built against a newer header may fill fields appended after ours.
void Probe(FfiHandler& handler) {
  alignas(16) std::array<uint8_t, 256> storage{};
  auto* metadata = reinterpret_cast<XLA_FFI_Metadata*>(storage.data());
  metadata->struct_size = XLA_FFI_Metadata_STRUCT_SIZE;
  metadata->api_version.struct_size = XLA_FFI_Api_Version_STRUCT_SIZE;
  XLA_FFI_Metadata_Extension extension{};
  extension.extension_base.struct_size = XLA_FFI_Metadata_Extension_STRUCT_SIZE;
  extension.extension_base.type = XLA_FFI_Extension_Metadata;
  extension.metadata = metadata;
  XLA_FFI_Attrs no_attrs{};
  no_attrs.struct_size = XLA_FFI_Attrs_STRUCT_SIZE;
  XLA_FFI_CallFrame frame = MakeFrame(nullptr, no_attrs);
  frame.extension_start = &extension.extension_base;
  frame.stage = XLA_FFI_ExecutionStage_EXECUTE;
  XLA_FFI_Error* error = handler.bundle.execute(&frame);
  if (error != nullptr) {
    // A handler older than the metadata extension: XLA calls it all the same.
    delete error;
    return;
  }
  if (metadata->api_version.major_version == 0 && metadata->api_version.minor_version == 0 && metadata->traits == 0) {
    return;  // returned without filling anything in: it ignored the extension
  }
  handler.answered_probe = true;
  handler.api_major = metadata->api_version.major_version;
  handler.api_minor = metadata->api_version.minor_version;
  handler.traits = metadata->traits;
}

}  // namespace

const XLA_FFI_Api* HostFfiApi() {
  static const XLA_FFI_Api api = MakeApi();
  return &api;
}

absl::Status ConsumeFfiError(XLA_FFI_Error* error) {
  if (error == nullptr) return absl::OkStatus();
  // An error must not read as success, and a code outside absl's range is just unknown.
  absl::StatusCode code = error->code <= XLA_FFI_Error_Code_OK || error->code > XLA_FFI_Error_Code_UNAUTHENTICATED
                              ? absl::StatusCode::kUnknown
                              : static_cast<absl::StatusCode>(error->code);
  absl::Status status(code, error->message);
  delete error;
  return status;
}

absl::StatusOr<HandlerLibrarySpec> ParseHandlerLibrarySpec(std::string_view text) {
  HandlerLibrarySpec spec;
  // FILE:T=S,...: the mappings follow the last ':' when what follows it has an '=' (paths rarely contain both).
  size_t colon = text.rfind(':');
  std::string_view path = text;
  if (colon != std::string_view::npos && text.substr(colon + 1).find('=') != std::string_view::npos) {
    path = text.substr(0, colon);
    std::string_view rest = text.substr(colon + 1);
    while (!rest.empty()) {
      size_t comma = rest.find(',');
      std::string_view item = rest.substr(0, comma);
      rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
      size_t eq = item.find('=');
      if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
        return absl::InvalidArgumentError(
            Cat("invalid custom-call library mapping '", item, "' in '", text, "' (expected TARGET=SYMBOL)"));
      }
      spec.symbols.emplace_back(std::string(item.substr(0, eq)), std::string(item.substr(eq + 1)));
    }
  }
  if (path.empty()) return absl::InvalidArgumentError("empty custom-call library path");
  spec.path = std::string(path);
  return spec;
}

absl::StatusOr<std::shared_ptr<const HandlerLibraries>> HandlerLibraries::Load(const std::vector<std::string>& specs) {
  std::shared_ptr<HandlerLibraries> libs(new HandlerLibraries());
  for (const std::string& text : specs) {
    absl::StatusOr<HandlerLibrarySpec> spec = ParseHandlerLibrarySpec(text);
    if (!spec.ok()) return spec.status();
    // A file that exists is opened by its path (dlopen would search the library path for a name without '/').
    std::string open_path = spec->path;
    struct stat st;
    if (open_path.find('/') == std::string::npos && ::stat(open_path.c_str(), &st) == 0) open_path = "./" + open_path;
    void* handle = ::dlopen(open_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = ::dlerror();
      return absl::InvalidArgumentError(
          Cat("cannot load custom-call library '", spec->path, "': ", why != nullptr ? why : "unknown error"));
    }
    for (const auto& [target, symbol] : spec->symbols) {
      if (OwnSymbol(handle, symbol) == nullptr) {
        return absl::InvalidArgumentError(Cat("custom-call library '", spec->path, "' has no symbol '", symbol,
                                              "' (mapped from target '", target, "')"));
      }
    }
    libs->specs_.push_back(*spec);
    libs->libraries_.push_back(Library{*std::move(spec), handle});
  }
  return std::shared_ptr<const HandlerLibraries>(std::move(libs));
}

HandlerLibraries::~HandlerLibraries() = default;  // libraries stay loaded (see the header)

absl::StatusOr<FfiHandler> HandlerLibraries::Resolve(std::string_view target) const {
  std::vector<std::string> tried;
  for (const Library& lib : libraries_) {
    std::vector<std::string> candidates;
    for (const auto& [t, symbol] : lib.spec.symbols) {
      if (t == target) candidates.push_back(symbol);
    }
    if (candidates.empty()) {
      if (IsCIdentifier(target)) {
        candidates.emplace_back(target);
      } else {
        candidates.push_back(Sanitized(target));
      }
    }
    for (const std::string& symbol : candidates) {
      void* execute = OwnSymbol(lib.handle, symbol);
      tried.push_back(Cat("'", symbol, "' in ", lib.spec.path));
      if (execute == nullptr) continue;
      FfiHandler handler;
      handler.library = lib.spec.path;
      handler.symbol = symbol;
      handler.bundle.execute = reinterpret_cast<XLA_FFI_Handler*>(execute);
      handler.bundle.instantiate = reinterpret_cast<XLA_FFI_Handler*>(OwnSymbol(lib.handle, symbol + "_instantiate"));
      handler.bundle.prepare = reinterpret_cast<XLA_FFI_Handler*>(OwnSymbol(lib.handle, symbol + "_prepare"));
      handler.bundle.initialize = reinterpret_cast<XLA_FFI_Handler*>(OwnSymbol(lib.handle, symbol + "_initialize"));
      Probe(handler);
      if (handler.api_major != XLA_FFI_API_MAJOR) {
        return absl::FailedPreconditionError(
            Cat("XLA FFI handler '", symbol, "' in ", lib.spec.path, " was built for XLA FFI API ", handler.api_major,
                ".", handler.api_minor, "; xlac implements ", XLA_FFI_API_MAJOR, ".", XLA_FFI_API_MINOR));
      }
      return handler;
    }
  }
  return absl::NotFoundError(
      Cat("no XLA FFI handler for custom call target '", target, "' (looked for ", absl::StrJoin(tried, ", "), ")"));
}

absl::StatusOr<const FfiHandler*> HandlerLibraries::Find(std::string_view target) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = cache_.find(target);
  if (it == cache_.end()) it = cache_.emplace(std::string(target), Resolve(target)).first;
  if (!it->second.ok()) return it->second.status();
  return &*it->second;
}

std::vector<HandlerLibraries::Missing> HandlerLibraries::MissingHandlers(
    const Module& module, const std::function<bool(std::string_view)>& handled_elsewhere) const {
  std::vector<Missing> missing;
  absl::flat_hash_map<std::string, bool> seen;
  for (const auto& comp : module.computations()) {
    for (const auto& inst : comp->instructions()) {
      if (inst->opcode() != Opcode::kCustomCall || inst->StringAttr("api_version") != "API_VERSION_TYPED_FFI") {
        continue;
      }
      std::string target(inst->StringAttr("custom_call_target"));
      if (!seen.emplace(target, true).second) continue;
      if (handled_elsewhere && handled_elsewhere(target)) continue;
      absl::StatusOr<const FfiHandler*> found = Find(target);
      if (found.ok()) continue;
      missing.push_back(Missing{inst->loc(), std::string(found.status().message())});
    }
  }
  return missing;
}

CustomCallFn HandlerLibraries::MakeCustomCallHandler(CustomCallFn fallback, std::string source_name) const {
  // Per executable: the call sites it has instantiated (keyed by the instruction, which the executable keeps).
  struct Sites {
    std::mutex mu;
    absl::flat_hash_map<const Instruction*, std::unique_ptr<CallSite>> sites;
  };
  auto sites = std::make_shared<Sites>();
  std::shared_ptr<const HandlerLibraries> self = shared_from_this();
  return [self, sites, fallback = std::move(fallback), source_name = std::move(source_name)](
             const Instruction& inst, const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
    std::string_view target = inst.StringAttr("custom_call_target");
    absl::StatusOr<const FfiHandler*> handler = self->Find(target);
    if (!handler.ok()) {
      if (!absl::IsNotFound(handler.status())) {
        return absl::Status(handler.status().code(),
                            Cat(DescribeCall(inst, source_name), ": ", handler.status().message()));
      }
      if (fallback) return fallback(inst, operands);
      return absl::UnimplementedError(Cat("unsupported custom call target '", target, "'"));
    }
    CallSite* site;
    {
      std::lock_guard<std::mutex> lock(sites->mu);
      std::unique_ptr<CallSite>& slot = sites->sites[&inst];
      if (slot == nullptr) slot = std::make_unique<CallSite>();
      site = slot.get();
    }
    return Execute(**handler, *site, inst, operands, source_name);
  };
}

absl::StatusOr<Literal> CallFfiHandler(const FfiHandler& handler, const Instruction& custom_call,
                                       const std::vector<const Literal*>& operands, std::string_view source_name) {
  CallSite site;
  return Execute(handler, site, custom_call, operands, source_name);
}

}  // namespace xlac::ffi
