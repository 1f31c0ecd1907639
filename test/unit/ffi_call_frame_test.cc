// XLA FFI handler libraries (runtime/ffi/): backend_config attributes as XLA encodes them, loading the test suite's
// handler library (test/ffi/), finding handlers, and calls through the interpreter's custom-call hook.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "runtime/ffi/ffi_attributes.h"
#include "runtime/ffi/ffi_library.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::ffi {
namespace {

const FfiAttr& Get(const FfiAttrMap& map, std::string_view name) {
  for (const auto& [n, a] : map) {
    if (n == name) return a;
  }
  ADD_FAILURE() << "no attribute " << name;
  static FfiAttr none;
  return none;
}

TEST(FfiAttributes, StableHloDictionarySortedAndTyped) {
  absl::StatusOr<FfiAttrMap> map = ParseFfiAttributes(R"({n = 3 : i64, name = "x", alpha = 1.5 : f32})");
  ASSERT_TRUE(map.ok()) << map.status();
  ASSERT_EQ(map->size(), 3u);
  EXPECT_EQ((*map)[0].first, "alpha");
  EXPECT_EQ((*map)[1].first, "n");
  EXPECT_EQ((*map)[2].first, "name");
  EXPECT_EQ(Get(*map, "alpha").dtype, XLA_FFI_DataType_F32);
  EXPECT_EQ(Get(*map, "alpha").As<float>(), 1.5f);
  EXPECT_EQ(Get(*map, "n").dtype, XLA_FFI_DataType_S64);
  EXPECT_EQ(Get(*map, "n").As<int64_t>(), 3);
  EXPECT_EQ(Get(*map, "name").kind, FfiAttr::Kind::kString);
  EXPECT_EQ(Get(*map, "name").str, "x");
}

TEST(FfiAttributes, EveryScalarWidth) {
  absl::StatusOr<FfiAttrMap> map = ParseFfiAttributes(
      "{a = -8 : i8, b = -16 : i16, c = -32 : i32, d = -64 : i64, e = 255 : ui8, f = 65535 : ui16, "
      "g = 4294967295 : ui32, h = 18446744073709551615 : ui64, i = true, j = false, k = 1 : i1, l = 2.5 : f64, "
      "m = 7, o = 0.25, p = 0x7F800000 : f32, q = -3 : si32}");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ(Get(*map, "a").dtype, XLA_FFI_DataType_S8);
  EXPECT_EQ(Get(*map, "a").As<int8_t>(), -8);
  EXPECT_EQ(Get(*map, "b").As<int16_t>(), -16);
  EXPECT_EQ(Get(*map, "c").As<int32_t>(), -32);
  EXPECT_EQ(Get(*map, "d").As<int64_t>(), -64);
  EXPECT_EQ(Get(*map, "e").dtype, XLA_FFI_DataType_U8);
  EXPECT_EQ(Get(*map, "e").As<uint8_t>(), 255);
  EXPECT_EQ(Get(*map, "f").As<uint16_t>(), 65535);
  EXPECT_EQ(Get(*map, "g").As<uint32_t>(), 4294967295u);
  EXPECT_EQ(Get(*map, "h").dtype, XLA_FFI_DataType_U64);
  EXPECT_EQ(Get(*map, "h").As<uint64_t>(), 18446744073709551615ull);
  EXPECT_EQ(Get(*map, "i").dtype, XLA_FFI_DataType_PRED);
  EXPECT_EQ(Get(*map, "i").As<uint8_t>(), 1);
  EXPECT_EQ(Get(*map, "j").As<uint8_t>(), 0);
  EXPECT_EQ(Get(*map, "k").dtype, XLA_FFI_DataType_PRED);
  EXPECT_EQ(Get(*map, "l").As<double>(), 2.5);
  EXPECT_EQ(Get(*map, "m").dtype, XLA_FFI_DataType_S64);  // MLIR's default integer type
  EXPECT_EQ(Get(*map, "o").dtype, XLA_FFI_DataType_F64);  // and float type
  EXPECT_TRUE(std::isinf(Get(*map, "p").As<float>()));    // a float's bit pattern
  EXPECT_EQ(Get(*map, "q").dtype, XLA_FFI_DataType_S32);
}

TEST(FfiAttributes, Arrays) {
  absl::StatusOr<FfiAttrMap> map = ParseFfiAttributes(
      "{a = array<i32: 1, -2, 3>, b = dense<[1.5, 2.5]> : tensor<2xf32>, c = [4, 5], d = dense<7> : tensor<3xi16>, "
      "e = array<f64>, f = [1.0, 2]}");
  ASSERT_TRUE(map.ok()) << map.status();
  const FfiAttr& a = Get(*map, "a");
  EXPECT_EQ(a.kind, FfiAttr::Kind::kArray);
  EXPECT_EQ(a.dtype, XLA_FFI_DataType_S32);
  ASSERT_EQ(a.count, 3u);
  EXPECT_EQ(reinterpret_cast<const int32_t*>(a.bytes.data())[1], -2);
  const FfiAttr& b = Get(*map, "b");
  EXPECT_EQ(b.dtype, XLA_FFI_DataType_F32);
  EXPECT_EQ(reinterpret_cast<const float*>(b.bytes.data())[1], 2.5f);
  EXPECT_EQ(Get(*map, "c").dtype, XLA_FFI_DataType_S64);
  EXPECT_EQ(Get(*map, "c").count, 2u);
  const FfiAttr& d = Get(*map, "d");
  EXPECT_EQ(d.dtype, XLA_FFI_DataType_S16);
  ASSERT_EQ(d.count, 3u);
  EXPECT_EQ(reinterpret_cast<const int16_t*>(d.bytes.data())[2], 7);
  EXPECT_EQ(Get(*map, "e").count, 0u);
  EXPECT_EQ(Get(*map, "f").dtype, XLA_FFI_DataType_F64);
}

TEST(FfiAttributes, JsonStyleAndEmpty) {
  absl::StatusOr<FfiAttrMap> map = ParseFfiAttributes(R"({"scale": 2.0, "label": "a\"b", "n": 4})");
  ASSERT_TRUE(map.ok()) << map.status();
  EXPECT_EQ((*map)[0].first, "label");
  EXPECT_EQ(Get(*map, "label").str, "a\"b");
  EXPECT_EQ(Get(*map, "scale").dtype, XLA_FFI_DataType_F64);
  EXPECT_EQ(Get(*map, "n").As<int64_t>(), 4);
  EXPECT_TRUE(ParseFfiAttributes("").ok());
  EXPECT_TRUE(ParseFfiAttributes("{}")->empty());
}

