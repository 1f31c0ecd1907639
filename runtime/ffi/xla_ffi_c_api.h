/* XLA's stable FFI C ABI, as xlac implements it (API version 0.1).
 *
 * Written for xlac from the layout that XLA publishes in xla/ffi/api/c_api.h and its FFI documentation
 * (https://openxla.org/xla/custom_call): the structs, enums and the XLA_FFI_Api function table below keep XLA's
 * names, field order and enum values, so a handler library compiled against XLA's header (JAX's jax.ffi kernels,
 * anything written with xla/ffi/api/ffi.h) and one compiled against this header are interchangeable. C99; no
 * dependency on anything of xlac. docs/custom_calls.md ("XLA FFI handler libraries") says what xlac does with each
 * API function on a host.
 *
 * Conventions of the ABI:
 *  - every struct passed across the boundary starts with `struct_size` (callers set it to NAME_STRUCT_SIZE, the
 *    offset past the last field they know) and an extension chain;
 *  - a handler returns NULL for success or an XLA_FFI_Error* made with api->XLA_FFI_Error_Create, which the caller
 *    (xlac) reads and destroys;
 *  - attributes are sorted by name (byte-wise), so handlers may binary-search them. */
#ifndef XLAC_RUNTIME_FFI_XLA_FFI_C_API_H_
#define XLAC_RUNTIME_FFI_XLA_FFI_C_API_H_

#include <stddef.h>
#include <stdint.h>

#define XLA_FFI_STRUCT_SIZE(struct_type, last_field) \
  (offsetof(struct_type, last_field) + sizeof(((struct_type*)0)->last_field))

#define XLA_FFI_DEFINE_STRUCT_TRAITS(sname, last_field) \
  typedef struct sname sname;                           \
  enum { sname##_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(sname, last_field) }

#ifdef __cplusplus
extern "C" {
#endif

typedef struct XLA_FFI_Api XLA_FFI_Api;
typedef struct XLA_FFI_InternalApi XLA_FFI_InternalApi; /* XLA-internal; xlac leaves it NULL */

/* ---- Extensions ---------------------------------------------------------------------------------------------- */

typedef enum {
  XLA_FFI_Extension_Metadata = 1,
} XLA_FFI_Extension_Type;

typedef struct XLA_FFI_Extension_Base {
  size_t struct_size;
  XLA_FFI_Extension_Type type;
  struct XLA_FFI_Extension_Base* next;
} XLA_FFI_Extension_Base;

/* Already typedef'd above: only the size (a repeated typedef is C11, and this header is C99). */
enum { XLA_FFI_Extension_Base_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(XLA_FFI_Extension_Base, next) };

/* ---- Version ------------------------------------------------------------------------------------------------- */

/* Major: ABI-incompatible changes. Minor: fields appended to the API table or to argument structs. */
#define XLA_FFI_API_MAJOR 0
#define XLA_FFI_API_MINOR 1

struct XLA_FFI_Api_Version {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  int major_version; /* out */
  int minor_version; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Api_Version, minor_version);

/* ---- Errors -------------------------------------------------------------------------------------------------- */

/* Opaque; ownership passes to whoever receives it (xlac destroys the errors handlers return). */
typedef struct XLA_FFI_Error XLA_FFI_Error;

/* absl::StatusCode values. */
typedef enum {
  XLA_FFI_Error_Code_OK = 0,
  XLA_FFI_Error_Code_CANCELLED = 1,
  XLA_FFI_Error_Code_UNKNOWN = 2,
  XLA_FFI_Error_Code_INVALID_ARGUMENT = 3,
  XLA_FFI_Error_Code_DEADLINE_EXCEEDED = 4,
  XLA_FFI_Error_Code_NOT_FOUND = 5,
  XLA_FFI_Error_Code_ALREADY_EXISTS = 6,
  XLA_FFI_Error_Code_PERMISSION_DENIED = 7,
  XLA_FFI_Error_Code_RESOURCE_EXHAUSTED = 8,
  XLA_FFI_Error_Code_FAILED_PRECONDITION = 9,
  XLA_FFI_Error_Code_ABORTED = 10,
  XLA_FFI_Error_Code_OUT_OF_RANGE = 11,
  XLA_FFI_Error_Code_UNIMPLEMENTED = 12,
  XLA_FFI_Error_Code_INTERNAL = 13,
  XLA_FFI_Error_Code_UNAVAILABLE = 14,
  XLA_FFI_Error_Code_DATA_LOSS = 15,
  XLA_FFI_Error_Code_UNAUTHENTICATED = 16
} XLA_FFI_Error_Code;

struct XLA_FFI_Error_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  const char* message;
  XLA_FFI_Error_Code errc;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Create_Args, errc);

typedef XLA_FFI_Error* XLA_FFI_Error_Create(XLA_FFI_Error_Create_Args* args);

struct XLA_FFI_Error_GetMessage_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
  const char* message; /* out; valid while `error` lives */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_GetMessage_Args, message);

