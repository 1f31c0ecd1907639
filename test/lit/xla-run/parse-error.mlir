// Parse errors are diagnostics at the offending token, with the source line and a caret; exit 1, no results.

// RUN: not xla-run %s 2>&1 | FileCheck %s -DFILE=%s
// CHECK: [[FILE]]:[[@LINE+6]]:10: error: {{.*}}
// CHECK-NOT: result_
// CHECK-NOT: checks:

module {
  func.func public @main() -> tensor<2xf32> {
    %0 = stablehlo.frobnicate : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
