// i1 hex blobs: MLIR writes them bit-packed, least significant bit first (ceil(n/8) bytes; one byte 0x00 or 0xFF
// is a splat); other producers write one byte per element. Both read the same values.

// RUN: xla-run %s --no-print --backend=interpreter | FileCheck %s
// RUN: not xla-opt %S/Inputs/i1-hex-bad.mlir 2>&1 | FileCheck %s --check-prefix=ERR
// CHECK-NOT: error
// CHECK: 7 checks: 7 passed, 0 failed

// ERR: i1-hex-bad.mlir:3:{{[0-9]+}}: error: hex string has 3 bytes, but tensor<128xi1> needs 128 (one per element) or 16 (bit-packed)

module {
  func.func public @main() {
    %packed = stablehlo.constant dense<"0x05"> : tensor<4xi1>
    check.expect_eq_const %packed, dense<[true, false, true, false]> : tensor<4xi1>
    %bytes = stablehlo.constant dense<"0x01000101"> : tensor<4xi1>
    check.expect_eq_const %bytes, dense<[true, false, true, true]> : tensor<4xi1>
    %wide = stablehlo.constant dense<"0xFFFFFFFF000000000000000000000001"> : tensor<128xi1>
    %s0 = stablehlo.slice %wide [30:34] : (tensor<128xi1>) -> tensor<4xi1>
    check.expect_eq_const %s0, dense<[true, true, false, false]> : tensor<4xi1>
    %s1 = stablehlo.slice %wide [119:122] : (tensor<128xi1>) -> tensor<3xi1>
    check.expect_eq_const %s1, dense<[false, true, false]> : tensor<3xi1>
    %ones = stablehlo.constant dense<"0xFF"> : tensor<16xi1>
    check.expect_eq_const %ones, dense<true> : tensor<16xi1>
    %zeros = stablehlo.constant dense<"0x00"> : tensor<3xi1>
    check.expect_eq_const %zeros, dense<false> : tensor<3xi1>
    %one = stablehlo.constant dense<"0x01"> : tensor<1xi1>
    check.expect_eq_const %one, dense<true> : tensor<1xi1>
    func.return
  }
}