typedef void XLA_FFI_Error_GetMessage(XLA_FFI_Error_GetMessage_Args* args);

struct XLA_FFI_Error_Destroy_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Error* error;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Error_Destroy_Args, error);

typedef void XLA_FFI_Error_Destroy(XLA_FFI_Error_Destroy_Args* args);

/* ---- Data types (xla::PrimitiveType numbering) ----------------------------------------------------------------- */

typedef enum {
  XLA_FFI_DataType_INVALID = 0,
  XLA_FFI_DataType_PRED = 1,
  XLA_FFI_DataType_S1 = 30,
  XLA_FFI_DataType_S2 = 26,
  XLA_FFI_DataType_S4 = 21,
  XLA_FFI_DataType_S8 = 2,
  XLA_FFI_DataType_S16 = 3,
  XLA_FFI_DataType_S32 = 4,
  XLA_FFI_DataType_S64 = 5,
  XLA_FFI_DataType_U1 = 31,
  XLA_FFI_DataType_U2 = 27,
  XLA_FFI_DataType_U4 = 22,
  XLA_FFI_DataType_U8 = 6,
  XLA_FFI_DataType_U16 = 7,
  XLA_FFI_DataType_U32 = 8,
  XLA_FFI_DataType_U64 = 9,
  XLA_FFI_DataType_F16 = 10,
  XLA_FFI_DataType_F32 = 11,
  XLA_FFI_DataType_F64 = 12,
  XLA_FFI_DataType_BF16 = 16,
  XLA_FFI_DataType_C64 = 15,
  XLA_FFI_DataType_C128 = 18,
  XLA_FFI_DataType_TOKEN = 17,
  XLA_FFI_DataType_F8E5M2 = 19,
  XLA_FFI_DataType_F8E3M4 = 29,
  XLA_FFI_DataType_F8E4M3 = 28,
  XLA_FFI_DataType_F8E4M3FN = 20,
  XLA_FFI_DataType_F8E4M3B11FNUZ = 23,
  XLA_FFI_DataType_F8E5M2FNUZ = 24,
  XLA_FFI_DataType_F8E4M3FNUZ = 25,
  XLA_FFI_DataType_F4E2M1FN = 32,
  XLA_FFI_DataType_F8E8M0FNU = 33
} XLA_FFI_DataType;

/* ---- Arguments and results ----------------------------------------------------------------------------------- */

/* A dense row-major array: `dims` are the logical dimensions, major to minor. Tokens are buffers of dtype TOKEN,
 * rank 0 and no data. */
struct XLA_FFI_Buffer {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_DataType dtype;
  void* data;
  int64_t rank;
  int64_t* dims; /* length == rank */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Buffer, dims);

typedef enum {
  XLA_FFI_ArgType_BUFFER = 1,
} XLA_FFI_ArgType;

typedef enum {
  XLA_FFI_RetType_BUFFER = 1,
} XLA_FFI_RetType;

/* ---- Attributes ---------------------------------------------------------------------------------------------- */

/* What attrs[i] points to: ARRAY an XLA_FFI_Array, DICTIONARY an XLA_FFI_Attrs, SCALAR an XLA_FFI_Scalar, STRING an
 * XLA_FFI_ByteSpan. */
typedef enum {
  XLA_FFI_AttrType_ARRAY = 1,
  XLA_FFI_AttrType_DICTIONARY = 2,
  XLA_FFI_AttrType_SCALAR = 3,
  XLA_FFI_AttrType_STRING = 4,
} XLA_FFI_AttrType;

/* ---- Execution context --------------------------------------------------------------------------------------- */

typedef struct XLA_FFI_ExecutionContext XLA_FFI_ExecutionContext; /* opaque, per call */

/* ---- Primitives ---------------------------------------------------------------------------------------------- */

typedef struct XLA_FFI_TypeId {
  int64_t type_id;
} XLA_FFI_TypeId;

/* Strings are byte spans: not NUL-terminated. */
typedef struct XLA_FFI_ByteSpan {
  const char* ptr;
  size_t len;
} XLA_FFI_ByteSpan;

/* `value` points to one element of `dtype` (a bool is one byte of PRED). */
typedef struct XLA_FFI_Scalar {
  XLA_FFI_DataType dtype;
  void* value;
} XLA_FFI_Scalar;

typedef struct XLA_FFI_Array {
  XLA_FFI_DataType dtype;
  size_t size;
  void* data;
} XLA_FFI_Array;

/* ---- Futures (asynchronous handlers) ------------------------------------------------------------------------- */

