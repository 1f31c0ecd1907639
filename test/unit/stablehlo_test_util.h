// Helpers shared by the StableHLO frontend's unit tests: parse (and verify) text named test.mlir, collect the
// rendered diagnostics, and find ops in the result.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "frontend/stablehlo/parser.h"
#include "gtest/gtest.h"
#include "ir/module.h"
#include "passes/verifier.h"

namespace xlac::stablehlo_testing {

struct Parsed {
  std::unique_ptr<Module> module;
  std::string errors;  // rendered diagnostics (parse or verify)
};

inline Parsed Parse(std::string_view text, bool verify = true) {
  SourceFile file("test.mlir", text);
  DiagnosticEngine diags;
  Parsed out;
  out.module = ParseStableHloModule(file, diags);
  if (out.module != nullptr && verify) {
    DiagnosticEngine verify_diags;
    if (!VerifyModule(*out.module, verify_diags)) {
      out.errors = verify_diags.Render(file);
      out.module.reset();
      return out;
    }
  }
  out.errors = diags.Render(file);
  return out;
}

// Parses and verifies; fails the test with the diagnostics otherwise.
inline std::unique_ptr<Module> MustParse(std::string_view text) {
  Parsed p = Parse(text);
  EXPECT_NE(p.module, nullptr) << p.errors;
  return std::move(p.module);
}

inline std::string ErrorOf(std::string_view text) {
  Parsed p = Parse(text, /*verify=*/false);
  EXPECT_EQ(p.module, nullptr) << "expected a parse error";
  return p.errors;
}

inline const Instruction* FindOp(const Computation* comp, Opcode opcode, int nth = 0) {
  for (const auto& inst : comp->instructions()) {
    if (inst->opcode() == opcode && nth-- == 0) return inst.get();
  }
  return nullptr;
}

inline int CountOp(const Module& m, Opcode opcode) {
  int n = 0;
  for (const auto& comp : m.computations()) {
    for (const auto& inst : comp->instructions()) n += inst->opcode() == opcode;
  }
  return n;
}

inline const Computation* Entry(const Module& m) { return m.entry_computation(); }

}  // namespace xlac::stablehlo_testing
