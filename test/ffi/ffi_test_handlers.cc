// XLA FFI handlers for xlac's tests (lit tests under test/lit/xla-run/ffi_*, test/unit/ffi_*_test.cc, the Python and
// C++ API tests). Compiled against runtime/ffi/xla_ffi_c_api.h only, as a third party's library would be compiled
// against XLA's header, and exported as plain C symbols named as the custom-call targets.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>

#include "runtime/ffi/xla_ffi_c_api.h"

namespace {

XLA_FFI_Error* Fail(const XLA_FFI_CallFrame* frame, XLA_FFI_Error_Code code, const std::string& message) {
  XLA_FFI_Error_Create_Args args{};
  args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
  args.message = message.c_str();
  args.errc = code;
  return frame->api->XLA_FFI_Error_Create(&args);
}

// The metadata probe: answer with the version this library was built for. True when the frame was a probe.
bool AnswerProbe(XLA_FFI_CallFrame* frame) {
  for (XLA_FFI_Extension_Base* ext = frame->extension_start; ext != nullptr; ext = ext->next) {
    if (ext->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata* metadata = reinterpret_cast<XLA_FFI_Metadata_Extension*>(ext)->metadata;
    metadata->api_version.major_version = XLA_FFI_API_MAJOR;
    metadata->api_version.minor_version = XLA_FFI_API_MINOR;
    metadata->traits = 0;
    return true;
  }
  return false;
}

const void* FindAttr(const XLA_FFI_CallFrame* frame, std::string_view name, XLA_FFI_AttrType type) {
  // Attributes are sorted by name: binary search, as XLA's decoders do.
  int64_t lo = 0, hi = frame->attrs.size;
  while (lo < hi) {
    int64_t mid = (lo + hi) / 2;
    const XLA_FFI_ByteSpan* n = frame->attrs.names[mid];
    std::string_view key(n->ptr, n->len);
    if (key == name) return frame->attrs.types[mid] == type ? frame->attrs.attrs[mid] : nullptr;
    if (key < name) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return nullptr;
}

int64_t Elements(const XLA_FFI_Buffer* b) {
  int64_t n = 1;
  for (int64_t i = 0; i < b->rank; ++i) n *= b->dims[i];
  return n;
}

XLA_FFI_Buffer* Arg(XLA_FFI_CallFrame* frame, int64_t i) { return static_cast<XLA_FFI_Buffer*>(frame->args.args[i]); }
XLA_FFI_Buffer* Ret(XLA_FFI_CallFrame* frame, int64_t i) { return static_cast<XLA_FFI_Buffer*>(frame->rets.rets[i]); }

// Any scalar attribute as a double.
bool ScalarValue(const XLA_FFI_Scalar* s, double* out) {
  switch (s->dtype) {
    case XLA_FFI_DataType_PRED:
      *out = *static_cast<const uint8_t*>(s->value);
      return true;
    case XLA_FFI_DataType_S8:
      *out = *static_cast<const int8_t*>(s->value);
      return true;
    case XLA_FFI_DataType_S16:
      *out = *static_cast<const int16_t*>(s->value);
      return true;
    case XLA_FFI_DataType_S32:
      *out = *static_cast<const int32_t*>(s->value);
      return true;
    case XLA_FFI_DataType_S64:
      *out = static_cast<double>(*static_cast<const int64_t*>(s->value));
      return true;
    case XLA_FFI_DataType_U8:
      *out = *static_cast<const uint8_t*>(s->value);
      return true;
    case XLA_FFI_DataType_U16:
      *out = *static_cast<const uint16_t*>(s->value);
      return true;
    case XLA_FFI_DataType_U32:
      *out = *static_cast<const uint32_t*>(s->value);
      return true;
    case XLA_FFI_DataType_U64:
      *out = static_cast<double>(*static_cast<const uint64_t*>(s->value));
      return true;
    case XLA_FFI_DataType_F32:
      *out = *static_cast<const float*>(s->value);
      return true;
    case XLA_FFI_DataType_F64:
      *out = *static_cast<const double*>(s->value);
      return true;
    default:
      return false;
  }
}

double ArrayElement(const XLA_FFI_Array* a, size_t i) {
  switch (a->dtype) {
    case XLA_FFI_DataType_S8:
      return static_cast<const int8_t*>(a->data)[i];
    case XLA_FFI_DataType_S16:
      return static_cast<const int16_t*>(a->data)[i];
    case XLA_FFI_DataType_S32:
      return static_cast<const int32_t*>(a->data)[i];
    case XLA_FFI_DataType_S64:
      return static_cast<double>(static_cast<const int64_t*>(a->data)[i]);
    case XLA_FFI_DataType_F32:
      return static_cast<const float*>(a->data)[i];
    case XLA_FFI_DataType_F64:
      return static_cast<const double*>(a->data)[i];
    default:
      return NAN;
  }
}

struct BaseState {
  float base;
};

}  // namespace

extern "C" {

// out = x * alpha, x any f32 array; `alpha` an f32 scalar attribute.
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_scale(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  if (frame->stage != XLA_FFI_ExecutionStage_EXECUTE) return Fail(frame, XLA_FFI_Error_Code_INTERNAL, "wrong stage");
  if (frame->args.size != 1 || frame->rets.size != 1) {
    return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "xlac_test_scale takes one operand and one result");
  }
  const auto* alpha = static_cast<const XLA_FFI_Scalar*>(FindAttr(frame, "alpha", XLA_FFI_AttrType_SCALAR));
  if (alpha == nullptr || alpha->dtype != XLA_FFI_DataType_F32) {
    return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "xlac_test_scale needs an f32 attribute 'alpha'");
  }
  XLA_FFI_Buffer* x = Arg(frame, 0);
  XLA_FFI_Buffer* out = Ret(frame, 0);
  if (x->dtype != XLA_FFI_DataType_F32 || out->dtype != XLA_FFI_DataType_F32 || Elements(x) != Elements(out)) {
    return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "xlac_test_scale takes f32 arrays of one size");
  }
  const float a = *static_cast<const float*>(alpha->value);
  const float* in = static_cast<const float*>(x->data);
  float* o = static_cast<float*>(out->data);
  for (int64_t i = 0, n = Elements(x); i < n; ++i) o[i] = in[i] * a;
  return nullptr;
}