typedef struct XLA_FFI_Future XLA_FFI_Future;

struct XLA_FFI_Future_Create_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future; /* out */
};

/* XLA's header ends this struct's traits at extension_start; kept so handlers built against it agree on the size. */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_Create_Args, extension_start);

typedef XLA_FFI_Error* XLA_FFI_Future_Create(XLA_FFI_Future_Create_Args* args);

struct XLA_FFI_Future_SetAvailable_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetAvailable_Args, future);

typedef XLA_FFI_Error* XLA_FFI_Future_SetAvailable(XLA_FFI_Future_SetAvailable_Args* args);

struct XLA_FFI_Future_SetError_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;
  XLA_FFI_Future* future;
  XLA_FFI_Error* error; /* ownership passes to the runtime */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Future_SetError_Args, error);

typedef XLA_FFI_Error* XLA_FFI_Future_SetError(XLA_FFI_Future_SetError_Args* args);

/* ---- Call frame ---------------------------------------------------------------------------------------------- */

/* INSTANTIATE: once per call site, before its first execution (attributes only, no buffers); PREPARE and
 * INITIALIZE: before every execution; EXECUTE: the call. */
typedef enum {
  XLA_FFI_ExecutionStage_INSTANTIATE = 0,
  XLA_FFI_ExecutionStage_PREPARE = 1,
  XLA_FFI_ExecutionStage_INITIALIZE = 2,
  XLA_FFI_ExecutionStage_EXECUTE = 3,
} XLA_FFI_ExecutionStage;

struct XLA_FFI_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  int64_t size;
  XLA_FFI_ArgType* types; /* length == size */
  void** args;            /* length == size */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Args, args);

struct XLA_FFI_Rets {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  int64_t size;
  XLA_FFI_RetType* types; /* length == size */
  void** rets;            /* length == size */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Rets, rets);

/* Sorted by name. */
struct XLA_FFI_Attrs {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  int64_t size;
  XLA_FFI_AttrType* types;  /* length == size */
  XLA_FFI_ByteSpan** names; /* length == size */
  void** attrs;             /* length == size */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Attrs, attrs);

struct XLA_FFI_CallFrame {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  const XLA_FFI_Api* api;
  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_ExecutionStage stage;
  XLA_FFI_Args args;
  XLA_FFI_Rets rets;
  XLA_FFI_Attrs attrs;

  /* out: an asynchronous handler returns a future here; the runtime waits for it. */
  XLA_FFI_Future* future;
};

/* As in XLA's header, the size stops at `attrs`: `future` was appended in a minor version. */
XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_CallFrame, attrs);

/* ---- Handlers ------------------------------------------------------------------------------------------------ */

typedef XLA_FFI_Error* XLA_FFI_Handler(XLA_FFI_CallFrame* call_frame);

typedef struct XLA_FFI_Handler_Bundle {
  XLA_FFI_Handler* instantiate; /* optional */
  XLA_FFI_Handler* prepare;     /* optional */
  XLA_FFI_Handler* initialize;  /* optional */
  XLA_FFI_Handler* execute;     /* required */
} XLA_FFI_Handler_Bundle;

enum XLA_FFI_Handler_TraitsBits {
  XLA_FFI_HANDLER_TRAITS_COMMAND_BUFFER_COMPATIBLE = 1u << 0,
};

typedef uint32_t XLA_FFI_Handler_Traits;

struct XLA_FFI_Handler_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ByteSpan name;
  XLA_FFI_ByteSpan platform;
  XLA_FFI_Handler_Bundle bundle;
  XLA_FFI_Handler_Traits traits;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Handler_Register_Args, traits);

typedef XLA_FFI_Error* XLA_FFI_Handler_Register(XLA_FFI_Handler_Register_Args* args);

/* ---- Type ids, execution context, state ---------------------------------------------------------------------- */

struct XLA_FFI_TypeId_Register_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ByteSpan name;
  XLA_FFI_TypeId* type_id; /* in-out: 0 asks for a fresh id */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_TypeId_Register_Args, type_id);

typedef XLA_FFI_Error* XLA_FFI_TypeId_Register(XLA_FFI_TypeId_Register_Args* args);

struct XLA_FFI_ExecutionContext_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* data; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ExecutionContext_Get_Args, data);

typedef XLA_FFI_Error* XLA_FFI_ExecutionContext_Get(XLA_FFI_ExecutionContext_Get_Args* args);

struct XLA_FFI_State_Set_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* state;
  void (*deleter)(void* state);
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Set_Args, deleter);

typedef XLA_FFI_Error* XLA_FFI_State_Set(XLA_FFI_State_Set_Args* args);

struct XLA_FFI_State_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_TypeId* type_id;
  void* state; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_State_Get_Args, state);

