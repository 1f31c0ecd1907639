// The tt-custom-calls pass's mixture-of-experts rewrites (passes/tt_custom_calls_internal.h).
#include <cstdint>
#include <string>
#include <vector>

#include "passes/tt_custom_calls_internal.h"

namespace xlac::tt_calls {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Mixture-of-experts ops (ttnn's all_to_all_dispatch / moe_expert_token_remap / sparse_matmul / all_to_all_combine).
// They run per device, inside a manual region: the cluster axis of a 2D mesh of the module's partitions (iota device
// order, num_devices of them along the axis) is the group the tokens move in; expert_mapping [1, 1, E, devices] is
// one-hot (expert e lives on the devices whose column is nonzero), and a device's local experts are the ones it holds,
// in increasing expert order. Rows ttnn leaves as placeholders (garbage) are zeros here.

struct MoeGroup {
  int64_t size = 1;                          // devices along the cluster axis (num_devices)
  int64_t axis = 0;                          // cluster axis
  int64_t stride = 1;                        // partition-id distance between neighbours in a group
  std::vector<std::vector<int64_t>> groups;  // the replica groups, members in axis order
};

absl::StatusOr<MoeGroup> Group(const Module& module, const Instruction& call) {
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> num, IntAttr(call, "num_devices"));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> axis, IntAttr(call, "cluster_axis"));
  MoeGroup g;
  g.size = num.value_or(1);
  g.axis = axis.value_or(0);
  const int64_t devices = std::max<int64_t>(1, module.config().num_partitions);
  if (g.size < 1 || (g.axis != 0 && g.axis != 1) || devices % g.size != 0) {
    return CallError(call, fmt::format("num_devices = {} along cluster_axis = {} does not fit a 2D mesh of the "
                                       "module's {} partitions (mhlo.num_partitions)",
                                       g.size, g.axis, devices));
  }
  // Mesh [rows, columns]: axis 0 groups are columns (stride = columns), axis 1 groups are rows (stride 1).
  const int64_t columns = g.axis == 0 ? devices / g.size : g.size;
  g.stride = g.axis == 0 ? columns : 1;
  const int64_t count = devices / g.size;
  for (int64_t i = 0; i < count; ++i) {
    const int64_t base = g.axis == 0 ? i : i * columns;
    std::vector<int64_t> members;
    for (int64_t o = 0; o < g.size; ++o) members.push_back(base + o * g.stride);
    g.groups.push_back(std::move(members));
  }
  return g;
}

// This device's position along the cluster axis and the partition ids of its group's members (s32 [size]).
struct GroupPlace {
  Instruction* device;    // s32[]
  Instruction* position;  // s32[]
  Instruction* members;   // s32[size]
};
GroupPlace Place(Builder& b, const MoeGroup& g) {
  GroupPlace place;
  place.device = b.PartitionId();
  Instruction* stride = b.Scalar(PrimitiveType::kS32, static_cast<double>(g.stride));
  Instruction* size = b.Scalar(PrimitiveType::kS32, static_cast<double>(g.size));
  // axis 0: position = d / columns, base = d % columns; axis 1: position = d % size, base = d - position.
  Instruction* position =
      g.axis == 0 ? b.Binary(Opcode::kDivide, place.device, stride) : b.Binary(Opcode::kRemainder, place.device, size);
  Instruction* base = b.Binary(Opcode::kSubtract, place.device, b.Binary(Opcode::kMultiply, position, stride));
  place.position = position;
  const std::vector<int64_t> n = {g.size};
  Instruction* o = b.Iota(PrimitiveType::kS32, n, 0);
  place.members =
      b.Binary(Opcode::kAdd, b.Binary(Opcode::kMultiply, o, b.Broadcast(stride, n, {})), b.Broadcast(base, n, {}));
  return place;
}

// expert_mapping [1, 1, E, devices] -> pred [E, columns.size] (owned[e, i]: expert e on device columns[i]).
Instruction* Owned(Builder& b, Instruction* mapping, Instruction* columns) {
  const std::vector<int64_t>& md = mapping->shape().dimensions;
  const int64_t experts = md[2], n = columns->shape().dimensions[0];
  Instruction* m = b.Reshape(mapping, {experts, md[3]});
  Instruction* picked = b.Gather(m, b.Reshape(columns, {n, 1}), {0}, {1}, {1}, 1, {experts, 1});  // [E, n]
  return b.Compare(picked, b.Splat(picked->shape().element_type, 0, {experts, n}), "NE");
}