// (x + y, x * y) for two f32 arrays of one shape: several operands, a tuple result.
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_add_mul(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  if (frame->args.size != 2 || frame->rets.size != 2) {
    return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "xlac_test_add_mul takes 2 operands and 2 results");
  }
  const int64_t n = Elements(Arg(frame, 0));
  for (int i = 0; i < 2; ++i) {
    if (Arg(frame, i)->dtype != XLA_FFI_DataType_F32 || Ret(frame, i)->dtype != XLA_FFI_DataType_F32 ||
        Elements(Arg(frame, i)) != n || Elements(Ret(frame, i)) != n) {
      return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "xlac_test_add_mul takes f32 arrays of one size");
    }
  }
  const float* x = static_cast<const float*>(Arg(frame, 0)->data);
  const float* y = static_cast<const float*>(Arg(frame, 1)->data);
  float* sum = static_cast<float*>(Ret(frame, 0)->data);
  float* product = static_cast<float*>(Ret(frame, 1)->data);
  for (int64_t i = 0; i < n; ++i) {
    sum[i] = x[i] + y[i];
    product[i] = x[i] * y[i];
  }
  return nullptr;
}

// Always fails: INVALID_ARGUMENT with the `reason` string attribute (or a fixed message) and the operand's shape.
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_fail(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  const auto* reason = static_cast<const XLA_FFI_ByteSpan*>(FindAttr(frame, "reason", XLA_FFI_AttrType_STRING));
  std::string message = reason != nullptr ? std::string(reason->ptr, reason->len) : "xlac_test_fail always fails";
  if (frame->args.size > 0) {
    message += " (operand rank " + std::to_string(Arg(frame, 0)->rank) + ")";
  }
  return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, message);
}

