#include "passes/tt_custom_calls.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "fmt/format.h"
#include "fmt/ranges.h"
#include "ir/primitive_type.h"
#include "ir/shape_inference.h"
#include "ir/status_macros.h"
#include "passes/replace_call.h"

namespace xlac {
namespace {

// The message; the call's location goes with it (Run's `error_at`).
absl::Status CallError(const Instruction& call, std::string_view why) {
  return absl::InvalidArgumentError(fmt::format("custom-call %{} (target \"{}\"): {}", call.name(),
                                                std::string(call.StringAttr("custom_call_target")), why));
}

std::string Str(const Shape& s) { return ShapeToString(s, false); }

// ---------------------------------------------------------------------------------------------------------------
// Frontend attributes: strings written by Python's str() (tt-mlir reads them the same way: booleans case-insensitive
// "true"/"false", floats with llvm::to_float, integers in decimal).

const std::string* Attr(const Instruction& call, std::string_view key) {
  for (const auto& [k, v] : call.frontend_attributes()) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  return out;
}

// The boolean attribute `key`, `fallback` when absent.
absl::StatusOr<bool> BoolAttr(const Instruction& call, std::string_view key, bool fallback) {
  const std::string* value = Attr(call, key);
  if (value == nullptr) return fallback;
  const std::string lower = Lower(*value);
  if (lower == "true") return true;
  if (lower == "false") return false;
  return CallError(call, fmt::format("frontend attribute {} = \"{}\" is not a boolean (\"True\" or \"False\")",
                                     std::string(key), *value));
}

absl::StatusOr<std::optional<double>> FloatAttr(const Instruction& call, std::string_view key) {
  const std::string* value = Attr(call, key);
  if (value == nullptr || Lower(*value) == "none") return std::optional<double>();
  char* end = nullptr;
  const double parsed = std::strtod(value->c_str(), &end);
  if (value->empty() || end != value->c_str() + value->size() || !std::isfinite(parsed)) {
    return CallError(call,
                     fmt::format("frontend attribute {} = \"{}\" is not a finite number", std::string(key), *value));
  }
  return std::optional<double>(parsed);
}

absl::StatusOr<std::optional<int64_t>> IntAttr(const Instruction& call, std::string_view key) {
  const std::string* value = Attr(call, key);
  if (value == nullptr || Lower(*value) == "none") return std::optional<int64_t>();
  char* end = nullptr;
  const long long parsed = std::strtoll(value->c_str(), &end, 10);
  if (value->empty() || end != value->c_str() + value->size()) {
    return CallError(call, fmt::format("frontend attribute {} = \"{}\" is not an integer", std::string(key), *value));
  }
  return std::optional<int64_t>(parsed);
}

// ---------------------------------------------------------------------------------------------------------------
// Building HLO at the call.

// The scalar computations (max, add, overwrite) the rewrites share, one per opcode and type.
using ScalarComputations = std::map<std::pair<Opcode, PrimitiveType>, Computation*>;

class Builder {
 public:
  Builder(Module& module, Computation& comp, const Instruction& at, ScalarComputations& shared)
      : module_(module), comp_(comp), at_(at), shared_(shared) {}

  // An instruction of `shape` (no layout).
  Instruction* Add(Opcode op, Shape shape, std::vector<Instruction*> operands) {
    shape.layout.reset();
    auto inst = Instruction::Create(op, module_.UniqueInstructionName(std::string(OpcodeName(op))), std::move(shape),
                                    std::move(operands));
    inst->set_loc(at_.loc());
    *inst->mutable_metadata() = at_.metadata();
    return comp_.AddInstruction(std::move(inst));
  }

  // Sets `inst`'s shape by shape inference (after its attributes are set). A failure is this pass's bug.
  Instruction* Infer(Instruction* inst) {
    absl::StatusOr<Shape> shape = InferShape(*inst);
    if (!shape.ok()) {
      if (error_.ok()) {
        error_ = absl::InternalError(fmt::format("tt-custom-calls built an invalid {}: {}", inst->name(),
                                                 std::string(shape.status().message())));
      }
      return inst;
    }
    inst->set_shape(*std::move(shape));
    return inst;
  }
  const absl::Status& error() const { return error_; }

