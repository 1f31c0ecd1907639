// The nonsymmetric and tridiagonal routines in jaxlib's legacy API (api_version 2, 2023): lapack_?geev (batch, n,
// jobvl, jobvr, a) with three workspaces before (wr, wi, vl, vr, info); lapack_?gees (batch, n, jobvs, sort, a) ->
// (t, wr, wi, vs, sdim, info); lapack_?gehrd (n, ilo, ihi, lda, batch, lwork, a); lapack_?sytrd (n, lower, lda,
// batch, lwork, a). library-custom-calls maps them onto xlac.eig, xlac.schur, xlac.hessenberg and xlac.tridiagonal,
// its flags (ASCII codes for geev and gees) read from the constant descriptors; the same matrix gives what the
// typed-FFI calls give (library-custom-calls-geev.mlir, -gees.mlir) and what reference LAPACK gives.

// RUN: xla-opt %s --passes=library-custom-calls --print-short | FileCheck %s
// RUN: xla-run %s --check-against=interpreter --exact | FileCheck %s --check-prefix=EXEC

// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.eig", backend_config="0,1"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.schur"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.hessenberg", backend_config="1,4"
// CHECK-DAG: custom-call({{.*}}), custom_call_target="xlac.tridiagonal", backend_config="1"
// CHECK-NOT: lapack_

// EXEC: result_0 = f64[4]{0} {0.64686882783665856, 0.64686882783665856, 3.0000000000000022, 2.7062623443266807}
// EXEC: result_1 = f64[4]{0} {2.8425986735005422, -2.8425986735005422, 0, 0}
// EXEC: result_2 = c128[4,4]{0,1} { { (-0.069596302120542131, -0.56022909242599561), (-0.069596302120542131, 0.56022909242599561), (0.49999999999999989, 0), (-0.4930245049301914, 0) },
// EXEC: result_3 = s32[] 0
// EXEC: result_4 = f64[4,4]{0,1} { { 0.64686882783665856, -4.0773278852728785, -3.2367361023901156, -2.2012280626957343 }, { 1.9817800888108539, 0.64686882783665856, -0.23945324710906557, -0.062239034658171821 }, { 0, 0, 3.0000000000000022, 1.7041518192033118 }, { 0, 0, 0, 2.70626234432668 } }
// EXEC: result_5 = f64[4]{0} {0.64686882783665856, 0.64686882783665856, 3.0000000000000022, 2.70626234432668}
// EXEC: result_6 = s32[] 0
// EXEC: result_7 = f64[4,4]{0,1} { { 1, -1.897366596101028, -0.60783686039509144, 0.17474081133220759 }, { 3.1622776601683795, -0.30000000000000004, 3.8355608087419579, -0.77361054959375286 }, { 0, -1.1445523142259597, 4.1244274809160313, -1.5594132583731093 }, { -0.16227766016837933, 0.75302231655374707, 0.33795333772791825, 2.175572519083969 } }
// EXEC: result_8 = f64[3]{0} {1.948683298050514, 1.2762894819977688, 0}
// EXEC: result_9 = f64[4]{0} {1, 1.2000000000000002, 3.4086956521739138, 1.3913043478260878}
// EXEC: result_10 = f64[3]{0} {3.1622776601683795, 0.67823299831252692, -0.20623549957619991}
// EXEC: check against the interpreter: 11 of 11 outputs match

module @jit_legacy_eigen attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main() -> (tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<i32>, tensor<4x4xf64>, tensor<4xf64>, tensor<i32>, tensor<4x4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<3xf64>) {
    %c1 = stablehlo.constant dense<1> : tensor<i32>
    %c4 = stablehlo.constant dense<4> : tensor<i32>
    %lwork = stablehlo.constant dense<128> : tensor<i32>
    %v = stablehlo.constant dense<86> : tensor<ui8>
    %n = stablehlo.constant dense<78> : tensor<ui8>
    %a = stablehlo.constant dense<[[1.0, 2.0, 0.0, 0.0], [-3.0, 1.0, 0.0, 5.0], [0.0, 0.0, 2.0, 1.0], [1.0, 0.0, -1.0, 3.0]]> : tensor<4x4xf64>
    %0:8 = stablehlo.custom_call @lapack_dgeev(%c1, %c4, %n, %v, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>]} : (tensor<i32>, tensor<i32>, tensor<ui8>, tensor<ui8>, tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4x4xf64>, tensor<4x4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<4x4xcomplex<f64>>, tensor<i32>)
    %1:6 = stablehlo.custom_call @lapack_dgees(%c1, %c4, %v, %n, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 4, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<[0, 1]> : tensor<2xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>]} : (tensor<i32>, tensor<i32>, tensor<ui8>, tensor<ui8>, tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4x4xf64>, tensor<i32>, tensor<i32>)
    %2:4 = stablehlo.custom_call @lapack_dgehrd(%c4, %c1, %c4, %c4, %c1, %lwork, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 6, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<3xf64>, tensor<i32>, tensor<128xf64>)
    %3:6 = stablehlo.custom_call @lapack_dsytrd(%c4, %c1, %c4, %c1, %lwork, %a) {api_version = 2 : i32, operand_layouts = [dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<> : tensor<0xindex>, dense<[0, 1]> : tensor<2xindex>], output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [0], operand_index = 5, operand_tuple_indices = []>], result_layouts = [dense<[0, 1]> : tensor<2xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>, dense<> : tensor<0xindex>, dense<0> : tensor<1xindex>]} : (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<4x4xf64>) -> (tensor<4x4xf64>, tensor<4xf64>, tensor<3xf64>, tensor<3xf64>, tensor<i32>, tensor<128xf64>)
    return %0#3, %0#4, %0#6, %0#7, %1#0, %1#1, %1#4, %2#0, %2#1, %3#1, %3#2 : tensor<4xf64>, tensor<4xf64>, tensor<4x4xcomplex<f64>>, tensor<i32>, tensor<4x4xf64>, tensor<4xf64>, tensor<i32>, tensor<4x4xf64>, tensor<3xf64>, tensor<4xf64>, tensor<3xf64>
  }
}
