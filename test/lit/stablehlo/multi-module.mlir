// A compiler log holding several top-level modules (tt-xla prints the StableHLO module, then the TTIR and TTNN
// modules it lowered to): the StableHLO module is read, the others are skipped lexically with a warning. Each
// print numbers its own #loc aliases, so a later module's #loc1 does not replace the one read.

// RUN: xla-opt %s 2>&1 | FileCheck %s
// RUN: xla-opt %s --print-short 2>/dev/null | xla-opt - --print-short | FileCheck %s --check-prefix=RT

// CHECK: multi-module.mlir:[[# @LINE + 24]]:1: warning: file holds 3 modules; using the first (@SyncTensorsGraph.7, line [[# @LINE + 12]]); skipping the second (@SyncTensorsGraph.7, line [[# @LINE + 24]]): it holds builtin, ttcore, ttir ops; the third (@SyncTensorsGraph.7, line [[# @LINE + 37]]): it holds builtin, ttcore, ttnn ops
// CHECK: HloModule SyncTensorsGraph.7
// CHECK: ENTRY %main
// CHECK: multiply({{.*}}metadata={op_name="mul.3"}

// RT: HloModule SyncTensorsGraph.7
// RT: ROOT {{.*}} multiply(

// -----------------------------------------------------------------------------
// START SHLO MODULE
// -----------------------------------------------------------------------------
#loc1 = loc("mul.3")
module @SyncTensorsGraph.7 attributes {mhlo.cross_program_prefetches = [], mhlo.is_dynamic = false} {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = stablehlo.multiply %arg0, %arg0 : tensor<4xf32> loc(#loc1)
    return %0 : tensor<4xf32>
  }
}
// -----------------------------------------------------------------------------
// END SHLO MODULE
// -----------------------------------------------------------------------------
#loc1 = loc("ttir.other")
#map = affine_map<(d0) -> (d0)>
// START TTIR MODULE
module @SyncTensorsGraph.7 attributes {ttcore.meshes = #ttcore.meshes<[<"mesh" = 2x4>]>} {
  ttcore.device_module {
    builtin.module @SyncTensorsGraph.7 attributes {ttcore.system_desc = #ttcore.system_desc<[{arch = <wormhole_b0>}]>} {
      func.func @main(%arg0: tensor<4xf32> {ttcore.argument_type = #ttcore.argument_type<input>}) -> tensor<4xf32> {
        %0 = ttir.empty() : tensor<4xf32>
        %1 = "ttir.multiply"(%arg0, %arg0, %0) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
        return %1 : tensor<4xf32>
      }
    }
  }
}
// START TTNN MODULE
#dram = #ttnn.buffer_type<dram>
module @SyncTensorsGraph.7 attributes {} {
  ttcore.device_module {
    builtin.module {
      func.func @main(%arg0: tensor<4xf32, #ttnn.ttnn_layout<(d0) -> (0, d0), <1x1>, memref<1x1x!ttcore.tile<32x32, f32>, #dram>, <interleaved>>>) -> tensor<4xf32> {
        %0 = "ttnn.get_device"() <{mesh_shape = #ttnn<mesh_shape 2x4>}> : () -> !ttnn.device
        "ttnn.deallocate"(%arg0) <{force = false}> : (tensor<4xf32>) -> ()
        %1 = ttcore.load_cached(@main_const_eval_0, []) : () -> tensor<4xf32>
        return %1 : tensor<4xf32>
      }
    }
  }
}
