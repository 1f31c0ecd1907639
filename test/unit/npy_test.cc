// .npy reading and writing (runtime/harness/npy.h): round trips for every element type, numpy's exact header
// layout, the raw-bits and ml_dtypes spellings of types numpy lacks, and the errors.
#include "runtime/harness/npy.h"

#include <string>

#include "gtest/gtest.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::harness {
namespace {

// A .npy file with the given header dict (padded as numpy does) and data bytes.
std::string MakeNpy(const std::string& dict, const std::string& data, int version = 1) {
  const size_t prefix = version == 1 ? 10 : 12;
  std::string header = dict;
  size_t total = (prefix + header.size() + 1 + 63) / 64 * 64;
  header.append(total - prefix - header.size() - 1, ' ');
  header += '\n';
  std::string out("\x93NUMPY", 6);
  out += static_cast<char>(version);
  out += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) out += static_cast<char>((header.size() >> (8 * i)) & 0xff);
  return out + header + data;
}

std::string Bytes(std::initializer_list<int> values) {
  std::string s;
  for (int v : values) s += static_cast<char>(v);
  return s;
}

TEST(Npy, RoundTripsEveryElementType) {
  for (int i = 0; i <= static_cast<int>(PrimitiveType::kToken); ++i) {
    PrimitiveType type = static_cast<PrimitiveType>(i);
    if (!IsArrayType(type)) continue;
    SCOPED_TRACE(std::string(PrimitiveTypeName(type)));
    Literal original = interp::MakeRandomLiteral(Shape::Array(type, {2, 3}), 17 + i);
    absl::StatusOr<std::string> bytes = LiteralToNpy(original);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    absl::StatusOr<NpyHeader> header = ParseNpyHeader(*bytes);
    ASSERT_TRUE(header.ok()) << header.status();
    EXPECT_EQ(header->descr, NpyDescrFor(type));
    EXPECT_EQ(header->shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(header->data_offset % 64, 0u);
    absl::StatusOr<Literal> back = NpyToLiteral(*bytes, type);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_TRUE(*back == original);
  }
}

TEST(Npy, DescrTable) {
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kPred), "|b1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kS8), "|i1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kS64), "<i8");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kU16), "<u2");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF16), "<f2");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF32), "<f4");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF64), "<f8");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kC64), "<c8");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kC128), "<c16");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kBF16), "<u2");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kF8E4M3FN), "|u1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kS4), "|i1");
  EXPECT_EQ(NpyDescrFor(PrimitiveType::kU4), "|u1");
}

TEST(Npy, WritesNumpysExactHeader) {
  Literal lit(Shape::Array(PrimitiveType::kS32, {3}));
  for (int i = 0; i < 3; ++i) lit.Set<int32_t>(i, i + 1);
  absl::StatusOr<std::string> bytes = LiteralToNpy(lit);
  ASSERT_TRUE(bytes.ok());
  // np.save of np.array([1, 2, 3], dtype='<i4') with numpy >= 1.x: 128-byte header, version 1.0.
  std::string expected =
      MakeNpy("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }", Bytes({1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0}));
  EXPECT_EQ(*bytes, expected);
  EXPECT_EQ(bytes->size(), 128u + 12u);

  Literal scalar(Shape::Scalar(PrimitiveType::kF64));
  absl::StatusOr<std::string> sbytes = LiteralToNpy(scalar);
  ASSERT_TRUE(sbytes.ok());
  EXPECT_NE(sbytes->find("'shape': (), }"), std::string::npos);
}