TEST(FfiAttributes, Errors) {
  auto message = [](std::string_view text) { return std::string(ParseFfiAttributes(text).status().message()); };
  EXPECT_EQ(message("{flag}"),
            "backend_config: attribute 'flag' has no value (unit attributes are not FFI attributes) at offset 5 of "
            "'{flag}'");
  EXPECT_NE(message("{a = 1.0 : f16}").find("unsupported attribute type 'f16'"), std::string::npos);
  EXPECT_NE(message("{a = 300 : i8}").find("value out of range for i8"), std::string::npos);
  EXPECT_NE(message("{a = -1 : ui32}").find("negative value for an unsigned type"), std::string::npos);
  EXPECT_NE(message("{a = 1, a = 2}").find("attribute 'a' appears twice"), std::string::npos);
  EXPECT_NE(message("{a = @sym}").find("unsupported value for attribute 'a'"), std::string::npos);
}

TEST(FfiAttributes, EncodedAsXlaDoes) {
  absl::StatusOr<FfiAttrMap> map =
      ParseFfiAttributes(R"({z = {inner = 2 : i32}, alpha = 1.5 : f32, name = "xyz", v = array<i64: 1, 2>})");
  ASSERT_TRUE(map.ok()) << map.status();
  EncodedFfiAttrs encoded(*std::move(map));
  const XLA_FFI_Attrs& attrs = encoded.attrs();
  EXPECT_EQ(attrs.struct_size, XLA_FFI_Attrs_STRUCT_SIZE);
  ASSERT_EQ(attrs.size, 4);
  std::vector<std::string> names;
  for (int64_t i = 0; i < attrs.size; ++i) names.emplace_back(attrs.names[i]->ptr, attrs.names[i]->len);
  EXPECT_EQ(names, (std::vector<std::string>{"alpha", "name", "v", "z"}));
  EXPECT_EQ(attrs.types[0], XLA_FFI_AttrType_SCALAR);
  const auto* alpha = static_cast<const XLA_FFI_Scalar*>(attrs.attrs[0]);
  EXPECT_EQ(alpha->dtype, XLA_FFI_DataType_F32);
  EXPECT_EQ(*static_cast<const float*>(alpha->value), 1.5f);
  EXPECT_EQ(attrs.types[1], XLA_FFI_AttrType_STRING);
  const auto* name = static_cast<const XLA_FFI_ByteSpan*>(attrs.attrs[1]);
  EXPECT_EQ(std::string(name->ptr, name->len), "xyz");
  EXPECT_EQ(attrs.types[2], XLA_FFI_AttrType_ARRAY);
  const auto* v = static_cast<const XLA_FFI_Array*>(attrs.attrs[2]);
  EXPECT_EQ(v->dtype, XLA_FFI_DataType_S64);
  EXPECT_EQ(v->size, 2u);
  EXPECT_EQ(static_cast<const int64_t*>(v->data)[1], 2);
  EXPECT_EQ(attrs.types[3], XLA_FFI_AttrType_DICTIONARY);
  const auto* z = static_cast<const XLA_FFI_Attrs*>(attrs.attrs[3]);
  ASSERT_EQ(z->size, 1);
  EXPECT_EQ(std::string(z->names[0]->ptr, z->names[0]->len), "inner");
  EXPECT_EQ(*static_cast<const int32_t*>(static_cast<const XLA_FFI_Scalar*>(z->attrs[0])->value), 2);
}

