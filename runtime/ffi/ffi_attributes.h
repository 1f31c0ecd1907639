// Attributes of a typed-FFI custom call (api_version = 4) as XLA passes them to a handler: parsed from the call's
// backend_config and encoded as an XLA_FFI_Attrs tree (runtime/ffi/xla_ffi_c_api.h).
//
// The backend_config is an MLIR attribute dictionary, in either form a module carries it:
//   - StableHLO `mhlo.backend_config = {alpha = 1.5 : f32, n = 3 : i64, name = "x"}` (JAX's jax.ffi.ffi_call), kept
//     by the frontend as the raw dictionary text, and HLO `backend_config={...}`;
//   - a string holding the same dictionary (`backend_config = "{alpha = 1.5 : f32}"`), as XLA parses it;
//   - JSON-style `{"alpha": 1.5, "n": 3}` is accepted too (keys quoted, ':' between key and value).
// Values: integers with an optional `: iN` / `: siN` / `: uiN` type (N = 8, 16, 32, 64; i1 is a bool; default i64),
// floats with `: f32` / `: f64` (default f64; a hex literal with a float type is its bit pattern), `true` / `false`
// (PRED), strings, dense arrays `array<i32: 1, 2>` (i8..i64, f32, f64), `dense<[1, 2]> : tensor<2xi32>`, bracketed
// lists of scalars `[1, 2, 3]` (one element type; an xlac extension, XLA takes dense arrays only), and nested
// dictionaries. Names are sorted byte-wise, as XLA sorts them. An empty config means no attributes.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "runtime/ffi/xla_ffi_c_api.h"

namespace xlac::ffi {

struct FfiAttr;
using FfiAttrMap = std::vector<std::pair<std::string, FfiAttr>>;  // sorted by name, names unique

struct FfiAttr {
  enum class Kind { kScalar, kArray, kString, kDictionary };
  Kind kind = Kind::kScalar;
  XLA_FFI_DataType dtype = XLA_FFI_DataType_INVALID;  // kScalar, kArray
  std::vector<uint8_t> bytes;                         // kScalar: one element; kArray: `count` elements
  size_t count = 0;                                   // kArray
  std::string str;                                    // kString
  std::shared_ptr<FfiAttrMap> dict;                   // kDictionary

  // Typed reads for tests and diagnostics. Precondition: kScalar of a matching width.
  template <typename T>
  T As() const {
    T v{};
    std::memcpy(&v, bytes.data(), sizeof(T));
    return v;
  }
};

// Parses a backend_config as described above. Errors are InvalidArgument naming the offset into the text.
absl::StatusOr<FfiAttrMap> ParseFfiAttributes(std::string_view backend_config);

// Bytes of one element of an attribute dtype (0 for types attributes never have).
size_t FfiDataTypeBytes(XLA_FFI_DataType dtype);

// An XLA_FFI_Attrs tree over a parsed map: owns every struct, span and value the handler's pointers reach, so it
// must outlive the calls that use it. Not copyable or movable (the pointers point into it). Read-only once built:
// device threads may share one.
class EncodedFfiAttrs {
 public:
  explicit EncodedFfiAttrs(FfiAttrMap attrs);
  ~EncodedFfiAttrs();
  EncodedFfiAttrs(const EncodedFfiAttrs&) = delete;
  EncodedFfiAttrs& operator=(const EncodedFfiAttrs&) = delete;

  const XLA_FFI_Attrs& attrs() const { return *root_; }
  const FfiAttrMap& map() const { return map_; }

 private:
  struct Level;
  XLA_FFI_Attrs* Encode(FfiAttrMap& map);

  FfiAttrMap map_;
  std::vector<std::unique_ptr<Level>> levels_;
  XLA_FFI_Attrs* root_ = nullptr;
};

}  // namespace xlac::ffi
