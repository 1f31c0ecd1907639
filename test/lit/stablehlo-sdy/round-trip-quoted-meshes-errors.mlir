// A malformed mesh quoted inside xla.sdy.meshes (Shardy's older round-trip form) is an error at the exact place in
// the file, through both levels of escapes.

// RUN: not xla-opt %s --split-input-file 2>&1 | FileCheck %s

// The missing '=' is at column 110: the `2` after `\\22b\\22 `.
// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:110: error: in mesh @mesh of xla.sdy.meshes "#sdy.mesh<"a"=2, "b" 2>": expected '=' after the mesh axis name, but found '2'
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = \22#sdy.mesh<\\22a\\22=2, \\22b\\22 2>\22}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// The second "a" starts at column 100.
// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:100: error: mesh axis "a" is defined twice in mesh @mesh
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = \22#sdy.mesh<\\22a\\22=2, \\22a\\22=2>\22}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:77: error: mesh @mesh of xla.sdy.meshes "#sdy.sharding<@m, []>" is not a #sdy.mesh<...>
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = \22#sdy.sharding<@m, []>\22}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:100: error: mesh @mesh of xla.sdy.meshes "#sdy.mesh<"a"=2> x" has text after its mesh
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = \22#sdy.mesh<\\22a\\22=2> x\22}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:100: error: device id 0 appears twice in mesh @mesh
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = \22#sdy.mesh<\\22a\\22=2, device_ids=[0, 0]>\22}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:74: error: xla.sdy.meshes: @mesh is not a #sdy.mesh<...> (nor a string holding one)
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = 3}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}

// -----

// Today's unquoted form: its errors are now exact too (the second "a" at column 96).
// CHECK: round-trip-quoted-meshes-errors.mlir:[[# @LINE + 1]]:96: error: mesh axis "a" is defined twice in mesh @mesh
module attributes {mhlo.frontend_attributes = {xla.sdy.meshes = "{mesh = #sdy.mesh<[\22a\22=2, \22a\22=2]>}"}} {
  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {
    return %arg0 : tensor<8xf32>
  }
}