TEST(FfiAbi, StructSizesMatchXlasLayout) {
  // The offsets XLA's header implies on LP64: a handler built against it reads the same fields.
  EXPECT_EQ(XLA_FFI_Buffer_STRUCT_SIZE, 48u);
  EXPECT_EQ(XLA_FFI_Args_STRUCT_SIZE, 40u);
  EXPECT_EQ(XLA_FFI_Attrs_STRUCT_SIZE, 48u);
  EXPECT_EQ(offsetof(XLA_FFI_CallFrame, stage), 32u);
  EXPECT_EQ(offsetof(XLA_FFI_CallFrame, args), 40u);
  EXPECT_EQ(offsetof(XLA_FFI_CallFrame, rets), 80u);
  EXPECT_EQ(offsetof(XLA_FFI_CallFrame, attrs), 120u);
  EXPECT_EQ(XLA_FFI_CallFrame_STRUCT_SIZE, 168u);
  EXPECT_EQ(offsetof(XLA_FFI_Api, XLA_FFI_Error_Create), 48u);
  EXPECT_EQ(XLA_FFI_Api_STRUCT_SIZE, 88u);
  EXPECT_EQ(sizeof(XLA_FFI_Api), 184u);
  EXPECT_EQ(XLA_FFI_Metadata_STRUCT_SIZE, 36u);
  const XLA_FFI_Api* api = HostFfiApi();
  EXPECT_EQ(api->api_version.major_version, XLA_FFI_API_MAJOR);
  EXPECT_EQ(api->api_version.minor_version, XLA_FFI_API_MINOR);
}

