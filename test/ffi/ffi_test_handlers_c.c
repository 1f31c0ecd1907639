/* An XLA FFI handler in C99 (compiled with -std=c99 -pedantic-errors): runtime/ffi/xla_ffi_c_api.h stays a C header,
 * and a handler needs nothing but it. xlac_test_c_copy copies its operand into its result, whatever the type. */
#include <stdint.h>
#include <string.h>

#include "runtime/ffi/xla_ffi_c_api.h"

static size_t ElementBytes(XLA_FFI_DataType dtype) {
  switch (dtype) {
    case XLA_FFI_DataType_PRED:
    case XLA_FFI_DataType_S8:
    case XLA_FFI_DataType_U8:
      return 1;
    case XLA_FFI_DataType_S16:
    case XLA_FFI_DataType_U16:
    case XLA_FFI_DataType_F16:
    case XLA_FFI_DataType_BF16:
      return 2;
    case XLA_FFI_DataType_S32:
    case XLA_FFI_DataType_U32:
    case XLA_FFI_DataType_F32:
      return 4;
    case XLA_FFI_DataType_S64:
    case XLA_FFI_DataType_U64:
    case XLA_FFI_DataType_F64:
    case XLA_FFI_DataType_C64:
      return 8;
    case XLA_FFI_DataType_C128:
      return 16;
    default:
      return 0;
  }
}

__attribute__((visibility("default"))) XLA_FFI_Error* xlac_test_c_copy(XLA_FFI_CallFrame* frame) {
  XLA_FFI_Extension_Base* ext;
  for (ext = frame->extension_start; ext != NULL; ext = ext->next) {
    if (ext->type == XLA_FFI_Extension_Metadata) {
      XLA_FFI_Metadata* metadata = ((XLA_FFI_Metadata_Extension*)ext)->metadata;
      metadata->api_version.major_version = XLA_FFI_API_MAJOR;
      metadata->api_version.minor_version = XLA_FFI_API_MINOR;
      metadata->traits = 0;
      return NULL;
    }
  }
  if (frame->args.size != 1 || frame->rets.size != 1) {
    XLA_FFI_Error_Create_Args args;
    memset(&args, 0, sizeof(args));
    args.struct_size = XLA_FFI_Error_Create_Args_STRUCT_SIZE;
    args.message = "xlac_test_c_copy takes one operand and one result";
    args.errc = XLA_FFI_Error_Code_INVALID_ARGUMENT;
    return frame->api->XLA_FFI_Error_Create(&args);
  }
  {
    const XLA_FFI_Buffer* in = (const XLA_FFI_Buffer*)frame->args.args[0];
    XLA_FFI_Buffer* out = (XLA_FFI_Buffer*)frame->rets.rets[0];
    size_t bytes = ElementBytes(in->dtype);
    int64_t i;
    for (i = 0; i < in->rank; ++i) bytes *= (size_t)in->dims[i];
    memcpy(out->data, in->data, bytes);
  }
  return NULL;
}
