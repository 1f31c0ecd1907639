// A shape-polymorphic jax.export (a: f32[4, b], k = b - 1), in the form JAX writes it: the dimension variable is read
// with get_dimension_size, checked by a shape_assertion and passed to the wrapped function, which computes k from it
// for stablehlo.dynamic_top_k. xla-run refines the `?` dimensions from the --input file's shape (4x3: b = 3).
// Expected values: numpy, np.take_along_axis(a, np.argsort(-a, axis=1, kind='stable')[:, :2], 1).

// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(4,3))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<12f',3,1,2,0,5,4,7,9,8,6,-1,2))" > %t.a.npy
// RUN: xla-run %s --input=%t.a.npy --check-against=interpreter | FileCheck %s
// CHECK: result_0 = f32[4,2]{1,0} { { 3, 2 }, { 5, 4 }, { 9, 8 }, { 6, 2 } }
// CHECK: result_1 = s32[4,2]{1,0} { { 0, 2 }, { 1, 2 }, { 1, 2 }, { 0, 2 } }
// CHECK: result_2 = s32[] 3

// xlac takes the shapes with --arg-shape; the refined program has static shapes and no dimension arithmetic left
// in the shape of any op.
// RUN: xlac %s --arg-shape=f32[4,3] --emit=hlo -O0 -o - | FileCheck %s --check-prefix=HLO
// HLO: ENTRY %main (Arg_0.1: f32[4,3]) -> (f32[4,2], s32[4,2], s32[])
// HLO: topk({{.*}}), k=2, largest=true
// HLO-NOT: ?

module @jit_func attributes {jax.uses_shape_polymorphism = true, mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xi32>, tensor<i32>) {
    %0 = stablehlo.get_dimension_size %arg0, dim = 1 : (tensor<4x?xf32>) -> tensor<i32>
    %1 = stablehlo.constant dense<2> : tensor<i32>
    %2 = stablehlo.compare  GE, %0, %1,  SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.custom_call @shape_assertion(%2, %0) {api_version = 2 : i32, error_message = "Expected value >= 2 for dimension variable 'b'; 'b' = {0}", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
    %3 = stablehlo.convert %arg0 : tensor<4x?xf32>
    %4:2 = call @_wrapped_jax_export_main(%0, %3) : (tensor<i32>, tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
    return %4#0, %4#1, %0 : tensor<4x?xf32>, tensor<4x?xi32>, tensor<i32>
  }
  func.func private @_wrapped_jax_export_main(%arg0: tensor<i32> {jax.global_constant = "b"}, %arg1: tensor<4x?xf32>) -> (tensor<4x?xf32>, tensor<4x?xi32>) {
    %0 = stablehlo.constant dense<-1> : tensor<i32>
    %1 = stablehlo.add %arg0, %0 : tensor<i32>
    %2:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%arg1, %1) {api_version = 2 : i32} : (tensor<4x?xf32>, tensor<i32>) -> (tensor<4x?xf32>, tensor<4x?xi32>)
    return %2#0, %2#1 : tensor<4x?xf32>, tensor<4x?xi32>
  }
}