// out[i] = x[i] * scale + offsets[i % len(offsets)] + len(name), x f32. Attributes: `name` (string), `offsets`
// (an array of any integer or float type), `scale` (a scalar of any type, default 1), `enabled` (bool, default
// true: false leaves the output zero).
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_attrs(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  const auto* name = static_cast<const XLA_FFI_ByteSpan*>(FindAttr(frame, "name", XLA_FFI_AttrType_STRING));
  const auto* offsets = static_cast<const XLA_FFI_Array*>(FindAttr(frame, "offsets", XLA_FFI_AttrType_ARRAY));
  if (name == nullptr || offsets == nullptr || offsets->size == 0) {
    return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT,
                "xlac_test_attrs needs a string 'name' and a non-empty array 'offsets'");
  }
  double scale = 1;
  if (const auto* s = static_cast<const XLA_FFI_Scalar*>(FindAttr(frame, "scale", XLA_FFI_AttrType_SCALAR))) {
    if (!ScalarValue(s, &scale)) return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "bad 'scale'");
  }
  if (const auto* e = static_cast<const XLA_FFI_Scalar*>(FindAttr(frame, "enabled", XLA_FFI_AttrType_SCALAR))) {
    if (e->dtype != XLA_FFI_DataType_PRED) {
      return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "'enabled' must be a bool");
    }
    if (*static_cast<const uint8_t*>(e->value) == 0) return nullptr;
  }
  XLA_FFI_Buffer* x = Arg(frame, 0);
  XLA_FFI_Buffer* out = Ret(frame, 0);
  const float* in = static_cast<const float*>(x->data);
  float* o = static_cast<float*>(out->data);
  for (int64_t i = 0, n = Elements(x); i < n; ++i) {
    o[i] = static_cast<float>(in[i] * scale + ArrayElement(offsets, static_cast<size_t>(i) % offsets->size) +
                              static_cast<double>(name->len));
  }
  return nullptr;
}

// A handler with an instantiate stage: xlac_test_stateful_instantiate keeps the `base` attribute in the call site's
// state; the execute stage adds it to every element of x (f32).
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_stateful_instantiate(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  if (frame->stage != XLA_FFI_ExecutionStage_INSTANTIATE) {
    return Fail(frame, XLA_FFI_Error_Code_INTERNAL, "instantiate handler called in another stage");
  }
  const auto* base = static_cast<const XLA_FFI_Scalar*>(FindAttr(frame, "base", XLA_FFI_AttrType_SCALAR));
  double value = 0;
  if (base == nullptr || !ScalarValue(base, &value)) {
    return Fail(frame, XLA_FFI_Error_Code_INVALID_ARGUMENT, "xlac_test_stateful needs a scalar attribute 'base'");
  }
  XLA_FFI_TypeId type{0};
  XLA_FFI_TypeId_Register_Args reg{};
  reg.struct_size = XLA_FFI_TypeId_Register_Args_STRUCT_SIZE;
  reg.name = XLA_FFI_ByteSpan{"xlac_test.BaseState", std::strlen("xlac_test.BaseState")};
  reg.type_id = &type;
  if (XLA_FFI_Error* e = frame->api->XLA_FFI_TypeId_Register(&reg)) return e;
  XLA_FFI_State_Set_Args set{};
  set.struct_size = XLA_FFI_State_Set_Args_STRUCT_SIZE;
  set.ctx = frame->ctx;
  set.type_id = &type;
  set.state = new BaseState{static_cast<float>(value)};
  set.deleter = [](void* p) { delete static_cast<BaseState*>(p); };
  return frame->api->XLA_FFI_State_Set(&set);
}

