// Helpers for the codegen_*_test.cc files: compile HLO text with the JIT and compare with the reference interpreter
// on the same seeded random (or given) arguments: bit for bit in exact mode, within the default mode's documented
// tolerance otherwise (docs/numerics.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "absl/strings/str_replace.h"
#include "codegen/jit.h"
#include "frontend/hlo/parser.h"
#include "frontend/hlo/printer.h"
#include "gtest/gtest.h"
#include "passes/verifier.h"
#include "runtime/harness/checks.h"
#include "runtime/interpreter/interpreter.h"

namespace xlac::codegen::testing {

inline std::unique_ptr<Module> ParseAndVerify(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "<test>");
  EXPECT_TRUE(module.ok()) << module.status().ToString() << "\n" << text;
  if (!module.ok()) return nullptr;
  DiagnosticEngine diags;
  SourceFile file("<test>", text);
  bool ok = VerifyModule(**module, diags);
  EXPECT_TRUE(ok) << diags.Render(file) << "\n" << text;
  if (!ok) return nullptr;
  return *std::move(module);
}

// NaN results match any NaN: XLA leaves NaN signs and payloads unspecified, and LLVM may commute an fadd of two NaNs
// (xla-run --check-against=interpreter has the same rule). Complex values compare part by part.
inline bool BothNaN(PrimitiveType type, const uint8_t* a, const uint8_t* b) {
  auto nan_f32 = [](const uint8_t* p) {
    float v;
    std::memcpy(&v, p, sizeof v);
    return std::isnan(v);
  };
  auto nan_f64 = [](const uint8_t* p) {
    double v;
    std::memcpy(&v, p, sizeof v);
    return std::isnan(v);
  };
  auto same_or_nan = [&](auto nan, const uint8_t* x, const uint8_t* y, size_t n) {
    return std::memcmp(x, y, n) == 0 || (nan(x) && nan(y));
  };
  if (type == PrimitiveType::kC64) return same_or_nan(nan_f32, a, b, 4) && same_or_nan(nan_f32, a + 4, b + 4, 4);
  if (type == PrimitiveType::kC128) return same_or_nan(nan_f64, a, b, 8) && same_or_nan(nan_f64, a + 8, b + 8, 8);
  if (!IsFloatingPointType(type)) return false;
  Literal x(Shape::Scalar(type)), y(Shape::Scalar(type));
  std::memcpy(x.mutable_raw_data(), a, static_cast<size_t>(ByteWidth(type)));
  std::memcpy(y.mutable_raw_data(), b, static_cast<size_t>(ByteWidth(type)));
  return std::isnan(x.GetAsDouble(0)) && std::isnan(y.GetAsDouble(0));
}

// The default numerics mode's tolerance for one real floating-point element (the rule of
// ElementWithinDefaultTolerance in tools/lib/run_compare.cc, docs/numerics.md): within 16 ULP, or
// |got - want| <= 1024 eps * max(1, |want|) with eps the compute type's epsilon (2^-52 for f64, else 2^-23), or for
// types narrower than f32 within one epsilon of their own type times max(1, |want|).
inline bool WithinDefaultTolerance(PrimitiveType type, const uint8_t* got, const uint8_t* want) {
  size_t width = static_cast<size_t>(ByteWidth(type));
  uint64_t a_bits = 0, b_bits = 0;
  std::memcpy(&a_bits, got, width);
  std::memcpy(&b_bits, want, width);
  if (harness::UlpDistance(a_bits, b_bits, type) <= 16) return true;
  Literal a(Shape::Scalar(type)), b(Shape::Scalar(type));
  std::memcpy(a.mutable_raw_data(), got, width);
  std::memcpy(b.mutable_raw_data(), want, width);
  double x = a.GetAsDouble(0), y = b.GetAsDouble(0);
  double eps = type == PrimitiveType::kF64 ? 0x1p-52 : 0x1p-23;
  const double scale = std::max(1.0, std::fabs(y));
  if (std::fabs(x - y) <= 1024 * eps * scale) return true;
  if (ByteWidth(type) >= 4) return false;
  // Narrower types: one epsilon of their own (the distance from 1 to the next value).
  Literal one(Shape::Scalar(type));
  one.SetFromDouble(0, 1.0);
  uint64_t one_bits = 0;
  std::memcpy(&one_bits, one.raw_data(), width);
  ++one_bits;
  Literal next(Shape::Scalar(type));
  std::memcpy(next.mutable_raw_data(), &one_bits, width);
  return std::fabs(x - y) <= (next.GetAsDouble(0) - 1.0) * scale;
}

