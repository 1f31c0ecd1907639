// The stablehlo dynamic ops of a shape-polymorphic module (x: f32[n, 2]) with shape operands computed from
// get_dimension_size: once xla-run refines n from the --input file (n = 4), the shape arithmetic (multiply, divide,
// compare, select, reshape, concatenate) folds and each dynamic op becomes its static HLO op.
// Expected values (numpy, x = np.arange(1, 9).reshape(4, 2)): sum = x.reshape(8) + np.arange(8);
// bcast = np.broadcast_to(x[:, 1:2], (4, 3)); pad = np.pad(sum, (1, 4 // 2)).

// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(4,2))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<8f',1,2,3,4,5,6,7,8))" > %t.x.npy
// RUN: xla-run %s --input=%t.x.npy --check-against=interpreter | FileCheck %s
// CHECK: result_0 = f32[8]{0} {1, 3, 5, 7, 9, 11, 13, 15}
// CHECK: result_1 = f32[4,3]{1,0} { { 2, 2, 2 }, { 4, 4, 4 }, { 6, 6, 6 }, { 8, 8, 8 } }
// CHECK: result_2 = f32[11]{0} {0, 1, 3, 5, 7, 9, 11, 13, 15, 0, 0}

// RUN: xlac %s --arg-shape=f32[4,2] --emit=hlo -O0 -o - | FileCheck %s --check-prefix=HLO
// HLO: ENTRY %main (Arg_0.1: f32[4,2]) -> (f32[8], f32[4,3], f32[11])
// HLO-DAG: iota(), iota_dimension=0
// HLO-DAG: slice({{.*}}), slice={[0:4], [1:2]}
// HLO-DAG: pad({{.*}}), padding=1_2

func.func public @main(%x: tensor<?x2xf32>) -> (tensor<?xf32>, tensor<?x3xf32>, tensor<?xf32>) {
  %n = stablehlo.get_dimension_size %x, dim = 0 : (tensor<?x2xf32>) -> tensor<i32>
  %c2 = stablehlo.constant dense<2> : tensor<i32>
  %n2 = stablehlo.multiply %n, %c2 : tensor<i32>
  %s1 = stablehlo.reshape %n2 : (tensor<i32>) -> tensor<1xi32>
  %flat = stablehlo.dynamic_reshape %x, %s1 : (tensor<?x2xf32>, tensor<1xi32>) -> tensor<?xf32>
  %iota = stablehlo.dynamic_iota %s1, dim = 0 : (tensor<1xi32>) -> tensor<?xf32>
  %sum = stablehlo.add %flat, %iota : tensor<?xf32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %z1 = stablehlo.reshape %zero : (tensor<i32>) -> tensor<1xi32>
  %o1 = stablehlo.reshape %one : (tensor<i32>) -> tensor<1xi32>
  %c2_1 = stablehlo.reshape %c2 : (tensor<i32>) -> tensor<1xi32>
  %start = stablehlo.concatenate %z1, %o1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %limit = stablehlo.concatenate %n1, %c2_1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %stride = stablehlo.concatenate %o1, %o1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %col = stablehlo.real_dynamic_slice %x, %start, %limit, %stride : (tensor<?x2xf32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) -> tensor<?x1xf32>
  %c3 = stablehlo.constant dense<3> : tensor<1xi32>
  %bshape = stablehlo.concatenate %n1, %c3, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %bcast = stablehlo.dynamic_broadcast_in_dim %col, %bshape, dims = [0, 1] : (tensor<?x1xf32>, tensor<2xi32>) -> tensor<?x3xf32>
  %big = stablehlo.compare GT, %n, %c2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %half = stablehlo.divide %n, %c2 : tensor<i32>
  %h = stablehlo.select %big, %half, %one : tensor<i1>, tensor<i32>
  %h1 = stablehlo.reshape %h : (tensor<i32>) -> tensor<1xi32>
  %pv = stablehlo.constant dense<0.0> : tensor<f32>
  %pad = stablehlo.dynamic_pad %sum, %pv, %o1, %h1, %z1 : (tensor<?xf32>, tensor<f32>, tensor<1xi32>, tensor<1xi32>, tensor<1xi32>) -> tensor<?xf32>
  return %sum, %bcast, %pad : tensor<?xf32>, tensor<?x3xf32>, tensor<?xf32>
}