typedef XLA_FFI_Error* XLA_FFI_State_Get(XLA_FFI_State_Get_Args* args);

/* ---- Stream, device memory, thread pool, run id -------------------------------------------------------------- */

struct XLA_FFI_Stream_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  void* stream; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Stream_Get_Args, stream);

typedef XLA_FFI_Error* XLA_FFI_Stream_Get(XLA_FFI_Stream_Get_Args* args);

struct XLA_FFI_DeviceMemory_Allocate_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  size_t alignment;
  void* data; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Allocate_Args, data);

typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Allocate(XLA_FFI_DeviceMemory_Allocate_Args* args);

struct XLA_FFI_DeviceMemory_Free_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  size_t size;
  void* data;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_DeviceMemory_Free_Args, data);

typedef XLA_FFI_Error* XLA_FFI_DeviceMemory_Free(XLA_FFI_DeviceMemory_Free_Args* args);

typedef void XLA_FFI_Task(void* data);

struct XLA_FFI_ThreadPool_Schedule_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  XLA_FFI_Task* task;
  void* data;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_Schedule_Args, data);

typedef XLA_FFI_Error* XLA_FFI_ThreadPool_Schedule(XLA_FFI_ThreadPool_Schedule_Args* args);

struct XLA_FFI_ThreadPool_NumThreads_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  int64_t* num_threads; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_ThreadPool_NumThreads_Args, num_threads);

typedef XLA_FFI_Error* XLA_FFI_ThreadPool_NumThreads(XLA_FFI_ThreadPool_NumThreads_Args* args);

struct XLA_FFI_RunId_Get_Args {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_ExecutionContext* ctx;
  int64_t run_id; /* out */
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_RunId_Get_Args, run_id);

typedef XLA_FFI_Error* XLA_FFI_RunId_Get(XLA_FFI_RunId_Get_Args* args);

/* ---- Metadata extension -------------------------------------------------------------------------------------- */

/* The runtime probes a handler by calling it with a call frame whose extension chain starts with an
 * XLA_FFI_Metadata_Extension: the handler fills `metadata` (the API version it was built for, its traits) and
 * returns without doing anything else. */
struct XLA_FFI_Metadata {
  size_t struct_size;
  XLA_FFI_Api_Version api_version;
  XLA_FFI_Handler_Traits traits;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata, traits);

struct XLA_FFI_Metadata_Extension {
  XLA_FFI_Extension_Base extension_base;
  XLA_FFI_Metadata* metadata;
};

XLA_FFI_DEFINE_STRUCT_TRAITS(XLA_FFI_Metadata_Extension, metadata);

/* ---- The API table ------------------------------------------------------------------------------------------- */

struct XLA_FFI_Api {
  size_t struct_size;
  XLA_FFI_Extension_Base* extension_start;

  XLA_FFI_Api_Version api_version;
  XLA_FFI_InternalApi* internal_api;

  XLA_FFI_Error_Create* XLA_FFI_Error_Create;
  XLA_FFI_Error_GetMessage* XLA_FFI_Error_GetMessage;
  XLA_FFI_Error_Destroy* XLA_FFI_Error_Destroy;
  XLA_FFI_Handler_Register* XLA_FFI_Handler_Register;
  XLA_FFI_Stream_Get* XLA_FFI_Stream_Get;
  XLA_FFI_TypeId_Register* XLA_FFI_TypeId_Register;
  XLA_FFI_ExecutionContext_Get* XLA_FFI_ExecutionContext_Get;
  XLA_FFI_State_Set* XLA_FFI_State_Set;
  XLA_FFI_State_Get* XLA_FFI_State_Get;
  XLA_FFI_DeviceMemory_Allocate* XLA_FFI_DeviceMemory_Allocate;
  XLA_FFI_DeviceMemory_Free* XLA_FFI_DeviceMemory_Free;
  XLA_FFI_ThreadPool_Schedule* XLA_FFI_ThreadPool_Schedule;
  XLA_FFI_ThreadPool_NumThreads* XLA_FFI_ThreadPool_NumThreads;
  XLA_FFI_Future_Create* XLA_FFI_Future_Create;
  XLA_FFI_Future_SetAvailable* XLA_FFI_Future_SetAvailable;
  XLA_FFI_Future_SetError* XLA_FFI_Future_SetError;
  XLA_FFI_RunId_Get* XLA_FFI_RunId_Get;
};

/* As in XLA's header (the size it has always checked); the table itself holds every function above. */
enum { XLA_FFI_Api_STRUCT_SIZE = XLA_FFI_STRUCT_SIZE(XLA_FFI_Api, XLA_FFI_Stream_Get) };

#ifdef __cplusplus
}
#endif

#endif /* XLAC_RUNTIME_FFI_XLA_FFI_C_API_H_ */
