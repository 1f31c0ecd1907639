// A module printed with --mlir-print-op-generic (and --mlir-print-debuginfo): the module, functions, calls, the
// terminators and Shardy's mesh all in the generic form.

// RUN: xla-opt %s | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s --check-prefix=RT

// CHECK: HloModule jit_g
// CHECK-DAG: parameter(0), sharding={devices=[2]<=[2]}, metadata={op_name="x"}
// CHECK-DAG: call({{.*}}), to_apply=%inner, metadata={op_name="call"}
// CHECK-DAG: ROOT {{.*}} = (f32[4]{0}, s32[]) tuple(

// RT: HloModule jit_g
// RT: ENTRY main

#loc1 = loc("x")
"builtin.module"() <{sym_name = "jit_g"}> ({
  "sdy.mesh"() <{mesh = #sdy.mesh<["a"=2]>, sym_name = "mesh"}> : () -> () loc(#loc)
  "func.func"() <{arg_attrs = [{sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>}], function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<i32>), sym_name = "main", sym_visibility = "public"}> ({
  ^bb0(%arg0: tensor<4xf32> loc(#loc1)):
    %0 = "func.call"(%arg0) <{callee = @inner}> : (tensor<4xf32>) -> tensor<4xf32> loc("call")
    %1 = "arith.constant"() <{value = 7 : i32}> : () -> i32 loc(#loc)
    %2 = "tensor.from_elements"(%1) : (i32) -> tensor<i32> loc(#loc)
    "func.return"(%0, %2) : (tensor<4xf32>, tensor<i32>) -> () loc(#loc)
  }) : () -> () loc(#loc)
  "func.func"() <{function_type = (tensor<4xf32>) -> tensor<4xf32>, sym_name = "inner", sym_visibility = "private"}> ({
  ^bb0(%arg0: tensor<4xf32> loc(unknown)):
    %0 = "stablehlo.add"(%arg0, %arg0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(#loc)
    "func.return"(%0) : (tensor<4xf32>) -> () loc(#loc)
  }) : () -> () loc(#loc)
}) {mhlo.num_partitions = 2 : i32} : () -> () loc(#loc)
#loc = loc(unknown)
