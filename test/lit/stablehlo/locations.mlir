// Locations wherever MLIR prints them (--mlir-print-debuginfo): after block arguments of pretty reducers, generic
// regions, while loops, sdy.manual_computation bodies and function arguments and results; #loc aliases (also
// defined after their use), fused, named, call-site, unknown and file:line:col locations. They become metadata.

// RUN: xla-opt %s | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s --check-prefix=RT

// CHECK: HloModule jit_f
// CHECK: ENTRY %main
// CHECK-DAG: parameter(0){{.*}}, metadata={op_name="x"}
// CHECK-DAG: parameter(1){{.*}}, metadata={op_name="y"}
// CHECK-DAG: constant(false), metadata={source_file="file.py" source_line=3 source_column=1}
// CHECK-DAG: reduce({{.*}}), dimensions={0}, to_apply={{.*}}, metadata={op_name="reduce.325"}
// CHECK-DAG: sort({{.*}}metadata={op_name="outer/inner" source_file="model.py" source_line=7 source_column=3}
// CHECK-DAG: multiply({{.*}}metadata={op_name="fused_a" source_file="a.py" source_line=1 source_column=2}
// CHECK-DAG: add({{.*}}metadata={op_name="callee" source_file="caller.py" source_line=10 source_column=4}

// RT: HloModule jit_f
// RT: ENTRY main
// RT: reduce(
// RT: while(

#loc1 = loc("x")
module @jit_f attributes {mhlo.num_partitions = 1 : i32} {
  func.func public @main(%arg0: tensor<8xi1> loc(#loc1), %arg1: tensor<4xf32> {mhlo.sharding = "{replicated}"} loc("y"), %arg2: tensor<i32> loc(unknown)) -> (tensor<i1> {jax.result_info = ""} loc("r0"), tensor<4xf32>, tensor<i32>) {
    %c = stablehlo.constant dense<false> : tensor<i1> loc(#loc2)
    %0 = stablehlo.reduce(%arg0 init: %c) across dimensions = [0] : (tensor<8xi1>, tensor<i1>) -> tensor<i1>
     reducer(%a: tensor<i1> loc("reduce.325"), %b: tensor<i1> loc("reduce.325"))  {
      %r = stablehlo.or %a, %b : tensor<i1> loc("reduce.325")
      stablehlo.return %r : tensor<i1> loc("reduce.325")
    } loc(#loc3)
    %1 = "stablehlo.sort"(%arg1) <{dimension = 0 : i64, is_stable = false}> ({
    ^bb0(%p: tensor<f32> loc(fused[#loc4, "sort"]), %q: tensor<f32> loc(#loc4)):
      %lt = stablehlo.compare  LT, %p, %q,  FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1> loc(#loc4)
      stablehlo.return %lt : tensor<i1> loc(#loc4)
    }) : (tensor<4xf32>) -> tensor<4xf32> loc(#loc5)
    %2 = stablehlo.multiply %1, %1 : tensor<4xf32> loc(fused<"jax">[#loc6, "a.py":1:2])
    %3:2 = stablehlo.while(%i = %arg2 loc("it"), %v = %2) : tensor<i32>, tensor<4xf32>
    cond {
      %k = stablehlo.constant dense<3> : tensor<i32> loc(#loc)
      %lt = stablehlo.compare  LT, %i, %k,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1> loc(#loc)
      stablehlo.return %lt : tensor<i1> loc(#loc)
    } do {
      %one = stablehlo.constant dense<1> : tensor<i32> loc(#loc)
      %n = stablehlo.add %i, %one : tensor<i32> loc(#loc)
      stablehlo.return %n, %v : tensor<i32>, tensor<4xf32> loc(#loc)
    } loc(#loc)
    %4 = stablehlo.add %3#1, %3#1 : tensor<4xf32> loc(callsite(#loc7 at "caller.py":10:4))
    return %0, %4, %3#0 : tensor<i1>, tensor<4xf32>, tensor<i32> loc(#loc)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("file.py":3:1 to 3:9)
#loc3 = loc("reduce.325")
#loc4 = loc("cmp")
#loc5 = loc("outer/inner"("model.py":7:3))
#loc6 = loc("fused_a")
#loc7 = loc("callee")
