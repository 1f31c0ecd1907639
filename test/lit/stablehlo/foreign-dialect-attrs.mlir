// Attributes and types of dialects xlac does not know (tt-mlir's ttcore/ttir/ttnn, JAX's and torch-mlir's
// annotations) are read as opaque text and dropped: their bodies follow MLIR's dialect-body rule (balanced
// <>, [], (), {}, strings skipped whole, `->` is not a closing '>').

// RUN: xla-opt %s --print-short | FileCheck %s
// RUN: xla-opt %s --print-short | xla-opt - --print-short | FileCheck %s

// CHECK: HloModule SyncTensorsGraph.683
// CHECK: ENTRY main
// CHECK: ROOT {{.*}} = bf16[512]{0} add(

#map = affine_map<(d0, d1) -> (d0 floordiv 32, d1)>
#layout = #ttnn.ttnn_layout<(d0) -> (0, d0), <1x1>, memref<1x16x!ttcore.tile<32x32, bf16>, #ttnn.buffer_type<dram>>, <interleaved>>
module @SyncTensorsGraph.683 attributes {mhlo.cross_program_prefetches = [], ttcore.meshes = #ttcore.meshes<[<"mesh" = 2x4>]>, tt.note = #tt<note "a > b -> c {">} {
  func.func @main(%arg0: tensor<512xbf16> {ttcore.argument_type = #ttcore.argument_type<parameter>, ttcore.local_shape = #ttcore<local_shape local_shape = tensor<128xbf16>>, ttcore.shard_status = #ttcore.shard_status<presharded>, ttir.name = "L__self___model.bias"},
                  %arg1: tensor<512xbf16> {ttcore.kind = #ttcore.plain, ttcore.map = #map, ttcore.layout = #layout, ttcore.tile = !ttcore.tile<32x32, bf16>, ttcore.fn = !ttcore<fn (tensor<2xf32>) -> tensor<4xf32>>}) -> (tensor<512xbf16> {ttcore.shard_status = #ttcore.shard_status<unsharded>}) {
    %0 = stablehlo.add %arg0, %arg1 {ttir.attrs = {a = #ttir<x [1, 2] (3) {k = "}"}>}} : tensor<512xbf16>
    return %0 : tensor<512xbf16>
  }
}