  Instruction* Scalar(PrimitiveType type, double value) {
    Literal literal(Shape::Scalar(type));
    if (IsIntegralType(type)) {
      literal.SetFromInt64(0, static_cast<int64_t>(value));
    } else if (type == PrimitiveType::kPred) {
      literal.SetFromInt64(0, value != 0 ? 1 : 0);
    } else {
      literal.SetFromDouble(0, value);
    }
    Instruction* c = Add(Opcode::kConstant, Shape::Scalar(type), {});
    c->set_literal(std::move(literal));
    return c;
  }

  // `x` broadcast into `dims` of `type`, x's dimension i becoming dimension mapping[i].
  Instruction* Broadcast(Instruction* x, std::vector<int64_t> dims, std::vector<int64_t> mapping) {
    Instruction* b = Add(Opcode::kBroadcast, Shape::Array(x->shape().element_type, std::move(dims)), {x});
    b->SetAttr("dimensions", AttrValue::IntList(std::move(mapping)));
    return b;
  }
  Instruction* Splat(PrimitiveType type, double value, std::vector<int64_t> dims) {
    return Broadcast(Scalar(type, value), std::move(dims), {});
  }

  Instruction* Convert(Instruction* x, PrimitiveType type) {
    if (x->shape().element_type == type) return x;
    Shape s = x->shape();
    s.element_type = type;
    return Add(Opcode::kConvert, s, {x});
  }
  Instruction* Reshape(Instruction* x, std::vector<int64_t> dims) {
    if (x->shape().dimensions == dims) return x;
    return Add(Opcode::kReshape, Shape::Array(x->shape().element_type, std::move(dims)), {x});
  }
  Instruction* Transpose(Instruction* x, std::vector<int64_t> perm) {
    std::vector<int64_t> dims;
    for (int64_t p : perm) dims.push_back(x->shape().dimensions[p]);
    Instruction* t = Add(Opcode::kTranspose, Shape::Array(x->shape().element_type, std::move(dims)), {x});
    t->SetAttr("dimensions", AttrValue::IntList(std::move(perm)));
    return t;
  }
  Instruction* Binary(Opcode op, Instruction* a, Instruction* b) { return Add(op, a->shape(), {a, b}); }
  Instruction* Unary(Opcode op, Instruction* a) { return Add(op, a->shape(), {a}); }
  Instruction* Compare(Instruction* a, Instruction* b, std::string_view direction) {
    Shape s = a->shape();
    s.element_type = PrimitiveType::kPred;
    Instruction* c = Add(Opcode::kCompare, s, {a, b});
    c->SetAttr("direction", AttrValue::Enum(std::string(direction)));
    return c;
  }
  Instruction* Select(Instruction* pred, Instruction* on_true, Instruction* on_false) {
    return Add(Opcode::kSelect, on_true->shape(), {pred, on_true, on_false});
  }
  Instruction* Iota(PrimitiveType type, std::vector<int64_t> dims, int64_t dimension) {
    Instruction* i = Add(Opcode::kIota, Shape::Array(type, std::move(dims)), {});
    i->SetAttr("iota_dimension", AttrValue::Int(dimension));
    return i;
  }
  Instruction* Slice(Instruction* x, std::vector<SliceRange> ranges) {
    Instruction* s = Add(Opcode::kSlice, Shape(), {x});
    s->SetAttr("slice", AttrValue::Of(std::move(ranges)));
    return Infer(s);
  }
  Instruction* Concatenate(std::vector<Instruction*> parts, int64_t dimension) {
    Instruction* c = Add(Opcode::kConcatenate, Shape(), std::move(parts));
    c->SetAttr("dimensions", AttrValue::IntList({dimension}));
    return Infer(c);
  }
  // A dot; `result_type` other than kInvalid is XLA's preferred element type (bf16 operands accumulated into f32).
  Instruction* Dot(Instruction* lhs, Instruction* rhs, std::vector<int64_t> lhs_batch, std::vector<int64_t> rhs_batch,
                   std::vector<int64_t> lhs_contracting, std::vector<int64_t> rhs_contracting,
                   PrimitiveType result_type = PrimitiveType::kInvalid) {
    Shape own;
    own.element_type = result_type;
    Instruction* d = Add(Opcode::kDot, own, {lhs, rhs});
    d->SetAttr("lhs_batch_dims", AttrValue::IntList(std::move(lhs_batch)));
    d->SetAttr("rhs_batch_dims", AttrValue::IntList(std::move(rhs_batch)));
    d->SetAttr("lhs_contracting_dims", AttrValue::IntList(std::move(lhs_contracting)));
    d->SetAttr("rhs_contracting_dims", AttrValue::IntList(std::move(rhs_contracting)));
    return Infer(d);
  }
  // A reduction of `x` over `dims` by `op` (kMaximum, kMinimum or kAdd).
  Instruction* Reduce(Instruction* x, std::vector<int64_t> dims, Opcode op) {
    const PrimitiveType type = x->shape().element_type;
    double init = 0;
    if (op != Opcode::kAdd) {
      const bool max = op == Opcode::kMaximum;
      if (IsFloatingPointType(type)) {
        init = max ? -INFINITY : INFINITY;
      } else if (type == PrimitiveType::kS32) {
        init = max ? static_cast<double>(std::numeric_limits<int32_t>::min())
                   : static_cast<double>(std::numeric_limits<int32_t>::max());
      } else {
        init = max ? 0.0 : 1.0;  // pred (the only other type the rewrites reduce)
      }
    }
    Instruction* r = Add(Opcode::kReduce, Shape(), {x, Scalar(type, init)});
    r->SetAttr("dimensions", AttrValue::IntList(std::move(dims)));
    r->set_called_computations({ScalarComputation(op, type)});
    return Infer(r);
  }
  Instruction* Gather(Instruction* operand, Instruction* indices, std::vector<int64_t> offset_dims,
                      std::vector<int64_t> collapsed, std::vector<int64_t> start_index_map, int64_t index_vector_dim,
                      std::vector<int64_t> slice_sizes) {
    Instruction* g = Add(Opcode::kGather, Shape(), {operand, indices});
    g->SetAttr("offset_dims", AttrValue::IntList(std::move(offset_dims)));
    g->SetAttr("collapsed_slice_dims", AttrValue::IntList(std::move(collapsed)));
    g->SetAttr("start_index_map", AttrValue::IntList(std::move(start_index_map)));
    g->SetAttr("index_vector_dim", AttrValue::Int(index_vector_dim));
    g->SetAttr("slice_sizes", AttrValue::IntList(std::move(slice_sizes)));
    g->SetAttr("indices_are_sorted", AttrValue::Bool(false));
    return Infer(g);
  }
  // A scatter that overwrites (the update wins); windows out of bounds are skipped, as HLO scatter does.
  Instruction* ScatterAssign(Instruction* operand, Instruction* indices, Instruction* updates,
                             std::vector<int64_t> update_window_dims, std::vector<int64_t> inserted_window_dims,
                             std::vector<int64_t> scatter_dims_to_operand_dims, int64_t index_vector_dim) {
    Instruction* s = Add(Opcode::kScatter, Shape(), {operand, indices, updates});
    s->SetAttr("update_window_dims", AttrValue::IntList(std::move(update_window_dims)));
    s->SetAttr("inserted_window_dims", AttrValue::IntList(std::move(inserted_window_dims)));
    s->SetAttr("scatter_dims_to_operand_dims", AttrValue::IntList(std::move(scatter_dims_to_operand_dims)));
    s->SetAttr("index_vector_dim", AttrValue::Int(index_vector_dim));
    s->SetAttr("indices_are_sorted", AttrValue::Bool(false));
    s->SetAttr("unique_indices", AttrValue::Bool(false));
    s->set_called_computations({ScalarComputation(Opcode::kParameter, operand->shape().element_type)});
    return Infer(s);
  }
  Instruction* DynamicUpdateSlice(Instruction* operand, Instruction* update, std::vector<Instruction*> starts) {
    std::vector<Instruction*> operands = {operand, update};
    operands.insert(operands.end(), starts.begin(), starts.end());
    return Add(Opcode::kDynamicUpdateSlice, operand->shape(), std::move(operands));
  }
  // The device's partition id, s32[].
  Instruction* PartitionId() {
    return Convert(Add(Opcode::kPartitionId, Shape::Scalar(PrimitiveType::kU32), {}), PrimitiveType::kS32);
  }
  // All-gather of `x` along `dim` among the partitions of each group (cross-partition, as a manual region's
  // collectives are).
  Instruction* AllGather(Instruction* x, int64_t dim, std::vector<std::vector<int64_t>> groups) {
    Shape s = x->shape();
    s.dimensions[dim] *= static_cast<int64_t>(groups[0].size());
    Instruction* g = Add(Opcode::kAllGather, s, {x});
    g->SetAttr("dimensions", AttrValue::IntList({dim}));
    g->SetAttr("channel_id", AttrValue::Int(1));
    ReplicaGroups rg;
    rg.groups = std::move(groups);
    g->SetAttr("replica_groups", AttrValue::Of(std::move(rg)));
    return g;
  }
  Instruction* DynamicSlice(Instruction* operand, std::vector<Instruction*> starts, std::vector<int64_t> sizes) {
    std::vector<Instruction*> operands = {operand};
    operands.insert(operands.end(), starts.begin(), starts.end());
    Instruction* d = Add(Opcode::kDynamicSlice, Shape::Array(operand->shape().element_type, sizes), operands);
    d->SetAttr("dynamic_slice_sizes", AttrValue::IntList(std::move(sizes)));
    return d;
  }

