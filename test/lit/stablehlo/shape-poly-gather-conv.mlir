// dynamic_gather and dynamic_conv in a shape-polymorphic module: slice sizes and padding computed from the refined
// sizes fold, and the `?` results take the shapes gather and convolution infer.
// Expected values (numpy): np.arange(12).reshape(3, 4)[[2, 0]]; the cross-correlation of np.pad([1, 2, 3, 4, 5], 1)
// with [1, 2, 3]: np.convolve(np.pad(v, 1), [3, 2, 1], 'valid').

// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(3,4))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<12f',*range(12)))" > %t.x.npy
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<i4',fortran_order=False,shape=(2,1))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<2i',2,0))" > %t.i.npy
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(1,5,1))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<5f',1,2,3,4,5))" > %t.v.npy
// RUN: python3 -c "import struct,sys; h=str(dict(descr='<f4',fortran_order=False,shape=(3,1,1))).encode(); h+=b' '*(117-len(h))+b'\n'; sys.stdout.buffer.write(b'\x93NUMPY\x01\x00'+struct.pack('<H',len(h))+h+struct.pack('<3f',1,2,3))" > %t.w.npy
// RUN: xla-run %s --input=%t.x.npy --input=%t.i.npy --input=%t.v.npy --input=%t.w.npy --check-against=interpreter | FileCheck %s
// CHECK: result_0 = f32[2,4]{1,0} { { 8, 9, 10, 11 }, { 0, 1, 2, 3 } }
// CHECK: result_1 = f32[1,5,1]{2,1,0} { { {8}, {14}, {20}, {26}, {14} } }

func.func public @main(%x: tensor<?x4xf32>, %i: tensor<2x1xi32>, %v: tensor<1x?x1xf32>, %w: tensor<?x1x1xf32>) -> (tensor<2x?xf32>, tensor<1x?x1xf32>) {
  %n = stablehlo.get_dimension_size %x, dim = 1 : (tensor<?x4xf32>) -> tensor<i32>
  %c1 = stablehlo.constant dense<1> : tensor<1xi32>
  %n1 = stablehlo.reshape %n : (tensor<i32>) -> tensor<1xi32>
  %sizes = stablehlo.concatenate %c1, %n1, dim = 0 : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
  %0 = "stablehlo.dynamic_gather"(%x, %i, %sizes) {dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>} : (tensor<?x4xf32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<2x?xf32>
  // "same" padding: (k - 1) / 2 on each side, k the kernel's refined size.
  %k = stablehlo.get_dimension_size %w, dim = 0 : (tensor<?x1x1xf32>) -> tensor<i32>
  %one = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %km1 = stablehlo.subtract %k, %one : tensor<i32>
  %half = stablehlo.divide %km1, %two : tensor<i32>
  %h = stablehlo.reshape %half : (tensor<i32>) -> tensor<1x1xi32>
  %pad = stablehlo.concatenate %h, %h, dim = 1 : (tensor<1x1xi32>, tensor<1x1xi32>) -> tensor<1x2xi32>
  %1 = "stablehlo.dynamic_conv"(%v, %w, %pad) {dimension_numbers = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, feature_group_count = 1 : i64, batch_group_count = 1 : i64, window_strides = array<i64: 1>} : (tensor<1x?x1xf32>, tensor<?x1x1xf32>, tensor<1x2xi32>) -> tensor<1x?x1xf32>
  return %0, %1 : tensor<2x?xf32>, tensor<1x?x1xf32>
}
