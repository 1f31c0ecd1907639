// Tenstorrent's custom calls, rewritten at load (compiler.h's LoadModule, after the library custom calls) into the
// HLO they mean, so that both backends and the partitioner run them. tt-xla / tt-torch export the ops Tenstorrent
// hardware has natively as `stablehlo.custom_call @tt.<op>(...) {mhlo.frontend_attributes = {key = "value"}}`; the
// attribute values are strings (Python's str(): "True", "0.125", "32"). What each becomes (docs/passes.md,
// `tt-custom-calls`, gives the sources):
//  - tt.scaled_dot_product_attention (q [B,H,Sq,D], k [B,Hkv,Sk,D], v [B,Hkv,Sk,Dv][, mask]) {is_causal, scale,
//    sliding_window_size}: softmax(q k^T * scale + mask) v in f32 for narrower float types, the mask broadcast
//    (left-padded to rank 4), a boolean mask meaning "attend"; is_causal keeps keys j <= i (top-left aligned, as
//    torch's is_causal); scale defaults to 1/sqrt(D); grouped-query attention when Hkv < H (query head h reads kv head
//    h / (H / Hkv), torch's repeat_interleave); a sliding window of W keeps i - W < j <= i (causal) or |i - j| <= W/2;
//  - tt.scaled_dot_product_attention_decode (q [1,B,H,D], k, v [B,Hkv,S,D], cur_pos [B][, mask][, sink])
//    {is_causal, has_attention_mask, has_attention_sink, scale}: one query per user; causal attends keys
//    j <= cur_pos[b] (a user with cur_pos < 0 gets zeros), otherwise the mask ([B,1,H,S] decode layout or anything
//    broadcastable to [B,H,1,S]); an attention sink adds one logit sink[h] * scale to each head's softmax;
//  - tt.paged_scaled_dot_product_attention_decode (q, k_cache, v_cache [blocks,Hkv,block,D], page_table [B,P]
//    [, mask][, cur_pos][, sink]) {has_attention_mask, has_cur_pos_tensor, has_attention_sink, is_causal, scale}: the
//    decode above on the caches gathered through the page table (user b's position t lives in block
//    page_table[b, t / block] at offset t % block);
//  - tt.update_cache (cache [B,H,S,D], value [B,H,1,D], position [1]) and tt.fill_cache (cache, value [B,H,T,D])
//    {batch_offset}: dynamic-update-slice at (0, 0, position, 0) and at (batch_offset, 0, 0, 0);
//  - tt.paged_update_cache (cache [blocks,H,block,D], value [1,B,H',D], positions [B], page_table [B,P]): a scatter of
//    value[0, b, :H] to position positions[b] of user b (users with a negative position are skipped);
//    tt.paged_fill_cache (cache, value [1,H,T,D], page_table [B,P], batch_idx [1]): a scatter of the T tokens to
//    positions 0..T-1 of user batch_idx;
//  - the MoE ops of a manual region, per device (the cluster axis of a 2D mesh of the module's partitions; expert
//    e lives on the partitions expert_mapping [1,1,E,devices] marks): tt.all_to_all_dispatch (an all-gather of the
//    group's tokens and expert indices, tokens with no expert on this device zeroed), tt.moe_expert_token_remap
//    (scores of the local experts each token chose, and per-chunk usage), tt.sparse_matmul (per-expert dots, zero
//    where the sparsity is 0) and tt.all_to_all_combine (each token's k-th expert output from the group device that
//    holds the expert: an all-gather and a gather).
// Typed-FFI calls (api_version 4) of these targets are left to their FFI handler.
// Preconditions: a verified module. A call with these targets but another signature or an attribute that cannot be
// read is an error at the call.
#pragma once

#include "absl/status/statusor.h"
#include "ir/diagnostics.h"
#include "ir/module.h"

namespace xlac {

// The pass (registered as tt-custom-calls). Returns whether the module changed.
absl::StatusOr<bool> RunTtCustomCalls(Module& module);

// For drivers: runs the pass and reports its error as a located diagnostic to `diags`. Returns false on error.
bool RewriteTtCustomCalls(Module& module, DiagnosticEngine& diags);

}  // namespace xlac