 private:
  // (a, b) -> a `op` b of scalars of `type`; kParameter: -> b (a scatter's overwrite).
  Computation* ScalarComputation(Opcode op, PrimitiveType type) {
    Computation*& known = shared_[{op, type}];
    if (known == nullptr) known = NewScalarComputation(op, type);
    return known;
  }
  Computation* NewScalarComputation(Opcode op, PrimitiveType type) {
    const std::string base = op == Opcode::kMaximum   ? "max"
                             : op == Opcode::kMinimum ? "min"
                             : op == Opcode::kAdd     ? "add"
                                                      : "assign";
    auto comp = std::make_unique<Computation>(module_.UniqueComputationName(base));
    const Shape scalar = Shape::Scalar(type);
    Instruction* a = comp->AddInstruction(Instruction::CreateParameter(0, module_.UniqueInstructionName("a"), scalar));
    Instruction* b = comp->AddInstruction(Instruction::CreateParameter(1, module_.UniqueInstructionName("b"), scalar));
    if (op == Opcode::kParameter) {
      comp->set_root(b);
    } else {
      comp->set_root(
          comp->AddInstruction(Instruction::Create(op, module_.UniqueInstructionName(base), scalar, {a, b})));
    }
    return module_.AddComputation(std::move(comp));
  }

