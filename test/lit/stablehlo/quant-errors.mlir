// Quantized types xlac does not lower are diagnosed at the type: other quant dialect types, sub-channel
// (blockwise) scales, zero points outside the storage range, float storage types, storage ranges
// wider than the storage type, scales that are not positive.

// Each `// -----` chunk is compiled on its own, blank lines standing in for the others so line numbers hold.
// RUN: awk -v k=1 '/^\/\/ -----/{c++} {print (c == k - 1 ? $0 : "")}' %s > %t.1.mlir
// RUN: awk -v k=2 '/^\/\/ -----/{c++} {print (c == k - 1 ? $0 : "")}' %s > %t.2.mlir
// RUN: awk -v k=3 '/^\/\/ -----/{c++} {print (c == k - 1 ? $0 : "")}' %s > %t.3.mlir
// RUN: awk -v k=4 '/^\/\/ -----/{c++} {print (c == k - 1 ? $0 : "")}' %s > %t.4.mlir
// RUN: awk -v k=5 '/^\/\/ -----/{c++} {print (c == k - 1 ? $0 : "")}' %s > %t.5.mlir
// RUN: awk -v k=6 '/^\/\/ -----/{c++} {print (c == k - 1 ? $0 : "")}' %s > %t.6.mlir
// RUN: not xlac %t.1.mlir --emit=hlo -o /dev/null 2>&1 | FileCheck %s --check-prefix=C1
// RUN: not xlac %t.2.mlir --emit=hlo -o /dev/null 2>&1 | FileCheck %s --check-prefix=C2
// RUN: not xlac %t.3.mlir --emit=hlo -o /dev/null 2>&1 | FileCheck %s --check-prefix=C3
// RUN: not xlac %t.4.mlir --emit=hlo -o /dev/null 2>&1 | FileCheck %s --check-prefix=C4
// RUN: not xlac %t.5.mlir --emit=hlo -o /dev/null 2>&1 | FileCheck %s --check-prefix=C5
// RUN: not xlac %t.6.mlir --emit=hlo -o /dev/null 2>&1 | FileCheck %s --check-prefix=C6

// C1: .mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: quantized types are not supported: tensor<2x!quant.any<i8:f32>>
func.func @main(%a: tensor<2x!quant.any<i8:f32>>) -> tensor<2x!quant.any<i8:f32>> {
  return %a : tensor<2x!quant.any<i8:f32>>
}

// -----

// C2: .mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: cannot read the quantized type: sub-channel (blockwise) quantization is not supported
func.func @main(%a: tensor<2x!quant.uniform<i8:f32:{0:1}, {{0.5}}>>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32:{0:1}, {{0.5}}>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// C3: .mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: cannot read the quantized type: zero point 200 is outside the storage range
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, 0.5:200>>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32, 0.5:200>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// C4: .mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: cannot read the quantized type: unsupported storage type
func.func @main(%a: tensor<2x!quant.uniform<f8E4M3FN:f32, 0.5>>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<f8E4M3FN:f32, 0.5>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// C5: .mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: cannot read the quantized type: storage range [-200, 10] does not fit i8
func.func @main(%a: tensor<2x!quant.uniform<i8<-200:10>:f32, 0.5>>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8<-200:10>:f32, 0.5>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// C6: .mlir:[[# @LINE + 1]]:{{[0-9]+}}: error: cannot read the quantized type: scale -0.5 is not a positive finite number
func.func @main(%a: tensor<2x!quant.uniform<i8:f32, -0.5>>) -> tensor<2xf32> {
  %0 = stablehlo.uniform_dequantize %a : (tensor<2x!quant.uniform<i8:f32, -0.5>>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
