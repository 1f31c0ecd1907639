// Files printed with elided values still compile and run: `dense_resource<__elided__>` (MLIR's print of a large
// dense<> literal under --mlir-elide-elementsattrs-if-larger) and a resource whose blob the {-# dialect_resources #-}
// section leaves out (--mlir-elide-resource-strings-if-larger keeps the key, drops the blob, still prints the
// section) are constants of unknown value, as HLO's `constant({...})`: xla-run and the interpreter give them the
// same seeded values. The second is ambiguous, so it warns (once).

// RUN: xla-opt %s --print-short 2>&1 | FileCheck %s --check-prefix=HLO
// RUN: xla-run %s --check-against=interpreter --seed=7 | FileCheck %s
// The values are those HLO's `{...}` gets: the module xla-opt prints runs to the same result.
// RUN: xla-opt %s --print-short 2>/dev/null > %t.hlo
// RUN: xla-run %s --seed=7 > %t.out && xla-run %t.hlo --seed=7 >> %t.out && FileCheck %s --check-prefix=SAME < %t.out

// HLO:      dense-resource-elided.mlir:[[@LINE+14]]:44: warning: dense_resource<torch_tensor_8_torch.float32> has no blob in the file's dialect_resources: taken as elided when the file was printed (--mlir-elide-resource-strings-if-larger), its values are unknown
// HLO-NOT:  warning
// HLO:      constant({...})
// HLO:      constant({...})
// HLO:      constant({...})
// HLO:      constant({1, 2})
// CHECK:    check against the interpreter: 1 of 1 output match
// SAME:     result_0 = f32[2]{0} [[VALUES:.*]]
// SAME-NEXT: result_0 = f32[2]{0} [[VALUES]]

module @jit_generate {
  func.func public @main(%arg0: tensor<2xf32>) -> tensor<2xf32> {
    %0 = stablehlo.constant dense_resource<__elided__> : tensor<2xf32>
    %1 = stablehlo.add %arg0, %0 : tensor<2xf32>
    %2 = stablehlo.constant dense_resource<torch_tensor_8_torch.float32> : tensor<2xf32>
    %3 = stablehlo.constant dense_resource<torch_tensor_9_torch.float32> : tensor<2xf32>
    %4 = stablehlo.constant dense_resource<torch_tensor_1_torch.float32> : tensor<2xf32>
    %5 = stablehlo.add %1, %2 : tensor<2xf32>
    %6 = stablehlo.add %5, %3 : tensor<2xf32>
    %7 = stablehlo.multiply %6, %4 : tensor<2xf32>
    return %7 : tensor<2xf32>
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_1_torch.float32: "0x040000000000803F00000040"
    }
  }
#-}