TEST(Npy, ReadsVersion2And3AndDoubleQuotes) {
  for (int version : {2, 3}) {
    std::string file =
        MakeNpy("{\"descr\":\"<i2\",\"fortran_order\":False,\"shape\":(2, 1)}", Bytes({5, 0, 250, 255}), version);
    absl::StatusOr<Literal> lit = NpyToLiteral(file);
    ASSERT_TRUE(lit.ok()) << lit.status();
    EXPECT_EQ(lit->shape().element_type, PrimitiveType::kS16);
    EXPECT_EQ(lit->shape().dimensions, (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(lit->GetAsInt64(0), 5);
    EXPECT_EQ(lit->GetAsInt64(1), -6);
  }
}

TEST(Npy, AcceptsMlDtypesSpellingsOfBf16AndF8) {
  std::string data = Bytes({0x80, 0x3f});  // bf16 1.0
  for (const char* descr : {"<u2", "<V2", "bfloat16"}) {
    SCOPED_TRACE(descr);
    std::string file =
        MakeNpy(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }", data);
    absl::StatusOr<Literal> lit = NpyToLiteral(file, PrimitiveType::kBF16);
    ASSERT_TRUE(lit.ok()) << lit.status();
    EXPECT_EQ(lit->GetAsDouble(0), 1.0);
  }
  std::string f8 = MakeNpy("{'descr': 'float8_e4m3fn', 'fortran_order': False, 'shape': (1,), }", Bytes({0x38}));
  absl::StatusOr<Literal> lit = NpyToLiteral(f8);
  ASSERT_TRUE(lit.ok()) << lit.status();
  EXPECT_EQ(lit->shape().element_type, PrimitiveType::kF8E4M3FN);
  EXPECT_EQ(lit->GetAsDouble(0), 1.0);
  // The raw-bits form read without a target type is just an unsigned integer.
  absl::StatusOr<Literal> raw =
      NpyToLiteral(MakeNpy("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", data));
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ(raw->shape().element_type, PrimitiveType::kU16);
}

std::string ErrorOf(const absl::StatusOr<Literal>& result) {
  EXPECT_FALSE(result.ok());
  return result.ok() ? "" : std::string(result.status().message());
}

TEST(Npy, Errors) {
  const std::string four = Bytes({0, 0, 128, 63});
  EXPECT_NE(ErrorOf(NpyToLiteral("not an npy file")).find("missing the \\x93NUMPY magic"), std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '<f4', 'fortran_order': True, 'shape': (1,), }", four)))
                .find("fortran_order=True arrays are not supported"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four),
                                 PrimitiveType::kF64))
                .find("dtype '<f4' does not match element type f64 (expected '<f8')"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", four)))
                .find("the data is 4 bytes, but shape (2,) of '<f4' needs 8"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }", four)))
                .find("big-endian"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", four)))
                .find("structured dtypes"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '<f4', 'shape': (1,), }", four))).find("must have"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four, 4)))
                .find("unsupported .npy format version 4.0"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '<U3', 'fortran_order': False, 'shape': (1,), }", four)))
                .find("unsupported .npy dtype '<U3'"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", Bytes({2}))))
                .find("element 0 (2) is out of range for pred"),
            std::string::npos);
  EXPECT_NE(ErrorOf(NpyToLiteral(MakeNpy("{'descr': '|i1', 'fortran_order': False, 'shape': (2,), }", Bytes({7, 8})),
                                 PrimitiveType::kS4))
                .find("element 1 (8) is out of range for s4"),
            std::string::npos);
  std::string truncated = MakeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", four).substr(0, 30);
  EXPECT_NE(ErrorOf(NpyToLiteral(truncated)).find("truncated"), std::string::npos);
  Literal tuple = Literal::CreateTuple({});
  EXPECT_FALSE(LiteralToNpy(tuple).ok());
  EXPECT_FALSE(LiteralToNpy(Literal::CreateUnknown(Shape::Array(PrimitiveType::kF32, {2}))).ok());
}

TEST(Npy, ShapeString) {
  EXPECT_EQ(NpyShapeString({}), "()");
  EXPECT_EQ(NpyShapeString({3}), "(3,)");
  EXPECT_EQ(NpyShapeString({2, 0, 4}), "(2, 0, 4)");
}

}  // namespace
}  // namespace xlac::harness
