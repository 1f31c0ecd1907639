// dense_resource<key> literals take their values from the file metadata section MLIR prints after the module
// (torch-mlir writes weights this way): a 4-byte alignment, then the little-endian elements.

// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s --check-prefix=RT
// RUN: not xla-opt %S/Inputs/dense-resource-missing.mlir 2>&1 | FileCheck %s --check-prefix=ERR
// CHECK-NOT: error
// CHECK: 3 checks: 3 passed, 0 failed
// RT: constant({1, 2, 3})

// ERR: dense-resource-missing.mlir:5:42: error: dense_resource<torch_tensor_2_torch.float32> has no blob in the file's dialect_resources: the file has no {-# dialect_resources #-} section

module {
  func.func public @main() {
    %w = stablehlo.constant dense_resource<torch_tensor_3_torch.int32> : tensor<3xi32>
    check.expect_eq_const %w, dense<[1, 2, 3]> : tensor<3xi32>
    %f = arith.constant dense_resource<"weight \22quoted\22"> : tensor<2xf32>
    check.expect_eq_const %f, dense<[1.0, -2.0]> : tensor<2xf32>
    %b = stablehlo.constant dense_resource<mask> : tensor<3xi1>
    check.expect_eq_const %b, dense<[true, false, true]> : tensor<3xi1>
    func.return
  }
}

{-#
  dialect_resources: {
    builtin: {
      torch_tensor_3_torch.int32: "0x04000000010000000200000003000000",
      "weight \22quoted\22": "0x040000000000803F000000C0",
      mask: "0x01000000010001"
    }
  }
#-}