inline bool WithinDefaultToleranceAnyFloat(PrimitiveType type, const uint8_t* got, const uint8_t* want) {
  if (type == PrimitiveType::kC64 || type == PrimitiveType::kC128) {
    PrimitiveType part = type == PrimitiveType::kC64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    int64_t w = ByteWidth(part);
    return WithinDefaultTolerance(part, got, want) && WithinDefaultTolerance(part, got + w, want + w);
  }
  return IsFloatingPointType(type) && WithinDefaultTolerance(type, got, want);
}

// First differing element of two literals of the same shape, described for a failure message ("" if equal).
// `tolerant`: floating-point elements may differ within the default mode's tolerance.
inline std::string DescribeDifference(const Literal& expected, const Literal& actual, bool tolerant = false) {
  if (expected.is_tuple()) {
    for (size_t i = 0; i < expected.tuple_elements().size(); ++i) {
      std::string d = DescribeDifference(expected.tuple_elements()[i], actual.tuple_elements()[i], tolerant);
      if (!d.empty()) return "tuple element " + std::to_string(i) + ": " + d;
    }
    return "";
  }
  PrimitiveType type = expected.shape().element_type;
  int64_t w = ByteWidth(type);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    if (std::memcmp(expected.raw_data() + i * w, actual.raw_data() + i * w, static_cast<size_t>(w)) != 0 &&
        !BothNaN(type, expected.raw_data() + i * w, actual.raw_data() + i * w) &&
        !(tolerant && WithinDefaultToleranceAnyFloat(type, actual.raw_data() + i * w, expected.raw_data() + i * w))) {
      return "element " + std::to_string(i) + ": expected " + std::to_string(expected.GetAsDouble(i)) + ", got " +
             std::to_string(actual.GetAsDouble(i));
    }
  }
  return "";
}

// The optimized LLVM IR the JIT compiles `module` to (empty, with a test failure, when it does not compile).
inline std::string CompiledLlvmIr(const Module& module, bool exact = false) {
  JitOptions options;
  options.keep_llvm_ir = true;
  options.compile.prebuilt_gemms = false;  // the IR the emitter writes, GEMM functions included
  options.compile.exact = exact;
  absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(module, options);
  EXPECT_TRUE(exe.ok()) << exe.status().ToString();
  return exe.ok() ? (*exe)->llvm_ir() : std::string();
}

// How many functions of `ir` (LLVM IR text) have a name starting with `prefix` (a regular expression).
inline int CountDefinitions(const std::string& ir, const std::string& prefix) {
  std::regex define("define [^@]*@" + prefix);
  return static_cast<int>(std::distance(std::sregex_iterator(ir.begin(), ir.end(), define), std::sregex_iterator()));
}

// Compiles `text` with the JIT in both numerics modes and checks it against the interpreter: exact mode bit for bit,
// the default mode within its tolerance. Arguments default to MakeRandomLiteral.
inline void ExpectMatchesInterpreter(const std::string& text, std::vector<Literal> args = {}, uint64_t seed = 7,
                                     int opt_level = 2) {
  std::unique_ptr<Module> module = ParseAndVerify(text);
  if (!module) return;
  const Computation* entry = module->entry_computation();
  if (args.empty()) {
    for (int64_t i = 0; i < entry->parameter_count(); ++i) {
      args.push_back(interp::MakeRandomLiteral(entry->parameter(i)->shape(), seed + static_cast<uint64_t>(i)));
    }
  }
  absl::StatusOr<std::vector<Literal>> expected = interp::Evaluate(*module, {args});
  ASSERT_TRUE(expected.ok()) << expected.status().ToString() << "\n" << text;
  for (bool exact : {true, false}) {
    JitOptions options;
    options.compile.opt_level = opt_level;
    options.compile.exact = exact;
    const char* mode = exact ? "exact mode" : "default mode";
    absl::StatusOr<std::unique_ptr<JitExecutable>> exe = JitExecutable::Compile(*module, options);
    ASSERT_TRUE(exe.ok()) << mode << ": " << exe.status().ToString() << "\n" << text;
    absl::StatusOr<std::vector<Literal>> actual = (*exe)->Run(args);
    ASSERT_TRUE(actual.ok()) << mode << ": " << actual.status().ToString() << "\n" << text;
    ASSERT_EQ(actual->size(), expected->size());
    for (size_t d = 0; d < actual->size(); ++d) {
      std::string difference = DescribeDifference((*expected)[d], (*actual)[d], !exact);
      EXPECT_TRUE(difference.empty()) << mode << ": " << difference << "\n" << text;
    }
  }
}

// `text` with every "$T" replaced by `type`.
inline std::string WithType(const std::string& text, const std::string& type) {
  return absl::StrReplaceAll(text, {{"$T", type}});
}

}  // namespace xlac::codegen::testing
