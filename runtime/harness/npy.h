// numpy's .npy format for array literals (https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html):
// versions 1.0, 2.0 and 3.0 are read, 1.0 is written (2.0 when the header needs it); C order only (fortran_order
// True is rejected); little-endian data ('<', '|', or '=' on this little-endian host; '>' only for 1-byte types).
//
// dtype mapping (what is written / what else is accepted when reading for a given element type):
//   pred '|b1'   s8 '|i1'   s16 '<i2'  s32 '<i4'  s64 '<i8'   u8 '|u1'  u16 '<u2'  u32 '<u4'  u64 '<u8'
//   f16 '<f2'    f32 '<f4'  f64 '<f8'  c64 '<c8'  c128 '<c16'
// Types numpy has no dtype for are stored as raw bits in an unsigned integer of their storage width, which numpy
// reads as plain integers and ml_dtypes users `.view(ml_dtypes.bfloat16)`:
//   bf16 '<u2' (bit pattern); f8* / f6* / f4* '|u1' (bit pattern in the low bits);
//   s2/s4 '|i1' (value), u2/u4 '|u1' (value).
// Reading also accepts numpy's own spelling of ml_dtypes arrays: the void descr of the right width ('<V2' for
// bf16, '|V1' for the 8-bit-or-smaller floats), and the ml_dtypes names ('bfloat16', 'float8_e4m3fn', 'int4', ...).
// Sub-byte values outside their type's range are rejected, as are bool bytes other than 0 and 1.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/literal.h"

namespace xlac::harness {

struct NpyHeader {
  int major_version = 1;
  std::string descr;  // as written, e.g. "<f4"
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;  // where the element data starts in the file
};

// Parses and validates the magic string, version and header dictionary.
absl::StatusOr<NpyHeader> ParseNpyHeader(std::string_view bytes);

// The descr written for `type` (table above). Precondition: IsArrayType(type).
std::string NpyDescrFor(PrimitiveType type);

// numpy's spelling of a shape: "()", "(3,)", "(2, 3)".
std::string NpyShapeString(const std::vector<int64_t>& shape);

// Encodes an array literal. Tuples, tokens and unknown (elided) literals are errors.
absl::StatusOr<std::string> LiteralToNpy(const Literal& literal);

// Decodes an array of element type `type` with the file's shape; the descr must be one the table accepts for
// `type`. Errors say which dtype was found and which were expected.
absl::StatusOr<Literal> NpyToLiteral(std::string_view bytes, PrimitiveType type);

// Decodes with the element type the descr names (standard numpy dtypes as in the table, raw-bits descrs as the
// unsigned integer types they are, ml_dtypes names as their types).
absl::StatusOr<Literal> NpyToLiteral(std::string_view bytes);

}  // namespace xlac::harness