// For pred owned [E, n]: s32 [E, n], how many experts before e device i holds (e's local index there).
Instruction* LocalIndex(Builder& b, Instruction* owned) {
  const int64_t experts = owned->shape().dimensions[0], n = owned->shape().dimensions[1];
  const std::vector<int64_t> cube = {experts, experts, n};
  Instruction* before = b.Compare(b.Iota(PrimitiveType::kS32, cube, 1), b.Iota(PrimitiveType::kS32, cube, 0), "LT");
  Instruction* counted = b.Binary(Opcode::kAnd, before, b.Broadcast(owned, cube, {1, 2}));
  Instruction* ones = b.Convert(counted, PrimitiveType::kS32);
  return b.Reduce(ones, {1}, Opcode::kAdd);  // sums over e' < e
}

// A token tensor [B, 1, S, C] or [B, S, 1, C] as [B, S, C].
absl::StatusOr<Instruction*> Tokens(Builder& b, const Instruction& call, Instruction* x, std::string_view what) {
  const Shape& s = x->shape();
  if (!s.IsArray() || s.rank() != 4 || (s.dimensions[1] != 1 && s.dimensions[2] != 1)) {
    return CallError(call, fmt::format("{} {} must be [B, 1, S, C] or [B, S, 1, C]", what, Str(s)));
  }
  return b.Reshape(x, {s.dimensions[0], s.dimensions[1] * s.dimensions[2], s.dimensions[3]});
}

bool IsMapping(const Shape& s) {
  return s.IsArray() && s.rank() == 4 && s.dimensions[0] == 1 && s.dimensions[1] == 1 &&
         (IsIntegralType(s.element_type) || IsFloatingPointType(s.element_type) ||
          s.element_type == PrimitiveType::kPred);
}

}  // namespace

