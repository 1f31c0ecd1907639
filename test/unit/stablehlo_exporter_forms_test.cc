// What real exporters write (torch-mlir, JAX, PyTorch/XLA with Shardy, tt-mlir/tt-xla): files of several modules,
// foreign dialect attributes, bit-packed i1 blobs, arith/tensor ops and locations on block arguments. Every prefix
// and random corruption of such text parses or fails with a located error.
#include <string>

#include "frontend/stablehlo/parser.h"
#include "gtest/gtest.h"
#include "stablehlo_test_util.h"

namespace xlac {
namespace {

using stablehlo_testing::CountOp;
using stablehlo_testing::Entry;
using stablehlo_testing::ErrorOf;
using stablehlo_testing::FindOp;
using stablehlo_testing::MustParse;

struct WithDiags {
  std::unique_ptr<Module> module;
  std::string rendered;
  int warnings = 0;
};

WithDiags ParseWithDiags(std::string_view text) {
  SourceFile file("test.mlir", text);
  DiagnosticEngine diags;
  WithDiags out;
  out.module = ParseStableHloModule(file, diags);
  out.rendered = diags.Render(file);
  for (const Diagnostic& d : diags.diagnostics()) out.warnings += d.severity == Severity::kWarning;
  return out;
}

constexpr std::string_view kTtirModule = R"(
module @g attributes {ttcore.meshes = #ttcore.meshes<[<"mesh" = 1x2>]>} {
  ttcore.device_module {
    builtin.module @g {
      func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
        %0 = ttir.empty() : tensor<4xf32>
        %1 = "ttir.abs"(%arg0, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        return %1 : tensor<4xf32>
      }
    }
  }
}
)";

constexpr std::string_view kShloModule = R"(
module @g {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.abs %arg0 : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)";

TEST(StableHloExporterFormsTest, ForeignModuleBeforeTheStableHloOneIsSkipped) {
  WithDiags p = ParseWithDiags(std::string(kTtirModule) + std::string(kShloModule));
  ASSERT_NE(p.module, nullptr) << p.rendered;
  EXPECT_EQ(p.warnings, 1);
  EXPECT_NE(p.rendered.find("test.mlir:2:1: warning: file holds 2 modules; using the second (@g, line 14); skipping "
                            "the first (@g, line 2): it holds builtin, ttcore, ttir ops"),
            std::string::npos)
      << p.rendered;
  EXPECT_NE(FindOp(Entry(*p.module), Opcode::kAbs), nullptr);
}

TEST(StableHloExporterFormsTest, RepeatedStableHloModuleIsSkipped) {
  // tt-xla logs print the same program once per compiler stage (a later one may hold ops xlac cannot even parse);
  // split-input-file tests hold distinct functions.
  const std::string later_stage = R"(
module @g {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = sdy.all_gather [{"x"}] %arg0 out_sharding=<@mesh, [{}]> : tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
)";
  WithDiags p = ParseWithDiags(std::string(kShloModule) + later_stage);
  ASSERT_NE(p.module, nullptr) << p.rendered;
  EXPECT_NE(p.rendered.find("skipping the second (@g, line 9): its function @main repeats one of an earlier module"),
            std::string::npos)
      << p.rendered;
}

TEST(StableHloExporterFormsTest, WithoutStableHloModuleTheFirstIsReadAndItsOpsReported) {
  WithDiags p = ParseWithDiags(std::string(kTtirModule) + std::string(kTtirModule));
  EXPECT_EQ(p.module, nullptr);
  EXPECT_NE(p.rendered.find("test.mlir:3:3: error:"), std::string::npos) << p.rendered;
}

TEST(StableHloExporterFormsTest, UnbalancedModulesAreLeftToTheParser) {
  std::string err = ErrorOf("module {\n  func.func @a() {\n    func.return\n  }\n\nmodule {\n}\n");
  EXPECT_NE(err.find("test.mlir:6:1: error: nested modules are not supported"), std::string::npos) << err;
}

TEST(StableHloExporterFormsTest, ForeignAttributeBodiesAreOpaque) {
  auto m = MustParse(R"(
    #a = #ttcore<local_shape local_shape = tensor<128xbf16>>
    func.func @main(%x: tensor<4xf32> {t.a = #a, t.b = #ttcore.plain, t.c = #t<"x>y" -> (z)>, t.d = !t.ty<[1, 2], "}">},
                    %y: tensor<4xf32, #ttnn.layout<1x1, memref<1x1x!ttcore.tile<32x32, f32>>>>) -> tensor<4xf32> {
      %0 = stablehlo.add %x, %y : (tensor<4xf32>, tensor<4xf32, #ttnn.layout<1x1>>) -> tensor<4xf32>
      return %0 : tensor<4xf32>
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOp(*m, Opcode::kAdd), 1);
}

TEST(StableHloExporterFormsTest, ForeignBodyErrorsAreLocated) {
  EXPECT_NE(ErrorOf("func.func @main(%x: tensor<4xf32> {a = #t<(]>}) -> tensor<4xf32> {\n"
                    "  return %x : tensor<4xf32>\n}\n")
                .find("test.mlir:1:44: error: unbalanced ']' in #t<...>: '(' is still open"),
            std::string::npos);
  EXPECT_NE(ErrorOf("func.func @main(%x: tensor<4xf32> {a = !t.x<<1>})").find("test.mlir:1:"), std::string::npos);
}

TEST(StableHloExporterFormsTest, BitPackedPredicates) {
  auto m = MustParse(R"(
    func.func @main() -> tensor<10xi1> {
      %0 = stablehlo.constant dense<"0x0502"> : tensor<10xi1>
      return %0 : tensor<10xi1>
    })");
  ASSERT_NE(m, nullptr);
  const Literal& lit = Entry(*m)->root()->literal();
  const uint8_t* bits = lit.raw_data();
  const uint8_t expected[10] = {1, 0, 1, 0, 0, 0, 0, 0, 0, 1};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(bits[i], expected[i]) << i;
}

TEST(StableHloExporterFormsTest, FuncCallWithSeveralResultsAndNestedCalls) {
  auto m = MustParse(R"(
    func.func private @inner(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0 = stablehlo.negate %a : tensor<2xf32>
      return %a, %0 : tensor<2xf32>, tensor<2xf32>
    }
    func.func private @outer(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
      %0:2 = call @inner(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      %1:2 = func.call @inner(%0#1) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      return %1#1, %0#0 : tensor<2xf32>, tensor<2xf32>
    }
    func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {
      %0:2 = call @outer(%a) : (tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
      %1 = stablehlo.add %0#0, %0#1 : tensor<2xf32>
      return %1 : tensor<2xf32>
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOp(*m, Opcode::kCall), 3);
  EXPECT_EQ(CountOp(*m, Opcode::kNegate), 1);  // @inner is one computation, called twice
}

TEST(StableHloExporterFormsTest, ArithScalarsMapOntoHlo) {
  auto m = MustParse(R"(
    func.func @main(%t: tensor<4xf32>, %i: index) -> (f32, i1) {
      %c1 = arith.constant 1 : index
      %j = arith.addi %i, %c1 : index
      %k = arith.index_cast %j : index to i32
      %x = tensor.extract %t[%j] : tensor<4xf32>
      %y = arith.mulf %x, %x : f32
      %b = arith.cmpf olt, %x, %y : f32
      return %y, %b : f32, i1
    })");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(FindOp(Entry(*m), Opcode::kDynamicSlice), nullptr);
  EXPECT_EQ(ShapeToString(Entry(*m)->root()->shape(), false), "(f32[], pred[])");
}

TEST(StableHloExporterFormsTest, UnknownOpsStayLocatedErrors) {
  std::string err = ErrorOf(
      "func.func @main(%a: i32) -> i32 {\n  %0 = arith.ceildivsi %a, %a : i32\n"
      "  return %0 : i32\n}\n");
  EXPECT_NE(err.find("test.mlir:2:8: error: unsupported op 'arith.ceildivsi'"), std::string::npos) << err;
}

constexpr std::string_view kExporterText = R"(#loc1 = loc("p0")
#a = #ttcore<local_shape local_shape = tensor<128xbf16>>
module @m {
  func.func @main(%arg0: tensor<8xi1> {t.s = #a} loc(#loc1), %arg1: tensor<4xi64>) -> (tensor<i1>, i64) {
    %c = arith.constant dense<"0x0F"> : tensor<8xi1>
    %i = arith.constant 1 : index
    %0 = stablehlo.and %arg0, %c : tensor<8xi1> loc(fused[#loc1, "x"])
    %f = stablehlo.constant dense<false> : tensor<i1>
    %1 = stablehlo.reduce(%0 init: %f) across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
     reducer(%p: tensor<i1> loc("r"), %q: tensor<i1> loc(callsite("a" at "b":1:2)))  {
      %r = stablehlo.or %p, %q : tensor<i1>
      stablehlo.return %r : tensor<i1>
    }
    %x = tensor.extract %arg1[%i] : tensor<4xi64>
    return %1, %x : tensor<i1>, i64
  }
}
module @n attributes {t = #ttcore.meshes<[<"mesh" = 2x4>]>} {
  ttcore.device_module {
    %0 = "ttnn.get_device"() : () -> !ttnn.device
  }
}
)";

TEST(StableHloExporterFormsTest, TruncatedExporterTextNeverCrashes) {
  ASSERT_NE(ParseWithDiags(kExporterText).module, nullptr) << ParseWithDiags(kExporterText).rendered;
  for (size_t n = 0; n < kExporterText.size(); ++n) {
    SourceFile file("t.mlir", kExporterText.substr(0, n));
    DiagnosticEngine diags;
    std::unique_ptr<Module> module = ParseStableHloModule(file, diags);
    if (module == nullptr) {
      ASSERT_TRUE(diags.has_errors()) << "silent failure at prefix " << n;
      for (const Diagnostic& d : diags.diagnostics()) {
        if (d.severity == Severity::kError) EXPECT_TRUE(d.loc.known()) << diags.Render(file);
      }
    }
  }
}

TEST(StableHloExporterFormsTest, CorruptedExporterTextNeverCrashes) {
  uint32_t state = 777;
  auto next = [&]() {
    state = state * 1103515245u + 12345u;
    return state >> 16;
  };
  const std::string alphabet = "%@^#!(){}[]<>,:=-x?\"0123456789. abcdeflmnotu_\n";
  for (int round = 0; round < 2000; ++round) {
    std::string text(kExporterText);
    const int edits = 1 + static_cast<int>(next() % 4);
    for (int e = 0; e < edits; ++e) {
      size_t at = next() % (text.size() + 1);
      if (next() % 2 == 0 && at < text.size()) {
        text[at] = alphabet[next() % alphabet.size()];
      } else {
        text.insert(at, 1, alphabet[next() % alphabet.size()]);
      }
    }
    SourceFile file("g.mlir", text);
    DiagnosticEngine diags;
    std::unique_ptr<Module> module = ParseStableHloModule(file, diags);
    if (module == nullptr) ASSERT_TRUE(diags.has_errors());
  }
}

}  // namespace
}  // namespace xlac
