// Helpers shared by the interpreter_*_test.cc files: parse + verify + evaluate HLO text, and build/read literals.
#pragma once

#include <cmath>
#include <complex>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "frontend/hlo/parser.h"
#include "gtest/gtest.h"
#include "ir/float_types.h"
#include "ir/status_macros.h"
#include "passes/verifier.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::interp::testing {

using c64 = std::complex<float>;
using c128 = std::complex<double>;

inline std::unique_ptr<Module> ParseAndVerify(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().ToString();
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  SourceFile file("<test>", text);
  bool ok = VerifyModule(**module, diags);
  EXPECT_TRUE(ok) << diags.Render(file);
  if (!ok) return nullptr;
  return *std::move(module);
}

// Evaluates on one device; every argument list is the same.
inline absl::StatusOr<Literal> RunHlo(const std::string& text, std::vector<Literal> args = {},
                                      InterpreterOptions options = {}) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return absl::InvalidArgumentError("module did not parse or verify");
  absl::StatusOr<std::vector<Literal>> r = Evaluate(*module, {std::move(args)}, options);
  if (!r.ok()) return r.status();
  return std::move((*r)[0]);
}

// Evaluates on every device; returns one result per device.
inline absl::StatusOr<std::vector<Literal>> RunAll(const std::string& text, std::vector<std::vector<Literal>> args,
                                                   InterpreterOptions options) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return absl::InvalidArgumentError("module did not parse or verify");
  return Evaluate(*module, args, options);
}

// Array literal of `type` and `dims` from doubles (rounded to the type as SetFromDouble does).
inline Literal Arr(PrimitiveType type, std::vector<int64_t> dims, const std::vector<double>& values) {
  Literal lit(Shape::Array(type, std::move(dims)));
  EXPECT_EQ(static_cast<size_t>(lit.element_count()), values.size());
  for (size_t i = 0; i < values.size() && static_cast<int64_t>(i) < lit.element_count(); ++i) {
    if (IsIntegralType(type) || type == PrimitiveType::kPred) {
      lit.SetFromInt64(static_cast<int64_t>(i), static_cast<int64_t>(values[i]));
    } else {
      lit.SetFromDouble(static_cast<int64_t>(i), values[i]);
    }
  }
  return lit;
}
inline Literal Vec(PrimitiveType type, const std::vector<double>& values) {
  return Arr(type, {static_cast<int64_t>(values.size())}, values);
}
inline Literal Scalar(PrimitiveType type, double v) { return Arr(type, {}, {v}); }
// Integer literal from exact int64 values (no double rounding).
inline Literal Ints(PrimitiveType type, std::vector<int64_t> dims, const std::vector<int64_t>& values) {
  Literal lit(Shape::Array(type, std::move(dims)));
  for (size_t i = 0; i < values.size(); ++i) lit.SetFromInt64(static_cast<int64_t>(i), values[i]);
  return lit;
}

inline std::vector<double> Doubles(const Literal& lit) {
  std::vector<double> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.GetAsDouble(i));
  return out;
}
inline std::vector<int64_t> Int64s(const Literal& lit) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(lit.GetAsInt64(i));
  return out;
}
inline std::vector<uint64_t> Uint64s(const Literal& lit) {
  std::vector<uint64_t> out;
  for (int64_t i = 0; i < lit.element_count(); ++i) out.push_back(static_cast<uint64_t>(lit.GetAsInt64(i)));
  return out;
}
// Raw storage bits of each element (ByteWidth bytes, little-endian).
inline std::vector<uint64_t> Bits(const Literal& lit) {
  std::vector<uint64_t> out;
  int64_t w = ByteWidth(lit.shape().element_type);
  for (int64_t i = 0; i < lit.element_count(); ++i) {
    uint64_t v = 0;
    std::memcpy(&v, lit.raw_data() + i * w, static_cast<size_t>(w));
    out.push_back(v);
  }
  return out;
}
inline uint32_t F32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof(b));
  return b;
}

// Asserts the evaluation succeeded and yields the literal.
#define XLAC_ASSERT_OK_AND_ASSIGN(lhs, expr)                                                      \
  auto XLAC_CONCAT(_r_, __LINE__) = (expr);                                                       \
  ASSERT_TRUE(XLAC_CONCAT(_r_, __LINE__).ok()) << XLAC_CONCAT(_r_, __LINE__).status().ToString(); \
  lhs = *std::move(XLAC_CONCAT(_r_, __LINE__))

}  // namespace xlac::interp::testing