__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_stateful(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  XLA_FFI_TypeId type{0};
  XLA_FFI_TypeId_Register_Args reg{};
  reg.struct_size = XLA_FFI_TypeId_Register_Args_STRUCT_SIZE;
  reg.name = XLA_FFI_ByteSpan{"xlac_test.BaseState", std::strlen("xlac_test.BaseState")};
  reg.type_id = &type;
  if (XLA_FFI_Error* e = frame->api->XLA_FFI_TypeId_Register(&reg)) return e;
  XLA_FFI_State_Get_Args get{};
  get.struct_size = XLA_FFI_State_Get_Args_STRUCT_SIZE;
  get.ctx = frame->ctx;
  get.type_id = &type;
  if (XLA_FFI_Error* e = frame->api->XLA_FFI_State_Get(&get)) return e;
  const float base = static_cast<const BaseState*>(get.state)->base;
  XLA_FFI_Buffer* x = Arg(frame, 0);
  const float* in = static_cast<const float*>(x->data);
  float* o = static_cast<float*>(Ret(frame, 0)->data);
  for (int64_t i = 0, n = Elements(x); i < n; ++i) o[i] = in[i] + base;
  return nullptr;
}

// Asynchronous: out = x + 1 computed on another thread, which completes the future the handler returns; with the
// attribute `fail = true` the thread completes it with an error instead.
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_async(XLA_FFI_CallFrame* frame) {
  if (AnswerProbe(frame)) return nullptr;
  const XLA_FFI_Api* api = frame->api;
  XLA_FFI_Future_Create_Args create{};
  create.struct_size = XLA_FFI_Future_Create_Args_STRUCT_SIZE;
  if (XLA_FFI_Error* e = api->XLA_FFI_Future_Create(&create)) return e;
  const auto* fail = static_cast<const XLA_FFI_Scalar*>(FindAttr(frame, "fail", XLA_FFI_AttrType_SCALAR));
  const bool failing = fail != nullptr && *static_cast<const uint8_t*>(fail->value) != 0;
  const float* in = static_cast<const float*>(Arg(frame, 0)->data);
  float* out = static_cast<float*>(Ret(frame, 0)->data);
  const int64_t n = Elements(Arg(frame, 0));
  XLA_FFI_Future* future = create.future;
  std::thread([api, future, failing, in, out, n] {
    if (failing) {
      XLA_FFI_Error_Create_Args error{};
      error.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
      error.message = "the asynchronous work failed";
      error.errc = XLA_FFI_Error_Code_DATA_LOSS;
      XLA_FFI_Future_SetError_Args set{};
      set.struct_size = XLA_FFI_Future_SetError_Args_STRUCT_SIZE;
      set.future = future;
      set.error = api->XLA_FFI_Error_Create(&error);
      api->XLA_FFI_Future_SetError(&set);
      return;
    }
    for (int64_t i = 0; i < n; ++i) out[i] = in[i] + 1;
    XLA_FFI_Future_SetAvailable_Args set{};
    set.struct_size = XLA_FFI_Future_SetAvailable_Args_STRUCT_SIZE;
    set.future = future;
    api->XLA_FFI_Future_SetAvailable(&set);
  }).detach();
  frame->future = future;
  return nullptr;
}

// Built for a future major version of the API: xlac must refuse it.
__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_future_major(XLA_FFI_CallFrame* frame) {
  for (XLA_FFI_Extension_Base* ext = frame->extension_start; ext != nullptr; ext = ext->next) {
    if (ext->type != XLA_FFI_Extension_Metadata) continue;
    XLA_FFI_Metadata* metadata = reinterpret_cast<XLA_FFI_Metadata_Extension*>(ext)->metadata;
    metadata->api_version.major_version = XLA_FFI_API_MAJOR + 1;
    metadata->api_version.minor_version = 0;
    return nullptr;
  }
  return Fail(frame, XLA_FFI_Error_Code_INTERNAL, "must not run");
}

}  // extern "C"
