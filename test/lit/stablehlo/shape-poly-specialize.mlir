// A function with a dimension-variable argument and a `?` argument, called with two different shapes (u: f32[3],
// v: f32[5]): each call gets its own specialization, in which the dimension variable is the constant the call
// passes. @f(d, x) = x + iota(d) * d. Expected values (numpy): u + np.arange(3) * 3, v + np.arange(5) * 5.

// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(3,))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<3f',1,2,3))" > %t.u.npy
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(5,))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<5f',10,20,30,40,50))" > %t.v.npy
// RUN: xla-run %s --input=%t.u.npy --input=%t.v.npy --check-against=interpreter | FileCheck %s
// CHECK: result_0 = f32[3]{0} {1, 5, 9}
// CHECK: result_1 = f32[5]{0} {10, 25, 40, 55, 70}

func.func public @main(%u: tensor<?xf32>, %v: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %du = stablehlo.get_dimension_size %u, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %dv = stablehlo.get_dimension_size %v, dim = 0 : (tensor<?xf32>) -> tensor<i32>
  %0 = call @f(%du, %u) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
  %1 = call @f(%dv, %v) : (tensor<i32>, tensor<?xf32>) -> tensor<?xf32>
  return %0, %1 : tensor<?xf32>, tensor<?xf32>
}
func.func private @f(%d: tensor<i32>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %s = stablehlo.reshape %d : (tensor<i32>) -> tensor<1xi32>
  %iota = stablehlo.dynamic_iota %s, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  %df = stablehlo.convert %d : (tensor<i32>) -> tensor<f32>
  %scale = stablehlo.dynamic_broadcast_in_dim %df, %s, dims = [] : (tensor<f32>, tensor<1xi32>) -> tensor<?xf32>
  %m = stablehlo.multiply %iota, %scale : tensor<?xf32>
  %r = stablehlo.add %x, %m : tensor<?xf32>
  return %r : tensor<?xf32>
}