// all_to_all_dispatch(tokens [B,1,S,H], expert_indices [B,1,S,K], expert_mapping [1,1,E,devices])
//   -> (dispatched [1, B*D, S, H], metadata [1, B*D, S, K]): the tokens and indices of the whole group gathered in axis
//   order; a token none of whose experts lives on this device is a zero row.
absl::StatusOr<Instruction*> AllToAllDispatch(Module& module, Computation& comp, Instruction* call,
                                              ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(tokens [B,1,S,H], expert_indices [B,1,S,K], expert_mapping [1,1,E,devices]) -> (dispatched [1,B*D,S,H], "
      "metadata [1,B*D,S,K])";
  if (call->operand_count() != 3 || !call->shape().IsTuple() || call->shape().tuple_shapes.size() != 2 ||
      !IsMapping(call->operand(2)->shape()) || !IsIntArray(call->operand(1)->shape())) {
    return CallError(*call, fmt::format("expected {}", kForm));
  }
  XLAC_ASSIGN_OR_RETURN(MoeGroup g, Group(module, *call));
  Builder b(module, comp, *call, shared);
  XLAC_ASSIGN_OR_RETURN(Instruction * x, Tokens(b, *call, call->operand(0), "the tokens"));
  XLAC_ASSIGN_OR_RETURN(Instruction * idx, Tokens(b, *call, call->operand(1), "the expert indices"));
  const int64_t batch = x->shape().dimensions[0], seq = x->shape().dimensions[1], h = x->shape().dimensions[2];
  const int64_t k = idx->shape().dimensions[2], rows = batch * g.size;
  const Shape& out0 = call->shape().tuple_shapes[0];
  const Shape& out1 = call->shape().tuple_shapes[1];
  if (idx->shape().dimensions[0] != batch || idx->shape().dimensions[1] != seq ||
      !out0.Compatible(Shape::Array(x->shape().element_type, {1, rows, seq, h})) ||
      !out1.Compatible(Shape::Array(idx->shape().element_type, {1, rows, seq, k}))) {
    return CallError(*call,
                     fmt::format("expected {} with D = num_devices = {}, got ({}, {}) -> {}", kForm, g.size,
                                 Str(call->operand(0)->shape()), Str(call->operand(1)->shape()), Str(call->shape())));
  }
  if (g.size > 1) {
    x = b.AllGather(x, 0, g.groups);
    idx = b.AllGather(idx, 0, g.groups);
  }
  GroupPlace place = Place(b, g);
  // Which gathered tokens chose an expert of this device: owned[idx[t, s, k]] for any k.
  Instruction* mine = Owned(b, call->operand(2), b.Reshape(place.device, {1}));  // [E, 1]
  const int64_t experts = mine->shape().dimensions[0];
  Instruction* expert = b.Convert(idx, PrimitiveType::kS32);  // [rows, S, K]
  Instruction* hit = b.Gather(b.Reshape(mine, {experts}), b.Reshape(expert, {rows, seq, k, 1}), {}, {0}, {0}, 3, {1});
  // Out-of-range expert indices select nothing.
  const std::vector<int64_t> rsk = {rows, seq, k};
  Instruction* in_range =
      b.Binary(Opcode::kAnd, b.Compare(expert, b.Splat(PrimitiveType::kS32, 0, rsk), "GE"),
               b.Compare(expert, b.Splat(PrimitiveType::kS32, static_cast<double>(experts), rsk), "LT"));
  hit = b.Binary(Opcode::kAnd, hit, in_range);
  Instruction* any =
      b.Convert(b.Reduce(b.Convert(hit, PrimitiveType::kS32), {2}, Opcode::kMaximum), PrimitiveType::kPred);
  const std::vector<int64_t> rsh = {rows, seq, h};
  Instruction* dispatched = b.Select(b.Broadcast(any, rsh, {0, 1}), x, b.Splat(x->shape().element_type, 0, rsh));
  Instruction* out = b.Add(Opcode::kTuple, call->shape(),
                           {b.Reshape(dispatched, {1, rows, seq, h}), b.Reshape(idx, {1, rows, seq, k})});
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

// moe_expert_token_remap(topk [1, T', S, E] scores, expert_mapping, metadata [1, T', S, K])
//   -> (mapping [1, T', S, E_local], reduced [1, 1, ceil(T' * S / reduction_size), E_local]): for each token the score
//   of each local expert it selected (else 0), and per chunk of reduction_size tokens 1 where any token selected the
//   local expert.
absl::StatusOr<Instruction*> MoeExpertTokenRemap(Module& module, Computation& comp, Instruction* call,
                                                 ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(topk [1,BD,S,E], expert_mapping [1,1,E,devices], metadata [1,BD,S,K]) -> (mapping [1,BD,S,E_local], "
      "reduced [1,1,ceil(BD*S/reduction_size),E_local])";
  bool ok = call->operand_count() == 3 && call->shape().IsTuple() && call->shape().tuple_shapes.size() == 2;
  const Shape* topk = ok ? &call->operand(0)->shape() : nullptr;
  const Shape* meta = ok ? &call->operand(2)->shape() : nullptr;
  ok = ok && topk->IsArray() && topk->rank() == 4 && IsFloatingPointType(topk->element_type) &&
       IsMapping(call->operand(1)->shape()) && call->operand(1)->shape().dimensions[2] == topk->dimensions[3] &&
       IsIntArray(*meta) && meta->rank() == 4 &&
       meta->dimensions[1] * meta->dimensions[2] == topk->dimensions[1] * topk->dimensions[2] * topk->dimensions[0];
  if (!ok) return CallError(*call, fmt::format("expected {}", kForm));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> reduction, IntAttr(*call, "reduction_size"));
  const int64_t chunk = reduction.value_or(32);
  const int64_t tokens = topk->dimensions[0] * topk->dimensions[1] * topk->dimensions[2];
  const int64_t experts = topk->dimensions[3], k = meta->dimensions[3];
  const Shape& out0 = call->shape().tuple_shapes[0];
  const Shape& out1 = call->shape().tuple_shapes[1];
  const int64_t local = out0.IsArray() && out0.rank() == 4 ? out0.dimensions[3] : -1;
  const int64_t chunks = chunk > 0 ? (tokens + chunk - 1) / chunk : -1;
  if (chunk <= 0 || local < 1 || local > experts ||
      !out0.Compatible(
          Shape::Array(topk->element_type, {topk->dimensions[0], topk->dimensions[1], topk->dimensions[2], local})) ||
      !out1.IsArray() || out1.ElementCount() != chunks * local || !IsFloatingPointType(out1.element_type)) {
    return CallError(*call, fmt::format("expected {} with reduction_size = {}, got {} -> {}", kForm, chunk, Str(*topk),
                                        Str(call->shape())));
  }
  Builder b(module, comp, *call, shared);
  const PrimitiveType f32 = PrimitiveType::kF32;
  // slot[e, j]: local slot j of this device is expert e.
  Instruction* owned = b.Reshape(Owned(b, call->operand(1), b.Reshape(b.PartitionId(), {1})), {experts});
  Instruction* index = b.Reshape(LocalIndex(b, b.Reshape(owned, {experts, 1})), {experts});
  const std::vector<int64_t> ej = {experts, local};
  Instruction* slot = b.Binary(Opcode::kAnd, b.Broadcast(owned, ej, {0}),
                               b.Compare(b.Broadcast(index, ej, {0}), b.Iota(PrimitiveType::kS32, ej, 1), "EQ"));
  // selected[t, e]: token t chose expert e.
  Instruction* meta32 = b.Reshape(b.Convert(call->operand(2), PrimitiveType::kS32), {tokens, k});
  const std::vector<int64_t> tke = {tokens, k, experts};
  Instruction* chose = b.Compare(b.Broadcast(meta32, tke, {0, 1}), b.Iota(PrimitiveType::kS32, tke, 2), "EQ");
  Instruction* selected = b.Reduce(b.Convert(chose, f32), {1}, Opcode::kMaximum);  // [T, E] 0/1
  Instruction* scores = b.Reshape(b.Convert(call->operand(0), f32), {tokens, experts});
  Instruction* picked = b.Binary(Opcode::kMultiply, scores, selected);
  Instruction* one_hot = b.Convert(slot, f32);
  // One-hot dots: each output sums one product by 1 with zeros, so the scores come through exactly.
  Instruction* mapping = b.Dot(picked, one_hot, {}, {}, {1}, {0});  // [T, E_local]
  Instruction* used = b.Dot(selected, one_hot, {}, {}, {1}, {0});   // [T, E_local] 0/1
  if (chunks * chunk != tokens) {
    used = b.Concatenate({used, b.Splat(f32, 0, {chunks * chunk - tokens, local})}, 0);
  }
  Instruction* reduced = b.Reduce(b.Reshape(used, {chunks, chunk, local}), {1}, Opcode::kMaximum);
  Instruction* out = b.Add(Opcode::kTuple, call->shape(),
                           {b.Reshape(b.Convert(mapping, out0.element_type), out0.dimensions),
                            b.Reshape(b.Convert(reduced, out1.element_type), out1.dimensions)});
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

// sparse_matmul(a, b [1, E, K, N], sparsity) {is_input_a_sparse, is_input_b_sparse}: batched products of a with each
// expert's matrix, computed (accumulated in f32) where the sparsity is nonzero and zero elsewhere:
//   b sparse: a [A, B, M, K], sparsity [A, B, 1, E] -> [A, B, 1, E, M, N] = a[a, b] @ b[0, e];
//   a sparse: a [A, E, M, K], sparsity [1, 1, A, E] -> [A, E, M, N] = a[a, e] @ b[0, e];
//   both: a [A, E, M, K] -> [A, E, M, N] = a[a, e] @ b[0, e] for every block (tt-xla's definition ignores the
//   sparsity).
absl::StatusOr<Instruction*> SparseMatmul(Module& module, Computation& comp, Instruction* call,
                                          ScalarComputations& shared) {
  XLAC_ASSIGN_OR_RETURN(bool a_sparse, BoolAttr(*call, "is_input_a_sparse", false));
  XLAC_ASSIGN_OR_RETURN(bool b_sparse, BoolAttr(*call, "is_input_b_sparse", true));
  if (!a_sparse && !b_sparse) return CallError(*call, "is_input_a_sparse and is_input_b_sparse are both False");
  const std::string_view form = !a_sparse ? "(a [A,B,M,K], b [1,E,K,N], sparsity [A,B,1,E]) -> [A,B,1,E,M,N]"
                                          : (b_sparse ? "(a [A,E,M,K], b [1,E,K,N], sparsity) -> [A,E,M,N]"
                                                      : "(a [A,E,M,K], b [1,E,K,N], sparsity [1,1,A,E]) -> [A,E,M,N]");
  bool ok = call->operand_count() == 3 && call->shape().IsArray();
  const Shape* as = ok ? &call->operand(0)->shape() : nullptr;
  const Shape* bs = ok ? &call->operand(1)->shape() : nullptr;
  const Shape* ss = ok ? &call->operand(2)->shape() : nullptr;
  ok = ok && IsFloatArray(*as, 4) && IsFloatArray(*bs, 4) && bs->dimensions[0] == 1 && ss->IsArray() &&
       as->dimensions[3] == bs->dimensions[2];
  const int64_t e = ok ? bs->dimensions[1] : 0, n = ok ? bs->dimensions[3] : 0;
  Shape expected;
  if (ok) {
    const std::vector<int64_t>& ad = as->dimensions;
    if (!a_sparse) {
      expected = Shape::Array(as->element_type, {ad[0], ad[1], 1, e, ad[2], n});
      ok = ss->dimensions == std::vector<int64_t>{ad[0], ad[1], 1, e};
    } else {
      expected = Shape::Array(as->element_type, {ad[0], e, ad[2], n});
      ok = ad[1] == e && (b_sparse || ss->ElementCount() == ad[0] * e);
    }
    ok = ok && call->shape().Compatible(expected);
  }
  if (!ok) return CallError(*call, fmt::format("expected {}", form));
  Builder b(module, comp, *call, shared);
  const std::vector<int64_t>& ad = as->dimensions;
  Instruction* w = b.Reshape(call->operand(1), {e, ad[3], n});
  const PrimitiveType f32 = PrimitiveType::kF32;
  Instruction* product;
  Instruction* keep = nullptr;
  if (!a_sparse) {
    // [A, B, M, E, N] -> [A, B, E, M, N]
    product = b.Transpose(b.Dot(call->operand(0), w, {}, {}, {3}, {1}, f32), {0, 1, 3, 2, 4});
    product = b.Reshape(product, expected.dimensions);
    Instruction* nz = b.Compare(call->operand(2), b.Splat(ss->element_type, 0, ss->dimensions), "NE");
    keep = b.Broadcast(nz, expected.dimensions, {0, 1, 2, 3});
  } else {
    // batch over the experts: [E, A, M, N] -> [A, E, M, N]
    product = b.Transpose(b.Dot(call->operand(0), w, {1}, {0}, {3}, {1}, f32), {1, 0, 2, 3});
    if (!b_sparse) {
      Instruction* sp = b.Reshape(call->operand(2), {ad[0], e});
      Instruction* nz = b.Compare(sp, b.Splat(ss->element_type, 0, {ad[0], e}), "NE");
      keep = b.Broadcast(nz, expected.dimensions, {0, 1});
    }
  }
  if (keep != nullptr) product = b.Select(keep, product, b.Splat(f32, 0, expected.dimensions));
  Instruction* out = b.Convert(product, as->element_type);
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

// all_to_all_combine(expert outputs [E_local, B*D, S, H], metadata [1, B*D, S, K], expert_mapping)
//   {num_experts_per_tok, output_shard_dim} -> [K, B, S, H] (in the call's result shape): for this device's tokens
//   (rows position * B + b of the dispatched buffers), slot k is the output of expert metadata[k] from the group
//   device that holds it (its local index there); zero where no device of the group holds the expert.
absl::StatusOr<Instruction*> AllToAllCombine(Module& module, Computation& comp, Instruction* call,
                                             ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(expert outputs [E_local,B*D,S,H], metadata [1,B*D,S,K], expert_mapping [1,1,E,devices]) -> [K,B,S,H] "
      "(or [K,B*S,1,H] / [K,1,B*S,H])";
  bool ok = call->operand_count() == 3 && call->shape().IsArray();
  const Shape* in = ok ? &call->operand(0)->shape() : nullptr;
  const Shape* meta = ok ? &call->operand(1)->shape() : nullptr;
  ok = ok && in->IsArray() && in->rank() == 4 && IsIntArray(*meta) && meta->rank() == 4 && meta->dimensions[0] == 1 &&
       meta->dimensions[1] == in->dimensions[1] && meta->dimensions[2] == in->dimensions[2] &&
       IsMapping(call->operand(2)->shape());
  if (!ok) return CallError(*call, fmt::format("expected {}", kForm));
  XLAC_ASSIGN_OR_RETURN(MoeGroup g, Group(module, *call));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> k_attr, IntAttr(*call, "num_experts_per_tok"));
  const int64_t local = in->dimensions[0], rows = in->dimensions[1], seq = in->dimensions[2], h = in->dimensions[3];
  const int64_t k = meta->dimensions[3];
  const int64_t batch = rows / g.size;
  if (rows % g.size != 0 || (k_attr && *k_attr != k) || call->shape().element_type != in->element_type ||
      call->shape().ElementCount() != k * batch * seq * h || call->shape().rank() != 4 ||
      call->shape().dimensions[0] != k || call->shape().dimensions[3] != h) {
    return CallError(*call, fmt::format("expected {} with D = num_devices = {} and K = num_experts_per_tok, got ({}, "
                                        "{}) -> {}",
                                        kForm, g.size, Str(*in), Str(*meta), Str(call->shape())));
  }
  Builder b(module, comp, *call, shared);
  GroupPlace place = Place(b, g);
  Instruction* all = call->operand(0);
  if (g.size > 1) {
    all = b.AllGather(b.Reshape(all, {1, local, rows, seq, h}), 0, g.groups);  // [D, E_local, rows, S, H]
  } else {
    all = b.Reshape(all, {1, local, rows, seq, h});
  }
  const int64_t experts = call->operand(2)->shape().dimensions[2];
  Instruction* owned = Owned(b, call->operand(2), place.members);  // [E, D]
  Instruction* local_index = LocalIndex(b, owned);                 // [E, D]
  // owner[e]: the first group member holding e, or D when none does.
  const std::vector<int64_t> ed = {experts, g.size};
  Instruction* candidates = b.Select(owned, b.Iota(PrimitiveType::kS32, ed, 1),
                                     b.Splat(PrimitiveType::kS32, static_cast<double>(g.size), ed));
  Instruction* owner = b.Reduce(candidates, {1}, Opcode::kMinimum);
  // This device's rows of the metadata: [B, S, K].
  Instruction* zero = b.Scalar(PrimitiveType::kS32, 0);
  Instruction* first_row =
      b.Binary(Opcode::kMultiply, place.position, b.Scalar(PrimitiveType::kS32, static_cast<double>(batch)));
  Instruction* mine = b.DynamicSlice(b.Convert(call->operand(1), PrimitiveType::kS32), {zero, first_row, zero, zero},
                                     {1, batch, seq, k});
  Instruction* expert = b.Reshape(mine, {batch, seq, k});
  const std::vector<int64_t> bsk = {batch, seq, k};
  Instruction* in_range =
      b.Binary(Opcode::kAnd, b.Compare(expert, b.Splat(PrimitiveType::kS32, 0, bsk), "GE"),
               b.Compare(expert, b.Splat(PrimitiveType::kS32, static_cast<double>(experts), bsk), "LT"));
  Instruction* safe = b.Select(in_range, expert, b.Splat(PrimitiveType::kS32, 0, bsk));
  Instruction* src = b.Gather(owner, b.Reshape(safe, {batch, seq, k, 1}), {}, {0}, {0}, 3, {1});  // [B, S, K]
  Instruction* has_owner = b.Compare(src, b.Splat(PrimitiveType::kS32, static_cast<double>(g.size), bsk), "LT");
  Instruction* src_safe = b.Select(has_owner, src, b.Splat(PrimitiveType::kS32, 0, bsk));
  Instruction* ej = b.Gather(
      local_index, b.Concatenate({b.Reshape(safe, {batch, seq, k, 1}), b.Reshape(src_safe, {batch, seq, k, 1})}, 3), {},
      {0, 1}, {0, 1}, 3, {1, 1});  // [B, S, K]
  Instruction* valid = b.Binary(Opcode::kAnd, b.Binary(Opcode::kAnd, in_range, has_owner),
                                b.Compare(ej, b.Splat(PrimitiveType::kS32, static_cast<double>(local), bsk), "LT"));
  Instruction* row = b.Binary(Opcode::kAdd, b.Broadcast(first_row, bsk, {}), b.Iota(PrimitiveType::kS32, bsk, 0));
  Instruction* s = b.Iota(PrimitiveType::kS32, bsk, 1);
  auto col = [&](Instruction* x) { return b.Reshape(x, {batch, seq, k, 1}); };
  Instruction* where = b.Concatenate({col(src_safe), col(ej), col(row), col(s)}, 3);                // [B, S, K, 4]
  Instruction* picked = b.Gather(all, where, {3}, {0, 1, 2, 3}, {0, 1, 2, 3}, 3, {1, 1, 1, 1, h});  // [B, S, K, H]
  const std::vector<int64_t> bskh = {batch, seq, k, h};
  picked = b.Select(b.Broadcast(valid, bskh, {0, 1, 2}), picked, b.Splat(in->element_type, 0, bskh));
  Instruction* out = b.Reshape(b.Transpose(picked, {2, 0, 1, 3}), call->shape().dimensions);
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

}  // namespace xlac::tt_calls