  Module& module_;
  Computation& comp_;
  const Instruction& at_;
  ScalarComputations& shared_;
  absl::Status error_;
};

// The type attention computes in: f32 for narrower floats (bf16, f16, f8: torch's CPU attention and ttnn's
// reference accumulate bf16 in f32), else the type itself.
PrimitiveType ComputeType(PrimitiveType t) {
  return t == PrimitiveType::kF64 ? PrimitiveType::kF64 : PrimitiveType::kF32;
}

bool IsFloatArray(const Shape& s, int64_t rank) {
  return s.IsArray() && IsFloatingPointType(s.element_type) && s.rank() == rank;
}
bool IsIntArray(const Shape& s) { return s.IsArray() && IsIntegralType(s.element_type); }

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

absl::Status CheckDecodeQuery(const Instruction& call, const Shape& q, std::string_view form) {
  if (!IsFloatArray(q, 4) || q.dimensions[0] != 1 || !call.shape().IsArray() || call.shape().rank() != 4 ||
      call.shape().element_type != q.element_type) {
    return CallError(call, fmt::format("expected {}, got query {} -> {}", form, Str(q), Str(call.shape())));
  }
  return absl::OkStatus();
}

absl::StatusOr<Instruction*> SdpaDecode(Module& module, Computation& comp, Instruction* call,
                                        ScalarComputations& shared) {
  constexpr std::string_view kForm =
      "(query [1,B,H,D], key [B,Hkv,S,D], value [B,Hkv,S,Dv], cur_pos [B][, mask][, sink]) -> [1,B,H,Dv]";
  if (call->operand_count() < 4) return CallError(*call, fmt::format("expected {}", kForm));
  const Shape& qs = call->operand(0)->shape();
  XLAC_RETURN_IF_ERROR(CheckDecodeQuery(*call, qs, kForm));
  const Shape q4 = Shape::Array(qs.element_type, {qs.dimensions[1], qs.dimensions[2], 1, qs.dimensions[3]});
  const Shape& ks = call->operand(1)->shape();
  const Shape& vs = call->operand(2)->shape();
  XLAC_RETURN_IF_ERROR(CheckQkv(*call, q4, ks, vs, kForm));
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
  if (call->operand_count() < 4) return CallError(*call, fmt::format("expected {}", kForm));
  const Shape& qs = call->operand(0)->shape();
  XLAC_RETURN_IF_ERROR(CheckDecodeQuery(*call, qs, kForm));
  const Shape q4 = Shape::Array(qs.element_type, {qs.dimensions[1], qs.dimensions[2], 1, qs.dimensions[3]});
  const Shape& ks = call->operand(1)->shape();
  const Shape& vs = call->operand(2)->shape();
  XLAC_RETURN_IF_ERROR(CheckQkv(*call, q4, ks, vs, kForm));
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

absl::StatusOr<bool> Run(Module& module, SourceLoc* error_at) {
  bool changed = false;
  ScalarComputations shared;
  std::vector<Computation*> comps;
  for (const auto& comp : module.computations()) comps.push_back(comp.get());
  for (Computation* comp : comps) {
    for (Instruction* inst : comp->MakeInstructionList()) {
      if (inst->opcode() != Opcode::kCustomCall) continue;
      const std::string_view target = inst->StringAttr("custom_call_target");
      // tt-xla writes api_version 0; a typed-FFI call of a tt.* target is the user's own handler's (--custom-call-lib).
      if (target.substr(0, 3) != "tt." || inst->StringAttr("api_version") == "API_VERSION_TYPED_FFI") continue;
      absl::StatusOr<Instruction*> replacement = nullptr;
      if (target == "tt.scaled_dot_product_attention") {
        replacement = Sdpa(module, *comp, inst, shared);
      } else if (target == "tt.scaled_dot_product_attention_decode") {
        replacement = SdpaDecode(module, *comp, inst, shared);
      } else if (target == "tt.paged_scaled_dot_product_attention_decode") {
        replacement = PagedSdpaDecode(module, *comp, inst, shared);
      } else if (target == "tt.update_cache") {
        replacement = UpdateCache(module, *comp, inst, shared, /*fill=*/false);
      } else if (target == "tt.fill_cache") {
        replacement = UpdateCache(module, *comp, inst, shared, /*fill=*/true);
      } else if (target == "tt.paged_update_cache") {
        replacement = PagedUpdateCache(module, *comp, inst, shared);
      } else if (target == "tt.paged_fill_cache") {
        replacement = PagedFillCache(module, *comp, inst, shared);
      } else if (target == "tt.all_to_all_dispatch") {
        replacement = AllToAllDispatch(module, *comp, inst, shared);
      } else if (target == "tt.moe_expert_token_remap") {
        replacement = MoeExpertTokenRemap(module, *comp, inst, shared);
      } else if (target == "tt.sparse_matmul") {
        replacement = SparseMatmul(module, *comp, inst, shared);
      } else if (target == "tt.all_to_all_combine") {
        replacement = AllToAllCombine(module, *comp, inst, shared);
      } else {
        continue;
      }
      if (!replacement.ok()) {
        *error_at = inst->loc();
        return replacement.status();
      }
      Instruction* value = *replacement;
      // The call's sharding stays a constraint for the partitioner, on the value that replaces it.
      if (inst->sharding().has_value() && !value->sharding().has_value()) value->set_sharding(inst->sharding());
      XLAC_RETURN_IF_ERROR(ReplaceCall(*comp, inst, value));
      changed = true;
    }
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> RunTtCustomCalls(Module& module) {
  SourceLoc at;
  absl::StatusOr<bool> changed = Run(module, &at);
  if (!changed.ok() && at.known()) {
    return absl::InvalidArgumentError(
        fmt::format("{}:{}: {}", at.line, at.col, std::string(changed.status().message())));
  }
  return changed;
}

bool RewriteTtCustomCalls(Module& module, DiagnosticEngine& diags) {
  SourceLoc at;
  absl::StatusOr<bool> changed = Run(module, &at);
  if (changed.ok()) return true;
  diags.Error(at, std::string(changed.status().message()));
  return false;
}

}  // namespace xlac