TEST(FfiAbi, StreamAndRegistrationAreUnimplementedOnTheHost) {
  const XLA_FFI_Api* api = HostFfiApi();
  XLA_FFI_Stream_Get_Args stream{};
  stream.struct_size = XLA_FFI_Stream_Get_Args_STRUCT_SIZE;
  absl::Status s = ConsumeFfiError(api->XLA_FFI_Stream_Get(&stream));
  EXPECT_TRUE(absl::IsUnimplemented(s)) << s;
  XLA_FFI_DeviceMemory_Allocate_Args alloc{};
  alloc.struct_size = XLA_FFI_DeviceMemory_Allocate_Args_STRUCT_SIZE;
  alloc.size = 100;
  alloc.alignment = 64;
  ASSERT_TRUE(ConsumeFfiError(api->XLA_FFI_DeviceMemory_Allocate(&alloc)).ok());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(alloc.data) % 64, 0u);
  XLA_FFI_DeviceMemory_Free_Args free_args{};
  free_args.struct_size = XLA_FFI_DeviceMemory_Free_Args_STRUCT_SIZE;
  free_args.data = alloc.data;
  free_args.size = 100;
  EXPECT_TRUE(ConsumeFfiError(api->XLA_FFI_DeviceMemory_Free(&free_args)).ok());
}

TEST(FfiLibrary, LoadErrors) {
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> missing = HandlerLibraries::Load({"/nonexistent/libx.so"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().message(),
            "cannot load custom-call library '/nonexistent/libx.so': /nonexistent/libx.so: cannot open shared object "
            "file: No such file or directory");
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> bad_symbol =
      HandlerLibraries::Load({std::string(XLAC_FFI_TEST_LIB) + ":my.target=no_such_symbol"});
  ASSERT_FALSE(bad_symbol.ok());
  EXPECT_NE(bad_symbol.status().message().find("has no symbol 'no_such_symbol' (mapped from target 'my.target')"),
            std::string::npos);
  EXPECT_FALSE(ParseHandlerLibrarySpec("lib.so:=x").ok());
}

TEST(FfiLibrary, FindsHandlersByTheRules) {
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> libs =
      HandlerLibraries::Load({std::string(XLAC_FFI_TEST_LIB) + ":my.scale=xlac_test_scale"});
  ASSERT_TRUE(libs.ok()) << libs.status();
  absl::StatusOr<const FfiHandler*> direct = (*libs)->Find("xlac_test_scale");
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_TRUE((*direct)->answered_probe);
  EXPECT_EQ((*direct)->api_major, 0);
  EXPECT_EQ((*direct)->api_minor, 1);
  EXPECT_EQ((*direct)->bundle.instantiate, nullptr);
  EXPECT_EQ((*libs)->Find("my.scale").value()->symbol, "xlac_test_scale");              // the mapping
  EXPECT_EQ((*libs)->Find("xlac.test.scale").value()->symbol, "xlac_test_scale");       // sanitized
  EXPECT_NE((*libs)->Find("xlac_test_stateful").value()->bundle.instantiate, nullptr);  // SYMBOL_instantiate
  // Symbols of the library's dependencies are not handlers (dlsym alone would find libc's malloc).
  EXPECT_TRUE(absl::IsNotFound((*libs)->Find("malloc").status()));
  EXPECT_TRUE(absl::IsNotFound((*libs)->Find("tanh").status()));
  absl::StatusOr<const FfiHandler*> none = (*libs)->Find("nope");
  EXPECT_TRUE(absl::IsNotFound(none.status()));
  EXPECT_EQ(none.status().message(), "no XLA FFI handler for custom call target 'nope' (looked for 'nope' in " +
                                         std::string(XLAC_FFI_TEST_LIB) + ")");
  absl::StatusOr<const FfiHandler*> future = (*libs)->Find("xlac_test_future_major");
  EXPECT_TRUE(absl::IsFailedPrecondition(future.status()));
  EXPECT_NE(future.status().message().find("was built for XLA FFI API 1.0; xlac implements 0.1"), std::string::npos);
}

constexpr char kModule[] = R"(HloModule ffi

ENTRY main {
  x = f32[2,3] parameter(0)
  y = f32[2,3] parameter(1)
  s = f32[2,3] custom-call(x), custom_call_target="xlac_test_scale", api_version=API_VERSION_TYPED_FFI, backend_config={alpha = 2.5 : f32}
  t = (f32[2,3], f32[2,3]) custom-call(s, y), custom_call_target="xlac_test_add_mul", api_version=API_VERSION_TYPED_FFI
  a = f32[2,3] get-tuple-element(t), index=0
  m = f32[2,3] get-tuple-element(t), index=1
  b = f32[2,3] custom-call(m), custom_call_target="xlac_test_attrs", api_version=API_VERSION_TYPED_FFI, backend_config="{name = \"abc\", offsets = array<i32: 10, 20, 30>, scale = 2 : i8}"
  c = f32[2,3] custom-call(a), custom_call_target="xlac_test_stateful", api_version=API_VERSION_TYPED_FFI, backend_config={base = 100.0 : f64}
  ROOT r = (f32[2,3], f32[2,3], f32[2,3]) tuple(a, b, c)
}
)";

