#include "passes/tt_custom_calls.h"

#include <cmath>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "passes/replace_call.h"
#include "passes/tt_custom_calls_internal.h"

namespace xlac {
namespace tt_calls {
namespace {

// ---------------------------------------------------------------------------------------------------------------
// Attention.

struct Attention {
  Instruction* q = nullptr;        // [B, H, Sq, D], compute type
  Instruction* k = nullptr;        // [B, Hkv, Sk, D]
  Instruction* v = nullptr;        // [B, Hkv, Sk, Dv]
  Instruction* bias = nullptr;     // additive [B, H, Sq, Sk] or null
  Instruction* allowed = nullptr;  // pred [B, H, Sq, Sk] or null: false scores -inf
  Instruction* sink = nullptr;     // [H] logits (before the scale) or null
  double scale = 1.0;
};

// softmax(q k^T * scale + bias, masked, with the sink's extra logit) v: [B, H, Sq, Dv] in the compute type. Grouped
// query heads read their kv head without copying it: q [B, H, Sq, D] is [B, Hkv, G, Sq, D] (h = hkv * G + g).
Instruction* Attend(Builder& b, const Attention& a) {
  const std::vector<int64_t>& qd = a.q->shape().dimensions;
  const std::vector<int64_t>& kd = a.k->shape().dimensions;
  const int64_t batch = qd[0], heads = qd[1], sq = qd[2], d = qd[3];
  const int64_t kv_heads = kd[1], sk = kd[2], dv = a.v->shape().dimensions[3];
  const int64_t group = heads / kv_heads;
  const PrimitiveType type = a.q->shape().element_type;
  const std::vector<int64_t> scores_dims = {batch, heads, sq, sk};
  const std::vector<int64_t> rows = {batch, heads, sq};

  // [B, Hkv, G, Sq, D] . [B, Hkv, Sk, D] -> [B, Hkv, G, Sq, Sk]: splitting and merging the head dimension keeps a
  // head-sharded program sharded (the partitioner splits H's tiles into Hkv's).
  Instruction* q = b.Reshape(a.q, {batch, kv_heads, group, sq, d});
  Instruction* scores = b.Reshape(b.Dot(q, a.k, {0, 1}, {0, 1}, {4}, {3}), scores_dims);
  scores = b.Binary(Opcode::kMultiply, scores, b.Splat(type, a.scale, scores_dims));
  if (a.bias != nullptr) scores = b.Binary(Opcode::kAdd, scores, a.bias);
  if (a.allowed != nullptr) scores = b.Select(a.allowed, scores, b.Splat(type, -INFINITY, scores_dims));

  Instruction* max = b.Reduce(scores, {3}, Opcode::kMaximum);
  Instruction* sink = nullptr;
  if (a.sink != nullptr) {
    Instruction* logits = b.Binary(Opcode::kMultiply, a.sink, b.Splat(type, a.scale, {heads}));
    sink = b.Broadcast(logits, rows, {1});
    max = b.Binary(Opcode::kMaximum, max, sink);
  }
  Instruction* shifted = b.Binary(Opcode::kSubtract, scores, b.Broadcast(max, scores_dims, {0, 1, 2}));
  Instruction* e = b.Unary(Opcode::kExp, shifted);
  Instruction* sum = b.Reduce(e, {3}, Opcode::kAdd);
  if (sink != nullptr) sum = b.Binary(Opcode::kAdd, sum, b.Unary(Opcode::kExp, b.Binary(Opcode::kSubtract, sink, max)));
  Instruction* probs = b.Binary(Opcode::kDivide, e, b.Broadcast(sum, scores_dims, {0, 1, 2}));

  probs = b.Reshape(probs, {batch, kv_heads, group, sq, sk});
  Instruction* out = b.Dot(probs, a.v, {0, 1}, {0, 1}, {4}, {2});
  return b.Reshape(out, {batch, heads, sq, dv});
}

// A mask operand as an additive bias (or, boolean, as `allowed`) of `target` dims: left-padded to the target's rank,
// dimensions of size 1 broadcast (PyTorch's rule).
absl::Status MaskTo(Builder& b, const Instruction& call, Instruction* mask, const std::vector<int64_t>& target,
                    PrimitiveType type, Attention& a) {
  const Shape& s = mask->shape();
  const int64_t rank = static_cast<int64_t>(target.size());
  if (!s.IsArray() || s.rank() > rank ||
      !(IsFloatingPointType(s.element_type) || s.element_type == PrimitiveType::kPred)) {
    return CallError(call, fmt::format("the attention mask {} must be a float or pred array broadcastable to [{}]",
                                       Str(s), fmt::join(target, ", ")));
  }
  const int64_t pad = rank - s.rank();
  std::vector<int64_t> kept_dims, mapping;
  for (int64_t i = 0; i < s.rank(); ++i) {
    const int64_t want = target[pad + i];
    if (s.dimensions[i] == want) {
      kept_dims.push_back(want);
      mapping.push_back(pad + i);
    } else if (s.dimensions[i] != 1) {
      return CallError(
          call, fmt::format("the attention mask {} does not broadcast to [{}]", Str(s), fmt::join(target, ", ")));
    }
  }
  Instruction* m = b.Broadcast(b.Reshape(mask, kept_dims), target, mapping);
  if (s.element_type == PrimitiveType::kPred) {
    a.allowed = a.allowed == nullptr ? m : b.Binary(Opcode::kAnd, a.allowed, m);
  } else {
    m = b.Convert(m, type);
    a.bias = a.bias == nullptr ? m : b.Binary(Opcode::kAdd, a.bias, m);
  }
  return absl::OkStatus();
}

void AndAllowed(Builder& b, Attention& a, Instruction* allowed) {
  a.allowed = a.allowed == nullptr ? allowed : b.Binary(Opcode::kAnd, a.allowed, allowed);
}

// pred [B, H, Sq, Sk]: key j allowed for query i by causality (j <= i) and a sliding window.
Instruction* PositionMask(Builder& b, const std::vector<int64_t>& dims, bool causal, std::optional<int64_t> window) {
  const std::vector<int64_t> square = {dims[2], dims[3]};
  Instruction* i = b.Iota(PrimitiveType::kS64, square, 0);
  Instruction* j = b.Iota(PrimitiveType::kS64, square, 1);
  Instruction* allowed = nullptr;
  auto both = [&](Instruction* m) { allowed = allowed == nullptr ? m : b.Binary(Opcode::kAnd, allowed, m); };
  if (causal) both(b.Compare(j, i, "LE"));
  if (window) {
    if (causal) {
      // i - W < j
      both(b.Compare(b.Binary(Opcode::kSubtract, i, b.Splat(PrimitiveType::kS64, static_cast<double>(*window), square)),
                     j, "LT"));
    } else {
      // |i - j| <= W / 2
      Instruction* half = b.Splat(PrimitiveType::kS64, static_cast<double>(*window / 2), square);
      both(b.Compare(b.Unary(Opcode::kAbs, b.Binary(Opcode::kSubtract, i, j)), half, "LE"));
    }
  }
  return b.Broadcast(allowed, dims, {2, 3});
}

absl::StatusOr<double> Scale(const Instruction& call, int64_t head_dim) {
  XLAC_ASSIGN_OR_RETURN(std::optional<double> scale, FloatAttr(call, "scale"));
  return scale ? *scale : 1.0 / std::sqrt(static_cast<double>(head_dim));
}

// Checks q [B, H, Sq, D] (decode: already [B, H, 1, D]), k [B', Hkv, Sk, D], v [B', Hkv, Sk, Dv].
absl::Status CheckQkv(const Instruction& call, const Shape& q, const Shape& k, const Shape& v, std::string_view form) {
  bool ok = IsFloatArray(q, 4) && IsFloatArray(k, 4) && IsFloatArray(v, 4);
  ok = ok && k.dimensions[0] == v.dimensions[0] && k.dimensions[1] == v.dimensions[1] &&
       k.dimensions[2] == v.dimensions[2] && k.dimensions[3] == q.dimensions[3] && k.dimensions[1] > 0 &&
       q.dimensions[1] % k.dimensions[1] == 0;
  if (!ok) {
    return CallError(call, fmt::format("expected {} (the query heads a multiple of the key/value heads), got ({}, {}, "
                                       "{})",
                                       form, Str(q), Str(k), Str(v)));
  }
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> Sdpa(Module& module, Computation& comp, Instruction* call, ScalarComputations& shared) {
  const int64_t n = call->operand_count();
  constexpr std::string_view kForm = "(query [B,H,Sq,D], key [B,Hkv,Sk,D], value [B,Hkv,Sk,Dv][, mask]) -> [B,H,Sq,Dv]";
  if (n != 3 && n != 4) return CallError(*call, fmt::format("expected {}", kForm));
  const Shape& qs = call->operand(0)->shape();
  const Shape& ks = call->operand(1)->shape();
  const Shape& vs = call->operand(2)->shape();
  XLAC_RETURN_IF_ERROR(CheckQkv(*call, qs, ks, vs, kForm));
  const int64_t batch = qs.dimensions[0], heads = qs.dimensions[1], sq = qs.dimensions[2];
  const Shape expected = Shape::Array(qs.element_type, {batch, heads, sq, vs.dimensions[3]});
  if (ks.dimensions[0] != batch || !call->shape().Compatible(expected)) {
    return CallError(*call, fmt::format("expected {} with one batch, got ({}, {}, {}) -> {}", kForm, Str(qs), Str(ks),
                                        Str(vs), Str(call->shape())));
  }
  XLAC_ASSIGN_OR_RETURN(bool causal, BoolAttr(*call, "is_causal", /*fallback=*/n == 3));
  XLAC_ASSIGN_OR_RETURN(double scale, Scale(*call, qs.dimensions[3]));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> window, IntAttr(*call, "sliding_window_size"));
  if (window && *window <= 0) return CallError(*call, "sliding_window_size must be positive");

  Builder b(module, comp, *call, shared);
  const PrimitiveType type = ComputeType(qs.element_type);
  Attention a;
  a.q = b.Convert(call->operand(0), type);
  a.k = b.Convert(call->operand(1), type);
  a.v = b.Convert(call->operand(2), type);
  a.scale = scale;
  const std::vector<int64_t> scores = {batch, heads, sq, ks.dimensions[2]};
  if (n == 4) XLAC_RETURN_IF_ERROR(MaskTo(b, *call, call->operand(3), scores, type, a));
  if (causal || window) AndAllowed(b, a, PositionMask(b, scores, causal, window));
  Instruction* out = b.Convert(Attend(b, a), qs.element_type);
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

// The decode forms' shared part. q [1, B, H, D]; k, v [B, Hkv, S, D] (gathered for the paged form); cur_pos [B] or
// null; mask, sink or null.
struct DecodeInputs {
  Instruction* q;
  Instruction* k;
  Instruction* v;
  Instruction* cur_pos = nullptr;
  Instruction* mask = nullptr;
  Instruction* sink = nullptr;
};

absl::StatusOr<Instruction*> Decode(Builder& b, const Instruction& call, const DecodeInputs& in, bool causal,
                                    double scale, std::optional<int64_t> window) {
  const Shape& qs = in.q->shape();
  const int64_t batch = qs.dimensions[1], heads = qs.dimensions[2], d = qs.dimensions[3];
  const int64_t s = in.k->shape().dimensions[2], dv = in.v->shape().dimensions[3];
  const PrimitiveType type = ComputeType(qs.element_type);
  Attention a;
  a.q = b.Reshape(b.Convert(in.q, type), {batch, heads, 1, d});
  a.k = b.Convert(in.k, type);
  a.v = b.Convert(in.v, type);
  a.scale = scale;
  const std::vector<int64_t> scores = {batch, heads, 1, s};
  if (in.mask != nullptr) {
    Instruction* mask = in.mask;
    const Shape& ms = mask->shape();
    // The decode layout [B, 1, H, S] (ttnn's): the heads move to dimension 1.
    if (ms.rank() == 4 && ms.dimensions[1] == 1 && ms.dimensions[2] == heads && heads > 1) {
      mask = b.Transpose(mask, {0, 2, 1, 3});
    }
    XLAC_RETURN_IF_ERROR(MaskTo(b, call, mask, scores, type, a));
  }
  Instruction* pos = nullptr;
  if (in.cur_pos != nullptr) pos = b.Reshape(b.Convert(in.cur_pos, PrimitiveType::kS64), {batch});
  if (causal && pos != nullptr) {
    // Key j is allowed for user b when j <= cur_pos[b] (and cur_pos[b] - W < j with a window).
    const std::vector<int64_t> bs = {batch, s};
    Instruction* j = b.Iota(PrimitiveType::kS64, bs, 1);
    Instruction* p = b.Broadcast(pos, bs, {0});
    Instruction* allowed = b.Compare(j, p, "LE");
    if (window) {
      Instruction* lo = b.Binary(Opcode::kSubtract, p, b.Splat(PrimitiveType::kS64, static_cast<double>(*window), bs));
      allowed = b.Binary(Opcode::kAnd, allowed, b.Compare(lo, j, "LT"));
    }
    AndAllowed(b, a, b.Broadcast(allowed, scores, {0, 3}));
  } else if (window) {
    return CallError(call, "sliding_window_size needs is_causal = True and the cur_pos operand in the decode form");
  }
  if (in.sink != nullptr) {
    // ttnn's decode sink is [H, TILE_WIDTH] with the value in column 0; other forms hold one value per head.
    Instruction* sink = in.sink;
    const Shape& ss = sink->shape();
    if (ss.rank() == 2 && ss.dimensions[0] == heads && ss.dimensions[1] > 1) {
      sink = b.Slice(sink, {{0, heads, 1}, {0, 1, 1}});
    } else if (!ss.IsArray() || ss.ElementCount() != heads) {
      return CallError(call, fmt::format("the attention sink {} must hold one value per query head ({}), or be [{}, "
                                         "W] with the value in column 0",
                                         Str(ss), heads, heads));
    }
    a.sink = b.Reshape(b.Convert(sink, type), {heads});
  }
  Instruction* out = Attend(b, a);
  if (causal && pos != nullptr) {
    // A user whose position is negative has no key to attend (ttnn's decode leaves it out): zeros.
    const std::vector<int64_t> od = {batch, heads, 1, dv};
    Instruction* valid = b.Compare(pos, b.Splat(PrimitiveType::kS64, 0, {batch}), "GE");
    out = b.Select(b.Broadcast(valid, od, {0}), out, b.Splat(type, 0, od));
  }
  out = b.Reshape(b.Convert(out, qs.element_type), {1, batch, heads, dv});
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

// Takes the optional operands named by has_* flags in order after `first`: each flag's operand is present when the
// flag is "True" (or, without flags, when the call has operands left).
absl::StatusOr<std::vector<Instruction*>> OptionalOperands(const Instruction& call, int64_t first,
                                                           const std::vector<std::string_view>& flags,
                                                           std::string_view form) {
  std::vector<Instruction*> out(flags.size(), nullptr);
  int64_t next = first;
  bool any_flag = false;
  for (std::string_view f : flags) any_flag |= Attr(call, f) != nullptr;
  for (size_t i = 0; i < flags.size(); ++i) {
    bool present;
    if (any_flag) {
      XLAC_ASSIGN_OR_RETURN(present, BoolAttr(call, flags[i], false));
    } else {
      present = next < call.operand_count();
    }
    if (present) {
      if (next >= call.operand_count()) {
        return CallError(call,
                         fmt::format("{} says an operand is there, but the call has only {} operands; expected {}",
                                     std::string(flags[i]), call.operand_count(), form));
      }
      out[i] = call.operand(next++);
    }
  }
  if (next != call.operand_count()) {
    return CallError(call, fmt::format("has {} operands, but its has_* attributes account for {}; expected {}",
                                       call.operand_count(), next, form));
  }
  return out;
}

// The first four operands of both decode forms: query [1, B, H, D] and key / value as the attention's, read as a
// [B, H, 1, D] query; a fourth operand must follow.
absl::Status CheckDecodeOperands(const Instruction& call, std::string_view form) {
  if (call.operand_count() < 4) return CallError(call, fmt::format("expected {}", form));
  const Shape& q = call.operand(0)->shape();
  if (!IsFloatArray(q, 4) || q.dimensions[0] != 1 || !call.shape().IsArray() || call.shape().rank() != 4 ||
      call.shape().element_type != q.element_type) {
    return CallError(call, fmt::format("expected {}, got query {} -> {}", form, Str(q), Str(call.shape())));
  }
  const Shape q4 = Shape::Array(q.element_type, {q.dimensions[1], q.dimensions[2], 1, q.dimensions[3]});
  return CheckQkv(call, q4, call.operand(1)->shape(), call.operand(2)->shape(), form);
}

absl::StatusOr<Instruction*> SdpaDecode(Module& module, Computation& comp, Instruction* call,
                                        ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(query [1,B,H,D], key [B,Hkv,S,D], value [B,Hkv,S,Dv], cur_pos [B][, mask][, sink]) -> [1,B,H,Dv]";
  XLAC_RETURN_IF_ERROR(CheckDecodeOperands(*call, kForm));
  const Shape& qs = call->operand(0)->shape();
  const Shape& ks = call->operand(1)->shape();
  const Shape& vs = call->operand(2)->shape();
  const int64_t batch = qs.dimensions[1];
  const Shape& pos = call->operand(3)->shape();
  if (ks.dimensions[0] != batch || !IsIntArray(pos) || pos.ElementCount() != batch ||
      !call->shape().Compatible(Shape::Array(qs.element_type, {1, batch, qs.dimensions[2], vs.dimensions[3]}))) {
    return CallError(*call, fmt::format("expected {}, got ({}, {}, {}, {}) -> {}", kForm, Str(qs), Str(ks), Str(vs),
                                        Str(pos), Str(call->shape())));
  }
  XLAC_ASSIGN_OR_RETURN(std::vector<Instruction*> opt,
                        OptionalOperands(*call, 4, {"has_attention_mask", "has_attention_sink"}, kForm));
  XLAC_ASSIGN_OR_RETURN(bool causal, BoolAttr(*call, "is_causal", /*fallback=*/true));
  XLAC_ASSIGN_OR_RETURN(double scale, Scale(*call, qs.dimensions[3]));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> window, IntAttr(*call, "sliding_window_size"));
  if (window && *window <= 0) return CallError(*call, "sliding_window_size must be positive");
  Builder b(module, comp, *call, shared);
  DecodeInputs in{call->operand(0), call->operand(1), call->operand(2)};
  in.cur_pos = call->operand(3);
  in.mask = opt[0];
  in.sink = opt[1];
  return Decode(b, *call, in, causal, scale, window);
}

// cache [blocks, H, block, D] through page_table [B, P] -> [B, H, P * block, D]: user b's position t is
// cache[page_table[b, t / block], :, t % block].
Instruction* GatherPages(Builder& b, Instruction* cache, Instruction* page_table) {
  const std::vector<int64_t>& cd = cache->shape().dimensions;
  const std::vector<int64_t>& pd = page_table->shape().dimensions;
  Instruction* idx = b.Convert(page_table, PrimitiveType::kS32);
  // [B, P, H, block, D]
  Instruction* pages = b.Gather(cache, idx, {2, 3, 4}, {0}, {0}, 2, {1, cd[1], cd[2], cd[3]});
  Instruction* t = b.Transpose(pages, {0, 2, 1, 3, 4});
  return b.Reshape(t, {pd[0], cd[1], pd[1] * cd[2], cd[3]});
}

absl::StatusOr<Instruction*> PagedSdpaDecode(Module& module, Computation& comp, Instruction* call,
                                             ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(query [1,B,H,D], key_cache [blocks,Hkv,block,D], value_cache [blocks,Hkv,block,Dv], page_table [B,P]"
      "[, mask][, cur_pos [B]][, sink]) -> [1,B,H,Dv]";
  XLAC_RETURN_IF_ERROR(CheckDecodeOperands(*call, kForm));
  const Shape& qs = call->operand(0)->shape();
  const Shape& ks = call->operand(1)->shape();
  const Shape& vs = call->operand(2)->shape();
  const int64_t batch = qs.dimensions[1];
  const Shape& table = call->operand(3)->shape();
  if (!IsIntArray(table) || table.rank() != 2 || table.dimensions[0] != batch ||
      !call->shape().Compatible(Shape::Array(qs.element_type, {1, batch, qs.dimensions[2], vs.dimensions[3]}))) {
    return CallError(*call, fmt::format("expected {}, got ({}, {}, {}, {}) -> {}", kForm, Str(qs), Str(ks), Str(vs),
                                        Str(table), Str(call->shape())));
  }
  XLAC_ASSIGN_OR_RETURN(
      std::vector<Instruction*> opt,
      OptionalOperands(*call, 4, {"has_attention_mask", "has_cur_pos_tensor", "has_attention_sink"}, kForm));
  if (opt[1] != nullptr && (!IsIntArray(opt[1]->shape()) || opt[1]->shape().ElementCount() != batch)) {
    return CallError(*call, fmt::format("cur_pos {} must hold one integer per user ({})", Str(opt[1]->shape()), batch));
  }
  XLAC_ASSIGN_OR_RETURN(bool causal, BoolAttr(*call, "is_causal", /*fallback=*/false));
  if (causal && opt[1] == nullptr) return CallError(*call, "is_causal = True needs the cur_pos operand");
  XLAC_ASSIGN_OR_RETURN(double scale, Scale(*call, qs.dimensions[3]));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> window, IntAttr(*call, "sliding_window_size"));
  if (window && *window <= 0) return CallError(*call, "sliding_window_size must be positive");
  Builder b(module, comp, *call, shared);
  DecodeInputs in{call->operand(0), GatherPages(b, call->operand(1), call->operand(3)),
                  GatherPages(b, call->operand(2), call->operand(3))};
  in.mask = opt[0];
  in.cur_pos = opt[1];
  in.sink = opt[2];
  return Decode(b, *call, in, causal, scale, window);
}

// ---------------------------------------------------------------------------------------------------------------
// KV caches.

// A scalar s32 from an integer array of one element.
Instruction* ScalarIndex(Builder& b, Instruction* x) { return b.Reshape(b.Convert(x, PrimitiveType::kS32), {}); }

absl::StatusOr<Instruction*> UpdateCache(Module& module, Computation& comp, Instruction* call,
                                         ScalarComputations& shared, bool fill) {
  const std::string_view form = fill ? "(cache [B,H,S,D], value [B',H,T,D]) -> cache"
                                     : "(cache [B,H,S,D], value [B',H,1,D], position [1]) -> cache";
  const int64_t n = call->operand_count();
  bool ok = n == (fill ? 2 : 3);
  const Shape* cache = ok ? &call->operand(0)->shape() : nullptr;
  const Shape* value = ok ? &call->operand(1)->shape() : nullptr;
  ok = ok && cache->IsArray() && cache->rank() == 4 && value->IsArray() && value->rank() == 4 &&
       call->shape().Compatible(*cache);
  for (int64_t i = 0; ok && i < 4; ++i) ok = value->dimensions[i] <= cache->dimensions[i];
  ok = ok && value->dimensions[1] == cache->dimensions[1] && value->dimensions[3] == cache->dimensions[3];
  if (ok && !fill) ok = IsIntArray(call->operand(2)->shape()) && call->operand(2)->shape().ElementCount() == 1;
  if (!ok) return CallError(*call, fmt::format("expected {}", form));
  XLAC_ASSIGN_OR_RETURN(std::optional<int64_t> batch_offset, IntAttr(*call, "batch_offset"));
  const int64_t offset = batch_offset.value_or(0);
  if (offset < 0 || offset + value->dimensions[0] > cache->dimensions[0] || (!fill && offset != 0)) {
    return CallError(*call, fmt::format("batch_offset = {} does not fit (tt-xla writes 0{})", offset,
                                        fill ? "; fill_cache takes value's batch at that offset" : ""));
  }
  Builder b(module, comp, *call, shared);
  Instruction* zero = b.Scalar(PrimitiveType::kS32, 0);
  Instruction* update = b.Convert(call->operand(1), cache->element_type);
  Instruction* position = fill ? zero : ScalarIndex(b, call->operand(2));
  Instruction* out = b.DynamicUpdateSlice(
      call->operand(0), update, {b.Scalar(PrimitiveType::kS32, static_cast<double>(offset)), zero, position, zero});
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

// Scatters updates [N, H, D] into cache [blocks, H, block, D] at (block_ids[n], :, offsets[n], :); both s32 [N].
Instruction* ScatterTokens(Builder& b, Instruction* cache, Instruction* block_ids, Instruction* offsets,
                           Instruction* updates) {
  const int64_t n = block_ids->shape().dimensions[0];
  Instruction* indices = b.Concatenate({b.Reshape(block_ids, {n, 1}), b.Reshape(offsets, {n, 1})}, 1);
  return b.ScatterAssign(cache, indices, updates, {1, 2}, {0, 2}, {0, 2}, 1);
}

// page_table [B, P] at (rows[n], columns[n]) -> s32 [N].
Instruction* TableLookup(Builder& b, Instruction* table, Instruction* rows, Instruction* columns) {
  const int64_t n = rows->shape().dimensions[0];
  Instruction* idx = b.Concatenate({b.Reshape(rows, {n, 1}), b.Reshape(columns, {n, 1})}, 1);
  return b.Gather(b.Convert(table, PrimitiveType::kS32), idx, {}, {0, 1}, {0, 1}, 1, {1, 1});
}

absl::StatusOr<Instruction*> PagedUpdateCache(Module& module, Computation& comp, Instruction* call,
                                              ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(cache [blocks,H,block,D], value [1,B,H',D] (H' >= H), positions [B], page_table [B,P]) -> cache";
  bool ok = call->operand_count() == 4;
  const Shape* cache = ok ? &call->operand(0)->shape() : nullptr;
  const Shape* value = ok ? &call->operand(1)->shape() : nullptr;
  const Shape* pos = ok ? &call->operand(2)->shape() : nullptr;
  const Shape* table = ok ? &call->operand(3)->shape() : nullptr;
  ok = ok && cache->IsArray() && cache->rank() == 4 && call->shape().Compatible(*cache) && value->IsArray() &&
       value->rank() == 4 && value->dimensions[0] == 1 && value->dimensions[2] >= cache->dimensions[1] &&
       value->dimensions[3] == cache->dimensions[3] && IsIntArray(*table) && table->rank() == 2 &&
       table->dimensions[0] == value->dimensions[1] && IsIntArray(*pos) && pos->ElementCount() == table->dimensions[0];
  if (!ok) return CallError(*call, fmt::format("expected {}", kForm));
  XLAC_RETURN_IF_ERROR(BoolAttr(*call, "share_cache", false).status());
  const int64_t users = table->dimensions[0], heads = cache->dimensions[1], block = cache->dimensions[2];
  const int64_t blocks = cache->dimensions[0], d = cache->dimensions[3];
  Builder b(module, comp, *call, shared);
  const std::vector<int64_t> u = {users};
  Instruction* p = b.Reshape(b.Convert(call->operand(2), PrimitiveType::kS32), u);
  Instruction* bs = b.Splat(PrimitiveType::kS32, static_cast<double>(block), u);
  Instruction* valid = b.Compare(p, b.Splat(PrimitiveType::kS32, 0, u), "GE");
  Instruction* safe = b.Select(valid, p, b.Splat(PrimitiveType::kS32, 0, u));
  Instruction* physical =
      TableLookup(b, call->operand(3), b.Iota(PrimitiveType::kS32, u, 0), b.Binary(Opcode::kDivide, safe, bs));
  // A negative position writes nothing (ttnn skips the user): an out-of-bounds block, which scatter skips.
  physical = b.Select(valid, physical, b.Splat(PrimitiveType::kS32, static_cast<double>(blocks), u));
  Instruction* offsets = b.Binary(Opcode::kRemainder, safe, bs);
  Instruction* v = b.Slice(call->operand(1), {{0, 1, 1}, {0, users, 1}, {0, heads, 1}, {0, d, 1}});
  v = b.Convert(b.Reshape(v, {users, heads, d}), cache->element_type);
  Instruction* out = ScatterTokens(b, call->operand(0), physical, offsets, v);
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

absl::StatusOr<Instruction*> PagedFillCache(Module& module, Computation& comp, Instruction* call,
                                            ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(cache [blocks,H,block,D], value [1,H,T,D], page_table [B,P][, batch_idx [1]]) -> cache, T <= P * block";
  const int64_t n = call->operand_count();
  bool ok = n == 3 || n == 4;
  const Shape* cache = ok ? &call->operand(0)->shape() : nullptr;
  const Shape* value = ok ? &call->operand(1)->shape() : nullptr;
  const Shape* table = ok ? &call->operand(2)->shape() : nullptr;
  ok = ok && cache->IsArray() && cache->rank() == 4 && call->shape().Compatible(*cache) && value->IsArray() &&
       value->rank() == 4 && value->dimensions[0] == 1 && value->dimensions[1] == cache->dimensions[1] &&
       value->dimensions[3] == cache->dimensions[3] && IsIntArray(*table) && table->rank() == 2 &&
       value->dimensions[2] <= table->dimensions[1] * cache->dimensions[2];
  if (ok && n == 4) ok = IsIntArray(call->operand(3)->shape()) && call->operand(3)->shape().ElementCount() == 1;
  if (!ok) return CallError(*call, fmt::format("expected {}", kForm));
  const int64_t heads = cache->dimensions[1], block = cache->dimensions[2], d = cache->dimensions[3];
  const int64_t tokens = value->dimensions[2];
  Builder b(module, comp, *call, shared);
  const std::vector<int64_t> t = {tokens};
  Instruction* user = n == 4 ? ScalarIndex(b, call->operand(3)) : b.Scalar(PrimitiveType::kS32, 0);
  Instruction* position = b.Iota(PrimitiveType::kS32, t, 0);
  Instruction* bs = b.Splat(PrimitiveType::kS32, static_cast<double>(block), t);
  Instruction* physical =
      TableLookup(b, call->operand(2), b.Broadcast(user, t, {}), b.Binary(Opcode::kDivide, position, bs));
  Instruction* offsets = b.Binary(Opcode::kRemainder, position, bs);
  Instruction* v = b.Transpose(b.Reshape(call->operand(1), {heads, tokens, d}), {1, 0, 2});
  Instruction* out = ScatterTokens(b, call->operand(0), physical, offsets, b.Convert(v, cache->element_type));
  XLAC_RETURN_IF_ERROR(b.error());
  return out;
}

}  // namespace
}  // namespace tt_calls

namespace {

using namespace tt_calls;  // NOLINT: the rewrites and their helpers

// The rewrite of one call, shared scalar computations across the module's calls.
CallRewrite TtRewrite(std::shared_ptr<ScalarComputations> shared) {
  return [shared](Module& module, Computation& comp, Instruction* inst) -> absl::StatusOr<Instruction*> {
    const std::string_view target = inst->StringAttr("custom_call_target");
    // tt-xla writes api_version 0; a typed-FFI call of a tt.* target is the user's own handler's (--custom-call-lib).
    if (target.substr(0, 3) != "tt." || inst->StringAttr("api_version") == "API_VERSION_TYPED_FFI") return nullptr;
    ScalarComputations& s = *shared;
    if (target == "tt.scaled_dot_product_attention") return Sdpa(module, comp, inst, s);
    if (target == "tt.scaled_dot_product_attention_decode") return SdpaDecode(module, comp, inst, s);
    if (target == "tt.paged_scaled_dot_product_attention_decode") return PagedSdpaDecode(module, comp, inst, s);
    if (target == "tt.update_cache") return UpdateCache(module, comp, inst, s, /*fill=*/false);
    if (target == "tt.fill_cache") return UpdateCache(module, comp, inst, s, /*fill=*/true);
    if (target == "tt.paged_update_cache") return PagedUpdateCache(module, comp, inst, s);
    if (target == "tt.paged_fill_cache") return PagedFillCache(module, comp, inst, s);
    if (target == "tt.all_to_all_dispatch") return AllToAllDispatch(module, comp, inst, s);
    if (target == "tt.moe_expert_token_remap") return MoeExpertTokenRemap(module, comp, inst, s);
    if (target == "tt.sparse_matmul") return SparseMatmul(module, comp, inst, s);
    if (target == "tt.all_to_all_combine") return AllToAllCombine(module, comp, inst, s);
    return nullptr;
  };
}

}  // namespace

absl::StatusOr<bool> RunTtCustomCalls(Module& module) {
  return RewriteCustomCalls(module, TtRewrite(std::make_shared<ScalarComputations>()));
}

bool RewriteTtCustomCalls(Module& module, DiagnosticEngine& diags) {
  return RewriteCustomCalls(module, TtRewrite(std::make_shared<ScalarComputations>()), diags);
}

}  // namespace xlac
