// The stablehlo.dynamic_* custom calls JAX's shape-polymorphic exports use, once the shapes are refined from the
// --input files (x: f32[3,4], a: f32[6]): dynamic_reduce_window (jnp.cumsum along a dimension of size b: window b,
// padding b - 1), dynamic_approx_top_k (lax.approx_max_k with k = a.shape[0] - 2, its result shapes given by
// indices_of_shape_operands) and dynamic_rng_bit_generator (an output of shape [2 * b0, 4]).
// Expected values (numpy): np.cumsum(x, 0) for x = np.arange(12).reshape(3, 4); for a = [3, 1, 4, 1, 5, 9]:
// i = np.argsort(-a, kind='stable')[:4], a[i].

// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(3,4))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<12f',*range(12)))" > %t.x.npy
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(6,))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<6f',3,1,4,1,5,9))" > %t.a.npy
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<u8',fortran_order=False,shape=(2,))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<2Q',1,2))" > %t.key.npy
// RUN: xla-run %s --input=%t.x.npy --input=%t.a.npy --input=%t.key.npy --check-against=interpreter | FileCheck %s
// CHECK: result_0 = f32[3,4]{1,0} { { 0, 1, 2, 3 }, { 4, 6, 8, 10 }, { 12, 15, 18, 21 } }
// CHECK: result_1 = f32[4]{0} {9, 5, 4, 3}
// CHECK: result_2 = s32[4]{0} {5, 4, 2, 0}
// CHECK: result_3 = u32[6,4]{1,0}
// CHECK: check against the interpreter: 4 of 4 outputs match

// RUN: xlac %s --arg-shape=f32[3,4] --arg-shape=f32[6] --arg-shape=u64[2] --emit=hlo -O0 -o - | FileCheck %s --check-prefix=HLO
// HLO: ENTRY %main (Arg_0.1: f32[3,4], Arg_1.2: f32[6], Arg_2.3: u64[2]) -> (f32[3,4], f32[4], s32[4], u32[6,4])
// HLO-DAG: reduce-window({{.*}}), window={size=3x1 pad=2_0x0_0}
// HLO-DAG: rng-bit-generator({{.*}}), algorithm=rng_default

module @jit_func attributes {jax.uses_shape_polymorphism = true} {
  func.func public @main(%x: tensor<?x4xf32>, %a: tensor<?xf32>, %key: tensor<2xui64>) -> (tensor<?x4xf32>, tensor<?xf32>, tensor<?xi32>, tensor<?x4xui32>) {
    %b = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %n = stablehlo.get_dimension_size %a, dim = 0 : (tensor<?xf32>) -> tensor<i32>
    %0 = call @cumsum(%b, %x) : (tensor<i32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %1:2 = call @approx_max_k(%n, %a) : (tensor<i32>, tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>)
    %2 = call @random_bits(%b, %key) : (tensor<i32>, tensor<2xui64>) -> tensor<?x4xui32>
    return %0, %1#0, %1#1, %2 : tensor<?x4xf32>, tensor<?xf32>, tensor<?xi32>, tensor<?x4xui32>
  }
  func.func private @add(%p: tensor<f32>, %q: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %p, %q : tensor<f32>
    return %0 : tensor<f32>
  }
  func.func private @cumsum(%b: tensor<i32>, %x: tensor<?x4xf32>) -> tensor<?x4xf32> {
    %c0 = stablehlo.constant dense<0> : tensor<1xi32>
    %c1 = stablehlo.constant dense<1> : tensor<1xi32>
    %c11 = stablehlo.constant dense<1> : tensor<2xi32>
    %m1 = stablehlo.constant dense<-1> : tensor<i32>
    %bm1 = stablehlo.add %b, %m1 : tensor<i32>
    %b1 = stablehlo.reshape %b : (tensor<i32>) -> tensor<1xi32>
    %bm11 = stablehlo.reshape %bm1 : (tensor<i32>) -> tensor<1xi32>
    %window = stablehlo.concatenate %b1, %c1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %p0 = stablehlo.concatenate %bm11, %c0, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %p1 = stablehlo.constant dense<0> : tensor<1x2xi32>
    %p0r = stablehlo.reshape %p0 : (tensor<2xi32>) -> tensor<1x2xi32>
    %padding = stablehlo.concatenate %p0r, %p1, dim = 0 : (tensor<1x2xi32>, tensor<1x2xi32>) -> tensor<2x2xi32>
    %zero = stablehlo.constant dense<0.0> : tensor<f32>
    %0 = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %zero, %window, %c11, %c11, %c11, %padding) {api_version = 2 : i32, called_computations = [@add]} : (tensor<?x4xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x4xf32>
    return %0 : tensor<?x4xf32>
  }
  func.func private @gt(%p: tensor<f32>, %q: tensor<f32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<i1> {
    %0 = stablehlo.compare  GT, %p, %q : (tensor<f32>, tensor<f32>) -> tensor<i1>
    return %0 : tensor<i1>
  }
  func.func private @approx_max_k(%n: tensor<i32>, %a: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xi32>) {
    %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
    %iota = stablehlo.dynamic_iota %n1, dim = 0 : (tensor<1xi32>) -> tensor<?xi32>
    %m2 = stablehlo.constant dense<-2> : tensor<i32>
    %k = stablehlo.add %n, %m2 : tensor<i32>
    %k1 = stablehlo.reshape %k : (tensor<i32>) -> tensor<1xi32>
    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %init_i = stablehlo.constant dense<-1> : tensor<i32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_approx_top_k(%a, %iota, %init, %init_i, %k, %k1, %k1) {called_computations = [@gt], indices_of_shape_operands = dense<[5, 6]> : tensor<2xi64>, mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64}} : (tensor<?xf32>, tensor<?xi32>, tensor<f32>, tensor<i32>, tensor<i32>, tensor<1xi32>, tensor<1xi32>) -> (tensor<?xf32>, tensor<?xi32>)
    return %0#0, %0#1 : tensor<?xf32>, tensor<?xi32>
  }
  func.func private @random_bits(%b: tensor<i32>, %key: tensor<2xui64>) -> tensor<?x4xui32> {
    %c2 = stablehlo.constant dense<2> : tensor<i32>
    %rows = stablehlo.multiply %b, %c2 : tensor<i32>
    %r1 = stablehlo.reshape %rows : (tensor<i32>) -> tensor<1xi32>
    %c4 = stablehlo.constant dense<4> : tensor<1xi32>
    %shape = stablehlo.concatenate %r1, %c4, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %0:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%key, %shape) {api_version = 2 : i32, rng_algorithm = #stablehlo<rng_algorithm DEFAULT>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x4xui32>)
    return %0#1 : tensor<?x4xui32>
  }
}