Literal Iota(float start) {
  Literal lit(Shape::Array(PrimitiveType::kF32, {2, 3}));
  for (int i = 0; i < 6; ++i) lit.Set<float>(i, start + i);
  return lit;
}

TEST(FfiLibrary, InterpreterCallsTheHandlers) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kModule);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> libs = HandlerLibraries::Load({XLAC_FFI_TEST_LIB});
  ASSERT_TRUE(libs.ok()) << libs.status();
  EXPECT_TRUE((*libs)->MissingHandlers(**module, nullptr).empty());
  interp::InterpreterOptions options;
  options.custom_call_handler = (*libs)->MakeCustomCallHandler(nullptr, "ffi.hlo");
  std::vector<Literal> args;
  args.push_back(Iota(1));
  args.push_back(Iota(10));
  absl::StatusOr<std::vector<Literal>> results = interp::Evaluate(**module, {std::move(args)}, options);
  ASSERT_TRUE(results.ok()) << results.status();
  const Literal& r = (*results)[0];
  for (int i = 0; i < 6; ++i) {
    const float s = (1 + i) * 2.5f, y = 10 + i;
    EXPECT_EQ(r.tuple_elements()[0].Get<float>(i), s + y);
    EXPECT_EQ(r.tuple_elements()[1].Get<float>(i), (s * y) * 2 + 10 * (1 + i % 3) + 3) << i;
    EXPECT_EQ(r.tuple_elements()[2].Get<float>(i), s + y + 100);
  }
}

TEST(FfiLibrary, HandlerErrorsNameTheCall) {
  constexpr char kFailing[] = R"(HloModule fail

ENTRY main {
  x = f32[4] parameter(0)
  ROOT f = f32[4] custom-call(x), custom_call_target="xlac_test_fail", api_version=API_VERSION_TYPED_FFI, backend_config={reason = "bad input"}
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kFailing);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> libs = HandlerLibraries::Load({XLAC_FFI_TEST_LIB});
  ASSERT_TRUE(libs.ok()) << libs.status();
  interp::InterpreterOptions options;
  options.custom_call_handler = (*libs)->MakeCustomCallHandler(nullptr, "fail.hlo");
  std::vector<Literal> args;
  args.emplace_back(Shape::Array(PrimitiveType::kF32, {4}));
  absl::StatusOr<std::vector<Literal>> results = interp::Evaluate(**module, {std::move(args)}, options);
  ASSERT_FALSE(results.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(results.status())) << results.status();
  EXPECT_NE(results.status().message().find(
                "custom call 'f' (target 'xlac_test_fail') at fail.hlo:5:8 failed: bad input (operand rank 1)"),
            std::string::npos)
      << results.status();
}

