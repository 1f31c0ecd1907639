// Bad Shardy annotations are located errors, never crashes.

// RUN: xla-opt %s --split-input-file --verify-diagnostics
// RUN: not xla-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: errors.mlir:[[# @LINE + 4]]:{{[0-9]+}}: error: unknown mesh @nope (the module defines @mesh)
// CHECK-NEXT: func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nope, [{"x"}]>}) -> tensor<8xf32> {
sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{unknown mesh @nope (the module defines @mesh)}}
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@nope, [{"x"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// CHECK: errors.mlir:[[# @LINE + 3]]:{{[0-9]+}}: error: axis "z" is not in mesh @mesh (axes: "x", "y")
sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error@+1 {{axis "z" is not in mesh @mesh (axes: "x", "y")}}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"z"}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error@+1 {{axis "x" is used more than once in the sharding}}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y", "x"}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
// expected-error@+1 {{axis "y" is used more than once in the sharding}}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}], replicated={"y"}>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=8]>
// expected-error@+1 {{axis "x":(2)4 overlaps "x":(1)4, which the sharding already uses}}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)4}, {"x":(2)4}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=6]>
// expected-error@+1 {{sub-axis "x":(4)2 does not fit axis "x" of size 6}}
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(4)2}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=12]>
// expected-error@+1 {{the sub-axes of "x" used by the sharding do not split it consistently (2 does not divide 3)}}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)2}, {"x":(3)2}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{invalid sub-axis "x":(1)1: the pre-size must be at least 1 and the size at least 2}}
func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x":(1)1}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{the sharding has 1 dimension sharding, but the value f32[8,8] has rank 2}}
func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}]>}) -> tensor<8x8xf32> {
  return %arg0 : tensor<8x8xf32>
}

// -----

// expected-error@+1 {{mesh @mesh has 4 devices (axes "x", "y"), but device_ids lists 3}}
sdy.mesh @mesh = <["x"=2, "y"=2], device_ids=[0, 1, 2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// expected-error@+1 {{device id 1 appears twice in mesh @mesh}}
sdy.mesh @mesh = <["x"=2], device_ids=[1, 1]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// expected-error@+1 {{mesh axis "x" is defined twice in mesh @mesh}}
sdy.mesh @mesh = <["x"=2, "x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// expected-error@+1 {{mesh axis "x" has size 0; sizes must be positive}}
sdy.mesh @mesh = <["x"=0]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
// expected-error@+1 {{redefinition of mesh @mesh}}
sdy.mesh @mesh = <["x"=4]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

// expected-error@+2 {{axis "a" is not in the inlined mesh, which has no axes}}
func.func @main(%arg0: tensor<8xf32>
    {sdy.sharding = #sdy.sharding<mesh<[]>, [{"a"}]>}) -> tensor<8xf32> {
  return %arg0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{sdy.sharding has 2 shardings, but the op has 1 result}}
  %0 = stablehlo.negate %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x"}]>, <@mesh, [{}]>]>} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{expected '>' to end the sharding, but found ']'}}
  %0 = sdy.sharding_constraint %arg0 <@mesh, [{"x"}]] : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{unsupported Shardy op 'sdy.fancy_gather'}}
  %0 = sdy.fancy_gather [{"x"}] %arg0 out_sharding=<@mesh, [{}]> : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{expected 'out_sharding' in sdy.all_gather}}
  %0 = sdy.all_gather [{"x"}] %arg0 : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2, "y"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // A partially manual region's local values are split by its manual axes only ("x" here), not by the free ones.
  // expected-error@+3 {{region argument '%arg1' has type tensor<2xf32>, but the manual shard of operand 0}}
  %0 = sdy.manual_computation(%arg0)
      in_shardings=[<@mesh, [{"x", "y"}]>] out_shardings=[<@mesh, [{"x", "y"}]>]
      manual_axes={"x"} (%arg1: tensor<2xf32>) {
    sdy.return %arg1 : tensor<2xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+2 {{manual axis "q" is not in mesh @mesh (axes: "x")}}
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
      manual_axes={"x", "q"} (%arg1: tensor<4xf32>) {
    sdy.return %arg1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
      // expected-error@+1 {{region argument '%arg1' has type tensor<8xf32>, but the manual shard of operand 0 (f32[8] under {devices=[2]<=[2]}) is f32[4]}}
      manual_axes={"x"} (%arg1: tensor<8xf32>) {
    sdy.return %arg1 : tensor<8xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<7xf32>) -> tensor<7xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
      // expected-error@+1 {{dimension 0 of f32[7] (size 7) does not split evenly into 2 manual shards}}
      manual_axes={"x"} (%arg1: tensor<3xf32>) {
    sdy.return %arg1 : tensor<3xf32>
  } : (tensor<7xf32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
sdy.mesh @other = <["x"=2], device_ids=[1, 0]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error@+1 {{all in/out shardings of sdy.manual_computation must use one mesh, but this one uses mesh @other and the first mesh @mesh}}
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@other, [{"x"}]>]
      manual_axes={"x"} (%arg1: tensor<4xf32>) {
    sdy.return %arg1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

sdy.mesh @mesh = <["x"=2]>
func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
  %0 = sdy.manual_computation(%arg0) in_shardings=[<@mesh, [{"x"}]>] out_shardings=[<@mesh, [{"x"}]>]
      manual_axes={"x"} (%arg1: tensor<4xf32>) {
    // The body is isolated from above.
    // expected-error@+1 {{use of undefined value '%arg0'}}
    %1 = stablehlo.add %arg1, %arg0 : tensor<4xf32>
    sdy.return %1 : tensor<4xf32>
  } : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
