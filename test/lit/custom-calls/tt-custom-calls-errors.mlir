// A tt.* custom call whose operands or frontend attributes are not what tt-xla writes is an error at the call (the
// pass never guesses): query heads that are not a multiple of the key/value heads (here), an attribute that is not a
// boolean, a has_* flag naming an operand the call does not have, a page table that is not [users, pages].

// RUN: not xla-opt %s --passes=tt-custom-calls 2>&1 | FileCheck %s
// RUN: not xla-run %s 2>&1 | FileCheck %s --check-prefix=EXEC
// CHECK: error: {{.*}}custom-call %custom-call.4 (target "tt.scaled_dot_product_attention"): expected (query [B,H,Sq,D], key [B,Hkv,Sk,D], value [B,Hkv,Sk,Dv][, mask]) -> [B,H,Sq,Dv] (the query heads a multiple of the key/value heads), got (f32[1,3,4,8], f32[1,2,4,8], f32[1,2,4,8])
// EXEC: tt-custom-calls-errors.mlir:[[@LINE+4]]:5: error: custom-call %custom-call.4 (target "tt.scaled_dot_product_attention"): expected

module @m {
  func.func public @main(%q: tensor<1x3x4x8xf32>, %k: tensor<1x2x4x8xf32>, %v: tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32> {
    %0 = stablehlo.custom_call @tt.scaled_dot_product_attention(%q, %k, %v) {api_version = 0 : i32, mhlo.frontend_attributes = {is_causal = "True"}} : (tensor<1x3x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x3x4x8xf32>
    return %0 : tensor<1x3x4x8xf32>
  }
}

// RUN: not xla-run %S/Inputs/tt-error-causal-attr.mlir 2>&1 | FileCheck %s --check-prefix=ATTR
// ATTR: tt-error-causal-attr.mlir:3:5: error: custom-call %custom-call.4 (target "tt.scaled_dot_product_attention"): frontend attribute is_causal = "yes" is not a boolean ("True" or "False")

// RUN: not xla-run %S/Inputs/tt-error-decode-operands.mlir 2>&1 | FileCheck %s --check-prefix=DECODE
// DECODE: tt-error-decode-operands.mlir:3:5: error: custom-call %custom-call.5 (target "tt.scaled_dot_product_attention_decode"): has_attention_mask says an operand is there, but the call has only 4 operands; expected (query [1,B,H,D], key [B,Hkv,S,D], value [B,Hkv,S,Dv], cur_pos [B][, mask][, sink]) -> [1,B,H,Dv]

// RUN: not xla-run %S/Inputs/tt-error-paged-table.mlir 2>&1 | FileCheck %s --check-prefix=TABLE
// TABLE: tt-error-paged-table.mlir:3:5: error: custom-call %custom-call.5 (target "tt.paged_update_cache"): expected (cache [blocks,H,block,D], value [1,B,H',D] (H' >= H), positions [B], page_table [B,P]) -> cache