TEST(FfiLibrary, AsynchronousHandlersAreWaitedFor) {
  constexpr char kAsync[] = R"(HloModule async

ENTRY main {
  x = f32[64] parameter(0)
  a = f32[64] custom-call(x), custom_call_target="xlac_test_async", api_version=API_VERSION_TYPED_FFI
  ROOT b = f32[64] custom-call(a), custom_call_target="xlac_test_async", api_version=API_VERSION_TYPED_FFI
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kAsync);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> libs = HandlerLibraries::Load({XLAC_FFI_TEST_LIB});
  ASSERT_TRUE(libs.ok()) << libs.status();
  interp::InterpreterOptions options;
  options.custom_call_handler = (*libs)->MakeCustomCallHandler(nullptr, "async.hlo");
  for (int run = 0; run < 20; ++run) {
    std::vector<Literal> args;
    args.emplace_back(Shape::Array(PrimitiveType::kF32, {64}));
    for (int i = 0; i < 64; ++i) args[0].Set<float>(i, i + run);
    absl::StatusOr<std::vector<Literal>> results = interp::Evaluate(**module, {std::move(args)}, options);
    ASSERT_TRUE(results.ok()) << results.status();
    for (int i = 0; i < 64; ++i) ASSERT_EQ((*results)[0].Get<float>(i), i + run + 2);
  }
  // The future's error is the call's.
  std::string failing(kAsync);
  failing.replace(failing.rfind("api_version=API_VERSION_TYPED_FFI"), std::strlen("api_version=API_VERSION_TYPED_FFI"),
                  "api_version=API_VERSION_TYPED_FFI, backend_config={fail = true}");
  module = ParseHloModule(failing);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args;
  args.emplace_back(Shape::Array(PrimitiveType::kF32, {64}));
  options.custom_call_handler = (*libs)->MakeCustomCallHandler(nullptr, "async.hlo");
  absl::StatusOr<std::vector<Literal>> results = interp::Evaluate(**module, {std::move(args)}, options);
  ASSERT_FALSE(results.ok());
  EXPECT_EQ(results.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(results.status().message().find("failed: the asynchronous work failed"), std::string::npos)
      << results.status();
}

TEST(FfiLibrary, MissingHandlersAndFallback) {
  constexpr char kOther[] = R"(HloModule other

ENTRY main {
  x = f32[4] parameter(0)
  a = f32[4] custom-call(x), custom_call_target="not_in_any_lib", api_version=API_VERSION_TYPED_FFI
  ROOT b = f32[4] custom-call(a), custom_call_target="user_target"
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kOther);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::shared_ptr<const HandlerLibraries>> libs = HandlerLibraries::Load({XLAC_FFI_TEST_LIB});
  ASSERT_TRUE(libs.ok()) << libs.status();
  std::vector<HandlerLibraries::Missing> missing = (*libs)->MissingHandlers(**module, nullptr);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].loc.line, 5);
  EXPECT_EQ(missing[0].message,
            "no XLA FFI handler for custom call target 'not_in_any_lib' (looked for "
            "'not_in_any_lib' in " +
                std::string(XLAC_FFI_TEST_LIB) + ")");
  EXPECT_TRUE((*libs)->MissingHandlers(**module, [](std::string_view t) { return t == "not_in_any_lib"; }).empty());
  // Targets no library has go to the fallback.
  int fallback_calls = 0;
  interp::InterpreterOptions options;
  options.custom_call_handler = (*libs)->MakeCustomCallHandler(
      [&fallback_calls](const Instruction& inst,
                        const std::vector<const Literal*>& operands) -> absl::StatusOr<Literal> {
        ++fallback_calls;
        return *operands[0];
      },
      "other.hlo");
  std::vector<Literal> args;
  args.emplace_back(Shape::Array(PrimitiveType::kF32, {4}));
  absl::StatusOr<std::vector<Literal>> results = interp::Evaluate(**module, {std::move(args)}, options);
  ASSERT_TRUE(results.ok()) << results.status();
  EXPECT_EQ(fallback_calls, 2);
}

}  // namespace
}  // namespace xlac::ffi
